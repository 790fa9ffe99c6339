/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_jaeger_thrift_read.c: `--from jaeger-thrift`
 * (sdk/wire/jaeger/jaeger_thrift_read.c) and the SDK's Jaeger Thrift decoder
 * (wire/jaeger/jaeger_thrift_decode.c): the real capture, round trips through the
 * SDK's encoder in both protocols (Batch structs and emitBatch messages,
 * mixed in one stream, larger than the first buffer), and every rejection
 * path (truncation, malformed bytes, bad spans, huge lengths, deep nesting).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "internal.h"
#include "model_equal.h"
#include "read_capture.h"
#include "span_builder.h"
#include "wire/jaeger/jaeger_thrift.h"
#include "wire/jaeger/jaeger_thrift_decode.h"

#define FIXTURE TW_REAL_FIXTURES "/elastic__apm-server/testdata__jaeger__span.thrift"

static tw__process test_process;

static int suite_init(void)
{
    tw__process_init(&test_process);
    tw_value host = tw_test_str("db-7"), ip = tw_test_str("10.1.2.3"), n = tw_test_i64(-12),
             d = tw_test_dbl(0.5), b = tw_test_bool(true);
    static const uint8_t blob[3] = {0, 1, 0xfe};
    tw_value bin = tw_test_bin(blob, sizeof blob);
    bool ok = tw__process_set_service(&test_process, "billing") &&
              tw__process_add_tag(&test_process, "hostname", &host) &&
              tw__process_add_tag(&test_process, "ip", &ip) &&
              tw__process_add_tag(&test_process, "shard", &n) &&
              tw__process_add_tag(&test_process, "ratio", &d) &&
              tw__process_add_tag(&test_process, "canary", &b) &&
              tw__process_add_tag(&test_process, "key", &bin);
    return ok ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw__process_clear(&test_process);
    tw__span_data_pool_trim();
    return 0;
}

/* Appends one Batch struct (or emitBatch message) of @spans to @out. */
static void append_batch(tw__thrift_protocol proto, bool as_message, const tw__process *process,
                         tw__span_data *const *spans, size_t n, tw__buf *out)
{
    tw__jaeger_encoder *enc = tw__jaeger_encoder_new(proto);
    CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
    tw__buf pbuf, sbuf, rec;
    tw__buf_init(&pbuf);
    tw__buf_init(&sbuf);
    tw__buf_init(&rec);
    CU_ASSERT_FATAL(tw__jaeger_encode_process(enc, process, &pbuf));
    for (size_t i = 0; i < n; i++)
        CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, spans[i], &sbuf));
    bool ok = as_message
                  ? tw__jaeger_emit_batch_message(enc, pbuf.data, pbuf.len, sbuf.data, sbuf.len, n,
                                                  7, NULL, tw__jaeger_msg_seq_id(7), &rec)
                  : tw__jaeger_batch_struct(enc, pbuf.data, pbuf.len, sbuf.data, sbuf.len, n, -1,
                                            NULL, &rec);
    CU_ASSERT_FATAL(ok);
    CU_ASSERT_FATAL(tw__buf_append(out, rec.data, rec.len));
    tw__buf_free(&pbuf);
    tw__buf_free(&sbuf);
    tw__buf_free(&rec);
    tw__jaeger_encoder_free(enc);
}

/* ---- the real capture ------------------------------------------------------------------ */

