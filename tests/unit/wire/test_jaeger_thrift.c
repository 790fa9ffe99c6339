/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_jaeger_thrift.c: suite "wire/jaeger_thrift", the
 * contract of the Jaeger Thrift encoder (sdk/wire/jaeger/jaeger_thrift.h).
 *
 * Our bytes are decoded with the c_glib code generated from
 * thrift/jaeger.thrift and thrift/agent.thrift (thrift_struct_read over a
 * ThriftMemoryBuffer) and compared field by field with the span records they
 * came from, in both protocols. The generated writer then re-encodes what it
 * decoded: equal bytes show that our direct field writes, and our splicing of
 * standalone span encodings into the batch list, are exactly what Thrift
 * itself produces. The emitBatch size prediction is checked against real
 * messages across list-header, seqNo and seq-id varint boundaries.
 *
 * Fixtures are records built through the model API (wire/model/span_data.h) in
 * suite init and freed in cleanup; every test frees what it creates.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <glib-object.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/protocol/thrift_compact_protocol.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>

#include "harness.h"
#include "jaeger_decode.h"
#include "span_builder.h"
#include "twire_jaeger_agent_types.h"
#include "twire_jaeger_jaeger_types.h"
#include "model_equal.h"
#include "wire/jaeger/jaeger_thrift.h"
#include "wire/jaeger/jaeger_thrift_decode.h"

#define N_PROTOCOLS 2
static const tw__thrift_protocol all_protocols[N_PROTOCOLS] = {TW__THRIFT_COMPACT,
                                                               TW__THRIFT_BINARY};
static const char *const protocol_names[N_PROTOCOLS] = {"compact", "binary"};

/* ---- fixtures --------------------------------------------------------------------------- */

static tw__jaeger_encoder *encoder_by_protocol[N_PROTOCOLS];
/* 128-bit ids with the top bit set, every tag type, logs, both ref types. */
static tw__span_data *span_every_field;
/* 64-bit root span: no parent, refs, tags or logs; empty operation name. */
static tw__span_data *span_root_64bit;
/* What a server span usually carries: 5 tags, no logs. */
static tw__span_data *span_typical;
static tw__process process_tagged;
static tw__process process_bare;

static tw__span_data *build_span_typical(void)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_low = 0x4bf92f3577b34da6u;
    s->span_id = 0x00f067aa0ba902b7u;
    s->parent_id = 0x53995c3f42cd8ad8u;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = 1712345678901234;
    s->duration_us = 15320;
    const char *op = "HTTP GET /api/orders";
    bool ok = tw__span_data_set_operation(s, op, strlen(op)) &&
              tw_test_add_tag(s, "span.kind", tw_test_str("server")) &&
              tw_test_add_tag(s, "http.method", tw_test_str("GET")) &&
              tw_test_add_tag(s, "http.status_code", tw_test_i64(200)) &&
              tw_test_add_tag(s, "error", tw_test_bool(false)) &&
              tw_test_add_tag(s, "db.latency_ms", tw_test_dbl(2.75));
    if (!ok) {
        tw__span_data_unref(s);
        return NULL;
    }
    return s;
}

static bool build_process_tagged(tw__process *p)
{
    tw__process_init(p);
    tw_value v_bin = tw_test_bin(tw_test_blob_with_nul, sizeof(tw_test_blob_with_nul));
    tw_value v_ver = tw_test_str("C-0.1.0");
    tw_value v_ip = tw_test_i64(0x7f000001);
    tw_value v_dbl = tw_test_dbl(-1.5e300);
    tw_value v_bool = tw_test_bool(true);
    return tw__process_set_service(p, "tracewire-test") &&
           tw__process_add_tag(p, "jaeger.version", &v_ver) &&
           tw__process_add_tag(p, "ip", &v_ip) && tw__process_add_tag(p, "load", &v_dbl) &&
           tw__process_add_tag(p, "canary", &v_bool) &&
           tw__process_add_tag(p, "fingerprint", &v_bin);
}

static int suite_init(void)
{
    if (!tw_test_patch_thrift_finalizers())
        return -1;
    for (size_t i = 0; i < N_PROTOCOLS; i++) {
        encoder_by_protocol[i] = tw__jaeger_encoder_new(all_protocols[i]);
        if (!encoder_by_protocol[i])
            return -1;
    }
    span_every_field = tw_test_span_every_field();
    span_root_64bit = tw_test_span_root_64bit();
    span_typical = build_span_typical();
    tw__process_init(&process_bare);
    if (!span_every_field || !span_root_64bit || !span_typical ||
        !build_process_tagged(&process_tagged) || !tw__process_set_service(&process_bare, "svc"))
        return -1;
    return 0;
}

static int suite_cleanup(void)
{
    for (size_t i = 0; i < N_PROTOCOLS; i++) {
        tw__jaeger_encoder_free(encoder_by_protocol[i]);
        encoder_by_protocol[i] = NULL;
    }
    tw__span_data_unref(span_every_field);
    tw__span_data_unref(span_root_64bit);
    tw__span_data_unref(span_typical);
    tw__process_clear(&process_tagged);
    tw__process_clear(&process_bare);
    return 0;
}

/* ---- decoding with the generated c_glib code ---------------------------------------------- */

static GType protocol_type(tw__thrift_protocol kind)
{
    return kind == TW__THRIFT_COMPACT ? THRIFT_TYPE_COMPACT_PROTOCOL : THRIFT_TYPE_BINARY_PROTOCOL;
}

/* A protocol of @kind over a memory buffer that owns @bytes. */
static ThriftProtocol *protocol_over(tw__thrift_protocol kind, GByteArray *bytes)
{
    ThriftTransport *transport =
        g_object_new(THRIFT_TYPE_MEMORY_BUFFER, "buf", bytes, "owner", TRUE, NULL);
    ThriftProtocol *protocol = g_object_new(protocol_type(kind), "transport", transport, NULL);
    g_object_unref(transport); /* the protocol keeps its own reference */
    return protocol;
}

static ThriftProtocol *reader_new(tw__thrift_protocol kind, const uint8_t *data, size_t len)
{
    GByteArray *bytes = g_byte_array_sized_new((guint)len);
    g_byte_array_append(bytes, data, (guint)len);
    return protocol_over(kind, bytes);
}

static GByteArray *protocol_bytes(ThriftProtocol *protocol)
{
    return THRIFT_MEMORY_BUFFER(protocol->transport)->buf;
}

static void report_error(const char *what, GError **err)
{
    fprintf(stderr, "\n    %s: %s\n", what, *err ? (*err)->message : "(no message)");
    g_clear_error(err);
}

/* Reads one struct into @obj from all of @data: false unless it decodes and
 * consumes every byte. */
static bool decode_struct(tw__thrift_protocol kind, const uint8_t *data, size_t len, gpointer obj)
{
    ThriftProtocol *reader = reader_new(kind, data, len);
    GError *err = NULL;
    bool ok = thrift_struct_read(THRIFT_STRUCT(obj), reader, &err) >= 0;
    if (!ok)
        report_error("thrift_struct_read", &err);
    else if (protocol_bytes(reader)->len != 0) {
        fprintf(stderr, "\n    %u bytes left after the struct\n", protocol_bytes(reader)->len);
        ok = false;
    }
    g_object_unref(reader);
    return ok;
}

/* Decodes an Agent.emitBatch message; NULL unless the header names a oneway
 * emitBatch and the args struct uses up the message. */
