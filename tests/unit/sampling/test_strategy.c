/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/sampling/test_strategy.c: suite "sampling/strategy": parsing
 * Jaeger's sampling strategy JSON (both enum spellings, operationSampling
 * precedence, defaults), rejecting bad documents with an error naming the
 * field, and building the matching sampler.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "sampling/sampling.h"
#include "sampling/strategy.h"

static bool parse(const char *json, tw__strategy *out, tw_error **err)
{
    return tw__strategy_parse(json, strlen(json), out, err);
}

static void test_probabilistic_with_string_or_number_type(void)
{
    tw__strategy s;
    CU_ASSERT_FATAL(parse("{\"strategyType\":\"PROBABILISTIC\","
                          "\"probabilisticSampling\":{\"samplingRate\":0.25}}",
                          &s, NULL));
    CU_ASSERT_EQUAL(s.kind, TW__STRATEGY_PROBABILISTIC);
    CU_ASSERT(s.probability == 0.25);
    tw__strategy_clear(&s);
    CU_ASSERT_FATAL(
        parse("{\"strategyType\":0,\"probabilisticSampling\":{\"samplingRate\":1}}", &s, NULL));
    CU_ASSERT(s.probability == 1.0);
    tw__strategy_clear(&s);
}

static void test_rate_limiting_with_string_or_number_type(void)
{
    tw__strategy s;
    CU_ASSERT_FATAL(parse("{\"strategyType\":\"RATE_LIMITING\","
                          "\"rateLimitingSampling\":{\"maxTracesPerSecond\":7}}",
                          &s, NULL));
    CU_ASSERT_EQUAL(s.kind, TW__STRATEGY_RATE_LIMITING);
    CU_ASSERT(s.max_traces_per_second == 7);
    tw__strategy_clear(&s);
    CU_ASSERT_FATAL(parse(
        "{\"strategyType\":1,\"rateLimitingSampling\":{\"maxTracesPerSecond\":2}}", &s, NULL));
    CU_ASSERT(s.max_traces_per_second == 2);
    tw__strategy_clear(&s);
}

static void test_operation_sampling_takes_precedence(void)
{
    tw__strategy s;
    const char *doc = "{\"strategyType\":\"PROBABILISTIC\","
                      "\"probabilisticSampling\":{\"samplingRate\":0.5},"
                      "\"operationSampling\":{\"defaultSamplingProbability\":0.1,"
                      "\"defaultLowerBoundTracesPerSecond\":0.5,"
                      "\"defaultUpperBoundTracesPerSecond\":0,"
                      "\"perOperationStrategies\":["
                      "{\"operation\":\"GET /a\",\"probabilisticSampling\":{\"samplingRate\":1}},"
                      "{\"operation\":\"GET /b\",\"probabilisticSampling\":{}}]}}";
    CU_ASSERT_FATAL(parse(doc, &s, NULL));
    CU_ASSERT_EQUAL(s.kind, TW__STRATEGY_PER_OPERATION);
    CU_ASSERT(s.default_probability == 0.1);
    CU_ASSERT(s.default_lower_bound == 0.5);
    CU_ASSERT_EQUAL_FATAL(s.n_operations, 2);
    CU_ASSERT_STRING_EQUAL(s.operations[0].operation, "GET /a");
    CU_ASSERT(s.operations[0].probability == 1.0);
    CU_ASSERT(s.operations[1].probability == 0.1); /* missing rate: the default */
    tw_sampler *sampler = tw__strategy_sampler(&s, 10, NULL);
    CU_ASSERT_STRING_EQUAL(tw_sampler_type(sampler), "per-operation");
    CU_ASSERT(tw_sampler_is_sampled(sampler, 0, 0x7fffffffffffffffULL, "GET /a"));
    tw_sampler_free(sampler);
    tw__strategy t;
    CU_ASSERT_FATAL(parse(doc, &t, NULL));
    CU_ASSERT(tw__strategy_equal(&s, &t));
    t.operations[1].probability = 0.2;
    CU_ASSERT_FALSE(tw__strategy_equal(&s, &t));
    tw__strategy_clear(&s);
    tw__strategy_clear(&t);
}

static void expect_rejected(const char *doc, const char *needle)
{
    tw__strategy s;
    tw_error *err = NULL;
    CU_ASSERT_FALSE(parse(doc, &s, &err));
    CU_ASSERT_EQUAL(s.n_operations, 0);
    if (!err || !strstr(tw_error_message(err), needle)) {
        fprintf(stderr, "doc %s: message \"%s\" lacks \"%s\"\n", doc, tw_error_message(err),
                needle);
        CU_FAIL("rejection does not name the field");
    }
    tw_error_free(err);
}

static void test_bad_documents_are_rejected_with_the_field(void)
{
    expect_rejected("", "not a JSON object");
    expect_rejected("[1,2]", "not a JSON object");
    expect_rejected("{\"strategyType\":\"SOMETIMES\"}", "strategyType");
    expect_rejected("{\"strategyType\":7}", "strategyType");
    expect_rejected("{\"strategyType\":0,\"probabilisticSampling\":{\"samplingRate\":1.5}}",
                    "samplingRate = 1.5");
    expect_rejected("{\"strategyType\":0,\"probabilisticSampling\":{\"samplingRate\":\"x\"}}",
                    "samplingRate is not a number");
    expect_rejected("{\"strategyType\":0}", "PROBABILISTIC is missing");
    expect_rejected("{\"strategyType\":1,\"rateLimitingSampling\":{}}", "RATE_LIMITING is missing");
    expect_rejected("{}", "no strategy");
    expect_rejected("{\"operationSampling\":5}", "operationSampling is not an object");
    expect_rejected("{\"operationSampling\":{\"perOperationStrategies\":{}}}", "not a list");
    expect_rejected("{\"operationSampling\":{\"perOperationStrategies\":[{\"operation\":1}]}}",
                    "perOperationStrategies[0]");
    expect_rejected("{\"operationSampling\":{\"defaultSamplingProbability\":-1}}",
                    "defaultSamplingProbability");
    expect_rejected("{\"strategyType\":0,\"strategyType\":1}", "not a JSON object");
}

static void test_zero_rate_limit_samples_nothing(void)
{
    tw__strategy s;
    CU_ASSERT_FATAL(parse(
        "{\"strategyType\":1,\"rateLimitingSampling\":{\"maxTracesPerSecond\":0}}", &s, NULL));
    tw_sampler *sampler = tw__strategy_sampler(&s, 10, NULL);
    CU_ASSERT_FALSE(tw_sampler_is_sampled(sampler, 0, 1, "op"));
    tw_sampler_free(sampler);
    tw__strategy_clear(&s);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("sampling/strategy", NULL, NULL);
    CU_add_test(suite, "probabilistic_with_string_or_number_type",
                test_probabilistic_with_string_or_number_type);
    CU_add_test(suite, "rate_limiting_with_string_or_number_type",
                test_rate_limiting_with_string_or_number_type);
    CU_add_test(suite, "operation_sampling_takes_precedence",
                test_operation_sampling_takes_precedence);
    CU_add_test(suite, "bad_documents_are_rejected_with_the_field",
                test_bad_documents_are_rejected_with_the_field);
    CU_add_test(suite, "zero_rate_limit_samples_nothing", test_zero_rate_limit_samples_nothing);
}
