/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_views_trace.c: libFuzzer target for what the views do
 * with whatever spans a reader lets through (bridge/views/: trace.c,
 * critical_path.c, links.c, opstats.c, quantiles.c). The input is read as
 * Zipkin v2 JSON (the reader accepts odd shapes: missing timestamps, shared
 * halves, repeated ids, parents in cycles, orphans), assembled with Jaeger
 * ids as the views assemble, and every group goes through the tree, the
 * critical path, Zipkin's linker and the per-operation aggregates. Nothing may
 * crash, loop or leak, and the results must hold together: the display order
 * holds every span once, parents come before children, every critical
 * section is non-empty and inside its span, and no span has more time on
 * the critical path than it lasted.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in tests/fuzz/corpus/views_trace/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/assemble.h"
#include "bridge/read_capture.h"
#include "views/views.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_views_trace: %s\n", what);
    abort();
}

typedef struct views_state {
    twv_trace t;
    twv_links links;
    twv_opstats ops;
    uint8_t *seen;
    size_t cap_seen;
} views_state;

static tw_status on_group(void *arg, const twb_span *spans, size_t n, tw_error **err)
{
    (void)err;
    views_state *v = arg;
    if (!twv_trace_build(&v->t, spans, n))
        return TW_OK; /* out of memory: libFuzzer's RSS limit is the bound here */
    const twv_trace *t = &v->t;
    if (t->n_spans != n)
        fail("a span was lost building the trace");
    if (n > v->cap_seen) {
        free(v->seen);
        v->seen = malloc(n);
        v->cap_seen = n;
        if (!v->seen)
            abort();
    }
    memset(v->seen, 0, n);
    for (size_t i = 0; i < n; i++) {
        uint32_t k = t->order[i];
        if (k >= n || v->seen[k])
            fail("the display order does not hold every span once");
        v->seen[k] = 1;
        uint32_t p = t->spans[k].parent;
        if (p != TWV_NONE && !v->seen[p])
            fail("a child comes before its parent");
    }
    if (twv_critical_path(&v->t)) {
        for (size_t i = 0; i < t->n_cp; i++) {
            const twv_cp_section *s = &t->cp[i];
            const twv_span *sp = &t->spans[s->span];
            if (s->start_us >= s->end_us)
                fail("an empty or reversed critical section");
            if (s->start_us < sp->start_us || s->end_us > sp->end_us)
                fail("a critical section outside its span");
        }
        for (size_t i = 0; i < t->n_spans; i++) {
            const twv_span *s = &t->spans[i];
            if (s->critical_us < 0 || s->critical_us > s->end_us - s->start_us)
                fail("a span has more time on the critical path than it lasted");
        }
    }
    twv_links_add_trace(&v->links, t);
    twv_opstats_add_trace(&v->ops, t, true);
    return TW_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_capture c;
    capture_init(&c);
    capture_read_mem(&c, &twb_reader_zipkin_v2_json, data, size);
    views_state v;
    memset(&v, 0, sizeof v);
    twv_trace_init(&v.t);
    twv_links_init(&v.links, 64);
    twv_opstats_init(&v.ops, 64);
    twb_assemble_options o = {.window_spans = 1000, .jaeger_ids = true, .sample = 1.0};
    twb_assembler *a = twb_assembler_new(&o, on_group, &v);
    if (!a)
        abort();
    for (size_t i = 0; i < c.n_spans; i++) {
        tw__span_data_ref(c.spans[i].data);
        tw_error *err = NULL;
        twb_assembler_add(a, c.spans[i], &err);
        tw_error_free(err);
    }
    tw_error *err = NULL;
    twb_assembler_flush(a, &err);
    tw_error_free(err);
    twb_assembler_free(a);
    for (size_t i = 0; i < v.ops.n_rows; i++) {
        (void)twv_quantiles_get(&v.ops.rows[i].latency, 0.5);
        (void)twv_quantiles_get(&v.ops.rows[i].latency, 0.99);
    }
    twv_links_sort(&v.links);
    twv_trace_free(&v.t);
    twv_links_free(&v.links);
    twv_opstats_free(&v.ops);
    free(v.seen);
    capture_free(&c);
    return 0;
}
