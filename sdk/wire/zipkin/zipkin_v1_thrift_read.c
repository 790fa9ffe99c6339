/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v1_thrift_read.c: `--from zipkin-v1-thrift`, Zipkin v1
 * Thrift spans (TBinaryProtocol, wire/zipkin/zipkin_v1_thrift.h) in the two forms
 * they are stored in (docs/bridge.md). First stage of the
 * convert flow (bridge/convert.h): each decoded Span goes to
 * wire/zipkin/zipkin_v1.c, which emits one model span per host. Every span a
 * record holds is emitted (Zipkin's Scribe consumer keeps only the first).
 *
 * The form is chosen per input by its first byte:
 *
 *  - 12 (the STRUCT element type of a list header): raw binary, the body of
 *    Zipkin's POST /api/v1/spans: list<Span>, possibly several lists one
 *    after the other. Streamed span by span from a buffer refilled from
 *    the FILE (a span may be up to MAX_SPAN_BYTES). A malformed or
 *    truncated span is rejected with its offset and the input ends there
 *    (a binary stream has no point to resume from). No line numbers:
 *    messages name byte offsets ("list 1, span 3 at byte 2048: ...";
 *    offsets inside the reason are from the span's first byte).
 *
 *  - anything else: Scribe log text, one entry per line: the base64 of one
 *    Thrift Span (or of a list<Span>, whose spans are all emitted), either
 *    bare or prefixed by its Scribe category and a tab ("zipkin\t<base64>").
 *    Entries whose category is not opts->scribe_category (default
 *    "zipkin") are skipped and counted in one warning per input; bare
 *    entries are kept. Trailing blanks and "\r" are ignored; blank lines
 *    are skipped.
 *    MIME-wrapped base64 (Finagle's Scribe writer breaks a span's base64
 *    into lines): a record continues on the next line when (1) its Thrift
 *    bytes so far end inside the span, (2) its last line carried exactly
 *    76 (MIME) or 64 (PEM) base64 characters, without padding, and (3) the
 *    next line is non-blank, has no category prefix and is base64. A line
 *    that ends a record any other way while its span is incomplete makes
 *    that record a reject ("truncated"); the line after it starts a new
 *    record.
 *    Bad base64, a malformed or truncated span, or bytes after the span
 *    reject the record as "file:line: reason" with the record's line(s)
 *    as its raw bytes.
 *
 * Memory: raw form, one buffer of at most MAX_SPAN_BYTES + a read chunk;
 * Scribe form, one line (at most MAX_LINE_BYTES) and one record. Locking:
 * none.
 */
#include "wire/core/error.h"
#include "wire/core/input.h"
#include "wire/core/json_stream.h"
#include "wire/formats.h"

#include <stdlib.h>
#include <string.h>

#include "wire/zipkin/zipkin_v1.h"
#include "wire/core/json_common.h"

#define CHUNK_BYTES ((size_t)64 * 1024)
#define MAX_SPAN_BYTES ((size_t)16 * 1024 * 1024)
#define MAX_LINE_BYTES ((size_t)16 * 1024 * 1024)
#define DEFAULT_CATEGORY "zipkin"

/* A growable byte buffer (malloc: growth can fail without aborting). */
typedef struct bytes {
    uint8_t *data;
    size_t len, cap;
} bytes;

static bool bytes_reserve(bytes *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len)
        return false;
    size_t want = b->len + extra;
    if (want <= b->cap)
        return true;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap < want)
        ncap = ncap > SIZE_MAX / 2 ? want : ncap * 2;
    uint8_t *fresh = realloc(b->data, ncap);
    if (!fresh)
        return false;
    b->data = fresh;
    b->cap = ncap;
    return true;
}

static bool bytes_append(bytes *b, const void *data, size_t len)
{
    if (!bytes_reserve(b, len))
        return false;
    if (len)
        memcpy(b->data + b->len, data, len);
    b->len += len;
    return true;
}

/* ---- raw list<Span> ------------------------------------------------------------------------- */

typedef struct raw_reader {
    FILE *stream;
    tw__wire_input *in;
    bytes buf;
    size_t pos;              /* next unread byte in buf */
    unsigned long long base; /* file offset of buf.data[0] */
    bool is_eof;
    tw__zipkin_v1_span *span;
    tw__zipkin_v1_procs *procs; /* NULL: each span's process is built anew */
} raw_reader;

