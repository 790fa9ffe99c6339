/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp_json.h: the project's one OTLP/JSON trace encoder (internal).
 *
 * Turns span-model records (model/span_data.h) into an OpenTelemetry
 * ExportTraceServiceRequest in the OTLP/HTTP JSON encoding, as Jansson
 * values: the OTLP HTTP reporter (report/http_formats.c) POSTs it to
 * .../v1/traces. Jansson writes every byte.
 *
 * Schema: opentelemetry-proto collector/trace/v1/trace_service.proto,
 * trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto
 * (proto/ holds them), in the proto3 JSON mapping with OTLP's two
 * exceptions (the OTLP specification, "JSON Protobuf Encoding"): trace and
 * span ids are hex, not base64, and enums are integers. Keys are
 * lowerCamelCase; 64-bit integers are decimal strings.
 *
 * What is written (resource, scope, kind, attributes, events, links,
 * status) is decided by the mapping shared with the protobuf encoding,
 * wire/otlp/otlp_map.h, which lists the rules. The JSON forms:
 *
 *   ExportTraceServiceRequest {resourceSpans: [ResourceSpans]}   one entry
 *   ResourceSpans {resource: {attributes}, scopeSpans: [ScopeSpans]}
 *   ScopeSpans {scope: {name: "tracewire", version: tw_version()}, spans}
 *   Span
 *     traceId 32 hex (a 64-bit id is left-padded with zeros); spanId 16 hex;
 *     parentSpanId 16 hex, absent for a root
 *     name      the operation (always written, "" allowed)
 *     kind      the number
 *     startTimeUnixNano, endTimeUnixNano  decimal strings
 *     attributes  string -> {stringValue}, bool -> {boolValue},
 *               int64 -> {intValue: "decimal"}, double -> {doubleValue: n}
 *               ("NaN", "Infinity", "-Infinity" as strings, as proto3 JSON
 *               writes them), binary -> {bytesValue: base64}
 *     events    {timeUnixNano, name (absent when none), attributes}
 *     links     {traceId, spanId, attributes: [opentracing.ref_type]}
 *     status    {code: 1 | 2, message (when there is one)}; absent when UNSET
 *   Empty attribute lists are left out.
 *
 * Invalid UTF-8 in names, keys and values is repaired (U+FFFD per bad byte).
 *
 * Locking: none (pure functions).
 */
#ifndef TW_WIRE_OTLP_JSON_H
#define TW_WIRE_OTLP_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "model/span_data.h"
#include "wire/jaeger_thrift.h" /* tw__buf */

/* The request envelope for @process (nullable: no resource attributes) with
 * an empty spans array; *spans receives that array (borrowed from the
 * envelope) to append spans to. New reference; NULL on allocation failure. */
json_t *tw__otlp_request_json(const tw__process *process, json_t **spans);

/* One Span object. New reference; NULL when @span is NULL or on allocation
 * failure. */
json_t *tw__otlp_span_json(const tw__span_data *span);

/* The compact JSON text of a request holding @n spans in @out (replaced).
 * False (out unchanged) on failure. */
bool tw__otlp_encode_request(tw__span_data *const *spans, size_t n, const tw__process *process,
                             tw__buf *out);

#endif /* TW_WIRE_OTLP_JSON_H */
