/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/http.h: the HTTP sender (internal): one transport (http_sender.c,
 * libcurl) for the four body formats of transport/framing.h (the Jaeger
 * collector's Thrift binary Batch, Zipkin v2 JSON, OTLP/JSON and OTLP
 * protobuf). The command reaches it only through transport/sender.h.
 *
 * Flow: async reporter thread -> sender append (encode one span
 * with the format, batch by the exact body size in the one batcher,
 * transport/batcher.h) -> flush -> POST with retries. Everything here runs on the reporter thread
 * only; the application thread never waits on the network.
 *
 * Locking: none; a sender and its format belong to one reporter thread
 * (and to start/free, which happen before and after it runs).
 */
#ifndef TW_REPORT_HTTP_H
#define TW_REPORT_HTTP_H

#include "report/report.h"
#include "transport/framing.h" /* the body formats */

/* ---- options ------------------------------------------------------------------------------ */

#define TW__HTTP_DEFAULT_CONNECT_TIMEOUT_MS 5000u
#define TW__HTTP_DEFAULT_TIMEOUT_MS 10000u
#define TW__HTTP_DEFAULT_MAX_BODY_BYTES ((size_t)1 << 20) /* 1 MiB, as Jaeger Java/C++ */
#define TW__HTTP_DEFAULT_MAX_RETRIES 3u
#define TW__HTTP_DEFAULT_INITIAL_BACKOFF_MS 100u
#define TW__HTTP_DEFAULT_MAX_RETRY_TIME_MS 15000u
#define TW__HTTP_MIN_BODY_BYTES ((size_t)512)
#define TW__HTTP_MAX_BODY_BYTES ((size_t)1 << 30)
#define TW__HTTP_MAX_HEADERS 64u
/* Requests one batch may spend, beyond its first, isolating the spans a
 * backend refuses (400 or 413, see http_sender.c); 0 never splits. */
#define TW__HTTP_DEFAULT_MAX_SPLIT_REQUESTS 64u

/* The HTTP part of tw_reporter_options (opts->http, made by the first HTTP
 * setter; NULL means every default). Strings are owned copies. */
typedef struct tw__http_options {
    char *endpoint; /* full URL; NULL: the format's default */
    char *user;     /* basic auth (with password); NULL: none */
    char *password;
    char *bearer_token; /* NULL: none; exclusive with basic auth (last set wins) */
    char *ca_file;      /* NULL: the system's CA store */
    char *cert_file;    /* client certificate (PEM); NULL: none */
    char *key_file;     /* its key (PEM); NULL: in cert_file */
    char **headers;     /* "Name: value" lines, in the order added */
    size_t n_headers;
    unsigned int connect_timeout_ms;
    unsigned int timeout_ms; /* one attempt, connect included */
    size_t max_body_bytes;
    unsigned int max_retries; /* retries after the first attempt */
    unsigned int initial_backoff_ms;
    unsigned int max_retry_time_ms; /* no attempt starts after this since the first */
    bool is_gzip; /* gzip bodies (Content-Encoding: gzip); max_body_bytes bounds the
                   * uncompressed body. Default off (the bridge turns it on). */
    unsigned int max_split_requests; /* on 400/413, halve to isolate refused spans */
    int otlp_protocol;               /* tw_otlp_protocol of tw_reporter_otlp_http_new */
} tw__http_options;

void tw__http_options_init(tw__http_options *h);
/* Frees @h and its strings; NULL is a no-op. */
void tw__http_options_free(tw__http_options *h);

/* ---- the sender ----------------------------------------------------------------------------- */

/* An HTTP sender POSTing bodies of @format with @opts (NULL http part:
 * defaults). Checks the URL, the header list and that the TLS files are
 * readable; creates no connection yet. NULL with @err set on failure. */
tw__sender *tw__http_sender_new(const tw__http_format_vtable *format,
                                const tw_reporter_options *opts, tw_error **err);

/* One span a backend refused on its own (a 400 or 413 to a body holding
 * only it): its ids and the reason ("HTTP status 400: <start of the
 * answer>"). Called on the sender's thread, during append or flush. */
typedef void (*tw__http_refused_fn)(void *arg, uint64_t trace_id_high, uint64_t trace_id_low,
                                    uint64_t span_id, const char *reason);

/* Sets the refusal callback of an HTTP sender (NULL: none, and the sender
 * logs each new reason once; with a callback, the callback reports every
 * refused span and the sender logs none). A no-op on other senders. */
