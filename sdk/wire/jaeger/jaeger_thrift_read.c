/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_thrift_read.c: `--from jaeger-thrift`: a stream of
 * concatenated jaeger.thrift Batch structs (binary or compact protocol, as
 * the collector's /api/traces takes them and as `--to jaeger-thrift`
 * writes them), or of Agent.emitBatch messages (captured agent UDP
 * datagrams, compact or binary), or a mix of both.
 *
 * Where it sits: the first stage of `tracewire convert` (bridge/convert.h);
 * the decoding is the SDK's one Jaeger Thrift decoder
 * (wire/jaeger/jaeger_thrift_decode.h), so the bridge reads exactly what the SDK
 * writes. Each span is emitted with its batch's process.
 *
 * Streaming: a buffer holds the current record and what was read after it;
 * it starts at 64 KiB and grows (doubling) only while a record does not fit,
 * up to MAX_BATCH_BYTES: a record larger than that is rejected. The decoder
 * reads a record in one pass and, when the bytes end inside it, again from
 * its start once more are in: so the buffer is topped up before a record
 * whenever it holds fewer bytes than the largest record so far, and a
 * record is rarely decoded twice. The
 * protocol is detected on the stream's first record (a Batch starts with
 * its process field: 0x0C 0x00 0x01 binary, 0x1C compact; a message with
 * 0x80 0x01 / 0x82); later records are a message when they start like one,
 * else a Batch in the stream's protocol.
 *
 * Errors: Thrift has no record separator, so after a truncated or malformed
 * record nothing later can be found again: the record is rejected ("byte
 * offset N: ...", line 0, raw = the bytes read from its start) and the
 * stream ends there. "The bytes read" are those a reader that reads only
 * when a record does not fit would hold, whatever was topped up (see
 * malformed_raw_len), so that the reject does not depend on read-ahead. A well-formed Span struct
 * that is not a valid span (zero ids, an unknown tag type) is rejected alone (raw = its bytes) and
 * the batch goes on. Single-threaded.
 */
#include "wire/core/error.h"
#include "wire/core/input.h"
#include "wire/core/json_stream.h"
#include "wire/formats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wire/jaeger/jaeger_thrift_decode.h"

#define FIRST_BUFFER_BYTES ((size_t)64 * 1024)
#define MAX_BATCH_BYTES ((size_t)64 * 1024 * 1024)

typedef struct reader {
    FILE *stream;
    tw__wire_input *in;
    uint8_t *buf;
    size_t cap, start, end; /* the unread bytes are buf[start, end) */
    size_t base;            /* stream offset of buf[0] */
    bool is_eof, is_error;
    size_t batch_no;  /* 1-based, for messages */
    size_t record_at; /* stream offset of the current record */
    size_t largest;   /* bytes of the largest record decoded */
    /* Stream offset where a reader that fills only when a record does not
     * fit would have stopped reading (it may lie beyond the input's end). */
    size_t fit_end;
    bool stopped;
} reader;

/* Reads until the buffer is full or the stream ends, first moving the
 * unread bytes to the front; grows to @want bytes when asked. */
static bool fill(reader *r, size_t want)
{
    if (r->start > 0) {
        memmove(r->buf, r->buf + r->start, r->end - r->start);
        r->base += r->start;
        r->end -= r->start;
        r->start = 0;
    }
    if (want > r->cap) {
        uint8_t *bigger = realloc(r->buf, want);
        if (!bigger)
            return false;
        r->buf = bigger;
        r->cap = want;
    }
    while (r->end < r->cap && !r->is_eof) {
        size_t got = fread(r->buf + r->end, 1, r->cap - r->end, r->stream);
        r->end += got;
        if (got == 0) {
            r->is_eof = true;
            r->is_error = ferror(r->stream) != 0;
        }
    }
    return true;
}

static bool on_span(void *user_data, tw__span_data *span, const tw__process *process)
{
    reader *r = user_data;
    if (!r->in->emit(r->in, span, process)) {
        r->stopped = true;
        return false;
    }
    return true;
}

static bool on_bad_span(void *user_data, size_t index, size_t offset, size_t len, const char *why)
{
    reader *r = user_data;
    size_t at = r->record_at + offset;
    if (!tw__wire_reject(r->in, 0, r->buf + r->start + offset, len,
                         "byte offset %zu: span %zu of batch %zu (at byte %zu): %s", at, index + 1,
                         r->batch_no, r->record_at, why)) {
        r->stopped = true;
        return false;
    }
    return true;
}

static void on_warn(void *user_data, size_t index, const char *why)
{
    reader *r = user_data;
    tw__wire_warn(r->in, 0, "byte offset %zu: span %zu of batch %zu: %s", r->record_at, index + 1,
                  r->batch_no, why);
}

static size_t grown(size_t cap, size_t need)
{
    size_t want = cap * 2;
    if (want < need)
        want = need;
    return want > MAX_BATCH_BYTES ? MAX_BATCH_BYTES : want;
}

/* The bytes of the malformed record at r->start that the reject carries:
 * what a reader that fills (to the buffer's capacity, from the record that
 * does not fit) only when a record does not fit would hold. That reader
 * tried the record with the bytes up to fit_end first; when those end
 * before the fault, it filled, and held the record's capacity's worth.
 * Capacities grow alike in both (only when a record exceeds a full buffer),
 * so one fill here gives those bytes. SIZE_MAX: out of memory. */
static size_t malformed_raw_len(reader *r, tw__thrift_protocol protocol, bool is_message)
{
    size_t first = r->fit_end > r->record_at ? r->fit_end - r->record_at : 0;
    if (!r->is_eof && r->end - r->start < r->cap && !fill(r, 0))
        return SIZE_MAX;
    size_t avail = r->end - r->start;
    if (first == 0 || first >= avail)
        return avail;
    tw__thrift_result res = tw__jaeger_decode(r->buf + r->start, first, protocol, is_message, NULL,
                                              NULL, NULL, NULL, NULL, 0);
    return res == TW__THRIFT_MALFORMED ? first : avail;
}

static tw_status read_jaeger_thrift(FILE *stream, tw__wire_input *in, tw_error **err)
{
    reader r = {.stream = stream, .in = in};
    r.buf = malloc(FIRST_BUFFER_BYTES);
    if (!r.buf) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
        return TW_E_NOMEM;
    }
    r.cap = FIRST_BUFFER_BYTES;
    const tw__jaeger_sink sink = {on_span, on_bad_span, on_warn, &r, in};
    bool has_protocol = false;
    tw__thrift_protocol stream_protocol = TW__THRIFT_BINARY;
    tw_status rc = TW_OK;
    bool go_on = true;

    while (go_on) {
        if (r.start == r.end) {
            if (r.is_eof)
                break;
            if (!fill(&r, 0))
                goto nomem;
            continue;
        }
        const uint8_t *rec = r.buf + r.start;
        size_t avail = r.end - r.start;
        if (avail < r.largest && !r.is_eof) {
            if (!fill(&r, 0))
                goto nomem;
            continue;
        }
        r.record_at = r.base + r.start;
        tw__thrift_protocol protocol;
        bool is_message;
        int kind = tw__jaeger_detect(rec, avail, &protocol, &is_message);
        if (kind < 0 && !r.is_eof) {
            if (!fill(&r, avail < r.cap ? 0 : grown(r.cap, avail + 16)))
                goto nomem;
            continue;
        }
        if (kind < 0) {
            go_on = tw__wire_reject(in, 0, rec, avail,
                                    "byte offset %zu: the input ends inside a record header (%zu "
                                    "bytes)",
                                    r.record_at, avail);
            break;
        }
        if (kind == 0) {
            if (has_protocol) {
                protocol = stream_protocol;
                is_message = false;
            } else {
                go_on =
                    tw__wire_reject(in, 0, rec, avail,
                                    "byte offset %zu: not a Jaeger Thrift Batch or emitBatch "
                                    "message (first byte 0x%02x); the rest of the input is skipped",
                                    r.record_at, rec[0]);
                break;
            }
        }
        if (!has_protocol) {
            has_protocol = true;
            stream_protocol = protocol;
        }
        r.batch_no++;
        tw__jaeger_record info;
        size_t need = 0, err_at = 0;
        char why[256];
        tw__thrift_result res = tw__jaeger_decode(rec, avail, protocol, is_message, &sink, &info,
                                                  &need, &err_at, why, sizeof why);
        switch (res) {
        case TW__THRIFT_OK:
            /* The fill-when-needed reader filled from here to its capacity
             * unless the record was within what it held. */
            if (r.fit_end < r.record_at + info.size)
                r.fit_end = r.record_at + r.cap;
            r.start += info.size;
            if (info.size > r.largest)
                r.largest = info.size;
            continue;
        case TW__THRIFT_STOPPED:
            go_on = false;
            continue;
        case TW__THRIFT_NOMEM:
            goto nomem;
        case TW__THRIFT_SHORT:
            r.batch_no--; /* read again once more bytes are in */
            if (need > MAX_BATCH_BYTES) {
                go_on = tw__wire_reject(in, 0, rec, avail,
                                        "byte offset %zu: batch %zu needs more than %zu MiB (the "
                                        "limit); the rest of the input is skipped",
                                        r.record_at, r.batch_no + 1, MAX_BATCH_BYTES >> 20);
                go_on = false;
                continue;
            }
            if (r.is_eof) {
                go_on = tw__wire_reject(in, 0, rec, avail,
                                        "byte offset %zu: batch %zu is truncated: the input ends "
                                        "after %zu of its bytes",
                                        r.record_at, r.batch_no + 1, avail);
                go_on = false;
                continue;
            }
            if (!fill(&r, avail < r.cap ? 0 : grown(r.cap, need)))
                goto nomem;
            continue;
        case TW__THRIFT_MALFORMED:
            avail = malformed_raw_len(&r, protocol, is_message);
            if (avail == SIZE_MAX)
                goto nomem;
            tw__wire_reject(
                in, 0, r.buf + r.start, avail,
                "byte offset %zu: batch %zu (at byte %zu) is malformed: %s; the rest of "
                "the input is skipped",
                r.record_at + err_at, r.batch_no, r.record_at, why);
            go_on = false;
            continue;
        }
    }
    if (r.stopped)
        rc = TW_E_STATE;
    else if (r.is_error) {
        tw__set_error(err, TW_E_IO, "%s: read error: %s", in->name, strerror(errno));
        rc = TW_E_IO;
    }
    free(r.buf);
    return rc;
nomem:
    free(r.buf);
    tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
    return TW_E_NOMEM;
}

/* A binary Batch starts with its process field (STRUCT, id 1), a compact
 * one with 0x1C; emitBatch messages with their protocol's header. */
static int sniff_jaeger_thrift(const uint8_t *head, size_t len)
{
    tw__thrift_protocol protocol;
    bool is_message;
    int kind = tw__jaeger_detect(head, len, &protocol, &is_message);
    if (kind <= 0)
        return 0;
    if (is_message) /* the header names emitBatch: the decoder checks it */
        return 90;
    /* A Batch's process struct starts with serviceName (STRING, id 1). */
    if (protocol == TW__THRIFT_BINARY)
        return len >= 6 && head[3] == 11 && head[4] == 0 && head[5] == 1 ? 90 : 40;
    return len >= 2 && head[1] == 0x18 ? 80 : 20;
}

const tw__wire_decoder tw__jaeger_thrift_decoder = {
    .name = "jaeger-thrift",
    .summary = "Jaeger Thrift Batch structs or emitBatch messages (binary or compact)",
    .read = read_jaeger_thrift,
    .sniff = sniff_jaeger_thrift,
};