/* Reads more bytes, keeping buf[pos..]; false on a read error. */
static bool raw_fill(raw_reader *r)
{
    if (r->pos) {
        memmove(r->buf.data, r->buf.data + r->pos, r->buf.len - r->pos);
        r->buf.len -= r->pos;
        r->base += r->pos;
        r->pos = 0;
    }
    if (r->is_eof)
        return true;
    size_t room = r->buf.len < CHUNK_BYTES ? CHUNK_BYTES : r->buf.len; /* doubles */
    if (!bytes_reserve(&r->buf, room))
        return false;
    size_t n = fread(r->buf.data + r->buf.len, 1, r->buf.cap - r->buf.len, r->stream);
    r->buf.len += n;
    if (n == 0) {
        if (ferror(r->stream))
            return false;
        r->is_eof = true;
    }
    return true;
}

static tw_status read_raw(raw_reader *r, tw_error **err)
{
    tw__wire_input *in = r->in;
    char why[256];
    size_t list_no = 0;
    if (!raw_fill(r)) /* also gives buf.data a non-NULL value */
        goto io_error;
    for (;;) {
        /* A list header (5 bytes), or the end. Its count is not checked
         * against the bytes buffered: that would read the whole list into
         * the buffer first (a 5,000,000-span file took 8 MiB more RSS). */
        uint32_t count = 0;
        size_t size = 0;
        tw__thrift_result d;
        for (;;) {
            d = tw__zipkin_thrift_list_header(r->buf.data + r->pos, r->buf.len - r->pos, &count,
                                              &size, why, sizeof why);
            if (d != TW__THRIFT_SHORT || r->is_eof)
                break;
            if (!raw_fill(r))
                goto io_error;
        }
        if (r->pos == r->buf.len && r->is_eof)
            return TW_OK;
        list_no++;
        if (d != TW__THRIFT_OK) {
            bool go_on = tw__wire_reject(in, 0, r->buf.data + r->pos, r->buf.len - r->pos,
                                         "list %zu at byte %llu: not a list<Span> header (%s)",
                                         list_no, r->base + r->pos, why);
            return go_on ? TW_OK : TW_E_STATE;
        }
        r->pos += size;
        for (uint32_t k = 1; k <= count; k++) {
            for (;;) {
                d = tw__zipkin_thrift_decode_span(r->buf.data + r->pos, r->buf.len - r->pos,
                                                  r->span, &size, why, sizeof why);
                if (d != TW__THRIFT_SHORT || r->is_eof || r->buf.len - r->pos >= MAX_SPAN_BYTES)
                    break;
                if (!raw_fill(r))
                    goto io_error;
            }
            const uint8_t *at = r->buf.data + r->pos;
            size_t left = r->buf.len - r->pos;
            unsigned long long offset = r->base + r->pos;
            if (d == TW__THRIFT_NOMEM) {
                tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
                return TW_E_NOMEM;
            }
            if (d != TW__THRIFT_OK) {
                bool go_on;
                if (d == TW__THRIFT_SHORT && !r->is_eof)
                    go_on = tw__wire_reject(in, 0, at, left,
                                            "list %zu, span %u at byte %llu: larger than %zu bytes "
                                            "(or a bad length)",
                                            list_no, k, offset, MAX_SPAN_BYTES);
                else
                    go_on = tw__wire_reject(
                        in, 0, at, left, "list %zu, span %u of %u at byte %llu: %s%s", list_no, k,
                        count, offset, d == TW__THRIFT_SHORT ? "truncated: " : "", why);
                return go_on ? TW_OK : TW_E_STATE;
            }
            /* Not cleared here: the next decode clears it first (twice was
             * a measurable share of a span's decoding), the end of the
             * input after the last. */
            bool go_on = tw__zipkin_v1_emit_with(in, 0, r->span, at, size, r->procs);
            r->pos += size;
            if (!go_on)
                return TW_E_STATE;
        }
    }
io_error:
    tw__set_error(err, TW_E_IO, "%s: read error", in->name);
    return TW_E_IO;
}

/* ---- Scribe lines --------------------------------------------------------------------------- */

