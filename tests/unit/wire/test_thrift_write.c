/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_thrift_write.c: the direct Thrift writer
 * (wire/core/thrift.h, and the Jaeger span encoder on it) against Apache
 * Thrift c_glib, its reference, in both protocols:
 *
 *   - thousands of random spans of the shared corpus (every tag type, NaN
 *     and infinities, binary with NULs, invalid UTF-8, 128-bit ids with the
 *     top bit set, refs, empty and many-field logs, many tags) encoded by
 *     tw__jaeger_encode_span must equal c_glib's generated TwireJaegerSpan
 *     writer's bytes: the field ids and types are those c_glib generates
 *     from thrift/jaeger.thrift, the bytes those of its protocols;
 *   - random writer programs (every field type, ids that take the compact
 *     protocol's short and long forms, nested structs, lists of 0-39
 *     elements, message headers) run on both writers give equal bytes;
 *   - the one Thrift reader reads back what the writer wrote: each span
 *     decodes (jaeger_thrift_decode) to a record equal to the one encoded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "harness.h"
#include "model_equal.h"
#include "span_corpus.h"
#include "thrift_reference.h"
#include "wire/jaeger/jaeger_thrift.h"
#include "wire/core/utf8.h"
#include "wire/jaeger/jaeger_thrift_decode.h"

#define N_SPANS 3000
#define N_PROGRAMS 3000
#define SEED 20261202u

static const tw__thrift_protocol protocols[2] = {TW__THRIFT_COMPACT, TW__THRIFT_BINARY};

static void report_difference(const char *what, size_t i, const tw__buf *a, const tw__buf *b)
{
    size_t at = 0;
    while (at < a->len && at < b->len && a->data[at] == b->data[at])
        at++;
    fprintf(stderr, "\n    %s %zu: %zu vs %zu bytes, first difference at byte %zu\n", what, i,
            a->len, b->len, at);
}

static void test_random_spans_equal_cglib_generated_structs(void)
{
    tw__jaeger_encoder *enc[2] = {tw__jaeger_encoder_new(TW__THRIFT_COMPACT),
                                  tw__jaeger_encoder_new(TW__THRIFT_BINARY)};
    CU_ASSERT_FATAL(enc[0] && enc[1]);
    size_t compared = 0, differing = 0;
    for (size_t i = 0; i < N_SPANS; i++) {
        tw__process process;
        bool has_process;
        tw__span_data *s = corpus_span(SEED, i, &process, &has_process, CORPUS_INVALID_KEYS);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        if (tw_test_reference_can_carry(s)) {
            for (size_t p = 0; p < 2; p++) {
                tw__buf ours = {0}, theirs = {0};
                CU_ASSERT_FATAL(tw__jaeger_encode_span(enc[p], s, &ours));
                CU_ASSERT_FATAL(tw_test_reference_span(protocols[p], s, &theirs));
                bool same = ours.len == theirs.len && memcmp(ours.data, theirs.data, ours.len) == 0;
                if (!same && differing++ < 3)
                    report_difference(p ? "binary span" : "compact span", i, &ours, &theirs);
                compared++;
                tw__buf_free(&ours);
                tw__buf_free(&theirs);
            }
        }
        tw__span_data_unref(s);
        tw__process_clear(&process);
    }
    CU_ASSERT_EQUAL(differing, 0);
    CU_ASSERT(compared > N_SPANS); /* most spans have no NUL in their texts */
    tw__jaeger_encoder_free(enc[0]);
    tw__jaeger_encoder_free(enc[1]);
}

/* The compact span writer stores varints a word at a time: every length
 * from 1 to 10 bytes, and the values either side of each boundary, in each
 * integer field of a span (ids, times, flags, an int64 tag, a log time;
 * a span id equal to the trace id's low half, as a root's is, too),
 * must give c_glib's bytes. Strings of every short length (the writer
 * copies up to 16 bytes as two words) too. */
