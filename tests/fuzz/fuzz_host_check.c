/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_host_check.c: libFuzzer target for the agent host check
 * (tw__host_check, sdk/src/report/reporter.c: JAEGER_AGENT_HOST and
 * tw_reporter_options_set_agent) and the texts built from an accepted host
 * (tw__host_url, the remote sampler's URL; tw__host_port_text, messages),
 * and for the text a refused host is shown with (tw__host_shown, what the
 * JAEGER_AGENT_HOST error quotes).
 *
 * Input: byte 0 picks the size of the check's output buffer (1 to 256
 * bytes, a heap block of exactly that size so that AddressSanitizer sees a
 * write past it) and of a deliberately short URL buffer; bytes 1-2 the port;
 * the rest, up to the first NUL, is the host, copied into a block of its
 * exact length.
 *
 * Invariants. Accepted: the bare form fits its buffer, holds only the bytes
 * of its kind (a name: letters, digits, '-', '_', '.'; IPv4: digits and
 * dots; IPv6: hex digits, ':', '.', and a %zone of label bytes), so never
 * '@', '/', a space, a control byte or a byte >= 0x80; checking it again
 * gives the same kind and the same bare form; the URL is exactly
 * "http://HOST:PORT/sampling" with HOST the bare form (an IPv6 literal in
 * brackets, its '%' as %25), contains no user info, space or control byte,
 * and its host part checks as the same host; a short buffer gets a
 * NUL-terminated prefix of it; the port text is "HOST:PORT" ("[HOST]:PORT"
 * for IPv6). Refused: the shown text holds no control byte, and does not
 * depend on the input's user info: the same input with every letter and
 * digit of its user info changed (before the last '@', after a
 * "scheme://") is shown with the same text.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/host_check/.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *current_host;

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_host_check: %s (host \"", what);
    for (const char *p = current_host; p && *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
            fprintf(stderr, "\\x%02x", c);
        else
            fputc(c, stderr);
    }
    fprintf(stderr, "\")\n");
    abort();
}

static bool is_label_byte(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

static bool is_hex_digit(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* No byte a URL's host (or a log line) must not hold. */
static bool is_clean_text(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c <= 0x20 || c >= 0x7f || c == '@')
            return false;
    }
    return true;
}

static void check_bare(const char *bare, tw__host_kind kind)
{
    bool has_zone = false;
    for (const char *p = bare; *p; p++) {
        char c = *p;
        bool ok;
        switch (kind) {
        case TW__HOST_NAME:
            ok = is_label_byte(c) || c == '.';
            break;
        case TW__HOST_IPV4:
            ok = (c >= '0' && c <= '9') || c == '.';
            break;
        default: /* IPv6: the address, then a %zone of label bytes and dots */
            if (c == '%' && !has_zone) {
                has_zone = true;
                ok = true;
            } else {
                ok = has_zone ? is_label_byte(c) || c == '.'
                              : is_hex_digit(c) || c == ':' || c == '.';
            }
            break;
        }
        if (!ok)
            fail("the bare form of an accepted host holds a byte its kind does not have");
    }
    if (!*bare)
        fail("an accepted host has an empty bare form");
    if (kind == TW__HOST_IPV6 && !strchr(bare, ':'))
        fail("an IPv6 host without a ':'");
    if (kind != TW__HOST_IPV6 && strchr(bare, ':'))
        fail("a name or IPv4 host with a ':'");
    struct in_addr a4;
    if ((kind == TW__HOST_IPV4) != (inet_pton(AF_INET, bare, &a4) == 1))
        fail("the IPv4 kind disagrees with inet_pton");
}

