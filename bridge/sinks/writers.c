/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/sinks/writers.c: the `--to` writers that are thin framings around
 * the SDK's own encoders (one encoder per format in the project):
 *
 *   zipkin-v2-json  one JSON array (the body of POST /api/v2/spans), each
 *                   span by wire/zipkin_json.c
 *   otlp-json       one ExportTraceServiceRequest document; one
 *                   resourceSpans entry per process per write() call, each
 *                   made by wire/otlp_json.c (an empty service is named
 *                   "unknown_service", OpenTelemetry's default)
 *   jaeger-thrift   concatenated Thrift binary `Batch` structs (the body of
 *                   the collector's /api/traces) by wire/jaeger_thrift.c:
 *                   spans are gathered per process across write() calls,
 *                   so a file holds one Batch per process, or per 1 MiB of
 *                   its spans; at most 32 MiB wait in all (then all go)
 *   dapper          the Dapper-style span log, one span per line, by
 *                   wire/dapper_log.c (an encoder per process, created on
 *                   first use)
 *
 * Where it sits: the assembler hands each writer groups of spans (a trace,
 * or what one input record produced); writers stream, so memory is one
 * group (jaeger-thrift: its bounded pending batches). Jaeger targets: the `error` tag is normalised
 * by twb_jaeger_view (a string becomes bool true plus error.message). Single-threaded.
 */
#include "convert.h"
#include "sinks/jaeger_view.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "wire/dapper/dapper_log.h"
#include "wire/jaeger/jaeger_thrift.h"
#include "wire/core/json_common.h"
#include "wire/otlp/otlp_json.h"
#include "wire/zipkin/zipkin_v2_json.h"

struct twb_writer {
    FILE *out;
    size_t n_written; /* spans (or documents) so far: decides the separators */
    tw__buf buf;
    tw__jaeger_encoder *jaeger;
    twb_jaeger_view view;
    GHashTable *batch_by_process; /* jaeger-thrift: const tw__process* -> pending_batch* */
    GPtrArray *batches;           /* the same, in order of first appearance (owns them) */
    size_t pending_bytes;         /* span bytes in all pending batches */
    GHashTable *dapper_encoders;  /* const tw__process* -> tw__dapper_log_encoder* */
};

static twb_writer *writer_new(FILE *out, tw_error **err)
{
    twb_writer *w = calloc(1, sizeof *w);
    if (!w) {
        tw__set_error(err, TW_E_NOMEM, "out of memory");
        return NULL;
    }
    w->out = out;
    tw__buf_init(&w->buf);
    return w;
}

static void writer_free(twb_writer *w)
{
    if (!w)
        return;
    tw__buf_free(&w->buf);
    tw__jaeger_encoder_free(w->jaeger);
    twb_jaeger_view_clear(&w->view);
    if (w->batch_by_process)
        g_hash_table_destroy(w->batch_by_process);
    if (w->batches)
        g_ptr_array_free(w->batches, TRUE);
    if (w->dapper_encoders)
        g_hash_table_destroy(w->dapper_encoders);
    free(w);
}

static tw_status put(twb_writer *w, const void *data, size_t len, tw_error **err)
{
    return twb_write_out(w->out, data, len, err);
}

static tw_status put_str(twb_writer *w, const char *s, tw_error **err)
{
    return put(w, s, strlen(s), err);
}

static tw_status flush_out(twb_writer *w, tw_error **err)
{
    return twb_flush_out(w->out, err);
}

/* The processes of @spans in order of first appearance (pointer equality:
 * processes are interned). *n_out set; NULL on allocation failure. */
static const tw__process **distinct_processes(const twb_span *spans, size_t n, size_t *n_out)
{
    const tw__process **procs = malloc((n ? n : 1) * sizeof *procs);
    if (!procs)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        size_t j = 0;
        while (j < k && procs[j] != spans[i].process)
            j++;
        if (j == k)
            procs[k++] = spans[i].process;
    }
    *n_out = k;
    return procs;
}

/* ---- zipkin-v2-json ------------------------------------------------------------------------ */

static twb_writer *zipkin_new(FILE *out, const twb_options *opts, tw_error **err)
{
    (void)opts;
    return writer_new(out, err);
}

/* The group's spans go into one buffer (separators included) and out in one
 * fwrite; each span's text comes from the direct writer, which writes the
 * bytes the Jansson encoder would (wire/zipkin_text.c) at a fraction of the
 * cost. */
static tw_status zipkin_write(twb_writer *w, const twb_span *spans, size_t n, tw_error **err)
{
    tw__buf_reset(&w->buf);
    for (size_t i = 0; i < n; i++) {
        if (!tw__buf_append(&w->buf, w->n_written++ ? "," : "[", 1) ||
            !tw__zipkin_encode_span(spans[i].data, spans[i].process, &w->buf)) {
            tw__set_error(err, TW_E_NOMEM, "out of memory while encoding");
            return TW_E_NOMEM;
        }
    }
    return put(w, w->buf.data, w->buf.len, err);
}

static tw_status zipkin_finish(twb_writer *w, tw_error **err)
{
    tw_status st = put_str(w, w->n_written ? "]\n" : "[]\n", err);
    return st == TW_OK ? flush_out(w, err) : st;
}

const twb_writer_vtable twb_writer_zipkin_v2_json = {
    .name = "zipkin-v2-json",
    .summary = "Zipkin v2 JSON: one array of spans (the body of POST /api/v2/spans)",
    .new_writer = zipkin_new,
    .write = zipkin_write,
    .finish = zipkin_finish,
    .free_writer = writer_free,
};

/* ---- otlp-json ------------------------------------------------------------------------------ */

static tw_status otlp_write(twb_writer *w, const twb_span *spans, size_t n, tw_error **err)
{
    size_t n_procs;
    const tw__process **procs = distinct_processes(spans, n, &n_procs);
    if (!procs) {
        tw__set_error(err, TW_E_NOMEM, "out of memory");
        return TW_E_NOMEM;
    }
    /* One resourceSpans entry per process of the group, written whole into
     * the buffer, then out in one write. */
    tw__buf_reset(&w->buf);
    bool ok = true;
    for (size_t p = 0; p < n_procs && ok; p++) {
        tw__process named;
        bool is_first = w->n_written++ == 0;
        ok = tw__buf_append(&w->buf, is_first ? "{\"resourceSpans\":[" : ",", is_first ? 18 : 1) &&
             tw__otlp_encode_resource_begin(
                 twb_process_named(procs[p], TWB_OTLP_EMPTY_SERVICE, &named), &w->buf);
        size_t k = 0;
        for (size_t i = 0; ok && i < n; i++) {
            if (spans[i].process == procs[p])
                ok = (k++ == 0 || tw__buf_append(&w->buf, ",", 1)) &&
                     tw__otlp_encode_span(spans[i].data, &w->buf);
        }
        ok = ok && tw__otlp_encode_resource_end(&w->buf);
    }
    free(procs);
    if (!ok) {
        tw__set_error(err, TW_E_NOMEM, "out of memory while encoding");
        return TW_E_NOMEM;
    }
    return put(w, w->buf.data, w->buf.len, err);
}

static tw_status otlp_finish(twb_writer *w, tw_error **err)
{
    tw_status st = put_str(w, w->n_written ? "]}\n" : "{\"resourceSpans\":[]}\n", err);
    return st == TW_OK ? flush_out(w, err) : st;
}

const twb_writer_vtable twb_writer_otlp_json = {
    .name = "otlp-json",
    .summary = "OTLP/JSON: one ExportTraceServiceRequest (the body of POST /v1/traces)",
    .new_writer = zipkin_new,
    .write = otlp_write,
    .finish = otlp_finish,
    .free_writer = writer_free,
};

/* ---- jaeger-thrift ----------------------------------------------------------------------------
 */

static void free_pending(void *p);

static twb_writer *jaeger_new(FILE *out, const twb_options *opts, tw_error **err)
{
    (void)opts;
    twb_writer *w = writer_new(out, err);
    if (!w)
        return NULL;
    w->jaeger = tw__jaeger_encoder_new(TW__THRIFT_BINARY);
    twb_jaeger_view_init(&w->view);
    w->batch_by_process = g_hash_table_new(NULL, NULL);
    w->batches = g_ptr_array_new_with_free_func(free_pending);
    if (!w->jaeger) {
        writer_free(w);
        tw__set_error(err, TW_E_NOMEM, "out of memory");
        return NULL;
    }
    return w;
}

/* A process's spans waiting for their Batch: spans are gathered per process
 * across write() calls, so a file holds one Batch per process (per
 * JAEGER_BATCH_BYTES of spans) rather than one per trace and process. */
typedef struct pending_batch {
    const tw__process *process; /* interned */
    tw__buf encoded_process;
    tw__buf spans; /* concatenated span structs */
    size_t n_spans;
} pending_batch;

#define JAEGER_BATCH_BYTES ((size_t)1 << 20)    /* a Batch is written once its spans reach this */
#define JAEGER_PENDING_BYTES ((size_t)32 << 20) /* all pending spans: past it, all are written */

static void free_pending(void *p)
{
    pending_batch *b = p;
    tw__buf_free(&b->encoded_process);
    tw__buf_free(&b->spans);
    free(b);
}

static tw_status emit_batch(twb_writer *w, pending_batch *b, tw_error **err)
{
    if (b->n_spans == 0)
        return TW_OK;
    if (!tw__jaeger_batch_struct(w->jaeger, b->encoded_process.data, b->encoded_process.len,
                                 b->spans.data, b->spans.len, b->n_spans, -1, NULL, &w->buf)) {
        tw__set_error(err, TW_E_ENCODE, "a Jaeger Thrift batch could not be encoded");
        return TW_E_ENCODE;
    }
    w->pending_bytes -= b->spans.len;
    tw__buf_reset(&b->spans);
    b->n_spans = 0;
    w->n_written++;
    return put(w, w->buf.data, w->buf.len, err);
}

static tw_status emit_all_batches(twb_writer *w, tw_error **err)
{
    for (size_t i = 0; i < w->batches->len; i++) {
        tw_status st = emit_batch(w, g_ptr_array_index(w->batches, i), err);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

static pending_batch *batch_of(twb_writer *w, const tw__process *process)
{
    pending_batch *b = g_hash_table_lookup(w->batch_by_process, process);
    if (b)
        return b;
    b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->process = process;
    tw__buf_init(&b->encoded_process);
    tw__buf_init(&b->spans);
    tw__process named;
    if (!tw__jaeger_encode_process(w->jaeger, twb_jaeger_process(process, &named),
                                   &b->encoded_process)) {
        free_pending(b);
        return NULL;
    }
    g_ptr_array_add(w->batches, b);
    g_hash_table_insert(w->batch_by_process, (void *)process, b);
    return b;
}

static tw_status jaeger_write(twb_writer *w, const twb_span *spans, size_t n, tw_error **err)
{
    for (size_t i = 0; i < n; i++) {
        pending_batch *b = batch_of(w, spans[i].process);
        const tw__span_data *s = b ? twb_jaeger_view_of(&w->view, spans[i].data) : NULL;
        size_t before = b ? b->spans.len : 0;
        if (!s || !tw__jaeger_encode_span(w->jaeger, s, &b->spans)) {
            tw__set_error(err, TW_E_ENCODE, "a span could not be encoded as Jaeger Thrift");
            return TW_E_ENCODE;
        }
        b->n_spans++;
        w->pending_bytes += b->spans.len - before;
        tw_status st = TW_OK;
        if (b->spans.len >= JAEGER_BATCH_BYTES)
            st = emit_batch(w, b, err);
        else if (w->pending_bytes >= JAEGER_PENDING_BYTES)
            st = emit_all_batches(w, err);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

static tw_status jaeger_finish(twb_writer *w, tw_error **err)
{
    tw_status st = emit_all_batches(w, err);
    return st == TW_OK ? flush_out(w, err) : st;
}

static tw_status plain_finish(twb_writer *w, tw_error **err)
{
    return flush_out(w, err);
}

const twb_writer_vtable twb_writer_jaeger_thrift = {
    .name = "jaeger-thrift",
    .summary = "Jaeger Thrift: binary Batch structs, one per process (the collector's body)",
    .target_flags = TWB_TARGET_JAEGER_IDS,
    .new_writer = jaeger_new,
    .write = jaeger_write,
    .finish = jaeger_finish,
    .free_writer = writer_free,
};

/* ---- dapper -------------------------------------------------------------------------------------
 */

static void free_dapper_encoder(void *enc)
{
    tw__dapper_log_encoder_free(enc);
}

static twb_writer *dapper_new(FILE *out, const twb_options *opts, tw_error **err)
{
    (void)opts;
    twb_writer *w = writer_new(out, err);
    if (!w)
        return NULL;
    w->dapper_encoders = g_hash_table_new_full(NULL, NULL, NULL, free_dapper_encoder);
    return w;
}

static tw_status dapper_write(twb_writer *w, const twb_span *spans, size_t n, tw_error **err)
{
    for (size_t i = 0; i < n; i++) {
        tw__dapper_log_encoder *enc =
            g_hash_table_lookup(w->dapper_encoders, (void *)spans[i].process);
        if (!enc) {
            enc = tw__dapper_log_encoder_new(spans[i].process);
            if (!enc) {
                tw__set_error(err, TW_E_NOMEM, "out of memory");
                return TW_E_NOMEM;
            }
            g_hash_table_insert(w->dapper_encoders, (void *)spans[i].process, enc);
        }
        tw__buf_reset(&w->buf);
        if (!tw__dapper_log_encode_span(enc, spans[i].data, &w->buf)) {
            tw__set_error(err, TW_E_ENCODE, "a span could not be encoded as a Dapper log line");
            return TW_E_ENCODE;
        }
        tw_status st = put(w, w->buf.data, w->buf.len, err);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

const twb_writer_vtable twb_writer_dapper = {
    .name = "dapper",
    .summary = "Dapper-style span log: one JSON object per line (docs/dapper-log-format.md)",
    .new_writer = dapper_new,
    .write = dapper_write,
    .finish = plain_finish,
    .free_writer = writer_free,
};
