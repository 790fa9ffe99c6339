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
#include "wire/core/json_write.h"
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

/* The bytes tw__jaeger_json_put_tags must write: the shared writer's. */
static bool reference_tags(tw__buf *out, const tw__tag *tags, size_t n)
{
    bool ok = tw__buf_put_byte(out, '[');
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || tw__buf_put_byte(out, ',')) && tw__json_put_typed_tag(out, &tags[i]);
    return ok && tw__buf_put_byte(out, ']');
}

/* Whether both writers write the same bytes for @tags, after @prefix bytes
 * already in the buffer (the list's "[" is written over its first ","). */
static bool same_tag_bytes(const tw__tag *tags, size_t n, size_t prefix)
{
    tw__buf ours = {0}, ref = {0};
    bool ok = true;
    for (size_t i = 0; i < prefix && ok; i++)
        ok = tw__buf_put_byte(&ours, 'x') && tw__buf_put_byte(&ref, 'x');
    ok = ok && tw__jaeger_json_put_tags(&ours, tags, n) && reference_tags(&ref, tags, n);
    bool same = ok && ours.len == ref.len && memcmp(ours.data, ref.data, ours.len) == 0;
    if (!same)
        fprintf(stderr, "\ntags differ:\n shared: %.*s\n list:   %.*s\n", (int)ref.len,
                (const char *)ref.data, (int)ours.len, (const char *)ours.data);
    tw__buf_free(&ours);
    tw__buf_free(&ref);
    return same;
}

static void test_tag_lists_write_the_shared_writers_bytes_for_corpus_tags(void)
{
    size_t differing = 0;
    const size_t rounds = tw_test_rounds(N_TRACES);
    for (size_t t = 0; t < rounds; t++) {
        tw__process proc;
        bool has_process;
        tw__span_data *s =
            corpus_span(29, t, &proc, &has_process, CORPUS_INVALID_KEYS | CORPUS_EMPTY_KEYS);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        differing += !same_tag_bytes(s->tags, s->n_tags, t % 3);
        for (size_t i = 0; i < s->n_logs; i++)
            differing += !same_tag_bytes(s->logs[i].fields, s->logs[i].n_fields, 0);
        differing += !same_tag_bytes(proc.tags, proc.n_tags, 1);
        tw__span_data_unref(s);
        tw__process_clear(&proc);
    }
    CU_ASSERT_EQUAL(differing, 0);
}

/* Texts of 0 to 48 bytes (each in a block of its exact size, so that
 * AddressSanitizer sees a read past the end) with one byte of each kind at
 * each place, as keys and as values; and every other type, at the edges of
 * the integers written as numbers. */
static void test_tag_lists_write_the_shared_writers_bytes_for_every_text(void)
{
    static const unsigned char kinds[] = {'a',  0x00, 0x1f, ' ',  '"',  '\\', '/', 0x7f,
                                          0x80, 0xc3, 0xe2, 0xff, '\n', 0x20, 0x21};
    size_t differing = 0;
    for (size_t len = 0; len <= 48; len++) {
        for (size_t at = 0; at < (len ? len : 1); at++) {
            for (size_t k = 0; k < sizeof kinds; k++) {
                char *text = malloc(len ? len : 1);
                CU_ASSERT_PTR_NOT_NULL_FATAL(text);
                for (size_t i = 0; i < len; i++)
                    text[i] = (char)('a' + (i * 7 + k) % 26);
                if (len)
                    text[at] = (char)kinds[k];
                if (len >= 2 && kinds[k] == 0xc3 && at + 1 < len)
                    text[at + 1] = (char)0xa9; /* a valid two-byte sequence */
                tw__tag tags[3] = {
                    {.key = text, .key_len = (uint32_t)len, .type = TW_VALUE_BOOL},
                    {.key = "k", .key_len = 1, .type = TW_VALUE_STRING, .len = len},
                    {.key = text, .key_len = (uint32_t)len, .type = TW_VALUE_STRING, .len = len},
                };
                tags[0].v.boolean = k % 2;
                tags[1].v.str = text;
                tags[2].v.str = text;
                differing += !same_tag_bytes(tags, 3, k % 2);
                differing += !same_tag_bytes(tags + 1, 1, 0);
                free(text);
            }
        }
    }
    static const int64_t ints[] = {0,
                                   1,
                                   -1,
                                   9,
                                   10,
                                   -10,
                                   99999999,
                                   100000000,
                                   TW__JSON_MAX_SAFE_INTEGER,
                                   -TW__JSON_MAX_SAFE_INTEGER,
                                   TW__JSON_MAX_SAFE_INTEGER + 1,
                                   -TW__JSON_MAX_SAFE_INTEGER - 1,
                                   INT64_MAX,
                                   INT64_MIN};
    static const uint8_t bin[] = {0, 1, 2, 0xff, 0xfe};
    tw__tag other[sizeof ints / sizeof ints[0] + 4];
    size_t n = 0;
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        other[n++] = (tw__tag){.key = "n", .key_len = 1, .type = TW_VALUE_INT64, .v.i64 = ints[i]};
    other[n++] = (tw__tag){.key = "d", .key_len = 1, .type = TW_VALUE_DOUBLE, .v.dbl = 0.5};
    other[n++] = (tw__tag){.key = "d", .key_len = 1, .type = TW_VALUE_DOUBLE, .v.dbl = 1e300};
    other[n++] = (tw__tag){
        .key = "b", .key_len = 1, .type = TW_VALUE_BINARY, .v.bin = bin, .len = sizeof bin};
    other[n++] = (tw__tag){.key = "f", .key_len = 1, .type = TW_VALUE_BOOL, .v.boolean = false};
    for (size_t i = 0; i < n; i++)
        differing += !same_tag_bytes(other + i, n - i, i % 2);
    differing += !same_tag_bytes(other, 0, 1);
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
    CU_ADD_TEST(suite, test_tag_lists_write_the_shared_writers_bytes_for_corpus_tags);
    CU_ADD_TEST(suite, test_tag_lists_write_the_shared_writers_bytes_for_every_text);
    CU_ADD_TEST(suite, test_document_groups_by_trace_and_frames_every_group);
}
