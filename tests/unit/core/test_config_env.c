/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/core/test_config_env.c: suite "core/config_env": the Jaeger
 * environment variables read by tw_tracer_new_from_env(), their defaults,
 * and clear errors naming the variable and value for bad input. The value
 * parsers (config_env.h) are also called directly, as the fuzz target does.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "config_env.h"
#include "harness.h"
#include "offline/tag_list.h"
#include "tracewire/tracewire.h"

static const char *const vars[] = {
    "JAEGER_SERVICE_NAME",
    "JAEGER_AGENT_HOST",
    "JAEGER_AGENT_PORT",
    "JAEGER_SAMPLER_TYPE",
    "JAEGER_SAMPLER_PARAM",
    "JAEGER_REPORTER_LOG_SPANS",
    "JAEGER_REPORTER_MAX_QUEUE_SIZE",
    "TRACEWIRE_REPORTER_MAX_QUEUE_BYTES",
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
    "TRACEWIRE_REPORTER_CLOSE_TIMEOUT",
    "TRACEWIRE_LOG_LEVEL",
    "OTEL_LOG_LEVEL",
    "OTEL_SDK_DISABLED",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_TRACES_SAMPLER",
    "OTEL_TRACES_SAMPLER_ARG",
    "OTEL_PROPAGATORS",
    "OTEL_TRACES_EXPORTER",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
    "OTEL_EXPORTER_OTLP_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
    "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
    "OTEL_EXPORTER_OTLP_INSECURE",
    "OTEL_EXPORTER_ZIPKIN_ENDPOINT",
    "OTEL_EXPORTER_ZIPKIN_TIMEOUT",
    "OTEL_BSP_SCHEDULE_DELAY",
    "OTEL_BSP_EXPORT_TIMEOUT",
    "OTEL_BSP_MAX_QUEUE_SIZE",
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE",
    "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT",
    "OTEL_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
    "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_SPAN_EVENT_COUNT_LIMIT",
    "OTEL_SPAN_LINK_COUNT_LIMIT",
    "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT",
    "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT",
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
    expect_error("JAEGER_TAGS=\"=v\": item \"=v\" has an empty key");
    /* An empty item is refused in JAEGER_TAGS and OTEL_RESOURCE_ATTRIBUTES
     * alike, wherever it is, blank or not (the W3C baggage grammar has no
     * empty member), as in the other list variables. */
    static const struct {
        const char *value;
        int item;
    } empty[] = {{"a=1,,b=2", 2}, {"a=1,", 2}, {",a=1", 1}, {" ,", 1}, {"a=1, ,b=2", 2}};
    static const char *const tag_vars[] = {"JAEGER_TAGS", "OTEL_RESOURCE_ATTRIBUTES"};
    for (size_t i = 0; i < 2; i++) {
        for (size_t k = 0; k < sizeof empty / sizeof empty[0]; k++) {
            char needle[128];
            setenv(tag_vars[i], empty[k].value, 1);
            snprintf(needle, sizeof needle, "%s=\"%s\": item %d of the list is empty", tag_vars[i],
                     empty[k].value, empty[k].item);
            expect_error(needle);
        }
    }
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

static bool count_tag(void *arg, const char *key, const char *value)
{
    (void)key;
    (void)value;
    (*(size_t *)arg)++;
    return true;
}

/* offline/tag_list.h, the parser `tracewire agent` shares: the name given
 * leads the message, and a refused list passes no item on (the agent would
 * otherwise act on the items before the bad one). */
static void test_tag_list_names_the_caller_and_is_all_or_nothing(void)
{
    size_t n = 0;
    tw_error *err = NULL;
    CU_ASSERT(tw__tag_list_parse("--tag", " a = 1 ,b=x=y", count_tag, &n, &err));
    CU_ASSERT_PTR_NULL(err);
    CU_ASSERT_EQUAL(n, 2);
    n = 0;
    CU_ASSERT_FALSE(tw__tag_list_parse("--tag", "a=1,b=2, =3", count_tag, &n, &err));
    CU_ASSERT_EQUAL(n, 0);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_CONFIG);
    CU_ASSERT_STRING_EQUAL(tw_error_message(err),
                           "--tag=\"a=1,b=2, =3\": item \"=3\" has an empty key");
    tw_error_free(err);
}

