/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_http_reporter.c: suite "report/http": the Jaeger
 * collector, Zipkin and OTLP/HTTP reporters end to end, through the public
 * API, against a real HTTP receiver on loopback (test_http_receiver.c,
 * libmicrohttpd).
 *
 * What arrives is decoded and compared field by field with what the spans
 * recorded: the Jaeger body with the c_glib code generated from
 * thrift/jaeger.thrift (binary protocol, a bare Batch, every byte consumed),
 * the Zipkin and OTLP bodies with Jansson's parser. Also: request method,
 * path, Content-Type, User-Agent, basic and bearer auth, extra headers;
 * batches cut by the real body size and a span too large for any body;
 * faults: no receiver, a receiver slower than the timeout, 500 then 202 (a
 * retry to a collector), OTLP's retryable 429, 502, 503, 504 and final
 * statuses (an OTLP 500, 501, 505, 401, 404: one request, no cool-down),
 * 503 with Retry-After, 429 with Retry-After (seconds, HTTP-date), 400 (split in
 * halves, never retried), a connection closed
 * mid-request, a receiver stuck while the application keeps reporting (it
 * never waits, memory stays bounded, close is bounded), and the cool-down
 * after a batch used up its retries; fork() with a kept-alive connection.
 * Every test ends with
 * reported = sent + dropped + failed.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <glib-object.h>
#include <jansson.h>
#include <zlib.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>

#include "bounded.h"
#include "harness.h"
#include "jaeger_decode.h"
#include "test_http_receiver.h"
#include "tracewire/tracewire.h"
#include "twire_jaeger_jaeger_types.h"

typedef tw_reporter *(*reporter_new_fn)(const tw_reporter_options *opts, tw_error **err);

typedef struct transport {
    const char *name;
    reporter_new_fn new_reporter;
    const char *path;
    const char *content_type;
} transport;

static const transport jaeger = {"jaeger-http", tw_reporter_jaeger_http_new, "/api/traces",
                                 "application/x-thrift"};
static const transport zipkin = {"zipkin", tw_reporter_zipkin_new, "/api/v2/spans",
                                 "application/json"};
static const transport otlp = {"otlp-http", tw_reporter_otlp_http_new, "/v1/traces",
                               "application/json"};
/* OTLP protobuf (tw_reporter_options_set_otlp_protocol); not in transports[]. */
static const transport otlp_proto = {"otlp-http-proto", tw_reporter_otlp_http_new, "/v1/traces",
                                     "application/x-protobuf"};
static const transport *const transports[] = {&jaeger, &zipkin, &otlp};
#define N_TRANSPORTS 3

/* ---- fixtures and helpers --------------------------------------------------------------- */

static http_receiver receiver_202; /* answers 202, scripted per test */

static int suite_init(void)
{
    if (getenv("TW_TEST_LOG"))
        tw_set_logger(tw_log_to_stderr, NULL, TW_LOG_DEBUG);
    /* Loopback only: a proxy from the environment must not take the requests. */
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    unsetenv("https_proxy");
    unsetenv("HTTPS_PROXY");
    unsetenv("ALL_PROXY");
    unsetenv("all_proxy");
    return http_receiver_start(&receiver_202, 202, NULL) ? 0 : 1;
}

static int suite_cleanup(void)
{
    http_receiver_stop(&receiver_202);
    return 0;
}

/* A fresh receiver state for each test: a new daemon, so counts start at 0. */
static void reset_receiver(unsigned int status)
{
    http_receiver_stop(&receiver_202);
    CU_ASSERT_FATAL(http_receiver_start(&receiver_202, status, NULL));
}

/* Options aimed at @rx with @t's path, explicit flushes only, fast retries. */
static tw_reporter_options *options_for(const http_receiver *rx, const transport *t)
{
    tw_reporter_options *o = tw_reporter_options_new();
    char url[128];
    snprintf(url, sizeof url, "%s%s", rx->base_url, t->path);
    CU_ASSERT_EQUAL(tw_reporter_options_set_endpoint(o, url), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_flush_interval_ms(o, 600000), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_retry_backoff_ms(o, 5, 3000), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_http_timeouts_ms(o, 2000, 3000), TW_OK);
    return o;
}

/* A tracer owning the reporter made from @o by @t; *reporter_out borrows it. */
static tw_tracer *tracer_for(const transport *t, tw_reporter_options *o, bool is_128bit,
                             tw_reporter **reporter_out)
{
    tw_error *err = NULL;
    tw_reporter *r = t->new_reporter(o, &err);
    tw_reporter_options_free(o);
    CU_ASSERT_PTR_NOT_NULL(r);
    if (err) {
        fprintf(stderr, "%s: %s\n", t->name, tw_error_message(err));
        tw_error_free(err);
    }
    if (!r)
        return NULL;
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(r), t->name);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "http-test");
    tw_tracer_options_add_tag_str(opts, "custom", "tag");
    tw_tracer_options_set_trace_id_128bit(opts, is_128bit);
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_tracer_options_set_reporter(opts, r);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    *reporter_out = r;
    return tracer;
}

static uint64_t counter(const tw_reporter *r, tw_counter c)
{
    return tw_reporter_counter(r, c);
}

/* Every span handed over ended in exactly one outcome counter. */
static void assert_accounted(const tw_reporter *r)
{
    uint64_t reported = counter(r, TW_COUNTER_SPANS_REPORTED);
    uint64_t outcomes =
        counter(r, TW_COUNTER_SPANS_SENT) + counter(r, TW_COUNTER_DROPPED_QUEUE_FULL) +
        counter(r, TW_COUNTER_DROPPED_TOO_LARGE) + counter(r, TW_COUNTER_FAILED_TO_EMIT);
    CU_ASSERT_EQUAL(reported, outcomes);
}

static void finish_spans(tw_tracer *t, size_t n, const char *value)
{
    for (size_t i = 0; i < n; i++) {
        tw_span *s = tw_span_start(t, "work", NULL);
        if (value)
            tw_span_set_tag_str(s, "payload", value);
        tw_span_finish(s);
    }
}

/* ---- decoding what arrived ------------------------------------------------------------ */

/* A bare binary Batch; NULL unless it decodes and uses every byte. */
static TwireJaegerBatch *decode_jaeger(const GByteArray *body)
{
    static bool is_patched;
    if (!is_patched)
        is_patched = tw_test_patch_thrift_finalizers();
    ThriftMemoryBuffer *mb =
        g_object_new(THRIFT_TYPE_MEMORY_BUFFER, "buf_size", (guint32)body->len, NULL);
    GError *error = NULL;
    thrift_transport_write(THRIFT_TRANSPORT(mb), body->data, body->len, &error);
    ThriftProtocol *proto = g_object_new(THRIFT_TYPE_BINARY_PROTOCOL, "transport", mb, NULL);
    TwireJaegerBatch *batch = g_object_new(TWIRE_JAEGER_TYPE_BATCH, NULL);
    if (error || thrift_struct_read(THRIFT_STRUCT(batch), proto, &error) < 0 || mb->buf->len != 0) {
        g_object_unref(batch);
        batch = NULL;
    }
    if (error)
        g_error_free(error);
    g_object_unref(proto);
    g_object_unref(mb);
    return batch;
}