static void test_real_capture_reads_one_span_with_typed_tags(void)
{
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_file(&c, &twb_reader_jaeger_thrift, FIXTURE), TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    const tw__span_data *s = c.spans[0].data;
    const tw__process *p = c.spans[0].process;
    CU_ASSERT_STRING_EQUAL(p->service_name, "test_service");
    CU_ASSERT_EQUAL(p->n_tags, 4);
    const tw__tag *ip = tw__process_find_tag(p, "ip");
    CU_ASSERT(ip && ip->type == TW_VALUE_STRING && strcmp(ip->v.str, "10.1.1.101") == 0);
    CU_ASSERT_PTR_NOT_NULL(tw__process_find_tag(p, "client-uuid"));
    CU_ASSERT_EQUAL(s->trace_id_high, 0);
    CU_ASSERT_EQUAL(s->trace_id_low, 0x5025e08c7fef6542u);
    CU_ASSERT_EQUAL(s->span_id, 0x5025e08c7fef6542u);
    CU_ASSERT_EQUAL(s->parent_id, 0);
    CU_ASSERT_EQUAL(s->flags, TW__FLAG_SAMPLED);
    CU_ASSERT_STRING_EQUAL(s->operation, "test_span");
    CU_ASSERT_EQUAL(s->start_us, 0x00059b97eec21303);
    CU_ASSERT_EQUAL(s->duration_us, 2);
    CU_ASSERT_EQUAL(s->n_refs, 0);
    CU_ASSERT_EQUAL(s->n_logs, 0);
    CU_ASSERT_EQUAL(s->n_tags, 2);
    const tw__tag *type = capture_tag(s, "sampler.type");
    CU_ASSERT(type && type->type == TW_VALUE_STRING && strcmp(type->v.str, "const") == 0);
    const tw__tag *param = capture_tag(s, "sampler.param");
    CU_ASSERT(param && param->type == TW_VALUE_BOOL && param->v.boolean);
    capture_free(&c);
}

static void test_decoder_measures_the_capture_exactly(void)
{
    FILE *f = fopen(FIXTURE, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    uint8_t data[4096];
    size_t len = fread(data, 1, sizeof data, f);
    fclose(f);
    CU_ASSERT_EQUAL(len, 392);
    tw__jaeger_record info;
    tw__thrift_protocol proto;
    bool is_message;
    CU_ASSERT_EQUAL(tw__jaeger_detect(data, len, &proto, &is_message), 1);
    CU_ASSERT_EQUAL(proto, TW__THRIFT_BINARY);
    CU_ASSERT_FALSE(is_message);
    CU_ASSERT_EQUAL(tw__jaeger_decode(data, len, proto, false, NULL, &info, NULL, NULL, NULL, 0),
                    TW__THRIFT_OK);
    CU_ASSERT_EQUAL(info.size, len);
    CU_ASSERT_EQUAL(info.n_spans, 1);
    /* Every proper prefix is truncated, never malformed, and asks for more. */
    for (size_t cut = 0; cut < len; cut++) {
        size_t need = 0;
        CU_ASSERT_EQUAL(
            tw__jaeger_decode(data, cut, proto, false, NULL, NULL, &need, NULL, NULL, 0),
            TW__THRIFT_SHORT);
        CU_ASSERT(need > cut && need <= len);
    }
}

/* ---- round trips through the SDK's encoder ---------------------------------------------- */

static void round_trip(tw__thrift_protocol proto)
{
    tw__span_data *spans[3] = {tw_test_span_every_field(), tw_test_span_root_64bit(),
                               tw_test_span_every_field()};
    CU_ASSERT_FATAL(spans[0] && spans[1] && spans[2]);
    spans[2]->span_id = 42;
    tw__process plain;
    tw__process_init(&plain);
    CU_ASSERT_FATAL(tw__process_set_service(&plain, ""));

    /* A Batch struct, an emitBatch message, another struct. */
    tw__buf stream;
    tw__buf_init(&stream);
    append_batch(proto, false, &test_process, spans, 3, &stream);
    append_batch(proto, true, &plain, spans, 2, &stream);
    append_batch(proto, false, &test_process, spans + 1, 1, &stream);

    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, stream.data, stream.len),
                    TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_EQUAL(c.n_warnings, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 6);
    const tw__span_data *want[6] = {spans[0], spans[1], spans[2], spans[0], spans[1], spans[1]};
    const tw__process *want_p[6] = {&test_process, &test_process, &test_process,
                                    &plain,        &plain,        &test_process};
    for (size_t i = 0; i < 6; i++) {
        CU_ASSERT(tw_test_spans_equal(c.spans[i].data, want[i]));
        CU_ASSERT(capture_processes_equal(c.spans[i].process, want_p[i]));
    }
    CU_ASSERT_PTR_EQUAL(c.spans[0].process, c.spans[5].process); /* interned */
    capture_free(&c);
    tw__buf_free(&stream);
    tw__process_clear(&plain);
    for (size_t i = 0; i < 3; i++)
        tw__span_data_unref(spans[i]);
}

static void test_binary_round_trip_is_exact(void)
{
    round_trip(TW__THRIFT_BINARY);
}

