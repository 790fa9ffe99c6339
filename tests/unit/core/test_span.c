/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/core/test_span.c: suite "core/span": what a span records
 * (ids, references, typed tags, logs, baggage, errors, times), what an
 * unsampled span does not, sampling.priority, limits, and misuse; the
 * unsampled span's lazy ids (drawn once, when first read: propagation,
 * children, scopes, forced sampling, several reading threads, fork) and the
 * per-thread pool of span handles.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fixtures.h"
#include "harness.h"
#include "internal.h"

static tw_tracer *tracer;
static tw_reporter *memory_sender;

static int suite_init(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_max_tags(opts, 8);
    tw_tracer_options_set_max_logs(opts, 3);
    tw_tracer_options_set_max_log_fields(opts, 3);
    tw_tracer_options_set_max_value_bytes(opts, 16);
    tracer = tracer_always_sampled(&memory_sender, opts);
    return tracer ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw_tracer_free(tracer);
    return 0;
}

static void test_root_span_has_ids_and_sampler_tags(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer, "root", NULL);
    const tw_span_context *c = tw_span_get_context(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(tw_span_context_trace_id_high(c) != 0); /* 128-bit by default */
    CU_ASSERT(tw_span_context_trace_id_low(c) != 0);
    CU_ASSERT(tw_span_context_span_id(c) != 0);
    CU_ASSERT_EQUAL(tw_span_context_parent_id(c), 0);
    CU_ASSERT(tw_span_context_is_sampled(c));
    tw_span_finish(s);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory_sender), 1);
    const tw_finished_span *f = tw_memory_reporter_span(memory_sender, 0);
    CU_ASSERT(tag_equals_str(f, "sampler.type", "const"));
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, "sampler.param", &v) && v.type == TW_VALUE_BOOL &&
              v.as.boolean);
    CU_ASSERT_EQUAL(tw_finished_span_flags(f), TW_FLAG_SAMPLED);
    CU_ASSERT(tw_finished_span_start_us(f) > 1600000000000000LL);
    CU_ASSERT(tw_finished_span_duration_us(f) >= 0);
}

/* The wall clock in µs, read directly (the span derives its start from the
 * monotonic clock and a per-thread anchor, clock.h). */
static int64_t wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* Start times follow the wall clock, span after span, also when the
 * anchor is read again (every millisecond: spans are started for 3 ms of
 * the monotonic clock, so several readings happen): each lies between
 * readings taken just before and just after its start (1 µs for the
 * rounding of the anchor's two readings). */
static void test_start_time_is_the_wall_clock(void)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int spans = 0;
    do {
        tw_memory_reporter_clear(memory_sender);
        int64_t before = wall_us();
        tw_span *s = tw_span_start(tracer, "timed", NULL);
        int64_t after = wall_us();
        tw_span_finish(s);
        CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory_sender), 1);
        int64_t start = tw_finished_span_start_us(tw_memory_reporter_span(memory_sender, 0));
        CU_ASSERT(start >= before - 1 && start <= after + 1);
        spans++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (spans < 40 ||
             (now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec) < 3000000L);
}

static void test_child_inherits_trace_and_baggage(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *parent = tw_span_start(tracer, "parent", NULL);
    CU_ASSERT_EQUAL(tw_span_set_baggage(parent, "user", "alice"), TW_OK);
    const tw_span_context *pc = tw_span_get_context(parent);
    tw_span *child = tw_span_start_child(tracer, "child", pc);
    const tw_span_context *cc = tw_span_get_context(child);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_high(cc), tw_span_context_trace_id_high(pc));
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(cc), tw_span_context_trace_id_low(pc));
    CU_ASSERT_EQUAL(tw_span_context_parent_id(cc), tw_span_context_span_id(pc));
    CU_ASSERT_NOT_EQUAL(tw_span_context_span_id(cc), tw_span_context_span_id(pc));
    CU_ASSERT_STRING_EQUAL(tw_span_get_baggage(child, "user"), "alice");
    /* Baggage set on the child does not leak back to the parent. */
    tw_span_set_baggage(child, "step", "2");
    CU_ASSERT_PTR_NULL(tw_span_get_baggage(parent, "step"));
    tw_span_finish(child);
    tw_span_finish(parent);
    const tw_finished_span *f = finished_named(memory_sender, "child");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    /* Sampler tags only on the span that made the decision. */
    CU_ASSERT_FALSE(tw_finished_span_find_tag(f, "sampler.type", NULL));
    CU_ASSERT_EQUAL(tw_finished_span_reference_count(f), 1);
}

static void test_first_child_of_is_parent_and_all_refs_recorded(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *a = tw_span_start(tracer, "a", NULL);
    tw_span *b = tw_span_start(tracer, "b", NULL);
    tw_span_options *opts = tw_span_options_new();
    tw_span_options_add_reference(opts, TW_REF_FOLLOWS_FROM, tw_span_get_context(a));
    tw_span_options_add_reference(opts, TW_REF_CHILD_OF, tw_span_get_context(b));
    tw_span_options_add_reference(opts, TW_REF_CHILD_OF, NULL); /* ignored */
    uint64_t b_id = tw_span_context_span_id(tw_span_get_context(b));
    uint64_t a_id = tw_span_context_span_id(tw_span_get_context(a));
    tw_span *c = tw_span_start(tracer, "c", opts);
    tw_span_options_free(opts);
    CU_ASSERT_EQUAL(tw_span_context_parent_id(tw_span_get_context(c)), b_id);
    tw_span_finish(c);
    tw_span_finish(b);
    tw_span_finish(a);
    const tw_finished_span *f = finished_named(memory_sender, "c");
    CU_ASSERT_EQUAL_FATAL(tw_finished_span_reference_count(f), 2);
    int type;
    uint64_t hi, lo, id;
    CU_ASSERT(tw_finished_span_reference(f, 0, &type, &hi, &lo, &id));
    CU_ASSERT_EQUAL(type, TW_REF_FOLLOWS_FROM);
    CU_ASSERT_EQUAL(id, a_id);
    CU_ASSERT(tw_finished_span_reference(f, 1, &type, &hi, &lo, &id));
    CU_ASSERT_EQUAL(type, TW_REF_CHILD_OF);
    CU_ASSERT_EQUAL(id, b_id);
}

static void test_follows_from_only_makes_a_parent(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *a = tw_span_start(tracer, "a", NULL);
    tw_span_options *opts = tw_span_options_new();
    tw_span_options_add_reference(opts, TW_REF_FOLLOWS_FROM, tw_span_get_context(a));
    tw_span *f = tw_span_start(tracer, "later", opts);
    CU_ASSERT_EQUAL(tw_span_context_parent_id(tw_span_get_context(f)),
                    tw_span_context_span_id(tw_span_get_context(a)));
    tw_span_finish(f);
    tw_span_finish(a);
    tw_span_options_free(opts);
}

