/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/proto_formats.c: the `tracewire convert` formats of the protobuf
 * family, thin framings around the wire layer's codecs (sdk/wire/):
 *
 *   otlp-proto          in and out: OTLP protobuf, wire/otlp/otlp_proto.h.
 *                       Input: one ExportTraceServiceRequest (the body of
 *                       POST /v1/traces; TracesData is the same bytes), or a
 *                       sequence of them each preceded by a 4-byte big-endian
 *                       length (the OpenTelemetry Collector's file exporter,
 *                       format proto), told apart by the first byte (0: a
 *                       length). Read one ResourceSpans at a time (at most
 *                       64 MiB each), so memory follows the largest
 *                       ResourceSpans, not the input. Output: one
 *                       ExportTraceServiceRequest, written one ResourceSpans
 *                       per process at a time (spans gathered per process
 *                       up to 1 MiB, at most 32 MiB pending in all).
 *   zipkin-v2-proto     in and out: a Zipkin proto3 ListOfSpans (the body of
 *                       POST /api/v2/spans as application/x-protobuf),
 *                       wire/zipkin/zipkin_proto.h; read span by span (at
 *                       most 16 MiB each), decoded by the zipkin-v2-json
 *                       reader's rules.
 *   jaeger-api-v2-json  in: Jaeger api_v2 protobuf-JSON documents
 *                       (PostSpansRequest, Batch), wire/jaeger/api_v2_json.h,
 *                       then the jaeger-json reader's rules; one document at a
 *                       time (at most 32 MiB), one per line or concatenated.
 *
 * Binary inputs have no lines: rejects and warnings name the byte offset in
 * their reason. A top level that is not protobuf (a bad tag or length) is
 * rejected from that byte on and the rest of the input is skipped, as for
 * Thrift: there is no point to resume at. Single-threaded.
 */
#include "convert.h"

#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "sinks/jaeger_view.h"
#include "wire/core/pb_read.h"
#include "wire/core/pb_write.h"
#include "wire/jaeger/api_v2_json.h"
#include "wire/otlp/otlp_proto.h"
#include "wire/zipkin/zipkin_proto.h"

#define MAX_RESOURCE_SPANS_BYTES ((uint64_t)64 << 20)
#define MAX_ZIPKIN_SPAN_BYTES ((uint64_t)16 << 20)
#define MAX_API_V2_DOCUMENT_BYTES ((size_t)32 << 20)

/* ---- reading a binary stream -------------------------------------------------------------- */

typedef struct stream {
    FILE *f;
    uint64_t offset; /* bytes consumed so far */
    bool is_io_error;
} stream;

/* A varint; *is_eof when the stream ended before its first byte. */
static bool stream_varint(stream *s, uint64_t *v, bool *is_eof)
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

