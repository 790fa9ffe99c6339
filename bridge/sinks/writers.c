/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/sinks/writers.c: the `--to` writers of `tracewire convert`: one
 * generic writer over each document encoder of the format registry
 * (sdk/wire/formats.h, wire/core/output.h). The encoder turns each group of
 * spans the assembler hands over (a trace, or what one input record
 * produced) into bytes, framing and per-process batches included; this
 * file owns the file: it writes those bytes out, flushes at the end and
 * turns write errors into TW_E_IO naming the system's reason.
 *
 * The bytes collect in the writer's buffer and go to the stream in pieces
 * of WRITE_BYTES or more, so that an unbuffered stream (convert's output)
 * writes each piece with one system call and no copy into a stdio buffer.
 * What the writer was given reaches the stream even when the run stops
 * before finish (writer_free writes it), as a stdio buffer's bytes would.
 *
 * A span the output format cannot hold is left out by the encoder and
 * reported through opts->span_rejected (the pipeline counts and shows it);
 * the run goes on. Memory: WRITE_BYTES plus one group's bytes plus what the
 * encoder holds. Single-threaded.
 */
#include "convert.h"

#include <stdlib.h>

#define WRITE_BYTES ((size_t)256 << 10)

struct twb_writer {
    FILE *out;
    const tw__wire_encoder *enc;
    tw__doc_encoder *doc;
    tw__buf buf;
};

static twb_writer *writer_new(const tw__wire_encoder *enc, FILE *out, const twb_options *opts,
                              tw_error **err)
{
    twb_writer *w = calloc(1, sizeof *w);
    if (w) {
        w->out = out;
        w->enc = enc;
        w->doc = enc->create(opts, opts ? opts->span_rejected : NULL,
                             opts ? opts->span_rejected_data : NULL);
    }
    if (!w || !w->doc) {
        free(w);
        tw__set_error(err, TW_E_NOMEM, "out of memory");
        return NULL;
    }
    tw__buf_init(&w->buf);
    return w;
}

static void writer_free(twb_writer *w)
{
    if (!w)
        return;
    if (w->buf.len) /* best effort: the run already failed or stopped */
        (void)fwrite(w->buf.data, 1, w->buf.len, w->out);
    w->enc->destroy(w->doc);
    tw__buf_free(&w->buf);
    free(w);
}

/* Writes what the buffer holds and empties it (also after a failed write:
 * the error ends the run, and writer_free must not write the bytes again). */
static tw_status writer_drain(twb_writer *w, tw_error **err)
{
    tw_status st = twb_write_out(w->out, w->buf.data, w->buf.len, err);
    tw__buf_reset(&w->buf);
    return st;
}

static tw_status writer_write(twb_writer *w, const twb_span *spans, size_t n, tw_error **err)
{
    size_t before = w->buf.len;
    if (!w->enc->encode(w->doc, spans, n, &w->buf)) {
        w->buf.len = before; /* no part of the failed group reaches the output */
        tw__set_error(err, TW_E_NOMEM, "out of memory while encoding %s", w->enc->name);
        return TW_E_NOMEM;
    }
    return w->buf.len >= WRITE_BYTES ? writer_drain(w, err) : TW_OK;
}

static tw_status writer_finish(twb_writer *w, tw_error **err)
{
    size_t before = w->buf.len;
    if (!w->enc->finish(w->doc, &w->buf)) {
        w->buf.len = before;
        tw__set_error(err, TW_E_NOMEM, "out of memory while encoding %s", w->enc->name);
        return TW_E_NOMEM;
    }
    tw_status st = writer_drain(w, err);
    return st == TW_OK ? twb_flush_out(w->out, err) : st;
}

/* One vtable per encoder (the vtable's constructor takes no format). The
 * names, summaries and flags repeat the encoders' (constant initialisers
 * cannot read them); test_convert_core checks that they agree. */
#define WRITER(var, format_name, encoder, summary_text, flags)                                     \
    static twb_writer *var##_new(FILE *out, const twb_options *opts, tw_error **err)               \
    {                                                                                              \
        return writer_new(&(encoder), out, opts, err);                                             \
    }                                                                                              \
    const twb_writer_vtable twb_writer_##var = {                                                   \
        .name = format_name,                                                                       \
        .summary = summary_text,                                                                   \
        .target_flags = flags,                                                                     \
        .new_writer = var##_new,                                                                   \
        .write = writer_write,                                                                     \
        .finish = writer_finish,                                                                   \
        .free_writer = writer_free,                                                                \
    }

WRITER(zipkin_v2_json, "zipkin-v2-json", tw__zipkin_v2_json_encoder,
       "Zipkin v2 JSON: one array of spans (the body of POST /api/v2/spans)", 0);
WRITER(zipkin_v1_json, "zipkin-v1-json", tw__zipkin_v1_json_encoder,
       "Zipkin v1 JSON: one array of spans with annotations and binaryAnnotations "
       "(the body of POST /api/v1/spans)",
       0);
WRITER(jaeger_json, "jaeger-json", tw__jaeger_json_encoder,
       "Jaeger query-API JSON {\"data\":[trace...]} (loads in Jaeger UI's JSON upload)",
       TWB_TARGET_JAEGER_IDS);
WRITER(jaeger_thrift, "jaeger-thrift", tw__jaeger_thrift_encoder,
       "Jaeger Thrift: binary Batch structs, by process (the collector's body)",
       TWB_TARGET_JAEGER_IDS | TWB_TARGET_BINARY);
WRITER(otlp_json, "otlp-json", tw__otlp_json_encoder,
       "OTLP/JSON: one ExportTraceServiceRequest (the body of POST /v1/traces)", 0);
WRITER(dapper, "dapper", tw__dapper_encoder,
       "Dapper-style span log: one JSON object per line (docs/dapper-log-format.md)", 0);
WRITER(otlp_proto, "otlp-proto", tw__otlp_proto_encoder,
       "OTLP protobuf: one ExportTraceServiceRequest (the body of POST /v1/traces as "
       "application/x-protobuf)",
       TWB_TARGET_BINARY);
WRITER(zipkin_v2_proto, "zipkin-v2-proto", tw__zipkin_v2_proto_encoder,
       "Zipkin v2 proto3: one ListOfSpans (the body of POST /api/v2/spans as "
       "application/x-protobuf)",
       TWB_TARGET_BINARY);