static void test_compact_round_trip_is_exact(void)
{
    round_trip(TW__THRIFT_COMPACT);
}

/* Larger than the first 64 KiB buffer: the reader grows it and refills. */
static void test_batches_larger_than_the_buffer_stream(void)
{
    enum { N = 3000 };
    tw__span_data **spans = calloc(N, sizeof *spans);
    CU_ASSERT_PTR_NOT_NULL_FATAL(spans);
    for (size_t i = 0; i < N; i++) {
        spans[i] = tw_test_span_every_field();
        CU_ASSERT_PTR_NOT_NULL_FATAL(spans[i]);
        spans[i]->span_id = i + 1;
    }
    tw__buf stream;
    tw__buf_init(&stream);
    append_batch(TW__THRIFT_COMPACT, false, &test_process, spans, N, &stream);
    append_batch(TW__THRIFT_COMPACT, false, &test_process, spans, 10, &stream);
    CU_ASSERT(stream.len > 4 * 64 * 1024);
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, stream.data, stream.len),
                    TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, N + 10);
    CU_ASSERT(tw_test_spans_equal(c.spans[N - 1].data, spans[N - 1]));
    CU_ASSERT(tw_test_spans_equal(c.spans[N + 9].data, spans[9]));
    capture_free(&c);
    tw__buf_free(&stream);
    for (size_t i = 0; i < N; i++)
        tw__span_data_unref(spans[i]);
    free(spans);
}

/* ---- model rules ------------------------------------------------------------------------ */

static void test_parent_comes_from_child_of_reference_when_zero(void)
{
    tw__span_data *s = tw_test_span_every_field();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    uint64_t parent = s->parent_id;
    s->parent_id = 0; /* the CHILD_OF reference still names it */
    tw__span_data *self_parent = tw_test_span_root_64bit();
    self_parent->parent_id = self_parent->span_id; /* a parent equal to the span: root */
    self_parent->duration_us = -5;                 /* negative: read as 0, with a warning */
    tw__span_data *both[2] = {s, self_parent};
    tw__buf stream;
    tw__buf_init(&stream);
    append_batch(TW__THRIFT_BINARY, false, &test_process, both, 2, &stream);
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, stream.data, stream.len),
                    TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    CU_ASSERT_EQUAL(c.spans[0].data->parent_id, parent);
    CU_ASSERT_EQUAL(c.spans[0].data->n_refs, 2);
    CU_ASSERT_EQUAL(c.spans[1].data->parent_id, 0);
    CU_ASSERT_EQUAL(c.spans[1].data->duration_us, 0);
    CU_ASSERT_EQUAL(c.n_warnings, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "negative duration"));
    capture_free(&c);
    tw__buf_free(&stream);
    tw__span_data_unref(s);
    tw__span_data_unref(self_parent);
}

static void test_bad_span_is_rejected_alone(void)
{
    tw__span_data *good = tw_test_span_root_64bit();
    tw__span_data *zero = tw_test_span_root_64bit();
    tw__span_data *zero_trace = tw_test_span_root_64bit();
    zero->span_id = 0;
    zero_trace->trace_id_low = 0;
    tw__span_data *three[4] = {good, zero, zero_trace, good};
    for (int proto = 0; proto < 2; proto++) {
        tw__buf stream;
        tw__buf_init(&stream);
        append_batch((tw__thrift_protocol)proto, false, &test_process, three, 4, &stream);
        read_capture c;
        capture_init(&c);
        CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, stream.data, stream.len),
                        TW_OK);
        CU_ASSERT_EQUAL(c.n_spans, 2);
        CU_ASSERT_EQUAL_FATAL(c.n_rejects, 2);
        CU_ASSERT_EQUAL(c.rejects[0].line_no, 0);
        CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "span 2 of batch 1"));
        CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "span id is zero"));
        CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[1].reason, "trace id is zero"));
        CU_ASSERT_EQUAL(strncmp(c.rejects[0].reason, "byte offset ", 12), 0);
        /* raw = exactly the span's struct: it decodes alone as a struct. */
        tw__buf one;
        tw__buf_init(&one);
        tw__jaeger_encoder *enc = tw__jaeger_encoder_new((tw__thrift_protocol)proto);
        CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, zero, &one));
        CU_ASSERT_EQUAL(c.rejects[0].raw_len, one.len);
        CU_ASSERT(c.rejects[0].raw_len == one.len &&
                  memcmp(c.rejects[0].raw, one.data, one.len) == 0);
        tw__jaeger_encoder_free(enc);
        tw__buf_free(&one);
        capture_free(&c);
        tw__buf_free(&stream);
    }
    tw__span_data_unref(good);
    tw__span_data_unref(zero);
    tw__span_data_unref(zero_trace);
}

