/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_assemble.c: suite "bridge/assemble": the trace
 * assembler (bridge/assemble/assemble.h). Pass-through groups and window
 * eviction order; exact duplicates; merging the parts of one span; the
 * longest trace id; the shared-flag backfill; Jaeger ids for shared server
 * spans with re-parenting; clock skew on the real Zipkin skew fixture (its
 * facts rebuilt by hand); trace-hash sampling with its test vector, its
 * kept fraction and debug traces; orphans; errors from the output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assemble/assemble.h"
#include "harness.h"
#include "internal.h"

/* ---- fixtures ----------------------------------------------------------------------------- */

static tw__process process_a;     /* servicea @ 127.0.0.0 (the skew fixture's client) */
static tw__process process_b;     /* serviceb @ 192.0.0.0 (its server) */
static tw__process process_b_ip;  /* no service, 192.0.0.0: compatible with b */
static tw__process process_empty; /* no endpoint at all */

static bool set_process(tw__process *p, const char *service, const char *ip)
{
    tw__process_init(p);
    if (service && !tw__process_set_service(p, service))
        return false;
    if (ip) {
        tw_value v = {.type = TW_VALUE_STRING, .as.str = ip, .len = strlen(ip)};
        if (!tw__process_add_tag(p, "ip", &v))
            return false;
    }
    return true;
}

static int suite_init(void)
{
    bool ok = set_process(&process_a, "servicea", "127.0.0.0") &&
              set_process(&process_b, "serviceb", "192.0.0.0") &&
              set_process(&process_b_ip, NULL, "192.0.0.0") &&
              set_process(&process_empty, NULL, NULL);
    return ok ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw__process_clear(&process_a);
    tw__process_clear(&process_b);
    tw__process_clear(&process_b_ip);
    tw__process_clear(&process_empty);
    tw__span_data_pool_trim();
    return 0;
}

static void add_str_tag(tw__span_data *s, const char *key, const char *value)
{
    tw__tag *t = tw__span_data_push_tag(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
    bool truncated = false;
    CU_ASSERT_FATAL(tw__tag_set(&s->arena, t, key, &v, SIZE_MAX, &truncated));
    s->n_tags++;
}

static void add_event(tw__span_data *s, int64_t ts, const char *value)
{
    tw__log *l = tw__span_data_push_log(s, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
    bool truncated = false;
    CU_ASSERT_FATAL(tw__tag_set(&s->arena, &l->fields[0], "event", &v, SIZE_MAX, &truncated));
    l->n_fields = 1;
    l->timestamp_us = ts;
    s->n_logs++;
}

/* A record: @kind NULL for none. */
static tw__span_data *mk(uint64_t trace_hi, uint64_t trace_lo, uint64_t id, uint64_t parent,
                         const char *kind, const char *name, int64_t start_us, int64_t dur_us)
{
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    s->trace_id_high = trace_hi;
    s->trace_id_low = trace_lo;
    s->span_id = id;
    s->parent_id = parent;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = start_us;
    s->duration_us = dur_us;
    CU_ASSERT_FATAL(tw__span_data_set_operation(s, name, strlen(name)));
    if (kind)
        add_str_tag(s, "span.kind", kind);
    return s;
}

static twb_span sp(tw__span_data *d, const tw__process *p)
{
    return (twb_span){.data = d, .process = p};
}

/* What the assembler sent: every span (a reference each) and the group sizes. */
#define CAP 256
typedef struct capture {
    twb_span spans[CAP];
    size_t n;
    size_t groups[CAP];
    size_t n_groups;
    tw_status fail_with; /* TW_OK: accept */
    size_t calls;
} capture;

static tw_status on_group(void *arg, const twb_span *spans, size_t n, tw_error **err)
{
    capture *c = arg;
    c->calls++;
    if (c->fail_with != TW_OK) {
        tw__set_error(err, c->fail_with, "sink refused");
        return c->fail_with;
    }
    CU_ASSERT_FATAL(c->n + n <= CAP && c->n_groups < CAP);
    for (size_t i = 0; i < n; i++) {
        c->spans[c->n].data = tw__span_data_ref(spans[i].data);
        c->spans[c->n++].process = spans[i].process;
    }
    c->groups[c->n_groups++] = n;
    return TW_OK;
}

static void capture_clear(capture *c)
{
    for (size_t i = 0; i < c->n; i++)
        tw__span_data_unref(c->spans[i].data);
    memset(c, 0, sizeof(*c));
}

static twb_assembler *new_asm(size_t window, bool jaeger, bool skew, double sample, capture *c)
{
    memset(c, 0, sizeof(*c));
    twb_assemble_options o = {
        .window_spans = window, .jaeger_ids = jaeger, .skew_adjust = skew, .sample = sample};
    twb_assembler *a = twb_assembler_new(&o, on_group, c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    return a;
}

static void add_ok(twb_assembler *a, twb_span s)
{
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(twb_assembler_add(a, s, &err), TW_OK);
    CU_ASSERT_PTR_NULL(err);
    tw_error_free(err);
}

static void flush_ok(twb_assembler *a)
{
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(twb_assembler_flush(a, &err), TW_OK);
    CU_ASSERT_PTR_NULL(err);
    tw_error_free(err);
}

static const tw__span_data *find(const capture *c, uint64_t id, bool shared)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->spans[i].data->span_id == id && c->spans[i].data->shared == shared)
            return c->spans[i].data;
    }
    return NULL;
}

static const char *tag_str(const tw__span_data *s, const char *key)
{
    const tw__tag *t = tw__span_data_find_tag(s, key);
    return t && t->type == TW_VALUE_STRING ? t->v.str : NULL;
}

/* ---- grouping ----------------------------------------------------------------------------- */

