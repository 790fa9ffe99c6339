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

/* ---- one pass: spans held until the record is known whole ------------------------------ */

/* What the decoder handed to its sink, in order. */
typedef struct sink_event {
    char kind; /* 's' span, 'b' bad span, 'w' warning */
    size_t index, offset, len;
    uint64_t span_id;
    char service[16];
} sink_event;

typedef struct recorder {
    sink_event *ev;
    size_t n, cap;
} recorder;

static sink_event *record_event(recorder *r, char kind, size_t index)
{
    CU_ASSERT_FATAL(r->n < r->cap);
    sink_event *e = &r->ev[r->n++];
    *e = (sink_event){.kind = kind, .index = index};
    return e;
}

static bool rec_span(void *user_data, tw__span_data *span, const tw__process *process)
{
    sink_event *e = record_event(user_data, 's', 0);
    e->span_id = span->span_id;
    snprintf(e->service, sizeof e->service, "%s", process->service_name);
    tw__span_data_unref(span);
    return true;
}

static bool rec_bad(void *user_data, size_t index, size_t offset, size_t len, const char *why)
{
    (void)why;
    sink_event *e = record_event(user_data, 'b', index);
    e->offset = offset;
    e->len = len;
    return true;
}

static void rec_warn(void *user_data, size_t index, const char *why)
{
    (void)why;
    record_event(user_data, 'w', index);
}

static void recorder_init(recorder *r, size_t cap)
{
    r->ev = calloc(cap, sizeof *r->ev);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r->ev);
    r->n = 0;
    r->cap = cap;
}

static tw__thrift_result decode_into(recorder *r, const uint8_t *data, size_t len,
                                     tw__thrift_protocol proto, bool is_message,
                                     tw__jaeger_record *info, size_t *need)
{
    const tw__jaeger_sink sink = {rec_span, rec_bad, rec_warn, r, NULL};
    r->n = 0;
    return tw__jaeger_decode(data, len, proto, is_message, &sink, info, need, NULL, NULL, 0);
}

static void put_be32(tw__buf *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    CU_ASSERT_FATAL(tw__buf_append(b, x, 4));
}

static void put_varint(tw__buf *b, uint64_t v)
{
    do {
        uint8_t byte = (uint8_t)(v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
        CU_ASSERT_FATAL(tw__buf_append(b, &byte, 1));
        v >>= 7;
    } while (v);
}

static void put_bytes(tw__buf *b, const void *data, size_t len)
{
    CU_ASSERT_FATAL(tw__buf_append(b, data, len));
}

/* A Batch field header: @id after @last (compact deltas; a smaller id takes
 * the long form), a struct (12) or a list (15). */
static void put_field(tw__buf *b, tw__thrift_protocol proto, uint8_t type, int id, int last)
{
    if (proto == TW__THRIFT_BINARY) {
        uint8_t h[3] = {type, 0, (uint8_t)id};
        put_bytes(b, h, 3);
        return;
    }
    uint8_t ctype = type == 12 ? 12 : 9;
    if (id > last) {
        uint8_t h = (uint8_t)((id - last) << 4 | ctype);
        put_bytes(b, &h, 1);
    } else {
        put_bytes(b, &ctype, 1);
        put_varint(b, (uint64_t)id << 1);
    }
}

/*
 * A Batch struct of @proto whose fields come in @order ('p': the process,
 * 's': a list of the @n spans; repeatable), or with @as_message an emitBatch
 * message around it; *span_at[i] is the offset of span i of the last list.
 */
static void build_record(tw__thrift_protocol proto, bool as_message, const char *order,
                         const tw__process *process, tw__span_data *const *spans, size_t n,
                         tw__buf *out, size_t *span_at)
{
    tw__jaeger_encoder *enc = tw__jaeger_encoder_new(proto);
    CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
    if (as_message && proto == TW__THRIFT_BINARY) {
        put_be32(out, 0x80010004u);
        put_be32(out, 9);
        put_bytes(out, "emitBatch", 9);
        put_be32(out, 7);
        put_field(out, proto, 12, 1, 0);
    } else if (as_message) {
        put_bytes(out, "\x82\x81\x07\x09", 4);
        put_bytes(out, "emitBatch", 9);
        put_field(out, proto, 12, 1, 0);
    }
    int last = 0;
    for (const char *o = order; *o; o++) {
        if (*o == 'p') {
            put_field(out, proto, 12, 1, last);
            CU_ASSERT_FATAL(tw__jaeger_encode_process(enc, process, out));
            last = 1;
            continue;
        }
        put_field(out, proto, 15, 2, last);
        last = 2;
        if (proto == TW__THRIFT_BINARY) {
            put_bytes(out, "\x0c", 1);
            put_be32(out, (uint32_t)n);
        } else if (n < 15) {
            uint8_t h = (uint8_t)(n << 4 | 12);
            put_bytes(out, &h, 1);
        } else {
            put_bytes(out, "\xfc", 1);
            put_varint(out, n);
        }
        for (size_t i = 0; i < n; i++) {
            span_at[i] = out->len;
            CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, spans[i], out));
        }
    }
    put_bytes(out, "\0\0", as_message ? 2 : 1); /* the Batch's stop (and the args') */
    tw__jaeger_encoder_free(enc);
}

