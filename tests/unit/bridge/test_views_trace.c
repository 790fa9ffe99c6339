/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_views_trace.c: suite "bridge/views/trace": how the
 * views see a trace (bridge/views/trace.c, select.c): the tree, orphans,
 * skew marks, self time, the shared filters and the parsers of their values
 * and of diff's sides. Hand-built traces with known answers, assembled by
 * the real assembler with Jaeger ids (view_fixture.h).
 */
#include <CUnit/CUnit.h>
#include <string.h>

#include "harness.h"
#include "view_fixture.h"

#define N(rows) (sizeof(rows) / sizeof((rows)[0]))

/* ---- tree -------------------------------------------------------------------------------- */

static void test_children_are_ordered_by_start_and_roots_first(void)
{
    const vt_span rows[] = {
        {.id = 0x3,
         .parent = 0x1,
         .service = "a",
         .operation = "late",
         .start = 50,
         .duration = 10},
        {.id = 0x1, .service = "a", .operation = "root", .start = 0, .duration = 100},
        {.id = 0x2,
         .parent = 0x1,
         .service = "b",
         .operation = "early",
         .start = 10,
         .duration = 10},
        {.id = 0x4, .parent = 0x2, .service = "b", .operation = "deep", .start = 12, .duration = 5},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    CU_ASSERT_EQUAL(t.n_spans, 4);
    CU_ASSERT_EQUAL(t.n_roots, 1);
    const twv_span *root = vt_find(&t, 1);
    CU_ASSERT_EQUAL(t.spans[t.roots[0]].d->span_id, 1);
    CU_ASSERT_EQUAL(root->n_children, 2);
    CU_ASSERT_EQUAL(t.spans[t.children[root->first_child]].d->span_id, 2);
    CU_ASSERT_EQUAL(t.spans[t.children[root->first_child + 1]].d->span_id, 3);
    /* display order: depth first */
    const uint64_t want[] = {1, 2, 4, 3};
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(t.spans[t.order[i]].d->span_id, want[i]);
    CU_ASSERT_EQUAL(vt_find(&t, 4)->depth, 2);
    CU_ASSERT_EQUAL(t.start_us, VT_T0);
    CU_ASSERT_EQUAL(t.end_us, VT_T0 + 100);
    CU_ASSERT_EQUAL(t.n_orphans, 0);
    twv_trace_free(&t);
    vt_free(&c);
}

static void test_orphans_name_their_missing_parent(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "a", .start = 0, .duration = 100},
        {.id = 0x7, .parent = 0x74280ae0c10d8062, .service = "b", .start = 20, .duration = 10},
        {.id = 0x8, .parent = 0x74280ae0c10d8062, .service = "b", .start = 30, .duration = 10},
        {.id = 0x9, .parent = 0x7, .service = "b", .start = 21, .duration = 1},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    CU_ASSERT_EQUAL(t.n_roots, 3);
    CU_ASSERT_EQUAL(t.n_orphans, 2);
    CU_ASSERT_EQUAL(vt_find(&t, 7)->missing_parent, 0x74280ae0c10d8062);
    CU_ASSERT_EQUAL(vt_find(&t, 7)->parent, TWV_NONE);
    CU_ASSERT_EQUAL(vt_find(&t, 9)->missing_parent, 0);
    CU_ASSERT_EQUAL(vt_find(&t, 1)->missing_parent, 0);
    twv_trace_free(&t);
    vt_free(&c);
}

static void test_a_follows_from_reference_is_the_parent_too(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "a", .start = 0, .duration = 10},
        {.id = 0x2,
         .parent = 0x1,
         .service = "a",
         .start = 20,
         .duration = 10,
         .flags = VT_FOLLOWS},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    const twv_span *s = vt_find(&t, 2);
    CU_ASSERT_EQUAL(s->parent, twv_trace_find(&t, 1));
    CU_ASSERT_TRUE(s->is_follows_from);
    CU_ASSERT_FALSE(vt_find(&t, 1)->is_follows_from);
    twv_trace_free(&t);
    vt_free(&c);
}

static void test_a_child_starting_before_its_parent_is_skewed(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "a", .kind = "client", .start = 100, .duration = 50},
        {.id = 0x2, .parent = 0x1, .service = "b", .kind = "server", .start = 40, .duration = 20},
        {.id = 0x3, .parent = 0x1, .service = "b", .start = 100, .duration = 20},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    CU_ASSERT_TRUE(vt_find(&t, 2)->is_skew);
    CU_ASSERT_FALSE(vt_find(&t, 3)->is_skew); /* the same start is not skew */
    CU_ASSERT_FALSE(vt_find(&t, 1)->is_skew);
    CU_ASSERT_EQUAL(t.n_skew, 1);
    CU_ASSERT_EQUAL(t.start_us, VT_T0 + 40); /* the extent keeps the early child */
    twv_trace_free(&t);
    vt_free(&c);
}