static void test_pass_through_sends_each_trace_alone_in_order(void)
{
    capture c;
    twb_assembler *a = new_asm(0, false, false, 1.0, &c);
    tw__span_data *d1 = mk(0, 1, 10, 0, NULL, "one", 100, 5);
    tw__span_data *d2 = mk(0, 2, 20, 0, NULL, "two", 200, 5);
    tw__span_data *d3 = mk(0, 1, 30, 0, NULL, "three", 300, 5);
    add_ok(a, sp(d1, &process_a));
    CU_ASSERT_EQUAL(c.calls, 0); /* held until the trace changes */
    add_ok(a, sp(d2, &process_a));
    CU_ASSERT_EQUAL(c.calls, 1);
    add_ok(a, sp(d3, &process_b));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 3);
    CU_ASSERT_EQUAL(c.n_groups, 3);
    /* Nothing copied on the pass-through path: the very same records. */
    CU_ASSERT_PTR_EQUAL(c.spans[0].data, d1);
    CU_ASSERT_PTR_EQUAL(c.spans[1].data, d2);
    CU_ASSERT_PTR_EQUAL(c.spans[2].data, d3);
    CU_ASSERT_PTR_EQUAL(c.spans[2].process, &process_b);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.merged + st.duplicates + st.sampled_out + st.shared_ids, 0);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_pass_through_groups_one_records_halves(void)
{
    /* A Zipkin v1 record split in two: consecutive, same trace: one group,
     * so the server half gets its Jaeger id even without a window. */
    capture c;
    twb_assembler *a = new_asm(0, true, false, 1.0, &c);
    add_ok(a, sp(mk(0, 7, 0x55, 0x11, "client", "get", 1000, 100), &process_a));
    tw__span_data *server = mk(0, 7, 0x55, 0x11, "server", "get", 1010, 80);
    server->shared = true;
    add_ok(a, sp(server, &process_b));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n_groups, 1);
    CU_ASSERT_EQUAL(c.groups[0], 2);
    CU_ASSERT_EQUAL(c.spans[0].data->span_id, 0x55);
    CU_ASSERT_EQUAL(c.spans[1].data->span_id, twb_shared_span_id(0x55));
    CU_ASSERT_EQUAL(c.spans[1].data->parent_id, 0x55);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_window_lets_oldest_trace_go_whole(void)
{
    capture c;
    twb_assembler *a = new_asm(3, false, false, 1.0, &c);
    add_ok(a, sp(mk(0, 0xA, 1, 0, NULL, "a1", 1, 1), &process_a));
    add_ok(a, sp(mk(0, 0xB, 2, 0, NULL, "b1", 2, 1), &process_a));
    add_ok(a, sp(mk(0, 0xA, 3, 1, NULL, "a2", 3, 1), &process_a));
    CU_ASSERT_EQUAL(c.calls, 0); /* 3 held: the window is full, not over */
    add_ok(a, sp(mk(0, 0xC, 4, 0, NULL, "c1", 4, 1), &process_a));
    /* Over by one: trace A (first to arrive) goes, both its spans. */
    CU_ASSERT_EQUAL_FATAL(c.n_groups, 1);
    CU_ASSERT_EQUAL(c.groups[0], 2);
    CU_ASSERT_STRING_EQUAL(c.spans[0].data->operation, "a1");
    CU_ASSERT_STRING_EQUAL(c.spans[1].data->operation, "a2");
    add_ok(a, sp(mk(0, 0xB, 5, 2, NULL, "b2", 5, 1), &process_a));
    add_ok(a, sp(mk(0, 0xD, 6, 0, NULL, "d1", 6, 1), &process_a));
    CU_ASSERT_EQUAL_FATAL(c.n_groups, 2); /* B (older than C) went */
    CU_ASSERT_EQUAL(c.groups[1], 2);
    CU_ASSERT_STRING_EQUAL(c.spans[2].data->operation, "b1");
    CU_ASSERT_STRING_EQUAL(c.spans[3].data->operation, "b2");
    flush_ok(a); /* the rest in order of first arrival */
    CU_ASSERT_EQUAL_FATAL(c.n_groups, 4);
    CU_ASSERT_STRING_EQUAL(c.spans[4].data->operation, "c1");
    CU_ASSERT_STRING_EQUAL(c.spans[5].data->operation, "d1");
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_window_handles_many_traces(void)
{
    /* Table growth and slot reuse: 5000 traces of 2 spans through a window of 100. */
    size_t got = 0, groups = 0;
    capture c;
    twb_assembler *a = new_asm(100, false, false, 1.0, &c);
    for (uint64_t t = 1; t <= 5000; t++) {
        add_ok(a, sp(mk(0, t, 1, 0, NULL, "x", 1, 1), &process_a));
        add_ok(a, sp(mk(0, t, 2, 1, NULL, "y", 1, 1), &process_a));
        if (c.n > CAP / 2) {
            for (size_t g = 0; g < c.n_groups; g++)
                CU_ASSERT_EQUAL(c.groups[g], 2);
            got += c.n;
            groups += c.n_groups;
            capture_clear(&c);
        }
    }
    flush_ok(a);
    got += c.n;
    groups += c.n_groups;
    CU_ASSERT_EQUAL(got, 10000);
    CU_ASSERT_EQUAL(groups, 5000);
    twb_assembler_free(a);
    capture_clear(&c);
}

static uint64_t split_traces(const twb_assembler *a)
{
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    return st.split_traces;
}

static void test_split_traces_are_counted_once_each(void)
{
    /* Window of 2: A, B, C: A goes; A again: split (B goes); B again: split
     * (C goes). A's later parts join its held part, then start it anew
     * after it left again: A is still one split trace. */
    capture c;
    twb_assembler *a = new_asm(2, false, false, 1.0, &c);
    add_ok(a, sp(mk(0, 0xA, 1, 0, NULL, "a1", 1, 1), &process_a));
    add_ok(a, sp(mk(0, 0xB, 2, 0, NULL, "b1", 2, 1), &process_a));
    add_ok(a, sp(mk(0, 0xC, 3, 0, NULL, "c1", 3, 1), &process_a));
    CU_ASSERT_EQUAL(c.n_groups, 1);
    CU_ASSERT_EQUAL(split_traces(a), 0);
    add_ok(a, sp(mk(0, 0xA, 4, 1, NULL, "a2", 4, 1), &process_a));
    CU_ASSERT_EQUAL(split_traces(a), 1);
    add_ok(a, sp(mk(0, 0xB, 5, 2, NULL, "b2", 5, 1), &process_a));
    CU_ASSERT_EQUAL(split_traces(a), 2);
    add_ok(a, sp(mk(0, 0xA, 6, 1, NULL, "a3", 6, 1), &process_a)); /* joins a2 */
    add_ok(a, sp(mk(0, 0xD, 7, 0, NULL, "d1", 7, 1), &process_a));
    add_ok(a, sp(mk(0, 0xE, 8, 0, NULL, "e1", 8, 1), &process_a));
    add_ok(a, sp(mk(0, 0xA, 9, 1, NULL, "a4", 9, 1), &process_a)); /* A's third part */
    flush_ok(a);
    CU_ASSERT_EQUAL(split_traces(a), 2);
    CU_ASSERT_EQUAL(c.n, 9); /* nothing lost: the parts went out, each on its own */
    twb_assembler_free(a);
    capture_clear(&c);

    /* Pass-through: A B A splits A. */
    a = new_asm(0, false, false, 1.0, &c);
    add_ok(a, sp(mk(0, 0xA, 1, 0, NULL, "a1", 1, 1), &process_a));
    add_ok(a, sp(mk(0, 0xB, 2, 0, NULL, "b1", 2, 1), &process_a));
    CU_ASSERT_EQUAL(split_traces(a), 0);
    add_ok(a, sp(mk(0, 0xA, 3, 1, NULL, "a2", 3, 1), &process_a));
    CU_ASSERT_EQUAL(split_traces(a), 1);
    flush_ok(a);
    twb_assembler_free(a);
    capture_clear(&c);
}

static tw_status count_spans(void *arg, const twb_span *spans, size_t n, tw_error **err)
{
    (void)spans;
    (void)err;
    *(size_t *)arg += n;
    return TW_OK;
}

static void test_trace_longer_than_a_group_is_split(void)
{
    /* A pass-through group ends at 1024 spans; a window lets a trace go
     * when it holds one span more than window_spans. */
    for (size_t window = 0; window <= 1000; window += 1000) {
        size_t sent = 0, whole = window ? window + 1 : 1024;
        twb_assemble_options o = {.window_spans = window, .sample = 1.0};
        twb_assembler *a = twb_assembler_new(&o, count_spans, &sent);
        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        for (uint64_t i = 0; i < whole; i++)
            add_ok(a, sp(mk(0, 0xF, 100 + i, 0, NULL, "long", 1, 1), &process_a));
        CU_ASSERT_EQUAL(split_traces(a), 0);
        add_ok(a, sp(mk(0, 0xF, 99, 0, NULL, "long", 1, 1), &process_a));
        flush_ok(a);
        CU_ASSERT_EQUAL(split_traces(a), 1);
        CU_ASSERT_EQUAL(sent, whole + 1);
        twb_assembler_free(a);
    }
}

/* Pass-through: trace 1, then @others traces, then trace 1 again: split? */
static uint64_t split_after(uint64_t others)
{
    capture c;
    twb_assembler *a = new_asm(0, false, false, 1.0, &c);
    for (uint64_t t = 1; t <= others + 2; t++) {
        uint64_t trace = t == others + 2 ? 1 : t;
        add_ok(a, sp(mk(0, trace, 1, 0, NULL, "x", 1, 1), &process_a));
        if (c.n > CAP / 2)
            capture_clear(&c);
    }
    flush_ok(a);
    uint64_t split = split_traces(a);
    twb_assembler_free(a);
    capture_clear(&c);
    return split;
}

static void test_split_traces_are_remembered_for_16384_traces(void)
{
    /* The set of traces sent holds 16384 ids, first in first out. */
    CU_ASSERT_EQUAL(split_after(16383), 1);
    CU_ASSERT_EQUAL(split_after(16384), 0); /* forgotten: the count is a lower bound */
}

static void test_free_releases_held_spans(void)
{
    capture c;
    twb_assembler *a = new_asm(10, false, false, 1.0, &c);
    add_ok(a, sp(mk(0, 1, 1, 0, NULL, "held", 1, 1), &process_a));
    twb_assembler *b = new_asm(0, false, false, 1.0, &c);
    add_ok(b, sp(mk(0, 1, 1, 0, NULL, "held", 1, 1), &process_a));
    twb_assembler_free(a); /* valgrind: nothing leaks */
    twb_assembler_free(b);
    CU_ASSERT_EQUAL(c.calls, 0);
    twb_assembler_free(NULL);
}

/* ---- duplicates and merging ---------------------------------------------------------------- */

static void test_exact_duplicates_are_dropped_and_counted(void)
{
    capture c;
    twb_assembler *a = new_asm(100, false, false, 1.0, &c);
    for (int i = 0; i < 3; i++) {
        tw__span_data *d = mk(0, 9, 0x42, 0x41, "server", "op", 500, 20);
        add_str_tag(d, "http.path", "/x");
        add_event(d, 505, "wr");
        add_ok(a, sp(d, &process_b));
    }
    /* Same everything but the process: not a duplicate, and not mergeable
     * (a conflicting service): passes. */
    tw__span_data *other = mk(0, 9, 0x42, 0x41, "server", "op", 500, 20);
    add_str_tag(other, "http.path", "/x");
    add_event(other, 505, "wr");
    add_ok(a, sp(other, &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL(c.n, 2);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.duplicates, 2);
    CU_ASSERT_EQUAL(st.merged, 0);
    CU_ASSERT_PTR_EQUAL(c.spans[0].process, &process_b);
    CU_ASSERT_PTR_EQUAL(c.spans[1].process, &process_a);
    twb_assembler_free(a);
    capture_clear(&c);
}

/* Groups of every size around the sort's limit (64: an insertion sort
 * below, qsort above), with span ids in random and in ascending order and
 * exact duplicates late in the group: the same survivors, in arrival order,
 * whichever sort ran. */
static void check_group_of(size_t n, bool ascending)
{
    capture c;
    twb_assembler *a = new_asm(1000, false, false, 1.0, &c);
    uint64_t ids[128];
    CU_ASSERT_FATAL(n <= 128);
    uint64_t x = 0x9e3779b97f4a7c15ull ^ n;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        ids[i] = ascending ? 0x1000 + i : (x | 1) ^ (uint64_t)i << 56; /* distinct */
    }
    size_t dups = 0;
    for (size_t i = 0; i < n; i++) {
        add_ok(a, sp(mk(0, 7, ids[i], 0, "server", "op", 100 + (int64_t)i, 5), &process_b));
        if (i % 5 == 4) { /* an exact copy of an earlier record */
            size_t j = i / 2;
            add_ok(a, sp(mk(0, 7, ids[j], 0, "server", "op", 100 + (int64_t)j, 5), &process_b));
            dups++;
        }
    }
    flush_ok(a);
    CU_ASSERT_EQUAL(c.n, n);
    for (size_t i = 0; i < c.n && i < n; i++)
        CU_ASSERT_EQUAL(c.spans[i].data->span_id, ids[i]);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.duplicates, dups);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_groups_of_every_size_keep_arrival_order(void)
{
    static const size_t sizes[] = {2, 3, 17, 51, 52, 53, 54, 55, 64, 65, 100, 128};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        check_group_of(sizes[k], false);
        check_group_of(sizes[k], true);
    }
}