typedef struct scribe_reader {
    tw__wire_input *in;
    const char *category;
    tw__zipkin_v1_span *span;
    tw__zipkin_v1_procs *procs; /* NULL: each span's process is built anew */
    bytes record;               /* decoded Thrift bytes of the record being read */
    bytes raw;                  /* its lines, "\n"-joined, for rejects */
    size_t record_line;         /* line of its first line; 0: no record pending */
    size_t skipped;             /* entries of other categories */
    bool is_nomem;
} scribe_reader;

static bool is_base64_char(unsigned char ch)
{
    return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
           ch == '+' || ch == '/' || ch == '-' || ch == '_' || ch == '=';
}

static bool all_base64(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (!is_base64_char((unsigned char)text[i]))
            return false;
    }
    return len > 0;
}

/* The size of the Thrift value the record holds: a Span struct, or (first
 * byte 12, which no Span field starts with) a list<Span>. */
static tw__thrift_result measure_record(const uint8_t *data, size_t len, size_t *size, char *why,
                                        size_t why_size)
{
    if (len == 0 || data[0] != 12)
        return tw__zipkin_thrift_measure_span(data, len, size, why, why_size);
    uint32_t count;
    size_t pos;
    tw__thrift_result d = tw__zipkin_thrift_list_begin(data, len, &count, &pos, why, why_size);
    for (uint32_t k = 0; d == TW__THRIFT_OK && k < count; k++) {
        size_t one;
        d = tw__zipkin_thrift_measure_span(data + pos, len - pos, &one, why, why_size);
        pos += one;
    }
    if (d == TW__THRIFT_OK)
        *size = pos;
    return d;
}

static void drop_record(scribe_reader *s)
{
    s->record.len = 0;
    s->raw.len = 0;
    s->record_line = 0;
}

/* Rejects the pending record; false when the run must stop. */
static bool reject_record(scribe_reader *s, const char *prefix, const char *detail)
{
    bool go_on =
        tw__wire_reject(s->in, s->record_line, s->raw.data, s->raw.len, "%s%s", prefix, detail);
    drop_record(s);
    return go_on;
}

/* Emits every span of the complete record; false when the run must stop. */
static bool emit_record(scribe_reader *s)
{
    const uint8_t *data = s->record.data;
    size_t len = s->record.len, pos = 0, size;
    uint32_t count = 1;
    char why[256];
    bool go_on = true;
    if (data[0] == 12 &&
        tw__zipkin_thrift_list_begin(data, len, &count, &pos, why, sizeof why) != TW__THRIFT_OK)
        return reject_record(s, "", why); /* measure_record accepted it: cannot happen */
    for (uint32_t k = 0; go_on && k < count; k++) {
        tw__thrift_result d =
            tw__zipkin_thrift_decode_span(data + pos, len - pos, s->span, &size, why, sizeof why);
        if (d != TW__THRIFT_OK) {
            if (d == TW__THRIFT_NOMEM)
                s->is_nomem = true;
            return reject_record(s, "", why);
        }
        go_on = tw__zipkin_v1_emit_with(s->in, s->record_line, s->span, s->raw.data, s->raw.len,
                                        s->procs);
        tw__zipkin_v1_span_clear(s->span);
        pos += size;
    }
    drop_record(s);
    return go_on;
}

/* Appends one line's base64 to the record and decides what follows.
 * Returns false when the run must stop. */
static bool add_chunk(scribe_reader *s, const char *b64, size_t b64_len, const char *line,
                      size_t line_len, size_t line_no)
{
    if (!s->record_line)
        s->record_line = line_no;
    else if (!bytes_append(&s->raw, "\n", 1))
        s->is_nomem = true;
    if (!bytes_append(&s->raw, line, line_len) || !bytes_reserve(&s->record, b64_len / 4 * 3 + 3))
        s->is_nomem = true;
    if (s->is_nomem)
        return reject_record(s, "", "out of memory");
    size_t n;
    if (!tw__base64_decode_into(b64, b64_len, false, s->record.data + s->record.len, &n))
        return reject_record(s, "", "not base64 (a Scribe entry is one base64 Thrift Span)");
    s->record.len += n;
    if (s->record.len == 0)
        return reject_record(s, "", "empty entry");
    char why[256];
    size_t size = 0;
    tw__thrift_result d = measure_record(s->record.data, s->record.len, &size, why, sizeof why);
    if (d == TW__THRIFT_OK) {
        if (size == s->record.len)
            return emit_record(s);
        char detail[96];
        snprintf(detail, sizeof detail, "%zu bytes after the end of the span",
                 s->record.len - size);
        return reject_record(s, "", detail);
    }
    if (d == TW__THRIFT_SHORT) {
        bool can_wrap = (b64_len == 76 || b64_len == 64) && b64[b64_len - 1] != '=';
        if (can_wrap)
            return true; /* wait for a continuation line */
        return reject_record(s, "truncated Thrift span: ", why);
    }
    return reject_record(s, "malformed Thrift span: ", why);
}

