/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_json.h: the project's one OTLP/JSON trace encoder
 * (internal). Span-model records (wire/model/span_data.h) to an
 * OpenTelemetry ExportTraceServiceRequest in the OTLP/HTTP JSON encoding,
 * written directly into a byte buffer: the OTLP HTTP reporter
 * (report/http_formats.c) POSTs it to .../v1/traces, and `tracewire
 * convert` writes and sends the same bytes.
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
 * Time range: times are written as fixed64 nanoseconds; a start at or
 * before the epoch is written as 0 and a value beyond fixed64 saturates
 * (the decoders keep the model within TW__MAX_TIME_US, far below).
 *
 * Locking: none (pure functions).
 */
#ifndef TW_WIRE_OTLP_OTLP_JSON_H
#define TW_WIRE_OTLP_OTLP_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/model/span_data.h"
#include "wire/core/buf.h"

/* Appends one Span object. False (out unchanged) when @span is NULL or on
 * allocation failure. */
bool tw__otlp_encode_span(const tw__span_data *span, tw__buf *out);

/* A whole request holding @n spans of @process (nullable: no resource
 * attributes), appended. False (out unchanged) on failure. */
bool tw__otlp_encode_request(tw__span_data *const *spans, size_t n, const tw__process *process,
                             tw__buf *out);

/* The parts of a request for writers that stream spans into it: the
 * request's start up to its spans array (`{"resourceSpans":[{"resource":
 * ...,"scopeSpans":[{"scope":...,"spans":[`) and its end (`]}]}]}`); and the
 * same for one ResourceSpans entry of a request holding several processes
 * (`{"resource":...,"spans":[` and `]}]}`). Spans go in between, separated
 * by ','. False (out unchanged) on allocation failure. */
bool tw__otlp_encode_request_begin(const tw__process *process, tw__buf *out);
bool tw__otlp_encode_request_end(tw__buf *out);
bool tw__otlp_encode_resource_begin(const tw__process *process, tw__buf *out);
bool tw__otlp_encode_resource_end(tw__buf *out);

#endif /* TW_WIRE_OTLP_OTLP_JSON_H */
