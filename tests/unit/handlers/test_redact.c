/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/handlers/test_redact.c: suite "handlers/redact": the redaction
 * handler replaces US social security numbers (and whatever else its pattern
 * matches) in string tag values and string log field values, leaves keys and
 * other values alone, fails closed on values it cannot search, refuses an
 * invalid pattern with an error that names it, and works from several
 * finishing threads at once with one compiled pattern (run under TSan).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"

#define SSN_PATTERN "\\b\\d{3}-\\d{2}-\\d{4}\\b"
#define SSN_MASK "***-**-****"

static tw_tracer *tracer_redacting; /* const(true), memory reporter, SSN redaction */
static tw_reporter *memory_sender;

static int suite_init(void)
{
    tw_error *err = NULL;
    tw_span_handler *redact = tw_handler_redact_new(SSN_PATTERN, SSN_MASK, &err);
    if (!redact) {
        tw_error_free(err);
        return 1;
    }
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_max_value_bytes(opts, 64);
    if (tw_tracer_options_add_handler(opts, redact) != TW_OK) {
        tw_span_handler_free(redact);
        tw_tracer_options_free(opts);
        return 1;
    }
    tracer_redacting = tracer_always_sampled(&memory_sender, opts);
    return tracer_redacting ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw_tracer_free(tracer_redacting);
    return 0;
}

static void test_ssns_in_tags_and_log_fields_are_masked(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer_redacting, "signup", NULL);
    tw_span_set_tag_str(s, "user.ssn", "123-45-6789");
    tw_span_set_tag_str(s, "note", "ssn 123-45-6789 and 987-65-4321, thanks");
    tw_span_set_tag_str(s, "order", "1234-56-7890"); /* not an SSN: 4 digits first */
    tw_span_set_tag_str(s, "phone", "555-123-4567"); /* not an SSN either */
    tw_span_set_tag_int64(s, "count", 123456789);
    tw_span_log_kv(s, "event", "lookup", "query", "ssn=078-05-1120", NULL);
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "signup");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(tag_equals_str(f, "user.ssn", SSN_MASK));
    CU_ASSERT(tag_equals_str(f, "note", "ssn " SSN_MASK " and " SSN_MASK ", thanks"));
    CU_ASSERT(tag_equals_str(f, "order", "1234-56-7890"));
    CU_ASSERT(tag_equals_str(f, "phone", "555-123-4567"));
    tw_value v;
    CU_ASSERT(tw_finished_span_find_tag(f, "count", &v) && v.as.i64 == 123456789);
    const char *key;
    CU_ASSERT(tw_finished_span_log_field(f, 0, 1, &key, &v));
    CU_ASSERT_STRING_EQUAL(key, "query");
    CU_ASSERT_STRING_EQUAL(v.as.str, "ssn=" SSN_MASK);
    CU_ASSERT(tw_finished_span_log_field(f, 0, 0, &key, &v) && strcmp(v.as.str, "lookup") == 0);
}

static void test_keys_and_operation_names_are_not_searched(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer_redacting, "get 123-45-6789", NULL);
    tw_span_set_tag_str(s, "123-45-6789", "value");
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "get 123-45-6789");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(tag_equals_str(f, "123-45-6789", "value"));
}

static void test_every_tag_of_a_repeated_key_is_masked(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer_redacting, "repeat", NULL);
    tw_span_set_tag_str(s, "ssn", "111-22-3333");
    tw_span_set_tag_str(s, "ssn", "444-55-6666");
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "repeat");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    size_t masked = 0;
    const char *key;
    tw_value v;
    for (size_t i = 0; tw_finished_span_tag(f, i, &key, &v); i++) {
        if (strcmp(key, "ssn") == 0 && strcmp(v.as.str, SSN_MASK) == 0)
            masked++;
    }
    CU_ASSERT_EQUAL(masked, 2);
}

static void test_values_it_cannot_search_are_replaced_whole(void)
{
    tw_memory_reporter_clear(memory_sender);
    tw_span *s = tw_span_start(tracer_redacting, "binary-ish", NULL);
    tw_span_set_tag_str(s, "latin1", "caf\xe9 123-45-6789"); /* not UTF-8 */
    static const char with_nul[] = {'a', '\0', 'b'};
    tw_log_field field = {"raw", {.type = TW_VALUE_STRING, .as.str = with_nul, .len = 3}};
    tw_span_log_fields(s, 0, &field, 1);
    tw_span_set_tag_str(s, "utf8", "caf\xc3\xa9"); /* valid, no match: untouched */
    tw_span_finish(s);
    const tw_finished_span *f = finished_named(memory_sender, "binary-ish");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT(tag_equals_str(f, "latin1", SSN_MASK));
    CU_ASSERT(tag_equals_str(f, "utf8", "caf\xc3\xa9"));
    tw_value v;
    CU_ASSERT(tw_finished_span_log_field(f, 0, 0, NULL, &v));
    CU_ASSERT_EQUAL(v.len, strlen(SSN_MASK));
    CU_ASSERT_STRING_EQUAL(v.as.str, SSN_MASK);
}

