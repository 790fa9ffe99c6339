/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/view_fixture.h: hand-built traces for the suites of the
 * views (tests/unit/bridge/test_views_*.c). A trace is written as a table of
 * vt_span rows (ids, parent, service, operation, kind, times relative to
 * VT_T0, flags) and goes through the real assembler of `tracewire convert`
 * with Jaeger ids, exactly as the views get it; the group comes back as a
 * twv_trace. Real fixture files go through their reader and the same
 * assembler. Header-only (static inline), one copy per suite.
 */
#ifndef TW_TESTS_VIEW_FIXTURE_H
#define TW_TESTS_VIEW_FIXTURE_H

#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/assemble.h"
#include "convert.h"
#include "views/views.h"

#define VT_T0 INT64_C(1700000000000000) /* µs; every test time is relative to it */
#define VT_TRACE UINT64_C(0x4d1e000000000001)

enum {
    VT_ERROR = 1 << 0,   /* tag error=true */
    VT_SHARED = 1 << 1,  /* a Zipkin shared server half */
    VT_FOLLOWS = 1 << 2, /* the parent is a FOLLOWS_FROM reference */
    VT_NO_DUR = 1 << 3,  /* duration unknown */
    VT_NO_START = 1 << 4 /* no timestamp */
};

typedef struct vt_span {
    uint64_t id, parent;
    const char *service, *operation;
    const char *kind; /* "client", "server", "producer", "consumer" or NULL */
    int64_t start, duration;
    unsigned flags;
    const char *remote; /* peer.service, or NULL */
} vt_span;

/* The spans of one or more groups, each span with a reference held. */
typedef struct vt_groups {
    twb_span *spans;
    size_t n, cap;
    size_t starts[64]; /* where each group starts */
    size_t n_groups;
} vt_groups;

typedef struct vt_ctx {
    twb_procs *procs;
    vt_groups g;
} vt_ctx;

static inline tw_status vt_on_group(void *arg, const twb_span *spans, size_t n, tw_error **err)
{
    (void)err;
    vt_groups *g = arg;
    if (g->n + n > g->cap) {
        g->cap = (g->n + n) * 2;
        g->spans = realloc(g->spans, g->cap * sizeof *g->spans);
        if (!g->spans)
            abort();
    }
    if (g->n_groups < 64)
        g->starts[g->n_groups++] = g->n;
    for (size_t i = 0; i < n; i++) {
        g->spans[g->n] = spans[i];
        tw__span_data_ref(spans[i].data);
        g->n++;
    }
    return TW_OK;
}

static inline void vt_init(vt_ctx *c)
{
    memset(c, 0, sizeof *c);
    c->procs = twb_procs_new();
    if (!c->procs)
        abort();
}

static inline void vt_free(vt_ctx *c)
{
    for (size_t i = 0; i < c->g.n; i++)
        tw__span_data_unref(c->g.spans[i].data);
    free(c->g.spans);
    twb_procs_free(c->procs);
    memset(c, 0, sizeof *c);
}

/* Forgets the groups assembled so far (the process table stays). */
static inline void vt_reset(vt_ctx *c)
{
    for (size_t i = 0; i < c->g.n; i++)
        tw__span_data_unref(c->g.spans[i].data);
    c->g.n = 0;
    c->g.n_groups = 0;
}

static inline const tw__process *vt_process(vt_ctx *c, const char *service)
{
    tw__process p;
    tw__process_init(&p);
    if (service && !tw__process_set_service(&p, service))
        abort();
    const tw__process *interned = twb_procs_intern(c->procs, &p);
    tw__process_clear(&p);
    return interned;
}

static inline void vt_tag(tw__span_data *d, const char *key, const char *value)
{
    if (!twb_tag_str(d, key, value, strlen(value)))
        abort();
}

static inline tw__span_data *vt_record(const vt_span *s, uint64_t trace_lo)
{
    tw__span_data *d = tw__span_data_new();
    if (!d)
        abort();
    d->trace_id_low = trace_lo;
    d->span_id = s->id;
    d->parent_id = s->parent;
    d->flags = TW__FLAG_SAMPLED;
    d->shared = (s->flags & VT_SHARED) != 0;
    d->start_us = (s->flags & VT_NO_START) ? 0 : VT_T0 + s->start;
    d->duration_us = (s->flags & VT_NO_DUR) ? 0 : s->duration;
    d->is_duration_unknown = (s->flags & VT_NO_DUR) != 0;
    if (!tw__span_data_set_operation(d, s->operation ? s->operation : "op",
                                     strlen(s->operation ? s->operation : "op")))
        abort();
    if (s->kind)
        vt_tag(d, "span.kind", s->kind);
    if (s->remote)
        vt_tag(d, "peer.service", s->remote);
    if (s->flags & VT_ERROR) {
        tw_value yes = {.type = TW_VALUE_BOOL, .as.boolean = true};
        if (!twb_tag_value(d, "error", &yes))
            abort();
    }
    if ((s->flags & VT_FOLLOWS) &&
        !tw__span_data_add_ref(d, TW__REF_FOLLOWS_FROM, 0, trace_lo, s->parent))
        abort();
    return d;
}