/* Spans: good, a bad one (span id 0), one with a negative duration, good:
 * their events, whatever the cut, the field order or the framing. */
static void test_one_pass_emits_a_record_only_when_whole(void)
{
    tw__span_data *s[4] = {tw_test_span_every_field(), tw_test_span_root_64bit(),
                           tw_test_span_root_64bit(), tw_test_span_every_field()};
    CU_ASSERT_FATAL(s[0] && s[1] && s[2] && s[3]);
    s[1]->span_id = 0;
    s[2]->span_id = 33;
    s[2]->duration_us = -4;
    s[3]->span_id = 44;
    static const char *orders[] = {"ps", "sp"};
    recorder r;
    recorder_init(&r, 16);
    for (int proto = 0; proto < 2; proto++) {
        for (int msg = 0; msg < 2; msg++) {
            for (size_t o = 0; o < 2; o++) {
                tw__buf rec;
                tw__buf_init(&rec);
                size_t at[4];
                build_record((tw__thrift_protocol)proto, msg, orders[o], &test_process, s, 4, &rec,
                             at);
                for (size_t cut = 0; cut < rec.len; cut++) {
                    size_t need = 0;
                    CU_ASSERT_EQUAL(decode_into(&r, rec.data, cut, (tw__thrift_protocol)proto, msg,
                                                NULL, &need),
                                    TW__THRIFT_SHORT);
                    CU_ASSERT_EQUAL(r.n, 0);
                    CU_ASSERT(need > cut && need <= rec.len);
                }
                tw__jaeger_record info;
                CU_ASSERT_EQUAL(decode_into(&r, rec.data, rec.len, (tw__thrift_protocol)proto, msg,
                                            &info, NULL),
                                TW__THRIFT_OK);
                CU_ASSERT_EQUAL(info.size, rec.len);
                CU_ASSERT_EQUAL(info.n_spans, 4);
                CU_ASSERT_EQUAL_FATAL(r.n, 5);
                CU_ASSERT(r.ev[0].kind == 's' && r.ev[0].span_id == s[0]->span_id);
                CU_ASSERT_STRING_EQUAL(r.ev[0].service, "billing");
                CU_ASSERT(r.ev[1].kind == 'b' && r.ev[1].index == 1);
                CU_ASSERT_EQUAL(r.ev[1].offset, at[1]);
                CU_ASSERT_EQUAL(r.ev[1].len, at[2] - at[1]);
                CU_ASSERT(r.ev[2].kind == 'w' && r.ev[2].index == 2);
                CU_ASSERT(r.ev[3].kind == 's' && r.ev[3].span_id == 33);
                CU_ASSERT(r.ev[4].kind == 's' && r.ev[4].span_id == 44);
                CU_ASSERT_STRING_EQUAL(r.ev[4].service, "billing");
                tw__buf_free(&rec);
            }
        }
    }
    free(r.ev);
    for (size_t i = 0; i < 4; i++)
        tw__span_data_unref(s[i]);
}

/* A fault after the spans (a bad process, bytes that are no field) fails
 * the record, and no span of it reaches the sink. */
