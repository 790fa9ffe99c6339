/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/api_v2_json.h: Jaeger's api_v2 model in the protobuf JSON
 * form (internal): the JSON of jaeger-idl proto/api_v2/model.proto and
 * collector.proto that gRPC gateways, jsonpb and tools such as Elastic
 * APM's Jaeger tests write:
 *
 *   PostSpansRequest {batch: Batch}     Batch {spans: [Span], process}
 *   {spans: [Span]} with a process in each span (query results)
 *   Span  trace_id (base64 of 16 bytes; 8 are a 64-bit id), span_id (8),
 *         operation_name, references [{trace_id, span_id, ref_type
 *         CHILD_OF (0, the default) | FOLLOWS_FROM (1)}], flags,
 *         start_time (RFC 3339), duration ("1.5s", or integer nanoseconds
 *         as gogo's time.Duration writes it), tags, logs [{timestamp,
 *         fields}], process {service_name, tags}
 *   KeyValue  key, v_type STRING (0, the default, often left out) | BOOL
 *         | INT64 | FLOAT64 | BINARY (numbers or names), v_str, v_bool,
 *         v_int64 (number or decimal string), v_float64 (number, or
 *         "NaN"/"Infinity"/"-Infinity"), v_binary (base64)
 * Member names are accepted as written in the .proto (snake_case) and in
 * proto3 JSON's lowerCamelCase (traceId, vType, serviceName, ...).
 *
 * This module only changes the syntax: it rewrites a document into the
 * Jaeger query-API JSON of one trace-like object ({"spans": [span with its
 * "process" embedded]}: hex ids, times and durations in µs rounded from
 * their nanoseconds, tags {key, type, value}), which the jaeger-json reader
 * then reads with the one set of Jaeger model rules (parents from
 * references, typed values, start from the earliest log, ...). A span whose
 * ids are not base64 of the right length is left out and handed to the
 * reject callback with its reason; a member that cannot be read (a bad time,
 * a value that does not fit its type) is left out with a warning, so one odd
 * value never costs the span.
 *
 * Locking: none. Memory: the rewritten document (about the input's size).
 */
#ifndef TW_WIRE_JAEGER_API_V2_JSON_H
#define TW_WIRE_JAEGER_API_V2_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

typedef struct tw__api_v2_sink {
    /* A member left out (@where names it). */
    void (*warn)(void *arg, const char *where, const char *why);
    /* A span left out (its JSON as given). False: stop. */
    bool (*reject)(void *arg, const json_t *span, const char *where, const char *why);
    void *arg;
} tw__api_v2_sink;

typedef enum tw__api_v2_status {
    TW__API_V2_OK = 0,
    TW__API_V2_NOT_API_V2, /* no batch, spans or span members: *why says so */
    TW__API_V2_STOPPED,    /* reject returned false */
    TW__API_V2_NOMEM
} tw__api_v2_status;

/* Rewrites @doc into *out (a new reference: {"spans": [...]}), see the top.
 * @why (@why_size bytes) receives the reason of TW__API_V2_NOT_API_V2. */
tw__api_v2_status tw__jaeger_api_v2_to_query_json(const json_t *doc, const tw__api_v2_sink *sink,
                                                  json_t **out, char *why, size_t why_size);

/* Parses RFC 3339 text (YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM); 't'
 * and 'z' too) into nanoseconds since the epoch. False when it is not. */
bool tw__rfc3339_to_ns(const char *text, size_t len, int64_t *ns);

/* 0 (not this format) .. 100: snake_case or camelCase api_v2 member names
 * (trace_id / traceId with span_id / spanId and operation_name /
 * operationName, or a "batch" object) in the first bytes. */
int tw__jaeger_api_v2_sniff(const uint8_t *head, size_t len);

#endif /* TW_WIRE_JAEGER_API_V2_JSON_H */
