/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/handlers/test_mutable_span.c: suite "handlers/mutable_span": what
 * a handler reads from the finishing span and what its writes do, as the
 * memory reporter then sees the span: rename; add, change and remove tags;
 * replacing one of several tags of a key; log fields; the tracer's limits on
 * handler writes; misuse (NULL, out of range) leaving the span unchanged.
 *
 * Each test installs `edit` as the one handler of the fixture's tracer: the
 * test's callback runs inside on_finish and the assertions about the result
 * run on the reported span afterwards.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"

static tw_tracer *tracer_limited; /* max_tags 4, max_value_bytes 8, const(true), memory */
static tw_reporter *memory_sender;
static void (*edit)(tw_mutable_span *span); /* the current test's edit */

static tw_handler_result run_edit(void *user_data, tw_mutable_span *span)
{
    (void)user_data;
    if (edit)
        edit(span);
    return TW_HANDLER_KEEP;
}

static int suite_init(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_max_tags(opts, 4);
    tw_tracer_options_set_max_value_bytes(opts, 8);
    tw_span_handler h = {.size = sizeof h, .on_finish = run_edit};
    if (tw_tracer_options_add_handler(opts, &h) != TW_OK)
        return 1;
    tracer_limited = tracer_always_sampled(&memory_sender, opts);
    return tracer_limited ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw_tracer_free(tracer_limited);
    return 0;
}

/* Starts "op" with tags a=1 (string) and b=2 (int), a log, finishes it
 * through @fn and returns the reported span. */
static const tw_finished_span *finish_with(void (*fn)(tw_mutable_span *span))
{
    tw_memory_reporter_clear(memory_sender);
    edit = fn;
    tw_span_options *o = tw_span_options_new();
    tw_span_options_set_start_time_us(o, 1700000000000000LL);
    tw_span *s = tw_span_start(tracer_limited, "op", o);
    tw_span_options_free(o);
    tw_span_set_tag_str(s, "a", "1");
    tw_span_set_tag_int64(s, "b", 2);
    tw_span_log_kv(s, "event", "login", "user", "alice", NULL);
    tw_span_finish_at(s, 1700000000000250LL);
    edit = NULL;
    return tw_memory_reporter_count(memory_sender) == 1 ? tw_memory_reporter_span(memory_sender, 0)
                                                        : NULL;
}

/* ---- reading ------------------------------------------------------------------------------ */

static struct {
    uint64_t trace_low, span_id;
    unsigned int flags;
    bool is_sampled;
    char operation[16];
    int64_t start_us, duration_us;
    size_t n_tags, n_logs, n_fields;
    char first_key[16], field_value[8];
    int64_t b;
} read_back;

static void read_everything(tw_mutable_span *span)
{
    read_back.trace_low = tw_mutable_span_trace_id_low(span);
    read_back.span_id = tw_mutable_span_span_id(span);
    read_back.flags = tw_mutable_span_flags(span);
    read_back.is_sampled = tw_mutable_span_is_sampled(span);
    snprintf(read_back.operation, sizeof read_back.operation, "%s",
             tw_mutable_span_operation(span));
    read_back.start_us = tw_mutable_span_start_us(span);
    read_back.duration_us = tw_mutable_span_duration_us(span);
    read_back.n_tags = tw_mutable_span_tag_count(span);
    const char *key = NULL;
    tw_value v;
    if (tw_mutable_span_tag(span, 0, &key, &v))
        snprintf(read_back.first_key, sizeof read_back.first_key, "%s", key);
    read_back.b = tw_mutable_span_find_tag(span, "b", &v) ? v.as.i64 : -1;
    read_back.n_logs = tw_mutable_span_log_count(span);
    read_back.n_fields = tw_mutable_span_log_field_count(span, 0);
    if (tw_mutable_span_log_field(span, 0, 1, &key, &v) && v.type == TW_VALUE_STRING)
        snprintf(read_back.field_value, sizeof read_back.field_value, "%s", v.as.str);
}

static void test_handler_reads_the_finished_record(void)
{
    const tw_finished_span *f = finish_with(read_everything);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(read_back.trace_low, tw_finished_span_trace_id_low(f));
    CU_ASSERT_EQUAL(read_back.span_id, tw_finished_span_span_id(f));
    CU_ASSERT_EQUAL(read_back.flags, TW_FLAG_SAMPLED);
    CU_ASSERT(read_back.is_sampled);
    CU_ASSERT_STRING_EQUAL(read_back.operation, "op");
    CU_ASSERT_EQUAL(read_back.start_us, 1700000000000000LL);
    CU_ASSERT_EQUAL(read_back.duration_us, 250);
    CU_ASSERT_EQUAL(read_back.n_tags, tw_finished_span_tag_count(f)); /* sampler.* included */
    CU_ASSERT_STRING_EQUAL(read_back.first_key, "sampler.type");
    CU_ASSERT_EQUAL(read_back.b, 2);
    CU_ASSERT_EQUAL(read_back.n_logs, 1);
    CU_ASSERT_EQUAL(read_back.n_fields, 2);
    CU_ASSERT_STRING_EQUAL(read_back.field_value, "alice");
}