static json_t *decode_json(const GByteArray *body)
{
    json_error_t error;
    json_t *doc = json_loadb((const char *)body->data, body->len, JSON_REJECT_DUPLICATES, &error);
    if (!doc)
        fprintf(stderr, "body is not JSON: %s (line %d)\n", error.text, error.line);
    return doc;
}

static json_t *otlp_spans(json_t *doc)
{
    json_t *rs = json_array_get(json_object_get(doc, "resourceSpans"), 0);
    json_t *ss = json_array_get(json_object_get(rs, "scopeSpans"), 0);
    return json_object_get(ss, "spans");
}

/* Spans in one body, whatever the transport; -1 if it does not decode. */
static long spans_in_body(const transport *t, const GByteArray *body)
{
    long n = -1;
    if (t == &jaeger) {
        TwireJaegerBatch *b = decode_jaeger(body);
        if (b) {
            n = (long)b->spans->len;
            g_object_unref(b);
        }
    } else {
        json_t *doc = decode_json(body);
        if (doc)
            n = (long)json_array_size(t == &zipkin ? doc : otlp_spans(doc));
        json_decref(doc);
    }
    return n;
}

static const TwireJaegerTag *jaeger_tag(GPtrArray *tags, const char *key)
{
    for (guint i = 0; tags && i < tags->len; i++) {
        const TwireJaegerTag *t = g_ptr_array_index(tags, i);
        if (strcmp(t->key, key) == 0)
            return t;
    }
    return NULL;
}

static const char *str_at(json_t *obj, const char *key)
{
    return json_string_value(json_object_get(obj, key));
}

static json_t *otlp_attr(json_t *attrs, const char *key)
{
    size_t i;
    json_t *kv;
    json_array_foreach(attrs, i, kv)
    {
        if (str_at(kv, "key") && strcmp(str_at(kv, "key"), key) == 0)
            return json_object_get(kv, "value");
    }
    return NULL;
}

#define ASSERT_STR(actual, expected)                                                               \
    do {                                                                                           \
        const char *a_ = (actual);                                                                 \
        CU_ASSERT_PTR_NOT_NULL(a_);                                                                \
        if (a_)                                                                                    \
            CU_ASSERT_STRING_EQUAL(a_, expected);                                                  \
    } while (0)

static void assert_request_basics(const http_request *q, const transport *t)
{
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    CU_ASSERT_STRING_EQUAL(q->method, "POST");
    CU_ASSERT_STRING_EQUAL(q->path, t->path);
    ASSERT_STR(http_request_header(q, "Content-Type"), t->content_type);
    const char *agent = http_request_header(q, "User-Agent");
    CU_ASSERT(agent && strncmp(agent, "tracewire/", 10) == 0);
    CU_ASSERT_PTR_NULL(http_request_header(q, "Expect"));
    CU_ASSERT_PTR_NULL(http_request_header(q, "Authorization"));
}

/* Two spans through the public API: a root with every tag type and a log,
 * and a FollowsFrom child that finishes first. */
typedef struct two_spans {
    uint64_t trace_high, trace_low, root_id, child_id;
    char trace_hex[33];
} two_spans;

static void report_two_spans(tw_tracer *t, two_spans *ids)
{
    tw_span *root = tw_span_start(t, "root", NULL);
    tw_span_set_tag_str(root, "span.kind", "server");
    tw_span_set_tag_str(root, "s", "v");
    tw_span_set_tag_bool(root, "b", true);
    tw_span_set_tag_int64(root, "i", -7);
    tw_span_set_tag_double(root, "d", 0.25);
    static const uint8_t bytes[2] = {0xff, 0x00};
    tw_span_set_tag_binary(root, "bin", bytes, 2);
    tw_span_log_kv(root, "event", "x", NULL);
    tw_span_set_error(root, "IOError", "boom");
    tw_span_options *so = tw_span_options_new();
    tw_span_options_add_reference(so, TW_REF_FOLLOWS_FROM, tw_span_get_context(root));
    tw_span *child = tw_span_start(t, "child", so);
    tw_span_options_free(so);
    tw_span_set_tag_str(child, "peer.service", "db");
    const tw_span_context *rc = tw_span_get_context(root);
    ids->trace_high = tw_span_context_trace_id_high(rc);
    ids->trace_low = tw_span_context_trace_id_low(rc);
    ids->root_id = tw_span_context_span_id(rc);
    ids->child_id = tw_span_context_span_id(tw_span_get_context(child));
    tw_span_context_trace_id_hex(rc, ids->trace_hex, sizeof ids->trace_hex);
    tw_span_finish(child);
    tw_span_finish(root);
}

/* ---- what arrives ----------------------------------------------------------------------- */

