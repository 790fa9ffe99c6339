/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/http/http_capture.c: what the real Zipkin, OTLP/HTTP and
 * Jaeger collector reporters POST, for run_http_interop.sh to validate with
 * independent tools: Zipkin's published OpenAPI schema (zipkin2-api.yaml,
 * through ajv), the protobuf classes generated from opentelemetry-proto
 * (through protobufjs), and Apache Thrift's Python library with the IDL
 * Jaeger publishes (jaeger_thrift_decode.py, as the UDP interop test).
 *
 * Public API only (tracewire/tracewire.h). For each transport, two tracers
 * (128-bit ids with the const sampler on, and 64-bit ids) report to the
 * reporter under test, aimed at a loopback receiver (the unit tests'
 * test_http_receiver.c). The spans cover every tag type (UTF-8 and escapes,
 * invalid UTF-8, int64 extremes, NaN/-0.0/infinity, binary with NULs), each
 * span.kind, peer.* tags, errors set three ways, logs with and without an
 * event field and an empty log, ChildOf and FollowsFrom references, a
 * duration of 0 and a 4,000-byte max body so that batches are cut.
 *
 * Writes DIR/<transport>-NNN.json (.bin for Jaeger: one request body each, in
 * arrival order)
 * and DIR/expected.json: {"<transport>": [{"traceId": 32 hex, "spanId",
 * "name"}, ...]} in finish order, taken from the span contexts, so the
 * validator also checks that every span arrived once with its ids.
 * Exit status: 0, or 1 with the reason on stderr.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "test_http_receiver.h"
#include "tracewire/tracewire.h"

#define MAX_BODY_BYTES 4000
#define WAIT_MS 10000

typedef tw_reporter *(*reporter_new_fn)(const tw_reporter_options *opts, tw_error **err);

typedef struct transport {
    const char *name;
    reporter_new_fn new_reporter;
    const char *path;
    unsigned int status;
    const char *extension;
} transport;

static const transport transports[] = {
    {"zipkin", tw_reporter_zipkin_new, "/api/v2/spans", 202, "json"},
    {"otlp", tw_reporter_otlp_http_new, "/v1/traces", 200, "json"},
    {"jaeger", tw_reporter_jaeger_http_new, "/api/traces", 202, "bin"},
};

static bool failed(const char *what)
{
    fprintf(stderr, "http_capture: %s\n", what);
    return false;
}

/* Records the span's ids and name in @expected before it is finished. */
static void expect(json_t *expected, tw_span *span, const char *name)
{
    char hex[33];
    const tw_span_context *c = tw_span_get_context(span);
    snprintf(hex, sizeof hex, "%016" PRIx64 "%016" PRIx64, tw_span_context_trace_id_high(c),
             tw_span_context_trace_id_low(c));
    json_t *e = json_object();
    json_object_set_new(e, "traceId", json_string(hex));
    snprintf(hex, sizeof hex, "%016" PRIx64, tw_span_context_span_id(c));
    json_object_set_new(e, "spanId", json_string(hex));
    json_object_set_new(e, "name", json_string(name));
    json_array_append_new(expected, e);
}

static void finish(json_t *expected, tw_span *span, const char *name)
{
    expect(expected, span, name);
    tw_span_finish(span);
}

/* @is_json: the JSON encoders repair invalid UTF-8, so it is sent to them;
 * Jaeger's Thrift strings carry it unchanged, and Python's Thrift library
 * (the Jaeger check) refuses to decode such a string. */
static void report_spans(tw_tracer *t, json_t *expected, bool is_json)
{
    static const uint8_t blob[] = {0x00, 0xff, 0x10, 0x00, 0x7f};
    const char *utf8_name = "GET /users/{id} \xc3\xbcnic\xc3\xb6"
                            "de \"quoted\" \\ \t";
    tw_span *root = tw_span_start(t, utf8_name, NULL);
    tw_span_set_tag_str(root, "span.kind", "server");
    tw_span_set_tag_str(root, "http.url", "https://example.com/a?b=c&d=\xe2\x82\xac");
    tw_span_set_tag_str(root, "empty", "");
    if (is_json)
        tw_span_set_tag_str(root, "bad.utf8", "a\xff\xfe z");
    tw_span_set_tag_double(root, "pi", 3.141592653589793);
    tw_span_set_tag_double(root, "negative_zero", -0.0);
    tw_span_set_tag_double(root, "infinity", INFINITY);
    tw_span_set_tag_double(root, "minus_infinity", -INFINITY);
    tw_span_set_tag_double(root, "nan", NAN);
    tw_span_set_tag_double(root, "tiny", 5e-324);
    tw_span_set_tag_bool(root, "cache.hit", false);
    tw_span_set_tag_int64(root, "min", INT64_MIN);
    tw_span_set_tag_int64(root, "max", INT64_MAX);
    tw_span_set_tag_binary(root, "blob", blob, sizeof blob);
    tw_span_set_tag_binary(root, "empty_blob", NULL, 0);
    tw_span_set_tag_str(root, "peer.ipv4", "10.0.0.7");
    tw_span_set_tag_int64(root, "peer.port", 51234);
    tw_span_log_kv(root, "event", "request received", "size", "42", NULL);
    tw_span_log_fields(root, 0, NULL, 0);
    tw_log_field typed[] = {{"attempt", {.type = TW_VALUE_INT64, .as.i64 = 3}},
                            {"ratio", {.type = TW_VALUE_DOUBLE, .as.dbl = 0.25}},
                            {"ok", {.type = TW_VALUE_BOOL, .as.boolean = true}}};
    tw_span_log_fields(root, 0, typed, 3);

    static const char *const kinds[] = {"client", "producer", "consumer", "internal", "other"};
    for (size_t i = 0; i < 5; i++) {
        tw_span *child = tw_span_start_child(t, "call", tw_span_get_context(root));
        tw_span_set_tag_str(child, "span.kind", kinds[i]);
        tw_span_set_tag_str(child, "peer.service", "users-db");
        tw_span_set_tag_str(child, "peer.ipv6", "2001:DB8::42");
        if (i == 0)
            tw_span_set_error(child, "IOError", "connection reset");
        else if (i == 1)
            tw_span_set_tag_str(child, "error", "timeout");
        else if (i == 2)
            tw_span_set_tag_bool(child, "error", false);
        finish(expected, child, "call");
    }

    tw_span_options *so = tw_span_options_new();
    tw_span_options_add_reference(so, TW_REF_FOLLOWS_FROM, tw_span_get_context(root));
    tw_span *follower = tw_span_start(t, "async follow-up", so);
    tw_span_options_reset(so);
    tw_span_options_add_reference(so, TW_REF_CHILD_OF, tw_span_get_context(root));
    tw_span_options_add_reference(so, TW_REF_FOLLOWS_FROM, tw_span_get_context(follower));
    tw_span *joined = tw_span_start(t, "joined", so);
    tw_span_options_free(so);
    expect(expected, joined, "joined");
    tw_span_finish_at(joined, 1); /* before its start: duration 0 */
    finish(expected, follower, "async follow-up");

    for (int i = 0; i < 20; i++) {
        tw_span *busy = tw_span_start_child(t, "busy", tw_span_get_context(root));
        tw_span_set_tag_int64(busy, "i", i);
        tw_span_set_tag_str(busy, "filler", "0123456789abcdef0123456789abcdef");
        finish(expected, busy, "busy");
    }
    finish(expected, root, utf8_name);
}

