/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_proto_read.c: the otlp-proto decoder of the format
 * registry (`tracewire convert --from otlp-proto`, the agent's OTLP/HTTP
 * protobuf bodies): one ExportTraceServiceRequest (the body of POST
 * /v1/traces; TracesData is the same bytes), or a sequence of them each
 * preceded by a 4-byte big-endian length (the OpenTelemetry Collector's
 * file exporter, format proto), told apart by the first byte (0: a
 * length). The request is read one ResourceSpans at a time (at most 64 MiB
 * each) and decoded by otlp_proto_decode.c, so memory follows the largest
 * ResourceSpans, not the input.
 *
 * Binary input has no lines: rejects and warnings name the byte offset in
 * their reason. A top level that is not protobuf (a bad tag or length) is
 * rejected from that byte on and the rest of the input (or of its frame)
 * is skipped: there is no point to resume at. Single-threaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/error.h"
#include "wire/core/pb_stream.h"
#include "wire/core/pb_write.h" /* wire types */
#include "wire/formats.h"
#include "wire/otlp/otlp_proto.h"

#define MAX_RESOURCE_SPANS_BYTES ((uint64_t)64 << 20)

static tw_status io_error(tw__wire_input *in, tw_error **err)
{
    tw__set_error(err, TW_E_IO, "%s: read error: %s", in->name, strerror(errno));
    return TW_E_IO;
}

typedef struct otlp_reader {
    tw__wire_input *in;
    tw__buf buf;
    size_t index; /* resource_spans read so far */
} otlp_reader;

/* Each span enters the model here: tw__wire_emit checks its times and
 * rejects it alone, with its own Span message, when they do not fit. */
static bool otlp_on_span(void *arg, tw__span_data *span, const tw__process *process,
                         const uint8_t *raw, size_t raw_len)
{
    otlp_reader *r = arg;
    return tw__wire_emit(r->in, 0, span, process, raw, raw_len);
}

static bool otlp_on_reject(void *arg, const char *where, const char *why, const uint8_t *raw,
                           size_t raw_len)
{
    otlp_reader *r = arg;
    return tw__wire_reject(r->in, 0, raw, raw_len, "%s: %s", where, why);
}

static void otlp_on_warn(void *arg, const char *where, const char *why)
{
    otlp_reader *r = arg;
    tw__wire_warn(r->in, 0, "%s: %s", where, why);
}

/* Reads the fields of one request: to the end of the input (@limit
 * UINT64_MAX) or @limit bytes (a frame). Returns TW_OK, TW_E_STATE (stop),
 * TW_E_NOMEM, TW_E_IO, or TW_E_MALFORMED when the rest cannot be read (it
 * was rejected already). */
