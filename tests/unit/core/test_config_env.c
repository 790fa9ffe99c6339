/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/core/test_config_env.c: suite "core/config_env": the Jaeger
 * environment variables read by tw_tracer_new_from_env(), their defaults,
 * and clear errors naming the variable and value for bad input. The value
 * parsers (config_env.h) are also called directly, as the fuzz target does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config_env.h"
#include "harness.h"
#include "tracewire/tracewire.h"

static const char *const vars[] = {
    "JAEGER_SERVICE_NAME",
    "JAEGER_AGENT_HOST",
    "JAEGER_AGENT_PORT",
    "JAEGER_SAMPLER_TYPE",
    "JAEGER_SAMPLER_PARAM",
    "JAEGER_REPORTER_LOG_SPANS",
    "JAEGER_REPORTER_MAX_QUEUE_SIZE",
    "JAEGER_REPORTER_FLUSH_INTERVAL",
    "JAEGER_REPORTER_MAX_PACKET_SIZE",
    "JAEGER_TAGS",
    "JAEGER_TRACEID_128BIT",
    "TW_TEST_TAG_SOURCE",
    "JAEGER_PROPAGATION",
    "JAEGER_DISABLED",
    "JAEGER_ENDPOINT",
    "JAEGER_USER",
    "JAEGER_PASSWORD",
    "JAEGER_AUTH_TOKEN",
    "JAEGER_SAMPLING_ENDPOINT",
    "JAEGER_SAMPLER_MANAGER_HOST_PORT",
    "JAEGER_SAMPLER_MAX_OPERATIONS",
    "JAEGER_SAMPLER_REFRESH_INTERVAL",
    "JAEGER_REPORTER_ATTEMPT_RECONNECTING_DISABLED",
    "JAEGER_REPORTER_ATTEMPT_RECONNECT_INTERVAL",
    "OTEL_SERVICE_NAME",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "TRACEWIRE_REPORTER",
    "TRACEWIRE_ZIPKIN_ENDPOINT",
    "TRACEWIRE_LOG_FILE",
    "TRACEWIRE_LOG_FILE_MAX_BYTES",
    "TRACEWIRE_LOG_FILE_MAX_FILES",
    "TRACEWIRE_TLS_CA_FILE",
    "TRACEWIRE_TLS_CERT_FILE",
    "TRACEWIRE_TLS_KEY_FILE",
    "TRACEWIRE_MAX_TAGS",
    "TRACEWIRE_MAX_LOGS",
    "TRACEWIRE_MAX_LOG_FIELDS",
    "TRACEWIRE_MAX_VALUE_BYTES",
    "TRACEWIRE_SAMPLER_FIRST_POLL_TIMEOUT",
};

static void clear_env(void)
{
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

/* Expects tw_tracer_new_from_env to fail with a message containing @needle. */
static void expect_error(const char *needle)
{
    tw_error *err = NULL;
    tw_tracer *t = tw_tracer_new_from_env("svc", &err);
    CU_ASSERT_PTR_NULL(t);
    tw_tracer_free(t);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    if (!strstr(tw_error_message(err), needle)) {
        fprintf(stderr, "message \"%s\" lacks \"%s\"\n", tw_error_message(err), needle);
        CU_FAIL("error message does not name the input");
    }
    tw_error_free(err);
    clear_env();
}

static void test_defaults_and_service_fallback(void)
{
    clear_env();
    tw_error *err = NULL;
    tw_tracer *t = tw_tracer_new_from_env(NULL, &err);
    CU_ASSERT_PTR_NULL(t);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "JAEGER_SERVICE_NAME"));
    tw_error_free(err);
    t = tw_tracer_new_from_env("fallback", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(tw_tracer_service_name(t), "fallback");
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(tw_tracer_reporter(t)), "jaeger-udp");
    /* Jaeger's default: 64-bit trace ids. */
    tw_span *s = tw_span_start(t, "x", NULL);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_high(tw_span_get_context(s)), 0);
    tw_span_finish(s);
    tw_tracer_free(t);
}