static void test_tags_parser_failure_leaves_options_unchanged(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(opts);
    tw_tracer_options_set_service(opts, "svc");
    tw_tracer_options_set_reporter(opts, tw_reporter_memory_new(0));
    CU_ASSERT(tw__parse_tags(opts, " kept = 1 ", NULL));
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
    CU_ASSERT_STRING_EQUAL(names, "zipkin,otlp-http-proto,dapper-file,jaeger-udp-binary,logging");
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
    } cases[] = {{NULL, NULL, "otlp-http-proto"}, /* the specification's default */
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
    expect_error("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\": not supported");
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
    setenv("TRACEWIRE_REPORTER", "zipkin", 1); /* TLS files are for HTTP transports */
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

/* ---- the configuration object, OpenTelemetry's variables, precedence ------------------------ */

static const char *setting(const tw_config *c, const char *name, const char **source);

/* JAEGER_AGENT_HOST: a name, an IPv4 literal or an IPv6 one (with or
 * without brackets, maybe with a %zone) is taken, and an IPv6 one is
 * bracketed in the sampler's URL; anything else is an error naming the
 * variable, a user:password in it masked. */
static void test_agent_host_is_checked(void)
{
    static const struct {
        const char *host, *agent, *endpoint;
    } good[] = {
        {"::1", "[::1]:6831", "http://[::1]:5778/sampling"},
        {"[::1]", "[::1]:6831", "http://[::1]:5778/sampling"},
        {"fe80::1%lo", "[fe80::1%lo]:6831", "http://[fe80::1%25lo]:5778/sampling"},
        {"[2001:db8::7]", "[2001:db8::7]:6831", "http://[2001:db8::7]:5778/sampling"},
        {"10.0.0.7", "10.0.0.7:6831", "http://10.0.0.7:5778/sampling"},
        {"jaeger-agent.example.com.", "jaeger-agent.example.com.:6831",
         "http://jaeger-agent.example.com.:5778/sampling"},
        {"jaeger_agent", "jaeger_agent:6831", "http://jaeger_agent:5778/sampling"},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        clear_env();
        setenv("JAEGER_AGENT_HOST", good[i].host, 1);
        setenv("JAEGER_SAMPLER_TYPE", "remote", 1);
        tw_config *c = tw_config_from_env("svc");
        CU_ASSERT_EQUAL(tw_config_problem_count(c), 0);
        const char *v = setting(c, "jaeger-udp.agent", NULL);
        CU_ASSERT(v && strcmp(v, good[i].agent) == 0);
        v = setting(c, "sampler.endpoint", NULL);
        CU_ASSERT(v && strcmp(v, good[i].endpoint) == 0);
        tw_config_free(c);
    }
    static const char *const bad[] = {
        "a b",    "evil/x?y", "127.0.0.1:9999", "[127.0.0.1]", "[::1", "::1]",     "999.1.1.1",
        "-agent", "agent-.x", "a..b",           "[::1]:6831",  "::g",  "fe80::1%", "host\r\nforged",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        clear_env();
        setenv("JAEGER_AGENT_HOST", bad[i], 1);
        expect_error("JAEGER_AGENT_HOST=\"");
    }
    clear_env();
    setenv("JAEGER_AGENT_HOST", "u:S3CRET@agent", 1);
    setenv("JAEGER_SAMPLER_TYPE", "remote", 1);
    tw_config *c = tw_config_from_env("svc");
    CU_ASSERT_EQUAL(tw_config_problem_count(c), 1);
    const char *text = tw_config_problem(c, 0, NULL);
    CU_ASSERT(text && strstr(text, "JAEGER_AGENT_HOST=\"***@agent\"") && !strstr(text, "S3CRET"));
    for (size_t i = 0; i < tw_config_setting_count(c); i++) {
        const char *n, *v, *src;
        tw_config_setting(c, i, &n, &v, &src);
        CU_ASSERT_PTR_NULL(strstr(v, "S3CRET"));
    }
    tw_config_free(c);
    expect_error("JAEGER_AGENT_HOST=\"***@agent\"");
    /* Everything before the last '@' is masked, also when a "://" comes
     * after it or a space inside it (fuzz_host_check found the first: the
     * URL rule took "agent://x" for the URL and left the rest in clear). */
    static const char *const leaky[] = {"u:S3CRET@agent://x", "u:S3CRET@h:6831/x://y",
                                        "//u:S3CRET@ag://AAA", "http://u:S3CRET x@h",
                                        "http://u:S3CRET/@h"};
    for (size_t i = 0; i < sizeof leaky / sizeof leaky[0]; i++) {
        clear_env();
        setenv("JAEGER_AGENT_HOST", leaky[i], 1);
        c = tw_config_from_env("svc");
        CU_ASSERT_EQUAL(tw_config_problem_count(c), 1);
        text = tw_config_problem(c, 0, NULL);
        if (!text || !strstr(text, "JAEGER_AGENT_HOST=\"***@") || strstr(text, "S3CRET"))
            fprintf(stderr, "%s: %s\n", leaky[i], text ? text : "(no problem)");
        CU_ASSERT(text && strstr(text, "JAEGER_AGENT_HOST=\"***@") && !strstr(text, "S3CRET"));
        tw_config_free(c);
    }
    /* The API takes the same spellings and refuses the same others. */
    tw_reporter_options *ro = tw_reporter_options_new();
    CU_ASSERT_EQUAL(tw_reporter_options_set_agent(ro, "[::1]", 6831), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_agent(ro, "::1", 6831), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_agent(ro, "h:9", 6831), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_agent(ro, "u:p@h", 6831), TW_E_INVALID_ARG);
    tw_reporter_options_free(ro);
}

/* The value and source of setting @name in @c, or NULL. */
static const char *setting(const tw_config *c, const char *name, const char **source)
{
    for (size_t i = 0; i < tw_config_setting_count(c); i++) {
        const char *n, *v, *src;
        tw_config_setting(c, i, &n, &v, &src);
        if (strcmp(n, name) == 0) {
            if (source)
                *source = src;
            return v;
        }
    }
    return NULL;
}

/* Whether some problem of @level contains @needle. */
static bool has_problem(const tw_config *c, tw_log_level level, const char *needle)
{
    for (size_t i = 0; i < tw_config_problem_count(c); i++) {
        tw_log_level l;
        const char *text = tw_config_problem(c, i, &l);
        if (l == level && strstr(text, needle))
            return true;
    }
    return false;
}

static void dump_problems(const tw_config *c)
{
    for (size_t i = 0; i < tw_config_problem_count(c); i++)
        fprintf(stderr, "  problem: %s\n", tw_config_problem(c, i, NULL));
}

static void test_config_lists_settings_with_their_source(void)
{
    clear_env();
    setenv("OTEL_SERVICE_NAME", "shop", 1);
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_SAMPLER_PARAM", "1", 1);
    tw_config *c = tw_config_from_env("fallback");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const char *src = NULL;
    CU_ASSERT_STRING_EQUAL(setting(c, "service.name", &src), "shop");
    CU_ASSERT_STRING_EQUAL(src, "OTEL_SERVICE_NAME");
    CU_ASSERT_STRING_EQUAL(setting(c, "sampler", &src), "const 1");
    CU_ASSERT_STRING_EQUAL(src, "JAEGER_SAMPLER_TYPE, JAEGER_SAMPLER_PARAM");
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter", &src), "jaeger-udp");
    CU_ASSERT_STRING_EQUAL(src, "default");
    CU_ASSERT_STRING_EQUAL(setting(c, "jaeger-udp.agent", &src), "localhost:6831");
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter.queue_spans", NULL), "8192");
    CU_ASSERT_EQUAL(tw_config_problem_count(c), 0);
    dump_problems(c);
    tw_config_free(c);
    /* The argument names the service when no variable does. */
    clear_env();
    c = tw_config_from_env("fallback");
    CU_ASSERT_STRING_EQUAL(setting(c, "service.name", &src), "fallback");
    CU_ASSERT_STRING_EQUAL(src, "argument");
    CU_ASSERT_STRING_EQUAL(setting(c, "sampler", &src), "remote, initial probabilistic 0.001");
    CU_ASSERT_STRING_EQUAL(setting(c, "sampler.endpoint", NULL), "http://127.0.0.1:5778/sampling");
    tw_config_free(c);
    CU_ASSERT_EQUAL(tw_config_setting_count(NULL), 0);
    CU_ASSERT_FALSE(tw_config_setting(NULL, 0, NULL, NULL, NULL));
    CU_ASSERT_PTR_NULL(tw_config_problem(NULL, 0, NULL));
    tw_config_free(NULL);
}

static void test_config_collects_every_problem(void)
{
    clear_env();
    setenv("JAEGER_AGENT_PORT", "70000", 1);
    setenv("OTEL_TRACES_SAMPLER", "sometimes", 1);
    setenv("TRACEWIRE_MAX_TAGS", "0", 1);
    tw_config *c = tw_config_from_env("svc");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(has_problem(c, TW_LOG_ERROR, "JAEGER_AGENT_PORT=\"70000\""));
    CU_ASSERT(has_problem(c, TW_LOG_ERROR, "OTEL_TRACES_SAMPLER=\"sometimes\""));
    CU_ASSERT(has_problem(c, TW_LOG_ERROR, "TRACEWIRE_MAX_TAGS=\"0\""));
    tw_config_free(c);
    /* The tracer fails with the first of them. */
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_tracer_new_from_env("svc", &err));
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "OTEL_TRACES_SAMPLER"));
    tw_error_free(err);
    clear_env();
}

