/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/contrib/test_microhttpd.c: suite "contrib/microhttpd": SERVER
 * spans started by tw_mhd_start_span() inside a real libmicrohttpd access
 * handler (http_server.c), for requests sent over loopback by libcurl: the
 * caller's context extracted from the headers (Jaeger and, through the
 * tracer's propagator, B3), the server tags and peer address (IPv4 and
 * IPv6), the status and error marks of tw_mhd_finish_span(), a new trace for
 * a request without or with a malformed trace header, the round trip with
 * tw_curl (client span -> server span), and NULL arguments.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "contrib/http_server.h"
#include "fixtures.h"
#include "harness.h"
#include "tracewire/curl.h"
#include "tracewire/microhttpd.h"
#include "tracewire/tracewire.h"

/* What the access handler does, set by each test before its request. */
typedef struct handler_plan {
    tw_tracer *tracer;
    unsigned int status;
    bool is_null_method; /* call tw_mhd_start_span with a NULL method */
    bool got_null_span;  /* set by the handler */
    /* tw_mhd_request_begin instead, with these options: */
    bool use_request;
    const char *route;
    bool activate;
    bool was_active; /* set by the handler: the request's span was the active span */
} handler_plan;

static http_server server_v4;
/* Written by the test thread, read by the server's thread: the socket orders
 * them, but ThreadSanitizer does not know that, so the lock says it. */
static GMutex plan_lock;
static handler_plan plan; /* guarded by plan_lock */
static tw_tracer *tracer_sampled;
static tw_reporter *memory;

static unsigned int start_and_finish(void *data, struct MHD_Connection *connection,
                                     const char *method, const char *url)
{
    handler_plan *shared = data;
    g_mutex_lock(&plan_lock);
    handler_plan p = *shared;
    g_mutex_unlock(&plan_lock);
    if (p.use_request) {
        tw_mhd_options o = {.size = sizeof o, .route = p.route, .activate = p.activate};
        tw_mhd_request *req = tw_mhd_request_begin(p.tracer, connection, method, url, &o);
        bool was_active = tw_tracer_active_span(p.tracer) == tw_mhd_request_span(req);
        /* Work in the handler: a span with no parent of its own. */
        tw_span_finish(tw_span_start(p.tracer, "inside the handler", NULL));
        /* A handler call that does not end the request leaves; the next enters. */
        tw_mhd_request_leave(req);
        bool is_left = tw_tracer_active_span(p.tracer) == NULL;
        if (p.activate)
            tw_mhd_request_enter(req);
        tw_mhd_request_end(req, p.status);
        bool is_clean = tw_tracer_active_context(p.tracer) == NULL; /* nothing left behind */
        g_mutex_lock(&plan_lock);
        shared->was_active = was_active && is_left && is_clean;
        shared->got_null_span = req == NULL;
        g_mutex_unlock(&plan_lock);
        return p.status;
    }
    tw_span *span = tw_mhd_start_span(p.tracer, connection, p.is_null_method ? NULL : method, url);
    tw_mhd_finish_span(span, p.status);
    g_mutex_lock(&plan_lock);
    shared->got_null_span = span == NULL;
    g_mutex_unlock(&plan_lock);
    return p.status;
}

/* Changes the plan for the next request. */
static void set_plan(tw_tracer *tracer, unsigned int status, bool is_null_method)
{
    g_mutex_lock(&plan_lock);
    plan = (handler_plan){.tracer = tracer, .status = status, .is_null_method = is_null_method};
    g_mutex_unlock(&plan_lock);
}

static bool got_null_span(void)
{
    g_mutex_lock(&plan_lock);
    bool is_null = plan.got_null_span;
    g_mutex_unlock(&plan_lock);
    return is_null;
}

static size_t discard_body(char *data, size_t size, size_t n, void *user_data)
{
    (void)data;
    (void)user_data;
    return size * n;
}

/* GET @base_url@path with @headers (may be NULL); returns the client's local
 * port (the server span's peer.port), 0 on failure. */