static void test_variables_are_applied(void)
{
    clear_env();
    setenv("JAEGER_SERVICE_NAME", "from-env", 1);
    setenv("JAEGER_AGENT_HOST", "127.0.0.1", 1);
    setenv("JAEGER_AGENT_PORT", "16831", 1);
    setenv("JAEGER_SAMPLER_TYPE", "CONST", 1); /* matched case-insensitively */
    setenv("JAEGER_SAMPLER_PARAM", "1", 1);
    setenv("JAEGER_REPORTER_LOG_SPANS", "false", 1);
    setenv("JAEGER_REPORTER_FLUSH_INTERVAL", "250ms", 1);
    setenv("JAEGER_REPORTER_MAX_QUEUE_SIZE", "100", 1);
    setenv("JAEGER_REPORTER_MAX_PACKET_SIZE", "1500", 1);
    setenv("JAEGER_TRACEID_128BIT", "true", 1);
    setenv("TW_TEST_TAG_SOURCE", "expanded", 1);
    setenv("JAEGER_TAGS", " a = 1 ,b=${TW_TEST_TAG_SOURCE},c=${TW_TEST_UNSET:dflt},d=${TW_X}", 1);
    tw_error *err = NULL;
    tw_tracer *t = tw_tracer_new_from_env("unused", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(tw_tracer_service_name(t), "from-env");
    tw_value v;
    CU_ASSERT(tw_tracer_process_tag(t, "a", &v) && strcmp(v.as.str, "1") == 0);
    CU_ASSERT(tw_tracer_process_tag(t, "b", &v) && strcmp(v.as.str, "expanded") == 0);
    CU_ASSERT(tw_tracer_process_tag(t, "c", &v) && strcmp(v.as.str, "dflt") == 0);
    CU_ASSERT(tw_tracer_process_tag(t, "d", &v) && strcmp(v.as.str, "") == 0);
    tw_span *s = tw_span_start(t, "x", NULL);
    CU_ASSERT(tw_span_is_sampled(s));
    CU_ASSERT(tw_span_context_trace_id_high(tw_span_get_context(s)) != 0);
    tw_span_finish(s);
    tw_tracer_free(t);
    clear_env();
}

static void test_log_spans_adds_logging_reporter(void)
{
    clear_env();
    setenv("JAEGER_REPORTER_LOG_SPANS", "1", 1);
    tw_tracer *t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(tw_tracer_reporter(t)), "composite");
    tw_tracer_free(t);
    clear_env();
}

static void test_bad_values_name_variable_and_value(void)
{
    clear_env();
    setenv("JAEGER_AGENT_PORT", "70000", 1);
    expect_error("JAEGER_AGENT_PORT=\"70000\"");
    setenv("JAEGER_AGENT_PORT", "12a", 1);
    expect_error("JAEGER_AGENT_PORT=\"12a\"");
    setenv("JAEGER_SAMPLER_TYPE", "sometimes", 1);
    expect_error("JAEGER_SAMPLER_TYPE=\"sometimes\"");
    setenv("JAEGER_SAMPLER_TYPE", "probabilistic", 1);
    setenv("JAEGER_SAMPLER_PARAM", "2", 1);
    expect_error("JAEGER_SAMPLER_PARAM=\"2\"");
    setenv("JAEGER_SAMPLER_PARAM", "lots", 1);
    expect_error("JAEGER_SAMPLER_PARAM=\"lots\"");
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_SAMPLER_PARAM", "0.5", 1);
    expect_error("JAEGER_SAMPLER_PARAM=\"0.5\"");
    setenv("JAEGER_REPORTER_LOG_SPANS", "yes", 1);
    expect_error("JAEGER_REPORTER_LOG_SPANS=\"yes\"");
    setenv("JAEGER_REPORTER_FLUSH_INTERVAL", "soon", 1);
    expect_error("JAEGER_REPORTER_FLUSH_INTERVAL=\"soon\"");
    setenv("JAEGER_REPORTER_FLUSH_INTERVAL", "0", 1);
    expect_error("JAEGER_REPORTER_FLUSH_INTERVAL=\"0\"");
    setenv("JAEGER_REPORTER_MAX_PACKET_SIZE", "100", 1);
    expect_error("JAEGER_REPORTER_MAX_PACKET_SIZE=\"100\"");
    setenv("JAEGER_REPORTER_MAX_QUEUE_SIZE", "-1", 1);
    expect_error("JAEGER_REPORTER_MAX_QUEUE_SIZE=\"-1\"");
    setenv("JAEGER_TAGS", "good=1,bad", 1);
    expect_error("item \"bad\" has no '='");
    setenv("JAEGER_TAGS", "=v", 1);
    expect_error("empty key");
    setenv("JAEGER_TRACEID_128BIT", "maybe", 1);
    expect_error("JAEGER_TRACEID_128BIT=\"maybe\"");
}

static void test_intervals_accept_ms_and_go_durations(void)
{
    struct {
        const char *in;
        unsigned int ms;
    } ok[] = {{"500", 500},   {"500ms", 500},    {"2s", 2000},    {"1m", 60000}, {"1m30s", 90000},
              {"1.5s", 1500}, {"250000us", 250}, {"1h", 3600000}, {"0", 0}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        unsigned int ms = 12345;
        CU_ASSERT(tw__parse_interval_ms("X", ok[i].in, &ms, NULL));
        CU_ASSERT_EQUAL(ms, ok[i].ms);
    }
    const char *bad[] = {"1x", "ms", "-5s", "1 s", "99999999999", "2000h"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned int ms;
        tw_error *err = NULL;
        CU_ASSERT_FALSE(tw__parse_interval_ms("X", bad[i], &ms, &err));
        CU_ASSERT_PTR_NOT_NULL(err);
        tw_error_free(err);
    }
}