/* ---- writing ------------------------------------------------------------------------------ */

static void rename_span(tw_mutable_span *span)
{
    CU_ASSERT_EQUAL(tw_mutable_span_set_operation(span, "renamed"), TW_OK);
    CU_ASSERT_STRING_EQUAL(tw_mutable_span_operation(span), "renamed");
}

static void test_rename_is_reported(void)
{
    const tw_finished_span *f = finish_with(rename_span);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_STRING_EQUAL(tw_finished_span_operation(f), "renamed");
}

static void add_change_remove(tw_mutable_span *span)
{
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_str(span, "a", "changed"), TW_OK);
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_bool(span, "added", true), TW_OK);
    CU_ASSERT_EQUAL(tw_mutable_span_remove_tag(span, "b"), 1);
    CU_ASSERT_EQUAL(tw_mutable_span_remove_tag(span, "b"), 0);
}

static void test_tags_added_changed_and_removed_are_reported(void)
{
    const tw_finished_span *f = finish_with(add_change_remove);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(tag_equals_str(f, "a", "changed"));
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, "added", &v) && v.type == TW_VALUE_BOOL && v.as.boolean);
    CU_ASSERT_FALSE(tw_finished_span_find_tag(f, "b", NULL));
    /* Order kept: sampler.type, sampler.param, a, added. */
    const char *key = NULL;
    CU_ASSERT(tw_finished_span_tag(f, 2, &key, NULL) && strcmp(key, "a") == 0);
    CU_ASSERT(tw_finished_span_tag(f, 3, &key, NULL) && strcmp(key, "added") == 0);
    CU_ASSERT_EQUAL(tw_finished_span_tag_count(f), 4);
}

static void duplicate_then_set(tw_mutable_span *span)
{
    /* "b" is there twice: find sees the last; set keeps the first's place. */
    tw_value v;
    CU_ASSERT(tw_mutable_span_find_tag(span, "b", &v) && v.as.i64 == 2);
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_double(span, "b", 2.5), TW_OK);
}

static void test_set_replaces_the_first_tag_of_a_key_and_removes_the_others(void)
{
    tw_memory_reporter_clear(memory_sender);
    edit = duplicate_then_set;
    tw_span *s = tw_span_start(tracer_limited, "dups", NULL);
    tw_span_set_tag_int64(s, "b", 1);
    tw_span_set_tag_str(s, "x", "between");
    tw_span_set_tag_int64(s, "b", 2);
    tw_span_finish(s);
    edit = NULL;
    const tw_finished_span *f = finished_named(memory_sender, "dups");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    size_t n_b = 0, first_b = SIZE_MAX;
    for (size_t i = 0; i < tw_finished_span_tag_count(f); i++) {
        const char *key;
        tw_value v;
        tw_finished_span_tag(f, i, &key, &v);
        if (strcmp(key, "b") == 0) {
            n_b++;
            if (first_b == SIZE_MAX)
                first_b = i;
            CU_ASSERT(v.type == TW_VALUE_DOUBLE && v.as.dbl == 2.5);
        }
    }
    CU_ASSERT_EQUAL(n_b, 1);
    CU_ASSERT_EQUAL(first_b, 2); /* after sampler.type and sampler.param, before "x" */
    CU_ASSERT(tag_equals_str(f, "x", "between"));
}

static void replace_second_of_two(tw_mutable_span *span)
{
    size_t seen = 0;
    const char *key;
    for (size_t i = 0; tw_mutable_span_tag(span, i, &key, NULL); i++) {
        if (strcmp(key, "email") == 0 && ++seen == 2)
            CU_ASSERT_EQUAL(tw_mutable_span_set_tag_str_at(span, i, "hidden"), TW_OK);
    }
}

static void test_set_at_index_replaces_one_of_several_tags_of_a_key(void)
{
    tw_memory_reporter_clear(memory_sender);
    edit = replace_second_of_two;
    tw_span *s = tw_span_start(tracer_limited, "two", NULL);
    tw_span_set_tag_str(s, "email", "a@x");
    tw_span_set_tag_str(s, "email", "b@x");
    tw_span_finish(s);
    edit = NULL;
    const tw_finished_span *f = finished_named(memory_sender, "two");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const char *key;
    tw_value v;
    CU_ASSERT(tw_finished_span_tag(f, 2, &key, &v) && strcmp(v.as.str, "a@x") == 0);
    CU_ASSERT(tw_finished_span_tag(f, 3, &key, &v) && strcmp(key, "email") == 0 &&
              strcmp(v.as.str, "hidden") == 0);
}

