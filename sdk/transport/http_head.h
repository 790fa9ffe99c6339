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
 * What a final answer means for the batch is decided here too, once for
 * both loops (tw__http_status_verdict), by the destination's retry rule:
 *
 *   2xx                      accepted
 *   400, 413                 refused: the body's content or size (the
 *                            caller splits the batch to isolate the spans)
 *   OTLP/HTTP                429, 502, 503, 504 are retried; every other
 *                            status is final. The OTLP specification
 *                            (protocol/exporter "Failures", "Retryable
 *                            Response Codes") lists exactly these four as
 *                            retryable and says the others MUST NOT be.
 *   Jaeger collector, Zipkin 429, 500, 502, 503, 504 are retried; every
 *                            other status (501, 505, 3xx, other 4xx) is
 *                            final. No specification says; a collector's
 *                            500 is commonly a storage backend that failed
 *                            for the moment, so it is worth another try,
 *                            while 501 and 505 say the request can never
 *                            work.
 *
 * A final answer fails its batch at once: counted, logged, never retried,
 * spooled or waited for. One exception, the agent's (bridge/agent/dest.c):
 * 401, 403, 404 and 407 refuse the agent, not the spans, so a spool keeps
 * them and follow mode retries them. Retry-After is honoured on 429 and 503 only, the
 * two answers that carry it (RFC 9110 10.2.3, RFC 6585, OTLP/HTTP).
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

/* Which statuses a destination retries (see the top comment). */
typedef enum tw__http_retry_rule {
    TW__HTTP_RETRY_COLLECTOR = 0, /* Jaeger collector, Zipkin: 429, 500, 502, 503, 504 */
    TW__HTTP_RETRY_OTLP,          /* OTLP/HTTP: 429, 502, 503, 504 */
} tw__http_retry_rule;

/* What a final answer's status means for the batch it answered. */
typedef enum tw__http_verdict {
    TW__HTTP_ACCEPTED = 0, /* 2xx: taken */
    TW__HTTP_REFUSED,      /* 400, 413: the content or the size; split */
    TW__HTTP_RETRY,        /* not now: retry later */
    TW__HTTP_FINAL,        /* never works: fail the batch, no retry */
} tw__http_verdict;

static inline tw__http_verdict tw__http_status_verdict(long status, tw__http_retry_rule rule)
{
    if (status >= 200 && status < 300)
        return TW__HTTP_ACCEPTED;
    switch (status) {
    case 400:
    case 413:
        return TW__HTTP_REFUSED;
    case 429:
    case 502:
    case 503:
    case 504:
        return TW__HTTP_RETRY;
    case 500:
        return rule == TW__HTTP_RETRY_OTLP ? TW__HTTP_FINAL : TW__HTTP_RETRY;
    default:
        return TW__HTTP_FINAL;
    }
}

/* Whether a Retry-After that came with @status is honoured (429, 503). */
static inline bool tw__http_status_has_retry_after(long status)
{
    return status == 429 || status == 503;
}

#endif /* TW_TRANSPORT_HTTP_HEAD_H */