static tw_status otlp_read_request(otlp_reader *r, tw__pb_stream *s, uint64_t limit)
{
    const tw__otlp_proto_sink sink = {otlp_on_span, otlp_on_reject, otlp_on_warn, r};
    uint64_t end = limit == UINT64_MAX ? UINT64_MAX : s->offset + limit;
    while (s->offset < end) {
        uint64_t at = s->offset, tag, len;
        bool is_eof, is_nomem = false;
        if (!tw__pb_stream_varint(s, &tag, &is_eof)) {
            if (is_eof && limit == UINT64_MAX && !s->is_io_error)
                return TW_OK;
            if (s->is_io_error)
                return TW_E_IO;
            return tw__wire_reject(r->in, 0, "", 0,
                                   "byte %" PRIu64 ": a field tag is cut short or not a varint; "
                                   "the rest of the %s is skipped",
                                   at, limit == UINT64_MAX ? "input" : "frame")
                       ? TW_E_MALFORMED
                       : TW_E_STATE;
        }
        unsigned wire_type = (unsigned)(tag & 7);
        if (tag >> 3 != 1 || wire_type != TW__PB_LEN) {
            uint64_t n;
            if (tag >> 3 != 0 && tw__pb_stream_skip_value(s, wire_type, &n) && s->offset <= end)
                continue; /* an unknown field: skipped, as protobuf says */
            if (s->is_io_error)
                return TW_E_IO;
            return tw__wire_reject(r->in, 0, "", 0,
                                   "byte %" PRIu64
                                   ": not an ExportTraceServiceRequest (field %" PRIu64
                                   ", wire type %u, cut short or not protobuf); the rest of the %s "
                                   "is skipped",
                                   at, tag >> 3, wire_type, limit == UINT64_MAX ? "input" : "frame")
                       ? TW_E_MALFORMED
                       : TW_E_STATE;
        }
        if (!tw__pb_stream_varint(s, &len, &is_eof) || len > end - s->offset) {
            if (s->is_io_error)
                return TW_E_IO;
            return tw__wire_reject(r->in, 0, "", 0,
                                   "resource_spans[%zu] (byte %" PRIu64
                                   "): its length is cut short or "
                                   "runs past the end of the %s, which is skipped",
                                   r->index, at, limit == UINT64_MAX ? "input" : "frame")
                       ? TW_E_MALFORMED
                       : TW_E_STATE;
        }
        uint64_t payload = s->offset;
        if (len > MAX_RESOURCE_SPANS_BYTES) {
            /* Its bytes go on to --rejects as they are skipped (when the
             * input takes them), before the reject that ends the record. */
            bool is_whole = r->in->reject_part
                                ? tw__pb_stream_skip_parts(s, len, tw__wire_reject_part, r->in)
                                : true;
            bool go_on =
                tw__wire_reject(r->in, 0, "", 0,
                                "resource_spans[%zu] (byte %" PRIu64 "): %" PRIu64
                                " bytes, over the %" PRIu64 " MiB one ResourceSpans may take",
                                r->index++, at, len, MAX_RESOURCE_SPANS_BYTES >> 20);
            if (!go_on)
                return TW_E_STATE;
            if (!(r->in->reject_part ? is_whole : tw__pb_stream_skip(s, len)))
                return s->is_io_error ? TW_E_IO : TW_E_MALFORMED;
            continue;
        }
        if (!tw__pb_stream_read(s, len, &r->buf, &is_nomem)) {
            if (is_nomem)
                return TW_E_NOMEM;
            if (s->is_io_error)
                return TW_E_IO;
            return tw__wire_reject(r->in, 0, r->buf.data, r->buf.len,
                                   "resource_spans[%zu] (byte %" PRIu64
                                   "): the input ends inside it",
                                   r->index, at)
                       ? TW_E_MALFORMED
                       : TW_E_STATE;
        }
        switch (tw__otlp_proto_decode_resource_spans(r->buf.data, r->buf.len, r->index++, payload,
                                                     &sink)) {
        case TW__OTLP_PROTO_OK:
            break;
        case TW__OTLP_PROTO_STOPPED:
            return TW_E_STATE;
        case TW__OTLP_PROTO_NOMEM:
            return TW_E_NOMEM;
        }
    }
    return TW_OK;
}

static tw_status read_otlp_proto(FILE *f, tw__wire_input *in, tw_error **err)
{
    otlp_reader r = {.in = in};
    tw__buf_init(&r.buf);
    tw__pb_stream s = {.f = f};
    int first = getc(f);
    if (first != EOF)
        ungetc(first, f);
    bool is_framed = first == 0;
    tw_status st = TW_OK;
    while (st == TW_OK && is_framed) {
        uint8_t len4[4];
        size_t got = fread(len4, 1, 4, f);
        s.offset += got;
        if (got == 0 && !ferror(f))
            break;
        if (got != 4) {
            st =
                ferror(f) ? TW_E_IO
                : tw__wire_reject(in, 0, len4, got,
                                  "byte %" PRIu64 ": the input ends inside a frame's 4-byte length",
                                  s.offset - got)
                    ? TW_OK
                    : TW_E_STATE;
            break;
        }
        uint64_t frame =
            (uint64_t)len4[0] << 24 | (uint64_t)len4[1] << 16 | (uint64_t)len4[2] << 8 | len4[3];
        uint64_t start = s.offset;
        st = otlp_read_request(&r, &s, frame);
        if (st == TW_E_MALFORMED && !s.is_io_error && s.offset <= start + frame &&
            tw__pb_stream_skip(&s, start + frame - s.offset))
            st = TW_OK; /* the frame's length says where the next one starts */
    }
    if (!is_framed)
        st = otlp_read_request(&r, &s, UINT64_MAX);
    tw__buf_free(&r.buf);
    if (st == TW_E_MALFORMED)
        st = TW_OK; /* rejected already */
    if (st == TW_E_IO || s.is_io_error)
        return io_error(in, err);
    if (st == TW_E_NOMEM)
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
    return st;
}

static int sniff_otlp_proto(const uint8_t *head, size_t len)
{
    bool is_framed;
    return tw__otlp_proto_sniff(head, len, &is_framed);
}

const tw__wire_decoder tw__otlp_proto_decoder = {
    .name = "otlp-proto",
    .summary = "OTLP protobuf: an ExportTraceServiceRequest (POST /v1/traces body), or the "
               "Collector file exporter's length-prefixed messages",
    .read = read_otlp_proto,
    .sniff = sniff_otlp_proto,
};