static void test_jaeger_batch_decodes_field_by_field(void)
{
    reset_receiver(202);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&jaeger, options_for(&receiver_202, &jaeger), true, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    two_spans ids;
    report_two_spans(t, &ids);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_FATAL(http_receiver_wait(&receiver_202, 1, 5000));
    const http_request *q = http_receiver_request(&receiver_202, 0);
    assert_request_basics(q, &jaeger);
    TwireJaegerBatch *b = decode_jaeger(q->body);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_STRING_EQUAL(b->process->serviceName, "http-test");
    const TwireJaegerTag *custom = jaeger_tag(b->process->tags, "custom");
    CU_ASSERT(custom && strcmp(custom->vStr, "tag") == 0);
    CU_ASSERT(b->__isset_seqNo && b->seqNo == 0);
    CU_ASSERT(b->__isset_stats);
    CU_ASSERT_EQUAL_FATAL(b->spans->len, 2);
    const TwireJaegerSpan *c = g_ptr_array_index(b->spans, 0);
    const TwireJaegerSpan *root = g_ptr_array_index(b->spans, 1);
    CU_ASSERT_STRING_EQUAL(c->operationName, "child");
    CU_ASSERT_STRING_EQUAL(root->operationName, "root");
    CU_ASSERT_EQUAL((uint64_t)c->spanId, ids.child_id);
    CU_ASSERT_EQUAL((uint64_t)root->spanId, ids.root_id);
    CU_ASSERT_EQUAL((uint64_t)root->traceIdHigh, ids.trace_high);
    CU_ASSERT_EQUAL((uint64_t)root->traceIdLow, ids.trace_low);
    CU_ASSERT_EQUAL((uint64_t)c->parentSpanId, ids.root_id);
    CU_ASSERT_EQUAL(root->parentSpanId, 0);
    CU_ASSERT(c->__isset_references && c->references->len == 1);
    if (c->references && c->references->len == 1) {
        const TwireJaegerSpanRef *ref = g_ptr_array_index(c->references, 0);
        CU_ASSERT_EQUAL(ref->refType, TWIRE_JAEGER_SPAN_REF_TYPE_FOLLOWS_FROM);
        CU_ASSERT_EQUAL((uint64_t)ref->spanId, ids.root_id);
    }
    const TwireJaegerTag *s = jaeger_tag(root->tags, "s");
    CU_ASSERT(s && s->vType == TWIRE_JAEGER_TAG_TYPE_STRING && strcmp(s->vStr, "v") == 0);
    const TwireJaegerTag *bt = jaeger_tag(root->tags, "b");
    CU_ASSERT(bt && bt->vType == TWIRE_JAEGER_TAG_TYPE_BOOL && bt->vBool);
    const TwireJaegerTag *it = jaeger_tag(root->tags, "i");
    CU_ASSERT(it && it->vType == TWIRE_JAEGER_TAG_TYPE_LONG && it->vLong == -7);
    const TwireJaegerTag *dt = jaeger_tag(root->tags, "d");
    CU_ASSERT(dt && dt->vType == TWIRE_JAEGER_TAG_TYPE_DOUBLE && dt->vDouble == 0.25);
    const TwireJaegerTag *bin = jaeger_tag(root->tags, "bin");
    CU_ASSERT(bin && bin->vType == TWIRE_JAEGER_TAG_TYPE_BINARY && bin->vBinary->len == 2 &&
              bin->vBinary->data[0] == 0xff);
    CU_ASSERT(root->__isset_logs && root->logs->len == 2);
    g_object_unref(b);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 2);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_BATCHES_SENT), 1);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_BYTES_SENT), q->body->len);
    assert_accounted(r);
    tw_tracer_free(t);
}

static void test_zipkin_spans_arrive_as_v2_json(void)
{
    reset_receiver(202);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&zipkin, options_for(&receiver_202, &zipkin), true, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    two_spans ids;
    report_two_spans(t, &ids);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_FATAL(http_receiver_wait(&receiver_202, 1, 5000));
    const http_request *q = http_receiver_request(&receiver_202, 0);
    assert_request_basics(q, &zipkin);
    json_t *doc = decode_json(q->body);
    CU_ASSERT_EQUAL_FATAL(json_array_size(doc), 2);
    json_t *c = json_array_get(doc, 0);
    json_t *root = json_array_get(doc, 1);
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)ids.root_id);
    ASSERT_STR(str_at(root, "id"), hex);
    ASSERT_STR(str_at(c, "parentId"), hex);
    ASSERT_STR(str_at(root, "traceId"), ids.trace_hex);
    CU_ASSERT_EQUAL(strlen(ids.trace_hex), 32);
    ASSERT_STR(str_at(root, "name"), "root");
    ASSERT_STR(str_at(root, "kind"), "SERVER");
    ASSERT_STR(str_at(json_object_get(root, "localEndpoint"), "serviceName"), "http-test");
    ASSERT_STR(str_at(json_object_get(c, "remoteEndpoint"), "serviceName"), "db");
    json_t *tags = json_object_get(root, "tags");
    ASSERT_STR(str_at(tags, "s"), "v");
    ASSERT_STR(str_at(tags, "b"), "true");
    ASSERT_STR(str_at(tags, "i"), "-7");
    ASSERT_STR(str_at(tags, "d"), "0.25");
    ASSERT_STR(str_at(tags, "bin"), "/wA=");
    ASSERT_STR(str_at(tags, "error"), "boom");
    ASSERT_STR(str_at(tags, "custom"), "tag");
    CU_ASSERT_PTR_NULL(json_object_get(tags, "span.kind"));
    CU_ASSERT_EQUAL(json_array_size(json_object_get(root, "annotations")), 2);
    CU_ASSERT(json_integer_value(json_object_get(root, "timestamp")) > 0);
    CU_ASSERT(json_integer_value(json_object_get(root, "duration")) >= 1);
    json_decref(doc);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 2);
    assert_accounted(r);
    tw_tracer_free(t);
}

static void test_otlp_request_arrives_as_proto_json(void)
{
    reset_receiver(200);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&otlp, options_for(&receiver_202, &otlp), false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    two_spans ids;
    report_two_spans(t, &ids);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_FATAL(http_receiver_wait(&receiver_202, 1, 5000));
    const http_request *q = http_receiver_request(&receiver_202, 0);
    assert_request_basics(q, &otlp);
    json_t *doc = decode_json(q->body);
    json_t *rs = json_array_get(json_object_get(doc, "resourceSpans"), 0);
    json_t *resource_attrs = json_object_get(json_object_get(rs, "resource"), "attributes");
    ASSERT_STR(str_at(otlp_attr(resource_attrs, "service.name"), "stringValue"), "http-test");
    ASSERT_STR(str_at(otlp_attr(resource_attrs, "custom"), "stringValue"), "tag");
    json_t *spans = otlp_spans(doc);
    CU_ASSERT_EQUAL_FATAL(json_array_size(spans), 2);
    json_t *c = json_array_get(spans, 0);
    json_t *root = json_array_get(spans, 1);
    char hex[33];
    snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)ids.trace_high,
             (unsigned long long)ids.trace_low);
    ASSERT_STR(str_at(root, "traceId"), hex); /* 64-bit ids are padded to 32 hex */
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)ids.root_id);
    ASSERT_STR(str_at(root, "spanId"), hex);
    ASSERT_STR(str_at(c, "parentSpanId"), hex);
    CU_ASSERT_PTR_NULL(json_object_get(c, "links")); /* its FollowsFrom is the parent */
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(root, "kind")), 2);
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(c, "kind")), 1);
    json_t *status = json_object_get(root, "status");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(status, "code")), 2);
    ASSERT_STR(str_at(status, "message"), "boom");
    json_t *attrs = json_object_get(root, "attributes");
    ASSERT_STR(str_at(otlp_attr(attrs, "i"), "intValue"), "-7");
    CU_ASSERT(json_is_true(json_object_get(otlp_attr(attrs, "b"), "boolValue")));
    ASSERT_STR(str_at(otlp_attr(attrs, "bin"), "bytesValue"), "/wA=");
    json_t *events = json_object_get(root, "events");
    CU_ASSERT_EQUAL(json_array_size(events), 2);
    ASSERT_STR(str_at(json_array_get(events, 1), "name"), "error");
    json_decref(doc);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 2);
    assert_accounted(r);
    tw_tracer_free(t);
}

