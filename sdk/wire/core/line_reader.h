/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/line_reader.h: the one line reader of the line-based decoders
 * (the Dapper log, custom JSON-lines and TSV logs): lines of a stream with
 * their lengths, so that a NUL byte inside a line stays inside it (a C
 * string reader would cut the line there and glue the next one to it), and
 * memory bounded by the longest line allowed: a longer line is reported
 * and skipped, not held (its bytes can be handed on as they are read:
 * spill).
 *
 * Copies: a line that lies whole in the read buffer is handed out where it
 * lies; only a line cut by the end of the buffer is gathered into a second
 * one. The reads ask for the whole buffer (64 KiB) at a time, so that a
 * stdio stream with a buffer no larger than that reads straight into it
 * (glibc's fread skips the stream's own buffer for such a request): one
 * copy per byte, the kernel's. 64 KiB rather than more: the kernel's copy
 * into a larger buffer measured several times slower (bridge/pipeline.c).
 *
 * Ownership: the reader owns its buffers; the line is valid until the next
 * call. Locking: none; one thread per reader.
 */
#ifndef TW_WIRE_CORE_LINE_READER_H
#define TW_WIRE_CORE_LINE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "wire/core/buf.h"

#define TW__LINE_READ_BYTES ((size_t)64 << 10)

typedef struct tw__line_reader {
    FILE *stream; /* borrowed */
    size_t max_line;
    size_t line_no; /* of the line last returned, 1-based */
    /* The line last returned (TW__LINE_OK), without its "\n": in the read
     * buffer or in held; "" with 0 after any other result. */
    const char *line;
    size_t line_len;
    tw__buf held;    /* a line cut by the end of the read buffer, gathered */
    char *in;        /* the read buffer (TW__LINE_READ_BYTES), made at the first read */
    size_t pos, end; /* unread bytes: in[pos, end) */
    bool is_eof;
    /* Optional (NULL after init): where the bytes of a line over max_line go,
     * in order, as they are read (what was held, then the rest), so that the
     * caller can keep the line whole elsewhere; TW__LINE_TOO_LONG comes after
     * the last piece. Returning false stops the pieces of that line. */
    bool (*spill)(void *arg, const void *bytes, size_t len);
    void *spill_arg;
} tw__line_reader;

/* What tw__line_reader_next returns. */
enum {
    TW__LINE_END = 0,       /* no more lines */
    TW__LINE_OK = 1,        /* lr->line / lr->line_len: the line (any bytes but "\n") */
    TW__LINE_TOO_LONG = -1, /* longer than max_line: skipped, lr->line empty */
    TW__LINE_IO = -2,       /* a read error (errno says which) */
    TW__LINE_NOMEM = -3
};

void tw__line_reader_init(tw__line_reader *lr, FILE *stream, size_t max_line);
void tw__line_reader_free(tw__line_reader *lr);
/* The next line; a last line without "\n" counts. A "\r" before the "\n"
 * stays in the line (callers that strip it do so). */
int tw__line_reader_next(tw__line_reader *lr);

#endif /* TW_WIRE_CORE_LINE_READER_H */
