/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_udp_reporter.c: suite "report/udp": the Jaeger agent
 * UDP reporter end to end over real loopback sockets (IPv4, IPv6, a host
 * name), decoding every datagram with the c_glib code generated from
 * thrift/agent.thrift: spans arrive field by field, datagrams never exceed
 * the max packet size while batches are split, a span too large for any
 * packet is dropped and counted, seqNo grows, ClientStats are carried, and
 * an absent agent is counted, never fatal. (tests/interop/ decodes the same
 * traffic with an independent decoder built from Jaeger's own IDL.)
 */
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "jaeger_decode.h"
#include "report/report.h"
#include "tracewire/tracewire.h"
#include "udp_sink.h"

static TwireJaegerBatch *decode_datagram(const uint8_t *data, size_t len)
{
    return tw_test_decode_emit_batch(data, len);
}

/* A UDP tracer flushing every @flush_ms (600000: only when asked). */
static tw_tracer *udp_tracer_every(const char *host, unsigned int port, size_t max_packet,
                                   bool is_128bit, unsigned int flush_ms)
{
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_agent(ro, host, port);
    tw_reporter_options_set_max_packet_size(ro, max_packet);
    tw_reporter_options_set_flush_interval_ms(ro, flush_ms);
    tw_reporter *r = tw_reporter_jaeger_udp_new(ro, NULL);
    tw_reporter_options_free(ro);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "udp-test");
    tw_tracer_options_add_tag_str(opts, "custom", "tag");
    tw_tracer_options_set_trace_id_128bit(opts, is_128bit);
    tw_tracer_options_set_reporter(opts, r);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    return t;
}

/* Emits only when a test flushes or closes: a timed flush between two
 * finishes would split what a test expects in one datagram (seen under
 * valgrind with a 20 ms interval). */