static TwireJaegerAgentEmitBatchArgs *decode_emit_batch(tw__thrift_protocol kind,
                                                        const tw__buf *msg, int32_t *seq_id)
{
    ThriftProtocol *reader = reader_new(kind, msg->data, msg->len);
    TwireJaegerAgentEmitBatchArgs *args =
        g_object_new(TWIRE_JAEGER_TYPE_AGENT_EMIT_BATCH_ARGS, NULL);
    GError *err = NULL;
    gchar *name = NULL;
    ThriftMessageType type = T_CALL;
    bool ok = false;
    if (thrift_protocol_read_message_begin(reader, &name, &type, seq_id, &err) < 0 ||
        thrift_struct_read(THRIFT_STRUCT(args), reader, &err) < 0 ||
        thrift_protocol_read_message_end(reader, &err) < 0)
        report_error("reading emitBatch", &err);
    else if (strcmp(name, "emitBatch") != 0 || type != T_ONEWAY || !args->__isset_batch)
        fprintf(stderr, "\n    message %s type %d is not a oneway emitBatch\n", name, (int)type);
    else if (protocol_bytes(reader)->len != 0)
        fprintf(stderr, "\n    %u bytes left after the message\n", protocol_bytes(reader)->len);
    else
        ok = true;
    g_free(name);
    g_object_unref(reader);
    if (!ok) {
        g_object_unref(args);
        return NULL;
    }
    return args;
}

/* ---- field-by-field comparison with the model ---------------------------------------------- */

static bool same_bits(double a, double b)
{
    return memcmp(&a, &b, sizeof(a)) == 0;
}

static void check_tag(const TwireJaegerTag *got, const tw__tag *want)
{
    CU_ASSERT_EQUAL(strlen(got->key), want->key_len);
    CU_ASSERT_STRING_EQUAL(got->key, want->key);
    int set = got->__isset_vStr + got->__isset_vDouble + got->__isset_vBool + got->__isset_vLong +
              got->__isset_vBinary;
    CU_ASSERT_EQUAL(set, 1); /* exactly the one value field of vType */
    switch (want->type) {
    case TW_VALUE_STRING:
        CU_ASSERT_EQUAL(got->vType, TWIRE_JAEGER_TAG_TYPE_STRING);
        CU_ASSERT_FATAL(got->__isset_vStr);
        CU_ASSERT_EQUAL(strlen(got->vStr), want->len);
        CU_ASSERT(memcmp(got->vStr, want->v.str, want->len) == 0);
        break;
    case TW_VALUE_DOUBLE:
        CU_ASSERT_EQUAL(got->vType, TWIRE_JAEGER_TAG_TYPE_DOUBLE);
        CU_ASSERT(got->__isset_vDouble);
        CU_ASSERT(same_bits(got->vDouble, want->v.dbl));
        break;
    case TW_VALUE_BOOL:
        CU_ASSERT_EQUAL(got->vType, TWIRE_JAEGER_TAG_TYPE_BOOL);
        CU_ASSERT(got->__isset_vBool);
        CU_ASSERT_EQUAL(!!got->vBool, want->v.boolean);
        break;
    case TW_VALUE_INT64:
        CU_ASSERT_EQUAL(got->vType, TWIRE_JAEGER_TAG_TYPE_LONG);
        CU_ASSERT(got->__isset_vLong);
        CU_ASSERT_EQUAL(got->vLong, want->v.i64);
        break;
    case TW_VALUE_BINARY:
        CU_ASSERT_EQUAL(got->vType, TWIRE_JAEGER_TAG_TYPE_BINARY);
        CU_ASSERT_FATAL(got->__isset_vBinary);
        CU_ASSERT_EQUAL(got->vBinary->len, want->len);
        CU_ASSERT(want->len == 0 || memcmp(got->vBinary->data, want->v.bin, want->len) == 0);
        break;
    default:
        CU_FAIL("fixture holds a tag of unknown type");
    }
}

static void check_tag_list(const GPtrArray *got, const tw__tag *want, size_t n)
{
    CU_ASSERT_EQUAL_FATAL(got->len, n);
    for (size_t i = 0; i < n; i++)
        check_tag(g_ptr_array_index(got, i), &want[i]);
}

/* An optional list<Tag>: on the wire exactly when non-empty. */
static void check_optional_tags(gboolean got_isset, const GPtrArray *got, const tw__tag *want,
                                size_t n)
{
    CU_ASSERT_EQUAL(got_isset, n > 0);
    if (got_isset)
        check_tag_list(got, want, n);
}

static void check_span(const TwireJaegerSpan *got, const tw__span_data *want)
{
    /* Unsigned ids travel as the signed i64 with the same bits. */
    CU_ASSERT_EQUAL((uint64_t)got->traceIdLow, want->trace_id_low);
    CU_ASSERT_EQUAL((uint64_t)got->traceIdHigh, want->trace_id_high);
    CU_ASSERT_EQUAL((uint64_t)got->spanId, want->span_id);
    CU_ASSERT_EQUAL((uint64_t)got->parentSpanId, want->parent_id);
    CU_ASSERT_STRING_EQUAL(got->operationName, want->operation);
    CU_ASSERT_EQUAL((uint32_t)got->flags, want->flags);
    CU_ASSERT_EQUAL(got->startTime, want->start_us);
    CU_ASSERT_EQUAL(got->duration, want->duration_us);

    CU_ASSERT_EQUAL(got->__isset_references, want->n_refs > 0);
    if (got->__isset_references) {
        CU_ASSERT_EQUAL_FATAL(got->references->len, want->n_refs);
        for (size_t i = 0; i < want->n_refs; i++) {
            const TwireJaegerSpanRef *ref = g_ptr_array_index(got->references, i);
            CU_ASSERT_EQUAL(ref->refType, want->refs[i].type == TW__REF_CHILD_OF
                                              ? TWIRE_JAEGER_SPAN_REF_TYPE_CHILD_OF
                                              : TWIRE_JAEGER_SPAN_REF_TYPE_FOLLOWS_FROM);
            CU_ASSERT_EQUAL((uint64_t)ref->traceIdLow, want->refs[i].trace_id_low);
            CU_ASSERT_EQUAL((uint64_t)ref->traceIdHigh, want->refs[i].trace_id_high);
            CU_ASSERT_EQUAL((uint64_t)ref->spanId, want->refs[i].span_id);
        }
    }

    check_optional_tags(got->__isset_tags, got->tags, want->tags, want->n_tags);

    CU_ASSERT_EQUAL(got->__isset_logs, want->n_logs > 0);
    if (got->__isset_logs) {
        CU_ASSERT_EQUAL_FATAL(got->logs->len, want->n_logs);
        for (size_t i = 0; i < want->n_logs; i++) {
            const TwireJaegerLog *log = g_ptr_array_index(got->logs, i);
            CU_ASSERT_EQUAL(log->timestamp, want->logs[i].timestamp_us);
            /* Log.fields is required, so even an empty list is on the wire. */
            check_tag_list(log->fields, want->logs[i].fields, want->logs[i].n_fields);
        }
    }
}

static void check_process(const TwireJaegerProcess *got, const tw__process *want)
{
    CU_ASSERT_STRING_EQUAL(got->serviceName, want->service_name);
    check_optional_tags(got->__isset_tags, got->tags, want->tags, want->n_tags);
}