static long request(const char *base_url, const char *path, const char *const *headers)
{
    CURL *easy = curl_easy_init();
    char url[256];
    snprintf(url, sizeof(url), "%s%s", base_url, path);
    struct curl_slist *list = NULL;
    for (size_t i = 0; headers && headers[i]; i++)
        list = curl_slist_append(list, headers[i]);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard_body);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 10000L);
    long local_port = 0;
    if (curl_easy_perform(easy) == CURLE_OK)
        curl_easy_getinfo(easy, CURLINFO_LOCAL_PORT, &local_port);
    curl_easy_cleanup(easy);
    curl_slist_free_all(list);
    return local_port;
}

static int64_t tag_int(const tw_finished_span *span, const char *key)
{
    tw_value v;
    if (!tw_finished_span_find_tag(span, key, &v) || v.type != TW_VALUE_INT64)
        return -1;
    return v.as.i64;
}

static bool has_tag(const tw_finished_span *span, const char *key)
{
    tw_value v;
    return tw_finished_span_find_tag(span, key, &v);
}

static bool has_log_event(const tw_finished_span *span, const char *event)
{
    for (size_t i = 0; i < tw_finished_span_log_count(span); i++) {
        for (size_t f = 0; f < tw_finished_span_log_field_count(span, i); f++) {
            const char *k = NULL;
            tw_value v;
            if (tw_finished_span_log_field(span, i, f, &k, &v) && strcmp(k, "event") == 0 &&
                v.type == TW_VALUE_STRING && strcmp(v.as.str, event) == 0)
                return true;
        }
    }
    return false;
}

static int suite_init(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    tracer_sampled = tracer_always_sampled(&memory, NULL);
    set_plan(tracer_sampled, 200, false);
    if (!tracer_sampled || !http_server_start(&server_v4, "127.0.0.1", 0, start_and_finish, &plan))
        return 1;
    return 0;
}

static int suite_cleanup(void)
{
    http_server_stop(&server_v4);
    tw_tracer_free(tracer_sampled);
    curl_global_cleanup();
    return 0;
}

static void reset(void)
{
    set_plan(tracer_sampled, 200, false);
    tw_memory_reporter_clear(memory);
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_server_span_child_of_extracted_context_with_tags(void)
{
    reset();
    const char *headers[] = {"uber-trace-id: 00000000000000aa00000000000000bb:00000000000000cc:0:1",
                             NULL};
    long client_port = request(server_v4.base_url, "/orders/1", headers);
    CU_ASSERT(client_port > 0);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
    const tw_finished_span *server = tw_memory_reporter_span(memory, 0);
    CU_ASSERT_STRING_EQUAL(tw_finished_span_operation(server), "GET /orders/1");
    CU_ASSERT_EQUAL(tw_finished_span_trace_id_high(server), 0xaa);
    CU_ASSERT_EQUAL(tw_finished_span_trace_id_low(server), 0xbb);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(server), 0xcc);
    CU_ASSERT_NOT_EQUAL(tw_finished_span_span_id(server), 0xcc);
    CU_ASSERT(tag_equals_str(server, "span.kind", "server"));
    CU_ASSERT(tag_equals_str(server, "component", "libmicrohttpd"));
    CU_ASSERT(tag_equals_str(server, "http.method", "GET"));
    CU_ASSERT(tag_equals_str(server, "http.url", "/orders/1"));
    CU_ASSERT(tag_equals_str(server, "peer.ipv4", "127.0.0.1"));
    CU_ASSERT_EQUAL(tag_int(server, "peer.port"), client_port);
    CU_ASSERT_EQUAL(tag_int(server, "http.status_code"), 200);
    CU_ASSERT_FALSE(has_tag(server, "error"));
    CU_ASSERT_FALSE(has_log_event(server, "extract-failed"));
}