static void test_typed_tags_and_logs_are_recorded(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer, "typed", NULL);
    tw_span_set_tag_str(s, "s", "text");
    tw_span_set_tag_bool(s, "b", true);
    tw_span_set_tag_int64(s, "i", -42);
    tw_span_set_tag_double(s, "d", 2.5);
    static const uint8_t bytes[3] = {0, 1, 255};
    tw_span_set_tag_binary(s, "bin", bytes, sizeof bytes);
    tw_log_field fields[2] = {
        {"event", {.type = TW_VALUE_STRING, .as.str = "hit", .len = 3}},
        {"n", {.type = TW_VALUE_INT64, .as.i64 = 7}},
    };
    tw_span_log_fields(s, 1234567, fields, 2);
    tw_span_log_kv(s, "k", "v", NULL);
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "typed");
    tw_value v;
    CU_ASSERT(tag_equals_str(f, "s", "text"));
    CU_ASSERT(tw_finished_span_find_tag(f, "b", &v) && v.type == TW_VALUE_BOOL && v.as.boolean);
    CU_ASSERT(tw_finished_span_find_tag(f, "i", &v) && v.type == TW_VALUE_INT64 && v.as.i64 == -42);
    CU_ASSERT(tw_finished_span_find_tag(f, "d", &v) && v.type == TW_VALUE_DOUBLE &&
              v.as.dbl == 2.5);
    CU_ASSERT(tw_finished_span_find_tag(f, "bin", &v) && v.type == TW_VALUE_BINARY && v.len == 3 &&
              memcmp(v.as.bin, bytes, 3) == 0);
    CU_ASSERT_EQUAL_FATAL(tw_finished_span_log_count(f), 2);
    CU_ASSERT_EQUAL(tw_finished_span_log_timestamp_us(f, 0), 1234567);
    CU_ASSERT(tw_finished_span_log_timestamp_us(f, 1) > 1600000000000000LL);
    const char *key;
    CU_ASSERT(tw_finished_span_log_field(f, 0, 1, &key, &v) && strcmp(key, "n") == 0 &&
              v.as.i64 == 7);
    CU_ASSERT_FALSE(tw_finished_span_find_tag(f, "tracewire.dropped_tags", NULL));
}

static void test_error_helper_sets_tag_and_log(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer, "failing", NULL);
    tw_span_set_error(s, "IOError", "disk full");
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "failing");
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, "error", &v) && v.type == TW_VALUE_BOOL && v.as.boolean);
    CU_ASSERT_EQUAL_FATAL(tw_finished_span_log_count(f), 1);
    CU_ASSERT_EQUAL(tw_finished_span_log_field_count(f, 0), 3);
    const char *key;
    CU_ASSERT(tw_finished_span_log_field(f, 0, 0, &key, &v) && strcmp(key, "event") == 0 &&
              strcmp(v.as.str, "error") == 0);
    CU_ASSERT(tw_finished_span_log_field(f, 0, 1, &key, &v) && strcmp(key, "error.kind") == 0 &&
              strcmp(v.as.str, "IOError") == 0);
    CU_ASSERT(tw_finished_span_log_field(f, 0, 2, &key, &v) && strcmp(key, "message") == 0 &&
              strcmp(v.as.str, "disk full") == 0);
}

static void test_limits_cut_and_mark_the_span(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer, "limited", NULL);
    /* Root already has 2 structural sampler tags (exempt from the cap of 8). */
    char key[16];
    for (int i = 0; i < 12; i++) {
        snprintf(key, sizeof key, "k%d", i);
        tw_span_set_tag_int64(s, key, i);
    }
    tw_span_set_tag_str(s, "k0", "this value is much longer than sixteen bytes");
    for (int i = 0; i < 5; i++)
        tw_span_log_event(s, "e");
    tw_log_field three[3] = {
        {"a", {.type = TW_VALUE_INT64, .as.i64 = 1}},
        {"b", {.type = TW_VALUE_INT64, .as.i64 = 2}},
        {"c", {.type = TW_VALUE_INT64, .as.i64 = 3}},
    };
    tw_span_log_fields(s, 0, three, 3); /* dropped: the log cap (3) is reached */
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "limited");
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, "tracewire.dropped_tags", &v) && v.as.i64 == 5);
    CU_ASSERT(tw_finished_span_find_tag(f, "tracewire.dropped_logs", &v) && v.as.i64 == 3);
    CU_ASSERT(tag_equals_str(f, "sampler.type", "const")); /* never displaced */
    CU_ASSERT_EQUAL(tw_finished_span_log_count(f), 3);
    /* Ids and times are never cut, nor a name below TW__MAX_NAME_BYTES. */
    CU_ASSERT(tw_finished_span_span_id(f) != 0);
    CU_ASSERT_STRING_EQUAL(tw_finished_span_operation(f), "limited");
}

static void test_long_values_are_truncated_on_utf8_boundary(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer, "utf8", NULL);
    /* 15 ASCII bytes then a 3-byte character crossing the 16-byte cap. */
    tw_span_set_tag_str(s, "v", "aaaaaaaaaaaaaaa\xe2\x82\xac tail");
    tw_log_field four[4] = {
        {"a", {.type = TW_VALUE_INT64, .as.i64 = 1}},
        {"b", {.type = TW_VALUE_INT64, .as.i64 = 2}},
        {"c", {.type = TW_VALUE_INT64, .as.i64 = 3}},
        {"d", {.type = TW_VALUE_INT64, .as.i64 = 4}},
    };
    tw_span_log_fields(s, 0, four, 4); /* fourth field cut by max_log_fields=3 */
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "utf8");
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, "v", &v) && v.len == 15);
    CU_ASSERT(tw_finished_span_find_tag(f, "tracewire.truncated_values", &v) && v.as.i64 == 2);
    CU_ASSERT_EQUAL(tw_finished_span_log_field_count(f, 0), 3);
}

static void test_explicit_times_give_exact_duration(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span_options *opts = tw_span_options_new();
    tw_span_options_set_start_time_us(opts, 1700000000000000LL);
    tw_span *s = tw_span_start(tracer, "timed", opts);
    tw_span_finish_at(s, 1700000000000250LL);
    tw_span *backwards = tw_span_start(tracer, "backwards", opts);
    tw_span_finish_at(backwards, 1600000000000000LL);
    tw_span_options_free(opts);
    const tw_finished_span *f = finished_named(memory_sender, "timed");
    CU_ASSERT_EQUAL(tw_finished_span_start_us(f), 1700000000000000LL);
    CU_ASSERT_EQUAL(tw_finished_span_duration_us(f), 250);
    CU_ASSERT_EQUAL(tw_finished_span_duration_us(finished_named(memory_sender, "backwards")), 0);
}