static tw_tracer *new_tracer(const char *service, bool is_128bit, tw_reporter *reporter)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, service);
    tw_tracer_options_add_tag_str(opts, "deployment", "interop");
    tw_tracer_options_add_tag_int64(opts, "workers", 8);
    tw_tracer_options_set_trace_id_128bit(opts, is_128bit);
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_tracer_options_set_reporter(opts, reporter);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    return t;
}

static bool capture(const transport *tp, const char *dir, json_t *expected)
{
    http_receiver rx;
    if (!http_receiver_start(&rx, tp->status, NULL))
        return failed("cannot start the receiver");
    bool ok = true;
    for (int pass = 0; pass < 2 && ok; pass++) {
        tw_reporter_options *o = tw_reporter_options_new();
        char url[128];
        snprintf(url, sizeof url, "%s%s", rx.base_url, tp->path);
        tw_reporter_options_set_endpoint(o, url);
        tw_reporter_options_set_max_body_size(o, MAX_BODY_BYTES);
        tw_reporter_options_set_flush_interval_ms(o, 600000);
        tw_error *err = NULL;
        tw_reporter *r = tp->new_reporter(o, &err);
        tw_reporter_options_free(o);
        if (!r) {
            fprintf(stderr, "http_capture: %s\n", tw_error_message(err));
            tw_error_free(err);
            ok = false;
            break;
        }
        tw_tracer *t = new_tracer(pass == 0 ? "frontend" : "Backend-Service", pass == 0, r);
        report_spans(t, expected, strcmp(tp->extension, "json") == 0);
        ok = tw_tracer_flush(t, WAIT_MS) == TW_OK;
        uint64_t batches = tw_reporter_counter(r, TW_COUNTER_BATCHES_SENT);
        ok = ok && tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT) == 0 &&
             tw_reporter_counter(r, TW_COUNTER_DROPPED_TOO_LARGE) == 0 && batches > 1;
        if (!ok)
            fprintf(stderr,
                    "http_capture: %s: sent %" PRIu64 ", failed %" PRIu64 ", too large %" PRIu64
                    ", %" PRIu64 " batches: not every span in several batches\n",
                    tp->name, tw_reporter_counter(r, TW_COUNTER_SPANS_SENT),
                    tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT),
                    tw_reporter_counter(r, TW_COUNTER_DROPPED_TOO_LARGE), batches);
        tw_tracer_free(t);
    }
    ok = ok && http_receiver_wait(&rx, 1, WAIT_MS);
    for (size_t i = 0; ok && i < http_receiver_count(&rx); i++) {
        const http_request *q = http_receiver_request(&rx, i);
        char path[512];
        snprintf(path, sizeof path, "%s/%s-%03zu.%s", dir, tp->name, i, tp->extension);
        FILE *f = fopen(path, "wb");
        ok = f && fwrite(q->body->data, 1, q->body->len, f) == q->body->len;
        if (f && fclose(f) != 0)
            ok = false;
        if (!ok)
            failed("cannot write a body");
    }
    http_receiver_stop(&rx);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: http_capture DIR\n");
        return 2;
    }
    json_t *expected = json_object();
    bool ok = true;
    for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]) && ok; i++) {
        json_t *list = json_array();
        json_object_set_new(expected, transports[i].name, list);
        ok = capture(&transports[i], argv[1], list);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/expected.json", argv[1]);
    ok = ok && json_dump_file(expected, path, JSON_INDENT(1)) == 0;
    json_decref(expected);
    return ok ? 0 : 1;
}
