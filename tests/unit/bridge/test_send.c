/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_send.c: suite "bridge/send": `tracewire convert
 * --send URL` (bridge/sinks/send.c) against real receivers on loopback: the
 * scriptable libmicrohttpd receiver of the SDK's HTTP tests
 * (tests/unit/report/test_http_receiver.c) and a UDP socket
 * (tests/unit/udp_sink.c).
 *
 * What arrives is decoded independently: gzip bodies with zlib's inflate,
 * Zipkin and OTLP JSON with Jansson, OTLP protobuf with protobuf-c's unpack of
 * the code generated from opentelemetry-proto, the Jaeger collector's Thrift
 * binary Batch and the agent's emitBatch datagrams with the c_glib code
 * generated from Jaeger's IDL. Covered: the format chosen from the URL (and refused
 * URLs), each target's body, content types, gzip on and off, batches cut
 * under max_body_bytes (uncompressed) and datagrams under 65000 bytes,
 * retryable 5xx (500 to collectors, 502 to OTLP) retried then delivered,
 * connection refused (retried, then failed and counted), an outage longer than the retries (waited
 * out: every span delivered), a backend down for good (given up after the failed rounds, the spans
 * never attempted counted apart), a 400 split that isolates one bad span among many (for each HTTP
 * format), more processes than live senders, Jaeger's error tag rule, Zipkin's shared flag, and
 * sent + failed
 * + too_large = spans given.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <glib-object.h>
#include <jansson.h>
#include <thrift/c_glib/protocol/thrift_binary_protocol.h>
#include <thrift/c_glib/transport/thrift_memory_buffer.h>
#include <zlib.h>

#include "harness.h"
#include "jaeger_decode.h"
#include "opentelemetry/proto/collector/trace/v1/trace_service.pb-c.h"
#include "sinks/send.h"
#include "test_http_receiver.h"
#include "twire_jaeger_jaeger_types.h"
#include "udp_sink.h"

#define MARKER "poison-marker"
#define TRACE_LOW 0x5af7183fb1d4cf5fULL

static http_receiver rx;

static int suite_init(void)
{
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    unsetenv("https_proxy");
    unsetenv("HTTPS_PROXY");
    unsetenv("ALL_PROXY");
    unsetenv("all_proxy");
    if (getenv("TW_TEST_LOG"))
        tw_set_logger(tw_log_to_stderr, NULL, TW_LOG_DEBUG);
    tw_test_patch_thrift_finalizers();
    return http_receiver_start(&rx, 202, NULL) ? 0 : 1;
}

static int suite_cleanup(void)
{
    http_receiver_stop(&rx);
    return 0;
}

static void reset_receiver(unsigned int status)
{
    http_receiver_stop(&rx);
    CU_ASSERT_FATAL(http_receiver_start(&rx, status, NULL));
}

/* ---- spans -------------------------------------------------------------------------------- */

static void add_tag(tw__span_data *s, const char *key, const char *value)
{
    tw__tag *t = tw__span_data_push_tag(s);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw_value v = {.type = TW_VALUE_STRING, .len = strlen(value), .as.str = value};
    bool cut = false;
    CU_ASSERT_FATAL(tw__tag_set(&s->arena, t, key, &v, SIZE_MAX, &cut));
    s->n_tags++; /* push_tag leaves the commit to the caller */
}

/* A span of trace TRACE_LOW with id @id, named @op, with a @payload_len
 * byte payload tag (0: none). */
static tw__span_data *make_span(uint64_t id, const char *op, size_t payload_len)
{
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    s->trace_id_low = TRACE_LOW;
    s->span_id = id;
    s->parent_id = id > 1 ? 1 : 0;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = 1700000000000000LL + (int64_t)id;
    s->duration_us = 1000;
    CU_ASSERT_FATAL(tw__span_data_set_operation(s, op, strlen(op)));
    if (payload_len) {
        char *payload = malloc(payload_len + 1);
        memset(payload, 'p', payload_len);
        payload[payload_len] = '\0';
        add_tag(s, "payload", payload);
        free(payload);
    }
    return s;
}

typedef struct span_set {
    twb_span *spans;
    size_t n;
    tw__process procs[80];
    size_t n_procs;
} span_set;

/* @n spans over @n_procs processes ("svc-0".."svc-K", span i in process
 * i % n_procs); span @marker_at (if < n) is named MARKER. */
static void make_set(span_set *set, size_t n, size_t n_procs, size_t payload_len, size_t marker_at)
{
    memset(set, 0, sizeof *set);
    CU_ASSERT_FATAL(n_procs <= 80);
    set->n_procs = n_procs;
    for (size_t p = 0; p < n_procs; p++) {
        char name[32];
        snprintf(name, sizeof name, "svc-%zu", p);
        tw__process_init(&set->procs[p]);
        CU_ASSERT_FATAL(tw__process_set_service(&set->procs[p], name));
        tw_value ip = {.type = TW_VALUE_STRING, .len = 8, .as.str = "10.0.0.1"};
        CU_ASSERT_FATAL(tw__process_add_tag(&set->procs[p], "ip", &ip));
    }
    set->spans = calloc(n, sizeof *set->spans);
    set->n = n;
    for (size_t i = 0; i < n; i++) {
        set->spans[i].data = make_span(i + 1, i == marker_at ? MARKER : "work", payload_len);
        set->spans[i].process = &set->procs[i % n_procs];
    }
}

static void free_set(span_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        tw__span_data_unref(set->spans[i].data);
    free(set->spans);
    for (size_t p = 0; p < set->n_procs; p++)
        tw__process_clear(&set->procs[p]);
}

/* ---- senders ------------------------------------------------------------------------------ */

static twb_send_options fast_options(void)
{
    twb_send_options o;
    twb_send_options_init(&o);
    o.initial_backoff_ms = 5; /* the default timeout (10 s) stays: valgrind is slow */
    return o;
}

static twb_sender *sender_for(const char *path, const twb_send_options *o)
{
    char url[128];
    snprintf(url, sizeof url, "%s%s", rx.base_url, path);
    tw_error *err = NULL;
    twb_sender *s = twb_sender_new(url, o, &err);
    if (err) {
        fprintf(stderr, "%s: %s\n", url, tw_error_message(err));
        tw_error_free(err);
    }
    CU_ASSERT_PTR_NOT_NULL(s);
    return s;
}

