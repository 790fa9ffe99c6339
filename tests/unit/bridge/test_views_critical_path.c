/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_views_critical_path.c: suite
 * "bridge/views/critical_path": Jaeger UI's critical path algorithm
 * (bridge/views/critical_path.c) on hand-built traces whose answers were
 * worked out by hand from the algorithm's rules (docs/views.md): sequential
 * and parallel children, nesting, async FOLLOWS_FROM children that outlive
 * their parent, CHILD_OF children that do, skewed clocks (children before
 * or around their parent), producer -> consumer, orphans, cycles, roots
 * that overlap or outlast the trace, ties, unknown durations; and, on
 * random trees, that the sections tile each root exactly.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>

#include "harness.h"
#include "view_fixture.h"

#define N(rows) (sizeof(rows) / sizeof((rows)[0]))

typedef struct want_section {
    uint64_t id;
    int64_t start, end; /* relative to VT_T0 */
} want_section;

/* Builds @rows, runs the algorithm and compares the sections, in order. */
static void check_path(const vt_span *rows, size_t n, const want_section *want, size_t n_want)
{
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, n, &t);
    CU_ASSERT_TRUE_FATAL(twv_critical_path(&t));
    CU_ASSERT_EQUAL(t.n_cp, n_want);
    for (size_t i = 0; i < n_want && i < t.n_cp; i++) {
        const twv_cp_section *s = &t.cp[i];
        CU_ASSERT_EQUAL(t.spans[s->span].d->span_id, want[i].id);
        CU_ASSERT_EQUAL(s->start_us - VT_T0, want[i].start);
        CU_ASSERT_EQUAL(s->end_us - VT_T0, want[i].end);
        if (t.spans[s->span].d->span_id != want[i].id || s->start_us - VT_T0 != want[i].start ||
            s->end_us - VT_T0 != want[i].end)
            fprintf(stderr, "section %zu: got %llx [%lld, %lld), want %llx [%lld, %lld)\n", i,
                    (unsigned long long)t.spans[s->span].d->span_id,
                    (long long)(s->start_us - VT_T0), (long long)(s->end_us - VT_T0),
                    (unsigned long long)want[i].id, (long long)want[i].start,
                    (long long)want[i].end);
    }
    twv_trace_free(&t);
    vt_free(&c);
}

static void test_sequential_children_alternate_with_the_parent(void)
{
    const vt_span rows[] = {
        {.id = 0xa, .service = "s", .start = 0, .duration = 100},
        {.id = 0xb, .parent = 0xa, .service = "s", .start = 10, .duration = 30}, /* 10-40 */
        {.id = 0xc, .parent = 0xa, .service = "s", .start = 50, .duration = 40}, /* 50-90 */
    };
    const want_section want[] = {
        {0xa, 90, 100}, {0xc, 50, 90}, {0xa, 40, 50}, {0xb, 10, 40}, {0xa, 0, 10}};
    check_path(rows, N(rows), want, N(want));
}

static void test_parallel_fan_out_follows_the_last_to_finish(void)
{
    const vt_span rows[] = {
        {.id = 0xa, .service = "s", .start = 0, .duration = 100},
        {.id = 0xb, .parent = 0xa, .service = "s", .start = 10, .duration = 50}, /* 10-60 */
        {.id = 0xc, .parent = 0xa, .service = "s", .start = 10, .duration = 70}, /* 10-80 */
        {.id = 0xd, .parent = 0xa, .service = "s", .start = 10, .duration = 60}, /* 10-70 */
    };
    /* B and D overlap C, which ends last: they are not on the path. */
    const want_section want[] = {{0xa, 80, 100}, {0xc, 10, 80}, {0xa, 0, 10}};
    check_path(rows, N(rows), want, N(want));
}