void tw__http_sender_set_refused_fn(tw__sender *s, tw__http_refused_fn fn, void *arg);

/* What an HTTP sender did beyond tw__report_counters. */
typedef struct tw__http_sender_stats {
    uint64_t requests;         /* requests made, whatever their outcome */
    uint64_t refused_requests; /* of those, answered 400 or 413 */
    uint64_t retries;          /* attempts after a retryable failure */
    uint64_t split_requests;   /* bodies sent to isolate refused spans */
    uint64_t refused;          /* single spans refused (also counted failed) */
    uint64_t body_bytes;       /* uncompressed bytes of the bodies sent */
    /* Of the failed spans, those no request was made for: the cool-down
     * after used-up retries, the close deadline, or patience run out. */
    uint64_t unattempted;
    unsigned int failed_rounds; /* failed rounds of retries in a row now */
    bool has_given_up;          /* patient mode: patience ran out */
} tw__http_sender_stats;

/* Zeros for a sender that is not an HTTP sender. */
void tw__http_sender_get_stats(const tw__sender *s, tw__http_sender_stats *out);

/* Patient mode, for a batch tool that may wait (`tracewire convert
 * --send`, through transport/sender.h), never for a reporter, whose
 * sender must not hold up its queue: @rounds > 0 makes a batch that used up
 * its retries wait out the cool-down (it doubles with each failed round in
 * a row, up to 30 s) and try again, instead of failing it and the batches
 * behind it at once; the caller's thread waits, so it stops feeding spans
 * (memory stays bounded by the batcher). After @rounds failed rounds in a
 * row (a round: one body's retries used up, or one failure no retry
 * cures) the sender gives up: the body in hand fails, and every later span
 * fails without a request (counted in unattempted). 0: the reporters' way
 * (the default). A no-op on other senders. */
void tw__http_sender_set_patience(tw__sender *s, unsigned int rounds);

/* Batches @span (consumes the reference) for @process instead of the
 * process the sender was opened with: a sender used by transport/sender.h
 * for spans of many processes. Formats whose spans carry their process
 * (encode_with: Zipkin) put every process in the same bodies; the others
 * keep one batch per process (at most max_open_batches open; the least
 * recently used is sent first). @process stays valid until it is sent
 * (flush). Counts outcomes like append. A no-op on other senders. */
void tw__http_sender_append_for(tw__sender *s, const tw__process *process, tw__span_data *span);

/* The fate of one span given to tw__http_sender_append_tracked, with its
 * @cookie: @is_delivered true once a 2xx answer took the body holding it;
 * false once it will never be sent (failed after its attempts, refused on
 * its own, in a body refused whole, not attempted: cool-down, close
 * deadline or patience run out; too large for a body; not encodable).
 * Called exactly once per span, on the sender's thread, during append or
 * flush; never for a span still in a batch when the sender is freed
 * without a flush. */
typedef void (*tw__http_fate_fn)(void *arg, void *cookie, bool is_delivered);

/* Sets the fate callback of an HTTP sender (NULL: none). It is called for
 * every span appended, with a NULL cookie for those not appended with
 * tw__http_sender_append_tracked. A no-op on other senders. */
void tw__http_sender_set_fate_fn(tw__sender *s, tw__http_fate_fn fn, void *arg);

/* tw__http_sender_append_for, with @cookie (the caller's, never
 * dereferenced) handed to the fate callback when the span's fate is
 * known. */
void tw__http_sender_append_tracked(tw__sender *s, const tw__process *process, tw__span_data *span,
                                    void *cookie);

/* Sets the batcher's limits (transport/batcher.h) of an HTTP sender with
 * nothing pending: @max_open batches (processes) open at once (a reporter
 * has 1) and @flush_ms, their age limit for tw__http_sender_tick (0: none;
 * the async reporter flushes on its own interval). False when out of
 * memory, something is pending, or @s is another sender. */
bool tw__http_sender_set_batching(tw__sender *s, size_t max_open, unsigned int flush_ms);

/* Sends the batches older than flush_ms at @now_ns (tw__mono_ns). */
void tw__http_sender_tick(tw__sender *s, int64_t now_ns);

/* The exact size of the body the pending spans would make now (0 when
 * none are pending, or for other senders): the memory one flush frees. */
size_t tw__http_sender_pending_bytes(const tw__sender *s);

#endif /* TW_REPORT_HTTP_H */