static void check_stats(const TwireJaegerBatch *got, const tw__client_stats *want)
{
    CU_ASSERT_EQUAL(got->__isset_stats, want != NULL);
    if (!want || !got->__isset_stats)
        return;
    CU_ASSERT_EQUAL(got->stats->fullQueueDroppedSpans, want->full_queue_dropped_spans);
    CU_ASSERT_EQUAL(got->stats->tooLargeDroppedSpans, want->too_large_dropped_spans);
    CU_ASSERT_EQUAL(got->stats->failedToEmitSpans, want->failed_to_emit_spans);
}

/* Writes @obj with the generated writer (inside an emitBatch message when
 * @seq_id is not NULL) and compares with @ours byte for byte. */
static void check_generated_writer_agrees(tw__thrift_protocol kind, gpointer obj,
                                          const int32_t *seq_id, const tw__buf *ours)
{
    ThriftProtocol *writer = protocol_over(kind, g_byte_array_new());
    GError *err = NULL;
    bool ok = (!seq_id || thrift_protocol_write_message_begin(writer, "emitBatch", T_ONEWAY,
                                                              *seq_id, &err) >= 0) &&
              thrift_struct_write(THRIFT_STRUCT(obj), writer, &err) >= 0 &&
              (!seq_id || thrift_protocol_write_message_end(writer, &err) >= 0);
    if (!ok)
        report_error("thrift_struct_write", &err);
    CU_ASSERT(ok);
    GByteArray *theirs = protocol_bytes(writer);
    CU_ASSERT_EQUAL(theirs->len, ours->len);
    CU_ASSERT(theirs->len == ours->len && memcmp(theirs->data, ours->data, ours->len) == 0);
    g_object_unref(writer);
}

/* ---- helpers building batches ------------------------------------------------------------ */

static bool encode_spans(tw__jaeger_encoder *enc, tw__span_data *const *spans, size_t n,
                         tw__buf *out)
{
    for (size_t i = 0; i < n; i++) {
        if (!tw__jaeger_encode_span(enc, spans[i], out))
            return false;
    }
    return true;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_span_decodes_field_by_field_in_both_protocols(void)
{
    tw__span_data *const spans[] = {span_every_field, span_root_64bit, span_typical};
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        for (size_t i = 0; i < sizeof(spans) / sizeof(spans[0]); i++) {
            tw__buf out = {0};
            CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[p], spans[i], &out));
            TwireJaegerSpan *got = g_object_new(TWIRE_JAEGER_TYPE_SPAN, NULL);
            bool decoded = decode_struct(all_protocols[p], out.data, out.len, got);
            CU_ASSERT(decoded);
            if (!decoded)
                fprintf(stderr, "    (%s, span %zu)\n", protocol_names[p], i);
            else
                check_span(got, spans[i]);
            g_object_unref(got);
            tw__buf_free(&out);
        }
    }
}

static void test_ids_with_top_bit_set_are_negative_i64_with_same_bits(void)
{
    tw__buf out = {0};
    CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[0], span_every_field, &out));
    TwireJaegerSpan *got = g_object_new(TWIRE_JAEGER_TYPE_SPAN, NULL);
    CU_ASSERT_FATAL(decode_struct(TW__THRIFT_COMPACT, out.data, out.len, got));
    CU_ASSERT_EQUAL(got->traceIdLow, -1);
    CU_ASSERT_EQUAL(got->traceIdHigh, INT64_MIN + 1);
    CU_ASSERT_EQUAL(got->spanId, INT64_MIN);
    CU_ASSERT_EQUAL(got->parentSpanId, INT64_MAX);
    CU_ASSERT_EQUAL(got->flags, 0x0b);
    g_object_unref(got);
    tw__buf_free(&out);
}

static void test_invalid_utf8_text_is_repaired(void)
{
    tw__span_data *s = tw__span_data_new();
    s->trace_id_low = 1;
    s->span_id = 1;
    const char bad_name[] = "op\xff";
    CU_ASSERT_FATAL(tw__span_data_set_operation(s, bad_name, strlen(bad_name)));
    CU_ASSERT_FATAL(tw_test_add_tag(s, "k\xc3", tw_test_str("v\xe2\x82")));
    CU_ASSERT_FATAL(tw_test_add_tag(s, "raw", tw_test_bin((const uint8_t *)"\xff", 1)));
    tw__buf out = {0};
    CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[0], s, &out));
    TwireJaegerSpan *got = g_object_new(TWIRE_JAEGER_TYPE_SPAN, NULL);
    CU_ASSERT_FATAL(decode_struct(TW__THRIFT_COMPACT, out.data, out.len, got));
    CU_ASSERT_STRING_EQUAL(got->operationName, "op\xef\xbf\xbd"); /* U+FFFD */
    const TwireJaegerTag *t0 = g_ptr_array_index(got->tags, 0);
    const TwireJaegerTag *t1 = g_ptr_array_index(got->tags, 1);
    CU_ASSERT(g_utf8_validate(t0->key, -1, NULL) && g_utf8_validate(t0->vStr, -1, NULL));
    CU_ASSERT(t1->vBinary->len == 1 && t1->vBinary->data[0] == 0xff); /* binary stays raw */
    g_object_unref(got);
    tw__buf_free(&out);
    tw__span_data_unref(s);
}

/* The binary fast path copies and checks short texts in one pass (word by
 * word, by length class: 1..3, 4..7, 8..64 bytes, longer): at every length
 * to 72 and every position, an é is kept and a byte that is not UTF-8
 * (0xff, a lone lead byte 0xc3) becomes U+FFFD, in the operation name and
 * in a tag's key and value. */
static void test_binary_text_lengths_and_bad_byte_positions(void)
{
    static const char *const inserts[] = {"\xc3\xa9", "\xff", "\xc3"};
    char text[80], want[96];
    for (size_t len = 1; len <= 72; len++) {
        for (size_t pos = 0; pos < len; pos++) {
            for (size_t k = 0; k < 3; k++) {
                size_t ins = strlen(inserts[k]);
                if (pos + ins > len)
                    continue;
                memset(text, 'a' + (int)(len % 26), len);
                memcpy(text + pos, inserts[k], ins);
                text[len] = '\0';
                bool valid = k == 0;
                memcpy(want, text, pos);
                size_t wn = pos;
                memcpy(want + wn, valid ? "\xc3\xa9" : "\xef\xbf\xbd", valid ? 2 : 3);
                wn += valid ? 2 : 3;
                memcpy(want + wn, text + pos + ins, len - pos - ins + 1);
                tw__span_data *s = tw__span_data_new();
                CU_ASSERT_PTR_NOT_NULL_FATAL(s);
                s->trace_id_low = 1;
                s->span_id = 2;
                CU_ASSERT_FATAL(tw__span_data_set_operation(s, text, len));
                CU_ASSERT_FATAL(tw_test_add_tag(s, text, tw_test_str(text)));
                tw__buf out = {0};
                CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[1], s, &out));
                TwireJaegerSpan *got = g_object_new(TWIRE_JAEGER_TYPE_SPAN, NULL);
                CU_ASSERT_FATAL(decode_struct(TW__THRIFT_BINARY, out.data, out.len, got));
                const TwireJaegerTag *t = g_ptr_array_index(got->tags, 0);
                CU_ASSERT_STRING_EQUAL(got->operationName, want);
                CU_ASSERT_STRING_EQUAL(t->key, want);
                CU_ASSERT_STRING_EQUAL(t->vStr, want);
                g_object_unref(got);
                tw__buf_free(&out);
                tw__span_data_unref(s);
            }
        }
    }
}

