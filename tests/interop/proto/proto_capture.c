/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/proto/proto_capture.c: what the real OTLP/HTTP reporter
 * POSTs in both encodings, for run_proto_interop.sh to check with protobufjs
 * (check_proto.js): the same spans go, through a composite reporter, to an
 * OTLP/JSON reporter and to an OTLP protobuf reporter
 * (tw_reporter_options_set_otlp_protocol), each aimed at its own path of one
 * loopback receiver (the unit tests' test_http_receiver.c).
 *
 * Public API only (tracewire/tracewire.h). Two tracers (128-bit ids, and
 * 64-bit ids under another service) report spans covering every tag type
 * (UTF-8, invalid UTF-8, int64 extremes, NaN, -0.0, infinities, binary with
 * NULs, empty values), each span.kind, peer.* tags, errors set three ways,
 * logs with and without an event field, ChildOf and FollowsFrom references,
 * a duration of 0; a 4,000-byte body limit cuts batches.
 *
 * Writes DIR/otlp-json-NNN.json and DIR/otlp-proto-NNN.bin (one request body
 * each, in arrival order), after checking each request's Content-Type.
 * Exit status: 0, or 1 with the reason on stderr.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_http_receiver.h"
#include "tracewire/tracewire.h"

#define MAX_BODY_BYTES 4000
#define WAIT_MS 10000

static bool failed(const char *what)
{
    fprintf(stderr, "proto_capture: %s\n", what);
    return false;
}

static void report_spans(tw_tracer *t)
{
    static const uint8_t blob[] = {0x00, 0xff, 0x10, 0x00, 0x7f};
    tw_span *root = tw_span_start(t,
                                  "GET /users/{id} \xc3\xbcnic\xc3\xb6"
                                  "de \"q\" \t",
                                  NULL);
    tw_span_set_tag_str(root, "span.kind", "server");
    tw_span_set_tag_str(root, "http.url", "https://example.com/a?b=c&d=\xe2\x82\xac");
    tw_span_set_tag_str(root, "empty", "");
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
        tw_span_finish(child);
    }

    tw_span_options *so = tw_span_options_new();
    tw_span_options_add_reference(so, TW_REF_FOLLOWS_FROM, tw_span_get_context(root));
    tw_span *follower = tw_span_start(t, "async follow-up", so);
    tw_span_options_reset(so);
    tw_span_options_add_reference(so, TW_REF_CHILD_OF, tw_span_get_context(root));
    tw_span_options_add_reference(so, TW_REF_FOLLOWS_FROM, tw_span_get_context(follower));
    tw_span *joined = tw_span_start(t, "joined", so);
    tw_span_options_free(so);
    tw_span_finish_at(joined, 1); /* before its start: duration 0 */
    tw_span_finish(follower);

    for (int i = 0; i < 20; i++) {
        tw_span *busy = tw_span_start_child(t, "busy", tw_span_get_context(root));
        tw_span_set_tag_int64(busy, "i", i);
        tw_span_set_tag_str(busy, "filler", "0123456789abcdef0123456789abcdef");
        tw_span_finish(busy);
    }
    tw_span_finish(root);
}

static tw_reporter *otlp_reporter(const http_receiver *rx, const char *path,
                                  tw_otlp_protocol protocol)
{
    tw_reporter_options *o = tw_reporter_options_new();
    char url[128];
    snprintf(url, sizeof url, "%s%s", rx->base_url, path);
    tw_reporter_options_set_endpoint(o, url);
    tw_reporter_options_set_max_body_size(o, MAX_BODY_BYTES);
    tw_reporter_options_set_flush_interval_ms(o, 600000);
    tw_reporter_options_set_otlp_protocol(o, protocol);
    tw_error *err = NULL;
    tw_reporter *r = tw_reporter_otlp_http_new(o, &err);
    tw_reporter_options_free(o);
    if (!r) {
        fprintf(stderr, "proto_capture: %s\n", tw_error_message(err));
        tw_error_free(err);
    }
    return r;
}

static bool run_pass(const http_receiver *rx, const char *service, bool is_128bit)
{
    tw_reporter *parts[2] = {otlp_reporter(rx, "/json/v1/traces", TW_OTLP_HTTP_JSON),
                             otlp_reporter(rx, "/proto/v1/traces", TW_OTLP_HTTP_PROTOBUF)};
    if (!parts[0] || !parts[1]) {
        tw_reporter_free(parts[0]);
        tw_reporter_free(parts[1]);
        return false;
    }
    if (strcmp(tw_reporter_name(parts[1]), "otlp-http-proto") != 0)
        return failed("the protobuf reporter is not named otlp-http-proto");
    tw_reporter *both = tw_reporter_composite_new(parts, 2);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, service);
    tw_tracer_options_add_tag_str(opts, "deployment", "interop");
    tw_tracer_options_add_tag_int64(opts, "workers", 8);
    tw_tracer_options_set_trace_id_128bit(opts, is_128bit);
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_tracer_options_set_reporter(opts, both);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    if (!t)
        return failed("cannot make a tracer");
    report_spans(t);
    bool ok = tw_tracer_flush(t, WAIT_MS) == TW_OK;
    for (int i = 0; i < 2 && ok; i++) {
        tw_reporter *r = tw_reporter_composite_get(both, (size_t)i);
        uint64_t sent = tw_reporter_counter(r, TW_COUNTER_SPANS_SENT);
        uint64_t batches = tw_reporter_counter(r, TW_COUNTER_BATCHES_SENT);
        ok = sent == tw_reporter_counter(r, TW_COUNTER_SPANS_REPORTED) && batches > 1 &&
             tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT) == 0;
        if (!ok)
            fprintf(stderr, "proto_capture: %s: %" PRIu64 " spans sent in %" PRIu64 " batches\n",
                    tw_reporter_name(r), sent, batches);
    }
    tw_tracer_free(t);
    return ok;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: proto_capture DIR\n");
        return 2;
    }
    http_receiver rx;
    if (!http_receiver_start(&rx, 200, NULL))
        return failed("cannot start the receiver") ? 0 : 1;
    bool ok = run_pass(&rx, "frontend", true) && run_pass(&rx, "Backend-Service", false);
    size_t n_json = 0, n_proto = 0;
    for (size_t i = 0; ok && i < http_receiver_count(&rx); i++) {
        const http_request *q = http_receiver_request(&rx, i);
        bool is_proto = strncmp(q->path, "/proto/", 7) == 0;
        const char *want = is_proto ? "application/x-protobuf" : "application/json";
        const char *ct = http_request_header(q, "Content-Type");
        if (!ct || strcmp(ct, want) != 0) {
            fprintf(stderr, "proto_capture: %s: Content-Type %s, not %s\n", q->path,
                    ct ? ct : "(none)", want);
            ok = false;
            break;
        }
        char path[512];
        snprintf(path, sizeof path, "%s/%s-%03zu.%s", argv[1],
                 is_proto ? "otlp-proto" : "otlp-json", is_proto ? n_proto++ : n_json++,
                 is_proto ? "bin" : "json");
        FILE *f = fopen(path, "wb");
        ok = f && fwrite(q->body->data, 1, q->body->len, f) == q->body->len;
        if (f && fclose(f) != 0)
            ok = false;
        if (!ok)
            failed("cannot write a body");
    }
    if (ok && (n_json < 2 || n_proto < 2))
        ok = failed("expected several bodies of each encoding");
    http_receiver_stop(&rx);
    return ok ? 0 : 1;
}