static void test_parts_of_one_span_merge(void)
{
    capture c;
    twb_assembler *a = new_asm(100, false, false, 1.0, &c);
    /* Part 1: kind-less, no timing, some tags and an annotation. */
    tw__span_data *p1 = mk(0, 5, 0x77, 0, NULL, "", 0, 0);
    add_str_tag(p1, "http.path", "/old");
    add_str_tag(p1, "a", "1");
    add_event(p1, 1200, "retry");
    add_event(p1, 1100, "cache.miss");
    /* An unrelated span between the parts. */
    add_ok(a, sp(p1, &process_b_ip));
    add_ok(a, sp(mk(0, 5, 0x99, 0x77, NULL, "child", 1150, 10), &process_b));
    /* Part 2: the client with name, timing, parent; a newer value for
     * http.path and the same annotation again. */
    tw__span_data *p2 = mk(0, 5, 0x77, 0x10, "client", "get /x", 1000, 300);
    add_str_tag(p2, "http.path", "/new");
    add_str_tag(p2, "peer.service", "db");
    add_event(p2, 1100, "cache.miss");
    p2->flags |= TW__FLAG_DEBUG;
    add_ok(a, sp(p2, &process_b));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 2);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.merged, 1);
    /* The merged span takes the first part's place (arrival order). */
    const tw__span_data *m = c.spans[0].data;
    CU_ASSERT_EQUAL(m->span_id, 0x77);
    CU_ASSERT_STRING_EQUAL(m->operation, "get /x");
    CU_ASSERT_EQUAL(m->start_us, 1000);
    CU_ASSERT_EQUAL(m->duration_us, 300);
    CU_ASSERT_EQUAL(m->parent_id, 0x10);
    CU_ASSERT_EQUAL(m->flags, TW__FLAG_SAMPLED | TW__FLAG_DEBUG);
    CU_ASSERT_STRING_EQUAL(tag_str(m, "span.kind"), "client");
    CU_ASSERT_STRING_EQUAL(tag_str(m, "peer.service"), "db");
    CU_ASSERT_STRING_EQUAL(tag_str(m, "a"), "1");
    /* CLIENT first in Zipkin's order: the kind-less part's value is later and wins. */
    CU_ASSERT_STRING_EQUAL(tag_str(m, "http.path"), "/old");
    CU_ASSERT_EQUAL(m->n_tags, 4);
    /* Logs: union, equal ones once, by timestamp. */
    CU_ASSERT_EQUAL_FATAL(m->n_logs, 2);
    CU_ASSERT_EQUAL(m->logs[0].timestamp_us, 1100);
    CU_ASSERT_EQUAL(m->logs[1].timestamp_us, 1200);
    /* The process with the more complete endpoint. */
    CU_ASSERT_PTR_EQUAL(c.spans[0].process, &process_b);
    CU_ASSERT_STRING_EQUAL(c.spans[1].data->operation, "child");
    twb_assembler_free(a);
    capture_clear(&c);
}