static tw_tracer *udp_tracer(const char *host, unsigned int port, size_t max_packet, bool is_128bit)
{
    return udp_tracer_every(host, port, max_packet, is_128bit, 60000);
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

static size_t count_spans(udp_sink *sink, size_t max_len)
{
    size_t total = 0;
    for (size_t i = 0; i < sink->n; i++) {
        CU_ASSERT(sink->len[i] <= max_len);
        TwireJaegerBatch *b = decode_datagram(sink->data[i], sink->len[i]);
        CU_ASSERT_PTR_NOT_NULL(b);
        if (b) {
            /* The benchmark's fast counter agrees with the real decoder. */
            CU_ASSERT_EQUAL(udp_sink_count_spans(sink->data[i], sink->len[i]), (long)b->spans->len);
            total += b->spans->len;
            g_object_unref(b);
        }
    }
    return total;
}

static void check_round_trip(const char *host, bool is_128bit)
{
    udp_sink sink;
    bool is_name = strcmp(host, "localhost") == 0;
    /* "localhost" may resolve to ::1 or 127.0.0.1: listen on both. */
    if (!udp_sink_open(&sink, is_name ? "dual" : host))
        CU_ASSERT_FATAL(is_name && udp_sink_open(&sink, "127.0.0.1"));
    /* Flushed only when asked: both spans go in one datagram however slowly
     * the test runs (valgrind, a loaded machine). */
    tw_tracer *t = udp_tracer_every(host, sink.port, 65000, is_128bit, 600000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw_span *root = tw_span_start(t, "root", NULL);
    tw_span_set_tag_str(root, "s", "v");
    tw_span_set_tag_bool(root, "b", true);
    tw_span_set_tag_int64(root, "i", -7);
    tw_span_set_tag_double(root, "d", 0.25);
    static const uint8_t bytes[2] = {0xff, 0x00};
    tw_span_set_tag_binary(root, "bin", bytes, 2);
    tw_span_log_kv(root, "event", "x", NULL);
    tw_span_options *so = tw_span_options_new();
    tw_span_options_add_reference(so, TW_REF_FOLLOWS_FROM, tw_span_get_context(root));
    tw_span *child = tw_span_start(t, "child", so);
    tw_span_options_free(so);
    const tw_span_context *rc = tw_span_get_context(root);
    uint64_t trace_hi = tw_span_context_trace_id_high(rc),
             trace_lo = tw_span_context_trace_id_low(rc);
    uint64_t root_id = tw_span_context_span_id(rc);
    uint64_t child_id = tw_span_context_span_id(tw_span_get_context(child));
    tw_span_finish_at(child, 0 + 1); /* before start: duration 0 */
    tw_span_finish(root);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT(udp_sink_collect(&sink, 1, 2000) >= 1);
    TwireJaegerBatch *b = decode_datagram(sink.data[0], sink.len[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(b->process->serviceName, "udp-test");
    CU_ASSERT_EQUAL(udp_sink_count_spans(sink.data[0], sink.len[0]), 2);
    CU_ASSERT_EQUAL(udp_sink_count_spans(sink.data[0], 30), -1) /* cut in the process */;
    CU_ASSERT_PTR_NOT_NULL(find_tag(b->process->tags, "jaeger.version"));
    CU_ASSERT_PTR_NOT_NULL(find_tag(b->process->tags, "client-uuid"));
    const TwireJaegerTag *custom = find_tag(b->process->tags, "custom");
    CU_ASSERT(custom && strcmp(custom->vStr, "tag") == 0);
    CU_ASSERT(b->__isset_seqNo);
    CU_ASSERT(b->__isset_stats);
    CU_ASSERT_EQUAL_FATAL(b->spans->len, 2);
    const TwireJaegerSpan *c = g_ptr_array_index(b->spans, 0);
    const TwireJaegerSpan *r = g_ptr_array_index(b->spans, 1);
    CU_ASSERT_STRING_EQUAL(c->operationName, "child");
    CU_ASSERT_EQUAL((uint64_t)c->spanId, child_id);
    CU_ASSERT_EQUAL((uint64_t)c->parentSpanId, root_id);
    CU_ASSERT_EQUAL(c->duration, 0);
    CU_ASSERT_EQUAL_FATAL(c->references->len, 1);
    const TwireJaegerSpanRef *ref = g_ptr_array_index(c->references, 0);
    CU_ASSERT_EQUAL(ref->refType, TWIRE_JAEGER_SPAN_REF_TYPE_FOLLOWS_FROM);
    CU_ASSERT_EQUAL((uint64_t)ref->spanId, root_id);
    CU_ASSERT_EQUAL((uint64_t)r->traceIdLow, trace_lo);
    CU_ASSERT_EQUAL((uint64_t)r->traceIdHigh, trace_hi);
    CU_ASSERT_EQUAL(r->flags, 1);
    CU_ASSERT_EQUAL(r->parentSpanId, 0);
    CU_ASSERT(r->startTime > 1600000000000000LL);
    const TwireJaegerTag *tag = find_tag(r->tags, "s");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_STRING && strcmp(tag->vStr, "v") == 0);
    tag = find_tag(r->tags, "b");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_BOOL && tag->vBool);
    tag = find_tag(r->tags, "i");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_LONG && tag->vLong == -7);
    tag = find_tag(r->tags, "d");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_DOUBLE && tag->vDouble == 0.25);
    tag = find_tag(r->tags, "bin");
    CU_ASSERT(tag && tag->vType == TWIRE_JAEGER_TAG_TYPE_BINARY && tag->vBinary->len == 2 &&
              tag->vBinary->data[0] == 0xff);
    tag = find_tag(r->tags, "sampler.type");
    CU_ASSERT(tag && strcmp(tag->vStr, "const") == 0);
    CU_ASSERT_EQUAL_FATAL(r->logs->len, 1);
    const TwireJaegerLog *log = g_ptr_array_index(r->logs, 0);
    CU_ASSERT(log->timestamp > 1600000000000000LL);
    tag = find_tag(log->fields, "event");
    CU_ASSERT(tag && strcmp(tag->vStr, "x") == 0);
    g_object_unref(b);
    tw_tracer_free(t);
    udp_sink_close(&sink);
}

static void test_spans_arrive_field_by_field_ipv4(void)
{
    check_round_trip("127.0.0.1", true);
}

static void test_spans_arrive_over_ipv6(void)
{
    udp_sink probe;
    if (!udp_sink_open(&probe, "::1")) {
        fprintf(stderr, "(no IPv6 loopback here; test skipped)\n");
        return;
    }
    udp_sink_close(&probe);
    check_round_trip("::1", false);
}

/* JAEGER_AGENT_HOST=::1 and =[::1]: a tracer from the environment
 * delivers to an agent on the IPv6 loopback either way. */