static void test_empty_optional_lists_are_not_written(void)
{
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__buf out = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[p], span_root_64bit, &out));
        TwireJaegerSpan *got = g_object_new(TWIRE_JAEGER_TYPE_SPAN, NULL);
        CU_ASSERT_FATAL(decode_struct(all_protocols[p], out.data, out.len, got));
        CU_ASSERT_FALSE(got->__isset_references);
        CU_ASSERT_FALSE(got->__isset_tags);
        CU_ASSERT_FALSE(got->__isset_logs);
        CU_ASSERT_STRING_EQUAL(got->operationName, "");
        CU_ASSERT_EQUAL(got->traceIdHigh, 0);
        CU_ASSERT_EQUAL(got->parentSpanId, 0);
        g_object_unref(got);

        tw__buf_reset(&out);
        CU_ASSERT_FATAL(tw__jaeger_encode_process(encoder_by_protocol[p], &process_bare, &out));
        TwireJaegerProcess *process = g_object_new(TWIRE_JAEGER_TYPE_PROCESS, NULL);
        CU_ASSERT_FATAL(decode_struct(all_protocols[p], out.data, out.len, process));
        CU_ASSERT_STRING_EQUAL(process->serviceName, "svc");
        CU_ASSERT_FALSE(process->__isset_tags);
        g_object_unref(process);
        tw__buf_free(&out);
    }
}

static void test_process_decodes_with_every_tag_type(void)
{
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__buf out = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_process(encoder_by_protocol[p], &process_tagged, &out));
        TwireJaegerProcess *got = g_object_new(TWIRE_JAEGER_TYPE_PROCESS, NULL);
        CU_ASSERT_FATAL(decode_struct(all_protocols[p], out.data, out.len, got));
        check_process(got, &process_tagged);
        g_object_unref(got);
        tw__buf_free(&out);
    }
}

static void test_encode_appends_to_existing_content(void)
{
    tw__buf out = {0};
    tw__buf alone = {0};
    CU_ASSERT_FATAL(tw__buf_append(&out, "xyz", 3));
    CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[0], span_typical, &out));
    CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[0], span_typical, &alone));
    CU_ASSERT_EQUAL_FATAL(out.len, 3 + alone.len);
    CU_ASSERT(memcmp(out.data, "xyz", 3) == 0);
    CU_ASSERT(memcmp(out.data + 3, alone.data, alone.len) == 0);
    tw__buf_free(&out);
    tw__buf_free(&alone);
}

static void test_reused_encoder_repeats_its_bytes(void)
{
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__buf first = {0}, other = {0}, again = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[p], span_every_field, &first));
        CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[p], span_root_64bit, &other));
        CU_ASSERT_FATAL(tw__jaeger_encode_process(encoder_by_protocol[p], &process_tagged, &other));
        CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[p], span_every_field, &again));
        CU_ASSERT_EQUAL_FATAL(first.len, again.len);
        CU_ASSERT(memcmp(first.data, again.data, first.len) == 0);
        tw__buf_free(&first);
        tw__buf_free(&other);
        tw__buf_free(&again);
    }
}

/* The whole datagram, checked three ways: the generated reader accepts it
 * as a oneway emitBatch, every field matches, and the generated writer
 * produces the same bytes from what was decoded. The last point is what
 * shows that a span encoded on its own is byte-identical to the same span
 * written inside the Batch's list by Thrift itself. */
static void test_emit_batch_message_matches_generated_code(void)
{
    tw__span_data *const spans[] = {span_every_field, span_root_64bit, span_typical};
    const size_t n_spans = sizeof(spans) / sizeof(spans[0]);
    const tw__client_stats stats = {7, 8, INT64_MAX};
    const int64_t seq_no = 4242;
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__jaeger_encoder *enc = encoder_by_protocol[p];
        tw__buf process = {0}, span_bytes = {0}, msg = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_process(enc, &process_tagged, &process));
        CU_ASSERT_FATAL(encode_spans(enc, spans, n_spans, &span_bytes));
        int32_t msg_seq_id = tw__jaeger_msg_seq_id(seq_no);
        CU_ASSERT_FATAL(tw__jaeger_emit_batch_message(enc, process.data, process.len,
                                                      span_bytes.data, span_bytes.len, n_spans,
                                                      seq_no, &stats, msg_seq_id, &msg));
        CU_ASSERT_EQUAL(msg.len, tw__jaeger_emit_batch_size(enc, process.len, n_spans,
                                                            span_bytes.len, seq_no, &stats));
        int32_t got_seq_id = -1;
        TwireJaegerAgentEmitBatchArgs *args =
            decode_emit_batch(all_protocols[p], &msg, &got_seq_id);
        CU_ASSERT_PTR_NOT_NULL_FATAL(args);
        CU_ASSERT_EQUAL(got_seq_id, msg_seq_id);
        const TwireJaegerBatch *batch = args->batch;
        check_process(batch->process, &process_tagged);
        CU_ASSERT_EQUAL_FATAL(batch->spans->len, n_spans);
        for (size_t i = 0; i < n_spans; i++)
            check_span(g_ptr_array_index(batch->spans, i), spans[i]);
        CU_ASSERT(batch->__isset_seqNo);
        CU_ASSERT_EQUAL(batch->seqNo, seq_no);
        check_stats(batch, &stats);
        check_generated_writer_agrees(all_protocols[p], args, &got_seq_id, &msg);
        g_object_unref(args);
        tw__buf_free(&process);
        tw__buf_free(&span_bytes);
        tw__buf_free(&msg);
    }
}

static void test_standalone_span_matches_generated_writer(void)
{
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__buf out = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[p], span_every_field, &out));
        TwireJaegerSpan *got = g_object_new(TWIRE_JAEGER_TYPE_SPAN, NULL);
        CU_ASSERT_FATAL(decode_struct(all_protocols[p], out.data, out.len, got));
        check_generated_writer_agrees(all_protocols[p], got, NULL, &out);
        g_object_unref(got);
        tw__buf_free(&out);
    }
}

/* ---- spans of random shapes: the binary writer's fast path against c_glib ----------------- */

static uint64_t rnd_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* A text of 0..max bytes: ASCII, two- and three-byte UTF-8, and (when
 * @allow_bad) now and then a byte that is not UTF-8, which sends the whole
 * span to the generic writer. Never a NUL: c_glib strings cannot hold one. */
static size_t rnd_text(char *buf, size_t max, bool allow_bad)
{
    size_t n = 0, want = (size_t)(rnd() % (max + 1));
    while (n + 3 <= want) {
        unsigned pick = (unsigned)(rnd() % 16);
        if (pick == 0) {
            memcpy(buf + n, "\xc3\xa9", 2); /* é */
            n += 2;
        } else if (pick == 1) {
            memcpy(buf + n, "\xe2\x82\xac", 3); /* € */
            n += 3;
        } else if (pick == 2 && allow_bad && rnd() % 8 == 0) {
            buf[n++] = '\xff';
        } else {
            buf[n++] = (char)('a' + rnd() % 26);
        }
    }
    buf[n] = '\0';
    return n;
}

