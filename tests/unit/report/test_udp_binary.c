/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_udp_binary.c: suite "report/udp_binary": the Jaeger
 * agent UDP reporter in its Thrift binary form (tw_reporter_jaeger_udp_binary_new,
 * the agent's port 6832), end to end over a loopback socket. Every datagram
 * is decoded with the c_glib code generated from thrift/agent.thrift through
 * ThriftBinaryProtocol (and is no compact message); spans arrive field by
 * field; batches split exactly under the max packet size although binary
 * encodings are larger; a span too large for any packet is counted; the
 * default port is 6832 unless the options name an agent.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "jaeger_decode.h"
#include "report/report.h"
#include "tracewire/tracewire.h"
#include "udp_sink.h"

/* An Agent.emitBatch message in the binary protocol, decoded with the
 * generated structs; NULL when malformed. */
static TwireJaegerBatch *decode_binary(const uint8_t *data, size_t len)
{
    return tw_test_decode_emit_batch_binary(data, len);
}

static tw_tracer *binary_tracer(unsigned int port, size_t max_packet)
{
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_agent(ro, "127.0.0.1", port);
    tw_reporter_options_set_max_packet_size(ro, max_packet);
    tw_reporter_options_set_flush_interval_ms(ro, 60000);
    tw_reporter *r = tw_reporter_jaeger_udp_binary_new(ro, NULL);
    tw_reporter_options_free(ro);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(r), "jaeger-udp-binary");
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "binary-test");
    tw_tracer_options_add_tag_int64(opts, "shard", 3);
    tw_tracer_options_set_reporter(opts, r);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    return t;
}

static const TwireJaegerTag *find_tag(GPtrArray *tags, const char *key)
{
    for (guint i = 0; tags && i < tags->len; i++) {
        const TwireJaegerTag *t = g_ptr_array_index(tags, i);
        if (strcmp(t->key, key) == 0)
            return t;
    }
    return NULL;
}

static void test_spans_arrive_field_by_field(void)
{
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    tw_tracer *t = binary_tracer(sink.port, 65000);
    tw_span *root = tw_span_start(t, "root", NULL);
    tw_span_set_tag_str(root, "s", "v");
    tw_span_set_tag_bool(root, "b", true);
    tw_span_set_tag_int64(root, "i", INT64_MIN);
    tw_span_set_tag_double(root, "d", -0.5);
    static const uint8_t bytes[3] = {0x00, 0xff, 0x7f};
    tw_span_set_tag_binary(root, "bin", bytes, sizeof bytes);
    tw_span_log_kv(root, "event", "x", NULL);
    tw_span_options *so = tw_span_options_new();
    tw_span_options_add_reference(so, TW_REF_FOLLOWS_FROM, tw_span_get_context(root));
    tw_span *child = tw_span_start(t, "child", so);
    tw_span_options_free(so);
    const tw_span_context *rc = tw_span_get_context(root);
    uint64_t trace_hi = tw_span_context_trace_id_high(rc);
    uint64_t trace_lo = tw_span_context_trace_id_low(rc);
    uint64_t root_id = tw_span_context_span_id(rc);
    tw_span_finish(child);
    tw_span_finish(root);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL_FATAL(udp_sink_collect(&sink, 1, 2000), 1);
    /* Binary (strict): version 0x8001, then the message type ONEWAY. */
    CU_ASSERT(sink.len[0] > 4 && sink.data[0][0] == 0x80 && sink.data[0][1] == 0x01 &&
              sink.data[0][3] == 4);
    CU_ASSERT_PTR_NULL(tw_test_decode_emit_batch(sink.data[0], sink.len[0])); /* not compact */
    CU_ASSERT_EQUAL(tw_reporter_counter(tw_tracer_reporter(t), TW_COUNTER_BYTES_SENT), sink.len[0]);
    TwireJaegerBatch *b = decode_binary(sink.data[0], sink.len[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(b->process->serviceName, "binary-test");
    const TwireJaegerTag *tag = find_tag(b->process->tags, "shard");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_LONG && tag->vLong == 3);
    CU_ASSERT(b->__isset_seqNo && b->__isset_stats);
    CU_ASSERT_EQUAL_FATAL(b->spans->len, 2);
    const TwireJaegerSpan *c = g_ptr_array_index(b->spans, 0);
    const TwireJaegerSpan *r = g_ptr_array_index(b->spans, 1);
    CU_ASSERT_STRING_EQUAL(c->operationName, "child");
    CU_ASSERT_EQUAL((uint64_t)c->parentSpanId, root_id);
    CU_ASSERT_EQUAL_FATAL(c->references->len, 1);
    const TwireJaegerSpanRef *ref = g_ptr_array_index(c->references, 0);
    CU_ASSERT_EQUAL(ref->refType, TWIRE_JAEGER_SPAN_REF_TYPE_FOLLOWS_FROM);
    CU_ASSERT_EQUAL((uint64_t)ref->spanId, root_id);
    CU_ASSERT_EQUAL((uint64_t)r->traceIdHigh, trace_hi);
    CU_ASSERT_EQUAL((uint64_t)r->traceIdLow, trace_lo);
    CU_ASSERT_EQUAL((uint64_t)r->spanId, root_id);
    CU_ASSERT_EQUAL(r->flags, 1);
    tag = find_tag(r->tags, "s");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_STRING && strcmp(tag->vStr, "v") == 0);
    tag = find_tag(r->tags, "b");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_BOOL && tag->vBool);
    tag = find_tag(r->tags, "i");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_LONG && tag->vLong == INT64_MIN);
    tag = find_tag(r->tags, "d");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_DOUBLE && tag->vDouble == -0.5);
    tag = find_tag(r->tags, "bin");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_BINARY && tag->vBinary->len == 3 &&
              memcmp(tag->vBinary->data, bytes, 3) == 0);
    CU_ASSERT_EQUAL_FATAL(r->logs->len, 1);
    const TwireJaegerLog *log = g_ptr_array_index(r->logs, 0);
    tag = find_tag(log->fields, "event");
    CU_ASSERT(tag && strcmp(tag->vStr, "x") == 0);
    g_object_unref(b);
    tw_tracer_free(t);
    udp_sink_close(&sink);
}