static bool scribe_line(scribe_reader *s, char *line, size_t len, size_t line_no)
{
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' || line[len - 1] == '\t'))
        len--;
    const char *tab = len ? memchr(line, '\t', len) : NULL;
    if (s->record_line) {
        if (len && !tab && all_base64(line, len))
            return add_chunk(s, line, len, line, len, line_no);
        if (!reject_record(s, "truncated Thrift span: ", "the base64 ends before the span does"))
            return false;
    }
    if (len == 0)
        return true;
    const char *b64 = line;
    size_t b64_len = len;
    if (tab) {
        size_t cat_len = (size_t)(tab - line);
        if (cat_len != strlen(s->category) || memcmp(line, s->category, cat_len) != 0) {
            s->skipped++;
            return true;
        }
        b64 = tab + 1;
        b64_len = len - cat_len - 1;
    }
    return add_chunk(s, b64, b64_len, line, len, line_no);
}

static tw_status read_scribe(FILE *stream, tw__wire_input *in, tw__zipkin_v1_span *span,
                             tw_error **err)
{
    scribe_reader s = {
        .in = in, .span = span, .procs = tw__zipkin_v1_procs_new(), .category = DEFAULT_CATEGORY};
    if (in->opts && in->opts->scribe_category)
        s.category = in->opts->scribe_category;
    bytes line = {0};
    char *chunk = malloc(CHUNK_BYTES);
    tw_status status = TW_OK;
    size_t line_no = 0;
    /* An oversized line's bytes go on to in->reject_part as they are read,
     * when it is set (so that --rejects keeps the line whole). */
    bool is_oversized = false, is_spilling = false, go_on = true;
    if (!chunk) {
        status = TW_E_NOMEM;
        goto done;
    }
    for (;;) {
        size_t n = fread(chunk, 1, CHUNK_BYTES, stream);
        if (n == 0) {
            if (ferror(stream)) {
                tw__set_error(err, TW_E_IO, "%s: read error", in->name);
                status = TW_E_IO;
                goto done;
            }
            break;
        }
        size_t start = 0;
        while (start < n) {
            const char *nl = memchr(chunk + start, '\n', n - start);
            size_t piece = nl ? (size_t)(nl - (chunk + start)) : n - start;
            if (!is_oversized) {
                if (line.len + piece > MAX_LINE_BYTES) {
                    is_oversized = true;
                    is_spilling = in->reject_part && in->reject_part(in, line.data, line.len) &&
                                  in->reject_part(in, chunk + start, piece);
                    if (in->reject_part)
                        line.len = 0; /* handed on: the reject carries no bytes */
                } else if (!bytes_append(&line, chunk + start, piece)) {
                    status = TW_E_NOMEM;
                    goto done;
                }
            } else if (is_spilling) {
                is_spilling = in->reject_part(in, chunk + start, piece);
            }
            start += piece + (nl ? 1 : 0);
            if (!nl)
                break;
            line_no++;
            if (is_oversized) {
                go_on = tw__wire_reject(in, line_no, line.data, line.len,
                                        "line longer than %zu bytes", MAX_LINE_BYTES);
                if (go_on && s.record_line)
                    go_on = reject_record(
                        &s, "truncated Thrift span: ", "the base64 ends before the span does");
            } else {
                go_on = scribe_line(&s, (char *)line.data, line.len, line_no);
            }
            line.len = 0;
            is_oversized = is_spilling = false;
            if (s.is_nomem)
                status = TW_E_NOMEM;
            if (!go_on || s.is_nomem)
                goto done;
        }
    }
    if (line.len || is_oversized) { /* a last line without "\n" */
        line_no++;
        go_on = is_oversized ? tw__wire_reject(in, line_no, line.data, line.len,
                                               "line longer than %zu bytes", MAX_LINE_BYTES)
                             : scribe_line(&s, (char *)line.data, line.len, line_no);
    }
    if (go_on && s.record_line)
        go_on = reject_record(&s, "truncated Thrift span: ", "the input ends before the span does");
done:
    if (status == TW_OK && !go_on)
        status = TW_E_STATE;
    if (status == TW_E_NOMEM)
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
    if (s.skipped && status != TW_E_NOMEM)
        tw__wire_warn(in, 0, "%zu Scribe entr%s of categories other than '%s' skipped", s.skipped,
                      s.skipped == 1 ? "y" : "ies", s.category);
    free(chunk);
    free(line.data);
    free(s.record.data);
    free(s.raw.data);
    tw__zipkin_v1_procs_free(s.procs);
    return status;
}

