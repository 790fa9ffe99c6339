/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/pb_stream.c: protobuf tags and lengths read from a FILE, with
 * the byte count the decoders' reasons name (pb_stream.h). No locks.
 */
#include "wire/core/pb_stream.h"

#include "wire/core/pb_write.h" /* wire type numbers */

bool tw__pb_stream_varint(tw__pb_stream *s, uint64_t *v, bool *is_eof)
{
    *is_eof = false;
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        int c = getc(s->f);
        if (c == EOF) {
            s->is_io_error = ferror(s->f) != 0;
            *is_eof = shift == 0;
            return false;
        }
        s->offset++;
        if (shift == 63 && c > 1)
            return false;
        value |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = value;
            return true;
        }
    }
    return false;
}

bool tw__pb_stream_read(tw__pb_stream *s, uint64_t n, tw__buf *b, bool *is_nomem)
{
    tw__buf_reset(b);
    if (n >= SIZE_MAX || !tw__buf_reserve(b, (size_t)n + 1)) {
        *is_nomem = true;
        return false;
    }
    size_t got = n ? fread(b->data, 1, (size_t)n, s->f) : 0;
    s->offset += got;
    b->len = got;
    if (got != n)
        s->is_io_error = ferror(s->f) != 0;
    return got == n;
}

bool tw__pb_stream_skip_parts(tw__pb_stream *s, uint64_t n,
                              bool (*part)(void *arg, const void *bytes, size_t len), void *arg)
{
    char scratch[4096];
    while (n > 0) {
        size_t want = n < sizeof scratch ? (size_t)n : sizeof scratch;
        size_t got = fread(scratch, 1, want, s->f);
        s->offset += got;
        n -= got;
        if (part && got && !part(arg, scratch, got))
            part = NULL;
        if (got != want) {
            s->is_io_error = ferror(s->f) != 0;
            return false;
        }
    }
    return true;
}

bool tw__pb_stream_skip(tw__pb_stream *s, uint64_t n)
{
    return tw__pb_stream_skip_parts(s, n, NULL, NULL);
}

bool tw__pb_stream_skip_value(tw__pb_stream *s, unsigned wire_type, uint64_t *consumed)
{
    uint64_t start = s->offset, v;
    bool is_eof, ok;
    switch (wire_type) {
    case TW__PB_VARINT:
        ok = tw__pb_stream_varint(s, &v, &is_eof);
        break;
    case TW__PB_I64:
        ok = tw__pb_stream_skip(s, 8);
        break;
    case TW__PB_I32:
        ok = tw__pb_stream_skip(s, 4);
        break;
    case TW__PB_LEN:
        ok = tw__pb_stream_varint(s, &v, &is_eof) && tw__pb_stream_skip(s, v);
        break;
    default:
        ok = false;
    }
    *consumed = s->offset - start;
    return ok;
}