static void test_a_span_without_timestamp_takes_its_parents_start(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "a", .start = 500, .duration = 50},
        {.id = 0x2, .parent = 0x1, .service = "b", .duration = 7, .flags = VT_NO_START},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    const twv_span *s = vt_find(&t, 2);
    CU_ASSERT_FALSE(s->has_start);
    CU_ASSERT_EQUAL(s->start_us, VT_T0 + 500);
    CU_ASSERT_EQUAL(s->end_us, VT_T0 + 507);
    CU_ASSERT_EQUAL(t.start_us, VT_T0 + 500); /* not the epoch */
    twv_trace_free(&t);
    vt_free(&c);
}

static void test_a_cycle_of_parents_is_broken_not_looped(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .parent = 0x2, .service = "a", .start = 0, .duration = 10},
        {.id = 0x2, .parent = 0x1, .service = "a", .start = 5, .duration = 10},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    CU_ASSERT_EQUAL(t.n_roots, 1);
    CU_ASSERT_EQUAL(t.spans[t.order[0]].d->span_id, 1);
    CU_ASSERT_EQUAL(t.spans[t.order[1]].d->span_id, 2);
    CU_ASSERT_TRUE(twv_critical_path(&t));
    twv_trace_free(&t);
    vt_free(&c);
}

static void test_shared_halves_count_as_two_spans(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "web", .kind = "server", .start = 0, .duration = 100},
        {.id = 0x2, .parent = 0x1, .service = "web", .kind = "client", .start = 10, .duration = 50},
        {.id = 0x2,
         .parent = 0x1,
         .service = "app",
         .kind = "server",
         .start = 15,
         .duration = 40,
         .flags = VT_SHARED},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    CU_ASSERT_EQUAL(t.n_spans, 3);
    const twv_span *server = vt_named(&t, "app", "op");
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_NOT_EQUAL(server->d->span_id, 2); /* its own id, as in Jaeger output */
    CU_ASSERT_EQUAL(server->d->span_id, twb_shared_span_id(2));
    CU_ASSERT_EQUAL(t.spans[server->parent].d->span_id, 2);
    twv_trace_free(&t);
    vt_free(&c);
}

/* ---- self time --------------------------------------------------------------------------- */

static void test_self_time_subtracts_the_union_of_children_inside(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "a", .start = 0, .duration = 100},
        {.id = 0x2, .parent = 0x1, .service = "a", .start = 10, .duration = 20}, /* 10-30 */
        {.id = 0x3, .parent = 0x1, .service = "a", .start = 20, .duration = 30}, /* 20-50 */
        {.id = 0x4, .parent = 0x1, .service = "a", .start = 90, .duration = 30}, /* 90-120 */
        {.id = 0x5, .parent = 0x1, .service = "a", .start = 150, .duration = 5}, /* outside */
        {.id = 0x6, .parent = 0x1, .service = "a", .start = 60, .flags = VT_NO_DUR},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    /* covered: [10,50) + [90,100) = 50 */
    CU_ASSERT_EQUAL(vt_find(&t, 1)->self_us, 50);
    CU_ASSERT_EQUAL(vt_find(&t, 2)->self_us, 20);
    CU_ASSERT_EQUAL(vt_find(&t, 6)->self_us, -1); /* unknown */
    CU_ASSERT_EQUAL(t.n_no_duration, 1);
    twv_trace_free(&t);
    vt_free(&c);
}

static void test_self_time_of_a_span_with_an_early_child(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "a", .start = 100, .duration = 100},
        {.id = 0x2, .parent = 0x1, .service = "b", .start = 50, .duration = 100}, /* skewed */
        {.id = 0x3, .parent = 0x1, .service = "b", .start = 180, .duration = 50},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    /* inside [100,200): [100,150) and [180,200) */
    CU_ASSERT_EQUAL(vt_find(&t, 1)->self_us, 30);
    twv_trace_free(&t);
    vt_free(&c);
}

/* ---- filters ----------------------------------------------------------------------------- */

