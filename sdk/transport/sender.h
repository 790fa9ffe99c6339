/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transport/sender.h: the narrow, documented sender interface through which
 * the command (`tracewire convert --send`, bridge/sinks/send.c) ships spans
 * of any number of processes to a backend, on the SDK's own senders: the
 * HTTP sender of the reporters (report/http_sender.c: one connection,
 * batching in the one batcher keyed by process, transport/batcher.h, exact
 * body sizes, retries with backoff, gzip, the split of refused batches, a
 * 2xx status line accepting a batch) and the Jaeger agent UDP sender
 * (report/udp_sender.c). The command never includes the SDK's private
 * headers: this header, transport/framing.h, the public tracewire/ headers and
 * the wire layer (sdk/wire/) are what it sees.
 *
 * Formats and how a body groups processes:
 *   ZIPKIN       Zipkin v2 JSON; each span carries its process (localEndpoint),
 *                so every process shares the same bodies
 *   JAEGER_HTTP  the Jaeger collector's Thrift Batch: one process per body
 *   OTLP_JSON, OTLP_PROTO  an ExportTraceServiceRequest: one resourceSpans
 *                (process) per body
 *   JAEGER_UDP_COMPACT, JAEGER_UDP_BINARY  Agent.emitBatch datagrams: one
 *                process per datagram (one SDK UDP sender per open process)
 * Jaeger formats see each span through the Jaeger view
 * (wire/jaeger/jaeger_view.h: the error tag rule, unknown durations) and an
 * empty service named "empty-service-name"; OTLP names it "unknown_service".
 *
 * Batches: cut by size (max body or datagram), by age (flush_ms, on
 * tw__transport_poll), by the number of processes open at once (the least
 * recently used is sent first) and by the pending bytes of all open HTTP
 * bodies together (two bodies); everything on flush and close.
 *
 * Statuses: tw__transport_new: TW_OK, TW_E_CONFIG (bad URL, format, option,
 * unreadable TLS file; the message names the field, never a credential),
 * TW_E_NOMEM, TW_E_STATE (libcurl cannot start). tw__transport_send:
 * TW_OK or TW_E_NOMEM (delivery failures are counted, not returned);
 * a process whose encoding fails (a Jaeger agent process larger than a
 * datagram) is logged once and its spans counted failed.
 *
 * Ownership: options are copied at creation. Spans given to send are
 * borrowed (references are taken while they are encoded, none kept: each
 * span is encoded at once). Processes are borrowed and must stay valid
 * until the transport is flushed or freed (the command interns them for
 * the run). Thread safety: none; a transport belongs to one thread (sending
 * blocks that thread: it is meant for batch tools and agents' destination
 * threads, never for an application thread: the SDK's reporters put a
 * queue in front).
 */
#ifndef TW_TRANSPORT_SENDER_H
#define TW_TRANSPORT_SENDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracewire/reporter.h"
#include "wire/model/span_data.h"

typedef enum tw__transport_format {
    TW__TRANSPORT_ZIPKIN = 0,
    TW__TRANSPORT_JAEGER_HTTP,
    TW__TRANSPORT_OTLP_JSON,
    TW__TRANSPORT_OTLP_PROTO,
    TW__TRANSPORT_JAEGER_UDP_COMPACT,
    TW__TRANSPORT_JAEGER_UDP_BINARY
} tw__transport_format;

/* Whether @f is sent over HTTP (else UDP). */
bool tw__transport_format_is_http(tw__transport_format f);

