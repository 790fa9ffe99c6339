/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/views/bench_views.c: the cost of the views themselves, without
 * the readers (run_views_bench.sh, `make bench`). The spans of an input file
 * are read once into memory through the real reader (zipkin-v1-thrift, the
 * fastest to read, or any --from name), then replayed through the real
 * assembler with Jaeger ids and window 10,000, as the views run it, into
 * `stats`' work (trace, critical path, per-operation aggregates) or `deps`'
 * work (trace, Zipkin's linker). Only processing is timed; output is not
 * written (a table of a few dozen rows).
 *
 *   bench_views table FORMAT FILE PASSES   spans/s of assembly + view, per view
 *   bench_views ir VIEW FORMAT FILE PASSES replays PASSES times (0: only reads),
 *                                           for callgrind instruction counts
 *
 * Prints, for `table`, one line per view: "VIEW spans passes wall_s cpu_s
 * spans_per_wall_s spans_per_cpu_s view_share" where view_share is the part
 * of the CPU time spent in the view's callback (the rest is the assembler).
 * Single-threaded.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "assemble/assemble.h"
#include "bridge/read_capture.h"
#include "views/views.h"

typedef enum { VIEW_STATS, VIEW_DEPS } view_kind;

typedef struct run {
    view_kind view;
    twv_trace t;
    twv_opstats ops;
    twv_links links;
    double in_view_s;
    uint64_t spans;
} run;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of the process: on a loaded machine, wall time also counts the
 * time other processes held the core. */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static tw_status on_group(void *arg, const twb_span *spans, size_t n, tw_error **err)
{
    (void)err;
    run *r = arg;
    double t0 = cpu_s();
    if (!twv_trace_build(&r->t, spans, n))
        abort();
    if (r->view == VIEW_STATS) {
        if (!twv_critical_path(&r->t) || !twv_opstats_add_trace(&r->ops, &r->t, true))
            abort();
    } else if (!twv_links_add_trace(&r->links, &r->t)) {
        abort();
    }
    r->spans += n;
    r->in_view_s += cpu_s() - t0;
    return TW_OK;
}

/* One replay of every span; the records are referenced, not copied: the
 * assembler changes records it does not own by copying them first. */
static void replay(run *r, const read_capture *c)
{
    twb_assemble_options o = {.window_spans = 10000, .jaeger_ids = true, .sample = 1.0};
    twb_assembler *a = twb_assembler_new(&o, on_group, r);
    if (!a)
        abort();
    for (size_t i = 0; i < c->n_spans; i++) {
        twb_span s = c->spans[i];
        tw__span_data_ref(s.data);
        tw_error *err = NULL;
        if (twb_assembler_add(a, s, &err) != TW_OK)
            abort();
    }
    tw_error *err = NULL;
    if (twb_assembler_flush(a, &err) != TW_OK)
        abort();
    twb_assembler_free(a);
}

static void load(read_capture *c, const char *format, const char *path)
{
    const twb_reader *reader = twb_reader_find(format);
    capture_init(c);
    c->opts.max_value_bytes = 65536;
    c->opts.scribe_category = "zipkin";
    if (!reader || capture_read_file(c, reader, path) != TW_OK || c->n_rejects) {
        fprintf(stderr, "bench_views: cannot read %s as %s\n", path, format);
        exit(1);
    }
    for (size_t i = 0; i < c->n_spans; i++) { /* the pipeline's rule for a 0 duration */
        tw__span_data *d = c->spans[i].data;
        if (d->duration_us == 0 && !d->is_duration_unknown)
            d->duration_us = 1;
    }
}

static void run_init(run *r, view_kind v)
{
    memset(r, 0, sizeof *r);
    r->view = v;
    twv_trace_init(&r->t);
    twv_opstats_init(&r->ops, 10000);
    twv_links_init(&r->links, 100000);
}

static void run_free(run *r)
{
    twv_trace_free(&r->t);
    twv_opstats_free(&r->ops);
    twv_links_free(&r->links);
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "table") == 0) {
        read_capture c;
        load(&c, argv[2], argv[3]);
        int passes = atoi(argv[4]);
        for (int v = 0; v < 2; v++) {
            run r;
            run_init(&r, (view_kind)v);
            replay(&r, &c); /* warm-up: tables and arrays grow once */
            r.spans = 0;
            r.in_view_s = 0;
            double t0 = now_s(), c0 = cpu_s();
            for (int p = 0; p < passes; p++)
                replay(&r, &c);
            double wall = now_s() - t0, cpu = cpu_s() - c0;
            printf("%s %" PRIu64 " %d %.3f %.3f %.0f %.0f %.3f\n",
                   v == VIEW_STATS ? "stats" : "deps", r.spans / (uint64_t)(passes ? passes : 1),
                   passes, wall, cpu, (double)r.spans / wall, (double)r.spans / cpu,
                   r.in_view_s / cpu);
            run_free(&r);
        }
        capture_free(&c);
        return 0;
    }
    if (argc == 6 && strcmp(argv[1], "ir") == 0) {
        read_capture c;
        load(&c, argv[3], argv[4]);
        run r;
        run_init(&r, strcmp(argv[2], "deps") == 0 ? VIEW_DEPS : VIEW_STATS);
        int passes = atoi(argv[5]);
        for (int p = 0; p < passes; p++)
            replay(&r, &c);
        printf("%zu spans\n", c.n_spans);
        run_free(&r);
        capture_free(&c);
        return 0;
    }
    fprintf(stderr, "usage: bench_views table FORMAT FILE PASSES\n"
                    "       bench_views ir stats|deps FORMAT FILE PASSES\n");
    return 2;
}
