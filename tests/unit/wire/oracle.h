/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/oracle.h: the reference encoders of the differential
 * suites: the JSON encoders as first written on Jansson trees (a value per
 * member, dumped compact), which the direct writers of sdk/wire/ replace on
 * the hot paths. Each suite parses the direct writer's output with Jansson
 * and compares it with its oracle's tree on large random corpora.
 * Test-only: never linked into the library or the command.
 */
#ifndef TW_TESTS_WIRE_ORACLE_H
#define TW_TESTS_WIRE_ORACLE_H

#include <jansson.h>

#include "wire/core/json_common.h"
#include "wire/core/output.h"
#include "wire/jaeger/jaeger_view.h"
#include "wire/model/span_data.h"

/* Zipkin v2: one span object recorded by @process (nullable); a ListOfSpans. */
json_t *oracle_zipkin_span_json(const tw__span_data *span, const tw__process *process);
json_t *oracle_zipkin_spans_json(tw__span_data *const *spans, size_t n, const tw__process *process);

/* OTLP/JSON: the request envelope with an empty spans array (*spans: that
 * array, borrowed); one Span object. */
json_t *oracle_otlp_request_json(const tw__process *process, json_t **spans);
json_t *oracle_otlp_span_json(const tw__span_data *span);

/* Jaeger JSON: one trace object of the spans @idx[0..n) of @spans (one
 * trace id), the Jaeger target rules applied through @view. */
json_t *oracle_jaeger_trace_json(tw__jaeger_view *view, const tw__wire_span *spans,
                                 const size_t *idx, size_t n);

/* The Dapper log: an encoder per process, one line per span (with its
 * "\n"), appended; false as the real encoder refuses. */
typedef struct oracle_dapper_encoder oracle_dapper_encoder;
oracle_dapper_encoder *oracle_dapper_encoder_new(const tw__process *process);
void oracle_dapper_encoder_free(oracle_dapper_encoder *enc);
bool oracle_dapper_encode_span(oracle_dapper_encoder *enc, const tw__span_data *span, tw__buf *out);

#endif /* TW_TESTS_WIRE_ORACLE_H */