static void test_route_names_the_span_for_the_sampler_and_activation(void)
{
    /* A sampler that samples only "GET /stock/{id}": the span is reported
     * only if the sampler saw the route, not the path. */
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "unit-test");
    tw_sampler *by_route = tw_sampler_per_operation_new(0.0, 0.0, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(by_route);
    CU_ASSERT_EQUAL(tw_sampler_per_operation_set(by_route, "GET /stock/{id}", 1.0), TW_OK);
    tw_tracer_options_set_sampler(opts, by_route);
    tw_reporter *routed = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, routed);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);

    g_mutex_lock(&plan_lock);
    plan = (handler_plan){
        .tracer = t, .status = 200, .use_request = true, .route = "/stock/{id}", .activate = true};
    g_mutex_unlock(&plan_lock);
    CU_ASSERT(request(server_v4.base_url, "/stock/42", NULL) > 0);
    g_mutex_lock(&plan_lock);
    bool was_active = plan.was_active;
    g_mutex_unlock(&plan_lock);
    CU_ASSERT(was_active);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(routed), 2);
    const tw_finished_span *server = finished_named(routed, "GET /stock/{id}");
    const tw_finished_span *inside = finished_named(routed, "inside the handler");
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_PTR_NOT_NULL_FATAL(inside);
    CU_ASSERT(tag_equals_str(server, "http.route", "/stock/{id}"));
    CU_ASSERT(tag_equals_str(server, "http.url", "/stock/42"));
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(inside), tw_finished_span_span_id(server));

    /* Without the route the sampler sees the path, and says no. */
    tw_memory_reporter_clear(routed);
    g_mutex_lock(&plan_lock);
    plan.route = NULL;
    plan.activate = false;
    g_mutex_unlock(&plan_lock);
    CU_ASSERT(request(server_v4.base_url, "/stock/42", NULL) > 0);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(routed), 0);
    tw_tracer_free(t);
    reset();
    /* NULL everywhere is harmless. */
    CU_ASSERT_PTR_NULL(tw_mhd_request_begin(NULL, NULL, "GET", "/", NULL));
    CU_ASSERT_PTR_NULL(tw_mhd_request_span(NULL));
    CU_ASSERT_EQUAL(tw_mhd_request_enter(NULL), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_mhd_request_leave(NULL), TW_E_INVALID_ARG);
    tw_mhd_request_end(NULL, 200);
}

static void test_request_without_trace_headers_starts_new_trace(void)
{
    reset();
    CU_ASSERT(request(server_v4.base_url, "/fresh", NULL) > 0);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
    const tw_finished_span *server = tw_memory_reporter_span(memory, 0);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(server), 0);
    CU_ASSERT_FALSE(has_log_event(server, "extract-failed"));
}

static void test_malformed_trace_header_starts_new_trace_and_logs(void)
{
    reset();
    const char *headers[] = {"uber-trace-id: not-a-trace-id", NULL};
    CU_ASSERT(request(server_v4.base_url, "/broken", headers) > 0);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
    const tw_finished_span *server = tw_memory_reporter_span(memory, 0);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(server), 0);
    CU_ASSERT(has_log_event(server, "extract-failed"));
    CU_ASSERT(tag_equals_str(server, "span.kind", "server"));
}

static void test_finish_marks_5xx_as_error_not_4xx(void)
{
    const unsigned int statuses[] = {500, 503, 404, 499};
    for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
        reset();
        set_plan(tracer_sampled, statuses[i], false);
        CU_ASSERT(request(server_v4.base_url, "/status", NULL) > 0);
        CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
        const tw_finished_span *server = tw_memory_reporter_span(memory, 0);
        CU_ASSERT_EQUAL(tag_int(server, "http.status_code"), (int64_t)statuses[i]);
        CU_ASSERT_EQUAL(has_tag(server, "error"), statuses[i] >= 500);
    }
}

static void test_ipv6_client_tagged_as_ipv6(void)
{
    http_server server_v6;
    reset();
    if (!http_server_start(&server_v6, "::1", 0, start_and_finish, &plan)) {
        printf("(no IPv6 loopback here: skipped) ");
        return;
    }
    long client_port = request(server_v6.base_url, "/six", NULL);
    http_server_stop(&server_v6);
    CU_ASSERT(client_port > 0);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
    const tw_finished_span *server = tw_memory_reporter_span(memory, 0);
    CU_ASSERT(tag_equals_str(server, "peer.ipv6", "::1"));
    CU_ASSERT_FALSE(has_tag(server, "peer.ipv4"));
    CU_ASSERT_EQUAL(tag_int(server, "peer.port"), client_port);
}

