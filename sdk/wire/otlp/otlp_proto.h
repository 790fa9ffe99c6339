/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_proto.h: OTLP in the protobuf encoding (internal): the
 * `ExportTraceServiceRequest` of opentelemetry-proto
 * collector/trace/v1/trace_service.proto (the files are in proto/), the body
 * that OTLP/HTTP receivers take as `application/x-protobuf` on /v1/traces.
 *
 * What is written and read (resource, scope, kind, attributes, events,
 * links, status, and the reading rules) is the mapping shared with OTLP/JSON,
 * wire/otlp/otlp_map.h. This file adds only the protobuf syntax:
 *
 *   ExportTraceServiceRequest  1 resource_spans: ResourceSpans (repeated)
 *   ResourceSpans  1 resource: Resource {1 attributes: KeyValue}
 *                  2 scope_spans: ScopeSpans (one)
 *   ScopeSpans     1 scope: InstrumentationScope {1 name "tracewire",
 *                    2 version tw_version()}
 *                  2 spans: Span
 *   Span           1 trace_id bytes(16) (a 64-bit id: 8 zero bytes first)
 *                  2 span_id bytes(8)   4 parent_span_id bytes(8), not for a root
 *                  5 name (absent when empty)   6 kind (always: 1..5)
 *                  7 start_time_unix_nano, 8 end_time_unix_nano fixed64
 *                  9 attributes   11 events   13 links   15 status (not when UNSET)
 *   KeyValue       1 key  2 value: AnyValue {1 string_value | 2 bool_value |
 *                  3 int_value | 4 double_value | 7 bytes_value}
 *   Event          1 time_unix_nano fixed64  2 name  3 attributes
 *   Link           1 trace_id  2 span_id  4 attributes (opentracing.ref_type)
 *   Status         2 message  3 code
 * Ids are big-endian byte strings (the high half of a trace id first). Fields
 * are written in field-number order, proto3 defaults (0, "") left out,
 * exactly as protobuf-c's packer writes the same message: the encoder writes
 * bytes directly (no message structs per span: the reporter thread's cost),
 * and tests/unit/wire/test_otlp_proto.c holds it byte for byte to
 * protobuf_c_message_pack() of the generated structs on a random corpus.
 * Strings are repaired to valid UTF-8 (U+FFFD per bad byte).
 *
 * Decoding (otlp_proto_decode.c, and the otlp-proto decoder of the format
 * registry, otlp_proto_read.c; linked by the command and the tests, not
 * by libtracewire) reads the wire format itself, a ResourceSpans at a time
 * and one pass per message, straight into the model: every length is
 * checked against its message before use, nothing is allocated but the
 * model, and values nest at most TW__OTLP_PROTO_MAX_VALUE_DEPTH deep; the
 * tests hold it to protobuf-c's unpack of the generated code. A bad span is
 * refused alone with its path ("resource_spans[0].scope_spans[1].spans[4]:
 * attributes[2].value: byte 1250: ...") and byte offset; a ResourceSpans
 * whose own level (or resource) is not well-formed is refused whole. Fields
 * not in the model are ignored (schema_url, dropped counts, flags, scope
 * attributes); array and kvlist values become JSON text as in OTLP/JSON.
 *
 * Locking: none; buffers and sinks belong to the caller.
 */
#ifndef TW_WIRE_OTLP_OTLP_PROTO_H
#define TW_WIRE_OTLP_OTLP_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/model/span_data.h"
#include "wire/core/buf.h"

#define TW__OTLP_PROTO_CONTENT_TYPE "application/x-protobuf"
/* Attribute values (arrays and key-value lists of AnyValue) nested deeper
 * than this are refused, as the OTLP/JSON reader refuses them. */
#define TW__OTLP_PROTO_MAX_VALUE_DEPTH 64

/* ---- encoding (libtracewire) --------------------------------------------------------------- */

/* Appends one span as the `spans` field of a ScopeSpans (tag, length and
 * the Span message) to @out. False (out unchanged) on allocation failure. */
bool tw__otlp_proto_encode_span(const tw__span_data *span, tw__buf *out);

/* What every ResourceSpans of one process repeats: the `resource` field of
 * ResourceSpans and the `scope` field of ScopeSpans, encoded once. */
typedef struct tw__otlp_proto_envelope {
    tw__buf resource;
    tw__buf scope;
} tw__otlp_proto_envelope;

/* Encodes the envelope of @process (NULL: a resource with no attributes).
 * False on allocation failure (clear it either way). */
bool tw__otlp_proto_envelope_init(tw__otlp_proto_envelope *e, const tw__process *process);
void tw__otlp_proto_envelope_clear(tw__otlp_proto_envelope *e);

/* The exact size of one `resource_spans` field of a request (tag, length
 * and message) holding span fields of @spans_bytes bytes in all. */
size_t tw__otlp_proto_resource_spans_size(const tw__otlp_proto_envelope *e, size_t spans_bytes);

/* Appends the part of that `resource_spans` field that comes before its
 * spans; the caller then appends exactly @spans_bytes bytes of span fields
 * (tw__otlp_proto_encode_span). A request is one or more such fields. */
bool tw__otlp_proto_put_resource_spans_head(const tw__otlp_proto_envelope *e, size_t spans_bytes,
                                            tw__buf *out);

/* A whole request holding @n spans of @process in @out (replaced). False
 * (out unchanged) on failure. */
bool tw__otlp_proto_encode_request(tw__span_data *const *spans, size_t n,
                                   const tw__process *process, tw__buf *out);

/* ---- decoding (the command and the tests) ------------------------------------------------- */

/* Where decoded spans go. */
typedef struct tw__otlp_proto_sink {
    /* A span and its process (borrowed for the call) and the span's own
     * bytes (its Span message, for a caller that may still refuse it);
     * takes the span's reference. False: stop decoding. */
    bool (*span)(void *arg, tw__span_data *span, const tw__process *process, const uint8_t *raw,
                 size_t raw_len);
    /* A refused part (a span, or a whole ResourceSpans): its path, the
     * reason, its bytes. False: stop decoding. */
    bool (*reject)(void *arg, const char *where, const char *why, const uint8_t *raw,
                   size_t raw_len);
    /* A span kept with a change worth knowing (an end before its start). */
    void (*warn)(void *arg, const char *where, const char *why);
    void *arg;
} tw__otlp_proto_sink;

typedef enum tw__otlp_proto_status {
    TW__OTLP_PROTO_OK = 0,
    TW__OTLP_PROTO_STOPPED, /* a sink function returned false */
    TW__OTLP_PROTO_NOMEM
} tw__otlp_proto_status;

/* Decodes the ResourceSpans message in @data (@len bytes: the payload of a
 * request's field 1), number @index of its input, which starts at byte
 * @base_offset of the input (for paths and offsets in reasons). */
tw__otlp_proto_status tw__otlp_proto_decode_resource_spans(const uint8_t *data, size_t len,
                                                           size_t index, uint64_t base_offset,
                                                           const tw__otlp_proto_sink *sink);

/* Decodes a whole ExportTraceServiceRequest (or TracesData: the same
 * bytes) held in memory. A request that is not well-formed at its top
 * level is refused from the first bad byte on. */
tw__otlp_proto_status tw__otlp_proto_decode_request(const uint8_t *data, size_t len,
                                                    const tw__otlp_proto_sink *sink);

/* How sure the first bytes of an input are an ExportTraceServiceRequest:
 * 0 (no) .. 100. @is_framed: the input is a sequence of messages each
 * preceded by a 4-byte big-endian length (the OpenTelemetry Collector's file
 * exporter, format proto), else a bare message. */
int tw__otlp_proto_sniff(const uint8_t *head, size_t len, bool *is_framed);

#endif /* TW_WIRE_OTLP_OTLP_PROTO_H */