/* ---- the reader ----------------------------------------------------------------------------- */

static tw_status read_zipkin_v1_thrift(FILE *stream, tw__wire_input *in, tw_error **err)
{
    int first = getc(stream);
    if (first == EOF) {
        if (ferror(stream)) {
            tw__set_error(err, TW_E_IO, "%s: read error", in->name);
            return TW_E_IO;
        }
        return TW_OK;
    }
    if (ungetc(first, stream) == EOF) {
        tw__set_error(err, TW_E_IO, "%s: read error", in->name);
        return TW_E_IO;
    }
    tw__zipkin_v1_span *span = malloc(sizeof *span);
    if (!span) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
        return TW_E_NOMEM;
    }
    tw__zipkin_v1_span_init(span);
    tw_status status;
    if (first == 12) {
        /* Without the memo (no memory for it) the processes are built per span. */
        raw_reader r = {
            .stream = stream, .in = in, .span = span, .procs = tw__zipkin_v1_procs_new()};
        status = read_raw(&r, err);
        tw__zipkin_v1_procs_free(r.procs);
        free(r.buf.data);
    } else {
        status = read_scribe(stream, in, span, err);
    }
    tw__zipkin_v1_span_clear(span);
    free(span);
    return status;
}

/* ---- detection ------------------------------------------------------------------------------ */

/* Whether three bytes could start a Span struct: a field header of a Span
 * field's type (i64, string, list, bool) and id 1..12. */
static bool span_start(const uint8_t *b)
{
    return (b[0] == 10 || b[0] == 11 || b[0] == 15 || b[0] == 2) && b[1] == 0 && b[2] >= 1 &&
           b[2] <= 12;
}

static int sniff_zipkin_v1_thrift(const uint8_t *head, size_t len)
{
    if (len >= 5 && head[0] == 12 && head[1] < 0x80) {
        /* A list<Span> header; the first span (if any) must look like one. */
        uint32_t count =
            (uint32_t)head[1] << 24 | (uint32_t)head[2] << 16 | (uint32_t)head[3] << 8 | head[4];
        if (count == 0)
            return len == 5 ? 60 : 0;
        if (len >= 8 && !span_start(head + 5))
            return 0;
        /* A jaeger.thrift Batch starts 0c 00 01 (its Process field), which
         * reads as a list of 65536 or more: real bodies hold far fewer. */
        return count < 65536 ? 90 : 20;
    }
    /* A Scribe line: optional "category\t", then base64 of a Span. */
    size_t i = 0, end = 0;
    while (end < len && head[end] != '\n' && head[end] != '\r')
        end++;
    for (size_t j = 0; j < end; j++) {
        if (head[j] == '\t') {
            i = j + 1;
            break;
        }
    }
    if (end - i < 8 || !all_base64((const char *)head + i, end - i))
        return 0;
    uint8_t first[6];
    size_t n;
    if (!tw__base64_decode_into((const char *)head + i, 8, false, first, &n) || n < 3)
        return 0;
    if (span_start(first) || (first[0] == 12 && first[1] < 0x80))
        return 85;
    return 0;
}

const tw__wire_decoder tw__zipkin_v1_thrift_decoder = {
    .name = "zipkin-v1-thrift",
    .summary = "Zipkin v1 Thrift spans: a binary list<Span> (/api/v1/spans body) or Scribe "
               "log lines (base64, category filter, MIME-wrapped)",
    .read = read_zipkin_v1_thrift,
    .sniff = sniff_zipkin_v1_thrift,
};