static void test_firehose_flag_is_recorded_and_inherited(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer, "hose", NULL);
    tw_span_set_firehose(s);
    tw_span *child = tw_span_start_child(tracer, "hose-child", tw_span_get_context(s));
    CU_ASSERT(tw_span_context_flags(tw_span_get_context(child)) & TW_FLAG_FIREHOSE);
    tw_span_finish(child);
    tw_span_finish(s);
    CU_ASSERT_EQUAL(tw_finished_span_flags(finished_named(memory_sender, "hose")),
                    TW_FLAG_SAMPLED | TW_FLAG_FIREHOSE);
    CU_ASSERT_EQUAL(tw_finished_span_flags(finished_named(memory_sender, "hose-child")),
                    TW_FLAG_SAMPLED | TW_FLAG_FIREHOSE);
    tw_span_set_firehose(NULL);
}

/* Contexts without ids ("hints", as extract returns them). */
static tw_span_context *hint(uint32_t flags, const char *debug_id, const char *bag_key)
{
    tw__baggage *bag = NULL;
    bool is_empty;
    if (bag_key)
        bag = tw__baggage_with(NULL, bag_key, "v", &is_empty);
    tw__context_parts parts = {.flags = flags, .baggage = bag, .debug_id = debug_id};
    tw_span_context *c = tw__span_context_build(&parts);
    tw__baggage_unref(bag);
    return c;
}

static void test_debug_id_hint_starts_a_debug_trace(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span_context *h = hint(0, "req-42", "tenant");
    CU_ASSERT_FALSE(tw_span_context_is_valid(h));
    CU_ASSERT_STRING_EQUAL(tw_span_context_debug_id(h), "req-42");
    tw_span *s = tw_span_start_child(tracer, "debugged", h);
    const tw_span_context *c = tw_span_get_context(s);
    CU_ASSERT(tw_span_context_is_valid(c));
    CU_ASSERT_EQUAL(tw_span_context_parent_id(c), 0);
    CU_ASSERT_EQUAL(tw_span_context_flags(c), TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
    CU_ASSERT_STRING_EQUAL(tw_span_get_baggage(s, "tenant"), "v");
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "debugged");
    CU_ASSERT(tag_equals_str(f, "jaeger-debug-id", "req-42"));
    CU_ASSERT_EQUAL(tw_finished_span_reference_count(f), 0); /* a hint is no span */
    tw_span_context_unref(h);
}

static void test_decision_only_hint_is_honoured(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "hints");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    tw_span_context *deny = hint(0, NULL, NULL); /* "b3: 0" */
    tw_span *s = tw_span_start_child(t, "denied", deny);
    CU_ASSERT_FALSE(tw_span_is_sampled(s)); /* upstream said no, sampler says yes */
    tw_span_finish(s);
    tw_span_context *deferred = hint(TW__FLAG_DEFERRED, NULL, NULL);
    CU_ASSERT(tw_span_context_is_sampling_deferred(deferred));
    s = tw_span_start_child(t, "deferred", deferred);
    CU_ASSERT(tw_span_is_sampled(s)); /* the local sampler decides */
    tw_span_finish(s);
    CU_ASSERT(tag_equals_str(finished_named(memory, "deferred"), "sampler.type", "const"));
    tw_span_context_unref(deny);
    tw_span_context_unref(deferred);
    tw_tracer_free(t);
}

static void test_deferred_parent_with_ids_decides_locally(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw__context_parts parts = {
        .trace_id_low = 7, .span_id = 9, .flags = TW__FLAG_DEFERRED, .tracestate = "vendor=abc"};
    tw_span_context *p = tw__span_context_build(&parts);
    tw_span *s = tw_span_start_child(tracer, "joined", p);
    const tw_span_context *c = tw_span_get_context(s);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(c), 7);
    CU_ASSERT_EQUAL(tw_span_context_parent_id(c), 9);
    CU_ASSERT_FALSE(tw_span_context_is_sampling_deferred(c));
    CU_ASSERT(tw_span_context_is_sampled(c));
    CU_ASSERT_STRING_EQUAL(tw_span_context_tracestate(c), "vendor=abc"); /* inherited */
    tw_span_finish(s);
    CU_ASSERT(tag_equals_str(finished_named(memory_sender, "joined"), "sampler.type", "const"));
    tw_span_context_unref(p);
}

static void test_set_operation_name_renames(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer, "before", NULL);
    tw_span_set_operation_name(s, "after");
    tw_span_finish(s);
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory_sender, "after"));
    CU_ASSERT_PTR_NULL(finished_named(memory_sender, "before"));
}

static void test_null_arguments_are_harmless(void)
{
    CU_ASSERT_PTR_NULL(tw_span_start(NULL, "x", NULL));
    CU_ASSERT_PTR_NULL(tw_span_start(tracer, NULL, NULL));
    tw_span_finish(NULL);
    tw_span_set_tag_str(NULL, "k", "v");
    tw_span_set_tag_int64(NULL, "k", 1);
    tw_span_log_event(NULL, "e");
    tw_span_set_error(NULL, NULL, NULL);
    CU_ASSERT_EQUAL(tw_span_set_baggage(NULL, "k", "v"), TW_E_INVALID_ARG);
    CU_ASSERT_PTR_NULL(tw_span_get_context(NULL));
    tw_span *s = tw_span_start(tracer, "nulls", NULL);
    tw_span_set_tag_str(s, NULL, "v");
    tw_span_set_tag_str(s, "k", NULL);   /* empty string value */
    tw_span_log_kv(s, "dangling", NULL); /* key without value: log dropped */
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "", "v"), TW_E_INVALID_ARG);
    tw_span_finish(s);
}

static void test_finish_twice_is_reported_once(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer, "twice", NULL);
    tw_span_finish(s);
    /* The handle is dead; while it sits in the thread's pool a second finish
     * is detected and ignored rather than reporting the span again. */
    tw_span_finish(s);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory_sender), 1);
}

/* ---- a later name of a span forced to be sampled; kinds; NULL spans ----------------------- */

static tw_tracer *never_sampled(tw_reporter **memory)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "unit-test");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
    *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, *memory);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    return t;
}

static void test_rename_before_forced_sampling_keeps_the_new_name(void)
{
    tw_reporter *memory;
    tw_tracer *t = never_sampled(&memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw_span *s = tw_span_start(t, "start name", NULL);
    CU_ASSERT_FALSE(tw_span_is_sampled(s));
    tw_span_set_operation_name(s, "renamed");
    tw_span_set_tag_int64(s, TW_TAG_SAMPLING_PRIORITY, 1);
    tw_span_finish(s);
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory, "renamed"));
    CU_ASSERT_PTR_NULL(finished_named(memory, "start name"));
    /* A long name (past the inline buffer) is kept whole. */
    static const char long_name[] = "GET /api/v1/customers/{customer}/orders/{order}/items/{item}";
    s = tw_span_start(t, "short", NULL);
    tw_span_set_operation_name(s, long_name);
    tw_span_set_tag_bool(s, TW_TAG_SAMPLING_PRIORITY, true);
    tw_span_finish(s);
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory, long_name));
    s = tw_span_start(t, long_name, NULL); /* long at start, forced: whole too */
    tw_span_set_tag_bool(s, TW_TAG_SAMPLING_PRIORITY, true);
    tw_span_finish(s);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 3);
    CU_ASSERT_STRING_EQUAL(tw_finished_span_operation(tw_memory_reporter_span(memory, 2)),
                           long_name);
    tw_tracer_free(t);
}