static tw_value rnd_value(char *text, uint8_t *blob, bool allow_bad)
{
    tw_value v = {.type = TW_VALUE_STRING};
    size_t n;
    switch (rnd() % 5) {
    case 0:
        v.as.str = text;
        v.len = rnd_text(text, rnd() % 4 == 0 ? 300 : 24, allow_bad);
        break;
    case 1:
        v.type = TW_VALUE_DOUBLE;
        v.as.dbl = (double)(int64_t)rnd() / 7.0;
        break;
    case 2:
        v.type = TW_VALUE_BOOL;
        v.as.boolean = rnd() & 1;
        break;
    case 3:
        v.type = TW_VALUE_INT64;
        v.as.i64 = (int64_t)rnd();
        break;
    default:
        v.type = TW_VALUE_BINARY;
        n = (size_t)(rnd() % 20); /* any bytes, NUL included */
        for (size_t i = 0; i < n; i++)
            blob[i] = (uint8_t)rnd();
        v.as.bin = blob;
        v.len = n;
        break;
    }
    return v;
}

static bool rnd_log(tw__span_data *s, bool allow_bad)
{
    size_t n = (size_t)(rnd() % 4);
    tw__log *log = tw__span_data_push_log(s, n);
    if (!log)
        return false;
    log->timestamp_us = (int64_t)(rnd() >> 1);
    for (size_t i = 0; i < n; i++) {
        char key[32], text[320];
        uint8_t blob[32];
        rnd_text(key, 12, allow_bad);
        tw_value v = rnd_value(text, blob, allow_bad);
        bool truncated = false;
        if (!tw__tag_set(&s->arena, &log->fields[i], key, &v, SIZE_MAX, &truncated))
            return false;
    }
    log->n_fields = n;
    s->n_logs++;
    return true;
}

static tw__span_data *rnd_span(bool allow_bad)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_high = rnd() % 2 ? rnd() : 0;
    s->trace_id_low = rnd();
    s->span_id = rnd();
    s->parent_id = rnd() % 2 ? rnd() : 0;
    s->flags = (uint32_t)rnd();
    s->start_us = (int64_t)rnd();
    s->duration_us = (int64_t)(rnd() >> 1);
    char text[320];
    uint8_t blob[32];
    size_t n = rnd_text(text, 40, allow_bad);
    bool ok = tw__span_data_set_operation(s, text, n);
    for (size_t i = rnd() % 3; ok && i > 0; i--)
        ok = tw__span_data_add_ref(s, rnd() % 2 ? TW__REF_FOLLOWS_FROM : TW__REF_CHILD_OF, rnd(),
                                   rnd(), rnd());
    for (size_t i = rnd() % 10; ok && i > 0; i--) {
        char key[32];
        rnd_text(key, 16, allow_bad);
        tw_value v = rnd_value(text, blob, allow_bad);
        ok = tw__span_data_add_tag(s, key, &v);
    }
    for (size_t i = rnd() % 4; ok && i > 0; i--)
        ok = rnd_log(s, allow_bad);
    if (!ok) {
        tw__span_data_unref(s);
        return NULL;
    }
    return s;
}

/* The binary protocol writes a span whose texts are all valid UTF-8 on its
 * fast path and any other on the generic writer: on spans of every shape,
 * both must give c_glib's bytes (each span is decoded with the generated
 * code and written again by it), appended after earlier content. */
static void test_binary_spans_of_random_shapes_match_generated_writer(void)
{
    tw__jaeger_encoder *enc = encoder_by_protocol[1];
    CU_ASSERT_EQUAL_FATAL(all_protocols[1], TW__THRIFT_BINARY);
    for (int i = 0; i < 400; i++) {
        tw__span_data *s = rnd_span(i % 4 == 3);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        tw__buf out = {0};
        CU_ASSERT_FATAL(tw__buf_append(&out, "prefix", 6));
        CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, s, &out));
        tw__buf mine = {0};
        CU_ASSERT_FATAL(tw__buf_append(&mine, out.data + 6, out.len - 6));
        CU_ASSERT(memcmp(out.data, "prefix", 6) == 0);
        TwireJaegerSpan *got = g_object_new(TWIRE_JAEGER_TYPE_SPAN, NULL);
        CU_ASSERT_FATAL(decode_struct(TW__THRIFT_BINARY, mine.data, mine.len, got));
        check_generated_writer_agrees(TW__THRIFT_BINARY, got, NULL, &mine);
        g_object_unref(got);
        tw__buf_free(&mine);
        tw__buf_free(&out);
        tw__span_data_unref(s);
    }
}

/* ---- the decoder's fast path for tags against its general reading ---------------------------- */

/* What one decode gave: the result, where it ended, the spans (kept) and
 * the bad spans and warnings as text. */
typedef struct decoded {
    tw__thrift_result result;
    tw__jaeger_record info;
    size_t need, at;
    char why[256];
    tw__span_data *spans[64];
    size_t n_spans;
    char service[64];
    tw__buf events;
} decoded;

static bool keep_decoded(void *user_data, tw__span_data *span, const tw__process *process)
{
    decoded *d = user_data;
    snprintf(d->service, sizeof d->service, "%s", process->service_name);
    if (d->n_spans < 64)
        d->spans[d->n_spans++] = span;
    else
        tw__span_data_unref(span);
    return true;
}

static bool note_bad(void *user_data, size_t index, size_t offset, size_t len, const char *why)
{
    decoded *d = user_data;
    char line[512];
    int n = snprintf(line, sizeof line, "bad %zu %zu %zu %s\n", index, offset, len, why);
    return tw__buf_append(&d->events, line, (size_t)n);
}

static void note_warn(void *user_data, size_t index, const char *why)
{
    decoded *d = user_data;
    char line[512];
    int n = snprintf(line, sizeof line, "warn %zu %s\n", index, why);
    CU_ASSERT(tw__buf_append(&d->events, line, (size_t)n));
}

static void decode_with(bool is_general, const uint8_t *data, size_t len, tw__thrift_protocol proto,
                        bool is_message, decoded *d)
{
    memset(d, 0, sizeof *d);
    tw__jaeger_sink sink = {keep_decoded, note_bad, note_warn, d, NULL};
    d->result = (is_general ? tw__jaeger_decode_general : tw__jaeger_decode)(
        data, len, proto, is_message, &sink, &d->info, &d->need, &d->at, d->why, sizeof d->why);
}

static void decoded_free(decoded *d)
{
    for (size_t i = 0; i < d->n_spans; i++)
        tw__span_data_unref(d->spans[i]);
    tw__buf_free(&d->events);
}

/* Both decoders on the same bytes; false when they differ in anything. */
static bool decoders_agree(const uint8_t *data, size_t len, tw__thrift_protocol proto,
                           bool is_message)
{
    decoded a, b;
    decode_with(false, data, len, proto, is_message, &a);
    decode_with(true, data, len, proto, is_message, &b);
    bool same = a.result == b.result && strcmp(a.why, b.why) == 0 && a.need == b.need &&
                a.at == b.at && a.n_spans == b.n_spans && strcmp(a.service, b.service) == 0 &&
                a.events.len == b.events.len &&
                (a.events.len == 0 || memcmp(a.events.data, b.events.data, a.events.len) == 0);
    if (same && a.result == TW__THRIFT_OK)
        same = a.info.size == b.info.size && a.info.n_spans == b.info.n_spans;
    for (size_t i = 0; same && i < a.n_spans; i++)
        same = tw_test_spans_equal(a.spans[i], b.spans[i]);
    decoded_free(&a);
    decoded_free(&b);
    return same;
}

/* Random spans (every tag type, keys and binaries with NUL bytes, strings
 * past one varint byte) in batches of both protocols, whole and then with
 * bytes changed to the bytes the tag layout is made of, or cut short: the
 * decoder with its fast path for tags and the general one give the same
 * spans, bad spans, results, offsets and reasons. */
