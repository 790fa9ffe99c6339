/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_json.h: the project's one Jaeger JSON encoder and
 * decoder: the JSON of Jaeger's query API (GET /api/traces), which Jaeger
 * UI's "JSON file" upload loads. The decoder is tw__jaeger_json_decoder
 * (wire/formats.h; its rules at the top of jaeger_json_decode.c); this
 * header is the encoder's, and the decoder's entry point for one parsed
 * document.
 *
 * Document: {"data":[ at the first trace, traces separated by ",", and
 * ],"total":0,"limit":0,"offset":0,"errors":null} at the end (the members
 * the API writes; no trace gives {"data":[],...}). Each group of spans the
 * writer is given is grouped by trace id (in order of first appearance);
 * each group is one trace object
 *   {traceID, spans, processes: {"p1": {serviceName, tags}, ...}, warnings}
 * with process keys p1..pN in order of first appearance of each distinct
 * (pointer-equal) process in that trace. A trace whose spans come in
 * several groups gives several trace objects with the same traceID.
 *
 * Span: {traceID, spanID, flags, operationName, references, startTime,
 * duration, tags, logs, processID, warnings}, ids lower-case hex (a trace
 * id is 16 digits when its high half is 0, else 32). References: the parent
 * first (jaeger-ui's tree takes references[0] as the parent): the reference
 * that names the parent (a CHILD_OF one, else any) moves first, keeping its
 * type; with none, a CHILD_OF reference is made; then the other refs in
 * their order. Tags and log fields are typed {key, type, value}
 * (wire/core/json_write.h, tw__json_put_typed_tag: int64 beyond
 * +-(2^53-1) as a string, NaN and the infinities as strings, binary as
 * base64). The Jaeger rules every Jaeger target shares come from
 * wire/jaeger/jaeger_view.h (the error tag becomes a bool, plus
 * error.message for a message; an empty service is "empty-service-name").
 *
 * Never a start time of 0 (Jaeger UI drops such spans): a span without one
 * gets its earliest log timestamp, else the earliest start time of its
 * trace in the same group, else 1 µs, and a span warning that says so.
 *
 * Written directly into a byte buffer (no JSON tree): the differential
 * suite tests/unit/wire/test_jaeger_json_encode.c compares the output,
 * parsed with Jansson, with the reference Jansson encoder on a large random
 * corpus. Locking: none; a view is used by one thread.
 */
#ifndef TW_WIRE_JAEGER_JAEGER_JSON_H
#define TW_WIRE_JAEGER_JAEGER_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "wire/core/buf.h"
#include "wire/core/input.h"
#include "wire/core/output.h"
#include "wire/jaeger/jaeger_view.h"

/* Appends the trace object of the spans @idx[0..n) of @spans (all of one
 * trace id; n >= 1), the Jaeger rules applied through @view (scratch).
 * False (out unchanged) on allocation failure. */
bool tw__jaeger_json_encode_trace(tw__jaeger_view *view, const tw__wire_span *spans,
                                  const size_t *idx, size_t n, tw__buf *out);

/* Appends @tags[0..n) as a JSON array of typed tags: the bytes of
 * tw__json_put_typed_tag for each, joined by ",", inside "[" and "]" (the
 * writer of every tag list of the encoder, with the common types written
 * inline). False on allocation failure (out then holds a partial list). */
bool tw__jaeger_json_put_tags(tw__buf *out, const tw__tag *tags, size_t n);

/* The decoder's rules applied to one parsed document (the query-API
 * envelope, a trace or a span), for decoders of other Jaeger JSON forms
 * that rewrite their documents into this one (wire/jaeger/api_v2_json.h):
 * spans go to in->emit, bad ones to in->reject with @raw (the document's
 * text) or their own text. Times are µs and ids hex whatever the options
 * say. TW_OK, TW_E_STATE (emit or reject said stop) or TW_E_NOMEM. */
tw_status tw__jaeger_json_read_document(tw__wire_input *in, size_t line_no, const json_t *doc,
                                        const char *raw, size_t raw_len);

#endif /* TW_WIRE_JAEGER_JAEGER_JSON_H */