static void test_one_pass_fault_after_the_spans_emits_nothing(void)
{
    tw__span_data *s = tw_test_span_every_field();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tw__span_data *two[2] = {s, s};
    recorder r;
    recorder_init(&r, 8);
    /* Binary: spans, then a process whose tags are a list of i32. */
    tw__buf rec;
    tw__buf_init(&rec);
    size_t at[2];
    build_record(TW__THRIFT_BINARY, false, "s", NULL, two, 2, &rec, at);
    rec.len--; /* the stop byte, written again below */
    size_t process_at = rec.len + 3;
    put_bytes(&rec, "\x0c\x00\x01\x0b\x00\x01\x00\x00\x00\x01x\x0f\x00\x02\x08", 15);
    put_be32(&rec, 1);
    put_be32(&rec, 5);
    put_bytes(&rec, "\0\0", 2);
    const tw__jaeger_sink sink = {rec_span, rec_bad, rec_warn, &r, NULL};
    size_t err_at = 0;
    char why[128];
    CU_ASSERT_EQUAL(tw__jaeger_decode(rec.data, rec.len, TW__THRIFT_BINARY, false, &sink, NULL,
                                      NULL, &err_at, why, sizeof why),
                    TW__THRIFT_MALFORMED);
    CU_ASSERT_EQUAL(r.n, 0);
    CU_ASSERT_EQUAL(err_at, process_at);
    CU_ASSERT_STRING_EQUAL(why, "Batch.process: a tag list of non-structs");
    /* Process, spans, then a field of type 1 (no Thrift type). */
    rec.len = 0;
    build_record(TW__THRIFT_BINARY, false, "ps", &test_process, two, 2, &rec, at);
    size_t bad_at = rec.len - 1;
    rec.data[bad_at] = 0x01;
    put_bytes(&rec, "\x00\x09\x00", 3);
    r.n = 0;
    CU_ASSERT_EQUAL(tw__jaeger_decode(rec.data, rec.len, TW__THRIFT_BINARY, false, &sink, NULL,
                                      NULL, &err_at, why, sizeof why),
                    TW__THRIFT_MALFORMED);
    CU_ASSERT_EQUAL(r.n, 0);
    CU_ASSERT_EQUAL(err_at, bad_at);
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown field type 1"));
    tw__buf_free(&rec);
    free(r.ev);
    tw__span_data_unref(s);
}

/* A repeated process or spans field: the last one wins. */
static void test_one_pass_repeated_fields_last_one_wins(void)
{
    tw__span_data *s = tw_test_span_root_64bit();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tw__span_data *three[3] = {s, s, s};
    tw__process other;
    tw__process_init(&other);
    CU_ASSERT_FATAL(tw__process_set_service(&other, "other"));
    recorder r;
    recorder_init(&r, 8);
    for (int proto = 0; proto < 2; proto++) {
        tw__buf rec;
        tw__buf_init(&rec);
        size_t at[3];
        /* "sps" with three spans each time, then the last list cut to one
         * span by a second record built the same way. */
        build_record((tw__thrift_protocol)proto, false, "sp", &test_process, three, 3, &rec, at);
        tw__buf tail;
        tw__buf_init(&tail);
        build_record((tw__thrift_protocol)proto, false, "sp", &other, three, 1, &tail, at);
        rec.len--; /* drop the first Batch's stop, append the second's fields */
        if (proto == TW__THRIFT_COMPACT) {
            /* The second spans field follows the process (id 1): delta 1. */
            tail.data[0] = 0x19;
        }
        put_bytes(&rec, tail.data, tail.len);
        tw__jaeger_record info;
        CU_ASSERT_EQUAL(
            decode_into(&r, rec.data, rec.len, (tw__thrift_protocol)proto, false, &info, NULL),
            TW__THRIFT_OK);
        CU_ASSERT_EQUAL(info.n_spans, 1);
        CU_ASSERT_EQUAL_FATAL(r.n, 1);
        CU_ASSERT_STRING_EQUAL(r.ev[0].service, "other");
        tw__buf_free(&tail);
        tw__buf_free(&rec);
    }
    free(r.ev);
    tw__process_clear(&other);
    tw__span_data_unref(s);
}

/* Lists too long to hold (more spans than 4096, more bytes than 4 MiB):
 * the same events, in order, and still nothing from a cut record. */