static void test_tag_fast_path_agrees_with_general_decoder(void)
{
    static const uint8_t interesting[] = {0x00, 0x01, 0x02, 0x04, 0x08, 0x0a, 0x0b, 0x15,
                                          0x18, 0x27, 0x31, 0x32, 0x46, 0x58, 0x7f, 0x80,
                                          0x81, 0xff, 0x06, 0x03, 0x05, 0x07, 0x09, 0x0c};
    size_t checked = 0, whole_ok = 0;
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__jaeger_encoder *enc = encoder_by_protocol[p];
        tw__buf process = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_process(enc, &process_tagged, &process));
        for (int round = 0; round < 60; round++) {
            tw__buf spans = {0}, batch = {0};
            size_t n = 1 + (size_t)(rnd() % 4);
            for (size_t i = 0; i < n; i++) {
                tw__span_data *s = rnd_span(false);
                CU_ASSERT_PTR_NOT_NULL_FATAL(s);
                if (s->span_id == 0)
                    s->span_id = 1;
                s->start_us = (int64_t)(rnd() % 4000000000000000u);
                s->duration_us = (int64_t)(rnd() % 1000000000u);
                for (size_t k = 0; k < s->n_logs; k++)
                    s->logs[k].timestamp_us = s->start_us + (int64_t)k;
                CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, s, &spans));
                tw__span_data_unref(s);
            }
            CU_ASSERT_FATAL(tw__jaeger_batch_struct(enc, process.data, process.len, spans.data,
                                                    spans.len, n, -1, NULL, &batch));
            decoded whole;
            decode_with(false, batch.data, batch.len, all_protocols[p], false, &whole);
            whole_ok += whole.result == TW__THRIFT_OK && whole.n_spans == n;
            decoded_free(&whole);
            CU_ASSERT(decoders_agree(batch.data, batch.len, all_protocols[p], false));
            checked++;
            for (int m = 0; m < 200; m++) {
                size_t at = (size_t)(rnd() % batch.len);
                uint8_t old = batch.data[at];
                batch.data[at] =
                    rnd() % 4 ? interesting[rnd() % sizeof interesting] : (uint8_t)rnd();
                size_t len = rnd() % 8 ? batch.len : at + (size_t)(rnd() % (batch.len - at));
                if (!decoders_agree(batch.data, len, all_protocols[p], false)) {
                    CU_FAIL("the fast path for tags and the general decoder differ");
                    fprintf(stderr, "protocol %s, byte %zu: %02x -> %02x, %zu of %zu bytes\n",
                            protocol_names[p], at, old, batch.data[at], len, batch.len);
                }
                checked++;
                if (rnd() % 2)
                    batch.data[at] = old;
            }
            tw__buf_free(&spans);
            tw__buf_free(&batch);
        }
        tw__buf_free(&process);
    }
    CU_ASSERT_EQUAL(whole_ok, 2 * 60);
    CU_ASSERT(checked > 20000);
}

/* A tag key ends at its first NUL (keys are C strings in the model): keys
 * of 0..20 bytes with a NUL at each place, and none, in both protocols. */
static void test_tag_keys_end_at_their_first_nul(void)
{
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__jaeger_encoder *enc = encoder_by_protocol[p];
        tw__buf process = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_process(enc, &process_bare, &process));
        for (size_t len = 0; len <= 20; len++) {
            for (size_t nul = 0; nul <= len; nul++) {
                char key[24];
                memset(key, 'k', sizeof key);
                if (nul < len)
                    key[nul] = '\0';
                tw__span_data *s = tw__span_data_new();
                CU_ASSERT_PTR_NOT_NULL_FATAL(s);
                s->trace_id_low = 1, s->span_id = 2, s->start_us = 1700000000000000;
                tw__tag *t = tw__span_data_push_tag(s);
                tw_value v = {.type = TW_VALUE_INT64, .as.i64 = 7};
                CU_ASSERT_FATAL(tw__tag_set_n(&s->arena, t, key, len, &v, SIZE_MAX, NULL));
                s->n_tags++;
                tw__buf spans = {0}, batch = {0};
                CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, s, &spans));
                CU_ASSERT_FATAL(tw__jaeger_batch_struct(enc, process.data, process.len, spans.data,
                                                        spans.len, 1, -1, NULL, &batch));
                decoded d;
                decode_with(false, batch.data, batch.len, all_protocols[p], false, &d);
                CU_ASSERT_EQUAL(d.result, TW__THRIFT_OK);
                CU_ASSERT_EQUAL_FATAL(d.n_spans, 1);
                CU_ASSERT_EQUAL_FATAL(d.spans[0]->n_tags, 1);
                CU_ASSERT_EQUAL(d.spans[0]->tags[0].key_len, nul);
                CU_ASSERT_EQUAL(strlen(d.spans[0]->tags[0].key), nul);
                CU_ASSERT(memcmp(d.spans[0]->tags[0].key, key, nul) == 0);
                decoded_free(&d);
                tw__buf_free(&spans);
                tw__buf_free(&batch);
                tw__span_data_unref(s);
            }
        }
        tw__buf_free(&process);
    }
}

static void test_empty_batch_and_negative_seq_id_decode(void)
{
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__jaeger_encoder *enc = encoder_by_protocol[p];
        tw__buf process = {0}, msg = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_process(enc, &process_bare, &process));
        /* spans may be NULL when there are none; seq_no < 0 and NULL stats
         * leave the optional fields out. */
        CU_ASSERT_FATAL(tw__jaeger_emit_batch_message(enc, process.data, process.len, NULL, 0, 0,
                                                      -1, NULL, -1, &msg));
        int32_t got_seq_id = 0;
        TwireJaegerAgentEmitBatchArgs *args =
            decode_emit_batch(all_protocols[p], &msg, &got_seq_id);
        CU_ASSERT_PTR_NOT_NULL_FATAL(args);
        CU_ASSERT_EQUAL(got_seq_id, -1);
        CU_ASSERT_EQUAL(args->batch->spans->len, 0);
        CU_ASSERT_FALSE(args->batch->__isset_seqNo);
        check_stats(args->batch, NULL);
        check_generated_writer_agrees(all_protocols[p], args, &got_seq_id, &msg);
        g_object_unref(args);
        tw__buf_free(&process);
        tw__buf_free(&msg);
    }
}

static void test_bare_batch_struct_decodes_with_and_without_optionals(void)
{
    tw__span_data *const spans[] = {span_typical, span_every_field};
    const tw__client_stats stats = {0, 1, 2};
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__jaeger_encoder *enc = encoder_by_protocol[p];
        tw__buf process = {0}, span_bytes = {0}, out = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_process(enc, &process_tagged, &process));
        CU_ASSERT_FATAL(encode_spans(enc, spans, 2, &span_bytes));
        for (int with_optionals = 0; with_optionals <= 1; with_optionals++) {
            int64_t seq_no = with_optionals ? INT64_MAX : -1;
            const tw__client_stats *maybe_stats = with_optionals ? &stats : NULL;
            CU_ASSERT_FATAL(tw__jaeger_batch_struct(enc, process.data, process.len, span_bytes.data,
                                                    span_bytes.len, 2, seq_no, maybe_stats, &out));
            TwireJaegerBatch *got = g_object_new(TWIRE_JAEGER_TYPE_BATCH, NULL);
            CU_ASSERT_FATAL(decode_struct(all_protocols[p], out.data, out.len, got));
            check_process(got->process, &process_tagged);
            CU_ASSERT_EQUAL_FATAL(got->spans->len, 2);
            check_span(g_ptr_array_index(got->spans, 0), span_typical);
            check_span(g_ptr_array_index(got->spans, 1), span_every_field);
            CU_ASSERT_EQUAL(got->__isset_seqNo, with_optionals);
            if (with_optionals)
                CU_ASSERT_EQUAL(got->seqNo, INT64_MAX);
            check_stats(got, maybe_stats);
            check_generated_writer_agrees(all_protocols[p], got, NULL, &out);
            g_object_unref(got);
        }
        tw__buf_free(&process);
        tw__buf_free(&span_bytes);
        tw__buf_free(&out);
    }
}

