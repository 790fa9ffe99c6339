/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_thrift_decode.h: the project's one Jaeger Thrift decoder
 * (internal): a jaeger.thrift Batch struct, or a whole Agent.emitBatch
 * message, in the binary or the compact protocol, to the span model
 * (wire/model/span_data.h). The bridge's `--from jaeger-thrift` reader
 * (sdk/wire/jaeger/jaeger_thrift_read.c) streams files through it; the field
 * tables are those of the encoder (wire/jaeger/jaeger_thrift.h).
 *
 * The decoder reads the protocols itself instead of through c_glib's
 * generated structs: its input comes from files it does not control, so it
 * must tell "the bytes stop inside the record" (read more) from "the bytes
 * are wrong" (reject), bound every allocation by the bytes present before
 * making it, bound nesting, and not build a GObject per tag. Generated
 * c_glib code stays the tests' independent check of the encoder.
 *
 * One pass per record: it builds the process and the spans as it reads
 * (every length, type and nesting level checked) and holds the spans until
 * the record is known whole and sound; only then are they handed to the
 * caller, in order. So a truncated or malformed record emits nothing (what
 * was built is dropped), and the process may come after the spans. Memory:
 * at most 4096 spans, or the spans of 4 MiB of input, are held; a longer
 * list is walked to the end of its record and then decoded again, one span
 * at a time. A bad span's extent, the errors and the bytes needed are what
 * a walk of the whole record finds first, whatever was decoded.
 *
 * Span rules (docs/bridge.md, `jaeger-thrift` input):
 *   - traceIdLow/traceIdHigh, spanId, startTime are needed: a span without
 *     one, with an all-zero trace id or a zero span id is a bad span;
 *     parentSpanId, operationName, flags and duration default to 0 / "".
 *   - parent = parentSpanId unless 0 or equal to spanId; when 0, the first
 *     CHILD_OF reference in the same trace (jaeger-idl model rule); the
 *     references are kept as they are.
 *   - a negative duration becomes 0 (warning); an unknown vType or refType
 *     makes a bad span; a Tag without its value field gets the type's zero.
 *   - strings are kept byte for byte (writers repair UTF-8); a key with a
 *     NUL byte is cut there (keys are C strings in the model).
 *   - unknown fields are skipped, as Thrift does; fields of a known id with
 *     an unexpected type too.
 *
 * Locking: none; pure functions over caller bytes.
 */
#ifndef TW_WIRE_JAEGER_THRIFT_DECODE_H
#define TW_WIRE_JAEGER_THRIFT_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/model/span_data.h"
#include "wire/core/thrift.h"
#include "wire/jaeger/jaeger_thrift.h"

/* Nesting allowed below the Batch (Batch > Span > Log > Tag is 3). Unknown
 * fields may nest deeper, up to this. */
#define TW__JAEGER_MAX_DEPTH 32

/* tw__jaeger_decode returns a tw__thrift_result (wire/core/thrift.h):
 * TW__THRIFT_OK; TW__THRIFT_SHORT when the bytes end inside the record
 * (*need says how many it needs at least, counted from @data);
 * TW__THRIFT_MALFORMED (@why, *err_offset); TW__THRIFT_NOMEM;
 * TW__THRIFT_STOPPED when a sink callback returned false. */

/* Where decoded spans go. Every callback may be NULL (spans are then
 * dropped). Offsets are from @data of tw__jaeger_decode. */
typedef struct tw__jaeger_sink {
    /* A span, with its batch's process (borrowed: valid during the call).
     * Takes the span's reference. */
    bool (*span)(void *user_data, tw__span_data *span, const tw__process *process);
    /* A well-formed Span struct that is not a valid span: its index in the
     * list, its bytes, the reason. */
    bool (*bad_span)(void *user_data, size_t index, size_t offset, size_t len, const char *why);
    /* A span kept with a change (negative duration made 0). */
    void (*warn)(void *user_data, size_t index, const char *why);
    void *user_data;
    /* Nullable: the input the spans enter the model for; its options and
     * warnings serve tw__wire_admit_span (the time unit by magnitude, the
     * time range). NULL: only the time range is checked. */
    struct tw__wire_input *input;
} tw__jaeger_sink;

/* What a decoded record was. */
typedef struct tw__jaeger_record {
    size_t size;    /* bytes of the record */
    size_t n_spans; /* elements of Batch.spans (good and bad) */
    bool is_message;
    tw__thrift_protocol protocol;
} tw__jaeger_record;

/* Which record starts at @data: 1 when it is one (*protocol, *is_message
 * set): a binary Batch (0x0C 0x00 0x01: process, field 1), a compact Batch
 * (0x1C), a binary message (0x80 0x01, or the old unversioned form: i32 9
 * then "emitBatch"), a compact message (0x82, version 1); 0 when it is none
 * of these; -1 when @len is too short to tell. */
int tw__jaeger_detect(const uint8_t *data, size_t len, tw__thrift_protocol *protocol,
                      bool *is_message);

/*
 * Decodes the record at the start of @data (@len bytes; the record may be
 * followed by others): a Batch struct, or with @is_message an emitBatch
 * message (message header "emitBatch", CALL or ONEWAY, then the args struct
 * whose field 1 is the Batch). @sink (nullable) receives the spans in
 * order. @info (nullable) is filled on TW__THRIFT_OK and, with whatever is
 * known, on STOPPED. @need (nullable) is set on SHORT; @err_offset and
 * @why (nullable) on MALFORMED.
 */
tw__thrift_result tw__jaeger_decode(const uint8_t *data, size_t len, tw__thrift_protocol protocol,
                                    bool is_message, const tw__jaeger_sink *sink,
                                    tw__jaeger_record *info, size_t *need, size_t *err_offset,
                                    char *why, size_t why_size);

/* The same without the fast path for the common Tag layout: every tag read
 * field by field. For the tests and the fuzz target that hold both to the
 * same results; the reference of what the fast path must do. */
tw__thrift_result tw__jaeger_decode_general(const uint8_t *data, size_t len,
                                            tw__thrift_protocol protocol, bool is_message,
                                            const tw__jaeger_sink *sink, tw__jaeger_record *info,
                                            size_t *need, size_t *err_offset, char *why,
                                            size_t why_size);

#endif /* TW_WIRE_JAEGER_THRIFT_DECODE_H */