static void test_precedence_conflicts_are_reported(void)
{
    clear_env();
    setenv("JAEGER_SERVICE_NAME", "jaeger-name", 1);
    setenv("OTEL_SERVICE_NAME", "otel-name", 1);
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_SAMPLER_PARAM", "1", 1);
    setenv("OTEL_TRACES_SAMPLER", "always_off", 1);
    setenv("JAEGER_PROPAGATION", "w3c", 1);
    setenv("OTEL_PROPAGATORS", "b3multi", 1);
    setenv("TRACEWIRE_MAX_TAGS", "10", 1);
    setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "20", 1);
    setenv("OTEL_ATTRIBUTE_COUNT_LIMIT", "30", 1); /* overridden within OTEL: no conflict */
    setenv("JAEGER_REPORTER_MAX_QUEUE_SIZE", "100", 1);
    setenv("OTEL_BSP_MAX_QUEUE_SIZE", "100", 1); /* the same value: no conflict */
    tw_config *c = tw_config_from_env("svc");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    const char *src = NULL;
    CU_ASSERT_STRING_EQUAL(setting(c, "service.name", &src), "jaeger-name");
    CU_ASSERT(has_problem(c, TW_LOG_WARN,
                          "OTEL_SERVICE_NAME (otel-name) conflicts with "
                          "JAEGER_SERVICE_NAME (jaeger-name)"));
    CU_ASSERT_STRING_EQUAL(setting(c, "sampler", &src), "const 1");
    CU_ASSERT(has_problem(c, TW_LOG_WARN, "OTEL_TRACES_SAMPLER (const 0, decides every span)"));
    CU_ASSERT_STRING_EQUAL(setting(c, "propagation", &src), "w3c");
    CU_ASSERT(has_problem(c, TW_LOG_WARN,
                          "OTEL_PROPAGATORS (b3) conflicts with "
                          "JAEGER_PROPAGATION (w3c)"));
    CU_ASSERT_STRING_EQUAL(setting(c, "limits.max_tags", &src), "10");
    CU_ASSERT_STRING_EQUAL(src, "TRACEWIRE_MAX_TAGS");
    CU_ASSERT(has_problem(c, TW_LOG_WARN,
                          "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT (20) conflicts with "
                          "TRACEWIRE_MAX_TAGS (10)"));
    CU_ASSERT_FALSE(has_problem(c, TW_LOG_WARN, "OTEL_ATTRIBUTE_COUNT_LIMIT"));
    CU_ASSERT_FALSE(has_problem(c, TW_LOG_WARN, "OTEL_BSP_MAX_QUEUE_SIZE"));
    CU_ASSERT_FALSE(has_problem(c, TW_LOG_ERROR, ""));
    tw_config_free(c);
    /* The conflicts do not stop the tracer, and they reach the logger. */
    tw_tracer *t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(tw_tracer_service_name(t), "jaeger-name");
    tw_tracer_free(t);
    clear_env();
}