/* The URL's host part, taken back out: brackets off, %25 back to %. */
static void check_url(const char *bare, tw__host_kind kind, unsigned int port, const char *url)
{
    char tail[32];
    snprintf(tail, sizeof tail, ":%u/sampling", port);
    size_t len = strlen(url), tail_len = strlen(tail);
    if (strncmp(url, "http://", 7) != 0 || len < 7 + tail_len ||
        strcmp(url + len - tail_len, tail) != 0)
        fail("the URL is not http://HOST:PORT/sampling");
    if (!is_clean_text(url + 7))
        fail("the URL holds user info, a space, a control byte or a byte >= 0x80");
    char host[600];
    size_t host_len = len - 7 - tail_len;
    memcpy(host, url + 7, host_len);
    host[host_len] = '\0';
    if (kind == TW__HOST_IPV6) {
        if (host_len < 2 || host[0] != '[' || host[host_len - 1] != ']')
            fail("an IPv6 literal without brackets in the URL");
        char *pct = strstr(host, "%25");
        if (pct)
            memmove(pct + 1, pct + 3, strlen(pct + 3) + 1);
    } else if (strchr(host, '[') || strchr(host, '%')) {
        fail("a name or IPv4 host with brackets or a % in the URL");
    }
    char again[sizeof host]; /* brackets make it longer than the bare form */
    if (tw__host_check(host, again, sizeof again) != kind || strcmp(again, bare) != 0)
        fail("the URL's host part does not check as the same host");
}

/* Letters and digits of @s[0, n) changed, each to another of its class. */
static void rotate(char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'a' && c <= 'z')
            s[i] = c == 'z' ? 'a' : (char)(c + 1);
        else if (c >= 'A' && c <= 'Z')
            s[i] = c == 'Z' ? 'A' : (char)(c + 1);
        else if (c >= '0' && c <= '9')
            s[i] = c == '9' ? '0' : (char)(c + 1);
    }
}

static void check_refused(const char *host)
{
    char shown[512];
    tw__host_shown(host, shown, sizeof shown);
    for (const char *p = shown; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            fail("a refused host is shown with a control byte");
    }
    const char *at = strrchr(host, '@');
    if (!at)
        return;
    /* The user info: before the last '@', after a "scheme://" if one comes first. */
    const char *scheme_end = strstr(host, "://");
    size_t from = scheme_end && scheme_end < at ? (size_t)(scheme_end + 3 - host) : 0;
    size_t to = (size_t)(at - host);
    char *other = strdup(host);
    if (!other)
        return;
    rotate(other + from, to - from);
    char shown_other[512];
    tw__host_shown(other, shown_other, sizeof shown_other);
    free(other);
    if (strcmp(shown, shown_other) != 0) {
        fprintf(stderr, "fuzz_host_check: shown as \"%s\" and, with other user info, \"%s\"\n",
                shown, shown_other);
        fail("the text a refused host is shown with depends on its user info");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    static const size_t bare_sizes[] = {1, 2, 3, 8, 16, 46, 64, 256};
    size_t bare_size = bare_sizes[data[0] & 7];
    size_t short_size = 1 + (size_t)(data[0] >> 3); /* 1 to 32 */
    unsigned int port = 1 + (unsigned int)((data[1] << 8 | data[2]) % 65535);
    const uint8_t *text = data + 3;
    size_t n = size - 3;
    const uint8_t *nul = memchr(text, 0, n);
    if (nul)
        n = (size_t)(nul - text);
    char *host = malloc(n + 1);
    char *bare = malloc(bare_size);
    if (!host || !bare) {
        free(host);
        free(bare);
        return 0;
    }
    memcpy(host, text, n);
    host[n] = '\0';
    current_host = host;

    tw__host_kind kind = tw__host_check(host, bare, bare_size);
    if (kind == TW__HOST_INVALID) {
        check_refused(host);
    } else {
        if (strlen(bare) >= bare_size)
            fail("the bare form does not fit its buffer");
        check_bare(bare, kind);
        char again[256];
        if (tw__host_check(bare, again, sizeof again) != kind || strcmp(again, bare) != 0)
            fail("the bare form does not check as the same host");
        char url[600];
        tw__host_url(bare, port, "/sampling", url, sizeof url);
        check_url(bare, kind, port, url);
        char *cut = malloc(short_size);
        if (cut) {
            tw__host_url(bare, port, "/sampling", cut, short_size);
            if (strlen(cut) >= short_size || strncmp(cut, url, strlen(cut)) != 0)
                fail("a short URL buffer does not get a NUL-terminated prefix of the URL");
            free(cut);
        }
        char at[300], want[300];
        tw__host_port_text(bare, port, at, sizeof at);
        snprintf(want, sizeof want, kind == TW__HOST_IPV6 ? "[%s]:%u" : "%s:%u", bare, port);
        if (strcmp(at, want) != 0)
            fail("the port text is not HOST:PORT");
    }
    current_host = NULL;
    free(bare);
    free(host);
    return 0;
}