/* ---- broken streams --------------------------------------------------------------------- */

static void test_truncated_batch_is_rejected_and_ends_the_stream(void)
{
    tw__span_data *s = tw_test_span_every_field();
    tw__buf stream;
    tw__buf_init(&stream);
    append_batch(TW__THRIFT_BINARY, false, &test_process, &s, 1, &stream);
    size_t first = stream.len;
    append_batch(TW__THRIFT_BINARY, false, &test_process, &s, 1, &stream);
    size_t cut = first + (stream.len - first) / 2;
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, stream.data, cut), TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
    char want[64];
    snprintf(want, sizeof want, "byte offset %zu: batch 2 is truncated", first);
    CU_ASSERT_EQUAL(strncmp(c.rejects[0].reason, want, strlen(want)), 0);
    CU_ASSERT_EQUAL(c.rejects[0].raw_len, cut - first);
    CU_ASSERT(memcmp(c.rejects[0].raw, stream.data + first, cut - first) == 0);
    capture_free(&c);
    tw__buf_free(&stream);
    tw__span_data_unref(s);
}

static void test_malformed_bytes_are_rejected_with_their_offset(void)
{
    /* Binary Batch: process { serviceName "a" } then a field of type 1 (VOID). */
    static const uint8_t bad_type[] = {0x0C, 0, 1, 0x0B, 0, 1, 0, 0, 0, 1, 'a', 0x01, 0, 9};
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, bad_type, sizeof bad_type),
                    TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
    CU_ASSERT_EQUAL(strncmp(c.rejects[0].reason, "byte offset 11: batch 1", 23), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "unknown field type 1"));
    CU_ASSERT_EQUAL(c.rejects[0].raw_len, sizeof bad_type);
    capture_free(&c);

    /* Not Thrift at all. */
    static const char text[] = "{\"data\": []}\n";
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, text, strlen(text)), TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "byte offset 0: not a Jaeger Thrift"));
    capture_free(&c);

    /* A Batch without spans, and a compact Batch whose process has a
     * negative string length. */
    static const uint8_t no_spans[] = {0x0C, 0, 1, 0, 0};
    static const uint8_t negative[] = {0x1C, 0x18, 0xff, 0xff, 0xff, 0xff, 0x0f /* -1 */, 0, 0};
    capture_init(&c);
    capture_read_mem(&c, &twb_reader_jaeger_thrift, no_spans, sizeof no_spans);
    CU_ASSERT(c.n_rejects == 1 && strstr(c.rejects[0].reason, "no spans (field 2)"));
    capture_free(&c);
    capture_init(&c);
    capture_read_mem(&c, &twb_reader_jaeger_thrift, negative, sizeof negative);
    CU_ASSERT(c.n_rejects == 1 && strstr(c.rejects[0].reason, "negative length"));
    capture_free(&c);
}

static void test_huge_lengths_are_refused_before_allocating(void)
{
    /* A binary Batch whose span list claims 2^31-1 elements: more than the
     * 64 MiB limit, refused at once (no read to the end, no allocation). */
    static const uint8_t huge_list[] = {0x0C, 0, 1, 0, 0x0F, 0, 2, 0x0C, 0x7f, 0xff, 0xff, 0xff};
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, huge_list, sizeof huge_list),
                    TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "needs more than 64 MiB"));
    capture_free(&c);
    /* A string of 1 GiB in a compact process. */
    static const uint8_t huge_string[] = {0x1C, 0x18, 0x80, 0x80, 0x80, 0x80, 0x04, 'x'};
    size_t need = 0;
    CU_ASSERT_EQUAL(tw__jaeger_decode(huge_string, sizeof huge_string, TW__THRIFT_COMPACT, false,
                                      NULL, NULL, &need, NULL, NULL, 0),
                    TW__THRIFT_SHORT);
    CU_ASSERT(need > ((size_t)1 << 30));
}