static void test_env_ipv6_agent_host_delivers(void)
{
    static const char *const hosts[] = {"::1", "[::1]"};
    for (size_t i = 0; i < 2; i++) {
        udp_sink sink;
        if (!udp_sink_open(&sink, "::1")) {
            fprintf(stderr, "(no IPv6 loopback here; test skipped)\n");
            return;
        }
        char port[16];
        snprintf(port, sizeof port, "%u", sink.port);
        setenv("JAEGER_AGENT_HOST", hosts[i], 1);
        setenv("JAEGER_AGENT_PORT", port, 1);
        setenv("JAEGER_SAMPLER_TYPE", "const", 1);
        setenv("JAEGER_SAMPLER_PARAM", "1", 1);
        tw_error *err = NULL;
        tw_tracer *t = tw_tracer_new_from_env("ipv6-env", &err);
        if (!t)
            fprintf(stderr, "JAEGER_AGENT_HOST=%s: %s\n", hosts[i], tw_error_message(err));
        tw_error_free(err);
        unsetenv("JAEGER_AGENT_HOST");
        unsetenv("JAEGER_AGENT_PORT");
        unsetenv("JAEGER_SAMPLER_TYPE");
        unsetenv("JAEGER_SAMPLER_PARAM");
        CU_ASSERT_PTR_NOT_NULL(t);
        if (t) {
            tw_span_finish(tw_span_start(t, "over-ipv6", NULL));
            tw_tracer_close(t);
            CU_ASSERT_EQUAL(udp_sink_collect(&sink, 1, 2000), 1);
            CU_ASSERT(sink.n == 1 && udp_sink_count_spans(sink.data[0], sink.len[0]) == 1);
            tw_tracer_free(t);
        }
        udp_sink_close(&sink);
    }
}

static void test_host_name_is_resolved(void)
{
    check_round_trip("localhost", true);
}

static void test_batches_split_under_max_packet_size(void)
{
    const size_t max_packet = 1000;
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    tw_tracer *t = udp_tracer("127.0.0.1", sink.port, max_packet, true);
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
    CU_ASSERT_EQUAL(sink.n, batches);
    CU_ASSERT_EQUAL(count_spans(&sink, max_packet), 300);
    CU_ASSERT_EQUAL(tw_reporter_counter(r, TW_COUNTER_SPANS_SENT), 300);
    /* Packets are filled: all but the last are within one span of the cap. */
    size_t full = 0;
    for (size_t i = 0; i < sink.n; i++)
        full += sink.len[i] > max_packet - 120;
    CU_ASSERT(full >= sink.n - 1);
    /* seqNo increments per datagram. */
    TwireJaegerBatch *first = decode_datagram(sink.data[0], sink.len[0]);
    TwireJaegerBatch *second = decode_datagram(sink.data[1], sink.len[1]);
    CU_ASSERT_EQUAL(second->seqNo, first->seqNo + 1);
    g_object_unref(first);
    g_object_unref(second);
    tw_tracer_free(t);
    udp_sink_close(&sink);
}

static void test_oversized_span_is_dropped_and_counted(void)
{
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    tw_tracer *t = udp_tracer("127.0.0.1", sink.port, 1000, true);
    char big[2000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    tw_span *s = tw_span_start(t, "huge", NULL);
    tw_span_set_tag_str(s, "payload", big); /* under the 4096 value cap, over the packet */
    tw_span_finish(s);
    tw_span_finish(tw_span_start(t, "small", NULL));
    tw_tracer_flush(t, 5000);
    tw_reporter *r = tw_tracer_reporter(t);
    CU_ASSERT_EQUAL(tw_reporter_counter(r, TW_COUNTER_DROPPED_TOO_LARGE), 1);
    CU_ASSERT_EQUAL(tw_reporter_counter(r, TW_COUNTER_SPANS_SENT), 1);
    /* The next batch reports the drop in ClientStats. */
    tw_span_finish(tw_span_start(t, "after", NULL));
    tw_tracer_flush(t, 5000);
    udp_sink_collect(&sink, 2, 2000);
    CU_ASSERT_EQUAL_FATAL(sink.n, 2);
    TwireJaegerBatch *b = decode_datagram(sink.data[1], sink.len[1]);
    CU_ASSERT_EQUAL(b->stats->tooLargeDroppedSpans, 1);
    CU_ASSERT_EQUAL(b->stats->fullQueueDroppedSpans, 0);
    g_object_unref(b);
    tw_tracer_free(t);
    udp_sink_close(&sink);
}

static void test_absent_agent_is_counted_not_fatal(void)
{
    /* Bind and close to get a port with (almost surely) no listener. */
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    unsigned int port = sink.port;
    udp_sink_close(&sink);
    tw_tracer *t = udp_tracer("127.0.0.1", port, 65000, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int round = 0; round < 3; round++) {
        tw_span_finish(tw_span_start(t, "lost", NULL));
        tw_tracer_flush(t, 5000);
    }
    tw_reporter *r = tw_tracer_reporter(t);
    /* The first datagram leaves before the ICMP error comes back; later
     * sends see ECONNREFUSED. Every span is accounted for either way. */
    CU_ASSERT(tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT) >= 1);
    CU_ASSERT_EQUAL(tw_reporter_counter(r, TW_COUNTER_SPANS_SENT) +
                        tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT),
                    3);
    tw_tracer_free(t);
}