/* The merged duration does not depend on which part came first: a part
 * whose duration is unknown takes the known one, and the result is known. */
static void test_merge_takes_known_duration_in_either_order(void)
{
    for (int order = 0; order < 2; order++) {
        capture c;
        twb_assembler *a = new_asm(100, false, false, 1.0, &c);
        tw__span_data *timeless = mk(0, 5, 0x77, 0x10, NULL, "get /x", 0, 0);
        timeless->is_duration_unknown = true;
        tw__span_data *timed = mk(0, 5, 0x77, 0x10, NULL, "get /x", 1000, 300);
        add_str_tag(timed, "http.path", "/x");
        add_ok(a, sp(order == 0 ? timeless : timed, &process_b));
        add_ok(a, sp(order == 0 ? timed : timeless, &process_b));
        flush_ok(a);
        CU_ASSERT_EQUAL_FATAL(c.n, 1);
        const tw__span_data *m = c.spans[0].data;
        CU_ASSERT_EQUAL(m->start_us, 1000);
        CU_ASSERT_EQUAL(m->duration_us, 300);
        CU_ASSERT_FALSE(m->is_duration_unknown);
        twb_assembler_free(a);
        capture_clear(&c);
    }
}

static void test_late_fragment_joins_the_shared_server(void)
{
    /* smartthings-mobile-web-install's 3-record ids: a kind-less fragment
     * with no timing on the server's endpoint, the shared SERVER, the CLIENT. */
    capture c;
    twb_assembler *a = new_asm(0, true, false, 1.0, &c);
    tw__span_data *fragment = mk(0, 2, 0xa0, 0xcf, NULL, "post", 0, 0);
    add_event(fragment, 2000, "flush");
    add_ok(a, sp(fragment, &process_b));
    tw__span_data *server = mk(0, 2, 0xa0, 0xcf, "server", "post", 1100, 500);
    server->shared = true;
    add_ok(a, sp(server, &process_b));
    add_ok(a, sp(mk(0, 2, 0xa0, 0xcf, "client", "post /x", 1000, 700), &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 2);
    const tw__span_data *s = c.spans[0].data; /* at the fragment's place */
    CU_ASSERT_EQUAL(s->span_id, twb_shared_span_id(0xa0));
    CU_ASSERT_EQUAL(s->start_us, 1100);
    CU_ASSERT_EQUAL(s->n_logs, 1);
    CU_ASSERT_STRING_EQUAL(tag_str(s, "span.kind"), "server");
    CU_ASSERT_EQUAL(c.spans[1].data->span_id, 0xa0);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.merged, 1);
    CU_ASSERT_EQUAL(st.shared_ids, 1);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_incompatible_parts_do_not_merge(void)
{
    capture c;
    twb_assembler *a = new_asm(100, false, false, 1.0, &c);
    /* Conflicting kinds on the same host (a loopback call without shared). */
    add_ok(a, sp(mk(0, 3, 0x5, 0x1, "client", "rpc", 10, 50), &process_a));
    add_ok(a, sp(mk(0, 3, 0x5, 0x1, "server", "rpc", 20, 30), &process_a));
    /* Conflicting parents. */
    add_ok(a, sp(mk(0, 3, 0x6, 0x1, NULL, "x", 10, 5), &process_a));
    add_ok(a, sp(mk(0, 3, 0x6, 0x2, NULL, "x", 0, 0), &process_a));
    /* Shared and not shared. */
    tw__span_data *s = mk(0, 3, 0x7, 0x1, NULL, "y", 0, 0);
    s->shared = true;
    add_ok(a, sp(mk(0, 3, 0x7, 0x1, NULL, "y", 10, 5), &process_a));
    add_ok(a, sp(s, &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL(c.n, 6);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.merged, 0);
    CU_ASSERT_EQUAL(st.duplicates, 0);
    /* The loopback server after its client is marked shared (backfill). */
    const tw__span_data *server = find(&c, 0x5, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_STRING_EQUAL(tag_str(server, "span.kind"), "server");
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_longest_trace_id_applies_to_every_span(void)
{
    capture c;
    twb_assembler *a = new_asm(100, false, false, 1.0, &c);
    tw__span_data *short_id = mk(0, 0xabc, 1, 0, NULL, "root", 1, 1);
    tw__span_data *child = mk(0, 0xabc, 3, 1, NULL, "c", 1, 1);
    CU_ASSERT_FATAL(tw__span_data_add_ref(child, TW__REF_FOLLOWS_FROM, 0, 0xabc, 1));
    add_ok(a, sp(short_id, &process_a));
    add_ok(a, sp(mk(0x1234, 0xabc, 2, 1, NULL, "long", 1, 1), &process_a));
    add_ok(a, sp(child, &process_a));
    /* Another 128-bit trace with the same low half: a different trace. */
    add_ok(a, sp(mk(0x9999, 0xabc, 4, 0, NULL, "other", 1, 1), &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n_groups, 2);
    CU_ASSERT_EQUAL(c.groups[0], 3);
    for (size_t i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(c.spans[i].data->trace_id_high, 0x1234);
    CU_ASSERT_EQUAL(c.spans[2].data->refs[0].trace_id_high, 0x1234);
    CU_ASSERT_EQUAL(c.spans[3].data->trace_id_high, 0x9999);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_records_held_elsewhere_are_copied_not_changed(void)
{
    capture c;
    twb_assembler *a = new_asm(100, false, false, 1.0, &c);
    tw__span_data *mine = mk(0, 0xabc, 1, 0, NULL, "root", 1, 1);
    tw__span_data_ref(mine); /* the test keeps a reference */
    add_ok(a, sp(mine, &process_a));
    add_ok(a, sp(mk(0x1234, 0xabc, 2, 1, NULL, "long", 1, 1), &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL(mine->trace_id_high, 0);
    CU_ASSERT_PTR_NOT_EQUAL(c.spans[0].data, mine);
    CU_ASSERT_EQUAL(c.spans[0].data->trace_id_high, 0x1234);
    CU_ASSERT_STRING_EQUAL(c.spans[0].data->operation, "root");
    tw__span_data_unref(mine);
    twb_assembler_free(a);
    capture_clear(&c);
}

/* ---- shared spans ------------------------------------------------------------------------ */

static void test_server_after_client_is_backfilled_shared(void)
{
    capture c;
    twb_assembler *a = new_asm(100, false, false, 1.0, &c);
    /* Server first in arrival, no shared flag, no parent. */
    add_ok(a, sp(mk(0, 4, 0x20, 0, "server", "get", 110, 50), &process_b));
    add_ok(a, sp(mk(0, 4, 0x20, 0x10, "client", "get", 100, 80), &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 2);
    CU_ASSERT_TRUE(c.spans[0].data->shared);
    CU_ASSERT_EQUAL(c.spans[0].data->parent_id, 0x10); /* inherited from the client */
    CU_ASSERT_FALSE(c.spans[1].data->shared);
    twb_assembler_free(a);
    capture_clear(&c);
}

/* The same in groups on both sides of the sort's limit (an insertion sort
 * up to 64 parts, qsort above): the kinds that order the parts of 0x20 are
 * looked up only where parts share an id, whichever sort runs. */
static void test_backfill_in_groups_of_every_size(void)
{
    static const size_t others[] = {0, 10, 62, 63, 64, 100};
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        capture c;
        twb_assembler *a = new_asm(1000, false, false, 1.0, &c);
        for (size_t i = 0; i < others[k] / 2; i++)
            add_ok(a, sp(mk(0, 4, 0x1000 + i, 0x20, "client", "call", 120, 5), &process_b));
        add_ok(a, sp(mk(0, 4, 0x20, 0, "server", "get", 110, 50), &process_b));
        for (size_t i = others[k] / 2; i < others[k]; i++)
            add_ok(a, sp(mk(0, 4, 0x1000 + i, 0x20, "client", "call", 120, 5), &process_b));
        add_ok(a, sp(mk(0, 4, 0x20, 0x10, "client", "get", 100, 80), &process_a));
        flush_ok(a);
        CU_ASSERT_EQUAL_FATAL(c.n, others[k] + 2);
        const tw__span_data *server = c.spans[others[k] / 2].data;
        CU_ASSERT_EQUAL(server->span_id, 0x20);
        CU_ASSERT_TRUE(server->shared);
        CU_ASSERT_EQUAL(server->parent_id, 0x10);
        CU_ASSERT_FALSE(c.spans[others[k] + 1].data->shared);
        twb_assembler_free(a);
        capture_clear(&c);
    }
}

/* Client A:0x20 (parent 0x10), shared server B:0x20, children of 0x20 on
 * each side, a grandchild under the server's child. */
static void add_rpc_trace(twb_assembler *a)
{
    add_ok(a, sp(mk(0, 4, 0x20, 0x10, "client", "get", 100, 80), &process_a));
    tw__span_data *server = mk(0, 4, 0x20, 0x10, "server", "get", 110, 50);
    server->shared = true;
    add_ok(a, sp(server, &process_b));
    tw__span_data *on_server = mk(0, 4, 0x30, 0x20, NULL, "db", 120, 10);
    CU_ASSERT_FATAL(tw__span_data_add_ref(on_server, TW__REF_CHILD_OF, 0, 4, 0x20));
    add_ok(a, sp(on_server, &process_b));
    add_ok(a, sp(mk(0, 4, 0x31, 0x20, NULL, "retry-timer", 170, 5), &process_a));
    add_ok(a, sp(mk(0, 4, 0x40, 0x30, NULL, "query", 121, 5), &process_b));
}

static void test_jaeger_ids_give_shared_server_own_id_and_children(void)
{
    capture c;
    twb_assembler *a = new_asm(100, true, false, 1.0, &c);
    add_rpc_trace(a);
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 5);
    uint64_t new_id = twb_shared_span_id(0x20);
    CU_ASSERT_NOT_EQUAL(new_id, 0);
    CU_ASSERT_NOT_EQUAL(new_id, 0x20);
    const tw__span_data *client = c.spans[0].data, *server = c.spans[1].data;
    CU_ASSERT_EQUAL(client->span_id, 0x20);
    CU_ASSERT_EQUAL(client->parent_id, 0x10);
    CU_ASSERT_EQUAL(server->span_id, new_id);
    CU_ASSERT_EQUAL(server->parent_id, 0x20);
    CU_ASSERT_FALSE(server->shared);
    /* The server-side child moves (reference too); the client-side one stays. */
    CU_ASSERT_EQUAL(c.spans[2].data->parent_id, new_id);
    CU_ASSERT_EQUAL(c.spans[2].data->refs[0].span_id, new_id);
    CU_ASSERT_EQUAL(c.spans[3].data->parent_id, 0x20);
    CU_ASSERT_EQUAL(c.spans[4].data->parent_id, 0x30); /* grandchild untouched */
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.shared_ids, 1);
    CU_ASSERT_EQUAL(st.reparented, 1);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_jaeger_ids_are_deterministic_and_skip_used_ids(void)
{
    /* Documented derivation: the first splitmix64 output seeded with the id. */
    CU_ASSERT_EQUAL(twb_shared_span_id(0x74280ae0c10d8062ull), 0x48188fff2bd75cb4ull);
    /* Arrival order does not change the id. */
    capture c;
    twb_assembler *a = new_asm(100, true, false, 1.0, &c);
    tw__span_data *server = mk(0, 4, 0x20, 0x10, "server", "get", 110, 50);
    server->shared = true;
    add_ok(a, sp(server, &process_b));
    add_ok(a, sp(mk(0, 4, 0x20, 0x10, "client", "get", 100, 80), &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 2);
    CU_ASSERT_EQUAL(c.spans[0].data->span_id, twb_shared_span_id(0x20));
    capture_clear(&c);
    twb_assembler_free(a);
    /* A span already using the first candidate: the next one is taken. */
    a = new_asm(100, true, false, 1.0, &c);
    uint64_t first = twb_shared_span_id(0x20);
    add_ok(a, sp(mk(0, 4, 0x20, 0x10, "client", "get", 100, 80), &process_a));
    server = mk(0, 4, 0x20, 0x10, "server", "get", 110, 50);
    server->shared = true;
    add_ok(a, sp(server, &process_b));
    add_ok(a, sp(mk(0, 4, first, 0x10, NULL, "squatter", 100, 1), &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 3);
    CU_ASSERT_NOT_EQUAL(c.spans[1].data->span_id, first);
    CU_ASSERT_NOT_EQUAL(c.spans[1].data->span_id, 0x20);
    CU_ASSERT_NOT_EQUAL(c.spans[1].data->span_id, 0);
    CU_ASSERT_EQUAL(c.spans[2].data->span_id, first);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_shared_server_without_client_keeps_its_id(void)
{
    capture c;
    twb_assembler *a = new_asm(100, true, false, 1.0, &c);
    tw__span_data *server = mk(0, 4, 0x20, 0x10, "server", "get", 110, 50);
    server->shared = true;
    add_ok(a, sp(server, &process_b));
    add_ok(a, sp(mk(0, 4, 0x30, 0x20, NULL, "db", 120, 10), &process_b));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 2);
    CU_ASSERT_EQUAL(c.spans[0].data->span_id, 0x20);
    CU_ASSERT_EQUAL(c.spans[0].data->parent_id, 0x10);
    CU_ASSERT_EQUAL(c.spans[1].data->parent_id, 0x20);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.shared_ids + st.reparented, 0);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_without_jaeger_ids_shared_spans_keep_ids(void)
{
    capture c;
    twb_assembler *a = new_asm(100, false, false, 1.0, &c);
    add_rpc_trace(a);
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 5);
    CU_ASSERT_EQUAL(c.spans[1].data->span_id, 0x20);
    CU_ASSERT_TRUE(c.spans[1].data->shared);
    CU_ASSERT_EQUAL(c.spans[2].data->parent_id, 0x20);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_orphans_pass_unchanged(void)
{
    capture c;
    twb_assembler *a = new_asm(100, true, true, 1.0, &c);
    add_ok(a, sp(mk(0, 8, 0x2, 0x1234, "server", "orphan", 50, 10), &process_b));
    add_ok(a, sp(mk(0, 8, 0x3, 0x5678, "client", "orphan2", 10, 100), &process_a));
    add_ok(a, sp(mk(0, 8, 0x4, 0x4, NULL, "self-parent", 10, 100), &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 3);
    CU_ASSERT_EQUAL(c.spans[0].data->parent_id, 0x1234);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 50);
    CU_ASSERT_EQUAL(c.spans[1].data->parent_id, 0x5678);
    CU_ASSERT_EQUAL(c.spans[2].data->parent_id, 0x4);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.skew_adjusted + st.reparented + st.merged, 0);
    twb_assembler_free(a);
    capture_clear(&c);
}

/* ---- clock skew ---------------------------------------------------------------------------- */

/* The facts of openzipkin zipkin-lens/testdata/skew.json (INDEX.md #25), in
 * file order: the async child, the shared SERVER post on serviceb (starts
 * ~65 ms before its client), the root SERVER get, the CLIENT post. */
static void add_skew_fixture(twb_assembler *a)
{
    FILE *f = fopen(TW_REAL_FIXTURES "/openzipkin__zipkin/zipkin-lens__testdata__skew.json", "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f); /* the facts below are this file's */
    char buf[2048];
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    buf[len] = '\0';
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"timestamp\": 1470150004008761"));
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\"timestamp\": 1470150004074202"));
    const uint64_t trace = 0x1e223ff1f80f1c69ull;
    add_ok(a, sp(mk(0, trace, 0x43210ae0c10d1234ull, 0x74280ae0c10d8062ull, NULL, "async",
                    1470150004008762, 65000),
                 &process_b));
    tw__span_data *server = mk(0, trace, 0x74280ae0c10d8062ull, 0xbf396325699c84bfull, "server",
                               "post", 1470150004008761, 93577);
    server->shared = true;
    add_event(server, 1470150004008761, "sr");
    add_ok(a, sp(server, &process_b));
    add_ok(a, sp(mk(0, trace, 0xbf396325699c84bfull, 0, "server", "get", 1470150004071068, 99411),
                 &process_a));
    add_ok(a, sp(mk(0, trace, 0x74280ae0c10d8062ull, 0xbf396325699c84bfull, "client", "post",
                    1470150004074202, 94539),
                 &process_a));
}

static void test_skew_moves_server_and_its_host_descendants(void)
{
    capture c;
    twb_assembler *a = new_asm(100, false, true, 1.0, &c);
    add_skew_fixture(a);
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 4);
    /* delta = client.start + (94539 - 93577) / 2 - server.start = 65922 */
    const int64_t delta = 1470150004074202 + 481 - 1470150004008761;
    CU_ASSERT_EQUAL(delta, 65922);
    CU_ASSERT_EQUAL(c.spans[1].data->start_us, 1470150004008761 + delta);
    CU_ASSERT_EQUAL(c.spans[1].data->logs[0].timestamp_us, 1470150004008761 + delta);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 1470150004008762 + delta); /* same host */
    CU_ASSERT_EQUAL(c.spans[2].data->start_us, 1470150004071068);         /* root */
    CU_ASSERT_EQUAL(c.spans[3].data->start_us, 1470150004074202);         /* client */
    /* Now the server fits inside its client: Dapper's guarantee. */
    CU_ASSERT(c.spans[1].data->start_us >= c.spans[3].data->start_us);
    CU_ASSERT(c.spans[1].data->start_us + c.spans[1].data->duration_us <=
              c.spans[3].data->start_us + c.spans[3].data->duration_us);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.skew_adjusted, 2);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_skew_with_jaeger_ids_follows_new_parents(void)
{
    capture c;
    twb_assembler *a = new_asm(0, true, true, 1.0, &c); /* one trace in a row: one group */
    add_skew_fixture(a);
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 4);
    uint64_t new_id = twb_shared_span_id(0x74280ae0c10d8062ull);
    CU_ASSERT_EQUAL(c.spans[1].data->span_id, new_id);
    CU_ASSERT_EQUAL(c.spans[0].data->parent_id, new_id); /* async: same endpoint as server */
    CU_ASSERT_EQUAL(c.spans[1].data->start_us, 1470150004008761 + 65922);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 1470150004008762 + 65922);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.skew_adjusted, 2);
    CU_ASSERT_EQUAL(st.shared_ids, 1);
    CU_ASSERT_EQUAL(st.reparented, 1);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_skew_is_off_by_default_and_leaves_fitting_servers(void)
{
    capture c;
    twb_assembler *a = new_asm(100, false, false, 1.0, &c);
    add_skew_fixture(a);
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 4);
    CU_ASSERT_EQUAL(c.spans[1].data->start_us, 1470150004008761);
    capture_clear(&c);
    twb_assembler_free(a);
    /* A server that fits, one on the same host, and a longer server that
     * starts early (moved only to the client's start). */
    a = new_asm(100, false, true, 1.0, &c);
    add_ok(a, sp(mk(0, 6, 0x1, 0, "client", "fits", 1000, 100), &process_a));
    add_ok(a, sp(mk(0, 6, 0x2, 0x1, "server", "fits", 1010, 50), &process_b));
    add_ok(a, sp(mk(0, 6, 0x3, 0, "client", "same-host", 1000, 100), &process_a));
    add_ok(a, sp(mk(0, 6, 0x4, 0x3, "server", "same-host", 900, 50), &process_a));
    add_ok(a, sp(mk(0, 6, 0x5, 0, "client", "long", 1000, 100), &process_a));
    add_ok(a, sp(mk(0, 6, 0x6, 0x5, "server", "long", 700, 300), &process_b));
    add_ok(a, sp(mk(0, 6, 0x7, 0x5, "server", "long-late", 1200, 300), &process_b));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 7);
    CU_ASSERT_EQUAL(c.spans[1].data->start_us, 1010);
    CU_ASSERT_EQUAL(c.spans[3].data->start_us, 900);
    CU_ASSERT_EQUAL(c.spans[5].data->start_us, 1000);
    CU_ASSERT_EQUAL(c.spans[6].data->start_us, 1200);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    CU_ASSERT_EQUAL(st.skew_adjusted, 1);
    twb_assembler_free(a);
    capture_clear(&c);
}