static void test_auth_and_extra_headers_are_sent(void)
{
    for (int mode = 0; mode < 3; mode++) {
        reset_receiver(202);
        tw_reporter_options *o = options_for(&receiver_202, &zipkin);
        if (mode == 0) {
            CU_ASSERT_EQUAL(tw_reporter_options_set_bearer_token(o, "tok"), TW_OK);
            CU_ASSERT_EQUAL(tw_reporter_options_set_basic_auth(o, "user", "pass"), TW_OK);
        } else if (mode == 1) {
            CU_ASSERT_EQUAL(tw_reporter_options_set_basic_auth(o, "user", "pass"), TW_OK);
            CU_ASSERT_EQUAL(tw_reporter_options_set_bearer_token(o, "s3cr3t.token"), TW_OK);
        }
        CU_ASSERT_EQUAL(tw_reporter_options_add_header(o, "X-Scope-OrgID", "tenant-1"), TW_OK);
        CU_ASSERT_EQUAL(tw_reporter_options_add_header(o, "X-Empty", ""), TW_OK);
        tw_reporter *r;
        tw_tracer *t = tracer_for(&zipkin, o, false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 1, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
        CU_ASSERT_FATAL(http_receiver_wait(&receiver_202, 1, 5000));
        const http_request *q = http_receiver_request(&receiver_202, 0);
        const char *auth = http_request_header(q, "Authorization");
        if (mode == 0)
            ASSERT_STR(auth, "Basic dXNlcjpwYXNz"); /* user:pass; the token was replaced */
        else if (mode == 1)
            ASSERT_STR(auth, "Bearer s3cr3t.token");
        else
            CU_ASSERT_PTR_NULL(auth);
        ASSERT_STR(http_request_header(q, "X-Scope-OrgID"), "tenant-1");
        ASSERT_STR(http_request_header(q, "X-Empty"), "");
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

/* ---- batching ----------------------------------------------------------------------------- */

static void test_batches_are_cut_by_the_real_body_size(void)
{
    char value[201];
    memset(value, 'v', 200);
    value[200] = '\0';
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        const transport *tp = transports[k];
        reset_receiver(202);
        tw_reporter_options *o = options_for(&receiver_202, tp);
        CU_ASSERT_EQUAL(tw_reporter_options_set_max_body_size(o, 2000), TW_OK);
        tw_reporter *r;
        tw_tracer *t = tracer_for(tp, o, true, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 40, value);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
        uint64_t batches = counter(r, TW_COUNTER_BATCHES_SENT);
        CU_ASSERT(batches >= 5);
        CU_ASSERT(http_receiver_wait(&receiver_202, batches, 5000));
        long total = 0;
        size_t bytes = 0;
        for (size_t i = 0; i < http_receiver_count(&receiver_202); i++) {
            const http_request *q = http_receiver_request(&receiver_202, i);
            CU_ASSERT(q->body->len <= 2000);
            /* Full batches are nearly full: cut on the size, not a count. */
            if (i + 1 < http_receiver_count(&receiver_202))
                CU_ASSERT(q->body->len > 2000 - 600);
            long n = spans_in_body(tp, q->body);
            CU_ASSERT(n > 0);
            total += n;
            bytes += q->body->len;
        }
        CU_ASSERT_EQUAL(total, 40);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 40);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_BYTES_SENT), bytes);
        CU_ASSERT_EQUAL(batches, http_receiver_count(&receiver_202));
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

static void test_span_too_large_for_any_body_is_dropped_and_counted(void)
{
    char big[3001];
    memset(big, 'x', 3000);
    big[3000] = '\0';
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        const transport *tp = transports[k];
        reset_receiver(202);
        tw_reporter_options *o = options_for(&receiver_202, tp);
        CU_ASSERT_EQUAL(tw_reporter_options_set_max_body_size(o, 2000), TW_OK);
        tw_reporter *r;
        tw_tracer *t = tracer_for(tp, o, false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 2, NULL);
        finish_spans(t, 1, big);
        finish_spans(t, 2, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_DROPPED_TOO_LARGE), 1);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 4);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 0);
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

/* ---- faults -----------------------------------------------------------------------------------
 */

/* A loopback port with nothing listening (bound, then closed). */
static unsigned int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    socklen_t len = sizeof a;
    unsigned int port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static void test_absent_receiver_counts_spans_as_failed(void)
{
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        tw_reporter_options *o = tw_reporter_options_new();
        char url[96];
        snprintf(url, sizeof url, "http://127.0.0.1:%u%s", closed_port(), transports[k]->path);
        tw_reporter_options_set_endpoint(o, url);
        tw_reporter_options_set_flush_interval_ms(o, 600000);
        tw_reporter_options_set_retry_backoff_ms(o, 5, 1000);
        tw_reporter_options_set_max_retries(o, 2);
        tw_reporter *r;
        tw_tracer *t = tracer_for(transports[k], o, false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 7, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 7);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 0);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_BATCHES_SENT), 0);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_BYTES_SENT), 0);
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

/* The collectors (Jaeger, Zipkin) retry a 500, commonly a storage error of
 * the moment (transport/http_head.h); OTLP does not (below). */
static void test_500_then_202_is_retried_and_sent_once(void)
{
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        if (transports[k] == &otlp)
            continue;
        reset_receiver(202);
        const http_step steps[] = {{.status = 500}, {.status = 503}, {.status = 202}};
        http_receiver_script(&receiver_202, steps, 3);
        tw_reporter *r;
        tw_tracer *t =
            tracer_for(transports[k], options_for(&receiver_202, transports[k]), false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 3, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
        CU_ASSERT_EQUAL(http_receiver_count(&receiver_202), 3);
        const http_request *first = http_receiver_request(&receiver_202, 0);
        const http_request *last = http_receiver_request(&receiver_202, 2);
        /* The same body each time: a retry resends, it does not re-encode. */
        CU_ASSERT(first && last && first->body->len == last->body->len &&
                  memcmp(first->body->data, last->body->data, first->body->len) == 0);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 3);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_BATCHES_SENT), 1);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 0);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_BYTES_SENT), last->body->len);
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

/* OTLP/HTTP retries exactly 429, 502, 503 and 504 (the OTLP specification,
 * "Retryable Response Codes"), in JSON and in protobuf: five requests of
 * the same body, every span sent once. */
static void test_otlp_retries_429_502_503_504(void)
{
    const tw_otlp_protocol protocols[] = {TW_OTLP_HTTP_JSON, TW_OTLP_HTTP_PROTOBUF};
    const transport *const ts[] = {&otlp, &otlp_proto};
    for (size_t p = 0; p < 2; p++) {
        reset_receiver(200);
        const http_step steps[] = {
            {.status = 502}, {.status = 503}, {.status = 504}, {.status = 429}, {.status = 200}};
        http_receiver_script(&receiver_202, steps, 5);
        tw_reporter_options *o = options_for(&receiver_202, ts[p]);
        CU_ASSERT_EQUAL(tw_reporter_options_set_otlp_protocol(o, protocols[p]), TW_OK);
        CU_ASSERT_EQUAL(tw_reporter_options_set_max_retries(o, 4), TW_OK);
        tw_reporter *r;
        tw_tracer *t = tracer_for(ts[p], o, false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 3, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 10000), TW_OK);
        CU_ASSERT_EQUAL(http_receiver_count(&receiver_202), 5);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 3);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 0);
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