/* ---- the first run is not silent ------------------------------------------------------------ */

static pthread_mutex_t said_lock = PTHREAD_MUTEX_INITIALIZER;
static char said[16384];

static void keep_said(tw_log_level level, const char *message, void *user_data)
{
    (void)user_data;
    if (level < TW_LOG_WARN)
        return;
    pthread_mutex_lock(&said_lock); /* the reporter thread logs too */
    size_t len = strlen(said);
    snprintf(said + len, sizeof said - len, "%s\n", message);
    pthread_mutex_unlock(&said_lock);
}

static void test_losses_are_said_by_the_reporter_thread(void)
{
    said[0] = '\0';
    tw_set_logger(keep_said, NULL, TW_LOG_DEBUG);
    /* No agent: the transport says why, the reporter how many. */
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    unsigned int port = sink.port;
    udp_sink_close(&sink);
    tw_tracer *t = udp_tracer("127.0.0.1", port, 65000, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    for (int round = 0; round < 3; round++) {
        tw_span_finish(tw_span_start(t, "lost", NULL));
        tw_tracer_flush(t, 5000);
    }
    tw_tracer_free(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "spans are being dropped (nothing listens there"));
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "spans could not be sent"));

    /* A full queue: counted by the application thread, said by the reporter's. */
    said[0] = '\0';
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_agent(ro, "127.0.0.1", port);
    tw_reporter_options_set_max_queue_size(ro, 1);
    tw_reporter_options_set_flush_interval_ms(ro, 60000);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "svc");
    tw_tracer_options_set_reporter(opts, tw_reporter_jaeger_udp_new(ro, NULL));
    tw_reporter_options_free(ro);
    t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    for (int i = 0; i < 50; i++)
        tw_span_finish(tw_span_start(t, "burst", NULL));
    uint64_t full = tw_reporter_counter(tw_tracer_reporter(t), TW_COUNTER_DROPPED_QUEUE_FULL);
    CU_ASSERT(full > 0);
    tw_tracer_close(t); /* the reporter thread speaks at close at the latest */
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "the queue was full"));
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "at its limit of 1 spans"));
    tw_tracer_free(t);

    /* A span too large for one datagram. */
    said[0] = '\0';
    t = udp_tracer("127.0.0.1", port, 512, true);
    tw_span *s = tw_span_start(t, "huge", NULL);
    char value[2000];
    memset(value, 'x', sizeof value - 1);
    value[sizeof value - 1] = '\0';
    for (int i = 0; i < 8; i++)
        tw_span_set_tag_str(s, "k", value); /* cut to 4096 bytes each: too large */
    tw_span_finish(s);
    tw_tracer_close(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "spans too large for one UDP packet were dropped"));
    tw_tracer_free(t);
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
}

/* The name does not resolve: said at once, as a resolver answers NXDOMAIN
 * (the system's resolver would make the test wait on a DNS server: a lost
 * query costs it 5 s, the flush's whole bound). */
static int no_such_host(const char *host, const char *service, const struct addrinfo *hints,
                        struct addrinfo **res)
{
    (void)host, (void)service, (void)hints, (void)res;
    return EAI_NONAME;
}

static void test_unresolvable_host_is_not_fatal(void)
{
    tw__udp_sender_set_resolver(no_such_host);
    tw_tracer *t = udp_tracer("no-such-host.invalid", 6831, 65000, true);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw_span_finish(tw_span_start(t, "nowhere", NULL));
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    tw_reporter *r = tw_tracer_reporter(t);
    CU_ASSERT_EQUAL(tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT), 1);
    CU_ASSERT(tw_reporter_counter(r, TW_COUNTER_RESOLVE_FAILURES) >= 1);
    tw_tracer_free(t);
    tw__udp_sender_set_resolver(NULL);
}

