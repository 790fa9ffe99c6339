/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v2_json_decode.h: the Zipkin v2 JSON decoder's rules
 * for one span object, for the decoders of other Zipkin v2 encodings: the
 * proto3 reader (wire/zipkin/zipkin_proto_read.c) rewrites each span into
 * the JSON object these rules read, so that both encodings read alike. The
 * decoder itself is tw__zipkin_v2_json_decoder (wire/formats.h).
 *
 * Locking: none (the caller's thread).
 */
#ifndef TW_WIRE_ZIPKIN_ZIPKIN_V2_JSON_DECODE_H
#define TW_WIRE_ZIPKIN_ZIPKIN_V2_JSON_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "wire/core/input.h"

/* Decodes the Zipkin v2 span object @obj: the span goes to in->emit (after
 * tw__wire_admit_span), or @raw is rejected with the reason. Times are µs
 * and ids hex whatever the options say. False when the run must stop;
 * *is_nomem on allocation failure. */
bool tw__zipkin_v2_emit_object(tw__wire_input *in, size_t line_no, const json_t *obj,
                               const void *raw, size_t raw_len, bool *is_nomem);

/* The decoder's read (tw__zipkin_v2_json_decoder.read, which passes
 * @is_direct true): with @is_direct false, every record is read the token
 * way, never by the direct reader (zipkin_v2_json_direct.c), for the tests
 * that hold the two ways to the same spans, rejects and messages. */
tw_status tw__zipkin_v2_json_read(FILE *stream, tw__wire_input *in, bool is_direct, tw_error **err);

#endif /* TW_WIRE_ZIPKIN_ZIPKIN_V2_JSON_DECODE_H */
