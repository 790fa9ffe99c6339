/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v2_json.h: the project's one Zipkin v2 JSON encoder
 * (internal). Span-model records (wire/model/span_data.h) to Zipkin v2 span
 * JSON, written directly into a byte buffer: the SDK's Zipkin HTTP reporter
 * (report/http_formats.c) POSTs a ListOfSpans to /api/v2/spans, and
 * `tracewire convert` writes and sends the same bytes.
 *
 * Schema: openzipkin/zipkin-api zipkin2-api.yaml, definitions Span, Endpoint,
 * Annotation, Tags. Keys are written in this order
 * and only when present:
 *
 *   traceId   16 lower-hex (trace_id_high == 0) or 32 lower-hex
 *   parentId  16 lower-hex; absent for a root (parent_id 0) and when it
 *             equals id (Zipkin drops such "circular" parents)
 *   id        16 lower-hex
 *   kind      CLIENT|SERVER|PRODUCER|CONSUMER from the last `span.kind` tag
 *             (matched case-insensitively); a value that maps is not repeated
 *             as a tag, any other value (e.g. "internal") stays a tag, no kind
 *   name      the operation, as recorded (Zipkin lower-cases it on ingest;
 *             other readers of this JSON keep the case); absent when empty
 *   timestamp start in epoch microseconds; absent when <= 0
 *   duration  microseconds, at least 1: a reported span is finished, so a
 *             0 (it ended within the microsecond it began) is rounded up to
 *             1 as Brave does; absent would mean "incomplete" to Zipkin.
 *             With no timestamp, a 0 duration is left out instead.
 *   debug     true when the Jaeger debug flag (0x02) is set; else absent
 *   duration  ... except when the span says its duration is unknown
 *             (is_duration_unknown: a one-way RPC half read by the bridge):
 *             then absent
 *   shared    true when the record has `shared` set (the decoders set it;
 *             the SDK gives every span its own id), except on a CLIENT
 *             span: Zipkin's model clears it there only (a shared SERVER,
 *             CONSUMER or PRODUCER span keeps it)
 *   localEndpoint  {serviceName: the process's service, ipv4|ipv6: from
 *             the process tag `ip` (text, or a packed IPv4 int64 as
 *             Jaeger's Java client writes it) and `ipv6` (text or 16
 *             bytes), port: the process tag `port` (1..65535); the tags
 *             that map are not repeated as tags}
 *   remoteEndpoint {serviceName: peer.service, ipv4: peer.ipv4 (text or
 *             packed int64), ipv6: peer.ipv6 (text or 16 bytes, written in
 *             canonical form), port: peer.port (1..65535, int or digits)};
 *             each peer.* tag that maps is not repeated as a tag; absent
 *             when none maps
 *   annotations one per log with fields: {timestamp: the log's µs,
 *             value: the string `event` field alone when it is the only
 *             field; else the event value followed by " k=v" for each other
 *             field; with no event field, "k=v k2=v2"}. Logs with no fields
 *             make no annotation (Zipkin requires a value).
 *   tags      string map: the process's tags (except `ip`, which is in
 *             localEndpoint) and then the span's tags, a span tag winning
 *             over a process tag and the last of repeated keys winning.
 *             Values are stringified: bool "true"/"false", int64 decimal,
 *             double as its shortest exact text ("NaN", "Infinity"),
 *             binary as padded base64.
 *             `error`: Zipkin counts any error tag as a failure, so a false
 *             one (bool false, int 0, string "false" in any case) is left
 *             out. A true one (bool, non-zero number, "true") carries the
 *             message of the first log with event=error and a string
 *             `message` field (tw_span_set_error writes it), else of a
 *             string otel.status_description tag (OTLP's status message;
 *             the tag is then not repeated), else "true".
 *             Other strings are kept as they are (Brave's convention: the
 *             error tag holds the message).
 *
 * Invalid UTF-8 in names, keys and values is repaired (U+FFFD per bad byte),
 * never rejected.
 *
 * Locking: none; the functions are pure, but for the cache that
 * tw__zipkin_encode_span_cached updates (one thread at a time).
 */
#ifndef TW_WIRE_ZIPKIN_V2_JSON_H
#define TW_WIRE_ZIPKIN_V2_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/model/span_data.h"
#include "wire/core/buf.h"

/* Appends the compact JSON of one span recorded by @process (nullable: no
 * localEndpoint and no process tags) to @out. False on a NULL span or
 * buffer or on allocation failure (out unchanged). */
bool tw__zipkin_encode_span(const tw__span_data *span, const tw__process *process, tw__buf *out);

/* What tw__zipkin_encode_span_cached keeps of the processes it has seen:
 * each one's localEndpoint and process tags, rendered once (bounded: a few
 * dozen processes of a few KiB each). Content is compared on every use, so
 * a process may change or be freed while the cache lives. One thread at a
 * time. */
typedef struct tw__zipkin_process_cache tw__zipkin_process_cache;
tw__zipkin_process_cache *tw__zipkin_process_cache_new(void); /* NULL when out of memory */
void tw__zipkin_process_cache_free(tw__zipkin_process_cache *cache);
/* Starts a batch: until the next call, every process the caller passes
 * stays alive and unchanged (the spans of one call), so that the cache
 * compares each process once per batch instead of once per span. Without
 * it, every use compares. */
void tw__zipkin_process_cache_new_batch(tw__zipkin_process_cache *cache);

/* tw__zipkin_encode_span, the same bytes, with @cache (nullable: none). */
bool tw__zipkin_encode_span_cached(const tw__span_data *span, const tw__process *process,
                                   tw__buf *out, tw__zipkin_process_cache *cache);

/* Appends a ListOfSpans (a JSON array) of @n spans sharing @process.
 * False (out unchanged) on failure. */
bool tw__zipkin_encode_spans(tw__span_data *const *spans, size_t n, const tw__process *process,
                             tw__buf *out);

#endif /* TW_WIRE_ZIPKIN_V2_JSON_H */
