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
 * trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto,
 * in the proto3 JSON mapping with OTLP's two exceptions (the OTLP
 * specification, "JSON Protobuf Encoding"): trace and span ids are hex, not
 * base64, and enums are integers. Keys are lowerCamelCase; 64-bit integers
 * are decimal strings. The Jaeger <-> OTLP conventions followed here are
 * those of the OpenTelemetry Collector's Jaeger
 * translator, so a span reads the same whichever way it reaches a backend.
 *
 *   ExportTraceServiceRequest {resourceSpans: [ResourceSpans]}   one entry
 *   ResourceSpans {resource: {attributes}, scopeSpans: [ScopeSpans]}
 *     resource.attributes: service.name = the process's service, then the
 *       process tags, typed; `hostname` is renamed host.name (unless the
 *       process has a host.name tag); a process tag named service.name is
 *       left out (the service wins)
 *   ScopeSpans {scope: {name: "tracewire", version: tw_version()}, spans}
 *   Span
 *     traceId 32 hex (a 64-bit id is left-padded with zeros); spanId 16 hex;
 *     parentSpanId 16 hex, absent for a root
 *     name      the operation (always written, "" allowed)
 *     kind      from the last span.kind tag: 1 INTERNAL (also with no tag or
 *               an unknown value), 2 SERVER, 3 CLIENT, 4 PRODUCER,
 *               5 CONSUMER; a known value is not repeated as an attribute
 *     startTimeUnixNano, endTimeUnixNano  decimal strings: start_us * 1000
 *               and (start_us + duration_us) * 1000 (fixed64; a negative
 *               start is written as 0)
 *     attributes  the span's tags, the last of repeated keys winning:
 *               string -> {stringValue}, bool -> {boolValue},
 *               int64 -> {intValue: "decimal"}, double -> {doubleValue: n}
 *               ("NaN", "Infinity", "-Infinity" as strings, as proto3 JSON
 *               writes them), binary -> {bytesValue: base64}
 *     events    one per log: {timeUnixNano, name: the log's first string
 *               `event` field (absent when none), attributes: the other
 *               fields, typed}
 *     links     every reference except the one that is the parent (same
 *               trace and span id as parentSpanId): {traceId, spanId,
 *               attributes: [opentracing.ref_type = "child_of" |
 *               "follows_from"]}, as the Collector's translator writes them
 *     status    from the last `error` tag: true (bool true, a non-zero
 *               number, "true") -> {code: 2 (ERROR), message: the message
 *               of the first event=error log, when there is one}; false ->
 *               no status; another string -> {code: 2, message: it}. A true
 *               error with no such log takes a string otel.status_description
 *               tag as its message (the tag is then not repeated). The
 *               error tag is then not repeated as an attribute. With no
 *               error tag, otel.status_code "OK"/"ERROR"/"UNSET" (any case)
 *               with otel.status_description give the status and are not
 *               repeated. Otherwise no status (UNSET).
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