/* Sizes one emitBatch message and builds it; false when they disagree. */
static bool size_matches(tw__jaeger_encoder *enc, const tw__buf *process, const tw__buf *spans,
                         size_t span_len, size_t n_spans, int64_t seq_no,
                         const tw__client_stats *stats, tw__buf *msg)
{
    size_t spans_len = n_spans * span_len;
    size_t predicted =
        tw__jaeger_emit_batch_size(enc, process->len, n_spans, spans_len, seq_no, stats);
    bool ok =
        tw__jaeger_emit_batch_message(enc, process->data, process->len, spans->data, spans_len,
                                      n_spans, seq_no, stats, tw__jaeger_msg_seq_id(seq_no), msg);
    CU_ASSERT_FATAL(ok);
    if (predicted == msg->len)
        return true;
    fprintf(stderr, "\n    n_spans %zu seq_no %lld stats %s: predicted %zu, real %zu", n_spans,
            (long long)seq_no, stats ? "set" : "none", predicted, msg->len);
    return false;
}

/* Every input that changes a varint width in the envelope: the list header
 * (compact: 1 byte up to 14 elements, then 0xfc plus a varint), seqNo and
 * the message seq id (zigzag and plain varints), and the stats counters.
 * The span count varies fastest, so most calls reuse the encoder's cached
 * envelope; the two sweeps change only the stats (some cases differ in one
 * counter), then only the seqNo, between runs, to check invalidation. */
static void test_emit_batch_size_is_exact(void)
{
    static const size_t span_counts[] = {0, 1, 2, 14, 15, 16, 127, 128, 200, 16383, 16384};
    const size_t n_counts = sizeof(span_counts) / sizeof(span_counts[0]);
    static const int64_t seq_nos[] = {-1,
                                      0,
                                      1,
                                      63,
                                      64,
                                      127,
                                      128,
                                      8191,
                                      8192,
                                      INT32_MAX,
                                      (int64_t)INT32_MAX + 1,
                                      (int64_t)1 << 42,
                                      INT64_MAX};
    const size_t n_seqs = sizeof(seq_nos) / sizeof(seq_nos[0]);
    static const tw__client_stats stats_cases[] = {{0, 0, 0},           {1, 2, 3},
                                                   {1, 2, 300},         {1, 200, 300},
                                                   {64, 8192, 1 << 20}, {INT64_MAX, INT64_MIN, -1}};
    const size_t n_stats = sizeof(stats_cases) / sizeof(stats_cases[0]);
    size_t checked = 0, wrong = 0;
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__jaeger_encoder *enc = encoder_by_protocol[p];
        tw__buf process = {0}, one_span = {0}, span_bytes = {0}, msg = {0};
        CU_ASSERT_FATAL(tw__jaeger_encode_process(enc, &process_tagged, &process));
        CU_ASSERT_FATAL(tw__jaeger_encode_span(enc, span_root_64bit, &one_span));
        /* n spans are the first n encodings of this run of identical ones. */
        for (size_t i = 0; i < span_counts[n_counts - 1]; i++)
            CU_ASSERT_FATAL(tw__buf_append(&span_bytes, one_span.data, one_span.len));
        for (int sweep = 0; sweep < 2; sweep++) {
            size_t n_outer = sweep == 0 ? n_seqs : n_stats + 1;
            size_t n_middle = sweep == 0 ? n_stats + 1 : n_seqs;
            for (size_t o = 0; o < n_outer; o++) {
                for (size_t m = 0; m < n_middle; m++) {
                    size_t s = sweep == 0 ? o : m, k = sweep == 0 ? m : o;
                    const tw__client_stats *stats = k < n_stats ? &stats_cases[k] : NULL;
                    for (size_t c = 0; c < n_counts; c++) {
                        checked++;
                        if (!size_matches(enc, &process, &span_bytes, one_span.len, span_counts[c],
                                          seq_nos[s], stats, &msg))
                            wrong++;
                    }
                }
            }
        }
        /* Decode one message per count: the list header really holds it.
         * (Not the huge counts: ThriftMemoryBuffer's read moves the rest of
         * the buffer on every call, quadratic in the message size.) */
        for (size_t c = 0; c < n_counts && span_counts[c] <= 200; c++) {
            size_t spans_len = span_counts[c] * one_span.len;
            CU_ASSERT_FATAL(tw__jaeger_emit_batch_message(enc, process.data, process.len,
                                                          span_bytes.data, spans_len,
                                                          span_counts[c], 5, NULL, 5, &msg));
            int32_t seq_id = 0;
            TwireJaegerAgentEmitBatchArgs *args =
                decode_emit_batch(all_protocols[p], &msg, &seq_id);
            CU_ASSERT_PTR_NOT_NULL_FATAL(args);
            CU_ASSERT_EQUAL(args->batch->spans->len, span_counts[c]);
            g_object_unref(args);
        }
        tw__buf_free(&process);
        tw__buf_free(&one_span);
        tw__buf_free(&span_bytes);
        tw__buf_free(&msg);
    }
    CU_ASSERT(checked > 1000);
    CU_ASSERT_EQUAL(wrong, 0);
}

static void test_msg_seq_id_is_seq_no_modulo_2_31(void)
{
    CU_ASSERT_EQUAL(tw__jaeger_msg_seq_id(-1), 0);
    CU_ASSERT_EQUAL(tw__jaeger_msg_seq_id(INT64_MIN), 0);
    CU_ASSERT_EQUAL(tw__jaeger_msg_seq_id(0), 0);
    CU_ASSERT_EQUAL(tw__jaeger_msg_seq_id(77), 77);
    CU_ASSERT_EQUAL(tw__jaeger_msg_seq_id(INT32_MAX), INT32_MAX);
    CU_ASSERT_EQUAL(tw__jaeger_msg_seq_id((int64_t)INT32_MAX + 1), 0);
    CU_ASSERT_EQUAL(tw__jaeger_msg_seq_id(INT64_MAX), INT32_MAX);
}

/* A failure deep inside a span (a tag of a log) must leave the output
 * untouched and the encoder able to produce the same bytes as a fresh one.
 * (Had the encoder not ended the structs left open, the compact protocol's
 * stack links would leak: valgrind or ASan with G_SLICE=always-malloc see
 * it when the suite frees the encoders.) */