static void test_overlapping_children_hand_over_at_the_start(void)
{
    const vt_span rows[] = {
        {.id = 0xa, .service = "s", .start = 0, .duration = 100},
        {.id = 0xb, .parent = 0xa, .service = "s", .start = 5, .duration = 25},  /* 5-30 */
        {.id = 0xc, .parent = 0xa, .service = "s", .start = 20, .duration = 40}, /* 20-60 */
        {.id = 0xd, .parent = 0xa, .service = "s", .start = 40, .duration = 50}, /* 40-90 */
    };
    /* D ends last; back at 40 the child ending before 40 is B (C ends 60). */
    const want_section want[] = {
        {0xa, 90, 100}, {0xd, 40, 90}, {0xa, 30, 40}, {0xb, 5, 30}, {0xa, 0, 5}};
    check_path(rows, N(rows), want, N(want));
}

static void test_nested_children_are_walked_down_and_back(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 0, .duration = 100},
        {.id = 0x2, .parent = 0x1, .service = "s", .start = 10, .duration = 80}, /* 10-90 */
        {.id = 0x3, .parent = 0x2, .service = "s", .start = 20, .duration = 30}, /* 20-50 */
        {.id = 0x4, .parent = 0x2, .service = "s", .start = 40, .duration = 40}, /* 40-80 */
        {.id = 0x5, .parent = 0x4, .service = "s", .start = 45, .duration = 10}, /* 45-55 */
    };
    const want_section want[] = {{0x1, 90, 100}, {0x2, 80, 90}, {0x4, 55, 80}, {0x5, 45, 55},
                                 {0x4, 40, 45},  {0x2, 10, 40}, {0x1, 0, 10}};
    check_path(rows, N(rows), want, N(want));
}

static void test_async_follows_from_child_is_not_on_the_path(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 0, .duration = 100},
        {.id = 0x2, .parent = 0x1, .service = "s", .start = 10, .duration = 30}, /* 10-40 */
        {.id = 0x3,
         .parent = 0x1,
         .service = "q",
         .start = 50,
         .duration = 150, /* 50-200 */
         .flags = VT_FOLLOWS},
        {.id = 0x4, .parent = 0x3, .service = "q", .start = 60, .duration = 20},
    };
    const want_section want[] = {{0x1, 40, 100}, {0x2, 10, 40}, {0x1, 0, 10}};
    check_path(rows, N(rows), want, N(want));
}

static void test_child_of_child_outliving_its_parent_is_clipped(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 0, .duration = 100},
        {.id = 0x2, .parent = 0x1, .service = "s", .start = 50, .duration = 150}, /* 50-200 */
    };
    /* clipped to 50-100: the parent's own section [100, 100) is empty */
    const want_section want[] = {{0x2, 50, 100}, {0x1, 0, 50}};
    check_path(rows, N(rows), want, N(want));
}

static void test_skewed_children_are_clipped_or_dropped(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 100, .duration = 100},              /* 100-200 */
        {.id = 0x2, .parent = 0x1, .service = "s", .start = 50, .duration = 60}, /* 50-110: clip */
        {.id = 0x3, .parent = 0x1, .service = "s", .start = 10, .duration = 40}, /* 10-50: drop */
        {.id = 0x4, .parent = 0x1, .service = "s", .start = 200, .duration = 5}, /* at the end */
    };
    const want_section want[] = {{0x1, 110, 200}, {0x2, 100, 110}};
    check_path(rows, N(rows), want, N(want));
}

static void test_child_around_its_parent_takes_all_of_it(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 100, .duration = 100},
        {.id = 0x2, .parent = 0x1, .service = "t", .start = 50, .duration = 300}, /* 50-350 */
        {.id = 0x3, .parent = 0x2, .service = "t", .start = 60, .duration = 100}, /* 60-160 */
    };
    /* 0x2 clipped to 100-200; its child clipped to 100-160 against it */
    const want_section want[] = {{0x2, 160, 200}, {0x3, 100, 160}};
    check_path(rows, N(rows), want, N(want));
}

static void test_consumer_of_a_producer_does_not_block_it(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "p", .kind = "producer", .start = 0, .duration = 100},
        {.id = 0x2, .parent = 0x1, .service = "c", .kind = "consumer", .start = 50, .duration = 40},
    };
    const want_section want[] = {{0x1, 0, 100}};
    check_path(rows, N(rows), want, N(want));
}