/* Reads a real zipkin-v2-json fixture through the bridge's reader into @a. */
typedef struct read_ctx {
    twb_procs *procs;
    twb_assembler *a;
    size_t read, rejects;
} read_ctx;

static bool read_emit(twb_input *in, tw__span_data *span, const tw__process *process)
{
    read_ctx *r = in->user_data;
    const tw__process *p = twb_procs_intern(r->procs, process);
    if (!p) {
        tw__span_data_unref(span);
        return false;
    }
    r->read++;
    return twb_assembler_add(r->a, sp(span, p), NULL) == TW_OK;
}

static bool read_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                        const char *reason)
{
    (void)line_no, (void)raw, (void)raw_len, (void)reason;
    ((read_ctx *)in->user_data)->rejects++;
    return true;
}

static void read_warn(twb_input *in, size_t line_no, const char *reason)
{
    (void)in, (void)line_no, (void)reason;
}

static void read_fixture(read_ctx *r, const char *path)
{
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    twb_options opts = {.max_value_bytes = SIZE_MAX};
    twb_input in = {.name = path,
                    .opts = &opts,
                    .emit = read_emit,
                    .reject = read_reject,
                    .warn = read_warn,
                    .user_data = r};
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(twb_reader_zipkin_v2_json.read(f, &in, &err), TW_OK);
    tw_error_free(err);
    fclose(f);
    CU_ASSERT_EQUAL(r->rejects, 0);
}