static void test_unknown_tag_type_fails_and_encoder_recovers(void)
{
    tw__span_data *bad = tw_test_span_every_field();
    CU_ASSERT_PTR_NOT_NULL_FATAL(bad);
    tw__tag *victims[] = {&bad->tags[bad->n_tags - 1], &bad->logs[2].fields[1]};
    for (size_t p = 0; p < N_PROTOCOLS; p++) {
        tw__jaeger_encoder *fresh = tw__jaeger_encoder_new(all_protocols[p]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(fresh);
        for (size_t v = 0; v < 2; v++) {
            tw_value_type saved = victims[v]->type;
            victims[v]->type = (tw_value_type)99;
            tw__buf out = {0}, want = {0};
            CU_ASSERT_FATAL(tw__buf_append(&out, "keep", 4));
            CU_ASSERT_FALSE(tw__jaeger_encode_span(encoder_by_protocol[p], bad, &out));
            CU_ASSERT_EQUAL(out.len, 4);
            CU_ASSERT(memcmp(out.data, "keep", 4) == 0);
            victims[v]->type = saved;

            tw__buf_reset(&out);
            CU_ASSERT_FATAL(tw__jaeger_encode_span(encoder_by_protocol[p], span_every_field, &out));
            CU_ASSERT_FATAL(tw__jaeger_encode_span(fresh, span_every_field, &want));
            CU_ASSERT_EQUAL_FATAL(out.len, want.len);
            CU_ASSERT(memcmp(out.data, want.data, want.len) == 0);
            tw__buf_free(&out);
            tw__buf_free(&want);
        }
        tw__jaeger_encoder_free(fresh);
    }
    tw__span_data_unref(bad);
}

/* Lengths beyond Thrift's i32 are refused before any byte is read, so the
 * fake lengths below never touch memory they do not own. */
static void test_lengths_beyond_thrift_i32_are_refused(void)
{
    tw__jaeger_encoder *enc = encoder_by_protocol[0];
    tw__span_data *huge = tw_test_span_root_64bit();
    CU_ASSERT_PTR_NOT_NULL_FATAL(huge);
    CU_ASSERT_FATAL(tw_test_add_tag(huge, "k", tw_test_str("v")));
    huge->tags[0].len = (size_t)INT32_MAX + 1;
    tw__buf out = {0};
    CU_ASSERT_FALSE(tw__jaeger_encode_span(enc, huge, &out));
    CU_ASSERT_EQUAL(out.len, 0);
    huge->tags[0].len = 1;
    huge->n_refs = (size_t)INT32_MAX + 1; /* refs is NULL: never read */
    CU_ASSERT_FALSE(tw__jaeger_encode_span(enc, huge, &out));
    huge->n_refs = 0;
    tw__span_data_unref(huge);

    const uint8_t tiny[1] = {0};
    const size_t too_long = (size_t)INT32_MAX + 1;
    CU_ASSERT_EQUAL(tw__jaeger_emit_batch_size(enc, 1, too_long, 1, 0, NULL), 0);
    CU_ASSERT_EQUAL(tw__jaeger_emit_batch_size(enc, too_long, 1, 1, 0, NULL), 0);
    CU_ASSERT_EQUAL(tw__jaeger_emit_batch_size(enc, INT32_MAX, 1, INT32_MAX, 0, NULL), 0);
    CU_ASSERT_FATAL(tw__buf_append(&out, "keep", 4));
    CU_ASSERT_FALSE(
        tw__jaeger_emit_batch_message(enc, tiny, 1, tiny, too_long, 1, 0, NULL, 0, &out));
    CU_ASSERT_FALSE(tw__jaeger_batch_struct(enc, tiny, 1, tiny, 1, too_long, 0, NULL, &out));
    CU_ASSERT_EQUAL(out.len, 4);
    CU_ASSERT(memcmp(out.data, "keep", 4) == 0);
    tw__buf_free(&out);
}

static void test_null_arguments_are_refused(void)
{
    tw__jaeger_encoder *enc = encoder_by_protocol[0];
    const uint8_t tiny[1] = {0};
    tw__buf out = {0};
    CU_ASSERT_FALSE(tw__jaeger_encode_span(NULL, span_typical, &out));
    CU_ASSERT_FALSE(tw__jaeger_encode_span(enc, NULL, &out));
    CU_ASSERT_FALSE(tw__jaeger_encode_span(enc, span_typical, NULL));
    CU_ASSERT_FALSE(tw__jaeger_encode_process(NULL, &process_bare, &out));
    CU_ASSERT_FALSE(tw__jaeger_encode_process(enc, NULL, &out));
    CU_ASSERT_FALSE(tw__jaeger_encode_process(enc, &process_bare, NULL));
    CU_ASSERT_EQUAL(tw__jaeger_emit_batch_size(NULL, 1, 0, 0, 0, NULL), 0);
    CU_ASSERT_FALSE(tw__jaeger_emit_batch_message(NULL, tiny, 1, NULL, 0, 0, 0, NULL, 0, &out));
    CU_ASSERT_FALSE(tw__jaeger_emit_batch_message(enc, NULL, 1, NULL, 0, 0, 0, NULL, 0, &out));
    CU_ASSERT_FALSE(tw__jaeger_emit_batch_message(enc, tiny, 1, NULL, 1, 1, 0, NULL, 0, &out));
    CU_ASSERT_FALSE(tw__jaeger_emit_batch_message(enc, tiny, 1, NULL, 0, 0, 0, NULL, 0, NULL));
    CU_ASSERT_FALSE(tw__jaeger_batch_struct(NULL, tiny, 1, NULL, 0, 0, 0, NULL, &out));
    CU_ASSERT_FALSE(tw__jaeger_batch_struct(enc, NULL, 1, NULL, 0, 0, 0, NULL, &out));
    CU_ASSERT_FALSE(tw__jaeger_batch_struct(enc, tiny, 1, NULL, 0, 0, 0, NULL, NULL));
    CU_ASSERT_EQUAL(out.len, 0);
    CU_ASSERT_PTR_NULL(tw__jaeger_encoder_new((tw__thrift_protocol)2));
    tw__jaeger_encoder_free(NULL);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/jaeger_thrift", suite_init, suite_cleanup);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_span_decodes_field_by_field_in_both_protocols);
    CU_ADD_TEST(suite, test_ids_with_top_bit_set_are_negative_i64_with_same_bits);
    CU_ADD_TEST(suite, test_empty_optional_lists_are_not_written);
    CU_ADD_TEST(suite, test_invalid_utf8_text_is_repaired);
    CU_ADD_TEST(suite, test_binary_text_lengths_and_bad_byte_positions);
    CU_ADD_TEST(suite, test_process_decodes_with_every_tag_type);
    CU_ADD_TEST(suite, test_encode_appends_to_existing_content);
    CU_ADD_TEST(suite, test_reused_encoder_repeats_its_bytes);
    CU_ADD_TEST(suite, test_emit_batch_message_matches_generated_code);
    CU_ADD_TEST(suite, test_standalone_span_matches_generated_writer);
    CU_ADD_TEST(suite, test_binary_spans_of_random_shapes_match_generated_writer);
    CU_ADD_TEST(suite, test_empty_batch_and_negative_seq_id_decode);
    CU_ADD_TEST(suite, test_tag_fast_path_agrees_with_general_decoder);
    CU_ADD_TEST(suite, test_tag_keys_end_at_their_first_nul);
    CU_ADD_TEST(suite, test_bare_batch_struct_decodes_with_and_without_optionals);
    CU_ADD_TEST(suite, test_emit_batch_size_is_exact);
    CU_ADD_TEST(suite, test_msg_seq_id_is_seq_no_modulo_2_31);
    CU_ADD_TEST(suite, test_unknown_tag_type_fails_and_encoder_recovers);
    CU_ADD_TEST(suite, test_lengths_beyond_thrift_i32_are_refused);
    CU_ADD_TEST(suite, test_null_arguments_are_refused);
}