static void test_invalid_pattern_is_an_error_naming_it(void)
{
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_handler_redact_new("(\\d{3}", SSN_MASK, &err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(err);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "(\\d{3}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "regular expression"));
    tw_error_free(err);

    err = NULL;
    CU_ASSERT_PTR_NULL(tw_handler_redact_new(NULL, SSN_MASK, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    tw_error_free(err);
    CU_ASSERT_PTR_NULL(tw_handler_redact_new(SSN_PATTERN, NULL, NULL)); /* err may be NULL */
}

/* Records what a later handler that wants unsampled spans sees. */
static char seen_value[32];

static tw_handler_result remember_ssn_tag(void *user_data, tw_mutable_span *span)
{
    (void)user_data;
    tw_value v;
    if (tw_mutable_span_find_tag(span, "ssn", &v))
        snprintf(seen_value, sizeof seen_value, "%s", v.as.str);
    return TW_HANDLER_KEEP;
}

static void test_redaction_asked_to_see_unsampled_spans_masks_them_for_later_handlers(void)
{
    tw_span_handler *redact = tw_handler_redact_new(SSN_PATTERN, SSN_MASK, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(redact);
    CU_ASSERT_FALSE(redact->wants_unsampled); /* the default */
    redact->wants_unsampled = true;
    tw_span_handler later = {
        .size = sizeof later, .wants_unsampled = true, .on_finish = remember_ssn_tag};
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "redact-local");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, redact), TW_OK);
    CU_ASSERT_EQUAL(tw_tracer_options_add_handler(opts, &later), TW_OK);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    seen_value[0] = '\0';
    tw_span *s = tw_span_start(tracer, "unsampled", NULL);
    tw_span_set_tag_str(s, "ssn", "123-45-6789");
    tw_span_finish(s);
    CU_ASSERT_STRING_EQUAL(seen_value, SSN_MASK);
    tw_tracer_free(tracer);
}

static void test_unused_handler_is_released_with_span_handler_free(void)
{
    tw_span_handler *redact = tw_handler_redact_new(SSN_PATTERN, "", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(redact);
    tw_span_handler_free(redact); /* ASan/valgrind: nothing leaks */
}

/* ---- threads ------------------------------------------------------------------------------ */

#define THREADS 4
#define SPANS_PER_THREAD 1000

static void *redact_many(void *arg)
{
    (void)arg;
    for (int i = 0; i < SPANS_PER_THREAD; i++) {
        tw_span *s = tw_span_start(tracer_redacting, "threaded", NULL);
        tw_span_set_tag_str(s, "ssn", "123-45-6789");
        tw_span_log_kv(s, "query", "ssn 987-65-4321", NULL);
        tw_span_finish(s);
    }
    return NULL;
}

static void test_threads_redact_at_once_with_one_pattern(void)
{
    tw_memory_reporter_clear(memory_sender);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        CU_ASSERT_EQUAL(pthread_create(&threads[i], NULL, redact_many, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    size_t n = tw_memory_reporter_count(memory_sender);
    CU_ASSERT_EQUAL(n, (size_t)THREADS * SPANS_PER_THREAD);
    size_t masked = 0;
    for (size_t i = 0; i < n; i++) {
        const tw_finished_span *f = tw_memory_reporter_span(memory_sender, i);
        tw_value v;
        if (tag_equals_str(f, "ssn", SSN_MASK) && tw_finished_span_log_field(f, 0, 0, NULL, &v) &&
            strcmp(v.as.str, "ssn " SSN_MASK) == 0)
            masked++;
    }
    CU_ASSERT_EQUAL(masked, n);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("handlers/redact", suite_init, suite_cleanup);
    CU_add_test(suite, "ssns_in_tags_and_log_fields_are_masked",
                test_ssns_in_tags_and_log_fields_are_masked);
    CU_add_test(suite, "keys_and_operation_names_are_not_searched",
                test_keys_and_operation_names_are_not_searched);
    CU_add_test(suite, "every_tag_of_a_repeated_key_is_masked",
                test_every_tag_of_a_repeated_key_is_masked);
    CU_add_test(suite, "values_it_cannot_search_are_replaced_whole",
                test_values_it_cannot_search_are_replaced_whole);
    CU_add_test(suite, "invalid_pattern_is_an_error_naming_it",
                test_invalid_pattern_is_an_error_naming_it);
    CU_add_test(suite, "redaction_asked_to_see_unsampled_spans_masks_them_for_later_handlers",
                test_redaction_asked_to_see_unsampled_spans_masks_them_for_later_handlers);
    CU_add_test(suite, "unused_handler_is_released_with_span_handler_free",
                test_unused_handler_is_released_with_span_handler_free);
    CU_add_test(suite, "threads_redact_at_once_with_one_pattern",
                test_threads_redact_at_once_with_one_pattern);
}