static void test_skew_fixture_through_the_reader(void)
{
    capture c;
    read_ctx r = {.procs = twb_procs_new()};
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.procs);
    r.a = new_asm(1000, true, true, 1.0, &c);
    read_fixture(&r, TW_REAL_FIXTURES "/openzipkin__zipkin/zipkin-lens__testdata__skew.json");
    flush_ok(r.a);
    CU_ASSERT_EQUAL(r.read, 4);
    CU_ASSERT_EQUAL_FATAL(c.n, 4);
    const tw__span_data *server = find(&c, twb_shared_span_id(0x74280ae0c10d8062ull), false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_EQUAL(server->start_us, 1470150004008761 + 65922);
    CU_ASSERT_EQUAL(server->parent_id, 0x74280ae0c10d8062ull);
    const tw__span_data *async = find(&c, 0x43210ae0c10d1234ull, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(async);
    CU_ASSERT_EQUAL(async->parent_id, server->span_id);
    CU_ASSERT_EQUAL(async->start_us, 1470150004008762 + 65922);
    twb_assemble_stats st;
    twb_assembler_stats(r.a, &st);
    CU_ASSERT_EQUAL(st.skew_adjusted, 2);
    CU_ASSERT_EQUAL(st.shared_ids, 1);
    CU_ASSERT_EQUAL(st.reparented, 1);
    twb_assembler_free(r.a);
    twb_procs_free(r.procs);
    capture_clear(&c);
}

/* The largest real trace: 1041 records, 663 ids, CLIENT+SERVER+kind-less
 * fragments. Every span id comes out at most once for a Jaeger target, and
 * no span is lost except merged parts and duplicates. */
static tw_status count_group(void *arg, const twb_span *spans, size_t n, tw_error **err)
{
    (void)err;
    uint64_t *ids = arg;
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_FATAL(ids[0] < 2000);
        ids[++ids[0]] = spans[i].data->span_id;
    }
    return TW_OK;
}