/* ---- an agent that moves ------------------------------------------------------------------ */

static char moving_agent_port[8]; /* where "agent.test" resolves now */

static int moving_resolver(const char *host, const char *service, const struct addrinfo *hints,
                           struct addrinfo **res)
{
    (void)service;
    if (strcmp(host, "agent.test") != 0)
        return EAI_NONAME;
    return getaddrinfo("127.0.0.1", moving_agent_port, hints, res);
}

static void test_agent_that_moves_is_found_again(void)
{
    udp_sink first, second;
    CU_ASSERT_FATAL(udp_sink_open(&first, "127.0.0.1"));
    CU_ASSERT_FATAL(udp_sink_open(&second, "127.0.0.1"));
    snprintf(moving_agent_port, sizeof moving_agent_port, "%u", first.port);
    tw__udp_sender_set_resolver(moving_resolver);

    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_agent(ro, "agent.test", 6831); /* the port comes from "DNS" */
    tw_reporter_options_set_resolve_interval_ms(ro, 1);
    tw_reporter_options_set_flush_interval_ms(ro, 60000);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "moving");
    tw_tracer_options_set_reporter(opts, tw_reporter_jaeger_udp_new(ro, NULL));
    tw_reporter_options_free(ro);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);

    tw_span_finish(tw_span_start(t, "before-move", NULL));
    tw_tracer_flush(t, 5000);
    CU_ASSERT_EQUAL(udp_sink_collect(&first, 1, 2000), 1);

    /* The agent restarts elsewhere: within the resolve interval the reporter
     * resolves the name again and follows it. Poll, bounded, instead of
     * sleeping for the interval. */
    snprintf(moving_agent_port, sizeof moving_agent_port, "%u", second.port);
    bool has_moved = false;
    for (int attempt = 0; attempt < 2000 && !has_moved; attempt++) {
        tw_span_finish(tw_span_start(t, "after-move", NULL));
        tw_tracer_flush(t, 5000);
        struct pollfd p = {.fd = second.fd, .events = POLLIN};
        has_moved = poll(&p, 1, 1) > 0;
    }
    CU_ASSERT(has_moved);
    tw_tracer_free(t);
    tw__udp_sender_set_resolver(NULL);
    udp_sink_close(&first);
    udp_sink_close(&second);
}

/* Sends one span with a @value_len-byte tag value through a UDP reporter
 * with @max_packet, then closes: what the reporter thread says is in
 * `said`. */
static void send_one_large_span(unsigned int port, size_t max_packet, size_t value_len)
{
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_agent(ro, "127.0.0.1", port);
    tw_reporter_options_set_max_packet_size(ro, max_packet);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "svc");
    tw_tracer_options_set_max_value_bytes(opts, value_len);
    tw_tracer_options_set_reporter(opts, tw_reporter_jaeger_udp_new(ro, NULL));
    tw_reporter_options_free(ro);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char *big = malloc(value_len + 1);
    memset(big, 'x', value_len);
    big[value_len] = '\0';
    tw_span *s = tw_span_start(t, "huge", NULL);
    tw_span_set_tag_str(s, "payload", big);
    tw_span_finish(s);
    free(big);
    tw_tracer_close(t);
    CU_ASSERT_EQUAL(tw_reporter_counter(tw_tracer_reporter(t), TW_COUNTER_DROPPED_TOO_LARGE), 1);
    tw_tracer_free(t);
}

/* The "too large" line names the bound the span met and how large the
 * span was, and advises only what can work: raising the packet size up to
 * what a UDP packet can hold, never past it. It used to advise lowering
 * "TRACEWIRE_MAX_*" or raising the packet size whatever the case. */
static void test_too_large_line_says_what_can_help(void)
{
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    said[0] = '\0';
    tw_set_logger(keep_said, NULL, TW_LOG_WARN);
    send_one_large_span(sink.port, 512, 1000);
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "1 spans too large for one UDP packet were dropped"));
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "over the UDP packet's limit of 512 bytes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "TRACEWIRE_MAX_VALUE_BYTES"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(said, "or raise JAEGER_REPORTER_MAX_PACKET_SIZE (now 512, at most 65507)"));
    /* A span no UDP packet can hold: raising the size is not advised. */
    said[0] = '\0';
    send_one_large_span(sink.port, 65000, 100000);
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "over the UDP packet's limit of 65000 bytes"));
    CU_ASSERT_PTR_NOT_NULL(strstr(said, "raising it cannot help"));
    CU_ASSERT_PTR_NULL(strstr(said, "or raise"));
    if (!strstr(said, "raising it cannot help"))
        fprintf(stderr, "said:\n%s", said);
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
    udp_sink_close(&sink);
}