/* A string of @len bytes: 'a's, a 3-byte character across the name bound
 * (bytes TW__MAX_NAME_BYTES - 1 .. + 1), then 'b's. Freed by the caller. */
static char *long_text(size_t len)
{
    char *p = malloc(len + 1);
    memset(p, 'a', len);
    memcpy(p + TW__MAX_NAME_BYTES - 1, "\xe2\x82\xac", 3);
    memset(p + TW__MAX_NAME_BYTES + 2, 'b', len - TW__MAX_NAME_BYTES - 2);
    p[len] = '\0';
    return p;
}

/* Names and keys are bounded like values: an operation name, a tag key or
 * a log field key longer than TW__MAX_NAME_BYTES is cut on a UTF-8
 * boundary (here before the character that crosses it) and counted in
 * tracewire.truncated_values; a 100,000-byte name used to be kept whole and
 * make the span too large for any packet. */
static void test_long_names_and_keys_are_cut_and_counted(void)
{
    tw_memory_reporter_clear(memory_sender);
    char *huge = long_text(100000);
    char cut[TW__MAX_NAME_BYTES];
    memset(cut, 'a', sizeof cut - 1);
    cut[sizeof cut - 1] = '\0'; /* what is kept: the 'a's before the character */
    tw_span *s = tw_span_start(tracer, huge, NULL);
    tw_span_set_tag_int64(s, huge, 1);
    tw_log_field field = {huge, {.type = TW_VALUE_INT64, .as.i64 = 2}};
    tw_span_log_fields(s, 0, &field, 1);
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, cut);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, cut, &v) && v.as.i64 == 1);
    const char *key = NULL;
    CU_ASSERT(tw_finished_span_log_field(f, 0, 0, &key, &v) && key && strcmp(key, cut) == 0);
    CU_ASSERT(tw_finished_span_find_tag(f, "tracewire.truncated_values", &v) && v.as.i64 == 3);

    /* A rename, and a name at the bound, which is kept whole. */
    s = tw_span_start(tracer, "to be renamed", NULL);
    tw_span_set_operation_name(s, huge);
    tw_span_finish(s);
    f = finished_named(memory_sender, cut);
    CU_ASSERT(f && tw_finished_span_find_tag(f, "tracewire.truncated_values", &v) && v.as.i64 == 1);
    memset(huge, 'c', TW__MAX_NAME_BYTES);
    huge[TW__MAX_NAME_BYTES] = '\0';
    s = tw_span_start(tracer, huge, NULL);
    tw_span_finish(s);
    f = finished_named(memory_sender, huge);
    CU_ASSERT(f && !tw_finished_span_find_tag(f, "tracewire.truncated_values", &v));

    /* A span that does not record keeps at most a bounded name, and
     * counts the cut when sampling is forced later. */
    tw_reporter *memory;
    tw_tracer *t = never_sampled(&memory);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    free(huge);
    huge = long_text(100000);
    s = tw_span_start(t, huge, NULL);
    tw_span_set_tag_bool(s, TW_TAG_SAMPLING_PRIORITY, true);
    tw_span_finish(s);
    f = finished_named(memory, cut);
    CU_ASSERT(f && tw_finished_span_find_tag(f, "tracewire.truncated_values", &v) && v.as.i64 == 1);
    tw_tracer_free(t);
    free(huge);
}

static void test_set_kind_writes_and_replaces_span_kind(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer, "kinds", NULL);
    tw_span_set_kind(s, TW_SPAN_KIND_CLIENT);
    tw_span_set_kind(s, TW_SPAN_KIND_SERVER); /* replaces, not a second tag */
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "kinds");
    CU_ASSERT(tag_equals_str(f, TW_TAG_SPAN_KIND, "server"));
    size_t n = 0;
    for (size_t i = 0; i < tw_finished_span_tag_count(f); i++) {
        const char *key;
        tw_value v;
        tw_finished_span_tag(f, i, &key, &v);
        n += strcmp(key, "span.kind") == 0;
    }
    CU_ASSERT_EQUAL(n, 1);
    s = tw_span_start(tracer, "internal", NULL);
    tw_span_set_tag_str(s, TW_TAG_SPAN_KIND, "producer");
    tw_span_set_kind(s, TW_SPAN_KIND_INTERNAL); /* removes it */
    tw_span_set_kind(s, (tw_span_kind)42);      /* logged, ignored */
    tw_span_finish(s);
    CU_ASSERT_FALSE(
        tw_finished_span_find_tag(finished_named(memory_sender, "internal"), "span.kind", NULL));
    tw_span_set_kind(NULL, TW_SPAN_KIND_CLIENT);
}

static char log_lines[4096];
static void keep_log(tw_log_level level, const char *message, void *user_data)
{
    (void)level;
    (void)user_data;
    size_t len = strlen(log_lines);
    snprintf(log_lines + len, sizeof log_lines - len, "%s\n", message);
}

static void test_null_span_calls_are_silent(void)
{
    log_lines[0] = '\0';
    tw_set_logger(keep_log, NULL, TW_LOG_DEBUG);
    tw_span_set_tag_str(NULL, "k", "v");
    tw_span_set_tag_bool(NULL, "k", true);
    tw_span_set_tag_binary(NULL, "k", "b", 1);
    tw_span_log_kv(NULL, "event", "x", NULL);
    tw_span_log_event(NULL, "e");
    tw_log_field f = {"k", {.type = TW_VALUE_STRING, .as.str = "v", .len = 1}};
    tw_span_log_fields(NULL, 0, &f, 1);
    tw_span_set_error(NULL, "k", "m");
    tw_span_set_operation_name(NULL, "x");
    tw_span_set_firehose(NULL);
    tw_span_set_kind(NULL, TW_SPAN_KIND_SERVER);
    CU_ASSERT_EQUAL(tw_span_set_baggage(NULL, "k", "v"), TW_E_INVALID_ARG);
    tw_span_finish(NULL);
    CU_ASSERT_STRING_EQUAL(log_lines, ""); /* span.h: NULL is a silent no-op */
    /* A bad argument on a real span is reported. */
    tw_span *s = tw_span_start(tracer, "real", NULL);
    tw_span_set_tag_str(s, NULL, "v");
    tw_span_finish(s);
    CU_ASSERT_PTR_NOT_NULL(strstr(log_lines, "NULL key"));
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
}

/* ---- baggage: the limits of inject and extract, values that stay valid ------------------------
 */