static void test_filter_needs_one_span_matching_every_span_criterion(void)
{
    const vt_span rows[] = {
        {.id = 0x1, .service = "Frontend", .operation = "GET /", .start = 0, .duration = 900},
        {.id = 0x2,
         .parent = 0x1,
         .service = "db",
         .operation = "query",
         .start = 10,
         .duration = 300,
         .flags = VT_ERROR},
    };
    vt_ctx c;
    vt_init(&c);
    twv_trace t;
    twv_trace_init(&t);
    vt_build(&c, rows, N(rows), &t);
    twv_filter f = {0};
    CU_ASSERT_TRUE(twv_filter_match(&f, &t));
    f.service = "frontend"; /* any case */
    CU_ASSERT_TRUE(twv_filter_match(&f, &t));
    f.error_only = true; /* the frontend span has no error */
    CU_ASSERT_FALSE(twv_filter_match(&f, &t));
    f.service = "db";
    CU_ASSERT_TRUE(twv_filter_match(&f, &t));
    f.has_min_duration = true;
    f.min_duration_us = 301;
    CU_ASSERT_FALSE(twv_filter_match(&f, &t));
    f.min_duration_us = 300;
    CU_ASSERT_TRUE(twv_filter_match(&f, &t));
    f.operation = "GET /";
    CU_ASSERT_FALSE(twv_filter_match(&f, &t)); /* not on the db span */
    memset(&f, 0, sizeof f);
    f.has_since = true;
    f.since_us = VT_T0;
    CU_ASSERT_TRUE(twv_filter_match(&f, &t));
    f.has_until = true;
    f.until_us = VT_T0; /* [since, until) */
    CU_ASSERT_FALSE(twv_filter_match(&f, &t));
    twv_trace_free(&t);
    vt_free(&c);
}

