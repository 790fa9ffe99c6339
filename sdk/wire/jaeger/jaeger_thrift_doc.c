/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/jaeger_thrift_doc.c: the jaeger-thrift document of `tracewire
 * convert --to`: concatenated Thrift binary `Batch` structs (the body of the
 * collector's /api/traces), each made by the one Jaeger Thrift encoder
 * (wire/jaeger/jaeger_thrift.h) after the Jaeger target rules
 * (wire/jaeger/jaeger_view.h). Spans are gathered per process across
 * groups; every process's Batch is written once TW__DOC_PENDING_SPANS spans
 * wait in all (wire/core/output.h: checked after each group, so a trace's
 * spans stay together), once one process holds BATCH_BYTES of spans or all
 * of them PENDING_BYTES, and at the end. Single-threaded.
 */
#include <glib.h>
#include <stdlib.h>

#include "wire/formats.h"
#include "wire/jaeger/jaeger_thrift.h"
#include "wire/jaeger/jaeger_view.h"

#define BATCH_BYTES ((size_t)1 << 20) /* a Batch is written once its spans reach this */
/* All pending spans: past it, all are written. 2 MiB keeps a conversion's
 * peak RSS under 32 MiB (measured by the conversion benchmark) while batches
 * stay large (hundreds of spans each on the benchmark's input). */
#define PENDING_BYTES ((size_t)2 << 20)
/* Capacity of emptied span buffers kept for their process's next spans:
 * regrowing a buffer from nothing after every Batch copied each span's
 * bytes once more (realloc), as much as writing the Batch itself. The
 * limit keeps many processes' idle buffers from adding up; twice the
 * pending bytes, as doubling leaves buffers up to half empty (PENDING_BYTES
 * itself still freed some and regrew them). Peak RSS on the 20k-span
 * conversions stayed below main's (27.0 vs 27.7 MiB). */
#define IDLE_BYTES (2 * PENDING_BYTES)

/* A process's spans waiting for their Batch. */
typedef struct pending_batch {
    const tw__process *process; /* borrowed: the caller's processes outlive the document */
    tw__buf encoded_process;
    tw__buf spans; /* concatenated span structs */
    size_t n_spans;
    bool idle; /* spans is empty and its capacity counts in idle_bytes */
} pending_batch;

struct tw__doc_encoder {
    tw__jaeger_encoder *jaeger;
    tw__jaeger_view view;
    GHashTable *batch_by_process; /* const tw__process * -> pending_batch * */
    GPtrArray *batches;           /* the same, in order of first appearance (owns them) */
    size_t pending_bytes;         /* span bytes in all pending batches */
    size_t pending_spans;         /* spans since every batch last went */
    size_t idle_bytes;            /* capacity of the idle batches' span buffers */
    /* The batch of the last span: a group's spans mostly share their
     * process, and the hash lookup cost more than the rest of batch_of. */
    const tw__process *last_process;
    pending_batch *last_batch;
    tw__span_reject_fn reject;
    void *reject_data;
};

static void free_pending(void *p)
{
    pending_batch *b = p;
    tw__buf_free(&b->encoded_process);
    tw__buf_free(&b->spans);
    free(b);
}

static void doc_destroy(tw__doc_encoder *e)
{
    if (!e)
        return;
    tw__jaeger_encoder_free(e->jaeger);
    tw__jaeger_view_clear(&e->view);
    if (e->batch_by_process)
        g_hash_table_destroy(e->batch_by_process);
    if (e->batches)
        g_ptr_array_free(e->batches, TRUE);
    free(e);
}

static tw__doc_encoder *doc_create(const tw__wire_options *opts, tw__span_reject_fn reject,
                                   void *reject_data)
{
    (void)opts;
    tw__doc_encoder *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->reject = reject;
    e->reject_data = reject_data;
    e->jaeger = tw__jaeger_encoder_new(TW__THRIFT_BINARY);
    tw__jaeger_view_init(&e->view);
    e->batch_by_process = g_hash_table_new(NULL, NULL);
    e->batches = g_ptr_array_new_with_free_func(free_pending);
    if (!e->jaeger) {
        doc_destroy(e);
        return NULL;
    }
    return e;
}

static bool emit_batch(tw__doc_encoder *e, pending_batch *b, tw__buf *out)
{
    if (b->n_spans == 0)
        return true;
    if (!tw__jaeger_batch_append(e->jaeger, b->encoded_process.data, b->encoded_process.len,
                                 b->spans.data, b->spans.len, b->n_spans, out))
        return false;
    e->pending_bytes -= b->spans.len;
    /* Kept for the process's next spans while the idle capacities stay
     * under IDLE_BYTES; else freed. */
    if (b->spans.cap <= IDLE_BYTES - e->idle_bytes) {
        tw__buf_reset(&b->spans);
        e->idle_bytes += b->spans.cap;
        b->idle = true;
    } else {
        tw__buf_free(&b->spans);
    }
    b->n_spans = 0;
    return true;
}

static bool emit_all_batches(tw__doc_encoder *e, tw__buf *out)
{
    e->pending_spans = 0;
    for (size_t i = 0; i < e->batches->len; i++) {
        if (!emit_batch(e, g_ptr_array_index(e->batches, i), out))
            return false;
    }
    return true;
}

static pending_batch *batch_of(tw__doc_encoder *e, const tw__process *process)
{
    if (process == e->last_process && e->last_batch)
        return e->last_batch;
    pending_batch *b = g_hash_table_lookup(e->batch_by_process, process);
    if (b) {
        e->last_process = process;
        e->last_batch = b;
        return b;
    }
    b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->process = process;
    tw__process named;
    if (!tw__jaeger_encode_process(e->jaeger, tw__jaeger_process(process, &named),
                                   &b->encoded_process)) {
        free_pending(b);
        return NULL;
    }
    g_ptr_array_add(e->batches, b);
    g_hash_table_insert(e->batch_by_process, (void *)process, b);
    e->last_process = process;
    e->last_batch = b;
    return b;
}

static bool doc_encode(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out)
{
    for (size_t i = 0; i < n; i++) {
        pending_batch *b = batch_of(e, spans[i].process);
        const tw__span_data *s = b ? tw__jaeger_view_of(&e->view, spans[i].data) : NULL;
        if (!s)
            return false;
        if (b->idle) {
            e->idle_bytes -= b->spans.cap;
            b->idle = false;
        }
        size_t before = b->spans.len;
        if (!tw__jaeger_encode_span(e->jaeger, s, &b->spans)) {
            /* Allocation failure, or a value beyond Thrift's i32 lengths: the
             * span alone is left out. */
            if (e->reject)
                e->reject(e->reject_data, &spans[i],
                          "it cannot be encoded as Jaeger Thrift (a string or list longer "
                          "than 2 GiB, or out of memory)");
            continue;
        }
        b->n_spans++;
        e->pending_spans++;
        e->pending_bytes += b->spans.len - before;
        bool ok = true;
        if (b->spans.len >= BATCH_BYTES)
            ok = emit_batch(e, b, out);
        else if (e->pending_bytes >= PENDING_BYTES)
            ok = emit_all_batches(e, out);
        if (!ok)
            return false;
    }
    return e->pending_spans < TW__DOC_PENDING_SPANS || emit_all_batches(e, out);
}

static bool doc_finish(tw__doc_encoder *e, tw__buf *out)
{
    return emit_all_batches(e, out);
}

const tw__wire_encoder tw__jaeger_thrift_encoder = {
    .name = "jaeger-thrift",
    .summary = "Jaeger Thrift: binary Batch structs, by process (the collector's body)",
    .flags = TW__ENCODER_JAEGER_IDS | TW__ENCODER_BINARY,
    .create = doc_create,
    .encode = doc_encode,
    .finish = doc_finish,
    .destroy = doc_destroy,
};