static void test_every_varint_and_short_string_length_equals_cglib(void)
{
    tw__jaeger_encoder *enc = tw__jaeger_encoder_new(TW__THRIFT_COMPACT);
    CU_ASSERT_FATAL(enc != NULL);
    static const char text[] = "abcdefghijklmnopqrstuvwxyz0123456789";
    size_t differing = 0;
    for (unsigned int bits = 0; bits <= 64; bits++) {
        for (int k = 0; k < 3; k++) {
            /* 2^bits - 1, 2^bits and 2^bits + 1 (modulo 2^64). */
            uint64_t v = (bits == 64 ? 0 : (uint64_t)1 << bits) + (uint64_t)k - 1;
            tw__span_data *s = tw__span_data_new();
            CU_ASSERT_FATAL(s != NULL);
            s->trace_id_low = v ? v : 1;
            s->trace_id_high = v;
            /* k == 1: a root, whose span id is its trace id's low half
             * (the writer copies that field's bytes). */
            s->span_id = k == 1 ? s->trace_id_low : ~v ? ~v : 1;
            s->parent_id = v >> 1;
            s->flags = (uint32_t)v;
            s->start_us = (int64_t)(v >> 1);
            s->duration_us = (int64_t)(v >> 2);
            size_t len = bits % (sizeof text - 1);
            CU_ASSERT_FATAL(tw__span_data_set_operation(s, text, len));
            tw_value i64 = {.type = TW_VALUE_INT64, .as.i64 = -(int64_t)(v >> 1)};
            tw_value str = {.type = TW_VALUE_STRING, .len = (len * 7) % 30, .as.str = text + 1};
            CU_ASSERT_FATAL(tw__span_data_add_tag(s, "k", &i64));
            CU_ASSERT_FATAL(tw__span_data_add_tag(s, text + 3, &str));
            CU_ASSERT_FATAL(tw__span_data_add_event(s, (int64_t)(v >> 3), text, len));
            tw__buf ours = {0}, theirs = {0};
            CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, s, &ours));
            CU_ASSERT_FATAL(tw_test_reference_span(TW__THRIFT_COMPACT, s, &theirs));
            bool same = ours.len == theirs.len && memcmp(ours.data, theirs.data, ours.len) == 0;
            if (!same && differing++ < 3)
                report_difference("compact span with varints of bits", bits, &ours, &theirs);
            tw__buf_free(&ours);
            tw__buf_free(&theirs);
            tw__span_data_unref(s);
        }
    }
    CU_ASSERT_EQUAL(differing, 0);
    tw__jaeger_encoder_free(enc);
}

static void test_random_programs_equal_cglib_protocols(void)
{
    corpus_rng r = {SEED};
    size_t differing = 0;
    for (size_t i = 0; i < N_PROGRAMS; i++) {
        uint8_t program[600];
        size_t len = corpus_below(&r, sizeof program);
        for (size_t k = 0; k < len; k++)
            program[k] = (uint8_t)corpus_next(&r);
        for (size_t p = 0; p < 2; p++) {
            tw__buf ours = {0}, theirs = {0};
            CU_ASSERT_FATAL(tw_test_run_thrift_program(protocols[p], program, len, &ours, &theirs));
            bool same = ours.len == theirs.len && memcmp(ours.data, theirs.data, ours.len) == 0;
            if (!same && differing++ < 3)
                report_difference(p ? "binary program" : "compact program", i, &ours, &theirs);
            tw__buf_free(&ours);
            tw__buf_free(&theirs);
        }
    }
    CU_ASSERT_EQUAL(differing, 0);
}

/* A tag as it reads back from Thrift: string keys and values repaired to
 * valid UTF-8 (the writer's rule), everything else as it is. */
static bool tag_reads_back(const tw__tag *got, const tw__tag *sent)
{
    tw__buf key = {0}, value = {0};
    bool ok = tw__utf8_repair_append(&key, sent->key, sent->key_len, NULL) &&
              tw__buf_put_byte(&key, 0) &&
              (sent->type != TW_VALUE_STRING ||
               tw__utf8_repair_append(&value, sent->v.str, sent->len, NULL));
    tw__tag expected = *sent;
    expected.key = key.data ? (const char *)key.data : "";
    expected.key_len = (uint32_t)(key.len - 1);
    if (sent->type == TW_VALUE_STRING) {
        expected.v.str = value.data ? (const char *)value.data : "";
        expected.len = value.len;
    }
    /* Keys are C strings in the model: compared up to a NUL. */
    bool same =
        ok && got->type == expected.type &&
        strncmp(got->key, expected.key, expected.key_len) == 0 &&
        (got->type == TW_VALUE_STRING
             ? got->len == expected.len && memcmp(got->v.str, expected.v.str, expected.len) == 0
             : tw_test_values_equal(got, &expected));
    tw__buf_free(&key);
    tw__buf_free(&value);
    return same;
}

static bool tags_read_back(const tw__tag *got, size_t n_got, const tw__tag *sent, size_t n_sent)
{
    if (n_got != n_sent)
        return false;
    for (size_t i = 0; i < n_got; i++) {
        if (!tag_reads_back(&got[i], &sent[i]))
            return false;
    }
    return true;
}

