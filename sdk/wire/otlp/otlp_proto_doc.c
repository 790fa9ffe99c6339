/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_proto_doc.c: the otlp-proto document of `tracewire
 * convert --to`: one ExportTraceServiceRequest (the body of POST /v1/traces
 * as application/x-protobuf), written one ResourceSpans per process at a
 * time by the one OTLP protobuf encoder (wire/otlp/otlp_proto.h). A
 * request is a sequence of resource_spans fields, so the document needs no
 * framing: spans are gathered per process (pointer-equal processes are
 * one), and every process's ResourceSpans is written once
 * TW__DOC_PENDING_SPANS spans wait in all (wire/core/output.h: checked
 * after each group, so a trace's spans stay together), once one process
 * holds 1 MiB of spans or all of them 32 MiB, and at the end. A process
 * with an empty service is named "unknown_service", as in otlp-json. No
 * locks.
 */
#include <glib.h>
#include <stdlib.h>

#include "wire/formats.h"
#include "wire/jaeger/jaeger_view.h" /* tw__process_named */
#include "wire/otlp/otlp_proto.h"

#define BATCH_BYTES ((size_t)1 << 20)    /* a ResourceSpans is written at this many span bytes */
#define PENDING_BYTES ((size_t)32 << 20) /* span bytes waiting in all: past it, all go */

typedef struct pending {
    tw__otlp_proto_envelope envelope;
    tw__buf spans;
} pending;

struct tw__doc_encoder {
    GHashTable *by_process; /* const tw__process* -> pending* */
    GPtrArray *pending;     /* the same, in order of first appearance (owns them) */
    size_t pending_bytes;
    size_t pending_spans;
};

static void free_pending(void *p)
{
    pending *o = p;
    tw__otlp_proto_envelope_clear(&o->envelope);
    tw__buf_free(&o->spans);
    free(o);
}

static tw__doc_encoder *doc_create(const tw__wire_options *opts, tw__span_reject_fn reject,
                                   void *reject_data)
{
    (void)opts;
    (void)reject; /* every span the model holds has an OTLP form */
    (void)reject_data;
    tw__doc_encoder *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->by_process = g_hash_table_new(NULL, NULL);
    e->pending = g_ptr_array_new_with_free_func(free_pending);
    return e;
}

static void doc_destroy(tw__doc_encoder *e)
{
    if (!e)
        return;
    g_hash_table_destroy(e->by_process);
    g_ptr_array_free(e->pending, TRUE);
    free(e);
}

/* Appends @p's ResourceSpans (when it holds spans) and empties it. */
static bool emit(tw__doc_encoder *e, pending *p, tw__buf *out)
{
    if (p->spans.len == 0)
        return true;
    bool ok = tw__otlp_proto_put_resource_spans_head(&p->envelope, p->spans.len, out) &&
              tw__buf_append(out, p->spans.data, p->spans.len);
    e->pending_bytes -= p->spans.len;
    tw__buf_reset(&p->spans);
    return ok;
}

static bool emit_all(tw__doc_encoder *e, tw__buf *out)
{
    e->pending_spans = 0;
    for (size_t i = 0; i < e->pending->len; i++) {
        if (!emit(e, g_ptr_array_index(e->pending, i), out))
            return false;
    }
    return true;
}

static pending *pending_of(tw__doc_encoder *e, const tw__process *process)
{
    pending *p = g_hash_table_lookup(e->by_process, process);
    if (p)
        return p;
    p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    tw__buf_init(&p->spans);
    tw__process named;
    if (!tw__otlp_proto_envelope_init(&p->envelope,
                                      tw__process_named(process, TW__OTLP_EMPTY_SERVICE, &named))) {
        free_pending(p);
        return NULL;
    }
    g_ptr_array_add(e->pending, p);
    g_hash_table_insert(e->by_process, (void *)process, p);
    return p;
}

static bool doc_encode(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out)
{
    for (size_t i = 0; i < n; i++) {
        pending *p = pending_of(e, spans[i].process);
        size_t before = p ? p->spans.len : 0;
        if (!p || !tw__otlp_proto_encode_span(spans[i].data, &p->spans))
            return false;
        e->pending_bytes += p->spans.len - before;
        e->pending_spans++;
        bool ok = true;
        if (p->spans.len >= BATCH_BYTES)
            ok = emit(e, p, out);
        else if (e->pending_bytes >= PENDING_BYTES)
            ok = emit_all(e, out);
        if (!ok)
            return false;
    }
    return e->pending_spans < TW__DOC_PENDING_SPANS || emit_all(e, out);
}

static bool doc_finish(tw__doc_encoder *e, tw__buf *out)
{
    return emit_all(e, out);
}

const tw__wire_encoder tw__otlp_proto_encoder = {
    .name = "otlp-proto",
    .summary = "OTLP protobuf: one ExportTraceServiceRequest (the body of POST /v1/traces as "
               "application/x-protobuf)",
    .flags = TW__ENCODER_BINARY,
    .create = doc_create,
    .encode = doc_encode,
    .finish = doc_finish,
    .destroy = doc_destroy,
};