static void test_ties_go_to_the_child_that_starts_first(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 0, .duration = 100},
        {.id = 0x3, .parent = 0x1, .service = "s", .start = 30, .duration = 50}, /* 30-80 */
        {.id = 0x2, .parent = 0x1, .service = "s", .start = 20, .duration = 60}, /* 20-80 */
    };
    const want_section want[] = {{0x1, 80, 100}, {0x2, 20, 80}, {0x1, 0, 20}};
    check_path(rows, N(rows), want, N(want));
}

static void test_unknown_duration_counts_as_zero(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 0, .duration = 100},
        {.id = 0x2, .parent = 0x1, .service = "s", .start = 60, .flags = VT_NO_DUR},
    };
    /* the LFC ends at 60 and has nothing to add; the walk returns at 60 */
    const want_section want[] = {{0x1, 60, 100}, {0x1, 0, 60}};
    check_path(rows, N(rows), want, N(want));
}

static void test_orphans_get_no_critical_path(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 0, .duration = 10},
        {.id = 0x2, .parent = 0x99, .service = "s", .start = 20, .duration = 30},
    };
    const want_section want[] = {{0x1, 0, 10}};
    check_path(rows, N(rows), want, N(want));
}

/* Roots are clipped to the trace and to each other, the one ending last
 * first: the path is never longer than the trace. */
static void test_overlapping_roots_share_the_trace(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 0, .duration = 150},
        {.id = 0x2, .service = "s", .start = 50, .duration = 150},
        {.id = 0x3, .service = "s", .start = 60, .duration = 20}, /* within 0x2's time */
    };
    const want_section want[] = {{0x2, 50, 200}, {0x1, 0, 50}};
    check_path(rows, N(rows), want, N(want));
}

static void test_an_untimed_root_is_clipped_to_the_trace(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .duration = 290, .flags = VT_NO_START},
        {.id = 0x2, .parent = 0x1, .service = "s", .start = 0, .duration = 200},
    };
    const want_section want[] = {{0x2, 0, 200}};
    check_path(rows, N(rows), want, N(want));
}

static void test_a_cycle_of_parents_gets_no_critical_path(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "s", .start = 0, .duration = 200},
        {.id = 0x3, .parent = 0x4, .service = "s", .start = 100, .duration = 190},
        {.id = 0x4, .parent = 0x3, .service = "s", .start = 120, .duration = 100},
    };
    const want_section want[] = {{0x1, 0, 200}};
    check_path(rows, N(rows), want, N(want));
}