static void test_tags_parser_failure_leaves_options_unchanged(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(opts);
    tw_tracer_options_set_service(opts, "svc");
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    CU_ASSERT(tw__parse_tags(opts, " kept = 1 ,,", NULL));
    tw_error *err = NULL;
    /* "added" is parsed (and added) before "bad" fails: it must not stay. */
    CU_ASSERT_FALSE(tw__parse_tags(opts, "added=2,bad", &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "JAEGER_TAGS=\"added=2,bad\""));
    tw_error_free(err);
    CU_ASSERT_FALSE(tw__parse_tags(opts, "x=3, =4", NULL)); /* err may be NULL */
    tw_tracer *t = tw_tracer_new(opts, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw_value v;
    CU_ASSERT(tw_tracer_process_tag(t, "kept", &v) && strcmp(v.as.str, "1") == 0);
    CU_ASSERT_FALSE(tw_tracer_process_tag(t, "added", NULL));
    CU_ASSERT_FALSE(tw_tracer_process_tag(t, "x", NULL));
    tw_tracer_free(t);
    tw_tracer_options_free(opts);
}

/* Names of the tracer's reporters, comma-joined ("a,b" for a composite). */
static void reporter_names(tw_tracer *t, char *buf, size_t size)
{
    tw_reporter *r = tw_tracer_reporter(t);
    size_t n = tw_reporter_composite_count(r);
    buf[0] = '\0';
    for (size_t i = 0; i < (n ? n : 1); i++) {
        tw_reporter *c = n ? tw_reporter_composite_get(r, i) : r;
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s", i ? "," : "", tw_reporter_name(c));
    }
}

static void test_transports_follow_tracewire_reporter(void)
{
    clear_env();
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("TRACEWIRE_REPORTER", " zipkin , OTLP,file,jaeger-udp-binary", 1);
    setenv("TRACEWIRE_LOG_FILE", "/tmp/tracewire-test-config-env.log", 1);
    setenv("TRACEWIRE_ZIPKIN_ENDPOINT", "http://127.0.0.1:9/api/v2/spans", 1);
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9/", 1);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b,x-team=core", 1);
    setenv("JAEGER_REPORTER_LOG_SPANS", "true", 1);
    tw_error *err = NULL;
    tw_tracer *t = tw_tracer_new_from_env("svc", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    char names[256];
    reporter_names(t, names, sizeof names);
    CU_ASSERT_STRING_EQUAL(names, "zipkin,otlp-http,dapper-file,jaeger-udp-binary,logging");
    tw_tracer_free(t);
    unlink("/tmp/tracewire-test-config-env.log");
    clear_env();
    /* JAEGER_ENDPOINT implies the collector when no list is given. */
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_ENDPOINT", "http://127.0.0.1:9/api/traces", 1);
    setenv("JAEGER_AUTH_TOKEN", "secret", 1);
    t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    reporter_names(t, names, sizeof names);
    CU_ASSERT_STRING_EQUAL(names, "jaeger-http");
    tw_tracer_free(t);
    clear_env();
}

/* The OTLP encoding follows OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
 * OTEL_EXPORTER_OTLP_PROTOCOL; the reporter's name says which. */
static void test_otlp_protocol_follows_otel_variables(void)
{
    static const struct {
        const char *traces, *general, *name;
    } cases[] = {{NULL, NULL, "otlp-http"},
                 {NULL, "http/protobuf", "otlp-http-proto"},
                 {"http/protobuf", NULL, "otlp-http-proto"},
                 {"http/json", "http/protobuf", "otlp-http"},
                 {"http/protobuf", "http/json", "otlp-http-proto"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_env();
        setenv("JAEGER_SAMPLER_TYPE", "const", 1);
        setenv("TRACEWIRE_REPORTER", "otlp", 1);
        setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9", 1);
        if (cases[i].traces)
            setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", cases[i].traces, 1);
        if (cases[i].general)
            setenv("OTEL_EXPORTER_OTLP_PROTOCOL", cases[i].general, 1);
        tw_tracer *t = tw_tracer_new_from_env("svc", NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        char names[64];
        reporter_names(t, names, sizeof names);
        CU_ASSERT_STRING_EQUAL(names, cases[i].name);
        tw_tracer_free(t);
    }
    clear_env();
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("TRACEWIRE_REPORTER", "otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
    expect_error("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\": OTLP over gRPC is not supported");
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("TRACEWIRE_REPORTER", "otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/xml", 1);
    expect_error("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=\"http/xml\": unknown protocol");
    /* "otlp" twice is refused whichever encoding the first one took. */
    clear_env();
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("TRACEWIRE_REPORTER", "otlp,otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf", 1);
    expect_error("\"otlp\" twice");
    clear_env();
}

static void test_bad_transport_settings_are_named(void)
{
    clear_env();
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("TRACEWIRE_REPORTER", "jaeger-udp,carrier-pigeon", 1);
    expect_error("unknown transport \"carrier-pigeon\"");
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("TRACEWIRE_REPORTER", "zipkin,zipkin", 1);
    expect_error("\"zipkin\" twice");
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("TRACEWIRE_REPORTER", "file", 1);
    expect_error("TRACEWIRE_LOG_FILE");
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_ENDPOINT", "http://127.0.0.1:9/api/traces", 1);
    setenv("JAEGER_USER", "me", 1);
    expect_error("JAEGER_USER and JAEGER_PASSWORD");
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("TRACEWIRE_REPORTER", "otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "novalue", 1);
    expect_error("OTEL_EXPORTER_OTLP_HEADERS");
    setenv("TRACEWIRE_MAX_TAGS", "0", 1);
    expect_error("TRACEWIRE_MAX_TAGS=\"0\"");
    setenv("TRACEWIRE_TLS_CERT_FILE", "/nonexistent.pem", 1);
    expect_error("TRACEWIRE_TLS_KEY_FILE");
    setenv("JAEGER_SAMPLER_TYPE", "remote", 1);
    setenv("JAEGER_SAMPLER_REFRESH_INTERVAL", "often", 1);
    expect_error("JAEGER_SAMPLER_REFRESH_INTERVAL=\"often\"");
    setenv("JAEGER_DISABLED", "nope", 1);
    expect_error("JAEGER_DISABLED=\"nope\"");
}

static void test_samplers_and_service_from_env(void)
{
    static const struct {
        const char *type, *param, *expected;
    } cases[] = {{"ratelimiting", "2.5", "ratelimiting"},
                 {"adaptive", "10", "adaptive"},
                 {"remote", "0.5", "remote"},
                 {"probabilistic", NULL, "probabilistic"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_env();
        setenv("JAEGER_SAMPLER_TYPE", cases[i].type, 1);
        if (cases[i].param)
            setenv("JAEGER_SAMPLER_PARAM", cases[i].param, 1);
        /* Remote: nothing listens on port 9, so the first poll fails fast. */
        setenv("JAEGER_SAMPLING_ENDPOINT", "http://127.0.0.1:9/sampling", 1);
        setenv("OTEL_SERVICE_NAME", "from-otel", 1);
        tw_tracer *t = tw_tracer_new_from_env("unused", NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(t);
        CU_ASSERT_STRING_EQUAL(tw_tracer_service_name(t), "from-otel");
        tw_span *s = tw_span_start(t, "x", NULL);
        tw_span_finish(s);
        tw_tracer_free(t);
    }
    clear_env();
    setenv("JAEGER_DISABLED", "true", 1);
    setenv("JAEGER_SERVICE_NAME", "jaeger-wins", 1);
    setenv("OTEL_SERVICE_NAME", "otel-loses", 1);
    tw_tracer *t = tw_tracer_new_from_env(NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(tw_tracer_service_name(t), "jaeger-wins");
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(tw_tracer_reporter(t)), "null");
    tw_span *s = tw_span_start(t, "quiet", NULL);
    CU_ASSERT_FALSE(tw_span_is_sampled(s));
    tw_span_finish(s);
    tw_tracer_free(t);
    clear_env();
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("core/config_env", NULL, NULL);
    CU_add_test(suite, "defaults_and_service_fallback", test_defaults_and_service_fallback);
    CU_add_test(suite, "variables_are_applied", test_variables_are_applied);
    CU_add_test(suite, "log_spans_adds_logging_reporter", test_log_spans_adds_logging_reporter);
    CU_add_test(suite, "bad_values_name_variable_and_value",
                test_bad_values_name_variable_and_value);
    CU_add_test(suite, "intervals_accept_ms_and_go_durations",
                test_intervals_accept_ms_and_go_durations);
    CU_add_test(suite, "tags_parser_failure_leaves_options_unchanged",
                test_tags_parser_failure_leaves_options_unchanged);
    CU_add_test(suite, "transports_follow_tracewire_reporter",
                test_transports_follow_tracewire_reporter);
    CU_add_test(suite, "bad_transport_settings_are_named", test_bad_transport_settings_are_named);
    CU_add_test(suite, "otlp_protocol_follows_otel_variables",
                test_otlp_protocol_follows_otel_variables);
    CU_add_test(suite, "samplers_and_service_from_env", test_samplers_and_service_from_env);
}