static void send_all(twb_sender *s, const span_set *set)
{
    tw_error *err = NULL;
    /* In groups of 7, as the assembler hands over traces. */
    for (size_t i = 0; i < set->n; i += 7) {
        size_t k = set->n - i < 7 ? set->n - i : 7;
        CU_ASSERT_EQUAL(twb_sender_send(s, set->spans + i, k, &err), TW_OK);
    }
    CU_ASSERT_EQUAL(twb_sender_finish(s, &err), TW_OK);
    CU_ASSERT_PTR_NULL(err);
    tw_error_free(err);
}

static void assert_accounted(const twb_sender *s, size_t n)
{
    twb_send_stats st;
    twb_sender_stats(s, &st);
    CU_ASSERT_EQUAL(st.sent + st.failed + st.too_large, n);
}

/* ---- decoding ----------------------------------------------------------------------------- */

/* The body as sent, inflated when Content-Encoding says gzip; NULL (and a
 * failed assertion) when it does not inflate. g_byte_array_unref it. */
static GByteArray *plain_body(const http_request *q)
{
    const char *enc = http_request_header(q, "Content-Encoding");
    GByteArray *out = g_byte_array_new();
    if (!enc) {
        g_byte_array_append(out, q->body->data, q->body->len);
        return out;
    }
    CU_ASSERT_STRING_EQUAL(enc, "gzip");
    z_stream z;
    memset(&z, 0, sizeof z);
    CU_ASSERT_FATAL(inflateInit2(&z, 15 + 16) == Z_OK); /* gzip only */
    z.next_in = q->body->data;
    z.avail_in = q->body->len;
    uint8_t buf[16384];
    int rc;
    do {
        z.next_out = buf;
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        g_byte_array_append(out, buf, (guint)(sizeof buf - z.avail_out));
    } while (rc == Z_OK);
    bool ok = rc == Z_STREAM_END && z.avail_in == 0;
    inflateEnd(&z);
    CU_ASSERT(ok);
    if (!ok) {
        g_byte_array_unref(out);
        return NULL;
    }
    return out;
}

static json_t *decode_json(const GByteArray *body)
{
    json_error_t error;
    json_t *doc = json_loadb((const char *)body->data, body->len, JSON_REJECT_DUPLICATES, &error);
    if (!doc)
        fprintf(stderr, "body is not JSON: %s\n", error.text);
    return doc;
}