static void test_baggage_is_capped_like_inject_and_extract(void)
{
    tw_span *s = tw_span_start(tracer, "bag", NULL);
    uint64_t dropped = tw_tracer_counter(tracer, TW_TRACER_BAGGAGE_DROPPED);
    char key[32];
    size_t accepted = 0;
    /* 16,000 items: was quadratic (3.4 s) and unbounded; now bounded, each set
     * copying at most TW_BAGGAGE_MAX_TOTAL_BYTES. */
    for (int i = 0; i < 16000; i++) {
        snprintf(key, sizeof key, "k%d", i);
        accepted += tw_span_set_baggage(s, key, "v") == TW_OK;
    }
    CU_ASSERT_EQUAL(accepted, TW_BAGGAGE_MAX_ITEMS);
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(tw_span_get_context(s)), TW_BAGGAGE_MAX_ITEMS);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_BAGGAGE_DROPPED) - dropped,
                    16000 - TW_BAGGAGE_MAX_ITEMS);
    /* Replacing an existing key is always possible within the caps. */
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "k0", "new"), TW_OK);
    CU_ASSERT_STRING_EQUAL(tw_span_get_baggage(s, "k0"), "new");
    tw_span_finish(s);

    s = tw_span_start(tracer, "big", NULL);
    char *big = malloc(10u << 20); /* a 10 MB value was accepted and injected as one header */
    memset(big, 'x', (10u << 20) - 1);
    big[(10u << 20) - 1] = '\0';
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "big", big), TW_E_LIMIT);
    big[TW_BAGGAGE_MAX_ITEM_BYTES - 3] = '\0'; /* key "big" + value = the item cap */
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "big", big), TW_OK);
    big[TW_BAGGAGE_MAX_ITEM_BYTES - 3] = 'x';
    big[TW_BAGGAGE_MAX_ITEM_BYTES - 2] = '\0';
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "big", big), TW_E_LIMIT); /* one byte over */
    /* The total: two items of 4 KiB fit 8 KiB only with short keys. */
    big[4000] = '\0';
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "b", big), TW_OK);
    big[4000] = 'x';
    big[300] = '\0';
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "c", big), TW_E_LIMIT);
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "big", NULL), TW_OK); /* removing always works */
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "c", big), TW_OK);
    free(big);
    tw_span_finish(s);
    /* A context's own copy follows the same caps. */
    tw_span_context *c = tw_span_context_new(0, 1, 2, 0, TW_FLAG_SAMPLED, NULL);
    char *huge = malloc(TW_BAGGAGE_MAX_ITEM_BYTES + 1);
    memset(huge, 'y', TW_BAGGAGE_MAX_ITEM_BYTES);
    huge[TW_BAGGAGE_MAX_ITEM_BYTES] = '\0';
    CU_ASSERT_PTR_NULL(tw_span_context_with_baggage(c, "k", huge));
    free(huge);
    tw_span_context_unref(c);
}

static void test_context_and_baggage_values_stay_valid_for_the_span_life(void)
{
    tw_span *s = tw_span_start(tracer, "lifetime", NULL);
    const tw_span_context *ctx = tw_span_get_context(s);
    tw_span_set_baggage(s, "tenant", "acme");
    const char *tenant = tw_span_context_baggage_get(ctx, "tenant");
    const char *via_span = tw_span_get_baggage(s, "tenant");
    /* Changing the baggage replaces it: the values read before must stay
     * readable (ASan and valgrind see a use after free otherwise). */
    for (int i = 0; i < 10; i++) {
        char v[16];
        snprintf(v, sizeof v, "v%d", i);
        CU_ASSERT_EQUAL(tw_span_set_baggage(s, "other", v), TW_OK);
        CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(ctx, "other"), v);
    }
    CU_ASSERT_STRING_EQUAL(tenant, "acme");
    CU_ASSERT_STRING_EQUAL(via_span, "acme");
    /* A child shares the baggage; it may finish first: the lent value stays. */
    tw_span_set_baggage(s, "shared", "yes");
    const char *shared = tw_span_get_baggage(s, "shared");
    tw_span *child = tw_span_start_child(tracer, "child", ctx);
    tw_span_set_baggage(s, "shared", "changed");
    tw_span_finish(child);
    CU_ASSERT_STRING_EQUAL(shared, "yes");
    CU_ASSERT_PTR_EQUAL(tw_span_get_context(s), ctx); /* the same pointer all along */
    /* Memory stays bounded: a span that lends and changes without end is
     * refused after 32 kept baggages, and counted. */
    uint64_t dropped = tw_tracer_counter(tracer, TW_TRACER_BAGGAGE_DROPPED);
    size_t refused = 0;
    for (int i = 0; i < 100; i++) {
        tw_span_get_baggage(s, "tenant");
        refused += tw_span_set_baggage(s, "other", i % 2 ? "a" : "b") == TW_E_LIMIT;
    }
    CU_ASSERT(refused > 0);
    CU_ASSERT_EQUAL(tw_tracer_counter(tracer, TW_TRACER_BAGGAGE_DROPPED) - dropped, refused);
    /* Changes without reads in between keep nothing. */
    tw_span *quiet = tw_span_start(tracer, "quiet", NULL);
    for (int i = 0; i < 1000; i++)
        CU_ASSERT_EQUAL_FATAL(tw_span_set_baggage(quiet, "k", i % 2 ? "a" : "b"), TW_OK);
    tw_span_finish(quiet);
    tw_span_finish(s);
}

static void test_context_of_a_finished_span_is_refused(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *parent = tw_span_start(tracer, "parent", NULL);
    const tw_span_context *kept = tw_span_get_context(parent);
    tw_span_context *owned = tw_span_context_ref(kept); /* the right way */
    tw_span_finish(parent);
    /* The handle is pooled, so the misuse is seen: the child is a root,
     * not a child of whatever span reuses the handle. */
    CU_ASSERT_PTR_NULL(tw_span_context_ref(kept));
    tw_span *child = tw_span_start_child(tracer, "after-finish", kept);
    tw_span *proper = tw_span_start_child(tracer, "proper", owned);
    tw_span_finish(child);
    tw_span_finish(proper);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(finished_named(memory_sender, "after-finish")), 0);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(finished_named(memory_sender, "proper")),
                    tw_span_context_span_id(owned));
    tw_span_context_unref(owned);
}

/* ---- spans that do not record: lazy ids, the handle pool ----------------------------------- */

size_t tw__span_pool_size(void); /* span.c: the calling thread's pooled handles */

/* A tracer whose sampler says no to every trace, reporting into memory. */
static tw_tracer *never_sampling_tracer(bool is_128bit, tw_reporter **memory_out)
{
    tw_tracer_options *o = tw_tracer_options_new();
    tw_tracer_options_set_service(o, "unit-test");
    tw_tracer_options_set_sampler(o, tw_sampler_const_new(false));
    tw_tracer_options_set_trace_id_128bit(o, is_128bit);
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(o, memory);
    tw_tracer *t = tw_tracer_new(o, NULL);
    tw_tracer_options_free(o);
    if (memory_out)
        *memory_out = memory;
    return t;
}

static unsigned int ids_pending(const tw_span *s)
{
    return atomic_load(&s->ids_pending);
}