static void test_batches_split_exactly_under_max_packet_size(void)
{
    const size_t max_packet = 1000;
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    tw_tracer *t = binary_tracer(sink.port, max_packet);
    for (int i = 0; i < 300; i++) {
        tw_span *s = tw_span_start(t, "many", NULL);
        tw_span_set_tag_int64(s, "i", i);
        tw_span_finish(s);
    }
    tw_tracer_close(t);
    tw_reporter *r = tw_tracer_reporter(t);
    uint64_t batches = tw_reporter_counter(r, TW_COUNTER_BATCHES_SENT);
    CU_ASSERT(batches > 1);
    udp_sink_collect(&sink, batches, 2000);
    CU_ASSERT_EQUAL_FATAL(sink.n, batches);
    size_t total = 0, full = 0;
    int64_t last_seq_no = -1;
    for (size_t i = 0; i < sink.n; i++) {
        CU_ASSERT(sink.len[i] <= max_packet);
        full += sink.len[i] > max_packet - 150; /* filled to within one span */
        TwireJaegerBatch *b = decode_binary(sink.data[i], sink.len[i]);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        total += b->spans->len;
        if (last_seq_no >= 0)
            CU_ASSERT_EQUAL(b->seqNo, last_seq_no + 1);
        last_seq_no = b->seqNo;
        g_object_unref(b);
    }
    CU_ASSERT_EQUAL(total, 300);
    CU_ASSERT(full >= sink.n - 1);
    CU_ASSERT_EQUAL(tw_reporter_counter(r, TW_COUNTER_SPANS_SENT), 300);
    tw_tracer_free(t);
    udp_sink_close(&sink);
}

static void test_oversized_span_is_dropped_and_counted(void)
{
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    tw_tracer *t = binary_tracer(sink.port, 1000);
    char big[1500];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tw_span *s = tw_span_start(t, "huge", NULL);
    tw_span_set_tag_str(s, "payload", big);
    tw_span_finish(s);
    tw_span_finish(tw_span_start(t, "small", NULL));
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    tw_reporter *r = tw_tracer_reporter(t);
    CU_ASSERT_EQUAL(tw_reporter_counter(r, TW_COUNTER_DROPPED_TOO_LARGE), 1);
    CU_ASSERT_EQUAL(tw_reporter_counter(r, TW_COUNTER_SPANS_SENT), 1);
    tw_tracer_free(t);
    udp_sink_close(&sink);
}

/* ---- the default port --------------------------------------------------------------------- */

static char resolved_service[16]; /* what the last resolution asked for */

static int recording_resolver(const char *host, const char *service, const struct addrinfo *hints,
                              struct addrinfo **res)
{
    (void)host;
    (void)hints;
    (void)res;
    snprintf(resolved_service, sizeof resolved_service, "%s", service);
    return EAI_NONAME; /* no socket is needed */
}

/* The port a reporter built by @make from @opts asks the resolver for. */
static const char *port_asked(tw_reporter *(*make)(const tw_reporter_options *, tw_error **),
                              const tw_reporter_options *opts)
{
    static tw__process empty;
    resolved_service[0] = '\0';
    tw_reporter *r = make(opts, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL(tw__reporter_start(r, &empty, NULL), TW_OK);
    tw_reporter_free(r);
    return resolved_service;
}

static void test_default_port_is_6832_unless_an_agent_is_set(void)
{
    tw__udp_sender_set_resolver(recording_resolver);
    tw_reporter_options *ro = tw_reporter_options_new();
    CU_ASSERT_STRING_EQUAL(port_asked(tw_reporter_jaeger_udp_binary_new, NULL), "6832");
    CU_ASSERT_STRING_EQUAL(port_asked(tw_reporter_jaeger_udp_binary_new, ro), "6832");
    CU_ASSERT_STRING_EQUAL(port_asked(tw_reporter_jaeger_udp_new, ro), "6831");
    tw_reporter_options_set_agent(ro, "agent.example", 7000);
    CU_ASSERT_STRING_EQUAL(port_asked(tw_reporter_jaeger_udp_binary_new, ro), "7000");
    tw_reporter_options_set_agent(ro, "agent.example", 6831);
    CU_ASSERT_STRING_EQUAL(port_asked(tw_reporter_jaeger_udp_binary_new, ro), "6831");
    tw_reporter_options_free(ro);
    tw__udp_sender_set_resolver(NULL);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("report/udp_binary", NULL, NULL);
    CU_add_test(suite, "spans_arrive_field_by_field", test_spans_arrive_field_by_field);
    CU_add_test(suite, "batches_split_exactly_under_max_packet_size",
                test_batches_split_exactly_under_max_packet_size);
    CU_add_test(suite, "oversized_span_is_dropped_and_counted",
                test_oversized_span_is_dropped_and_counted);
    CU_add_test(suite, "default_port_is_6832_unless_an_agent_is_set",
                test_default_port_is_6832_unless_an_agent_is_set);
}