/* A bare binary Batch; NULL unless it decodes and uses every byte. */
static TwireJaegerBatch *decode_batch(const GByteArray *body)
{
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

static json_t *otlp_resource_spans(json_t *doc)
{
    return json_array_get(json_object_get(doc, "resourceSpans"), 0);
}

static json_t *otlp_spans(json_t *doc)
{
    json_t *ss = json_array_get(json_object_get(otlp_resource_spans(doc), "scopeSpans"), 0);
    return json_object_get(ss, "spans");
}

static const char *otlp_service(json_t *doc)
{
    json_t *attrs =
        json_object_get(json_object_get(otlp_resource_spans(doc), "resource"), "attributes");
    size_t i;
    json_t *kv;
    json_array_foreach(attrs, i, kv)
    {
        const char *key = json_string_value(json_object_get(kv, "key"));
        if (key && strcmp(key, "service.name") == 0)
            return json_string_value(json_object_get(json_object_get(kv, "value"), "stringValue"));
    }
    return NULL;
}

/* The spans of one request, whatever the format: each span's id and its
 * service (from the span's own endpoint or the body's process/resource).
 * Returns the count, -1 if the body does not decode. */
typedef struct seen_span {
    uint64_t id;
    char service[32];
} seen_span;

static long spans_of(const char *format, const http_request *q, seen_span *out, size_t cap)
{
    GByteArray *body = plain_body(q);
    if (!body)
        return -1;
    long n = -1;
    if (strcmp(format, "otlp-http-proto") == 0) {
        Opentelemetry__Proto__Collector__Trace__V1__ExportTraceServiceRequest *req =
            opentelemetry__proto__collector__trace__v1__export_trace_service_request__unpack(
                NULL, body->len, body->data);
        if (req && req->n_resource_spans == 1 && req->resource_spans[0]->n_scope_spans == 1) {
            const Opentelemetry__Proto__Trace__V1__ResourceSpans *rs = req->resource_spans[0];
            const Opentelemetry__Proto__Trace__V1__ScopeSpans *ss = rs->scope_spans[0];
            const char *svc = "";
            for (size_t a = 0; rs->resource && a < rs->resource->n_attributes; a++) {
                const Opentelemetry__Proto__Common__V1__KeyValue *kv = rs->resource->attributes[a];
                if (strcmp(kv->key, "service.name") == 0 && kv->value)
                    svc = kv->value->string_value;
            }
            n = (long)ss->n_spans;
            for (size_t i = 0; i < ss->n_spans && i < cap; i++) {
                const ProtobufCBinaryData *id = &ss->spans[i]->span_id;
                out[i].id = 0;
                for (size_t b = 0; b < id->len; b++)
                    out[i].id = out[i].id << 8 | id->data[b];
                snprintf(out[i].service, sizeof out[i].service, "%s", svc);
            }
        }
        if (req)
            opentelemetry__proto__collector__trace__v1__export_trace_service_request__free_unpacked(
                req, NULL);
    } else if (strcmp(format, "jaeger-http") == 0) {
        TwireJaegerBatch *b = decode_batch(body);
        if (b) {
            n = (long)b->spans->len;
            for (guint i = 0; i < b->spans->len && i < cap; i++) {
                TwireJaegerSpan *sp = g_ptr_array_index(b->spans, i);
                out[i].id = (uint64_t)sp->spanId;
                snprintf(out[i].service, sizeof out[i].service, "%s", b->process->serviceName);
            }
            g_object_unref(b);
        }
    } else {
        json_t *doc = decode_json(body);
        bool is_zipkin = strcmp(format, "zipkin") == 0;
        json_t *list = is_zipkin ? doc : otlp_spans(doc);
        if (json_is_array(list)) {
            n = (long)json_array_size(list);
            for (size_t i = 0; i < json_array_size(list) && i < cap; i++) {
                json_t *sp = json_array_get(list, i);
                const char *hex =
                    json_string_value(json_object_get(sp, is_zipkin ? "id" : "spanId"));
                out[i].id = hex ? strtoull(hex, NULL, 16) : 0;
                const char *svc = is_zipkin
                                      ? json_string_value(json_object_get(
                                            json_object_get(sp, "localEndpoint"), "serviceName"))
                                      : otlp_service(doc);
                snprintf(out[i].service, sizeof out[i].service, "%s", svc ? svc : "");
            }
        }
        json_decref(doc);
    }
    g_byte_array_unref(body);
    return n;
}

static bool body_has(const http_request *q, const char *needle)
{
    GByteArray *body = plain_body(q);
    bool found = body && memmem(body->data, body->len, needle, strlen(needle)) != NULL;
    if (body)
        g_byte_array_unref(body);
    return found;
}

typedef struct target {
    const char *path;
    const char *format;
    const char *content_type;
    const char *send_format; /* --send-format; NULL: from the URL */
} target;

static const target targets[] = {
    {"/api/v2/spans", "zipkin", "application/json", NULL},
    {"/api/traces", "jaeger-http", "application/x-thrift", NULL},
    {"/v1/traces", "otlp-http", "application/json", NULL},
    {"/v1/traces", "otlp-http-proto", "application/x-protobuf", "otlp-http-proto"},
};
#define N_TARGETS 4

/* Every span of @set arrived exactly once, except @skip (an index, or
 * SIZE_MAX), each with its process's service; only requests for which
 * @accepted says so count. */
static void assert_arrived(const target *t, const span_set *set, size_t skip,
                           bool (*accepted)(const http_request *q))
{
    unsigned char *seen = calloc(set->n, 1);
    seen_span *buf = calloc(set->n, sizeof *buf);
    for (size_t r = 0; r < http_receiver_count(&rx); r++) {
        const http_request *q = http_receiver_request(&rx, r);
        if (accepted && !accepted(q))
            continue;
        long n = spans_of(t->format, q, buf, set->n);
        CU_ASSERT(n > 0);
        for (long i = 0; i < n && (size_t)i < set->n; i++) {
            uint64_t id = buf[i].id;
            CU_ASSERT(id >= 1 && id <= set->n);
            if (id < 1 || id > set->n)
                continue;
            seen[id - 1]++;
            CU_ASSERT_STRING_EQUAL(buf[i].service, set->spans[id - 1].process->service_name);
        }
    }
    for (size_t i = 0; i < set->n; i++) {
        if (seen[i] != (i == skip ? 0 : 1))
            fprintf(stderr, "%s: span %zu seen %u times\n", t->format, i + 1, seen[i]);
        CU_ASSERT_EQUAL(seen[i], i == skip ? 0 : 1);
    }
    free(seen);
    free(buf);
}

/* ---- tests: choosing the format ----------------------------------------------------------- */

static void test_url_picks_the_format(void)
{
    static const struct {
        const char *url, *format;
        unsigned int flags;
    } cases[] = {
        {"http://localhost:9411/api/v2/spans", "zipkin", 0},
        {"https://zipkin.example:443/zipkin/api/v2/spans/", "zipkin", 0},
        {"http://127.0.0.1:14268/api/traces", "jaeger-http", TWB_TARGET_JAEGER_IDS},
        {"http://[::1]:14268/api/traces?format=jaeger.thrift", "jaeger-http",
         TWB_TARGET_JAEGER_IDS},
        {"http://otel:4318/v1/traces", "otlp-http", 0},
        {"udp://localhost:6831", "jaeger-udp", TWB_TARGET_JAEGER_IDS},
        {"udp://127.0.0.1:6832", "jaeger-udp-binary", TWB_TARGET_JAEGER_IDS},
        {"udp://[::1]:6831/", "jaeger-udp", TWB_TARGET_JAEGER_IDS},
        {"udp://agent", "jaeger-udp", TWB_TARGET_JAEGER_IDS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_error *err = NULL;
        twb_sender *s = twb_sender_new(cases[i].url, NULL, &err);
        CU_ASSERT_PTR_NOT_NULL(s);
        CU_ASSERT_PTR_NULL(err);
        if (!s) {
            fprintf(stderr, "%s: %s\n", cases[i].url, err ? tw_error_message(err) : "?");
            tw_error_free(err);
            continue;
        }
        CU_ASSERT_STRING_EQUAL(twb_sender_format(s), cases[i].format);
        CU_ASSERT_EQUAL(twb_sender_target_flags(s), cases[i].flags);
        twb_sender_free(s);
    }
    /* An override, for a path of a proxy that names nothing. */
    twb_send_options o;
    twb_send_options_init(&o);
    o.format = "otlp-http";
    twb_sender *s = twb_sender_new("http://gw:8080/ingest", &o, NULL);
    CU_ASSERT_PTR_NOT_NULL(s);
    if (s)
        CU_ASSERT_STRING_EQUAL(twb_sender_format(s), "otlp-http");
    twb_sender_free(s);
}

static void test_bad_urls_name_the_accepted_forms(void)
{
    static const char *const bad[] = {
        "http://localhost:9411/api/v1/spans", /* Zipkin v1: not a --send target */
        "ftp://host/api/v2/spans",
        "localhost:9411",
        "",
        "udp://:6831",
        "udp://host:0",
        "udp://host:70000",
        "udp://host:6831/path",
        "udp://[::1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tw_error *err = NULL;
        twb_sender *s = twb_sender_new(bad[i], NULL, &err);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_PTR_NOT_NULL(err);
        if (err) {
            CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
            const char *msg = tw_error_message(err);
            CU_ASSERT(strstr(msg, "/api/v2/spans") || strstr(msg, "udp://HOST:PORT"));
        }
        tw_error_free(err);
        twb_sender_free(s);
    }
    twb_send_options o;
    twb_send_options_init(&o);
    o.format = "jaeger-udp"; /* does not go with an http URL */
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(twb_sender_new("http://h:1/api/traces", &o, &err));
    CU_ASSERT(err && strstr(tw_error_message(err), "does not go with"));
    tw_error_free(err);
    err = NULL;
    o.format = "kafka";
    CU_ASSERT_PTR_NULL(twb_sender_new("http://h:1/api/traces", &o, &err));
    CU_ASSERT(err && strstr(tw_error_message(err), "unknown"));
    tw_error_free(err);
    err = NULL;
    twb_send_options_init(&o);
    static const char *const headers[] = {"no colon here"};
    o.headers = headers;
    o.n_headers = 1;
    CU_ASSERT_PTR_NULL(twb_sender_new("http://h:1/api/traces", &o, &err));
    CU_ASSERT(err && strstr(tw_error_message(err), "--header"));
    tw_error_free(err);
}

/* ---- tests: what arrives ------------------------------------------------------------------ */

/* Each HTTP target: 30 spans of 3 processes; the bodies decode, the
 * content type is exact, bodies are gzip by default, and every span arrives
 * once with its process's service. */
static void test_each_target_body_decodes(void)
{
    for (size_t k = 0; k < N_TARGETS; k++) {
        reset_receiver(202);
        span_set set;
        make_set(&set, 30, 3, 0, SIZE_MAX);
        twb_send_options o = fast_options();
        static const char *const headers[] = {"X-Scope-OrgID: tenant-1"};
        o.headers = headers;
        o.n_headers = 1;
        o.user = "alice:s3cret";
        o.format = targets[k].send_format;
        twb_sender *s = sender_for(targets[k].path, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        send_all(s, &set);
        size_t n_req = http_receiver_count(&rx);
        /* Zipkin bodies mix processes; the others have one per process. */
        CU_ASSERT_EQUAL(n_req, strcmp(targets[k].format, "zipkin") == 0 ? 1 : 3);
        for (size_t r = 0; r < n_req; r++) {
            const http_request *q = http_receiver_request(&rx, r);
            CU_ASSERT_STRING_EQUAL(q->method, "POST");
            CU_ASSERT_STRING_EQUAL(q->path, targets[k].path);
            const char *ct = http_request_header(q, "Content-Type");
            CU_ASSERT(ct && strcmp(ct, targets[k].content_type) == 0);
            /* Gzipped, except to a Jaeger collector (1.x does not inflate). */
            const char *ce = http_request_header(q, "Content-Encoding");
            if (strcmp(targets[k].format, "jaeger-http") == 0) {
                CU_ASSERT_PTR_NULL(ce);
            } else {
                CU_ASSERT(ce && strcmp(ce, "gzip") == 0);
            }
            const char *tenant = http_request_header(q, "X-Scope-OrgID");
            CU_ASSERT(tenant && strcmp(tenant, "tenant-1") == 0);
            const char *auth = http_request_header(q, "Authorization");
            CU_ASSERT(auth && strcmp(auth, "Basic YWxpY2U6czNjcmV0") == 0);
        }
        assert_arrived(&targets[k], &set, SIZE_MAX, NULL);
        twb_send_stats st;
        twb_sender_stats(s, &st);
        CU_ASSERT_EQUAL(st.sent, 30);
        CU_ASSERT_EQUAL(st.failed, 0);
        CU_ASSERT_EQUAL(st.batches, n_req);
        size_t wire = 0;
        for (size_t r = 0; r < n_req; r++)
            wire += http_receiver_request(&rx, r)->body->len;
        CU_ASSERT_EQUAL(st.bytes, wire);
        twb_sender_free(s);
        free_set(&set);
    }
}

static void test_gzip_off_sends_plain_bodies(void)
{
    reset_receiver(202);
    span_set set;
    make_set(&set, 10, 1, 200, SIZE_MAX);
    twb_send_options o = fast_options();
    o.is_gzip = false;
    twb_sender *s = sender_for("/v1/traces", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    send_all(s, &set);
    CU_ASSERT_EQUAL_FATAL(http_receiver_count(&rx), 1);
    const http_request *q = http_receiver_request(&rx, 0);
    CU_ASSERT_PTR_NULL(http_request_header(q, "Content-Encoding"));
    json_t *doc = decode_json(q->body);
    CU_ASSERT_EQUAL(json_array_size(otlp_spans(doc)), 10);
    json_decref(doc);
    twb_sender_free(s);
    free_set(&set);
}

/* gzip shrinks repetitive JSON, and the limit applies to the uncompressed
 * body: with a 4 KiB limit, every inflated body is <= 4096 and there are
 * several of them. */
static void test_batches_stay_under_the_uncompressed_limit(void)
{
    for (size_t k = 0; k < N_TARGETS; k++) {
        reset_receiver(202);
        span_set set;
        make_set(&set, 60, 1, 300, SIZE_MAX);
        twb_send_options o = fast_options();
        o.max_body_bytes = 4096;
        o.format = targets[k].send_format;
        twb_sender *s = sender_for(targets[k].path, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        send_all(s, &set);
        size_t n_req = http_receiver_count(&rx);
        CU_ASSERT(n_req >= 5);
        size_t compressed = 0, plain = 0;
        for (size_t r = 0; r < n_req; r++) {
            const http_request *q = http_receiver_request(&rx, r);
            GByteArray *body = plain_body(q);
            CU_ASSERT_PTR_NOT_NULL_FATAL(body);
            CU_ASSERT(body->len <= 4096);
            compressed += q->body->len;
            plain += body->len;
            g_byte_array_unref(body);
        }
        if (strcmp(targets[k].format, "jaeger-http") == 0) {
            CU_ASSERT_EQUAL(compressed, plain); /* never gzipped */
        } else {
            CU_ASSERT(compressed * 3 < plain);
        }
        assert_arrived(&targets[k], &set, SIZE_MAX, NULL);
        assert_accounted(s, set.n);
        twb_sender_free(s);
        free_set(&set);
    }
}

static void test_span_too_large_for_a_body_is_counted(void)
{
    reset_receiver(202);
    span_set set;
    make_set(&set, 3, 1, 10, SIZE_MAX);
    tw__span_data_unref(set.spans[1].data);
    set.spans[1].data = make_span(2, "huge", 8000);
    twb_send_options o = fast_options();
    o.max_body_bytes = 4096;
    twb_sender *s = sender_for("/api/v2/spans", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    send_all(s, &set);
    twb_send_stats st;
    twb_sender_stats(s, &st);
    CU_ASSERT_EQUAL(st.too_large, 1);
    CU_ASSERT_EQUAL(st.sent, 2);
    assert_accounted(s, set.n);
    twb_sender_free(s);
    free_set(&set);
}

/* Zipkin keeps `shared: true` on a shared SERVER half; Jaeger targets get
 * the error tag as bool true plus error.message (wire/jaeger/jaeger_view.h). */
static void test_target_rules_zipkin_shared_and_jaeger_error(void)
{
    reset_receiver(202);
    span_set set;
    make_set(&set, 2, 2, 0, SIZE_MAX);
    set.spans[1].data->shared = true;
    set.spans[1].data->span_id = 1; /* the client's id */
    add_tag(set.spans[1].data, "span.kind", "server");
    add_tag(set.spans[1].data, "error", "connection reset");
    twb_sender *s = sender_for("/api/v2/spans", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    send_all(s, &set);
    CU_ASSERT_EQUAL_FATAL(http_receiver_count(&rx), 1);
    GByteArray *body = plain_body(http_receiver_request(&rx, 0));
    CU_ASSERT_PTR_NOT_NULL_FATAL(body);
    json_t *doc = decode_json(body);
    json_t *server = json_array_get(doc, 1);
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(server, "kind")), "SERVER");
    CU_ASSERT(json_is_true(json_object_get(server, "shared")));
    CU_ASSERT_PTR_NULL(json_object_get(json_array_get(doc, 0), "shared"));
    CU_ASSERT_STRING_EQUAL(
        json_string_value(json_object_get(json_object_get(server, "localEndpoint"), "serviceName")),
        "svc-1");
    CU_ASSERT_STRING_EQUAL(
        json_string_value(json_object_get(json_object_get(json_array_get(doc, 0), "localEndpoint"),
                                          "serviceName")),
        "svc-0");
    json_decref(doc);
    g_byte_array_unref(body);
    twb_sender_free(s);

    reset_receiver(202);
    s = sender_for("/api/traces", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    set.spans[1].data->shared = false;
    set.spans[1].data->span_id = 2;
    tw__process_clear(&set.procs[1]); /* no service: Jaeger's collector name */
    send_all(s, &set);
    CU_ASSERT_EQUAL_FATAL(http_receiver_count(&rx), 2);
    bool found = false;
    for (size_t r = 0; r < 2; r++) {
        body = plain_body(http_receiver_request(&rx, r));
        CU_ASSERT_PTR_NOT_NULL_FATAL(body);
        TwireJaegerBatch *b = decode_batch(body);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        TwireJaegerSpan *sp = g_ptr_array_index(b->spans, 0);
        if (sp->spanId == 2) {
            found = true;
            CU_ASSERT_STRING_EQUAL(b->process->serviceName, "empty-service-name");
            bool has_error = false, has_message = false;
            for (guint i = 0; sp->tags && i < sp->tags->len; i++) {
                TwireJaegerTag *t = g_ptr_array_index(sp->tags, i);
                if (strcmp(t->key, "error") == 0)
                    has_error = t->vType == TWIRE_JAEGER_TAG_TYPE_BOOL && t->vBool;
                if (strcmp(t->key, "error.message") == 0)
                    has_message = strcmp(t->vStr, "connection reset") == 0;
            }
            CU_ASSERT(has_error && has_message);
        }
        g_object_unref(b);
        g_byte_array_unref(body);
    }
    CU_ASSERT(found);
    twb_sender_free(s);
    free_set(&set);
}

/* ---- tests: faults -------------------------------------------------------------------------- */

/* 500 is retried by the collectors (Zipkin, Jaeger), never by OTLP
 * (sdk/transport/http_head.h): OTLP gets a 502 instead. */
static void test_5xx_is_retried_then_delivered(void)
{
    for (size_t k = 0; k < N_TARGETS; k++) {
        reset_receiver(202);
        bool is_otlp = strncmp(targets[k].format, "otlp", 4) == 0;
        const http_step steps[] = {{.status = is_otlp ? 502 : 500}, {.status = 503}};
        http_receiver_script(&rx, steps, 2);
        span_set set;
        make_set(&set, 5, 1, 0, SIZE_MAX);
        twb_send_options o = fast_options();
        o.format = targets[k].send_format;
        twb_sender *s = sender_for(targets[k].path, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        send_all(s, &set);
        CU_ASSERT_EQUAL(http_receiver_count(&rx), 3);
        const http_request *first = http_receiver_request(&rx, 0);
        const http_request *last = http_receiver_request(&rx, 2);
        CU_ASSERT(first && last && first->body->len == last->body->len &&
                  memcmp(first->body->data, last->body->data, first->body->len) == 0);
        twb_send_stats st;
        twb_sender_stats(s, &st);
        CU_ASSERT_EQUAL(st.sent, 5);
        CU_ASSERT_EQUAL(st.failed, 0);
        CU_ASSERT_EQUAL(st.retries, 2);
        CU_ASSERT_EQUAL(st.batches, 1);
        twb_sender_free(s);
        free_set(&set);
    }
}

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

static void test_connection_refused_is_retried_then_failed(void)
{
    char url[96];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/api/v2/spans", closed_port());
    twb_send_options o = fast_options();
    o.max_retries = 2;
    o.give_up_rounds = 1; /* one round of retries, then give up */
    twb_sender *s = twb_sender_new(url, &o, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    span_set set;
    make_set(&set, 9, 2, 0, SIZE_MAX);
    send_all(s, &set);
    twb_send_stats st;
    twb_sender_stats(s, &st);
    CU_ASSERT_EQUAL(st.sent, 0);
    CU_ASSERT_EQUAL(st.failed, 9);
    CU_ASSERT_EQUAL(st.retries, 2);
    CU_ASSERT_EQUAL(st.batches, 0);
    CU_ASSERT_EQUAL(st.bytes, 0);
    CU_ASSERT(st.has_given_up);
    CU_ASSERT_EQUAL(st.unattempted, 0); /* one body, attempted */
    assert_accounted(s, set.n);
    twb_sender_free(s);
    free_set(&set);
}

/* The requests of test_outage_longer_than_the_retries_is_waited_out that
 * were answered 503 (the second to the fifth). */
static bool is_after_the_outage(const http_request *q)
{
    for (size_t i = 1; i <= 4; i++) {
        if (q == http_receiver_request(&rx, i))
            return false;
    }
    return true;
}

/* An outage longer than a batch's retries: the sender waits out the
 * cool-down and tries the same body again, instead of failing it and every
 * batch of the cool-down at once (a reporter's way): every span arrives. */
static void test_outage_longer_than_the_retries_is_waited_out(void)
{
    reset_receiver(202);
    /* Batch 1 goes; batch 2 uses up its retries twice (2 rounds), then goes. */
    const http_step steps[] = {
        {.status = 202}, {.status = 503}, {.status = 503}, {.status = 503}, {.status = 503}};
    http_receiver_script(&rx, steps, 5);
    span_set set;
    make_set(&set, 60, 1, 300, SIZE_MAX);
    twb_send_options o = fast_options();
    o.max_retries = 1;
    o.max_body_bytes = 4096;
    twb_sender *s = sender_for("/api/v2/spans", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    send_all(s, &set);
    twb_send_stats st;
    twb_sender_stats(s, &st);
    CU_ASSERT_EQUAL(st.sent, set.n);
    CU_ASSERT_EQUAL(st.failed, 0);
    CU_ASSERT_FALSE(st.has_given_up);
    CU_ASSERT(st.batches >= 5);
    CU_ASSERT_EQUAL(st.requests, st.batches + 4);
    CU_ASSERT_EQUAL_FATAL(http_receiver_count(&rx), st.requests);
    /* The cool-down (at least 1 s) between the rounds, and the same body. */
    const http_request *a = http_receiver_request(&rx, 2), *b = http_receiver_request(&rx, 3);
    CU_ASSERT(b->arrival_us - a->arrival_us >= 950 * 1000);
    CU_ASSERT(a->body->len == b->body->len &&
              memcmp(a->body->data, b->body->data, a->body->len) == 0);
    assert_arrived(&targets[0], &set, SIZE_MAX, is_after_the_outage);
    twb_sender_free(s);
    free_set(&set);
}

/* A backend down for good: after give_up_rounds failed rounds in a row the
 * sender gives up; what it never attempted is counted apart. */
static void test_give_up_after_failed_rounds_counts_the_unattempted(void)
{
    reset_receiver(503);
    span_set set;
    make_set(&set, 60, 1, 300, SIZE_MAX);
    twb_send_options o = fast_options();
    o.max_retries = 0;
    o.give_up_rounds = 2;
    o.max_body_bytes = 4096;
    twb_sender *s = sender_for("/api/v2/spans", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    gint64 start = g_get_monotonic_time();
    send_all(s, &set);
    gint64 took_us = g_get_monotonic_time() - start;
    twb_send_stats st;
    twb_sender_stats(s, &st);
    CU_ASSERT(st.has_given_up);
    CU_ASSERT_EQUAL(st.sent, 0);
    CU_ASSERT_EQUAL(st.failed, set.n);
    CU_ASSERT_EQUAL(st.requests, 2);
    CU_ASSERT_EQUAL(http_receiver_count(&rx), 2);
    CU_ASSERT(st.unattempted > 0 && st.unattempted < set.n); /* the first body was attempted */
    CU_ASSERT(took_us >= 950 * 1000 && took_us < 20 * 1000 * 1000); /* one cool-down */
    assert_accounted(s, set.n);
    twb_sender_free(s);
    free_set(&set);
}

/* The receiver refuses (400, with a reason) any body that holds the marker
 * span, as Zipkin does with one malformed span in a list. */
static unsigned int refuse_marker(const http_request *q, void *arg, const char **answer)
{
    (void)arg;
    if (!body_has(q, MARKER))
        return 0;
    *answer = "invalid span: " MARKER " is not allowed here";
    return 400;
}

static bool is_accepted(const http_request *q)
{
    return !body_has(q, MARKER);
}

typedef struct refusals {
    size_t n;
    char span[17];
    char reason[256];
} refusals;

static void on_refused(void *arg, const char *trace_hex, const char *span_hex, const char *reason)
{
    refusals *r = arg;
    r->n++;
    CU_ASSERT_STRING_EQUAL(trace_hex, "5af7183fb1d4cf5f");
    snprintf(r->span, sizeof r->span, "%s", span_hex);
    snprintf(r->reason, sizeof r->reason, "%s", reason);
}

static void test_400_split_isolates_the_bad_span(void)
{
    for (size_t k = 0; k < N_TARGETS; k++) {
        reset_receiver(202);
        http_receiver_set_judge(&rx, refuse_marker, NULL);
        span_set set;
        make_set(&set, 37, 1, 0, 22); /* span id 23 is the bad one */
        twb_send_options o = fast_options();
        refusals got = {0};
        o.on_refused = on_refused;
        o.refused_arg = &got;
        o.format = targets[k].send_format;
        twb_sender *s = sender_for(targets[k].path, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        send_all(s, &set);
        CU_ASSERT_EQUAL(got.n, 1);
        CU_ASSERT_STRING_EQUAL(got.span, "0000000000000017");
        CU_ASSERT(strstr(got.reason, "400") && strstr(got.reason, "is not allowed here"));
        assert_arrived(&targets[k], &set, 22, is_accepted);
        twb_send_stats st;
        twb_sender_stats(s, &st);
        CU_ASSERT_EQUAL(st.sent, 36);
        CU_ASSERT_EQUAL(st.failed, 1);
        CU_ASSERT_EQUAL(st.refused, 1);
        /* The refused bodies hold 37, 19, 9, 5, 2 and 1 spans (halves of
         * n/2 and n - n/2 spans): 5 splits of 2 requests, at most
         * 2 * ceil(log2 37) = 12. */
        CU_ASSERT_EQUAL(st.split_requests, 10);
        CU_ASSERT_EQUAL(http_receiver_count(&rx), 11);
        assert_accounted(s, set.n);
        twb_sender_free(s);
        free_set(&set);
    }
}

/* A backend refusing every body (say, the wrong format on that port): the
 * isolation stops after 64 extra requests for the batch, and every span is
 * failed (some refused on their own, the rest with their part). */
static void test_400_to_everything_is_bounded(void)
{
    reset_receiver(400);
    span_set set;
    make_set(&set, 200, 1, 0, SIZE_MAX);
    twb_send_options o = fast_options();
    refusals got = {0};
    o.on_refused = on_refused;
    o.refused_arg = &got;
    twb_sender *s = sender_for("/v1/traces", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    send_all(s, &set);
    twb_send_stats st;
    twb_sender_stats(s, &st);
    CU_ASSERT_EQUAL(http_receiver_count(&rx), 65);
    CU_ASSERT_EQUAL(st.split_requests, 64);
    CU_ASSERT_EQUAL(st.sent, 0);
    CU_ASSERT_EQUAL(st.failed, 200);
    CU_ASSERT(st.refused > 0 && st.refused < 200);
    CU_ASSERT_EQUAL(got.n, st.refused);
    assert_accounted(s, set.n);
    twb_sender_free(s);
    free_set(&set);
}

/* ---- tests: the spans not delivered (on_undelivered, --undelivered) ----------------------------
 */

typedef struct undelivered_log {
    const span_set *set;
    bool seen[256];
    size_t n, twice, foreign;
} undelivered_log;

static void on_undelivered(void *arg, const twb_span *span)
{
    undelivered_log *u = arg;
    u->n++;
    uint64_t id = span->data->span_id;
    /* The span given, with its own process: the caller writes it out. */
    if (id < 1 || id > u->set->n || u->set->spans[id - 1].data != span->data ||
        u->set->spans[id - 1].process != span->process) {
        u->foreign++;
        return;
    }
    if (u->seen[id - 1])
        u->twice++;
    u->seen[id - 1] = true;
}

static twb_send_options tracking_options(undelivered_log *u, const span_set *set)
{
    twb_send_options o = fast_options();
    memset(u, 0, sizeof *u);
    u->set = set;
    o.on_undelivered = on_undelivered;
    o.undelivered_arg = u;
    return o;
}

/* Each span refused on its own after the split is reported, and only it
 * (every HTTP format). */
static void test_undelivered_is_the_refused_span(void)
{
    for (size_t k = 0; k < N_TARGETS; k++) {
        reset_receiver(202);
        http_receiver_set_judge(&rx, refuse_marker, NULL);
        span_set set;
        make_set(&set, 37, 3, 0, 22); /* span id 23 is the bad one */
        undelivered_log u;
        twb_send_options o = tracking_options(&u, &set);
        o.format = targets[k].send_format;
        twb_sender *s = sender_for(targets[k].path, &o);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        send_all(s, &set);
        CU_ASSERT_EQUAL(u.n, 1);
        CU_ASSERT(u.seen[22]);
        CU_ASSERT_EQUAL(u.foreign + u.twice, 0);
        assert_accounted(s, set.n);
        twb_sender_free(s);
        free_set(&set);
    }
}

/* Given up: every span not sent, attempted or not, is reported once; so is
 * a span too large for a body, and every span of a body refused whole. */
static void test_undelivered_are_the_spans_not_sent(void)
{
    reset_receiver(503);
    span_set set;
    make_set(&set, 60, 2, 300, SIZE_MAX);
    undelivered_log u;
    twb_send_options o = tracking_options(&u, &set);
    o.max_retries = 0;
    o.give_up_rounds = 1;
    o.max_body_bytes = 4096;
    twb_sender *s = sender_for("/api/v2/spans", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    send_all(s, &set);
    twb_send_stats st;
    twb_sender_stats(s, &st);
    CU_ASSERT(st.has_given_up && st.unattempted > 0 && st.unattempted < set.n);
    CU_ASSERT_EQUAL(u.n, set.n);
    CU_ASSERT_EQUAL(u.foreign + u.twice, 0);
    twb_sender_free(s);

    reset_receiver(202);
    tw__span_data_unref(set.spans[5].data);
    set.spans[5].data = make_span(6, "huge", 8000);
    o = tracking_options(&u, &set);
    o.max_body_bytes = 4096;
    s = sender_for("/v1/traces", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    send_all(s, &set);
    CU_ASSERT_EQUAL(u.n, 1);
    CU_ASSERT(u.seen[5]);
    twb_sender_free(s);

    reset_receiver(401); /* a final answer to the whole body, not split */
    o = tracking_options(&u, &set);
    s = sender_for("/api/traces", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    send_all(s, &set);
    CU_ASSERT_EQUAL(u.n, set.n);
    CU_ASSERT_EQUAL(u.foreign + u.twice, 0);
    twb_sender_free(s);
    free_set(&set);
}

/* After a fatal error the run abandons the sender: what is still batched is
 * reported (never sent), and nothing is reported twice or leaks. */
static void test_undelivered_abandoned_spans(void)
{
    reset_receiver(202);
    span_set set;
    make_set(&set, 20, 2, 0, SIZE_MAX);
    undelivered_log u;
    twb_send_options o = tracking_options(&u, &set);
    twb_sender *s = sender_for("/api/traces", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(twb_sender_send(s, set.spans, set.n, &err), TW_OK);
    twb_sender_abandon(s);
    CU_ASSERT_EQUAL(u.n, set.n);
    CU_ASSERT_EQUAL(u.foreign + u.twice, 0);
    CU_ASSERT_EQUAL(http_receiver_count(&rx), 0);
    twb_sender_free(s);
    /* Freed without finish or abandon: the references are dropped. */
    s = sender_for("/api/traces", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_EQUAL(twb_sender_send(s, set.spans, set.n, &err), TW_OK);
    twb_sender_free(s);
    free_set(&set);
}

/* A Jaeger agent does not answer: tracking is refused. */
static void test_undelivered_needs_http(void)
{
    twb_send_options o = fast_options();
    undelivered_log u = {0};
    o.on_undelivered = on_undelivered;
    o.undelivered_arg = &u;
    tw_error *err = NULL;
    twb_sender *s = twb_sender_new("udp://127.0.0.1:6831", &o, &err);
    CU_ASSERT_PTR_NULL(s);
    CU_ASSERT(err && strstr(tw_error_message(err), "--undelivered needs an HTTP --send"));
    tw_error_free(err);
    twb_sender_free(s);
}

/* ---- tests: many processes ------------------------------------------------------------------ */

/* More processes than live senders (64): the least recently used are
 * flushed and freed, and every span still arrives with its own process. */
static void test_more_processes_than_senders(void)
{
    reset_receiver(202);
    span_set set;
    make_set(&set, 160, 80, 0, SIZE_MAX);
    twb_sender *s = sender_for("/api/traces", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(twb_sender_send(s, set.spans, set.n, &err), TW_OK);
    /* Before finish: the least recently used batches went out already. */
    CU_ASSERT(http_receiver_count(&rx) >= 16);
    CU_ASSERT_EQUAL(twb_sender_finish(s, &err), TW_OK);
    assert_arrived(&targets[1], &set, SIZE_MAX, NULL);
    assert_accounted(s, set.n);
    /* One sender keyed by process, so one kept-alive connection for the 80
     * processes (an SDK sender per process used to make one each); a few
     * allow for a connection the receiver closes. */
    size_t connections = http_receiver_connections_settled(&rx);
    CU_ASSERT(connections >= 1 && connections < 8);
    twb_sender_free(s);
    free_set(&set);
}

/* Unsent bodies of all senders together stay under 2 x max_body_bytes: with
 * 10 processes and 4 KiB bodies, bodies go out before finish although no
 * single sender fills one. */
static void test_pending_bodies_are_bounded(void)
{
    reset_receiver(202);
    span_set set;
    make_set(&set, 100, 10, 150, SIZE_MAX);
    twb_send_options o = fast_options();
    o.max_body_bytes = 4096;
    twb_sender *s = sender_for("/v1/traces", &o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    tw_error *err = NULL;
    CU_ASSERT_EQUAL(twb_sender_send(s, set.spans, 40, &err), TW_OK);
    CU_ASSERT(http_receiver_count(&rx) >= 1); /* 40 x ~300 bytes > 8 KiB */
    CU_ASSERT_EQUAL(twb_sender_send(s, set.spans + 40, set.n - 40, &err), TW_OK);
    CU_ASSERT_EQUAL(twb_sender_finish(s, &err), TW_OK);
    assert_arrived(&targets[2], &set, SIZE_MAX, NULL);
    assert_accounted(s, set.n);
    twb_sender_free(s);
    free_set(&set);
}

/* ---- tests: UDP ----------------------------------------------------------------------------- */

typedef struct collector {
    udp_sink *sink;
    size_t want;
} collector;

static void *collect(void *arg)
{
    collector *c = arg;
    udp_sink_collect(c->sink, c->want, 1500);
    return NULL;
}

static void check_udp(const char *format, bool is_binary)
{
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    collector c = {&sink, SIZE_MAX};
    pthread_t thread;
    CU_ASSERT_FATAL(pthread_create(&thread, NULL, collect, &c) == 0);
    char url[64];
    snprintf(url, sizeof url, "udp://127.0.0.1:%u", sink.port);
    twb_send_options o;
    twb_send_options_init(&o);
    o.format = format;
    tw_error *err = NULL;
    twb_sender *s = twb_sender_new(url, &o, &err);
    CU_ASSERT_PTR_NOT_NULL(s);
    tw_error_free(err);
    span_set set;
    make_set(&set, 240, 2, 1000, SIZE_MAX);
    if (s)
        send_all(s, &set);
    pthread_join(thread, NULL);
    unsigned char *seen = calloc(set.n, 1);
    size_t total = 0;
    for (size_t d = 0; d < sink.n; d++) {
        CU_ASSERT(sink.len[d] <= 65000);
        TwireJaegerBatch *b = is_binary
                                  ? tw_test_decode_emit_batch_binary(sink.data[d], sink.len[d])
                                  : tw_test_decode_emit_batch(sink.data[d], sink.len[d]);
        CU_ASSERT_PTR_NOT_NULL(b);
        if (!b)
            continue;
        for (guint i = 0; i < b->spans->len; i++) {
            TwireJaegerSpan *sp = g_ptr_array_index(b->spans, i);
            uint64_t id = (uint64_t)sp->spanId;
            CU_ASSERT_FATAL(id >= 1 && id <= set.n);
            seen[id - 1]++;
            CU_ASSERT_STRING_EQUAL(b->process->serviceName,
                                   set.spans[id - 1].process->service_name);
            total++;
        }
        g_object_unref(b);
    }
    CU_ASSERT_EQUAL(total, set.n);
    for (size_t i = 0; i < set.n; i++)
        CU_ASSERT_EQUAL(seen[i], 1);
    CU_ASSERT(sink.n >= 4); /* 240 KB of payload cannot fit in fewer */
    twb_send_stats st;
    twb_sender_stats(s, &st);
    CU_ASSERT_EQUAL(st.sent, set.n);
    CU_ASSERT_EQUAL(st.batches, sink.n);
    free(seen);
    twb_sender_free(s);
    free_set(&set);
    udp_sink_close(&sink);
}

static void test_udp_compact_datagrams_fit(void)
{
    check_udp(NULL, false); /* an ephemeral port: compact, as for 6831 */
}

static void test_udp_binary_datagrams_fit(void)
{
    check_udp("jaeger-udp-binary", true);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/send", suite_init, suite_cleanup);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_url_picks_the_format);
    CU_ADD_TEST(suite, test_bad_urls_name_the_accepted_forms);
    CU_ADD_TEST(suite, test_each_target_body_decodes);
    CU_ADD_TEST(suite, test_gzip_off_sends_plain_bodies);
    CU_ADD_TEST(suite, test_batches_stay_under_the_uncompressed_limit);
    CU_ADD_TEST(suite, test_span_too_large_for_a_body_is_counted);
    CU_ADD_TEST(suite, test_target_rules_zipkin_shared_and_jaeger_error);
    CU_ADD_TEST(suite, test_5xx_is_retried_then_delivered);
    CU_ADD_TEST(suite, test_connection_refused_is_retried_then_failed);
    CU_ADD_TEST(suite, test_outage_longer_than_the_retries_is_waited_out);
    CU_ADD_TEST(suite, test_give_up_after_failed_rounds_counts_the_unattempted);
    CU_ADD_TEST(suite, test_400_split_isolates_the_bad_span);
    CU_ADD_TEST(suite, test_400_to_everything_is_bounded);
    CU_ADD_TEST(suite, test_undelivered_is_the_refused_span);
    CU_ADD_TEST(suite, test_undelivered_are_the_spans_not_sent);
    CU_ADD_TEST(suite, test_undelivered_abandoned_spans);
    CU_ADD_TEST(suite, test_undelivered_needs_http);
    CU_ADD_TEST(suite, test_more_processes_than_senders);
    CU_ADD_TEST(suite, test_pending_bodies_are_bounded);
    CU_ADD_TEST(suite, test_udp_compact_datagrams_fit);
    CU_ADD_TEST(suite, test_udp_binary_datagrams_fit);
}
