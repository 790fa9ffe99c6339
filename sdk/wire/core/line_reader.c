/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/line_reader.c: lines with their lengths, bounded
 * (wire/core/line_reader.h). fread and memchr rather than getline: the
 * length of a line is what the bytes say, NUL bytes included, a line over
 * the limit is skipped without being held, and a line is copied only when
 * the end of the read buffer cuts it. No locks.
 */
#include "wire/core/line_reader.h"

#include <stdlib.h>
#include <string.h>

void tw__line_reader_init(tw__line_reader *lr, FILE *stream, size_t max_line)
{
    lr->stream = stream;
    lr->max_line = max_line;
    lr->line_no = 0;
    lr->line = "";
    lr->line_len = 0;
    tw__buf_init(&lr->held);
    lr->in = NULL;
    lr->pos = lr->end = 0;
    lr->is_eof = false;
    lr->spill = NULL;
    lr->spill_arg = NULL;
}

void tw__line_reader_free(tw__line_reader *lr)
{
    tw__buf_free(&lr->held);
    free(lr->in);
    lr->in = NULL;
    lr->pos = lr->end = 0;
}

int tw__line_reader_next(tw__line_reader *lr)
{
    lr->line = "";
    lr->line_len = 0;
    tw__buf_reset(&lr->held);
    bool is_over = false, is_spilling = false, has_any = false, is_held = false;
    for (;;) {
        if (lr->pos == lr->end) {
            if (lr->is_eof)
                break;
            if (!lr->in && !(lr->in = malloc(TW__LINE_READ_BYTES)))
                return TW__LINE_NOMEM;
            lr->pos = 0;
            lr->end = fread(lr->in, 1, TW__LINE_READ_BYTES, lr->stream);
            if (lr->end == 0) {
                if (ferror(lr->stream))
                    return TW__LINE_IO;
                lr->is_eof = true;
                break; /* a last line without "\n" still counts */
            }
        }
        has_any = true;
        const char *start = lr->in + lr->pos;
        size_t avail = lr->end - lr->pos;
        const char *nl = memchr(start, '\n', avail);
        size_t n = nl ? (size_t)(nl - start) : avail;
        lr->pos += nl ? n + 1 : n;
        if (!is_over) {
            if (lr->held.len + n > lr->max_line) {
                is_over = true;
                is_spilling = lr->spill && lr->spill(lr->spill_arg, lr->held.data, lr->held.len) &&
                              lr->spill(lr->spill_arg, start, n);
                tw__buf_reset(&lr->held);
                is_held = false;
            } else if (nl && !is_held) {
                lr->line = start; /* whole in the read buffer: handed out in place */
                lr->line_len = n;
            } else if (tw__buf_append(&lr->held, start, n)) {
                is_held = true;
            } else {
                return TW__LINE_NOMEM;
            }
        } else if (is_spilling) {
            is_spilling = lr->spill(lr->spill_arg, start, n);
        }
        if (nl)
            break;
    }
    if (!has_any)
        return TW__LINE_END;
    lr->line_no++;
    if (is_over)
        return TW__LINE_TOO_LONG;
    if (is_held) {
        lr->line = lr->held.len ? (const char *)lr->held.data : "";
        lr->line_len = lr->held.len;
    }
    return TW__LINE_OK;
}