static void test_trace_prefix_matches_every_textual_form(void)
{
    twv_filter f = {0};
    char why[256];
    CU_ASSERT_TRUE(twv_parse_trace_prefix("4D1E", f.trace_prefix, why, sizeof why));
    CU_ASSERT_STRING_EQUAL(f.trace_prefix, "4d1e");
    CU_ASSERT_TRUE(twv_filter_match_id(&f, 0, 0x4d1e000000000001));
    CU_ASSERT_FALSE(twv_filter_match_id(&f, 0, 0x14d1e00000000001));
    /* a 128-bit id: its 32 digits, or its low 16 */
    CU_ASSERT_TRUE(twv_filter_match_id(&f, 0x4d1e000000000000, 7));
    CU_ASSERT_TRUE(twv_filter_match_id(&f, 0xaaaa, 0x4d1e000000000001));
    /* without leading zeros, as Jaeger storage prints some ids */
    CU_ASSERT_TRUE(twv_filter_match_id(&f, 0, 0x0000000000004d1e));
    CU_ASSERT_FALSE(twv_parse_trace_prefix("4d1g", f.trace_prefix, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_trace_prefix("", f.trace_prefix, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_trace_prefix("000000000000000000000000000000001", f.trace_prefix, why,
                                           sizeof why));
}

/* ---- parsers ----------------------------------------------------------------------------- */

static void test_durations_need_units_and_may_be_compound(void)
{
    int64_t us;
    char why[256];
    CU_ASSERT_TRUE(twv_parse_duration("250ms", &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, 250000);
    CU_ASSERT_TRUE(twv_parse_duration("1.5s", &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, 1500000);
    CU_ASSERT_TRUE(twv_parse_duration("1m30s", &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, 90000000);
    CU_ASSERT_TRUE(twv_parse_duration("750us", &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, 750);
    CU_ASSERT_TRUE(twv_parse_duration("3\xc2\xb5s", &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, 3);
    CU_ASSERT_TRUE(twv_parse_duration("1500ns", &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, 2); /* 1.5 µs rounds up */
    CU_ASSERT_TRUE(twv_parse_duration("2h", &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, INT64_C(7200000000));
    CU_ASSERT_FALSE(twv_parse_duration("250", &us, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "unit"));
    CU_ASSERT_FALSE(twv_parse_duration("", &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_duration("-1s", &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_duration("1sx", &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_duration("99999999999999999999h", &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_duration(".s", &us, why, sizeof why));
}

static void test_times_in_every_documented_form(void)
{
    int64_t us, now = INT64_C(1714557600) * 1000000; /* 2024-05-01T10:00:00Z */
    char why[256];
    CU_ASSERT_TRUE(twv_parse_time("2024-05-01T10:00:00Z", now, &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, now);
    CU_ASSERT_TRUE(twv_parse_time("2024-05-01T12:00:00+02:00", now, &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, now);
    CU_ASSERT_TRUE(twv_parse_time("2024-05-01T10:00:00.25Z", now, &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, now + 250000);
    CU_ASSERT_TRUE(twv_parse_time("2024-05-01 10:00", now, &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, now); /* no zone: UTC */
    CU_ASSERT_TRUE(twv_parse_time("2024-05-01", now, &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, now - INT64_C(36000) * 1000000);
    CU_ASSERT_TRUE(twv_parse_time("@1714557600", now, &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, now);
    CU_ASSERT_TRUE(twv_parse_time("now", now, &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, now);
    CU_ASSERT_TRUE(twv_parse_time("15m", now, &us, why, sizeof why));
    CU_ASSERT_EQUAL(us, now - INT64_C(900) * 1000000);
    CU_ASSERT_TRUE(twv_parse_time("2024-02-29", now, &us, why, sizeof why)); /* leap year */
    CU_ASSERT_FALSE(twv_parse_time("2023-02-29", now, &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_time("2024-13-01", now, &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_time("2024-05-01T25:00:00Z", now, &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_time("2024-05-01T10:00:00Q", now, &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_time("yesterday", now, &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_time("@", now, &us, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_time("2024-05-01T", now, &us, why, sizeof why));
}

static const char *existing_file;

static bool fake_exists(const char *path)
{
    return existing_file && strcmp(path, existing_file) == 0;
}

static void test_diff_sides_are_prefixes_files_or_both(void)
{
    twv_side s;
    char why[256];
    existing_file = "spans.log";
    CU_ASSERT_TRUE(twv_parse_side("4D1E", fake_exists, &s, why, sizeof why));
    CU_ASSERT_STRING_EQUAL(s.prefix, "4d1e");
    CU_ASSERT_PTR_NULL(s.path);
    CU_ASSERT_TRUE(twv_parse_side("spans.log", fake_exists, &s, why, sizeof why));
    CU_ASSERT_STRING_EQUAL(s.prefix, "");
    CU_ASSERT_STRING_EQUAL(s.path, "spans.log");
    CU_ASSERT_TRUE(twv_parse_side("4d1e@spans.log", fake_exists, &s, why, sizeof why));
    CU_ASSERT_STRING_EQUAL(s.prefix, "4d1e");
    CU_ASSERT_STRING_EQUAL(s.path, "spans.log");
    CU_ASSERT_TRUE(twv_parse_side("logs@host/x.json", fake_exists, &s, why, sizeof why));
    CU_ASSERT_STRING_EQUAL(s.path, "logs@host/x.json"); /* "logs" is not hex: a path */
    existing_file = "abc";
    CU_ASSERT_FALSE(twv_parse_side("abc", fake_exists, &s, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "./abc"));
    CU_ASSERT_TRUE(twv_parse_side("./abc", fake_exists, &s, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_side("", fake_exists, &s, why, sizeof why));
    CU_ASSERT_FALSE(twv_parse_side("4d1e@", fake_exists, &s, why, sizeof why));
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("bridge/views/trace", NULL, NULL);
    CU_add_test(s, "children are ordered by start, roots first",
                test_children_are_ordered_by_start_and_roots_first);
    CU_add_test(s, "orphans name their missing parent", test_orphans_name_their_missing_parent);
    CU_add_test(s, "a FOLLOWS_FROM reference is the parent too",
                test_a_follows_from_reference_is_the_parent_too);
    CU_add_test(s, "a child starting before its parent is skewed",
                test_a_child_starting_before_its_parent_is_skewed);
    CU_add_test(s, "a span without timestamp takes its parent's start",
                test_a_span_without_timestamp_takes_its_parents_start);
    CU_add_test(s, "a cycle of parents is broken, not looped",
                test_a_cycle_of_parents_is_broken_not_looped);
    CU_add_test(s, "shared halves count as two spans", test_shared_halves_count_as_two_spans);
    CU_add_test(s, "self time subtracts the union of children inside",
                test_self_time_subtracts_the_union_of_children_inside);
    CU_add_test(s, "self time of a span with an early child",
                test_self_time_of_a_span_with_an_early_child);
    CU_add_test(s, "filter needs one span matching every span criterion",
                test_filter_needs_one_span_matching_every_span_criterion);
    CU_add_test(s, "trace prefix matches every textual form",
                test_trace_prefix_matches_every_textual_form);
    CU_add_test(s, "durations need units and may be compound",
                test_durations_need_units_and_may_be_compound);
    CU_add_test(s, "times in every documented form", test_times_in_every_documented_form);
    CU_add_test(s, "diff sides are prefixes, files or both",
                test_diff_sides_are_prefixes_files_or_both);
}
