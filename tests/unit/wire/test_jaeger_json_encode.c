/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_jaeger_json_encode.c: suite "wire/jaeger_json_encode",
 * the differential guard of the direct Jaeger JSON encoder
 * (sdk/wire/jaeger/jaeger_json_encode.c): for traces made of random corpus
 * spans (every tag type, NaN and infinities, int64 beyond 2^53, binary,
 * invalid UTF-8 and NUL bytes, error tags of every kind, `lc`, absent start
 * times with and without logs, references of every kind, several
 * processes, some with an empty service), the trace object it writes,
 * parsed with Jansson, equals the tree of the reference Jansson encoder
 * (oracle_jaeger_json.c), key order included; and the document encoder
 * frames several groups as one valid document.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <jansson.h>

#include "harness.h"
#include "oracle.h"
#include "span_corpus.h"
#include "wire/formats.h"
#include "wire/jaeger/jaeger_json.h"

#define N_TRACES 2500

static void test_random_traces_equal_the_jansson_oracle(void)
{
    size_t differing = 0;
    tw__jaeger_view ours_view, ref_view;
    tw__jaeger_view_init(&ours_view);
    tw__jaeger_view_init(&ref_view);
    const size_t rounds = tw_test_rounds(N_TRACES);
    for (size_t t = 0; t < rounds; t++) {
        enum { MAX_SPANS = 6 };
        tw__wire_span spans[MAX_SPANS];
        tw__process procs[MAX_SPANS];
        size_t idx[MAX_SPANS];
        size_t n = 1 + t % MAX_SPANS;
        for (size_t i = 0; i < n; i++) {
            bool has_process;
            spans[i].data =
                corpus_span(17, t * MAX_SPANS + i, &procs[i], &has_process, CORPUS_INVALID_KEYS);
            CU_ASSERT_PTR_NOT_NULL_FATAL(spans[i].data);
            if (i > 0) { /* one trace; processes shared now and then */
                spans[i].data->trace_id_high = spans[0].data->trace_id_high;
                spans[i].data->trace_id_low = spans[0].data->trace_id_low;
            }
            if (i % 3 == 0)
                tw__process_set_service(&procs[i], "");
            spans[i].process = i % 2 && i > 0 ? spans[i - 1].process : &procs[i];
            idx[i] = n - 1 - i; /* any order of the group's spans */
        }
        tw__buf ours = {0};
        CU_ASSERT_FATAL(tw__jaeger_json_encode_trace(&ours_view, spans, idx, n, &ours));
        json_error_t error;
        json_t *got = json_loadb((const char *)ours.data, ours.len,
                                 JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &error);
        json_t *expected = oracle_jaeger_trace_json(&ref_view, spans, idx, n);
        char *a = got ? json_dumps(got, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        char *b = expected ? json_dumps(expected, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        bool same = got && expected && json_equal(got, expected) && a && b && strcmp(a, b) == 0;
        if (!same && differing++ < 3)
            fprintf(stderr, "\ntrace %zu differs:\n oracle: %s\n direct: %s\n", t, b ? b : "-",
                    a ? a : error.text);
        free(a);
        free(b);
        json_decref(got);
        json_decref(expected);
        tw__buf_free(&ours);
        for (size_t i = 0; i < n; i++) {
            tw__span_data_unref(spans[i].data);
            tw__process_clear(&procs[i]);
        }
    }
    tw__jaeger_view_clear(&ours_view);
    tw__jaeger_view_clear(&ref_view);
    CU_ASSERT_EQUAL(differing, 0);
}

static void test_document_groups_by_trace_and_frames_every_group(void)
{
    const tw__wire_encoder *enc = &tw__jaeger_json_encoder;
    tw__doc_encoder *doc = enc->create(NULL, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    tw__process p;
    tw__process_init(&p);
    CU_ASSERT_FATAL(tw__process_set_service(&p, "svc"));
    tw__wire_span spans[3];
    for (size_t i = 0; i < 3; i++) {
        spans[i].data = tw__span_data_new();
        CU_ASSERT_PTR_NOT_NULL_FATAL(spans[i].data);
        spans[i].data->trace_id_low = i == 1 ? 7 : 5; /* traces 5, 7, 5 */
        spans[i].data->span_id = 10 + i;
        spans[i].data->start_us = 1000 + (int64_t)i;
        spans[i].process = &p;
    }
    tw__buf out = {0};
    CU_ASSERT(enc->encode(doc, spans, 3, &out));
    CU_ASSERT(enc->encode(doc, spans + 1, 1, &out));
    CU_ASSERT(enc->finish(doc, &out));
    json_t *doc_json = json_loadb((const char *)out.data, out.len, JSON_REJECT_DUPLICATES, NULL);
    json_t *data = json_object_get(doc_json, "data");
    CU_ASSERT_EQUAL(json_array_size(data), 3); /* 5 (two spans), 7; then 7 again */
    CU_ASSERT_EQUAL(json_array_size(json_object_get(json_array_get(data, 0), "spans")), 2);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(json_array_get(data, 1), "traceID")),
                           "0000000000000007");
    CU_ASSERT(json_is_null(json_object_get(doc_json, "errors")));
    json_decref(doc_json);
    tw__buf_free(&out);
    enc->destroy(doc);
    for (size_t i = 0; i < 3; i++)
        tw__span_data_unref(spans[i].data);
    tw__process_clear(&p);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/jaeger_json_encode", NULL, NULL);
    CU_ADD_TEST(suite, test_random_traces_equal_the_jansson_oracle);
    CU_ADD_TEST(suite, test_document_groups_by_trace_and_frames_every_group);
}