/* Assembles @n rows (one trace) with Jaeger ids; the group is in c->g. */
static inline void vt_assemble(vt_ctx *c, const vt_span *rows, size_t n)
{
    twb_assemble_options o = {.window_spans = 10000, .jaeger_ids = true, .sample = 1.0};
    twb_assembler *a = twb_assembler_new(&o, vt_on_group, &c->g);
    if (!a)
        abort();
    for (size_t i = 0; i < n; i++) {
        twb_span sp = {.data = vt_record(&rows[i], VT_TRACE),
                       .process = vt_process(c, rows[i].service)};
        tw_error *err = NULL;
        if (twb_assembler_add(a, sp, &err) != TW_OK)
            abort();
    }
    tw_error *err = NULL;
    if (twb_assembler_flush(a, &err) != TW_OK)
        abort();
    twb_assembler_free(a);
}

/* Builds group @k of c->g into @t. */
static inline bool vt_trace(vt_ctx *c, size_t k, twv_trace *t)
{
    if (k >= c->g.n_groups)
        return false;
    size_t end = k + 1 < c->g.n_groups ? c->g.starts[k + 1] : c->g.n;
    return twv_trace_build(t, c->g.spans + c->g.starts[k], end - c->g.starts[k]);
}

/* Assembles @rows and builds the one trace they form into @t. */
static inline void vt_build(vt_ctx *c, const vt_span *rows, size_t n, twv_trace *t)
{
    vt_assemble(c, rows, n);
    CU_ASSERT_FATAL(c->g.n_groups == 1);
    CU_ASSERT_FATAL(vt_trace(c, 0, t));
}

/* The span with @id in @t (after assembly), or NULL. */
static inline const twv_span *vt_find(const twv_trace *t, uint64_t id)
{
    uint32_t k = twv_trace_find(t, id);
    return k == TWV_NONE ? NULL : &t->spans[k];
}

/* The span named @operation of @service (the first one), or NULL. */
static inline const twv_span *vt_named(const twv_trace *t, const char *service,
                                       const char *operation)
{
    for (size_t i = 0; i < t->n_spans; i++) {
        if (strcmp(t->spans[i].service, service) == 0 &&
            strcmp(t->spans[i].d->operation, operation) == 0)
            return &t->spans[i];
    }
    return NULL;
}

/* ---- real fixture files through their reader and the assembler -------------------------- */

/* Reads a real fixture with @reader and assembles it (window 10000, Jaeger
 * ids); the groups are in c->g. Returns the number of rejected records. */
typedef struct vt_reader_state {
    twb_input in;
    twb_options opts;
    vt_ctx *c;
    twb_assembler *a;
    size_t rejects;
} vt_reader_state;

static inline bool vt_state_emit(twb_input *in, tw__span_data *span, const tw__process *process)
{
    vt_reader_state *st = (vt_reader_state *)in;
    const tw__process *p = twb_procs_intern(st->c->procs, process);
    if (!p)
        abort();
    /* the pipeline's rule: a duration of 0 that is known is 1 µs */
    if (span->duration_us == 0 && !span->is_duration_unknown)
        span->duration_us = 1;
    twb_span sp = {.data = span, .process = p};
    tw_error *err = NULL;
    return twb_assembler_add(st->a, sp, &err) == TW_OK;
}

static inline bool vt_state_reject(twb_input *in, size_t line_no, const void *raw, size_t len,
                                   const char *reason)
{
    (void)line_no;
    (void)raw;
    (void)len;
    (void)reason;
    ((vt_reader_state *)in)->rejects++;
    return true;
}

static inline void vt_state_warn(twb_input *in, size_t line_no, const char *reason)
{
    (void)in;
    (void)line_no;
    (void)reason;
}

static inline size_t vt_read_file(vt_ctx *c, const twb_reader *reader, const char *path)
{
    vt_reader_state st = {.c = c};
    st.opts.max_value_bytes = 65536;
    st.opts.scribe_category = "zipkin";
    st.in.name = path;
    st.in.opts = &st.opts;
    st.in.emit = vt_state_emit;
    st.in.reject = vt_state_reject;
    st.in.warn = vt_state_warn;
    twb_assemble_options o = {.window_spans = 10000, .jaeger_ids = true, .sample = 1.0};
    st.a = twb_assembler_new(&o, vt_on_group, &c->g);
    FILE *f = fopen(path, "rb");
    if (!st.a || !f) {
        fprintf(stderr, "cannot read %s\n", path);
        abort();
    }
    tw_error *err = NULL;
    reader->read(f, &st.in, &err);
    tw_error_free(err);
    fclose(f);
    if (twb_assembler_flush(st.a, &err) != TW_OK)
        abort();
    twb_assembler_free(st.a);
    return st.rejects;
}

#endif /* TW_TESTS_VIEW_FIXTURE_H */