/* A final status fails its batch at once: one request, every span counted
 * failed, no retry, and no cool-down either (the next batch is sent at
 * once). OTLP: 500 and 501 (the specification: statuses other than 429,
 * 502, 503 and 504 MUST NOT be retried), JSON and protobuf; every format:
 * 501, 505, 401, 404. */
static void test_final_status_fails_the_batch_without_retry(void)
{
    typedef struct {
        const transport *t;
        tw_otlp_protocol protocol;
        unsigned int status;
    } final_case;
    const final_case cases[] = {
        {&otlp, TW_OTLP_HTTP_JSON, 500},   {&otlp_proto, TW_OTLP_HTTP_PROTOBUF, 500},
        {&otlp, TW_OTLP_HTTP_JSON, 501},   {&otlp_proto, TW_OTLP_HTTP_PROTOBUF, 501},
        {&otlp, TW_OTLP_HTTP_JSON, 505},   {&otlp, TW_OTLP_HTTP_JSON, 408},
        {&zipkin, TW_OTLP_HTTP_JSON, 501}, {&zipkin, TW_OTLP_HTTP_JSON, 505},
        {&jaeger, TW_OTLP_HTTP_JSON, 501}, {&jaeger, TW_OTLP_HTTP_JSON, 505},
        {&zipkin, TW_OTLP_HTTP_JSON, 401}, {&jaeger, TW_OTLP_HTTP_JSON, 404},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        reset_receiver(202);
        const http_step steps[] = {{.status = cases[k].status}, {.status = 202}};
        http_receiver_script(&receiver_202, steps, 2);
        tw_reporter_options *o = options_for(&receiver_202, cases[k].t);
        CU_ASSERT_EQUAL(tw_reporter_options_set_otlp_protocol(o, cases[k].protocol), TW_OK);
        /* A 5 s first delay: a cool-down would outlast the test. */
        CU_ASSERT_EQUAL(tw_reporter_options_set_retry_backoff_ms(o, 5000, 15000), TW_OK);
        tw_reporter *r;
        tw_tracer *t = tracer_for(cases[k].t, o, false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 3, NULL);
        gint64 start = g_get_monotonic_time();
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 20000), TW_OK);
        gint64 elapsed_ms = (g_get_monotonic_time() - start) / 1000;
        if (http_receiver_arrived(&receiver_202) != 1 || elapsed_ms >= 2000)
            fprintf(stderr, "%s, HTTP %u: %zu requests in %lld ms\n", cases[k].t->name,
                    cases[k].status, http_receiver_arrived(&receiver_202), (long long)elapsed_ms);
        CU_ASSERT_EQUAL(http_receiver_arrived(&receiver_202), 1);
        CU_ASSERT(elapsed_ms < 2000);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 3);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 0);
        finish_spans(t, 2, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 20000), TW_OK);
        CU_ASSERT_EQUAL(http_receiver_arrived(&receiver_202), 2);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 2);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 3);
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

/* A 400 on a batch of several spans sends each half on its own (the rest
 * of a batch survives one bad span); the same body is never retried. */
static void test_400_splits_the_batch_and_is_not_retried(void)
{
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        reset_receiver(202);
        const http_step steps[] = {{.status = 400}};
        http_receiver_script(&receiver_202, steps, 1);
        tw_reporter *r;
        tw_tracer *t =
            tracer_for(transports[k], options_for(&receiver_202, transports[k]), false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 4, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
        CU_ASSERT_EQUAL_FATAL(http_receiver_count(&receiver_202), 3);
        CU_ASSERT_EQUAL(spans_in_body(transports[k], http_receiver_request(&receiver_202, 0)->body),
                        4);
        CU_ASSERT_EQUAL(spans_in_body(transports[k], http_receiver_request(&receiver_202, 1)->body),
                        2);
        CU_ASSERT_EQUAL(spans_in_body(transports[k], http_receiver_request(&receiver_202, 2)->body),
                        2);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 4);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_BATCHES_SENT), 2);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 0);
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

/* A backend refusing everything: halves down to single spans (1 + 2 + 4
 * requests for 4 spans), each refused once, all counted failed; the next
 * batch is sent at once (a 4xx is about the request, no cool-down). */
static void test_400_to_every_body_fails_each_span_once(void)
{
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        reset_receiver(400);
        tw_reporter *r;
        tw_tracer *t =
            tracer_for(transports[k], options_for(&receiver_202, transports[k]), false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 4, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
        CU_ASSERT_EQUAL(http_receiver_count(&receiver_202), 7);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 4);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 0);
        finish_spans(t, 1, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
        CU_ASSERT_EQUAL(http_receiver_count(&receiver_202), 8);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 5);
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

static void test_connection_closed_mid_request_is_retried(void)
{
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        reset_receiver(202);
        const http_step steps[] = {{.is_close = true}, {.status = 202}};
        http_receiver_script(&receiver_202, steps, 2);
        tw_reporter *r;
        tw_tracer *t =
            tracer_for(transports[k], options_for(&receiver_202, transports[k]), false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 5, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
        CU_ASSERT_EQUAL(http_receiver_count(&receiver_202), 2);
        const http_request *closed = http_receiver_request(&receiver_202, 0);
        CU_ASSERT(closed && !closed->is_answered);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 5);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 0);
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

static void test_receiver_slower_than_the_timeout_fails_the_batch(void)
{
    reset_receiver(202);
    const http_step steps[] = {{.delay_ms = 3000}, {.delay_ms = 3000}, {.delay_ms = 3000}};
    http_receiver_script(&receiver_202, steps, 3);
    tw_reporter_options *o = options_for(&receiver_202, &otlp);
    tw_reporter_options_set_http_timeouts_ms(o, 1000, 200);
    tw_reporter_options_set_max_retries(o, 1);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&otlp, o, false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans(t, 3, NULL);
    gint64 start = g_get_monotonic_time();
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    gint64 elapsed_ms = (g_get_monotonic_time() - start) / 1000;
    CU_ASSERT(elapsed_ms >= 350 && elapsed_ms < 2500); /* two attempts, each cut at 200 ms */
    CU_ASSERT_EQUAL(http_receiver_arrived(&receiver_202), 2);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 3);
    assert_accounted(r);
    tw_tracer_free(t);
}

/* A backend that answers 200 at once and then trickles its body (slower
 * than the attempt's timeout) took the batch: the spans count as sent, once,
 * and nothing is sent again. */