static void test_otel_samplers_map_onto_tracewire_samplers(void)
{
    static const struct {
        const char *sampler, *arg, *expected;
    } cases[] = {
        {"always_on", NULL, "const 1, decides every span"},
        {"always_off", NULL, "const 0, decides every span"},
        {"traceidratio", NULL, "probabilistic 1, decides every span"},
        {"traceidratio", "0.25", "probabilistic 0.25, decides every span"},
        {"parentbased_always_on", NULL, "const 1"},
        {"parentbased_always_off", NULL, "const 0"},
        {"PARENTBASED_TRACEIDRATIO", "0.5", "probabilistic 0.5"},
        {"parentbased_jaeger_remote",
         "endpoint=http://agent:5778,pollingIntervalMs=5000,initialSamplingRate=0.25",
         "remote, initial probabilistic 0.25"},
        {"jaeger_remote", NULL, "remote, initial probabilistic 0.001, decides every span"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_env();
        setenv("OTEL_TRACES_SAMPLER", cases[i].sampler, 1);
        if (cases[i].arg)
            setenv("OTEL_TRACES_SAMPLER_ARG", cases[i].arg, 1);
        tw_config *c = tw_config_from_env("svc");
        CU_ASSERT_PTR_NOT_NULL_FATAL(c);
        const char *v = setting(c, "sampler", NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        if (strcmp(v, cases[i].expected) != 0)
            fprintf(stderr, "%s: \"%s\", expected \"%s\"\n", cases[i].sampler, v,
                    cases[i].expected);
        CU_ASSERT_STRING_EQUAL(v, cases[i].expected);
        tw_config_free(c);
    }
    /* jaeger_remote's endpoint and polling interval reach the remote sampler. */
    clear_env();
    setenv("OTEL_TRACES_SAMPLER", "parentbased_jaeger_remote", 1);
    setenv("OTEL_TRACES_SAMPLER_ARG", "endpoint=http://agent:5778,pollingIntervalMs=5000", 1);
    tw_config *c = tw_config_from_env("svc");
    CU_ASSERT_STRING_EQUAL(setting(c, "sampler.endpoint", NULL), "http://agent:5778/sampling");
    CU_ASSERT_STRING_EQUAL(setting(c, "sampler.refresh_interval_ms", NULL), "5000");
    tw_config_free(c);
    /* Refused with a reason. */
    static const struct {
        const char *sampler, *arg, *needle;
    } bad[] = {
        {"traceidratio", "1.5", "OTEL_TRACES_SAMPLER_ARG=\"1.5\""},
        {"traceidratio", "half", "OTEL_TRACES_SAMPLER_ARG=\"half\""},
        {"jaeger_remote", "endpoint=http://collector:14250", "gRPC sampling port"},
        {"jaeger_remote", "pollingIntervalMs=soon", "OTEL_TRACES_SAMPLER_ARG=\"soon\""},
        {"jaeger_remote", "colour=blue", "unknown jaeger_remote argument \"colour\""},
        {"xray", NULL, "OTEL_TRACES_SAMPLER=\"xray\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        clear_env();
        setenv("OTEL_TRACES_SAMPLER", bad[i].sampler, 1);
        if (bad[i].arg)
            setenv("OTEL_TRACES_SAMPLER_ARG", bad[i].arg, 1);
        expect_error(bad[i].needle);
    }
    /* An argument without a sampler is said to have no effect. */
    clear_env();
    setenv("OTEL_TRACES_SAMPLER_ARG", "0.5", 1);
    c = tw_config_from_env("svc");
    CU_ASSERT(has_problem(c, TW_LOG_WARN, "OTEL_TRACES_SAMPLER_ARG is set but has no effect"));
    tw_config_free(c);
    clear_env();
}

/* Starts a trace from an extracted context with the given W3C flags and
 * says whether its first span is sampled. */
static bool child_of_remote_is_sampled(tw_tracer *t, bool remote_sampled)
{
    tw_span_context *remote =
        tw_span_context_new(0, 0x1234, 0x99, 0, remote_sampled ? TW_FLAG_SAMPLED : 0, NULL);
    tw_span *s = tw_span_start_child(t, "x", remote);
    bool sampled = tw_span_is_sampled(s);
    tw_span_finish(s);
    tw_span_context_unref(remote);
    return sampled;
}

static void test_parent_based_or_not_as_otel_says(void)
{
    clear_env();
    setenv("TRACEWIRE_REPORTER", "jaeger-udp", 1);
    setenv("OTEL_TRACES_SAMPLER", "always_on", 1);
    tw_tracer *t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(child_of_remote_is_sampled(t, false)); /* decides every span */
    tw_tracer_free(t);
    setenv("OTEL_TRACES_SAMPLER", "parentbased_always_on", 1);
    t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_FALSE(child_of_remote_is_sampled(t, false)); /* follows the parent */
    CU_ASSERT(child_of_remote_is_sampled(t, true));
    tw_tracer_free(t);
    setenv("OTEL_TRACES_SAMPLER", "always_off", 1);
    t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_FALSE(child_of_remote_is_sampled(t, true));
    tw_tracer_free(t);
    clear_env();
}

static void test_otel_propagators_and_exporters(void)
{
    char names[256];
    clear_env();
    setenv("OTEL_PROPAGATORS", "tracecontext,baggage,b3,b3multi,jaeger", 1);
    setenv("OTEL_TRACES_EXPORTER", "otlp,zipkin,console", 1);
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9", 1);
    setenv("OTEL_EXPORTER_ZIPKIN_ENDPOINT", "http://127.0.0.1:9/api/v2/spans", 1);
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    tw_config *c = tw_config_from_env("svc");
    CU_ASSERT_STRING_EQUAL(setting(c, "propagation", NULL), "w3c,b3-single,b3,jaeger");
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter", NULL), "otlp-http,zipkin,logging (stdout)");
    CU_ASSERT_STRING_EQUAL(setting(c, "otlp-http.endpoint", NULL), "http://127.0.0.1:9/v1/traces");
    CU_ASSERT_STRING_EQUAL(setting(c, "zipkin.endpoint", NULL), "http://127.0.0.1:9/api/v2/spans");
    dump_problems(c);
    CU_ASSERT_EQUAL(tw_config_problem_count(c), 0);
    tw_config_free(c);
    tw_tracer *t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    reporter_names(t, names, sizeof names);
    CU_ASSERT_STRING_EQUAL(names, "otlp-http-proto,zipkin,logging");
    tw_tracer_free(t);

    /* none: no exporter (the null reporter), no propagation. */
    clear_env();
    setenv("OTEL_TRACES_EXPORTER", "none", 1);
    setenv("OTEL_PROPAGATORS", "none", 1);
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_SAMPLER_PARAM", "1", 1);
    t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(tw_tracer_reporter(t)), "null");
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    tw_span *s = tw_span_start(t, "x", NULL);
    CU_ASSERT_EQUAL(tw_tracer_inject(t, tw_span_get_context(s), TW_FORMAT_HTTP_HEADERS, &w), TW_OK);
    CU_ASSERT_EQUAL(tw_headers_count(h), 0);
    tw_span_finish(s);
    tw_headers_free(h);
    tw_tracer_free(t);

    /* OTEL_TRACES_EXPORTER=zipkin picks Zipkin; TRACEWIRE_REPORTER wins over it. */
    clear_env();
    setenv("OTEL_TRACES_EXPORTER", "zipkin", 1);
    setenv("TRACEWIRE_REPORTER", "jaeger-udp", 1);
    c = tw_config_from_env("svc");
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter", NULL), "jaeger-udp");
    CU_ASSERT(has_problem(c, TW_LOG_WARN,
                          "OTEL_TRACES_EXPORTER (zipkin) conflicts with "
                          "TRACEWIRE_REPORTER (jaeger-udp)"));
    tw_config_free(c);
    static const struct {
        const char *var, *value, *needle;
    } bad[] = {
        {"OTEL_TRACES_EXPORTER", "jaeger", "OTEL_TRACES_EXPORTER=\"jaeger\""},
        {"OTEL_TRACES_EXPORTER", "none,otlp", "\"none\" cannot be combined"},
        {"OTEL_PROPAGATORS", "xray", "unknown or unsupported propagator \"xray\""},
        {"OTEL_PROPAGATORS", "none,b3", "\"none\" cannot be combined"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        clear_env();
        setenv(bad[i].var, bad[i].value, 1);
        expect_error(bad[i].needle);
    }
    clear_env();
}

static void test_otlp_exporter_variables(void)
{
    clear_env();
    setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://generic:4318/", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://specific:4318/custom", 1);
    setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-generic=1", 1);
    setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=s%3Dcret, x-team=core", 1);
    setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "3000", 1);
    setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip", 1);
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", 1);
    setenv("OTEL_BSP_SCHEDULE_DELAY", "250", 1);
    setenv("OTEL_BSP_MAX_QUEUE_SIZE", "512", 1);
    setenv("OTEL_BSP_EXPORT_TIMEOUT", "7000", 1);
    tw_config *c = tw_config_from_env("svc");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    dump_problems(c);
    CU_ASSERT_EQUAL(tw_config_problem_count(c), 0);
    const char *src;
    CU_ASSERT_STRING_EQUAL(setting(c, "otlp-http.endpoint", &src), "http://specific:4318/custom");
    CU_ASSERT_STRING_EQUAL(src, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    CU_ASSERT_STRING_EQUAL(setting(c, "otlp-http.headers", &src), "api-key=***, x-team=***");
    CU_ASSERT_STRING_EQUAL(src, "OTEL_EXPORTER_OTLP_TRACES_HEADERS");
    CU_ASSERT_STRING_EQUAL(setting(c, "otlp-http.timeout_ms", NULL), "3000");
    CU_ASSERT_STRING_EQUAL(setting(c, "otlp-http.compression", NULL), "gzip");
    CU_ASSERT_STRING_EQUAL(setting(c, "otlp-http.protocol", NULL), "http/json");
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter.flush_interval_ms", &src), "250");
    CU_ASSERT_STRING_EQUAL(src, "OTEL_BSP_SCHEDULE_DELAY");
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter.queue_spans", NULL), "512");
    CU_ASSERT_STRING_EQUAL(setting(c, "otlp-http.export_timeout_ms", NULL),
                           "7000 (retries stop after it)");
    tw_config_free(c);
    /* http/protobuf is taken (and is the default); gRPC is refused. */
    setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf", 1);
    c = tw_config_from_env("svc");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(tw_config_problem_count(c), 0);
    CU_ASSERT_STRING_EQUAL(setting(c, "otlp-http.protocol", &src), "http/protobuf");
    CU_ASSERT_STRING_EQUAL(src, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL");
    tw_config_free(c);
    clear_env();
    setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", 1);
    expect_error("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\": not supported");
    setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "brotli", 1);
    expect_error("OTEL_EXPORTER_OTLP_COMPRESSION=\"brotli\"");
    setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "/nonexistent.pem", 1);
    expect_error("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without");
    setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent-ca.pem", 1);
    expect_error("/nonexistent-ca.pem");
    clear_env();
}

static void test_resource_attributes_limits_and_disabled(void)
{
    clear_env();
    setenv("OTEL_RESOURCE_ATTRIBUTES",
           "service.name=from-resource,deployment.environment=prod,"
           "team=a%2Cb,region=eu",
           1);
    setenv("JAEGER_TAGS", "region=us", 1);
    setenv("OTEL_SPAN_EVENT_COUNT_LIMIT", "5", 1);
    setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "64", 1);
    setenv("OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT", "3", 1);
    setenv("OTEL_SPAN_LINK_COUNT_LIMIT", "10", 1);
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_SAMPLER_PARAM", "1", 1);
    tw_config *c = tw_config_from_env(NULL);
    CU_ASSERT_STRING_EQUAL(setting(c, "service.name", NULL), "from-resource");
    CU_ASSERT(has_problem(c, TW_LOG_WARN,
                          "OTEL_RESOURCE_ATTRIBUTES (region=eu) conflicts with "
                          "JAEGER_TAGS (region=us)"));
    CU_ASSERT(has_problem(c, TW_LOG_WARN, "OTEL_SPAN_LINK_COUNT_LIMIT is set but has no effect"));
    CU_ASSERT_STRING_EQUAL(setting(c, "limits.max_logs", NULL), "5");
    CU_ASSERT_STRING_EQUAL(setting(c, "limits.max_value_bytes", NULL), "64");
    tw_config_free(c);
    tw_reporter *mem = NULL;
    tw_tracer *t = tw_tracer_new_from_env(NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(tw_tracer_service_name(t), "from-resource");
    tw_value v;
    CU_ASSERT(tw_tracer_process_tag(t, "deployment.environment", &v) &&
              strcmp(v.as.str, "prod") == 0);
    CU_ASSERT(tw_tracer_process_tag(t, "team", &v) && strcmp(v.as.str, "a,b") == 0);
    CU_ASSERT(tw_tracer_process_tag(t, "region", &v) && strcmp(v.as.str, "us") == 0);
    CU_ASSERT_FALSE(tw_tracer_process_tag(t, "service.name", NULL));
    (void)mem;
    tw_tracer_free(t);

    clear_env();
    setenv("OTEL_SDK_DISABLED", "TRUE", 1);
    t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(tw_tracer_reporter(t)), "null");
    tw_tracer_free(t);
    setenv("OTEL_SDK_DISABLED", "yes", 1); /* only true and false */
    expect_error("OTEL_SDK_DISABLED=\"yes\"");
    setenv("OTEL_RESOURCE_ATTRIBUTES", "k=v%zz", 1);
    expect_error("OTEL_RESOURCE_ATTRIBUTES");
    setenv("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "-1", 1);
    expect_error("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT=\"-1\"");
    setenv("OTEL_LOG_LEVEL", "chatty", 1);
    expect_error("OTEL_LOG_LEVEL=\"chatty\"");
    clear_env();
}

static void test_transport_names_are_the_reporter_names(void)
{
    char names[256];
    clear_env();
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("TRACEWIRE_REPORTER", "otlp-http,dapper-file", 1);
    setenv("TRACEWIRE_LOG_FILE", "/tmp/tracewire-test-config-names.log", 1);
    setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", 1);
    tw_tracer *t = tw_tracer_new_from_env("svc", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    reporter_names(t, names, sizeof names);
    CU_ASSERT_STRING_EQUAL(names, "otlp-http,dapper-file");
    tw_tracer_free(t);
    /* The older spellings are the same transports: naming both is a duplicate. */
    setenv("TRACEWIRE_REPORTER", "otlp,otlp-http", 1);
    expect_error("\"otlp-http\" twice");
    unlink("/tmp/tracewire-test-config-names.log");
    clear_env();
}

static void test_unused_variables_are_reported(void)
{
    clear_env();
    setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
    setenv("JAEGER_AGENT_PORT", "6831", 1);
    setenv("JAEGER_AUTH_TOKEN", "tok", 1);
    setenv("TRACEWIRE_LOG_FILE", "/tmp/x.log", 1);
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_SAMPLING_ENDPOINT", "http://127.0.0.1:9/sampling", 1);
    tw_config *c = tw_config_from_env("svc");
    CU_ASSERT(has_problem(c, TW_LOG_WARN, "JAEGER_AGENT_PORT is set but has no effect"));
    CU_ASSERT(has_problem(c, TW_LOG_WARN, "JAEGER_AUTH_TOKEN is set but has no effect"));
    CU_ASSERT(has_problem(c, TW_LOG_WARN, "TRACEWIRE_LOG_FILE is set but has no effect"));
    CU_ASSERT(has_problem(c, TW_LOG_WARN, "JAEGER_SAMPLING_ENDPOINT is set but has no effect"));
    CU_ASSERT_FALSE(has_problem(c, TW_LOG_ERROR, ""));
    tw_config_free(c);
    clear_env();
}

/* ---- every failure names its cause; no secret is ever printed ------------------------------- */

static char captured[16384];
static size_t captured_len;

static void capture_everything(tw_log_level level, const char *message, void *user_data)
{
    (void)level;
    (void)user_data;
    size_t len = strlen(message);
    if (captured_len + len + 2 < sizeof captured) {
        memcpy(captured + captured_len, message, len);
        captured_len += len;
        captured[captured_len++] = '\n';
        captured[captured_len] = '\0';
    }
}

static void test_every_failure_names_its_cause(void)
{
    static const struct {
        const char *var, *value, *needle;
    } cases[] = {
        /* JAEGER_AUTH_TOKEN with a line break failed with "(no error)". */
        {"JAEGER_AUTH_TOKEN", "abc\ndef", "JAEGER_AUTH_TOKEN"},
        {"JAEGER_USER", "a:b", "JAEGER_USER"},
        {"JAEGER_ENDPOINT", "not a url", "JAEGER_ENDPOINT"},
        {"OTEL_EXPORTER_OTLP_HEADERS", "Content-Type=text/plain", "OTEL_EXPORTER_OTLP_HEADERS"},
        {"OTEL_EXPORTER_OTLP_HEADERS", "bad header=x", "OTEL_EXPORTER_OTLP_HEADERS"},
        {"OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://x", "OTEL_EXPORTER_OTLP_ENDPOINT"},
        {"JAEGER_PROPAGATION", "smoke-signals", "JAEGER_PROPAGATION"},
        {"OTEL_BSP_SCHEDULE_DELAY", "0", "OTEL_BSP_SCHEDULE_DELAY"},
        {"TRACEWIRE_LOG_FILE_MAX_BYTES", "12", "TRACEWIRE_LOG_FILE"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_env();
        setenv("JAEGER_SAMPLER_TYPE", "const", 1);
        if (strncmp(cases[i].var, "JAEGER_", 7) == 0 && strcmp(cases[i].var, "JAEGER_PROPAGATION"))
            setenv("JAEGER_ENDPOINT", "http://127.0.0.1:9/api/traces", 1);
        if (strcmp(cases[i].var, "JAEGER_USER") == 0)
            setenv("JAEGER_PASSWORD", "pw", 1);
        if (strncmp(cases[i].var, "OTEL_EXPORTER_OTLP", 18) == 0)
            setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
        if (strncmp(cases[i].var, "TRACEWIRE_LOG_FILE", 18) == 0) {
            setenv("TRACEWIRE_REPORTER", "dapper-file", 1);
            setenv("TRACEWIRE_LOG_FILE", "/tmp/tracewire-test-failure.log", 1);
        }
        setenv(cases[i].var, cases[i].value, 1);
        tw_error *err = NULL;
        tw_tracer *t = tw_tracer_new_from_env("svc", &err);
        CU_ASSERT_PTR_NULL(t);
        tw_tracer_free(t);
        CU_ASSERT_PTR_NOT_NULL(err);
        CU_ASSERT_NOT_EQUAL(tw_error_status(err), TW_OK);
        if (!strstr(tw_error_message(err), cases[i].needle)) {
            fprintf(stderr, "%s: \"%s\" does not name it\n", cases[i].var, tw_error_message(err));
            CU_FAIL("the error does not name its cause");
        }
        tw_error_free(err);
    }
    clear_env();
}

static void test_no_secret_is_ever_printed(void)
{
    static const char secret[] = "PLANTED-s3cr3t";
    static const struct {
        const char *var, *value;
    } cases[] = {
        {"OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer PLANTED-s3cr3t,broken"},
        {"OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=PLANTED-s3cr3t%zz"},
        {"OTEL_EXPORTER_OTLP_HEADERS", "content-type=PLANTED-s3cr3t"},
        {"OTEL_EXPORTER_OTLP_HEADERS", "bad key=PLANTED-s3cr3t"},
        {"JAEGER_ENDPOINT", "htp:/user:PLANTED-s3cr3t@collector:14268/api/traces"},
        {"JAEGER_ENDPOINT", "ftp://user:PLANTED-s3cr3t@collector:14268/api/traces"},
        {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "gopher://u:PLANTED-s3cr3t@h/v1/traces"},
        {"JAEGER_PASSWORD", "PLANTED-s3cr3t"},
        {"JAEGER_AUTH_TOKEN", "PLANTED-s3cr3t\r\n"},
        {"JAEGER_AUTH_TOKEN", "PLANTED-s3cr3t"},
    };
    tw_set_logger(capture_everything, NULL, TW_LOG_DEBUG);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        clear_env();
        captured_len = 0;
        captured[0] = '\0';
        setenv("JAEGER_SAMPLER_TYPE", "const", 1);
        if (strncmp(cases[i].var, "OTEL_", 5) == 0)
            setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
        else
            setenv("JAEGER_ENDPOINT", "http://127.0.0.1:9/api/traces", 1);
        if (strcmp(cases[i].var, "JAEGER_PASSWORD") == 0)
            setenv("JAEGER_USER", "user\n", 1); /* a bad user with a good password */
        setenv(cases[i].var, cases[i].value, 1);
        tw_error *err = NULL;
        tw_tracer *t = tw_tracer_new_from_env("svc", &err);
        tw_tracer_free(t);
        tw_config *c = tw_config_from_env("svc");
        bool leaked = err && strstr(tw_error_message(err), secret);
        for (size_t k = 0; k < tw_config_problem_count(c); k++)
            leaked = leaked || strstr(tw_config_problem(c, k, NULL), secret);
        for (size_t k = 0; k < tw_config_setting_count(c); k++) {
            const char *n, *v, *src;
            tw_config_setting(c, k, &n, &v, &src);
            leaked = leaked || strstr(v, secret);
        }
        leaked = leaked || strstr(captured, secret);
        if (leaked) {
            fprintf(stderr, "%s=%s leaked: error \"%s\", log:\n%s\n", cases[i].var, cases[i].value,
                    err ? tw_error_message(err) : "", captured);
            CU_FAIL("a planted secret was printed");
        }
        tw_config_free(c);
        tw_error_free(err);
    }
    tw_set_logger(tw_log_default, NULL, TW_LOG_WARN);
    clear_env();
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* TRACEWIRE_REPORTER_CLOSE_TIMEOUT bounds close: a collector that takes
 * the connection and never answers (a listening socket nobody accepts on)
 * holds the request in flight until the 200 ms deadline, not the 5 s
 * default. Bad values name the variable. */
static void test_close_timeout_variable_bounds_close(void)
{
    clear_env();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    socklen_t len = sizeof addr;
    CU_ASSERT_FATAL(fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
                    listen(fd, 8) == 0 && getsockname(fd, (struct sockaddr *)&addr, &len) == 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/api/traces", ntohs(addr.sin_port));
    setenv("JAEGER_ENDPOINT", url, 1);
    setenv("JAEGER_SAMPLER_TYPE", "const", 1);
    setenv("JAEGER_SAMPLER_PARAM", "1", 1);
    setenv("TRACEWIRE_REPORTER_CLOSE_TIMEOUT", "200ms", 1);
    /* tracewire config shows the deadline and where it came from. */
    tw_config *c = tw_config_from_env("svc");
    const char *src = NULL;
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter.close_timeout_ms", &src), "200");
    CU_ASSERT_STRING_EQUAL(src, "TRACEWIRE_REPORTER_CLOSE_TIMEOUT");
    CU_ASSERT_EQUAL(tw_config_problem_count(c), 0);
    dump_problems(c);
    tw_config_free(c);
    tw_error *err = NULL;
    tw_tracer *t = tw_tracer_new_from_env("svc", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw_reporter *r = tw_tracer_reporter(t);
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(r), "jaeger-http");
    tw_span_finish(tw_span_start(t, "unanswered", NULL));
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 50), TW_E_TIMEOUT); /* the request is in flight */
    int64_t start = now_ms();
    CU_ASSERT_EQUAL(tw_tracer_close(t), TW_OK);
    int64_t elapsed_ms = now_ms() - start;
    CU_ASSERT(elapsed_ms < 2500);
    CU_ASSERT_EQUAL(tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT), 1);
    tw_tracer_free(t);
    close(fd);
    clear_env();

    setenv("TRACEWIRE_REPORTER_CLOSE_TIMEOUT", "soon", 1);
    expect_error("TRACEWIRE_REPORTER_CLOSE_TIMEOUT=\"soon\"");
    setenv("TRACEWIRE_REPORTER_CLOSE_TIMEOUT", "0", 1);
    expect_error("TRACEWIRE_REPORTER_CLOSE_TIMEOUT=\"0\"");
    setenv("TRACEWIRE_REPORTER_CLOSE_TIMEOUT", "2h", 1);
    expect_error("TRACEWIRE_REPORTER_CLOSE_TIMEOUT=\"2h\"");

    /* Unset, the documented default. */
    c = tw_config_from_env("svc");
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter.close_timeout_ms", &src), "5000");
    CU_ASSERT_STRING_EQUAL(src, "default");
    tw_config_free(c);
}

/* The list variables: a blank value is unset (the default applies, as the
 * OpenTelemetry specification says of an empty value); an empty item is an
 * error naming the variable, the same for all four. A blank
 * OTEL_TRACES_EXPORTER used to give the null reporter, silently. */
static void test_blank_lists_are_unset_and_empty_items_refused(void)
{
    static const struct {
        const char *var, *setting, *dflt, *good;
    } lists[] = {
        {"TRACEWIRE_REPORTER", "reporter", "jaeger-udp", "jaeger-udp,zipkin"},
        {"OTEL_TRACES_EXPORTER", "reporter", "jaeger-udp", "otlp,zipkin"},
        {"JAEGER_PROPAGATION", "propagation", "jaeger", "jaeger,b3"},
        {"OTEL_PROPAGATORS", "propagation", "jaeger", "b3,jaeger"},
    };
    static const char *const blanks[] = {" ", " \t "};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        for (size_t b = 0; b < sizeof blanks / sizeof blanks[0]; b++) {
            clear_env();
            setenv("JAEGER_SAMPLER_TYPE", "const", 1);
            setenv(lists[i].var, blanks[b], 1);
            const char *src = NULL;
            tw_config *c = tw_config_from_env("svc");
            const char *value = setting(c, lists[i].setting, &src);
            CU_ASSERT_STRING_EQUAL(value ? value : "(none)", lists[i].dflt);
            CU_ASSERT_STRING_EQUAL(src ? src : "(none)", "default");
            dump_problems(c);
            CU_ASSERT_EQUAL(tw_config_problem_count(c), 0);
            tw_config_free(c);
            tw_error *err = NULL;
            tw_tracer *t = tw_tracer_new_from_env("svc", &err);
            CU_ASSERT_PTR_NOT_NULL(t);
            const char *name = t ? tw_reporter_name(tw_tracer_reporter(t)) : NULL;
            CU_ASSERT_STRING_EQUAL(name ? name : "(none)", "jaeger-udp");
            tw_tracer_free(t);
            tw_error_free(err);
        }
        /* The well-formed list, with an item emptied in each place. */
        char bad[5][64], needle[512];
        const char *good = lists[i].good, *comma = strchr(good, ',');
        int first = (int)(comma - good);
        snprintf(bad[0], sizeof bad[0], "%.*s,,%s", first, good, comma + 1);
        snprintf(bad[1], sizeof bad[1], "%s,", good);
        snprintf(bad[2], sizeof bad[2], ",%s", good);
        snprintf(bad[3], sizeof bad[3], ",");
        snprintf(bad[4], sizeof bad[4], " , ");
        static const int item[] = {2, 3, 1, 1, 1};
        for (size_t k = 0; k < 5; k++) {
            clear_env();
            setenv("JAEGER_SAMPLER_TYPE", "const", 1);
            setenv(lists[i].var, bad[k], 1);
            snprintf(needle, sizeof needle, "%s=\"%s\": item %d of the list is empty", lists[i].var,
                     bad[k], item[k]);
            expect_error(needle);
        }
        /* The well-formed list is taken. */
        clear_env();
        setenv("JAEGER_SAMPLER_TYPE", "const", 1);
        setenv(lists[i].var, good, 1);
        tw_config *c = tw_config_from_env("svc");
        dump_problems(c);
        CU_ASSERT_EQUAL(tw_config_problem_count(c), 0);
        tw_config_free(c);
    }
    clear_env();
}

static void test_queue_bytes_variable_bounds_the_queue(void)
{
    clear_env();
    const char *src = NULL;
    tw_config *c = tw_config_from_env("svc");
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter.queue_bytes", &src), "8388608");
    CU_ASSERT_STRING_EQUAL(src, "default");
    tw_config_free(c);
    setenv("TRACEWIRE_REPORTER_MAX_QUEUE_BYTES", "1048576", 1);
    c = tw_config_from_env("svc");
    CU_ASSERT_STRING_EQUAL(setting(c, "reporter.queue_bytes", &src), "1048576");
    CU_ASSERT_STRING_EQUAL(src, "TRACEWIRE_REPORTER_MAX_QUEUE_BYTES");
    CU_ASSERT_EQUAL(tw_config_problem_count(c), 0);
    dump_problems(c);
    tw_config_free(c);
    /* Below the smallest bound, above the largest, not a number. */
    setenv("TRACEWIRE_REPORTER_MAX_QUEUE_BYTES", "1000", 1);
    expect_error("TRACEWIRE_REPORTER_MAX_QUEUE_BYTES=\"1000\"");
    setenv("TRACEWIRE_REPORTER_MAX_QUEUE_BYTES", "2000000000000", 1);
    expect_error("TRACEWIRE_REPORTER_MAX_QUEUE_BYTES=\"2000000000000\"");
    setenv("TRACEWIRE_REPORTER_MAX_QUEUE_BYTES", "8MiB", 1);
    expect_error("TRACEWIRE_REPORTER_MAX_QUEUE_BYTES=\"8MiB\"");
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
    CU_add_test(suite, "tag_list_names_the_caller_and_is_all_or_nothing",
                test_tag_list_names_the_caller_and_is_all_or_nothing);
    CU_add_test(suite, "tags_parser_failure_leaves_options_unchanged",
                test_tags_parser_failure_leaves_options_unchanged);
    CU_add_test(suite, "transports_follow_tracewire_reporter",
                test_transports_follow_tracewire_reporter);
    CU_add_test(suite, "bad_transport_settings_are_named", test_bad_transport_settings_are_named);
    CU_add_test(suite, "otlp_protocol_follows_otel_variables",
                test_otlp_protocol_follows_otel_variables);
    CU_add_test(suite, "samplers_and_service_from_env", test_samplers_and_service_from_env);
    CU_add_test(suite, "close_timeout_variable_bounds_close",
                test_close_timeout_variable_bounds_close);
    CU_add_test(suite, "config_lists_settings_with_their_source",
                test_config_lists_settings_with_their_source);
    CU_add_test(suite, "config_collects_every_problem", test_config_collects_every_problem);
    CU_add_test(suite, "precedence_conflicts_are_reported", test_precedence_conflicts_are_reported);
    CU_add_test(suite, "otel_samplers_map_onto_tracewire_samplers",
                test_otel_samplers_map_onto_tracewire_samplers);
    CU_add_test(suite, "parent_based_or_not_as_otel_says", test_parent_based_or_not_as_otel_says);
    CU_add_test(suite, "otel_propagators_and_exporters", test_otel_propagators_and_exporters);
    CU_add_test(suite, "otlp_exporter_variables", test_otlp_exporter_variables);
    CU_add_test(suite, "resource_attributes_limits_and_disabled",
                test_resource_attributes_limits_and_disabled);
    CU_add_test(suite, "transport_names_are_the_reporter_names",
                test_transport_names_are_the_reporter_names);
    CU_add_test(suite, "unused_variables_are_reported", test_unused_variables_are_reported);
    CU_add_test(suite, "every_failure_names_its_cause", test_every_failure_names_its_cause);
    CU_add_test(suite, "no_secret_is_ever_printed", test_no_secret_is_ever_printed);
    CU_add_test(suite, "agent_host_is_checked", test_agent_host_is_checked);
    CU_add_test(suite, "queue_bytes_variable_bounds_the_queue",
                test_queue_bytes_variable_bounds_the_queue);
    CU_add_test(suite, "blank_lists_are_unset_and_empty_items_refused",
                test_blank_lists_are_unset_and_empty_items_refused);
}
