/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/cli_text.c: the one rule for bridge text that may quote input
 * (bridge/cli.h): control bytes become \xNN, so that input (a file name, a
 * header value, a span's service name) cannot forge lines, and the
 * user:password of "scheme://user:password@host" becomes ***, so that a URL
 * is never echoed with its credentials. The command's messages (main.c) and
 * the agent's log (agent/log.c) both go through it. No state, no locks.
 */
#include "cli.h"

#include <stdio.h>
#include <string.h>

size_t tw__cli_sanitize(const char *in, char *out, size_t size)
{
    if (size == 0)
        return 0;
    size_t n = 0;
    for (const char *p = in; *p;) {
        if (p[0] == ':' && p[1] == '/' && p[2] == '/') {
            const char *at = NULL;
            for (const char *q = p + 3; *q && !strchr("/?#\"' \t", *q); q++)
                if (*q == '@')
                    at = q;
            if (at) {
                if (n + 6 >= size)
                    break;
                memcpy(out + n, "://***", 6);
                n += 6;
                p = at;
                continue;
            }
        }
        unsigned char c = (unsigned char)*p++;
        if (c < 0x20 || c == 0x7f) {
            if (n + 4 >= size)
                break;
            snprintf(out + n, 5, "\\x%02x", c);
            n += 4;
        } else {
            if (n + 1 >= size)
                break;
            out[n++] = (char)c;
        }
    }
    out[n] = '\0';
    return n;
}