static void test_unsampled_root_draws_its_ids_once_when_read(void)
{
    tw_tracer *t = never_sampling_tracer(true, NULL);
    tw_span *s = tw_span_start(t, "root", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(ids_pending(s), TW__IDS_TRACE128); /* nothing drawn yet */
    const tw_span_context *c = tw_span_get_context(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(ids_pending(s), TW__IDS_READY);
    uint64_t hi = tw_span_context_trace_id_high(c), lo = tw_span_context_trace_id_low(c);
    uint64_t id = tw_span_context_span_id(c);
    CU_ASSERT(hi != 0 && lo != 0);
    CU_ASSERT_EQUAL(id, lo); /* a root's span id is its trace id's low half */
    CU_ASSERT_EQUAL(tw_span_context_parent_id(c), 0);
    CU_ASSERT(tw_span_context_is_valid(c));
    CU_ASSERT_FALSE(tw_span_context_is_sampled(c));
    CU_ASSERT(tw_span_context_is_trace_id_random(c));
    /* Read again, through the same pointer: the same ids. */
    CU_ASSERT_PTR_EQUAL(tw_span_get_context(s), c);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_high(tw_span_get_context(s)), hi);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(tw_span_get_context(s)), lo);
    CU_ASSERT_EQUAL(tw_span_context_span_id(tw_span_get_context(s)), id);
    /* An owned copy carries them too. */
    tw_span_context *copy = tw_span_context_ref(c);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(copy), lo);
    CU_ASSERT_EQUAL(tw_span_context_span_id(copy), id);
    tw_span_context_unref(copy);
    tw_span_finish(s);

    /* 64-bit trace ids: the high half stays 0. */
    tw_tracer *t64 = never_sampling_tracer(false, NULL);
    s = tw_span_start(t64, "root", NULL);
    CU_ASSERT_EQUAL(ids_pending(s), TW__IDS_TRACE64);
    c = tw_span_get_context(s);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_high(c), 0);
    CU_ASSERT(tw_span_context_trace_id_low(c) != 0);
    CU_ASSERT_EQUAL(tw_span_context_span_id(c), tw_span_context_trace_id_low(c));
    tw_span_finish(s);
    tw_tracer_free(t64);
    tw_tracer_free(t);
}

static void test_child_of_unsampled_span_shares_its_trace_and_decision(void)
{
    tw_reporter *memory = NULL;
    tw_tracer *t = never_sampling_tracer(true, &memory);
    tw_span *parent = tw_span_start(t, "parent", NULL);
    const tw_span_context *pc = tw_span_get_context(parent);
    tw_span *child = tw_span_start_child(t, "child", pc);
    CU_ASSERT_PTR_NOT_NULL_FATAL(child);
    /* The trace id is the parent's from the start; the span id waits. */
    CU_ASSERT_EQUAL(ids_pending(child), TW__IDS_SPAN);
    const tw_span_context *cc = tw_span_get_context(child);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_high(cc), tw_span_context_trace_id_high(pc));
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(cc), tw_span_context_trace_id_low(pc));
    CU_ASSERT_EQUAL(tw_span_context_parent_id(cc), tw_span_context_span_id(pc));
    CU_ASSERT(tw_span_context_span_id(cc) != 0);
    CU_ASSERT(tw_span_context_span_id(cc) != tw_span_context_span_id(pc));
    CU_ASSERT_FALSE(tw_span_context_is_sampled(cc));
    CU_ASSERT_FALSE(tw_span_is_sampled(child));
    /* A grandchild through the active scope: activating draws the ids the
     * scope's snapshot carries. */
    tw_span *scoped = tw_span_start_child(t, "scoped", cc);
    tw_scope *scope = tw_scope_activate(scoped, false);
    CU_ASSERT_EQUAL(ids_pending(scoped), TW__IDS_READY);
    const tw_span_context *active = tw_tracer_active_context(t);
    CU_ASSERT_EQUAL(tw_span_context_span_id(active),
                    tw_span_context_span_id(tw_span_get_context(scoped)));
    tw_span *grandchild = tw_span_start(t, "grandchild", NULL);
    const tw_span_context *gc = tw_span_get_context(grandchild);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(gc), tw_span_context_trace_id_low(pc));
    CU_ASSERT_EQUAL(tw_span_context_parent_id(gc), tw_span_context_span_id(active));
    CU_ASSERT_FALSE(tw_span_context_is_sampled(gc));
    tw_span_finish(grandchild);
    tw_span_finish(scoped); /* finished while active: the scope forgets it */
    CU_ASSERT_PTR_NULL(tw_scope_span(scope));
    CU_ASSERT_EQUAL(tw_scope_close(scope), TW_OK);
    tw_span_finish(child);
    tw_span_finish(parent);
    /* Neither handlers nor the reporter see a span that does not record. */
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    CU_ASSERT_EQUAL(tw_tracer_counter(t, TW_TRACER_SPANS_STARTED_SAMPLED), 0);
    tw_tracer_free(t);
}

static void test_unsampled_span_injects_a_context_downstream_can_join(void)
{
    tw_tracer *t = never_sampling_tracer(true, NULL);
    tw_span *s = tw_span_start(t, "client", NULL);
    CU_ASSERT_EQUAL(tw_span_set_baggage(s, "tenant", "acme"), TW_OK);
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    const tw_span_context *c = tw_span_get_context(s);
    CU_ASSERT_EQUAL_FATAL(tw_tracer_inject(t, c, TW_FORMAT_HTTP_HEADERS, &w), TW_OK);
    char trace_hex[TW_TRACE_ID_HEX_SIZE], span_hex[TW_SPAN_ID_HEX_SIZE];
    tw_span_context_trace_id_hex(c, trace_hex, sizeof trace_hex);
    tw_span_context_span_id_hex(c, span_hex, sizeof span_hex);
    const char *header = tw_headers_get(h, "uber-trace-id");
    CU_ASSERT_PTR_NOT_NULL_FATAL(header);
    /* trace:span:parent:flags: a root (parent 0), not sampled (flags 0). */
    char want[128];
    snprintf(want, sizeof want, "%s:%s:0000000000000000:0", trace_hex, span_hex);
    CU_ASSERT_STRING_EQUAL(header, want);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "uberctx-tenant"), "acme");
    /* The downstream service extracts it and joins the trace, unsampled. */
    tw_carrier_reader r = tw_headers_reader(h);
    tw_span_context *got = tw_tracer_extract(t, TW_FORMAT_HTTP_HEADERS, &r, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_high(got), tw_span_context_trace_id_high(c));
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(got), tw_span_context_trace_id_low(c));
    CU_ASSERT_EQUAL(tw_span_context_span_id(got), tw_span_context_span_id(c));
    CU_ASSERT_FALSE(tw_span_context_is_sampled(got));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(got, "tenant"), "acme");
    tw_span *server = tw_span_start_child(t, "server", got);
    const tw_span_context *sc = tw_span_get_context(server);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(sc), tw_span_context_trace_id_low(c));
    CU_ASSERT_EQUAL(tw_span_context_parent_id(sc), tw_span_context_span_id(c));
    CU_ASSERT_STRING_EQUAL(tw_span_get_baggage(server, "tenant"), "acme");
    tw_span_finish(server);
    tw_span_context_unref(got);
    /* W3C's form of the same context (the log-correlation helper). */
    char tp[TW_TRACEPARENT_SIZE];
    CU_ASSERT_PTR_NOT_NULL(tw_span_context_traceparent(c, tp, sizeof tp));
    CU_ASSERT_PTR_NOT_NULL(strstr(tp, trace_hex));
    CU_ASSERT_PTR_NOT_NULL(strstr(tp, span_hex));
    tw_headers_free(h);
    tw_span_finish(s);
    tw_tracer_free(t);
}