static void test_one_pass_long_lists_are_decoded_again(void)
{
    enum { MANY = 5000, BIG = 80 };
    static char value[64 * 1024];
    memset(value, 'v', sizeof value - 1);
    size_t counts[2] = {MANY, BIG};
    for (int variant = 0; variant < 2; variant++) {
        size_t n = counts[variant];
        tw__span_data **spans = calloc(n, sizeof *spans);
        size_t *at = calloc(n, sizeof *at);
        CU_ASSERT_FATAL(spans && at);
        for (size_t i = 0; i < n; i++) {
            spans[i] = tw_test_span_root_64bit();
            CU_ASSERT_PTR_NOT_NULL_FATAL(spans[i]);
            spans[i]->span_id = i == n / 2 ? 0 : i + 1; /* one bad span */
            if (variant == 1)
                CU_ASSERT_FATAL(tw__span_data_add_str_tag(spans[i], "big", value, strlen(value)));
        }
        tw__buf rec;
        tw__buf_init(&rec);
        build_record(TW__THRIFT_BINARY, false, "sp", &test_process, spans, n, &rec, at);
        recorder r;
        recorder_init(&r, n + 1);
        for (size_t cut = 1; cut < rec.len; cut += rec.len / 17) {
            CU_ASSERT_EQUAL(decode_into(&r, rec.data, cut, TW__THRIFT_BINARY, false, NULL, NULL),
                            TW__THRIFT_SHORT);
            CU_ASSERT_EQUAL(r.n, 0);
        }
        CU_ASSERT_EQUAL(decode_into(&r, rec.data, rec.len, TW__THRIFT_BINARY, false, NULL, NULL),
                        TW__THRIFT_OK);
        CU_ASSERT_EQUAL_FATAL(r.n, n);
        bool in_order = true;
        for (size_t i = 0; i < n; i++) {
            if (i == n / 2)
                in_order &= r.ev[i].kind == 'b' && r.ev[i].index == i && r.ev[i].offset == at[i] &&
                            r.ev[i].len == at[i + 1] - at[i];
            else
                in_order &= r.ev[i].kind == 's' && r.ev[i].span_id == i + 1 &&
                            strcmp(r.ev[i].service, "billing") == 0;
        }
        CU_ASSERT(in_order);
        free(r.ev);
        tw__buf_free(&rec);
        for (size_t i = 0; i < n; i++)
            tw__span_data_unref(spans[i]);
        free(spans);
        free(at);
    }
}

/* The reader tops its buffer up ahead of need; a malformed record's reject
 * still carries the bytes a reader that fills only when a record does not
 * fit held: here, three records of about 40 KB with the first 64 KiB
 * buffer, the third malformed near its start, held only up to where the
 * fill made for the second one ended (64 KiB after the second's start). */
static void test_malformed_reject_does_not_depend_on_read_ahead(void)
{
    enum { N = 60 };
    tw__span_data *spans[N];
    for (size_t i = 0; i < N; i++) {
        spans[i] = tw_test_span_every_field();
        CU_ASSERT_PTR_NOT_NULL_FATAL(spans[i]);
    }
    tw__buf stream;
    tw__buf_init(&stream);
    size_t n = 1;
    while (stream.len < 35000) { /* the size of one record */
        tw__buf_reset(&stream);
        append_batch(TW__THRIFT_BINARY, false, &test_process, spans, n++, &stream);
    }
    size_t size = stream.len;
    CU_ASSERT_FATAL(size < 65536 && 2 * size > 65536 && 3 * size > 2 * 65536 - size);
    append_batch(TW__THRIFT_BINARY, false, &test_process, spans, n - 1, &stream);
    append_batch(TW__THRIFT_BINARY, false, &test_process, spans, n - 1, &stream);
    append_batch(TW__THRIFT_BINARY, false, &test_process, spans, n - 1, &stream);
    stream.data[2 * size + 3] = 0x01; /* the third record's process: no field type */
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_jaeger_thrift, stream.data, stream.len),
                    TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "is malformed"));
    CU_ASSERT_EQUAL(c.rejects[0].raw_len, 65536 - size);
    capture_free(&c);
    tw__buf_free(&stream);
    for (size_t i = 0; i < N; i++)
        tw__span_data_unref(spans[i]);
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
    CU_add_test(suite, "one_pass_emits_a_record_only_when_whole",
                test_one_pass_emits_a_record_only_when_whole);
    CU_add_test(suite, "one_pass_fault_after_the_spans_emits_nothing",
                test_one_pass_fault_after_the_spans_emits_nothing);
    CU_add_test(suite, "one_pass_repeated_fields_last_one_wins",
                test_one_pass_repeated_fields_last_one_wins);
    CU_add_test(suite, "one_pass_long_lists_are_decoded_again",
                test_one_pass_long_lists_are_decoded_again);
    CU_add_test(suite, "malformed_reject_does_not_depend_on_read_ahead",
                test_malformed_reject_does_not_depend_on_read_ahead);
}
