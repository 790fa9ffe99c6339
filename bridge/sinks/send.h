/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/sinks/send.h: `tracewire convert --send URL`: ships converted spans
 * straight to a backend instead of writing a file (docs/bridge.md, "Shipping"):
 *
 *   http(s)://host:9411/api/v2/spans   Zipkin, v2 JSON (application/json)
 *   http(s)://host:14268/api/traces    Jaeger collector, Thrift binary Batch
 *                                      (application/x-thrift)
 *   http(s)://host:4318/v1/traces      OTLP/HTTP, OTLP/JSON (application/json), or
 *                                      protobuf (application/x-protobuf) with
 *                                      --send-format otlp-http-proto
 *   udp://host:6831                    Jaeger agent, compact Agent.emitBatch
 *   udp://host:6832                    Jaeger agent, binary Agent.emitBatch
 *
 * Where it sits: the assembler hands groups of spans to a sender as it
 * would to a writer (convert.h). The sender is a thin owner of the SDK's
 * own senders (report/http_sender.c, report/udp_sender.c), which batch by
 * the exact encoded size, retry, gzip and split refused batches; this file
 * only maps the bridge's many processes onto them (see send.c).
 *
 * Ownership: twb_sender_new copies the URL and the option strings. Spans
 * given to twb_sender_send stay the caller's; their processes must stay
 * valid until twb_sender_free (they are interned in the run's twb_procs).
 * Locking: none; `tracewire convert` is single-threaded. Sending blocks
 * (the bridge is a batch tool), through a backend outage too: a batch
 * whose retries are used up waits out a cool-down and is tried again,
 * until give_up_rounds rounds have failed in a row; the caller reads no
 * input meanwhile, so memory stays bounded.
 */
#ifndef TW_BRIDGE_SINKS_SEND_H
#define TW_BRIDGE_SINKS_SEND_H

#include "convert.h"

#define TWB_SEND_DEFAULT_MAX_PACKET 65000u /* UDP datagram, whole message */
#define TWB_SEND_DEFAULT_GIVE_UP 8u        /* failed rounds in a row: about 85 s of waiting */

typedef struct twb_send_options {
    size_t max_body_bytes;           /* HTTP: largest uncompressed body; 0: 1 MiB (the SDK's) */
    size_t max_packet_bytes;         /* UDP: largest datagram; 0: 65000 */
    unsigned int max_retries;        /* retries after a 5xx or a transport failure (3) */
    unsigned int timeout_ms;         /* one HTTP attempt, connecting included; 0: 10000 */
    unsigned int initial_backoff_ms; /* first retry delay, doubling; 0: 100 */
    /* HTTP: failed rounds of retries in a row after which the sender gives
     * up (default TWB_SEND_DEFAULT_GIVE_UP; 0 counts as 1). Until then a
     * batch that used up its retries waits out the cool-down (1 s doubling
     * to 30 s, at least a Retry-After) and is tried again, and
     * twb_sender_send blocks meanwhile, so no batch is lost to a short
     * outage and memory stays bounded. */
    unsigned int give_up_rounds;
    bool is_gzip;               /* gzip HTTP bodies (default true) */
    const char *const *headers; /* "Name: value" lines (--header); n_headers of them */
    size_t n_headers;
    const char *user; /* --user "name:password": basic auth; NULL: none */
    /* --send-format: "zipkin", "jaeger-http", "otlp-http", "otlp-http-proto",
     * "jaeger-udp", "jaeger-udp-binary"; NULL: chosen from the URL */
    const char *format;
    /* Called once per span the backend refused on its own (after the batch
     * was split to isolate it): the span and the reason. NULL: a line on
     * stderr. */
    void (*on_refused)(void *arg, const char *trace_id_hex, const char *span_id_hex,
                       const char *reason);
    void *refused_arg;
    /* HTTP only (twb_sender_new refuses it with a UDP destination, which
     * does not answer): called once per span that is not delivered, once
     * that is known (its batch failed after its attempts or was refused,
     * it was refused on its own, never attempted after giving up, too
     * large, or still unsent at twb_sender_abandon), with the span as it
     * was given to twb_sender_send (borrowed for the call). Until then the
     * sender holds a reference on each span in an open batch: memory stays
     * bounded by the batches (--undelivered). NULL: none. */
    void (*on_undelivered)(void *arg, const twb_span *span);
    void *undelivered_arg;
} twb_send_options;

/* The defaults above (gzip on, 3 retries). */
void twb_send_options_init(twb_send_options *o);

/* Checks one --header line (@number counts from 1, for the message) by the
 * library's rules (tw_reporter_options_add_header: an HTTP token other than
 * the headers the sender sets, a value of one line). True when it may be
 * sent; else false with a message in @why that never shows the value (it
 * may be a credential). *name_len: the length of the name before the
 * colon. */
bool twb_header_line_check(const char *line, size_t number, size_t *name_len, char *why,
                           size_t why_size);

typedef struct twb_sender twb_sender;

/* A sender for @url (@o NULL: defaults). The format comes from the URL
 * path (or o->format); anything else is a TW_E_CONFIG error naming the
 * accepted forms. No connection is made yet. NULL with @err on failure. */
twb_sender *twb_sender_new(const char *url, const twb_send_options *o, tw_error **err);

/* TWB_TARGET_JAEGER_IDS for the Jaeger collector and agent targets. */
unsigned int twb_sender_target_flags(const twb_sender *s);

/* The format in use: "zipkin", "jaeger-http", "otlp-http", "otlp-http-proto",
 * "jaeger-udp", "jaeger-udp-binary". */
const char *twb_sender_format(const twb_sender *s);

/* Queues @n spans, sending every batch that fills up (synchronously).
 * Delivery failures are counted (twb_sender_stats), not errors: returns
 * TW_OK, or TW_E_NOMEM (with @err) when memory runs out. */
tw_status twb_sender_send(twb_sender *s, const twb_span *spans, size_t n, tw_error **err);

/* Sends every partial batch. TW_OK (delivery failures are counted). */
tw_status twb_sender_finish(twb_sender *s, tw_error **err);

/* Every span given to twb_sender_send ends in one of sent, failed or
 * too_large (after finish). */
typedef struct twb_send_stats {
    uint64_t sent;             /* accepted by the backend (2xx; UDP: the datagram went out) */
    uint64_t failed;           /* not delivered: retries used up, refused, 4xx, encoding */
    uint64_t too_large;        /* a span whose body (datagram) alone exceeds the limit */
    uint64_t refused;          /* of failed: spans the backend refused on their own */
    uint64_t batches;          /* bodies (datagrams) accepted */
    uint64_t bytes;            /* bytes of those on the wire (compressed when gzip) */
    uint64_t retries;          /* HTTP attempts after a retryable failure */
    uint64_t split_requests;   /* HTTP bodies sent to isolate refused spans */
    uint64_t requests;         /* HTTP requests made, whatever their outcome */
    uint64_t refused_requests; /* of those, answered 400 or 413 */
    uint64_t unattempted;      /* of failed: spans no request was made for (after giving up) */
    bool has_given_up;         /* give_up_rounds failed rounds in a row: the rest not attempted */
} twb_send_stats;

void twb_sender_stats(const twb_sender *s, twb_send_stats *st);

/* The spans given and not yet known delivered or not (after a fatal
 * error, instead of twb_sender_finish: those still batched; after
 * twb_sender_finish there are none, short of a bug, and then they are not
 * lost): each goes to on_undelivered as never attempted. Nothing is
 * sent. */
void twb_sender_abandon(twb_sender *s);

/* Frees the sender (without sending: call twb_sender_finish first). NULL
 * is a no-op. */
void twb_sender_free(twb_sender *s);

#endif /* TW_BRIDGE_SINKS_SEND_H */