static void test_accepted_answer_with_a_slow_body_is_not_sent_again(void)
{
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        reset_receiver(200);
        const http_step steps[] = {{.status = 200, .trickle_ms = 100},
                                   {.status = 200, .trickle_ms = 100},
                                   {.status = 200, .trickle_ms = 100},
                                   {.status = 200, .trickle_ms = 100}};
        http_receiver_script(&receiver_202, steps, 4);
        tw_reporter_options *o = options_for(&receiver_202, transports[k]);
        tw_reporter_options_set_http_timeouts_ms(o, 1000, 400);
        tw_reporter_options_set_max_retries(o, 3);
        tw_reporter *r;
        tw_tracer *t = tracer_for(transports[k], o, false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 3, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 10000), TW_OK);
        CU_ASSERT_EQUAL(http_receiver_arrived(&receiver_202), 1);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 3);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_BATCHES_SENT), 1);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 0);
        assert_accounted(r);
        tw_tracer_free(t);
        CU_ASSERT_EQUAL(http_receiver_arrived(&receiver_202), 1);
    }
}

static void test_retry_after_is_honoured(void)
{
    reset_receiver(202);
    const http_step steps[] = {{.status = 503, .retry_after = "1"}, {.status = 202}};
    http_receiver_script(&receiver_202, steps, 2);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&jaeger, options_for(&receiver_202, &jaeger), false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans(t, 1, NULL);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL_FATAL(http_receiver_count(&receiver_202), 2);
    gint64 gap_us = http_receiver_request(&receiver_202, 1)->arrival_us -
                    http_receiver_request(&receiver_202, 0)->arrival_us;
    CU_ASSERT(gap_us >= 950 * 1000); /* the backoff alone would be ~5 ms */
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 1);
    assert_accounted(r);
    tw_tracer_free(t);
}

/* A 429 (Too Many Requests) is retried as OTLP/HTTP says (429, 502, 503
 * and 504 are retryable), after its Retry-After (here 1 s, then a 429 with
 * an HTTP-date already past): on the reporter's thread, every span
 * delivered. */
static void test_429_is_retried_after_its_retry_after(void)
{
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        reset_receiver(202);
        const http_step steps[] = {{.status = 429, .retry_after = "1"},
                                   {.status = 429, .retry_after = "Wed, 21 Oct 2015 07:28:00 GMT"},
                                   {.status = 202}};
        http_receiver_script(&receiver_202, steps, 3);
        tw_reporter *r;
        tw_tracer *t =
            tracer_for(transports[k], options_for(&receiver_202, transports[k]), false, &r);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        finish_spans(t, 4, NULL);
        CU_ASSERT_EQUAL(tw_tracer_flush(t, 10000), TW_OK);
        CU_ASSERT_EQUAL_FATAL(http_receiver_count(&receiver_202), 3);
        gint64 gap_us = http_receiver_request(&receiver_202, 1)->arrival_us -
                        http_receiver_request(&receiver_202, 0)->arrival_us;
        CU_ASSERT(gap_us >= 950 * 1000); /* the backoff alone would be ~5 ms */
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 4);
        CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 0);
        assert_accounted(r);
        tw_tracer_free(t);
    }
}

static void test_exhausted_retries_fail_next_batches_fast(void)
{
    reset_receiver(503);
    tw_reporter_options *o = options_for(&receiver_202, &zipkin);
    /* No retries and a 5 s first delay: the cool-down (first delay << retries)
     * is 5 s, far longer than this test, however slow the machine. */
    tw_reporter_options_set_max_retries(o, 0);
    tw_reporter_options_set_retry_backoff_ms(o, 5000, 3000);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&zipkin, o, false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans(t, 2, NULL);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL(http_receiver_count(&receiver_202), 1);
    finish_spans(t, 3, NULL);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    /* Within the cool-down: failed without a request. */
    CU_ASSERT_EQUAL(http_receiver_arrived(&receiver_202), 1);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 5);
    assert_accounted(r);
    tw_tracer_free(t);
}

/* ---- the application never waits ----------------------------------------------------------- */

static size_t heap_in_use(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33)) &&          \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    struct mallinfo2 mi = mallinfo2();
    return mi.uordblks + mi.hblkhd;
#else
    return 0; /* unknown: the memory bound is then not checked */
#endif
}

static void test_stuck_receiver_never_blocks_the_application(void)
{
    reset_receiver(202);
    const http_step steps[] = {{.is_hold = true}};
    http_receiver_script(&receiver_202, steps, 1);
    tw_reporter_options *o = options_for(&receiver_202, &jaeger);
    tw_reporter_options_set_max_queue_size(o, 1000);
    tw_reporter_options_set_http_timeouts_ms(o, 1000, 60000);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&jaeger, o, false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans(t, 10, "first batch");
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 1), TW_E_TIMEOUT); /* the reporter thread is stuck */
    CU_ASSERT_FATAL(http_receiver_wait_holding(&receiver_202, 1, 5000));

    /* While the only request is held, the application reports 100,000
     * spans: all are taken (1,000 queued, the rest counted as dropped) and
     * the request is still held afterwards, so no report() waited for it. */
    size_t heap_before = heap_in_use();
    gint64 start = g_get_monotonic_time();
    finish_spans(t, 100000, "while stuck");
    gint64 elapsed_ms = (g_get_monotonic_time() - start) / 1000;
    size_t heap_after = heap_in_use();
    CU_ASSERT_EQUAL(http_receiver_count(&receiver_202), 0);
    CU_ASSERT_EQUAL(http_receiver_arrived(&receiver_202), 1);
    CU_ASSERT(elapsed_ms < 8000);
    CU_ASSERT(counter(r, TW_COUNTER_QUEUE_LENGTH) <= 1000);
    CU_ASSERT(counter(r, TW_COUNTER_DROPPED_QUEUE_FULL) >= 99000);
    if (heap_before && heap_after > heap_before)
        CU_ASSERT(heap_after - heap_before < (size_t)16 << 20);

    http_receiver_release(&receiver_202);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 10000), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), 100010);
    CU_ASSERT(counter(r, TW_COUNTER_SPANS_SENT) >= 10);
    assert_accounted(r);
    tw_tracer_free(t);
}

static void test_close_with_a_stuck_receiver_is_bounded(void)
{
    reset_receiver(202);
    const http_step steps[] = {{.is_hold = true}, {.is_hold = true}, {.is_hold = true}};
    http_receiver_script(&receiver_202, steps, 3);
    tw_reporter_options *o = options_for(&receiver_202, &zipkin);
    tw_reporter_options_set_http_timeouts_ms(o, 1000, 300);
    tw_reporter_options_set_max_retries(o, 1);
    tw_reporter_options_set_max_body_size(o, 1000);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&zipkin, o, false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans(t, 200, "many batches"); /* dozens of 1,000-byte bodies */
    gint64 start = g_get_monotonic_time();
    CU_ASSERT_EQUAL(tw_tracer_close(t), TW_OK);
    gint64 elapsed_ms = (g_get_monotonic_time() - start) / 1000;
    /* One retry cycle (2 x 300 ms), then the cool-down fails the rest. */
    CU_ASSERT(elapsed_ms < 3000);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 0);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 200);
    assert_accounted(r);
    http_receiver_release(&receiver_202);
    tw_tracer_free(t);
}