static void test_round_trip_with_curl_client_span(void)
{
    reset();
    CURL *easy = curl_easy_init();
    char url[128];
    snprintf(url, sizeof(url), "%s/round/trip", server_v4.base_url);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard_body);
    tw_span *root = tw_span_start(tracer_sampled, "root", NULL);
    tw_curl_instrument(tracer_sampled, easy, tw_span_get_context(root), NULL);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    tw_curl_easy_cleanup(easy);
    tw_span_finish(root);

    const tw_finished_span *server = finished_named(memory, "GET /round/trip");
    const tw_finished_span *client = finished_named(memory, "HTTP GET");
    const tw_finished_span *top = finished_named(memory, "root");
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT_PTR_NOT_NULL_FATAL(top);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(server), tw_finished_span_span_id(client));
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(client), tw_finished_span_span_id(top));
    CU_ASSERT_EQUAL(tw_finished_span_trace_id_low(server), tw_finished_span_trace_id_low(top));
    CU_ASSERT_EQUAL(tw_finished_span_trace_id_high(server), tw_finished_span_trace_id_high(top));
}

static void test_tracer_propagator_reads_b3(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_propagator(opts, tw_propagator_parse("b3", NULL));
    tw_reporter *b3_memory = NULL;
    tw_tracer *b3_tracer = tracer_always_sampled(&b3_memory, opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b3_tracer);
    reset();
    set_plan(b3_tracer, 200, false);
    const char *headers[] = {"X-B3-TraceId: 00000000000000dd", "X-B3-SpanId: 00000000000000ee",
                             "X-B3-Sampled: 1", "uber-trace-id: 1:2:0:1", NULL};
    CU_ASSERT(request(server_v4.base_url, "/b3", headers) > 0);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(b3_memory), 1);
    const tw_finished_span *server = tw_memory_reporter_span(b3_memory, 0);
    CU_ASSERT_EQUAL(tw_finished_span_trace_id_low(server), 0xdd);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(server), 0xee);
    set_plan(tracer_sampled, 200, false);
    tw_tracer_free(b3_tracer);
}

static void test_null_arguments_give_null_span(void)
{
    reset();
    CU_ASSERT_PTR_NULL(tw_mhd_start_span(NULL, NULL, "GET", "/"));
    tw_mhd_finish_span(NULL, 200);
    set_plan(tracer_sampled, 200, true);
    CU_ASSERT(request(server_v4.base_url, "/null", NULL) > 0);
    CU_ASSERT(got_null_span());
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    set_plan(NULL, 200, false);
    CU_ASSERT(request(server_v4.base_url, "/null", NULL) > 0);
    CU_ASSERT(got_null_span());
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("contrib/microhttpd", suite_init, suite_cleanup);
    CU_add_test(suite, "server span is a child of the extracted context, with tags",
                test_server_span_child_of_extracted_context_with_tags);
    CU_add_test(suite, "a request without trace headers starts a new trace",
                test_request_without_trace_headers_starts_new_trace);
    CU_add_test(suite, "a malformed trace header starts a new trace and is logged",
                test_malformed_trace_header_starts_new_trace_and_logs);
    CU_add_test(suite, "finish marks 5xx as error, not 4xx",
                test_finish_marks_5xx_as_error_not_4xx);
    CU_add_test(suite, "an IPv6 client is tagged peer.ipv6", test_ipv6_client_tagged_as_ipv6);
    CU_add_test(suite, "round trip: curl client span -> server span",
                test_round_trip_with_curl_client_span);
    CU_add_test(suite, "the tracer's propagator reads B3", test_tracer_propagator_reads_b3);
    CU_add_test(suite, "NULL arguments give a NULL span", test_null_arguments_give_null_span);
    CU_add_test(suite, "a route names the span for the sampler; the span is active in the handler",
                test_route_names_the_span_for_the_sampler_and_activation);
}
