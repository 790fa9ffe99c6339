/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/transport/test_http_head.c: suite "transport/http_head", the
 * one classification of HTTP answers (sdk/transport/http_head.h) that the
 * SDK's HTTP sender, `convert --send` and the agent share: every status from
 * 100 to 599 under both retry rules. OTLP/HTTP retries exactly 429, 502,
 * 503 and 504 (the OTLP specification, "Retryable Response Codes"); the
 * Jaeger collector and Zipkin those and 500; 400 and 413 are refused (the
 * caller splits); 2xx is accepted; everything else is final.
 */
#include <stdio.h>

#include <CUnit/CUnit.h>

#include "harness.h"
#include "transport/http_head.h"

static tw__http_verdict expected(long status, tw__http_retry_rule rule)
{
    if (status >= 200 && status <= 299)
        return TW__HTTP_ACCEPTED;
    if (status == 400 || status == 413)
        return TW__HTTP_REFUSED;
    if (status == 429 || status == 502 || status == 503 || status == 504)
        return TW__HTTP_RETRY;
    if (status == 500 && rule == TW__HTTP_RETRY_COLLECTOR)
        return TW__HTTP_RETRY;
    return TW__HTTP_FINAL;
}

static void test_every_status_under_both_rules(void)
{
    const tw__http_retry_rule rules[] = {TW__HTTP_RETRY_OTLP, TW__HTTP_RETRY_COLLECTOR};
    for (size_t r = 0; r < 2; r++) {
        for (long status = 100; status <= 599; status++) {
            tw__http_verdict got = tw__http_status_verdict(status, rules[r]);
            if (got != expected(status, rules[r])) {
                fprintf(stderr, "status %ld, rule %d: verdict %d\n", status, (int)rules[r],
                        (int)got);
                CU_FAIL("a status classified against the rule");
            }
        }
    }
}

/* The cases the specifications name, spelled out. */
static void test_named_cases(void)
{
    CU_ASSERT_EQUAL(tw__http_status_verdict(500, TW__HTTP_RETRY_OTLP), TW__HTTP_FINAL);
    CU_ASSERT_EQUAL(tw__http_status_verdict(500, TW__HTTP_RETRY_COLLECTOR), TW__HTTP_RETRY);
    CU_ASSERT_EQUAL(tw__http_status_verdict(501, TW__HTTP_RETRY_OTLP), TW__HTTP_FINAL);
    CU_ASSERT_EQUAL(tw__http_status_verdict(501, TW__HTTP_RETRY_COLLECTOR), TW__HTTP_FINAL);
    CU_ASSERT_EQUAL(tw__http_status_verdict(505, TW__HTTP_RETRY_COLLECTOR), TW__HTTP_FINAL);
    CU_ASSERT_EQUAL(tw__http_status_verdict(408, TW__HTTP_RETRY_OTLP), TW__HTTP_FINAL);
    CU_ASSERT_EQUAL(tw__http_status_verdict(401, TW__HTTP_RETRY_COLLECTOR), TW__HTTP_FINAL);
    CU_ASSERT_EQUAL(tw__http_status_verdict(0, TW__HTTP_RETRY_OTLP), TW__HTTP_FINAL);
    CU_ASSERT_EQUAL(tw__http_status_verdict(999, TW__HTTP_RETRY_COLLECTOR), TW__HTTP_FINAL);
    for (long s = 502; s <= 504; s++) {
        CU_ASSERT_EQUAL(tw__http_status_verdict(s, TW__HTTP_RETRY_OTLP), TW__HTTP_RETRY);
        CU_ASSERT_EQUAL(tw__http_status_verdict(s, TW__HTTP_RETRY_COLLECTOR), TW__HTTP_RETRY);
    }
    CU_ASSERT_EQUAL(tw__http_status_verdict(429, TW__HTTP_RETRY_OTLP), TW__HTTP_RETRY);
    CU_ASSERT(tw__http_status_has_retry_after(429));
    CU_ASSERT(tw__http_status_has_retry_after(503));
    CU_ASSERT(!tw__http_status_has_retry_after(502));
    CU_ASSERT(!tw__http_status_has_retry_after(500));
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("transport/http_head", NULL, NULL);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_every_status_under_both_rules);
    CU_ADD_TEST(suite, test_named_cases);
}