/* Reads @n bytes into @b (replaced). False on a short read. */
static bool stream_read(stream *s, uint64_t n, tw__buf *b, bool *is_nomem)
{
    tw__buf_reset(b);
    if (!tw__buf_reserve(b, (size_t)n + 1)) {
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

static bool stream_skip(stream *s, uint64_t n)
{
    char scratch[4096];
    while (n > 0) {
        size_t want = n < sizeof scratch ? (size_t)n : sizeof scratch;
        size_t got = fread(scratch, 1, want, s->f);
        s->offset += got;
        n -= got;
        if (got != want) {
            s->is_io_error = ferror(s->f) != 0;
            return false;
        }
    }
    return true;
}

/* Skips the value of a field of @wire_type; false when the input ends or
 * the wire type is not one protobuf has. */
static bool stream_skip_value(stream *s, unsigned wire_type, uint64_t *consumed)
{
    uint64_t start = s->offset, v;
    bool is_eof, ok;
    switch (wire_type) {
    case TW__PB_VARINT:
        ok = stream_varint(s, &v, &is_eof);
        break;
    case TW__PB_I64:
        ok = stream_skip(s, 8);
        break;
    case TW__PB_I32:
        ok = stream_skip(s, 4);
        break;
    case TW__PB_LEN:
        ok = stream_varint(s, &v, &is_eof) && stream_skip(s, v);
        break;
    default:
        ok = false;
    }
    *consumed = s->offset - start;
    return ok;
}

static tw_status io_error(twb_input *in, tw_error **err)
{
    tw__set_error(err, TW_E_IO, "%s: read error: %s", in->name, strerror(errno));
    return TW_E_IO;
}

/* ---- otlp-proto: reading -------------------------------------------------------------------- */

typedef struct otlp_reader {
    twb_input *in;
    tw__buf buf;
    size_t index; /* resource_spans read so far */
} otlp_reader;

static bool otlp_on_span(void *arg, tw__span_data *span, const tw__process *process)
{
    otlp_reader *r = arg;
    return r->in->emit(r->in, span, process);
}

static bool otlp_on_reject(void *arg, const char *where, const char *why, const uint8_t *raw,
                           size_t raw_len)
{
    otlp_reader *r = arg;
    return twb_reject(r->in, 0, raw, raw_len, "%s: %s", where, why);
}

static void otlp_on_warn(void *arg, const char *where, const char *why)
{
    otlp_reader *r = arg;
    twb_warn(r->in, 0, "%s: %s", where, why);
}

/* Reads the fields of one request: to the end of the input (@limit
 * UINT64_MAX) or @limit bytes (a frame). Returns TW_OK, TW_E_STATE (stop),
 * TW_E_NOMEM, TW_E_IO, or TW_E_MALFORMED when the rest cannot be read (it
 * was rejected already). */
static tw_status otlp_read_request(otlp_reader *r, stream *s, uint64_t limit)
{
    const tw__otlp_proto_sink sink = {otlp_on_span, otlp_on_reject, otlp_on_warn, r};
    uint64_t end = limit == UINT64_MAX ? UINT64_MAX : s->offset + limit;
    while (s->offset < end) {
        uint64_t at = s->offset, tag, len;
        bool is_eof, is_nomem = false;
        if (!stream_varint(s, &tag, &is_eof)) {
            if (is_eof && limit == UINT64_MAX && !s->is_io_error)
                return TW_OK;
            if (s->is_io_error)
                return TW_E_IO;
            return twb_reject(r->in, 0, "", 0,
                              "byte %" PRIu64 ": a field tag is cut short or not a varint; "
                              "the rest of the %s is skipped",
                              at, limit == UINT64_MAX ? "input" : "frame")
                       ? TW_E_MALFORMED
                       : TW_E_STATE;
        }
        unsigned wire_type = (unsigned)(tag & 7);
        if (tag >> 3 != 1 || wire_type != TW__PB_LEN) {
            uint64_t n;
            if (tag >> 3 != 0 && stream_skip_value(s, wire_type, &n) && s->offset <= end)
                continue; /* an unknown field: skipped, as protobuf says */
            if (s->is_io_error)
                return TW_E_IO;
            return twb_reject(r->in, 0, "", 0,
                              "byte %" PRIu64 ": not an ExportTraceServiceRequest (field %" PRIu64
                              ", wire type %u, cut short or not protobuf); the rest of the %s "
                              "is skipped",
                              at, tag >> 3, wire_type, limit == UINT64_MAX ? "input" : "frame")
                       ? TW_E_MALFORMED
                       : TW_E_STATE;
        }
        if (!stream_varint(s, &len, &is_eof) || len > end - s->offset) {
            if (s->is_io_error)
                return TW_E_IO;
            return twb_reject(r->in, 0, "", 0,
                              "resource_spans[%zu] (byte %" PRIu64 "): its length is cut short or "
                              "runs past the end of the %s, which is skipped",
                              r->index, at, limit == UINT64_MAX ? "input" : "frame")
                       ? TW_E_MALFORMED
                       : TW_E_STATE;
        }
        uint64_t payload = s->offset;
        if (len > MAX_RESOURCE_SPANS_BYTES) {
            bool go_on = twb_reject(r->in, 0, "", 0,
                                    "resource_spans[%zu] (byte %" PRIu64 "): %" PRIu64
                                    " bytes, over the %" PRIu64 " MiB one ResourceSpans may take",
                                    r->index++, at, len, MAX_RESOURCE_SPANS_BYTES >> 20);
            if (!go_on)
                return TW_E_STATE;
            if (!stream_skip(s, len))
                return s->is_io_error ? TW_E_IO : TW_E_MALFORMED;
            continue;
        }
        if (!stream_read(s, len, &r->buf, &is_nomem)) {
            if (is_nomem)
                return TW_E_NOMEM;
            if (s->is_io_error)
                return TW_E_IO;
            return twb_reject(r->in, 0, r->buf.data, r->buf.len,
                              "resource_spans[%zu] (byte %" PRIu64 "): the input ends inside it",
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

static tw_status read_otlp_proto(FILE *f, twb_input *in, tw_error **err)
{
    otlp_reader r = {.in = in};
    tw__buf_init(&r.buf);
    stream s = {.f = f};
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
            st = ferror(f) ? TW_E_IO
                 : twb_reject(in, 0, len4, got,
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
            stream_skip(&s, start + frame - s.offset))
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

const twb_reader twb_reader_otlp_proto = {
    .name = "otlp-proto",
    .summary = "OTLP protobuf: an ExportTraceServiceRequest (POST /v1/traces body), or the "
               "Collector file exporter's length-prefixed messages",
    .read = read_otlp_proto,
    .sniff = sniff_otlp_proto,
};

/* ---- otlp-proto: writing -------------------------------------------------------------------- */

#define OTLP_BATCH_BYTES                                                                           \
    ((size_t)1 << 20) /* a ResourceSpans is written at this many span bytes                        \
                       */
#define OTLP_PENDING_BYTES ((size_t)32 << 20) /* span bytes waiting in all: past it, all go */

typedef struct otlp_pending {
    tw__otlp_proto_envelope envelope;
    tw__buf spans;
} otlp_pending;

struct twb_writer {
    FILE *out;
    tw__buf buf;
    GHashTable *by_process; /* const tw__process* -> otlp_pending* (otlp-proto) */
    GPtrArray *pending;     /* the same, in order of first appearance (owns them) */
    size_t pending_bytes;
};

static void free_pending(void *p)
{
    otlp_pending *o = p;
    tw__otlp_proto_envelope_clear(&o->envelope);
    tw__buf_free(&o->spans);
    free(o);
}

static twb_writer *writer_new(FILE *out, const twb_options *opts, tw_error **err)
{
    (void)opts;
    twb_writer *w = calloc(1, sizeof *w);
    if (!w) {
        tw__set_error(err, TW_E_NOMEM, "out of memory");
        return NULL;
    }
    w->out = out;
    tw__buf_init(&w->buf);
    w->by_process = g_hash_table_new(NULL, NULL);
    w->pending = g_ptr_array_new_with_free_func(free_pending);
    return w;
}

static void writer_free(twb_writer *w)
{
    if (!w)
        return;
    tw__buf_free(&w->buf);
    g_hash_table_destroy(w->by_process);
    g_ptr_array_free(w->pending, TRUE);
    free(w);
}

static tw_status otlp_emit(twb_writer *w, otlp_pending *p, tw_error **err)
{
    if (p->spans.len == 0)
        return TW_OK;
    tw__buf_reset(&w->buf);
    if (!tw__otlp_proto_put_resource_spans_head(&p->envelope, p->spans.len, &w->buf)) {
        tw__set_error(err, TW_E_NOMEM, "out of memory while encoding");
        return TW_E_NOMEM;
    }
    tw_status st = twb_write_out(w->out, w->buf.data, w->buf.len, err);
    if (st == TW_OK)
        st = twb_write_out(w->out, p->spans.data, p->spans.len, err);
    w->pending_bytes -= p->spans.len;
    tw__buf_reset(&p->spans);
    return st;
}

static tw_status otlp_emit_all(twb_writer *w, tw_error **err)
{
    for (size_t i = 0; i < w->pending->len; i++) {
        tw_status st = otlp_emit(w, g_ptr_array_index(w->pending, i), err);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

static otlp_pending *otlp_pending_of(twb_writer *w, const tw__process *process)
{
    otlp_pending *p = g_hash_table_lookup(w->by_process, process);
    if (p)
        return p;
    p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    tw__buf_init(&p->spans);
    tw__process named;
    if (!tw__otlp_proto_envelope_init(&p->envelope,
                                      twb_process_named(process, TWB_OTLP_EMPTY_SERVICE, &named))) {
        free_pending(p);
        return NULL;
    }
    g_ptr_array_add(w->pending, p);
    g_hash_table_insert(w->by_process, (void *)process, p);
    return p;
}

static tw_status otlp_write(twb_writer *w, const twb_span *spans, size_t n, tw_error **err)
{
    for (size_t i = 0; i < n; i++) {
        otlp_pending *p = otlp_pending_of(w, spans[i].process);
        size_t before = p ? p->spans.len : 0;
        if (!p || !tw__otlp_proto_encode_span(spans[i].data, &p->spans)) {
            tw__set_error(err, TW_E_NOMEM, "out of memory while encoding");
            return TW_E_NOMEM;
        }
        w->pending_bytes += p->spans.len - before;
        tw_status st = TW_OK;
        if (p->spans.len >= OTLP_BATCH_BYTES)
            st = otlp_emit(w, p, err);
        else if (w->pending_bytes >= OTLP_PENDING_BYTES)
            st = otlp_emit_all(w, err);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

static tw_status otlp_finish(twb_writer *w, tw_error **err)
{
    tw_status st = otlp_emit_all(w, err);
    return st == TW_OK ? twb_flush_out(w->out, err) : st;
}

const twb_writer_vtable twb_writer_otlp_proto = {
    .name = "otlp-proto",
    .summary = "OTLP protobuf: one ExportTraceServiceRequest (the body of POST /v1/traces as "
               "application/x-protobuf)",
    .new_writer = writer_new,
    .write = otlp_write,
    .finish = otlp_finish,
    .free_writer = writer_free,
};

/* ---- zipkin-v2-proto ------------------------------------------------------------------------ */

typedef struct zipkin_warn_ctx {
    twb_input *in;
    size_t index;
} zipkin_warn_ctx;

static void zipkin_on_warn(void *arg, const char *why)
{
    zipkin_warn_ctx *z = arg;
    twb_warn(z->in, 0, "spans[%zu]: %s", z->index, why);
}

static tw_status read_zipkin_proto(FILE *f, twb_input *in, tw_error **err)
{
    stream s = {.f = f};
    tw__buf buf;
    tw__buf_init(&buf);
    tw__pb_arena arena;
    tw__pb_arena_init(&arena);
    zipkin_warn_ctx wc = {in, 0};
    tw_status st = TW_OK;
    while (st == TW_OK) {
        uint64_t at = s.offset, tag, len;
        bool is_eof, is_nomem = false;
        if (!stream_varint(&s, &tag, &is_eof)) {
            if (!is_eof && !s.is_io_error &&
                !twb_reject(in, 0, "", 0, "byte %" PRIu64 ": a field tag is cut short", at))
                st = TW_E_STATE;
            break;
        }
        if (tag != TW__PB_TAG(1, TW__PB_LEN)) {
            uint64_t n;
            if (tag >> 3 != 0 && tag >> 3 != 1 && stream_skip_value(&s, (unsigned)(tag & 7), &n))
                continue; /* an unknown field */
            if (!s.is_io_error && !twb_reject(in, 0, "", 0,
                                              "byte %" PRIu64 ": not a ListOfSpans (field %" PRIu64
                                              ", wire type %u); the rest of the input is skipped",
                                              at, tag >> 3, (unsigned)(tag & 7)))
                st = TW_E_STATE;
            break;
        }
        if (!stream_varint(&s, &len, &is_eof)) {
            if (!s.is_io_error &&
                !twb_reject(in, 0, "", 0, "spans[%zu] (byte %" PRIu64 "): its length is cut short",
                            wc.index, at))
                st = TW_E_STATE;
            break;
        }
        if (len > MAX_ZIPKIN_SPAN_BYTES) {
            if (!twb_reject(in, 0, "", 0,
                            "spans[%zu] (byte %" PRIu64 "): %" PRIu64
                            " bytes, over the 16 MiB one span may take",
                            wc.index++, at, len))
                st = TW_E_STATE;
            else if (!stream_skip(&s, len))
                break;
            continue;
        }
        uint64_t payload = s.offset;
        if (!stream_read(&s, len, &buf, &is_nomem)) {
            if (is_nomem)
                st = TW_E_NOMEM;
            else if (!s.is_io_error &&
                     !twb_reject(in, 0, buf.data, buf.len,
                                 "spans[%zu] (byte %" PRIu64 "): the input ends inside it",
                                 wc.index, at))
                st = TW_E_STATE;
            break;
        }
        char why[256];
        tw__pb_arena_reset(&arena);
        json_t *obj = tw__zipkin_proto_span_json(buf.data, buf.len, payload, &arena, zipkin_on_warn,
                                                 &wc, why, sizeof why, &is_nomem);
        bool go_on;
        if (obj)
            go_on = twb_zipkin_v2_emit_object(in, 0, obj, buf.data, buf.len, &is_nomem);
        else
            go_on = is_nomem || twb_reject(in, 0, buf.data, buf.len,
                                           "spans[%zu] (byte %" PRIu64 "): %s", wc.index, at, why);
        json_decref(obj);
        wc.index++;
        if (is_nomem)
            st = TW_E_NOMEM;
        else if (!go_on)
            st = TW_E_STATE;
    }
    tw__pb_arena_free(&arena);
    tw__buf_free(&buf);
    if (s.is_io_error)
        return io_error(in, err);
    if (st == TW_E_NOMEM)
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
    return st;
}

const twb_reader twb_reader_zipkin_v2_proto = {
    .name = "zipkin-v2-proto",
    .summary = "Zipkin v2 proto3: a ListOfSpans (POST /api/v2/spans as application/x-protobuf)",
    .read = read_zipkin_proto,
    .sniff = tw__zipkin_proto_sniff,
};

static tw_status zipkin_proto_write(twb_writer *w, const twb_span *spans, size_t n, tw_error **err)
{
    tw__buf_reset(&w->buf);
    for (size_t i = 0; i < n; i++) {
        if (!tw__zipkin_proto_encode_span(spans[i].data, spans[i].process, &w->buf)) {
            tw__set_error(err, TW_E_NOMEM, "out of memory while encoding");
            return TW_E_NOMEM;
        }
    }
    return twb_write_out(w->out, w->buf.data, w->buf.len, err);
}

static tw_status zipkin_proto_finish(twb_writer *w, tw_error **err)
{
    return twb_flush_out(w->out, err);
}

const twb_writer_vtable twb_writer_zipkin_v2_proto = {
    .name = "zipkin-v2-proto",
    .summary = "Zipkin v2 proto3: one ListOfSpans (the body of POST /api/v2/spans as "
               "application/x-protobuf)",
    .new_writer = writer_new,
    .write = zipkin_proto_write,
    .finish = zipkin_proto_finish,
    .free_writer = writer_free,
};

/* ---- jaeger-api-v2-json -----------------------------------------------------------------------
 */

typedef struct api_v2_reader {
    twb_input *in;
    size_t line_no;
} api_v2_reader;

static void api_v2_on_warn(void *arg, const char *where, const char *why)
{
    api_v2_reader *r = arg;
    twb_warn(r->in, r->line_no, "%s: %s", where, why);
}

static bool api_v2_on_reject(void *arg, const json_t *span, const char *where, const char *why)
{
    api_v2_reader *r = arg;
    char *raw = json_dumps(span, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    bool go_on =
        twb_reject(r->in, r->line_no, raw ? raw : "", raw ? strlen(raw) : 0, "%s: %s", where, why);
    free(raw);
    return go_on;
}

static tw_status api_v2_record(void *arg, json_t *doc, const char *rec, size_t len, size_t line_no,
                               const json_error_t *parse_error, tw_error **err)
{
    api_v2_reader *r = arg;
    r->line_no = line_no;
    if (!doc)
        return twb_reject(r->in, line_no, rec, len, "not valid JSON: %s", parse_error->text)
                   ? TW_OK
                   : TW_E_STATE;
    const tw__api_v2_sink sink = {api_v2_on_warn, api_v2_on_reject, r};
    json_t *query = NULL;
    char why[160];
    tw_status st = TW_OK;
    switch (tw__jaeger_api_v2_to_query_json(doc, &sink, &query, why, sizeof why)) {
    case TW__API_V2_OK:
        st = twb_jaeger_json_read_document(r->in, line_no, query, rec, len);
        break;
    case TW__API_V2_NOT_API_V2:
        st = twb_reject(r->in, line_no, rec, len, "%s", why) ? TW_OK : TW_E_STATE;
        break;
    case TW__API_V2_STOPPED:
        st = TW_E_STATE;
        break;
    case TW__API_V2_NOMEM:
        st = TW_E_NOMEM;
        break;
    }
    json_decref(query);
    if (st == TW_E_NOMEM)
        tw__set_error(err, TW_E_NOMEM, "%s:%zu: out of memory", r->in->name, line_no);
    return st;
}

static tw_status read_api_v2(FILE *f, twb_input *in, tw_error **err)
{
    api_v2_reader r = {.in = in};
    return twb_json_read_records(f, in, MAX_API_V2_DOCUMENT_BYTES, JSON_ALLOW_NUL, api_v2_record,
                                 &r, err);
}

const twb_reader twb_reader_jaeger_api_v2_json = {
    .name = "jaeger-api-v2-json",
    .summary = "Jaeger api_v2 protobuf-JSON (PostSpansRequest {batch}, Batch; base64 ids, "
               "RFC 3339 times)",
    .read = read_api_v2,
    .sniff = tw__jaeger_api_v2_sniff,
};