static void rewrite_log_field(tw_mutable_span *span)
{
    CU_ASSERT_EQUAL(tw_mutable_span_set_log_field_str(span, 0, 1, "bob"), TW_OK);
    CU_ASSERT_EQUAL(tw_mutable_span_set_log_field_str(span, 0, 2, "x"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_mutable_span_set_log_field_str(span, 1, 0, "x"), TW_E_INVALID_ARG);
}

static void test_log_field_values_can_be_rewritten(void)
{
    const tw_finished_span *f = finish_with(rewrite_log_field);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    const char *key;
    tw_value v;
    CU_ASSERT(tw_finished_span_log_field(f, 0, 1, &key, &v));
    CU_ASSERT_STRING_EQUAL(key, "user");
    CU_ASSERT_STRING_EQUAL(v.as.str, "bob");
    CU_ASSERT(tw_finished_span_log_field(f, 0, 0, &key, &v) && strcmp(v.as.str, "login") == 0);
}

static void push_past_limits(tw_mutable_span *span)
{
    /* The span has a, b (2 of 4 user tags) plus sampler.type/param (exempt). */
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_int64(span, "c", 3), TW_OK);
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_int64(span, "d", 4), TW_OK);
    size_t before = tw_mutable_span_tag_count(span);
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_int64(span, "e", 5), TW_E_LIMIT);
    CU_ASSERT_EQUAL(tw_mutable_span_tag_count(span), before);
    /* Changing an existing tag is not a new tag. */
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_str(span, "a", "0123456789abcdef"), TW_OK);
    tw_value v;
    CU_ASSERT(tw_mutable_span_find_tag(span, "a", &v) && v.len == 8); /* cut to 8 bytes */
    /* Removing makes room again. */
    CU_ASSERT_EQUAL(tw_mutable_span_remove_tag(span, "d"), 1);
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_int64(span, "e", 5), TW_OK);
}

static void test_handler_writes_obey_the_tracer_limits(void)
{
    const tw_finished_span *f = finish_with(push_past_limits);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(tag_equals_str(f, "a", "01234567"));
    CU_ASSERT_FALSE(tw_finished_span_find_tag(f, "d", NULL));
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, "e", &v) && v.as.i64 == 5);
    CU_ASSERT_EQUAL(tw_finished_span_tag_count(f), 6);
}

static void misuse(tw_mutable_span *span)
{
    size_t n = tw_mutable_span_tag_count(span);
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_str(span, NULL, "v"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_str(span, "k", NULL), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_str_at(span, n, "v"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_mutable_span_set_operation(span, NULL), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_mutable_span_remove_tag(span, NULL), 0);
    CU_ASSERT_FALSE(tw_mutable_span_tag(span, n, NULL, NULL));
    CU_ASSERT_FALSE(tw_mutable_span_log_field(span, 0, 99, NULL, NULL));
    CU_ASSERT_EQUAL(tw_mutable_span_log_timestamp_us(span, 9), 0);
    CU_ASSERT_EQUAL(tw_mutable_span_tag_count(span), n);
}

static void test_misuse_is_refused_and_changes_nothing(void)
{
    const tw_finished_span *f = finish_with(misuse);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_STRING_EQUAL(tw_finished_span_operation(f), "op");
    CU_ASSERT(tag_equals_str(f, "a", "1"));
    /* NULL spans read as empty. */
    CU_ASSERT_EQUAL(tw_mutable_span_tag_count(NULL), 0);
    CU_ASSERT_STRING_EQUAL(tw_mutable_span_operation(NULL), "");
    CU_ASSERT_FALSE(tw_mutable_span_is_sampled(NULL));
    CU_ASSERT_EQUAL(tw_mutable_span_set_tag_bool(NULL, "k", true), TW_E_INVALID_ARG);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("handlers/mutable_span", suite_init, suite_cleanup);
    CU_add_test(suite, "handler_reads_the_finished_record", test_handler_reads_the_finished_record);
    CU_add_test(suite, "rename_is_reported", test_rename_is_reported);
    CU_add_test(suite, "tags_added_changed_and_removed_are_reported",
                test_tags_added_changed_and_removed_are_reported);
    CU_add_test(suite, "set_replaces_the_first_tag_of_a_key_and_removes_the_others",
                test_set_replaces_the_first_tag_of_a_key_and_removes_the_others);
    CU_add_test(suite, "set_at_index_replaces_one_of_several_tags_of_a_key",
                test_set_at_index_replaces_one_of_several_tags_of_a_key);
    CU_add_test(suite, "log_field_values_can_be_rewritten", test_log_field_values_can_be_rewritten);
    CU_add_test(suite, "handler_writes_obey_the_tracer_limits",
                test_handler_writes_obey_the_tracer_limits);
    CU_add_test(suite, "misuse_is_refused_and_changes_nothing",
                test_misuse_is_refused_and_changes_nothing);
}