static void test_forced_unsampled_span_is_reported_with_the_ids_it_showed(void)
{
    tw_reporter *memory = NULL;
    tw_tracer *t = never_sampling_tracer(true, &memory);
    /* Read before the decision changes: the report carries those ids. */
    tw_span *s = tw_span_start(t, "read-then-forced", NULL);
    const tw_span_context *c = tw_span_get_context(s);
    uint64_t lo = tw_span_context_trace_id_low(c), id = tw_span_context_span_id(c);
    tw_span_set_tag_int64(s, "sampling.priority", 1);
    CU_ASSERT(tw_span_is_sampled(s));
    tw_span_finish(s);
    /* Never read: forcing draws them. */
    s = tw_span_start(t, "forced-unread", NULL);
    tw_span_set_tag_bool(s, "sampling.priority", true);
    tw_span_set_tag_str(s, "component", "unit");
    tw_span_finish(s);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 2);
    const tw_finished_span *f = finished_named(memory, "read-then-forced");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(tw_finished_span_trace_id_low(f), lo);
    CU_ASSERT_EQUAL(tw_finished_span_span_id(f), id);
    CU_ASSERT_EQUAL(tw_finished_span_flags(f), TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
    tw_value v;
    CU_ASSERT_FALSE(tw_finished_span_find_tag(f, "sampler.type", &v)); /* forced, not decided */
    f = finished_named(memory, "forced-unread");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(tw_finished_span_trace_id_high(f) != 0);
    CU_ASSERT(tw_finished_span_trace_id_low(f) != 0);
    CU_ASSERT_EQUAL(tw_finished_span_span_id(f), tw_finished_span_trace_id_low(f));
    CU_ASSERT(tag_equals_str(f, "component", "unit"));
    tw_tracer_free(t);
}

typedef struct {
    tw_span *span;
    uint64_t trace_low, span_id;
    pthread_barrier_t *start;
} reader_arg;

static void *read_context(void *p)
{
    reader_arg *a = p;
    pthread_barrier_wait(a->start);
    const tw_span_context *c = tw_span_get_context(a->span);
    a->trace_low = tw_span_context_trace_id_low(c);
    a->span_id = tw_span_context_span_id(c);
    return NULL;
}

static void test_threads_reading_one_lazy_context_see_the_same_ids(void)
{
    tw_tracer *t = never_sampling_tracer(true, NULL);
    for (int round = 0; round < 20; round++) {
        tw_span *root = tw_span_start(t, "shared", NULL);
        tw_span *child = tw_span_start_child(t, "shared-child", tw_span_get_context(root));
        enum { N = 4 };
        pthread_t th[N];
        reader_arg args[N];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, N);
        for (int i = 0; i < N; i++) {
            args[i] = (reader_arg){.span = i % 2 ? child : root, .start = &start};
            pthread_create(&th[i], NULL, read_context, &args[i]);
        }
        for (int i = 0; i < N; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&start);
        const tw_span_context *rc = tw_span_get_context(root), *cc = tw_span_get_context(child);
        for (int i = 0; i < N; i++) {
            const tw_span_context *want = i % 2 ? cc : rc;
            CU_ASSERT_EQUAL(args[i].trace_low, tw_span_context_trace_id_low(want));
            CU_ASSERT_EQUAL(args[i].span_id, tw_span_context_span_id(want));
        }
        tw_span_finish(child);
        tw_span_finish(root);
    }
    tw_tracer_free(t);
}

static void *spans_in_a_thread(void *p)
{
    tw_tracer *t = p;
    tw_span *open[100];
    for (int i = 0; i < 100; i++)
        open[i] = tw_span_start(t, "worker", NULL);
    for (int i = 0; i < 100; i++)
        tw_span_finish(open[i]);
    /* Bounded: the rest went back to the heap. The pool is freed at exit. */
    return (void *)(uintptr_t)tw__span_pool_size();
}

static void test_span_handles_are_pooled_per_thread_and_bounded(void)
{
    tw_tracer *t = never_sampling_tracer(true, NULL);
    tw_span *open[100];
    for (int i = 0; i < 100; i++)
        open[i] = tw_span_start(t, "many", NULL);
    for (int i = 0; i < 100; i++)
        tw_span_finish(open[i]);
    size_t pooled = tw__span_pool_size();
    CU_ASSERT(pooled > 0 && pooled <= 64);
    tw_span *s = tw_span_start(t, "reuse", NULL);
    CU_ASSERT_EQUAL(tw__span_pool_size(), pooled - 1); /* taken from the pool */
    tw_span_finish(s);
    CU_ASSERT_EQUAL(tw__span_pool_size(), pooled);
    /* Another thread has its own pool, as bounded; this one is untouched. */
    pthread_t th;
    void *theirs = NULL;
    pthread_create(&th, NULL, spans_in_a_thread, t);
    pthread_join(th, &theirs);
    CU_ASSERT((uintptr_t)theirs > 0 && (uintptr_t)theirs <= 64);
    CU_ASSERT_EQUAL(tw__span_pool_size(), pooled);
    tw_tracer_free(t); /* drains this thread's pool */
    CU_ASSERT_EQUAL(tw__span_pool_size(), 0);
}

static void test_forked_child_draws_its_own_ids_and_reuses_handles(void)
{
    tw_tracer *t = never_sampling_tracer(true, NULL);
    tw_span *before = tw_span_start(t, "before-fork", NULL); /* ids not drawn yet */
    int fds[2];
    CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        /* The child: the inherited span and new ones work; ids come from the
         * child's own generator (reseeded after fork). */
        close(fds[0]);
        uint64_t ids[2];
        ids[0] = tw_span_context_trace_id_low(tw_span_get_context(before));
        tw_span *s = tw_span_start(t, "in-child", NULL);
        ids[1] = tw_span_context_trace_id_low(tw_span_get_context(s));
        tw_span_finish(s);
        tw_span_finish(before);
        for (int i = 0; i < 100; i++)
            tw_span_finish(tw_span_start(t, "loop", NULL));
        bool ok =
            write(fds[1], ids, sizeof ids) == (ssize_t)sizeof ids && tw__span_pool_size() <= 64;
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    uint64_t parent_ids[2];
    parent_ids[0] = tw_span_context_trace_id_low(tw_span_get_context(before));
    tw_span *s = tw_span_start(t, "in-parent", NULL);
    parent_ids[1] = tw_span_context_trace_id_low(tw_span_get_context(s));
    tw_span_finish(s);
    tw_span_finish(before);
    uint64_t child_ids[2] = {0, 0};
    CU_ASSERT_EQUAL(read(fds[0], child_ids, sizeof child_ids), (ssize_t)sizeof child_ids);
    close(fds[0]);
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CU_ASSERT(child_ids[0] != 0 && child_ids[1] != 0);
    CU_ASSERT(child_ids[1] != parent_ids[1]);
    CU_ASSERT(child_ids[0] != child_ids[1]);
    tw_tracer_free(t);
}