/* After fork() the child must not write into the parent's kept-alive
 * connection, nor send the parent's partial batch: it opens its own
 * connection, and each span arrives once. */
static void test_fork_child_sends_on_its_own_connection(void)
{
    reset_receiver(202);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&jaeger, options_for(&receiver_202, &jaeger), false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans(t, 2, "before");
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK); /* the connection is now open */
    finish_spans(t, 3, "parent");                     /* queued in the parent at the fork */
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        if (!CHILD_CAN_START_THREADS) /* bounded.h: not under TSan */
            _exit(counter(r, TW_COUNTER_SPANS_REPORTED) == 0 ? 0 : 1);
        finish_spans(t, 1, "child");
        tw_status st = tw_tracer_flush(t, 5000);
        bool ok = st == TW_OK && counter(r, TW_COUNTER_SPANS_SENT) == 1 &&
                  counter(r, TW_COUNTER_FAILED_TO_EMIT) == 0;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
    CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    finish_spans(t, 1, "after");
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT(http_receiver_wait(&receiver_202, 3 + CHILD_CAN_START_THREADS, 5000));
    size_t per_value[4] = {0};
    static const char *const values[4] = {"before", "parent", "child", "after"};
    for (size_t i = 0; i < http_receiver_count(&receiver_202); i++) {
        TwireJaegerBatch *b = decode_jaeger(http_receiver_request(&receiver_202, i)->body);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        for (guint k = 0; k < b->spans->len; k++) {
            const TwireJaegerSpan *span = g_ptr_array_index(b->spans, k);
            const TwireJaegerTag *tag = jaeger_tag(span->tags, "payload");
            for (size_t v = 0; tag && v < 4; v++)
                per_value[v] += strcmp(tag->vStr, values[v]) == 0;
        }
        g_object_unref(b);
    }
    CU_ASSERT_EQUAL(per_value[0], 2);
    CU_ASSERT_EQUAL(per_value[1], 3);
    CU_ASSERT_EQUAL(per_value[2], CHILD_CAN_START_THREADS);
    CU_ASSERT_EQUAL(per_value[3], 1);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 6); /* the parent's own */
    /* The parent kept its connection; the child made the only other one. */
    CU_ASSERT_EQUAL(http_receiver_connections_settled(&receiver_202), 1 + CHILD_CAN_START_THREADS);
    assert_accounted(r);
    tw_tracer_free(t);
}

/* ---- a collector that never answers: fork() and close do not wait for it -------------------- */

typedef struct http_call {
    tw_tracer *tracer;
    tw_reporter *reporter;
    tw_status status;
    int child_status;
    int64_t fork_ms; /* how long fork() itself took in the parent */
} http_call;

static void release_receiver(void *arg)
{
    http_receiver_release(arg);
}

static void call_fork_during_send(void *arg)
{
    http_call *c = arg;
    fflush(NULL);
    int64_t start = bounded_now_ms();
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        if (!CHILD_CAN_START_THREADS) /* bounded.h: not under TSan */
            _exit(counter(c->reporter, TW_COUNTER_SPANS_REPORTED) == 0 ? 0 : 1);
        finish_spans(c->tracer, 1, "child");
        tw_status st = tw_tracer_flush(c->tracer, 10000);
        bool ok = st == TW_OK && counter(c->reporter, TW_COUNTER_SPANS_REPORTED) == 1 &&
                  counter(c->reporter, TW_COUNTER_SPANS_SENT) == 1;
        _exit(ok ? 0 : 1);
    }
    c->fork_ms = bounded_now_ms() - start;
    c->child_status = pid < 0 ? 200 : wait_child_bounded(pid, 30000);
}

/* fork() while the reporter thread waits for a collector that never
 * answers: the fork returns at once (it does not wait for the request),
 * the child sends its own span on its own connection, and the parent's
 * request goes on as if nothing happened. */
static void test_fork_during_a_send_that_never_ends_returns_at_once(void)
{
    reset_receiver(202);
    const http_step steps[] = {{.is_hold = true}};
    http_receiver_script(&receiver_202, steps, 1);
    tw_reporter_options *o = options_for(&receiver_202, &jaeger);
    tw_reporter_options_set_http_timeouts_ms(o, 2000, 60000);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&jaeger, o, false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans(t, 3, "held");
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 1), TW_E_TIMEOUT); /* wakes the thread */
    CU_ASSERT_FATAL(http_receiver_wait_holding(&receiver_202, 1, 5000));
    http_call c = {.tracer = t, .reporter = r};
    bool in_time =
        bounded_call(call_fork_during_send, &c, 15000, release_receiver, &receiver_202, NULL);
    CU_ASSERT(in_time);
    CU_ASSERT_EQUAL(c.child_status, 0);
    fprintf(stderr, "(fork() during a held request took %lld ms) ", (long long)c.fork_ms);
    http_receiver_release(&receiver_202);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 10000), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), 3);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 3);
    assert_accounted(r);
    tw_tracer_free(t);
}

static void call_tracer_close(void *arg)
{
    http_call *c = arg;
    c->status = tw_tracer_close(c->tracer);
}

/* Close with a collector that holds every request: the request in flight
 * and every retry the budget would still allow end at the close deadline
 * (500 ms here), and every span not sent is counted as failed. */
static void test_close_with_a_collector_that_never_answers_ends_by_its_deadline(void)
{
    reset_receiver(202);
    const http_step steps[] = {{.is_hold = true}, {.is_hold = true}, {.is_hold = true}};
    http_receiver_script(&receiver_202, steps, 3);
    tw_reporter_options *o = options_for(&receiver_202, &otlp);
    tw_reporter_options_set_http_timeouts_ms(o, 2000, 60000);
    tw_reporter_options_set_retry_backoff_ms(o, 5, 120000);
    CU_ASSERT_EQUAL(tw_reporter_options_set_close_timeout_ms(o, 500), TW_OK);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&otlp, o, false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans(t, 50, "in flight");
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 1), TW_E_TIMEOUT);
    CU_ASSERT_FATAL(http_receiver_wait_holding(&receiver_202, 1, 5000));
    finish_spans(t, 50, "queued");
    http_call c = {.tracer = t, .reporter = r};
    int64_t elapsed_ms = 0;
    bool in_time =
        bounded_call(call_tracer_close, &c, 20000, release_receiver, &receiver_202, &elapsed_ms);
    CU_ASSERT(in_time);
    CU_ASSERT_EQUAL(c.status, TW_OK);
    CU_ASSERT(elapsed_ms >= 450); /* it did wait for the collector... */
    CU_ASSERT(elapsed_ms < 5000); /* ...until its deadline, not the request's 60 s */
    fprintf(stderr, "(close took %lld ms) ", (long long)elapsed_ms);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), 100);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 0);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 100);
    assert_accounted(r);
    http_receiver_release(&receiver_202);
    tw_tracer_free(t);
}