typedef struct tw__transport_options {
    tw__transport_format format;
    /* http(s)://... for the HTTP formats (any path: it is used as given);
     * udp://HOST[:PORT] (HOST a name, IPv4 or [IPv6]; PORT default 6831)
     * for the UDP ones. */
    const char *url;
    /* Everything else, with the public setters (tracewire/reporter.h):
     * headers, basic or bearer auth, TLS files, connect and attempt
     * timeouts, retries and backoff, max body size, gzip, max datagram
     * size. NULL: the defaults. Its endpoint and agent address are
     * ignored (url wins). */
    const tw_reporter_options *reporter;
    size_t max_open_processes; /* batches (HTTP) or UDP senders open at once; 0: 64 */
    unsigned int flush_ms;     /* age limit of a batch, checked by poll; 0: none */
    /* Each span a backend refused on its own (HTTP 400 or 413 to a body
     * holding only it), with the reason ("HTTP status 400: <start of the
     * answer>", not sanitised). NULL: logged once per new reason; set, it
     * is the only report (nothing is logged). */
    void (*on_refused)(void *arg, uint64_t trace_id_high, uint64_t trace_id_low, uint64_t span_id,
                       const char *reason);
    void *refused_arg;
    /* HTTP: 0, the reporters' way: after a batch used up its retries, the
     * batches of the cool-down that follows fail at once, without a request
     * (an application must never wait). N > 0, for a batch tool: send
     * waits instead, retrying the same body after each cool-down (doubling
     * up to 30 s, at least a Retry-After), so every batch is attempted and
     * the caller stops feeding spans meanwhile (memory stays bounded); after
     * N failed rounds of retries in a row the transport gives up
     * (has_given_up): every later span fails at once (unattempted). */
    unsigned int give_up_rounds;
    /* HTTP only (tw__transport_new refuses it with a UDP format, whose
     * agent does not answer): the fate of each span given to
     * tw__transport_send_tracked, with its cookie: @is_delivered true once
     * a 2xx answer took its body; false once it will never be sent (failed
     * after its attempts, refused, in a body refused whole, not attempted,
     * too large, not encodable). Exactly once per span, during send or
     * flush (never for a span still batched when the transport is freed
     * without a flush). Spans given to tw__transport_send report a NULL
     * cookie. NULL: none. */
    void (*on_fate)(void *arg, void *cookie, bool is_delivered);
    void *fate_arg;
} tw__transport_options;

/* Zeros: Zipkin, no URL, defaults. */
void tw__transport_options_init(tw__transport_options *o);

typedef struct tw__transport tw__transport;

/* A transport (see the statuses above). No connection is made yet; a UDP
 * socket is made to check the address. NULL with @err on failure. */
tw__transport *tw__transport_new(const tw__transport_options *o, tw_error **err);

/* Batches @n spans of @process (NULL: no process), sending every batch
 * that fills up (blocking). */
tw_status tw__transport_send(tw__transport *t, const tw__process *process,
                             const tw__span_data *const *spans, size_t n, tw_error **err);

/* tw__transport_send with a cookie per span (@cookies[0..n), the
 * caller's, never dereferenced) for on_fate. When it returns TW_E_NOMEM,
 * the spans not batched have had their fate (not delivered) reported. */
tw_status tw__transport_send_tracked(tw__transport *t, const tw__process *process,
                                     const tw__span_data *const *spans, void *const *cookies,
                                     size_t n, tw_error **err);

/* Sends the batches older than flush_ms now. */
void tw__transport_poll(tw__transport *t);

/* Sends every open batch. */
void tw__transport_flush(tw__transport *t);

/* Per-destination counts. Every span given to send ends in exactly one of
 * sent, failed and too_large once flushed. */
typedef struct tw__transport_stats {
    uint64_t sent;             /* accepted (2xx; UDP: the datagram went out) */
    uint64_t failed;           /* not delivered: retries used up, refused, 4xx, encoding */
    uint64_t too_large;        /* a span whose body (datagram) alone exceeds the limit */
    uint64_t refused;          /* of failed: spans the backend refused on their own */
    uint64_t batches;          /* bodies (datagrams) accepted */
    uint64_t bytes;            /* bytes of those on the wire (compressed when gzip) */
    uint64_t body_bytes;       /* HTTP: uncompressed bytes of the bodies accepted */
    uint64_t retries;          /* HTTP attempts after a retryable failure */
    uint64_t split_requests;   /* HTTP bodies sent to isolate refused spans */
    uint64_t requests;         /* HTTP requests made, whatever their outcome (batches: accepted) */
    uint64_t refused_requests; /* of those, answered 400 or 413 */
    uint64_t unattempted;      /* of failed: spans no request was made for (HTTP: the
                                * cool-down, the close deadline, or after giving up) */
    bool has_given_up;         /* give_up_rounds failed rounds in a row: no more attempts */
} tw__transport_stats;

void tw__transport_get_stats(const tw__transport *t, tw__transport_stats *st);

/* Sends every open batch, giving up @deadline_ms from now: a request in
 * flight is abandoned then, no retry or batch starts after it, and what is
 * not sent is counted failed. TW_OK, or TW_E_TIMEOUT when something was
 * abandoned at the deadline. The transport stays usable (free it next). */
tw_status tw__transport_close(tw__transport *t, unsigned int deadline_ms);

/* Frees the transport without sending (flush or close first). NULL is a
 * no-op. */
void tw__transport_free(tw__transport *t);

/* Parses udp://HOST[:PORT][/]: HOST a name, an IPv4 literal or [IPv6];
 * PORT 1..65535 (default 6831). True with *host a new string (free()). */
bool tw__transport_parse_udp_url(const char *url, char **host, unsigned int *port);

#endif /* TW_TRANSPORT_SENDER_H */