static int u64_cmp(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static void test_real_trace_has_unique_ids_for_jaeger(void)
{
    static uint64_t ids[2001];
    ids[0] = 0;
    read_ctx r = {.procs = twb_procs_new()};
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.procs);
    twb_assemble_options o = {.window_spans = 100000, .jaeger_ids = true, .sample = 1.0};
    r.a = twb_assembler_new(&o, count_group, ids);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r.a);
    read_fixture(&r, TW_REAL_FIXTURES
                 "/openzipkin__zipkin/zipkin-lens__testdata__smartthings-mobile-web-install.json");
    flush_ok(r.a);
    twb_assemble_stats st;
    twb_assembler_stats(r.a, &st);
    CU_ASSERT_EQUAL(r.read, 1041);
    CU_ASSERT_EQUAL(ids[0] + st.merged + st.duplicates, r.read);
    CU_ASSERT(st.merged > 0);
    CU_ASSERT(st.shared_ids >= 205);
    qsort(ids + 1, ids[0], sizeof(uint64_t), u64_cmp);
    size_t repeats = 0;
    for (uint64_t i = 2; i <= ids[0]; i++)
        repeats += ids[i] == ids[i - 1];
    CU_ASSERT_EQUAL(repeats, 0);
    twb_assembler_free(r.a);
    twb_procs_free(r.procs);
}

/* ---- sampling ------------------------------------------------------------------------------ */

static void test_sampling_hash_has_documented_vector(void)
{
    CU_ASSERT_EQUAL(twb_trace_hash(0, 1), 0x910a2dec89025cc1ull);
    /* The high half does not change the decision (64- and 128-bit forms). */
    CU_ASSERT_EQUAL(twb_trace_hash(0xdeadbeef, 1), twb_trace_hash(0, 1));
    /* 0x910a2dec89025cc1 >> 11 / 2^53 = 0.56656...: kept at 0.57, dropped at 0.56. */
    CU_ASSERT_TRUE(twb_trace_sampled(0, 1, 0.57));
    CU_ASSERT_FALSE(twb_trace_sampled(0, 1, 0.56));
    CU_ASSERT_TRUE(twb_trace_sampled(0, 1, 1.0));
    CU_ASSERT_FALSE(twb_trace_sampled(0, 1, 0.0));
}

static void test_sampling_keeps_the_fraction(void)
{
    uint64_t state = 0x1234567;
    size_t kept = 0;
    const size_t total = 100000;
    for (size_t i = 0; i < total; i++) {
        /* xorshift64: ids independent of the hash under test */
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        kept += twb_trace_sampled(0, state, 0.1);
    }
    double frac = (double)kept / (double)total;
    CU_ASSERT(frac > 0.095 && frac < 0.105);
    /* Sequential ids, as legacy decimal logs have: the hash spreads them too. */
    kept = 0;
    for (uint64_t id = 1; id <= total; id++)
        kept += twb_trace_sampled(0, id, 0.1);
    frac = (double)kept / (double)total;
    CU_ASSERT(frac > 0.095 && frac < 0.105);
}

static void test_sampling_drops_whole_traces_and_keeps_debug(void)
{
    /* Trace 1: hash 0.566 -> dropped at 0.5; trace 0x1e223ff1f80f1c69: 0.981, dropped. */
    capture c;
    twb_assembler *a = new_asm(2, false, false, 0.5, &c);
    add_ok(a, sp(mk(0, 1, 1, 0, NULL, "a", 1, 1), &process_a));
    add_ok(a, sp(mk(0, 1, 2, 1, NULL, "b", 1, 1), &process_a));
    /* A debug trace whose hash says drop: kept, and its later part too. */
    tw__span_data *dbg = mk(0, 0x1e223ff1f80f1c69ull, 1, 0, NULL, "debug", 1, 1);
    dbg->flags |= TW__FLAG_DEBUG;
    add_ok(a, sp(dbg, &process_a));
    add_ok(a, sp(mk(0, 0x1e223ff1f80f1c69ull, 2, 1, NULL, "x", 1, 1), &process_a));
    add_ok(a, sp(mk(0, 77, 1, 0, NULL, "other", 1, 1), &process_a));
    add_ok(a, sp(mk(0, 78, 1, 0, NULL, "other", 1, 1), &process_a));
    /* Window of 2: the debug trace went out already; this part comes alone. */
    add_ok(a, sp(mk(0, 0x1e223ff1f80f1c69ull, 3, 1, NULL, "later", 1, 1), &process_a));
    flush_ok(a);
    size_t debug_spans = 0;
    for (size_t i = 0; i < c.n; i++) {
        CU_ASSERT_NOT_EQUAL(c.spans[i].data->trace_id_low, 1);
        debug_spans += c.spans[i].data->trace_id_low == 0x1e223ff1f80f1c69ull;
    }
    CU_ASSERT_EQUAL(debug_spans, 3);
    twb_assemble_stats st;
    twb_assembler_stats(a, &st);
    size_t others = c.n - debug_spans;
    CU_ASSERT_EQUAL(others, (size_t)twb_trace_sampled(0, 77, 0.5) + twb_trace_sampled(0, 78, 0.5));
    CU_ASSERT_EQUAL(st.sampled_out, 7 - c.n);
    /* The debug trace went out in two parts; dropped traces are never split. */
    CU_ASSERT_EQUAL(st.split_traces, 1);
    twb_assembler_free(a);
    capture_clear(&c);
}

