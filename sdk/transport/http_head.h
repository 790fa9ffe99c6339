/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sdk/transport/http_head.h: when an HTTP answer has decided a batch. Both
 * posting loops (the SDK's HTTP sender, sdk/src/report/http_sender.c, and
 * the agent's destinations, bridge/agent/dest.c) feed it each header line
 * libcurl hands their header callback. Once the final status line and the
 * empty line after its headers have arrived, the status decides: a 2xx
 * means the backend took the batch, even when its body then arrives slowly
 * or never ends (the batch must not be sent again). A 1xx block is followed
 * by another status line and decides nothing.
 *
 * Locking: none; one per transfer, on the thread that runs it.
 */
#ifndef TW_TRANSPORT_HTTP_HEAD_H
#define TW_TRANSPORT_HTTP_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct tw__http_head {
    long status;  /* of the last status line; 0 before one */
    bool is_done; /* the final head (status >= 200) is complete */
} tw__http_head;

static inline void tw__http_head_reset(tw__http_head *h)
{
    h->status = 0;
    h->is_done = false;
}

/* Feeds one header line (@len bytes, its CRLF included, as libcurl gives
 * it). True when this line completed the final head. */
static inline bool tw__http_head_line(tw__http_head *h, const char *data, size_t len)
{
    if (len >= 5 && memcmp(data, "HTTP/", 5) == 0) {
        const char *sp = memchr(data, ' ', len);
        long status = 0;
        for (const char *p = sp ? sp + 1 : data + len; p < data + len && *p >= '0' && *p <= '9';
             p++)
            status = status < 1000 ? status * 10 + (*p - '0') : status;
        h->status = status;
        h->is_done = false;
        return false;
    }
    bool is_blank =
        (len == 2 && data[0] == '\r' && data[1] == '\n') || (len == 1 && data[0] == '\n');
    if (is_blank && h->status >= 200 && !h->is_done) {
        h->is_done = true;
        return true;
    }
    return false;
}

/* Whether the final head has arrived with a 2xx. */
static inline bool tw__http_head_is_accepted(const tw__http_head *h)
{
    return h->is_done && h->status >= 200 && h->status < 300;
}

#endif /* TW_TRANSPORT_HTTP_HEAD_H */