static void test_deep_nesting_is_malformed(void)
{
    /* Compact: Batch { field 5 struct { field 1 struct { ... } } } 40 deep. */
    uint8_t deep[64];
    size_t n = 0;
    deep[n++] = 0x5C;
    for (int i = 0; i < 40; i++)
        deep[n++] = 0x1C;
    for (size_t i = n; i < sizeof deep; i++)
        deep[i] = 0;
    size_t at = 0;
    char why[128];
    CU_ASSERT_EQUAL(tw__jaeger_decode(deep, sizeof deep, TW__THRIFT_COMPACT, false, NULL, NULL,
                                      NULL, &at, why, sizeof why),
                    TW__THRIFT_MALFORMED);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "nested deeper"));
}

static void test_stops_when_emit_says_so(void)
{
    tw__span_data *s = tw_test_span_root_64bit();
    tw__span_data *many[5] = {s, s, s, s, s};
    tw__buf stream;
    tw__buf_init(&stream);
    append_batch(TW__THRIFT_COMPACT, true, &test_process, many, 5, &stream);
    read_capture c;
    capture_init(&c);
    c.stop_after = 2;
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, stream.data, stream.len),
                    TW_E_STATE);
    CU_ASSERT_EQUAL(c.n_spans, 2);
    capture_free(&c);
    tw__buf_free(&stream);
    tw__span_data_unref(s);
}

static void test_sniff_knows_batches_and_messages(void)
{
    static const uint8_t binary[] = {0x0C, 0, 1, 0x0B, 0, 1, 0, 0, 0, 1};
    static const uint8_t compact[] = {0x1C, 0x18, 4, 't'};
    static const uint8_t message[] = {0x82, 0x81, 0x07, 0x09, 'e', 'm', 'i', 't'};
    static const uint8_t json[] = "[{\"traceId\":";
    CU_ASSERT_EQUAL(twb_reader_jaeger_thrift.sniff(binary, sizeof binary), 90);
    CU_ASSERT(twb_reader_jaeger_thrift.sniff(compact, sizeof compact) > 50);
    CU_ASSERT(twb_reader_jaeger_thrift.sniff(message, sizeof message) > 50);
    CU_ASSERT_EQUAL(twb_reader_jaeger_thrift.sniff(json, sizeof json - 1), 0);
    CU_ASSERT_EQUAL(twb_reader_jaeger_thrift.sniff(json, 0), 0);
    CU_ASSERT_STRING_EQUAL(twb_reader_jaeger_thrift.name, "jaeger-thrift");
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/readers/jaeger_thrift", suite_init, suite_cleanup);
    CU_add_test(suite, "real_capture_reads_one_span_with_typed_tags",
                test_real_capture_reads_one_span_with_typed_tags);
    CU_add_test(suite, "decoder_measures_the_capture_exactly",
                test_decoder_measures_the_capture_exactly);
    CU_add_test(suite, "binary_round_trip_is_exact", test_binary_round_trip_is_exact);
    CU_add_test(suite, "compact_round_trip_is_exact", test_compact_round_trip_is_exact);
    CU_add_test(suite, "batches_larger_than_the_buffer_stream",
                test_batches_larger_than_the_buffer_stream);
    CU_add_test(suite, "parent_comes_from_child_of_reference_when_zero",
                test_parent_comes_from_child_of_reference_when_zero);
    CU_add_test(suite, "bad_span_is_rejected_alone", test_bad_span_is_rejected_alone);
    CU_add_test(suite, "truncated_batch_is_rejected_and_ends_the_stream",
                test_truncated_batch_is_rejected_and_ends_the_stream);
    CU_add_test(suite, "malformed_bytes_are_rejected_with_their_offset",
                test_malformed_bytes_are_rejected_with_their_offset);
    CU_add_test(suite, "huge_lengths_are_refused_before_allocating",
                test_huge_lengths_are_refused_before_allocating);
    CU_add_test(suite, "deep_nesting_is_malformed", test_deep_nesting_is_malformed);
    CU_add_test(suite, "stops_when_emit_says_so", test_stops_when_emit_says_so);
    CU_add_test(suite, "sniff_knows_batches_and_messages", test_sniff_knows_batches_and_messages);
}