/* ---- options ------------------------------------------------------------------------------- */

static void test_invalid_options_are_refused(void)
{
    tw_reporter_options *o = tw_reporter_options_new();
    CU_ASSERT_EQUAL(tw_reporter_options_set_endpoint(NULL, "http://x"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_endpoint(o, ""), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_basic_auth(o, "a:b", "p"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_basic_auth(o, NULL, "p"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_bearer_token(o, "a\r\nX-Evil: 1"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_add_header(o, "Content-Type", "text/plain"),
                    TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_add_header(o, "content-length", "1"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_add_header(o, "Bad Name", "v"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_add_header(o, "X-A", "v\nw"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_client_cert(o, NULL, "key.pem"), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_body_size(o, 100), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_retries(o, 101), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_http_timeouts_ms(o, 0, 10), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_retry_backoff_ms(o, 0, 10), TW_E_INVALID_ARG);
    for (int i = 0; i < 64; i++)
        CU_ASSERT_EQUAL(tw_reporter_options_add_header(o, "X-Many", "v"), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_add_header(o, "X-Many", "v"), TW_E_LIMIT);

    static const char *const bad_urls[] = {"ftp://host/x", "not a url", "file:///etc/passwd"};
    for (size_t i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(tw_reporter_options_set_endpoint(o, bad_urls[i]), TW_OK);
        for (size_t k = 0; k < N_TRANSPORTS; k++) {
            tw_error *err = NULL;
            CU_ASSERT_PTR_NULL(transports[k]->new_reporter(o, &err));
            CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
            tw_error_free(err);
        }
    }
    CU_ASSERT_EQUAL(tw_reporter_options_set_endpoint(o, NULL), TW_OK); /* the defaults again */
    CU_ASSERT_EQUAL(tw_reporter_options_set_ca_file(o, "/nonexistent/ca.pem"), TW_OK);
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_reporter_otlp_http_new(o, &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "/nonexistent/ca.pem"));
    tw_error_free(err);
    tw_reporter_options_free(o);
}

static void test_defaults_make_reporters_without_connecting(void)
{
    for (size_t k = 0; k < N_TRANSPORTS; k++) {
        tw_error *err = NULL;
        tw_reporter *r = transports[k]->new_reporter(NULL, &err);
        CU_ASSERT_PTR_NOT_NULL(r);
        CU_ASSERT_PTR_NULL(err);
        CU_ASSERT_STRING_EQUAL(tw_reporter_name(r), transports[k]->name);
        tw_reporter_free(r); /* never started: nothing to send */
    }
}

static void test_gzip_option_compresses_bodies(void)
{
    reset_receiver(202);
    tw_reporter_options *o = options_for(&receiver_202, &zipkin);
    CU_ASSERT_EQUAL(tw_reporter_options_set_gzip(o, true), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_gzip(NULL, true), TW_E_INVALID_ARG);
    tw_reporter *r;
    tw_tracer *t = tracer_for(&zipkin, o, false, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans(t, 2, NULL);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_FATAL(http_receiver_wait(&receiver_202, 1, 5000));
    const http_request *q = http_receiver_request(&receiver_202, 0);
    ASSERT_STR(http_request_header(q, "Content-Encoding"), "gzip");
    /* The body inflates (gzip framing) to the JSON list of the two spans. */
    unsigned char plain[65536];
    z_stream z = {0};
    CU_ASSERT_FATAL(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK);
    z.next_in = q->body->data;
    z.avail_in = (uInt)q->body->len;
    z.next_out = plain;
    z.avail_out = sizeof plain - 1;
    CU_ASSERT_EQUAL(inflate(&z, Z_FINISH), Z_STREAM_END);
    plain[z.total_out] = '\0';
    inflateEnd(&z);
    json_t *doc = json_loads((const char *)plain, 0, NULL);
    CU_ASSERT(json_is_array(doc) && json_array_size(doc) == 2);
    json_decref(doc);
    assert_accounted(r);
    tw_tracer_free(t);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("report/http", suite_init, suite_cleanup);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_jaeger_batch_decodes_field_by_field);
    CU_ADD_TEST(suite, test_zipkin_spans_arrive_as_v2_json);
    CU_ADD_TEST(suite, test_otlp_request_arrives_as_proto_json);
    CU_ADD_TEST(suite, test_auth_and_extra_headers_are_sent);
    CU_ADD_TEST(suite, test_gzip_option_compresses_bodies);
    CU_ADD_TEST(suite, test_batches_are_cut_by_the_real_body_size);
    CU_ADD_TEST(suite, test_span_too_large_for_any_body_is_dropped_and_counted);
    CU_ADD_TEST(suite, test_absent_receiver_counts_spans_as_failed);
    CU_ADD_TEST(suite, test_500_then_202_is_retried_and_sent_once);
    CU_ADD_TEST(suite, test_otlp_retries_429_502_503_504);
    CU_ADD_TEST(suite, test_final_status_fails_the_batch_without_retry);
    CU_ADD_TEST(suite, test_400_splits_the_batch_and_is_not_retried);
    CU_ADD_TEST(suite, test_400_to_every_body_fails_each_span_once);
    CU_ADD_TEST(suite, test_connection_closed_mid_request_is_retried);
    CU_ADD_TEST(suite, test_receiver_slower_than_the_timeout_fails_the_batch);
    CU_ADD_TEST(suite, test_accepted_answer_with_a_slow_body_is_not_sent_again);
    CU_ADD_TEST(suite, test_retry_after_is_honoured);
    CU_ADD_TEST(suite, test_429_is_retried_after_its_retry_after);
    CU_ADD_TEST(suite, test_exhausted_retries_fail_next_batches_fast);
    CU_ADD_TEST(suite, test_stuck_receiver_never_blocks_the_application);
    CU_ADD_TEST(suite, test_close_with_a_stuck_receiver_is_bounded);
    CU_ADD_TEST(suite, test_fork_child_sends_on_its_own_connection);
    CU_ADD_TEST(suite, test_fork_during_a_send_that_never_ends_returns_at_once);
    CU_ADD_TEST(suite, test_close_with_a_collector_that_never_answers_ends_by_its_deadline);
    CU_ADD_TEST(suite, test_invalid_options_are_refused);
    CU_ADD_TEST(suite, test_defaults_make_reporters_without_connecting);
}
