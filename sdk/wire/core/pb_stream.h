/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/pb_stream.h: the outer level of a protobuf input read from a
 * stream (internal; the otlp-proto and zipkin-v2-proto decoders). A request
 * is a sequence of fields whose payloads (one ResourceSpans, one Span) are
 * decoded one at a time, so that memory follows the largest payload, not
 * the input: these functions read the tags and lengths between them from a
 * FILE and count the bytes consumed, for the offsets that reasons name.
 *
 * Locking: none; a stream belongs to one decoder.
 */
#ifndef TW_WIRE_CORE_PB_STREAM_H
#define TW_WIRE_CORE_PB_STREAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "wire/core/buf.h"

typedef struct tw__pb_stream {
    FILE *f;
    uint64_t offset;  /* bytes consumed so far */
    bool is_io_error; /* a read failed (ferror), not merely ended */
} tw__pb_stream;

/* A varint (at most 10 bytes). False when the stream ends or the varint is
 * too long; *is_eof when the stream ended before its first byte. */
bool tw__pb_stream_varint(tw__pb_stream *s, uint64_t *v, bool *is_eof);
/* Reads @n bytes into @b (replaced; one spare byte reserved). False on a
 * short read (@b holds what was read) or, with *is_nomem, when @n bytes
 * cannot be allocated. */
bool tw__pb_stream_read(tw__pb_stream *s, uint64_t n, tw__buf *b, bool *is_nomem);
/* Skips @n bytes; false when the stream ends first. */
bool tw__pb_stream_skip(tw__pb_stream *s, uint64_t n);
/* Skips @n bytes as tw__pb_stream_skip does, handing them to @part as they
 * are read (a record too large to hold, on its way to --rejects); once
 * @part returns false it gets no more. */
bool tw__pb_stream_skip_parts(tw__pb_stream *s, uint64_t n,
                              bool (*part)(void *arg, const void *bytes, size_t len), void *arg);
/* Skips the value of a field of @wire_type; false when the stream ends or
 * the wire type is not one protobuf has. *consumed: the bytes it took. */
bool tw__pb_stream_skip_value(tw__pb_stream *s, unsigned wire_type, uint64_t *consumed);

#endif /* TW_WIRE_CORE_PB_STREAM_H */