/* Two transports of a composite that fail at once are both heard through
 * the default logger, whose limit of one line a minute is per call site and
 * per reporter name: the two share the sender's and the reporter thread's call
 * sites, and the second used to be held back as "the same cause". */
static void test_composite_failures_are_each_said(void)
{
    udp_sink sink;
    unsigned int ports[2];
    for (int i = 0; i < 2; i++) {
        CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
        ports[i] = sink.port;
        udp_sink_close(&sink);
    }
    tw_reporter *rs[2];
    for (int i = 0; i < 2; i++) {
        tw_reporter_options *ro = tw_reporter_options_new();
        tw_reporter_options_set_agent(ro, "127.0.0.1", ports[i]);
        tw_reporter_options_set_flush_interval_ms(ro, 60000);
        rs[i] = i == 0 ? tw_reporter_jaeger_udp_new(ro, NULL)
                       : tw_reporter_jaeger_udp_binary_new(ro, NULL);
        tw_reporter_options_free(ro);
        CU_ASSERT_PTR_NOT_NULL_FATAL(rs[i]);
    }
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "svc");
    tw_tracer_options_set_reporter(opts, tw_reporter_composite_new(rs, 2));
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);

    /* stderr into a pipe, the default logger with a fresh history. */
    int fds[2];
    CU_ASSERT_FATAL(pipe(fds) == 0);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fds[1], STDERR_FILENO);
    tw__log_rate_reset();
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
    for (int round = 0; round < 3; round++) {
        tw_span_finish(tw_span_start(t, "lost", NULL));
        tw_tracer_flush(t, 5000);
    }
    tw_tracer_free(t); /* the reporter threads say their losses at close */
    dup2(saved, STDERR_FILENO);
    close(saved);
    close(fds[1]);
    static char out[65536];
    ssize_t n, total = 0;
    while ((n = read(fds[0], out + total, sizeof out - 1 - (size_t)total)) > 0)
        total += n;
    out[total] = '\0';
    close(fds[0]);
    tw__log_rate_reset();
    if (!strstr(out, "jaeger-udp: send to") || !strstr(out, "jaeger-udp-binary: send to") ||
        !strstr(out, "jaeger-udp reporter: ") || !strstr(out, "jaeger-udp-binary reporter: "))
        fprintf(stderr, "stderr was:\n%s", out);
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "jaeger-udp: send to"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "jaeger-udp-binary: send to"));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "jaeger-udp reporter: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(out, "jaeger-udp-binary reporter: "));
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("report/udp", NULL, NULL);
    CU_add_test(suite, "spans_arrive_field_by_field_ipv4", test_spans_arrive_field_by_field_ipv4);
    CU_add_test(suite, "spans_arrive_over_ipv6", test_spans_arrive_over_ipv6);
    CU_add_test(suite, "env_ipv6_agent_host_delivers", test_env_ipv6_agent_host_delivers);
    CU_add_test(suite, "host_name_is_resolved", test_host_name_is_resolved);
    CU_add_test(suite, "batches_split_under_max_packet_size",
                test_batches_split_under_max_packet_size);
    CU_add_test(suite, "oversized_span_is_dropped_and_counted",
                test_oversized_span_is_dropped_and_counted);
    CU_add_test(suite, "absent_agent_is_counted_not_fatal", test_absent_agent_is_counted_not_fatal);
    CU_add_test(suite, "unresolvable_host_is_not_fatal", test_unresolvable_host_is_not_fatal);
    CU_add_test(suite, "losses_are_said_by_the_reporter_thread",
                test_losses_are_said_by_the_reporter_thread);
    CU_add_test(suite, "agent_that_moves_is_found_again", test_agent_that_moves_is_found_again);
    CU_add_test(suite, "composite_failures_are_each_said", test_composite_failures_are_each_said);
    CU_add_test(suite, "too_large_line_says_what_can_help", test_too_large_line_says_what_can_help);
}