static void test_probability_zero_tracer_never_samples_and_draws_lazily(void)
{
    tw_tracer_options *o = tw_tracer_options_new();
    tw_tracer_options_set_service(o, "unit-test");
    tw_tracer_options_set_sampler(o, tw_sampler_probabilistic_new(0.0, NULL));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(o, memory);
    tw_tracer *t = tw_tracer_new(o, NULL);
    tw_tracer_options_free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int i = 0; i < 100; i++) {
        tw_span *s = tw_span_start(t, "p0", NULL);
        CU_ASSERT_FALSE(tw_span_is_sampled(s));
        CU_ASSERT_EQUAL(ids_pending(s), TW__IDS_TRACE128);
        tw_span_finish(s);
    }
    /* A sampler that reads the trace id (probability 0.5) draws it at the
     * decision: the span's context holds it at once. */
    o = tw_tracer_options_new();
    tw_tracer_options_set_service(o, "unit-test");
    tw_tracer_options_set_sampler(o, tw_sampler_probabilistic_new(0.5, NULL));
    tw_tracer_options_set_reporter(o, tw_reporter_null_new());
    tw_tracer *half = tw_tracer_new(o, NULL);
    tw_tracer_options_free(o);
    int sampled = 0;
    for (int i = 0; i < 200; i++) {
        tw_span *s = tw_span_start(half, "p50", NULL);
        CU_ASSERT_EQUAL(ids_pending(s), TW__IDS_READY);
        const tw_span_context *c = tw_span_get_context(s);
        /* Jaeger's rule on the id the span carries. */
        bool want = (tw_span_context_trace_id_low(c) & 0x7fffffffffffffffULL) <=
                    (uint64_t)(0x7fffffffffffffffULL * 0.5);
        CU_ASSERT_EQUAL(tw_span_is_sampled(s), want);
        sampled += want;
        tw_span_finish(s);
    }
    CU_ASSERT(sampled > 40 && sampled < 160);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    tw_tracer_free(half);
    tw_tracer_free(t);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("core/span", suite_init, suite_cleanup);
    CU_add_test(suite, "root_span_has_ids_and_sampler_tags",
                test_root_span_has_ids_and_sampler_tags);
    CU_add_test(suite, "start_time_is_the_wall_clock", test_start_time_is_the_wall_clock);
    CU_add_test(suite, "child_inherits_trace_and_baggage", test_child_inherits_trace_and_baggage);
    CU_add_test(suite, "first_child_of_is_parent_and_all_refs_recorded",
                test_first_child_of_is_parent_and_all_refs_recorded);
    CU_add_test(suite, "follows_from_only_makes_a_parent", test_follows_from_only_makes_a_parent);
    CU_add_test(suite, "typed_tags_and_logs_are_recorded", test_typed_tags_and_logs_are_recorded);
    CU_add_test(suite, "error_helper_sets_tag_and_log", test_error_helper_sets_tag_and_log);
    CU_add_test(suite, "limits_cut_and_mark_the_span", test_limits_cut_and_mark_the_span);
    CU_add_test(suite, "long_values_are_truncated_on_utf8_boundary",
                test_long_values_are_truncated_on_utf8_boundary);
    CU_add_test(suite, "explicit_times_give_exact_duration",
                test_explicit_times_give_exact_duration);
    CU_add_test(suite, "firehose_flag_is_recorded_and_inherited",
                test_firehose_flag_is_recorded_and_inherited);
    CU_add_test(suite, "debug_id_hint_starts_a_debug_trace",
                test_debug_id_hint_starts_a_debug_trace);
    CU_add_test(suite, "decision_only_hint_is_honoured", test_decision_only_hint_is_honoured);
    CU_add_test(suite, "deferred_parent_with_ids_decides_locally",
                test_deferred_parent_with_ids_decides_locally);
    CU_add_test(suite, "set_operation_name_renames", test_set_operation_name_renames);
    CU_add_test(suite, "null_arguments_are_harmless", test_null_arguments_are_harmless);
    CU_add_test(suite, "finish_twice_is_reported_once", test_finish_twice_is_reported_once);
    CU_add_test(suite, "rename_before_forced_sampling_keeps_the_new_name",
                test_rename_before_forced_sampling_keeps_the_new_name);
    CU_add_test(suite, "long_names_and_keys_are_cut_and_counted",
                test_long_names_and_keys_are_cut_and_counted);
    CU_add_test(suite, "set_kind_writes_and_replaces_span_kind",
                test_set_kind_writes_and_replaces_span_kind);
    CU_add_test(suite, "null_span_calls_are_silent", test_null_span_calls_are_silent);
    CU_add_test(suite, "baggage_is_capped_like_inject_and_extract",
                test_baggage_is_capped_like_inject_and_extract);
    CU_add_test(suite, "context_and_baggage_values_stay_valid_for_the_span_life",
                test_context_and_baggage_values_stay_valid_for_the_span_life);
    CU_add_test(suite, "context_of_a_finished_span_is_refused",
                test_context_of_a_finished_span_is_refused);
    CU_add_test(suite, "unsampled_root_draws_its_ids_once_when_read",
                test_unsampled_root_draws_its_ids_once_when_read);
    CU_add_test(suite, "child_of_unsampled_span_shares_its_trace_and_decision",
                test_child_of_unsampled_span_shares_its_trace_and_decision);
    CU_add_test(suite, "unsampled_span_injects_a_context_downstream_can_join",
                test_unsampled_span_injects_a_context_downstream_can_join);
    CU_add_test(suite, "forced_unsampled_span_is_reported_with_the_ids_it_showed",
                test_forced_unsampled_span_is_reported_with_the_ids_it_showed);
    CU_add_test(suite, "threads_reading_one_lazy_context_see_the_same_ids",
                test_threads_reading_one_lazy_context_see_the_same_ids);
    CU_add_test(suite, "span_handles_are_pooled_per_thread_and_bounded",
                test_span_handles_are_pooled_per_thread_and_bounded);
    CU_add_test(suite, "forked_child_draws_its_own_ids_and_reuses_handles",
                test_forked_child_draws_its_own_ids_and_reuses_handles);
    CU_add_test(suite, "probability_zero_tracer_never_samples_and_draws_lazily",
                test_probability_zero_tracer_never_samples_and_draws_lazily);
}