static void test_debug_set_is_bounded_and_forgets_oldest(void)
{
    /* 5000 debug traces (more than the 4096 remembered), then a non-debug
     * part of the first and of the last: only the last is still known. Pick
     * ids whose hash says drop at 0.01. */
    capture c;
    twb_assembler *a = new_asm(0, false, false, 0.01, &c);
    uint64_t ids[5000];
    size_t n = 0;
    for (uint64_t id = 1; n < 5000; id++) {
        if (!twb_trace_sampled(0, id, 0.01))
            ids[n++] = id;
    }
    for (size_t i = 0; i < n; i++) {
        tw__span_data *d = mk(0, ids[i], 1, 0, NULL, "dbg", 1, 1);
        d->flags |= TW__FLAG_DEBUG;
        add_ok(a, sp(d, &process_a));
        if (c.n > CAP / 2)
            capture_clear(&c);
    }
    flush_ok(a);
    capture_clear(&c);
    add_ok(a, sp(mk(0, ids[0], 2, 1, NULL, "forgotten", 1, 1), &process_a));
    add_ok(a, sp(mk(0, ids[n - 1], 2, 1, NULL, "remembered", 1, 1), &process_a));
    flush_ok(a);
    CU_ASSERT_EQUAL_FATAL(c.n, 1);
    CU_ASSERT_STRING_EQUAL(c.spans[0].data->operation, "remembered");
    twb_assembler_free(a);
    capture_clear(&c);
}

/* ---- errors -------------------------------------------------------------------------------- */

static void test_output_error_stops_and_leaks_nothing(void)
{
    capture c;
    twb_assembler *a = new_asm(1, false, false, 1.0, &c);
    c.fail_with = TW_E_IO;
    add_ok(a, sp(mk(0, 1, 1, 0, NULL, "a", 1, 1), &process_a));
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(twb_assembler_add(a, sp(mk(0, 2, 1, 0, NULL, "b", 1, 1), &process_a), &err),
                    TW_E_IO);
    CU_ASSERT_PTR_NOT_NULL(err);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_IO);
    tw_error_free(err);
    err = NULL;
    /* b is still held; c evicts it, and the sink fails again. */
    CU_ASSERT_EQUAL(twb_assembler_add(a, sp(mk(0, 3, 1, 0, NULL, "c", 1, 1), &process_a), &err),
                    TW_E_IO);
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_EQUAL(c.calls, 2);
    CU_ASSERT_EQUAL(twb_assembler_flush(a, &err), TW_E_IO); /* c */
    tw_error_free(err);
    CU_ASSERT_EQUAL(c.calls, 3);
    twb_assembler_free(a);
}

static void test_null_arguments_are_refused(void)
{
    capture c;
    twb_assemble_options o = {.sample = 1.0};
    CU_ASSERT_PTR_NULL(twb_assembler_new(NULL, on_group, &c));
    CU_ASSERT_PTR_NULL(twb_assembler_new(&o, NULL, &c));
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(twb_assembler_add(NULL, sp(mk(0, 1, 1, 0, NULL, "a", 1, 1), &process_a), &err),
                    TW_E_INVALID_ARG);
    tw_error_free(err);
    err = NULL;
    twb_assembler *a = new_asm(0, false, false, 1.0, &c);
    CU_ASSERT_EQUAL(twb_assembler_add(a, sp(NULL, &process_a), &err), TW_E_INVALID_ARG);
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_EQUAL(twb_assembler_flush(NULL, &err), TW_E_INVALID_ARG);
    tw_error_free(err);
    twb_assemble_stats st = {.merged = 5};
    twb_assembler_stats(NULL, &st);
    CU_ASSERT_EQUAL(st.merged, 0);
    twb_assembler_free(a);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/assemble", suite_init, suite_cleanup);
    CU_add_test(suite, "pass_through_sends_each_trace_alone_in_order",
                test_pass_through_sends_each_trace_alone_in_order);
    CU_add_test(suite, "pass_through_groups_one_records_halves",
                test_pass_through_groups_one_records_halves);
    CU_add_test(suite, "window_lets_oldest_trace_go_whole", test_window_lets_oldest_trace_go_whole);
    CU_add_test(suite, "window_handles_many_traces", test_window_handles_many_traces);
    CU_add_test(suite, "split_traces_are_counted_once_each",
                test_split_traces_are_counted_once_each);
    CU_add_test(suite, "trace_longer_than_a_group_is_split",
                test_trace_longer_than_a_group_is_split);
    CU_add_test(suite, "split_traces_are_remembered_for_16384_traces",
                test_split_traces_are_remembered_for_16384_traces);
    CU_add_test(suite, "free_releases_held_spans", test_free_releases_held_spans);
    CU_add_test(suite, "exact_duplicates_are_dropped_and_counted",
                test_exact_duplicates_are_dropped_and_counted);
    CU_add_test(suite, "groups_of_every_size_keep_arrival_order",
                test_groups_of_every_size_keep_arrival_order);
    CU_add_test(suite, "parts_of_one_span_merge", test_parts_of_one_span_merge);
    CU_add_test(suite, "merge_takes_known_duration_in_either_order",
                test_merge_takes_known_duration_in_either_order);
    CU_add_test(suite, "late_fragment_joins_the_shared_server",
                test_late_fragment_joins_the_shared_server);
    CU_add_test(suite, "incompatible_parts_do_not_merge", test_incompatible_parts_do_not_merge);
    CU_add_test(suite, "longest_trace_id_applies_to_every_span",
                test_longest_trace_id_applies_to_every_span);
    CU_add_test(suite, "records_held_elsewhere_are_copied_not_changed",
                test_records_held_elsewhere_are_copied_not_changed);
    CU_add_test(suite, "server_after_client_is_backfilled_shared",
                test_server_after_client_is_backfilled_shared);
    CU_add_test(suite, "backfill_in_groups_of_every_size", test_backfill_in_groups_of_every_size);
    CU_add_test(suite, "jaeger_ids_give_shared_server_own_id_and_children",
                test_jaeger_ids_give_shared_server_own_id_and_children);
    CU_add_test(suite, "jaeger_ids_are_deterministic_and_skip_used_ids",
                test_jaeger_ids_are_deterministic_and_skip_used_ids);
    CU_add_test(suite, "shared_server_without_client_keeps_its_id",
                test_shared_server_without_client_keeps_its_id);
    CU_add_test(suite, "without_jaeger_ids_shared_spans_keep_ids",
                test_without_jaeger_ids_shared_spans_keep_ids);
    CU_add_test(suite, "orphans_pass_unchanged", test_orphans_pass_unchanged);
    CU_add_test(suite, "skew_moves_server_and_its_host_descendants",
                test_skew_moves_server_and_its_host_descendants);
    CU_add_test(suite, "skew_with_jaeger_ids_follows_new_parents",
                test_skew_with_jaeger_ids_follows_new_parents);
    CU_add_test(suite, "skew_is_off_by_default_and_leaves_fitting_servers",
                test_skew_is_off_by_default_and_leaves_fitting_servers);
    CU_add_test(suite, "skew_fixture_through_the_reader", test_skew_fixture_through_the_reader);
    CU_add_test(suite, "real_trace_has_unique_ids_for_jaeger",
                test_real_trace_has_unique_ids_for_jaeger);
    CU_add_test(suite, "sampling_hash_has_documented_vector",
                test_sampling_hash_has_documented_vector);
    CU_add_test(suite, "sampling_keeps_the_fraction", test_sampling_keeps_the_fraction);
    CU_add_test(suite, "sampling_drops_whole_traces_and_keeps_debug",
                test_sampling_drops_whole_traces_and_keeps_debug);
    CU_add_test(suite, "debug_set_is_bounded_and_forgets_oldest",
                test_debug_set_is_bounded_and_forgets_oldest);
    CU_add_test(suite, "output_error_stops_and_leaks_nothing",
                test_output_error_stops_and_leaks_nothing);
    CU_add_test(suite, "null_arguments_are_refused", test_null_arguments_are_refused);
}