/* Collects the one span of a decoded batch. */
static bool keep_span(void *user_data, tw__span_data *span, const tw__process *process)
{
    (void)process;
    tw__span_data **out = user_data;
    tw__span_data_unref(*out);
    *out = span;
    return true;
}

static void test_the_reader_reads_what_the_writer_wrote(void)
{
    size_t differing = 0;
    for (size_t p = 0; p < 2; p++) {
        tw__jaeger_encoder *enc = tw__jaeger_encoder_new(protocols[p]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
        for (size_t i = 0; i < N_SPANS / 3; i++) {
            tw__process process;
            bool has_process;
            tw__span_data *s = corpus_span(SEED + 1, i, &process, &has_process, 0);
            CU_ASSERT_PTR_NOT_NULL_FATAL(s);
            tw__buf span = {0}, proc = {0}, batch = {0};
            CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, s, &span));
            CU_ASSERT_FATAL(tw__jaeger_encode_process(enc, &process, &proc));
            CU_ASSERT_FATAL(tw__jaeger_batch_struct(enc, proc.data, proc.len, span.data, span.len,
                                                    1, -1, NULL, &batch));
            tw__span_data *got = NULL;
            tw__jaeger_sink sink = {.span = keep_span, .user_data = &got};
            tw__jaeger_record info;
            CU_ASSERT_EQUAL(tw__jaeger_decode(batch.data, batch.len, protocols[p], false, &sink,
                                              &info, NULL, NULL, NULL, 0),
                            TW__THRIFT_OK);
            CU_ASSERT_EQUAL(info.size, batch.len);
            /* The decoder's rules: a span whose times lie beyond the model's
             * range is rejected; a parent equal to the span id is no parent, an
             * absent one is taken from a CHILD_OF reference; the rest reads back. */
            char why[320];
            bool is_in_range = tw__span_data_check_times(s, why, sizeof why);
            bool same = !is_in_range
                            ? got == NULL
                            : got && got->trace_id_low == s->trace_id_low &&
                                  got->trace_id_high == s->trace_id_high &&
                                  got->span_id == s->span_id && got->start_us == s->start_us &&
                                  got->duration_us == s->duration_us && got->flags == s->flags &&
                                  got->n_refs == s->n_refs &&
                                  tags_read_back(got->tags, got->n_tags, s->tags, s->n_tags);
            if (!same && differing++ < 3)
                fprintf(stderr, "\n    span %zu (protocol %zu) reads back different\n", i, p);
            tw__span_data_unref(got);
            tw__span_data_unref(s);
            tw__process_clear(&process);
            tw__buf_free(&span);
            tw__buf_free(&proc);
            tw__buf_free(&batch);
        }
        tw__jaeger_encoder_free(enc);
    }
    CU_ASSERT_EQUAL(differing, 0);
}

/* The compact writer takes a name's length from the record
 * (operation_len) instead of measuring it: a decoded name with a NUL
 * inside is still written up to that NUL, as c_glib writes it. */
static void test_operation_with_a_nul_equals_cglib(void)
{
    tw__jaeger_encoder *enc = tw__jaeger_encoder_new(TW__THRIFT_COMPACT);
    CU_ASSERT_FATAL(enc != NULL);
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_FATAL(s != NULL);
    s->trace_id_low = s->span_id = 7;
    CU_ASSERT_FATAL(tw__span_data_set_operation(s, "ab\0cdef", 7));
    CU_ASSERT_EQUAL(s->operation_len, 2);
    tw__buf ours = {0}, theirs = {0};
    CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, s, &ours));
    CU_ASSERT_FATAL(tw_test_reference_span(TW__THRIFT_COMPACT, s, &theirs));
    CU_ASSERT(ours.len == theirs.len && memcmp(ours.data, theirs.data, ours.len) == 0);
    tw__buf_free(&ours);
    tw__buf_free(&theirs);
    tw__span_data_unref(s);
    tw__jaeger_encoder_free(enc);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/thrift_write", NULL, NULL);
    CU_ADD_TEST(suite, test_random_spans_equal_cglib_generated_structs);
    CU_ADD_TEST(suite, test_random_programs_equal_cglib_protocols);
    CU_ADD_TEST(suite, test_every_varint_and_short_string_length_equals_cglib);
    CU_ADD_TEST(suite, test_the_reader_reads_what_the_writer_wrote);
    CU_ADD_TEST(suite, test_operation_with_a_nul_equals_cglib);
}