static void test_time_on_the_path_is_summed_per_span(void)
{
    const vt_span rows[] = {
        {.id = 0xa, .service = "s", .start = 0, .duration = 100},
        {.id = 0xb, .parent = 0xa, .service = "s", .start = 10, .duration = 30},
        {.id = 0xc, .parent = 0xa, .service = "s", .start = 50, .duration = 40},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    CU_ASSERT_TRUE_FATAL(twv_critical_path(&t));
    CU_ASSERT_EQUAL(vt_find(&t, 0xa)->critical_us, 30);
    CU_ASSERT_EQUAL(vt_find(&t, 0xb)->critical_us, 30);
    CU_ASSERT_EQUAL(vt_find(&t, 0xc)->critical_us, 40);
    twv_trace_free(&t);
    vt_free(&c);
}

/* Random trees: children inside their parents (start and end drawn inside),
 * some FOLLOWS_FROM. Wherever the walk goes, its sections are disjoint and
 * cover the root's interval exactly, and no span is credited more time than
 * it lasted. */
static void test_sections_tile_the_root_on_random_trees(void)
{
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    for (int round = 0; round < 200; round++) {
        vt_span rows[64];
        size_t n = 2 + (size_t)(seed % 60);
        int64_t start[64], end[64];
        for (size_t i = 0; i < n; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t r = seed >> 17;
            memset(&rows[i], 0, sizeof rows[i]);
            rows[i].id = i + 1;
            rows[i].service = "s";
            if (i == 0) {
                start[0] = 0;
                end[0] = 1000 + (int64_t)(r % 1000);
            } else {
                size_t p = (size_t)(r % i);
                int64_t len = end[p] - start[p];
                int64_t a = start[p] + (int64_t)((r >> 8) % (uint64_t)(len + 1));
                int64_t b = a + (int64_t)((r >> 20) % (uint64_t)(end[p] - a + 1));
                rows[i].parent = p + 1;
                start[i] = a;
                end[i] = b;
                if ((r >> 40) % 7 == 0)
                    rows[i].flags = VT_FOLLOWS;
            }
            rows[i].start = start[i];
            rows[i].duration = end[i] - start[i] ? end[i] - start[i] : 1;
            end[i] = start[i] + rows[i].duration;
        }
        vt_ctx c;
        vt_init(&c);
        twv_trace t;
        twv_trace_init(&t);
        vt_build(&c, rows, n, &t);
        CU_ASSERT_TRUE_FATAL(twv_critical_path(&t));
        int64_t total = 0, covered_end = INT64_MAX;
        bool ordered = true;
        for (size_t i = 0; i < t.n_cp; i++) {
            total += t.cp[i].end_us - t.cp[i].start_us;
            ordered &= t.cp[i].end_us <= covered_end && t.cp[i].start_us < t.cp[i].end_us;
            covered_end = t.cp[i].start_us;
        }
        CU_ASSERT_TRUE(ordered); /* latest first, disjoint */
        CU_ASSERT_EQUAL(total, end[0] - start[0]);
        for (size_t i = 0; i < t.n_spans; i++)
            CU_ASSERT_TRUE(t.spans[i].critical_us <= t.spans[i].end_us - t.spans[i].start_us);
        twv_trace_free(&t);
        vt_free(&c);
    }
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("bridge/views/critical_path", NULL, NULL);
    CU_add_test(s, "sequential children alternate with the parent",
                test_sequential_children_alternate_with_the_parent);
    CU_add_test(s, "parallel fan-out follows the last to finish",
                test_parallel_fan_out_follows_the_last_to_finish);
    CU_add_test(s, "overlapping children hand over at the start",
                test_overlapping_children_hand_over_at_the_start);
    CU_add_test(s, "nested children are walked down and back",
                test_nested_children_are_walked_down_and_back);
    CU_add_test(s, "an async FOLLOWS_FROM child is not on the path",
                test_async_follows_from_child_is_not_on_the_path);
    CU_add_test(s, "a CHILD_OF child outliving its parent is clipped",
                test_child_of_child_outliving_its_parent_is_clipped);
    CU_add_test(s, "skewed children are clipped or dropped",
                test_skewed_children_are_clipped_or_dropped);
    CU_add_test(s, "a child around its parent takes all of it",
                test_child_around_its_parent_takes_all_of_it);
    CU_add_test(s, "a consumer of a producer does not block it",
                test_consumer_of_a_producer_does_not_block_it);
    CU_add_test(s, "ties go to the child that starts first",
                test_ties_go_to_the_child_that_starts_first);
    CU_add_test(s, "an unknown duration counts as zero", test_unknown_duration_counts_as_zero);
    CU_add_test(s, "orphans get no critical path", test_orphans_get_no_critical_path);
    CU_add_test(s, "overlapping roots share the trace", test_overlapping_roots_share_the_trace);
    CU_add_test(s, "an untimed root is clipped to the trace",
                test_an_untimed_root_is_clipped_to_the_trace);
    CU_add_test(s, "a cycle of parents gets no critical path",
                test_a_cycle_of_parents_gets_no_critical_path);
    CU_add_test(s, "time on the path is summed per span", test_time_on_the_path_is_summed_per_span);
    CU_add_test(s, "sections tile the root on random trees",
                test_sections_tile_the_root_on_random_trees);
}
