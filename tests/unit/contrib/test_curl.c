/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/contrib/test_curl.c: suite "contrib/curl": CLIENT spans around
 * real libcurl transfers to a loopback libmicrohttpd server
 * (http_server.c), which records the headers that really went over the
 * socket: the context injected through the tracer's propagator, the
 * application's own headers merged (never leaked or clobbered), the span's
 * tags, errors for a refused connection and a 5xx, IPv6 peers, parents from
 * the active span, the multi interface, and the contract (NULL arguments,
 * begin twice, release during a transfer, a closed tracer never failing a
 * transfer).
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "contrib/http_server.h"
#include "fixtures.h"
#include "harness.h"
#include "propagation/w3c_rules.h"
#include "tracewire/curl.h"
#include "tracewire/scope.h"
#include "tracewire/tracewire.h"

static http_server server_ok;     /* answers 200 on 127.0.0.1 */
static tw_tracer *tracer_sampled; /* const sampler, memory reporter, Jaeger propagation */
static tw_reporter *memory;       /* tracer_sampled's reporter (borrowed) */

static size_t discard_body(char *data, size_t size, size_t n, void *user_data)
{
    (void)data;
    (void)user_data;
    return size * n;
}

static CURL *easy_for(const char *base_url, const char *path)
{
    CURL *easy = curl_easy_init();
    char url[256];
    snprintf(url, sizeof(url), "%s%s", base_url, path);
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard_body);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 10000L);
    return easy;
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

static bool tag_is_true(const tw_finished_span *span, const char *key)
{
    tw_value v;
    return tw_finished_span_find_tag(span, key, &v) && v.type == TW_VALUE_BOOL && v.as.boolean;
}

/* The value of log field @key in any log of @span, or NULL. */
static const char *log_field(const tw_finished_span *span, const char *key)
{
    for (size_t i = 0; i < tw_finished_span_log_count(span); i++) {
        for (size_t f = 0; f < tw_finished_span_log_field_count(span, i); f++) {
            const char *k = NULL;
            tw_value v;
            if (tw_finished_span_log_field(span, i, f, &k, &v) && strcmp(k, key) == 0 &&
                v.type == TW_VALUE_STRING)
                return v.as.str;
        }
    }
    return NULL;
}

/* uber-trace-id "trace:span:parent:flags" (hex) split into numbers. */
typedef struct uber_id {
    uint64_t trace_hi, trace_lo, span_id, parent_id;
    unsigned int flags;
} uber_id;

static bool parse_uber_trace_id(const char *text, uber_id *out)
{
    char trace[33];
    unsigned long long span = 0, parent = 0;
    unsigned int flags = 0;
    if (!text || sscanf(text, "%32[0-9a-f]:%llx:%llx:%x", trace, &span, &parent, &flags) != 4)
        return false;
    size_t len = strlen(trace);
    char high[17] = "0";
    if (len > 16) {
        memcpy(high, trace, len - 16);
        high[len - 16] = '\0';
    }
    out->trace_hi = strtoull(high, NULL, 16);
    out->trace_lo = strtoull(len > 16 ? trace + len - 16 : trace, NULL, 16);
    out->span_id = span;
    out->parent_id = parent;
    out->flags = flags;
    return true;
}

/* A loopback port nobody listens on: bound, then closed (the kernel does
 * not hand it out again at once). */
static unsigned int closed_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    unsigned int port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
        getsockname(fd, (struct sockaddr *)&addr, &len) == 0)
        port = ntohs(addr.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static int suite_init(void)
{
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    if (!http_server_start(&server_ok, "127.0.0.1", 200, NULL, NULL))
        return 1;
    tracer_sampled = tracer_always_sampled(&memory, NULL);
    return tracer_sampled ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw_tracer_free(tracer_sampled);
    http_server_stop(&server_ok);
    curl_global_cleanup();
    return 0;
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_perform_runs_in_client_span_child_of_given_parent(void)
{
    tw_memory_reporter_clear(memory);
    tw_span *parent = tw_span_start(tracer_sampled, "caller", NULL);
    CURL *easy = easy_for(server_ok.base_url, "/items/7");
    CU_ASSERT_EQUAL(tw_curl_instrument(tracer_sampled, easy, tw_span_get_context(parent), NULL),
                    TW_OK);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    const tw_span_context *pc = tw_span_get_context(parent);
    uint64_t parent_id = tw_span_context_span_id(pc);
    uint64_t trace_lo = tw_span_context_trace_id_low(pc);
    uint64_t trace_hi = tw_span_context_trace_id_high(pc);
    tw_span_finish(parent);

    const tw_finished_span *client = finished_named(memory, "HTTP GET");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(client), parent_id);
    CU_ASSERT_EQUAL(tw_finished_span_trace_id_low(client), trace_lo);
    CU_ASSERT_EQUAL(tw_finished_span_trace_id_high(client), trace_hi);
    CU_ASSERT(tag_equals_str(client, "span.kind", "client"));
    CU_ASSERT(tag_equals_str(client, "component", "libcurl"));
    CU_ASSERT(tag_equals_str(client, "http.method", "GET"));
    char url[128];
    snprintf(url, sizeof(url), "%s/items/7", server_ok.base_url);
    CU_ASSERT(tag_equals_str(client, "http.url", url));
    CU_ASSERT_EQUAL(tag_int(client, "http.status_code"), 200);
    CU_ASSERT(tag_equals_str(client, "peer.hostname", "127.0.0.1"));
    CU_ASSERT(tag_equals_str(client, "peer.ipv4", "127.0.0.1"));
    CU_ASSERT_EQUAL(tag_int(client, "peer.port"), (int64_t)server_ok.port);
    CU_ASSERT_FALSE(has_tag(client, "error"));

    /* What went over the socket is the client span's own context. */
    uber_id sent;
    CU_ASSERT_FATAL(parse_uber_trace_id(http_server_header(&server_ok, "uber-trace-id"), &sent));
    CU_ASSERT_EQUAL(sent.trace_lo, trace_lo);
    CU_ASSERT_EQUAL(sent.trace_hi, trace_hi);
    CU_ASSERT_EQUAL(sent.span_id, tw_finished_span_span_id(client));
    CU_ASSERT_EQUAL(sent.flags & TW_FLAG_SAMPLED, TW_FLAG_SAMPLED);
    tw_curl_easy_cleanup(easy);
}

static void test_user_headers_merged_and_stale_trace_header_replaced(void)
{
    tw_memory_reporter_clear(memory);
    struct curl_slist *mine = curl_slist_append(NULL, "Accept: text/plain");
    mine = curl_slist_append(mine, "X-Custom: kept");
    mine = curl_slist_append(mine, "UBER-TRACE-ID: 1:2:0:1");
    struct curl_slist *second = mine->next;
    CURL *easy = easy_for(server_ok.base_url, "/merge");
    CU_ASSERT_EQUAL(tw_curl_instrument(tracer_sampled, easy, NULL, mine), TW_OK);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    CU_ASSERT_STRING_EQUAL(http_server_header(&server_ok, "Accept"), "text/plain");
    CU_ASSERT_STRING_EQUAL(http_server_header(&server_ok, "X-Custom"), "kept");
    CU_ASSERT_EQUAL(http_server_header_count(&server_ok, "uber-trace-id"), 1);
    CU_ASSERT_STRING_NOT_EQUAL(http_server_header(&server_ok, "uber-trace-id"), "1:2:0:1");

    /* The application's list is untouched: same nodes, same text. */
    CU_ASSERT_PTR_EQUAL(mine->next, second);
    CU_ASSERT_STRING_EQUAL(mine->data, "Accept: text/plain");
    CU_ASSERT_STRING_EQUAL(second->data, "X-Custom: kept");
    CU_ASSERT_PTR_NULL(second->next->next);

    /* After the transfer the handle holds the application's list again: a
     * plain perform sends it as it is (the stale header included). */
    CU_ASSERT_EQUAL(curl_easy_perform(easy), CURLE_OK);
    CU_ASSERT_STRING_EQUAL(http_server_header(&server_ok, "X-Custom"), "kept");
    CU_ASSERT_STRING_EQUAL(http_server_header(&server_ok, "uber-trace-id"), "1:2:0:1");
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 1);
    tw_curl_easy_cleanup(easy);
    curl_slist_free_all(mine);
}

static void test_connection_refused_marks_error_and_returns_curl_code(void)
{
    tw_memory_reporter_clear(memory);
    unsigned int port = closed_port();
    CU_ASSERT_FATAL(port != 0);
    char base[64];
    snprintf(base, sizeof(base), "http://127.0.0.1:%u", port);
    CURL *easy = easy_for(base, "/nobody");
    tw_curl_instrument(tracer_sampled, easy, NULL, NULL);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_COULDNT_CONNECT);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
    const tw_finished_span *client = tw_memory_reporter_span(memory, 0);
    CU_ASSERT(tag_is_true(client, "error"));
    CU_ASSERT_EQUAL(tag_int(client, "curl.error_code"), CURLE_COULDNT_CONNECT);
    CU_ASSERT_STRING_EQUAL(log_field(client, "error.kind"), "curl");
    CU_ASSERT_STRING_EQUAL(log_field(client, "message"), curl_easy_strerror(CURLE_COULDNT_CONNECT));
    CU_ASSERT_FALSE(has_tag(client, "http.status_code"));
    CU_ASSERT(tag_equals_str(client, "peer.hostname", "127.0.0.1"));
    CU_ASSERT(tag_equals_str(client, "span.kind", "client"));
    tw_curl_easy_cleanup(easy);
}

static void check_status_marks(unsigned int status, bool is_error)
{
    http_server server;
    CU_ASSERT_FATAL(http_server_start(&server, "127.0.0.1", status, NULL, NULL));
    tw_memory_reporter_clear(memory);
    CURL *easy = easy_for(server.base_url, "/status");
    tw_curl_instrument(tracer_sampled, easy, NULL, NULL);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK); /* HTTP errors are not curl errors */
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
    const tw_finished_span *client = tw_memory_reporter_span(memory, 0);
    CU_ASSERT_EQUAL(tag_int(client, "http.status_code"), (int64_t)status);
    CU_ASSERT_EQUAL(tag_is_true(client, "error"), is_error);
    CU_ASSERT_FALSE(has_tag(client, "curl.error_code"));
    tw_curl_easy_cleanup(easy);
    http_server_stop(&server);
}

static void test_5xx_marks_error_4xx_does_not(void)
{
    check_status_marks(500, true);
    check_status_marks(503, true);
    check_status_marks(404, false);
    check_status_marks(499, false);
}

static void test_ipv6_peer_tagged_as_ipv6(void)
{
    http_server server;
    if (!http_server_start(&server, "::1", 200, NULL, NULL)) {
        printf("(no IPv6 loopback here: skipped) ");
        return;
    }
    tw_memory_reporter_clear(memory);
    CURL *easy = easy_for(server.base_url, "/six");
    tw_curl_instrument(tracer_sampled, easy, NULL, NULL);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    const tw_finished_span *client = finished_named(memory, "HTTP GET");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT(tag_equals_str(client, "peer.ipv6", "::1"));
    CU_ASSERT(tag_equals_str(client, "peer.hostname", "::1"));
    CU_ASSERT_FALSE(has_tag(client, "peer.ipv4"));
    CU_ASSERT_EQUAL(tag_int(client, "peer.port"), (int64_t)server.port);
    CU_ASSERT_PTR_NOT_NULL(http_server_header(&server, "uber-trace-id"));
    tw_curl_easy_cleanup(easy);
    http_server_stop(&server);
}

static void test_credentials_left_out_of_url_tag(void)
{
    tw_memory_reporter_clear(memory);
    char url[128];
    snprintf(url, sizeof(url), "http://alice:s3cret@127.0.0.1:%u/private?q=1", server_ok.port);
    CURL *easy = easy_for("", url);
    tw_curl_instrument(tracer_sampled, easy, NULL, NULL);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    const tw_finished_span *client = finished_named(memory, "HTTP GET");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    char want[128];
    snprintf(want, sizeof(want), "http://127.0.0.1:%u/private?q=1", server_ok.port);
    CU_ASSERT(tag_equals_str(client, "http.url", want));
    tw_curl_easy_cleanup(easy);
}

static void test_active_span_is_parent_when_none_given(void)
{
    tw_memory_reporter_clear(memory);
    CURL *easy = easy_for(server_ok.base_url, "/active");
    tw_curl_instrument(tracer_sampled, easy, NULL, NULL);

    /* No active span: a new trace. */
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(tw_memory_reporter_span(memory, 0)), 0);

    /* The active span at the time of the transfer is the parent. */
    tw_span *outer = tw_span_start(tracer_sampled, "outer", NULL);
    tw_scope *scope = tw_scope_activate(outer, false);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    tw_scope_close(scope);
    uint64_t outer_id = tw_span_context_span_id(tw_span_get_context(outer));
    tw_span_finish(outer);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 3);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(tw_memory_reporter_span(memory, 1)), outer_id);
    tw_curl_easy_cleanup(easy);
}

static void test_unsampled_parent_propagates_decision_records_nothing(void)
{
    tw_memory_reporter_clear(memory);
    tw_span_context *unsampled = tw_span_context_new(0, 0x1234, 0x99, 0, 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(unsampled);
    CURL *easy = easy_for(server_ok.base_url, "/unsampled");
    tw_curl_instrument(tracer_sampled, easy, unsampled, NULL);
    tw_span_context_unref(unsampled); /* the instrumentation holds its own reference */
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    uber_id sent;
    CU_ASSERT_FATAL(parse_uber_trace_id(http_server_header(&server_ok, "uber-trace-id"), &sent));
    CU_ASSERT_EQUAL(sent.trace_lo, 0x1234);
    CU_ASSERT_EQUAL(sent.flags & TW_FLAG_SAMPLED, 0);
    CU_ASSERT_NOT_EQUAL(sent.span_id, 0x99);
    tw_curl_easy_cleanup(easy);
}

static void test_tracer_propagator_chooses_the_headers(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_propagator *b3_w3c = tw_propagator_parse("b3,w3c", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b3_w3c);
    tw_tracer_options_set_propagator(opts, b3_w3c);
    tw_reporter *own_memory = NULL;
    tw_tracer *tracer = tracer_always_sampled(&own_memory, opts);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    CURL *easy = easy_for(server_ok.base_url, "/b3");
    tw_curl_instrument(tracer, easy, NULL, NULL);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(own_memory), 1);
    const tw_finished_span *client = tw_memory_reporter_span(own_memory, 0);
    char span_hex[17];
    snprintf(span_hex, sizeof(span_hex), "%016" PRIx64, tw_finished_span_span_id(client));
    CU_ASSERT_STRING_EQUAL(http_server_header(&server_ok, "X-B3-SpanId"), span_hex);
    const char *traceparent = http_server_header(&server_ok, "traceparent");
    CU_ASSERT(traceparent && strstr(traceparent, span_hex) != NULL);
    CU_ASSERT_PTR_NULL(http_server_header(&server_ok, "uber-trace-id"));
    tw_curl_easy_cleanup(easy);
    tw_tracer_free(tracer);
}

static void test_multi_interface_with_begin_and_end(void)
{
    tw_memory_reporter_clear(memory);
    CURL *easy = easy_for(server_ok.base_url, "/multi");
    tw_curl_instrument(tracer_sampled, easy, NULL, NULL);
    CURLM *multi = curl_multi_init();
    CU_ASSERT_EQUAL(tw_curl_transfer_begin(easy), TW_OK);
    curl_multi_add_handle(multi, easy);
    int running = 1;
    CURLcode result = CURLE_RECV_ERROR;
    while (running) {
        curl_multi_perform(multi, &running);
        if (running)
            curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    int left = 0;
    for (CURLMsg *msg = curl_multi_info_read(multi, &left); msg;
         msg = curl_multi_info_read(multi, &left)) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == easy)
            result = msg->data.result;
    }
    CU_ASSERT_EQUAL(result, CURLE_OK);
    tw_curl_transfer_end(easy, result);
    curl_multi_remove_handle(multi, easy);
    curl_multi_cleanup(multi);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
    const tw_finished_span *client = tw_memory_reporter_span(memory, 0);
    CU_ASSERT_EQUAL(tag_int(client, "http.status_code"), 200);
    uber_id sent;
    CU_ASSERT_FATAL(parse_uber_trace_id(http_server_header(&server_ok, "uber-trace-id"), &sent));
    CU_ASSERT_EQUAL(sent.span_id, tw_finished_span_span_id(client));
    tw_curl_easy_cleanup(easy);
}

static void test_uninstrumented_and_released_handles_perform_plainly(void)
{
    tw_memory_reporter_clear(memory);
    CURL *easy = easy_for(server_ok.base_url, "/plain");
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    CU_ASSERT_PTR_NULL(http_server_header(&server_ok, "uber-trace-id"));
    CU_ASSERT_EQUAL(tw_curl_transfer_begin(easy), TW_E_NOT_FOUND);
    tw_curl_transfer_end(easy, CURLE_OK); /* nothing in progress: no-op */

    struct curl_slist *mine = curl_slist_append(NULL, "X-After-Release: yes");
    tw_curl_instrument(tracer_sampled, easy, NULL, mine);
    tw_curl_release(easy);
    tw_curl_release(easy); /* twice: no-op */
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    CU_ASSERT_PTR_NULL(http_server_header(&server_ok, "uber-trace-id"));
    CU_ASSERT_STRING_EQUAL(http_server_header(&server_ok, "X-After-Release"), "yes");
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    curl_easy_cleanup(easy);
    curl_slist_free_all(mine);
}

static void test_contract_null_args_begin_twice_release_in_progress(void)
{
    tw_memory_reporter_clear(memory);
    CURL *easy = easy_for(server_ok.base_url, "/contract");
    CU_ASSERT_EQUAL(tw_curl_instrument(NULL, easy, NULL, NULL), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_curl_instrument(tracer_sampled, NULL, NULL, NULL), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_curl_transfer_begin(NULL), TW_E_INVALID_ARG);
    tw_curl_transfer_end(NULL, CURLE_OK);
    tw_curl_release(NULL);
    tw_curl_easy_cleanup(NULL);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(NULL), CURLE_BAD_FUNCTION_ARGUMENT);

    CU_ASSERT_EQUAL(tw_curl_instrument(tracer_sampled, easy, NULL, NULL), TW_OK);
    CU_ASSERT_EQUAL(tw_curl_instrument(tracer_sampled, easy, NULL, NULL), TW_OK); /* replace */
    CU_ASSERT_EQUAL(tw_curl_transfer_begin(easy), TW_OK);
    CU_ASSERT_EQUAL(tw_curl_transfer_begin(easy), TW_E_STATE);
    CU_ASSERT_EQUAL(tw_curl_instrument(tracer_sampled, easy, NULL, NULL), TW_E_STATE);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    /* Released mid-transfer: the span ends, marked as abandoned. */
    tw_curl_release(easy);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 1);
    const tw_finished_span *abandoned = tw_memory_reporter_span(memory, 0);
    CU_ASSERT(tag_is_true(abandoned, "error"));
    CU_ASSERT_STRING_EQUAL(log_field(abandoned, "error.kind"), "tracewire");
    curl_easy_cleanup(easy);
}

static void test_closed_tracer_never_fails_the_transfer(void)
{
    tw_reporter *own_memory = NULL;
    tw_tracer *tracer = tracer_always_sampled(&own_memory, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tracer);
    struct curl_slist *mine = curl_slist_append(NULL, "X-Still: sent");
    CURL *easy = easy_for(server_ok.base_url, "/closed");
    tw_curl_instrument(tracer, easy, NULL, mine);
    tw_tracer_close(tracer);
    CU_ASSERT_EQUAL(tw_curl_easy_perform(easy), CURLE_OK);
    CU_ASSERT_STRING_EQUAL(http_server_header(&server_ok, "X-Still"), "sent");
    CU_ASSERT_PTR_NULL(http_server_header(&server_ok, "uber-trace-id"));
    tw_curl_easy_cleanup(easy);
    curl_slist_free_all(mine);
    tw_tracer_free(tracer);
}

static void test_one_call_perform_leaves_nothing_to_release(void)
{
    tw_memory_reporter_clear(memory);
    struct curl_slist *mine = curl_slist_append(NULL, "X-Custom: kept");
    CURL *easy = easy_for(server_ok.base_url, "/one-call");
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, mine); /* as the application already does */
    tw_span *parent = tw_span_start(tracer_sampled, "handler", NULL);
    CU_ASSERT_EQUAL(tw_curl_perform(tracer_sampled, easy, parent, mine, 0), CURLE_OK);
    CU_ASSERT_STRING_EQUAL(http_server_header(&server_ok, "X-Custom"), "kept");
    uber_id sent;
    CU_ASSERT_FATAL(parse_uber_trace_id(http_server_header(&server_ok, "uber-trace-id"), &sent));
    /* Nothing is kept: the handle is not instrumented, and holds the
     * application's list again. */
    CU_ASSERT_EQUAL(tw_curl_transfer_begin(easy), TW_E_NOT_FOUND);
    CU_ASSERT_EQUAL(curl_easy_perform(easy), CURLE_OK);
    CU_ASSERT_EQUAL(http_server_header_count(&server_ok, "uber-trace-id"), 0);
    tw_span_finish(parent);
    CU_ASSERT_EQUAL_FATAL(tw_memory_reporter_count(memory), 2);
    const tw_finished_span *client = finished_named(memory, "HTTP GET");
    const tw_finished_span *handler = finished_named(memory, "handler");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(client), tw_finished_span_span_id(handler));
    CU_ASSERT_EQUAL(sent.span_id, tw_finished_span_span_id(client));
    CU_ASSERT_FALSE(has_tag(handler, "error"));
    curl_easy_cleanup(easy); /* plain cleanup: nothing to release first */
    curl_slist_free_all(mine);
}

static void test_one_call_perform_marks_the_parent_when_asked(void)
{
    unsigned int port = closed_port();
    char base[64];
    snprintf(base, sizeof(base), "http://user:pw@127.0.0.1:%u", port);
    /* The active span is the parent, and is marked. */
    tw_memory_reporter_clear(memory);
    tw_span *handler = tw_span_start(tracer_sampled, "handler", NULL);
    tw_scope *scope = tw_scope_activate(handler, true);
    CURL *easy = easy_for(base, "/down");
    CU_ASSERT_EQUAL(tw_curl_perform(tracer_sampled, easy, NULL, NULL, TW_CURL_MARK_PARENT_ERROR),
                    CURLE_COULDNT_CONNECT);
    tw_scope_close(scope);
    const tw_finished_span *h = finished_named(memory, "handler");
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT(tag_is_true(h, "error"));
    CU_ASSERT_STRING_EQUAL(log_field(h, "error.kind"), "http");
    const char *message = log_field(h, "message");
    CU_ASSERT_PTR_NOT_NULL_FATAL(message);
    CU_ASSERT_PTR_NOT_NULL(strstr(message, "/down failed: "));
    CU_ASSERT_PTR_NULL(strstr(message, "pw")); /* the URL without its credentials */
    /* Without the flag the parent is left alone; with it, a 4xx does not mark. */
    tw_memory_reporter_clear(memory);
    handler = tw_span_start(tracer_sampled, "handler", NULL);
    tw_curl_perform(tracer_sampled, easy, handler, NULL, 0);
    tw_span_finish(handler);
    CU_ASSERT_FALSE(has_tag(finished_named(memory, "handler"), "error"));
    curl_easy_cleanup(easy);
    http_server server;
    CU_ASSERT_FATAL(http_server_start(&server, "127.0.0.1", 404, NULL, NULL));
    tw_memory_reporter_clear(memory);
    handler = tw_span_start(tracer_sampled, "handler", NULL);
    easy = easy_for(server.base_url, "/missing");
    CU_ASSERT_EQUAL(tw_curl_perform(tracer_sampled, easy, handler, NULL, TW_CURL_MARK_PARENT_ERROR),
                    CURLE_OK);
    tw_span_finish(handler);
    CU_ASSERT_FALSE(has_tag(finished_named(memory, "handler"), "error"));
    curl_easy_cleanup(easy);
    http_server_stop(&server);
    /* A NULL tracer: the transfer still runs. */
    easy = easy_for(server_ok.base_url, "/untraced");
    CU_ASSERT_EQUAL(tw_curl_perform(NULL, easy, NULL, NULL, 0), CURLE_OK);
    curl_easy_cleanup(easy);
}

static void test_slist_carriers_round_trip(void)
{
    tw_codec codecs[2] = {TW_CODEC_JAEGER, TW_CODEC_W3C};
    tw_propagator *p = tw_propagator_new(codecs, 2, NULL);
    tw_span_context *c = tw_span_context_new(0x1234, 0xabcd, 0x42, 0, TW_FLAG_SAMPLED, NULL);
    tw_span_context *with_bag = tw_span_context_with_baggage(c, "tenant", "acme corp");
    struct curl_slist *list = curl_slist_append(NULL, "HTTP/1.1 200 OK"); /* skipped */
    list = curl_slist_append(list, "Accept: */*");
    tw_carrier_writer w = tw_curl_slist_writer(&list);
    CU_ASSERT_EQUAL(tw_propagator_inject(p, with_bag, TW_FORMAT_HTTP_HEADERS, &w), TW_OK);
    bool has_traceparent = false;
    for (struct curl_slist *l = list; l; l = l->next)
        has_traceparent |= strncmp(l->data, "traceparent: 00-", 16) == 0;
    CU_ASSERT(has_traceparent);
    tw_carrier_reader r = tw_curl_slist_reader(list);
    tw_span_context *back = tw_propagator_extract(p, TW_FORMAT_HTTP_HEADERS, &r, NULL, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(back);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_low(back), 0xabcd);
    CU_ASSERT_EQUAL(tw_span_context_trace_id_high(back), 0x1234);
    CU_ASSERT_EQUAL(tw_span_context_span_id(back), 0x42);
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(back, "tenant"), "acme corp");
    tw_span_context_unref(back);
    tw_span_context_unref(with_bag);
    tw_span_context_unref(c);
    curl_slist_free_all(list);
    tw_propagator_free(p);
}

/* ---- the W3C rules through the curl_slist carriers (propagation/w3c_rules.h) ---------------- */

static void *slist_in(const char *const *pairs)
{
    struct curl_slist *list = curl_slist_append(NULL, "HTTP/1.1 200 OK"); /* skipped */
    for (size_t i = 0; list && pairs[i]; i += 2) {
        char line[1024];
        snprintf(line, sizeof line, "%s: %s", pairs[i], pairs[i + 1]);
        list = curl_slist_append(list, line);
    }
    return list;
}

static tw_carrier_reader slist_reader(void *in)
{
    return tw_curl_slist_reader(in);
}

static void slist_free(void *list)
{
    curl_slist_free_all(list);
}

typedef struct slist_out {
    struct curl_slist *list;
    char values[2][1024]; /* what slist_get returned, for the last two calls */
    size_t next;
} slist_out;

static void *slist_out_new(void)
{
    return calloc(1, sizeof(slist_out));
}

static tw_carrier_writer slist_writer(void *out)
{
    return tw_curl_slist_writer(&((slist_out *)out)->list);
}

/* The value of the "Name: value" lines of @name, as a server would read them. */
static const char *slist_get(void *out, const char *name, size_t *count)
{
    slist_out *o = out;
    char *value = o->values[o->next++ % 2];
    size_t n = strlen(name);
    *count = 0;
    for (const struct curl_slist *l = o->list; l; l = l->next) {
        if (strncasecmp(l->data, name, n) == 0 && l->data[n] == ':' && (*count)++ == 0)
            snprintf(value, sizeof o->values[0], "%s", l->data + n + 1 + (l->data[n + 1] == ' '));
    }
    return *count ? value : NULL;
}

static void slist_out_free(void *out)
{
    curl_slist_free_all(((slist_out *)out)->list);
    free(out);
}

static void test_w3c_rules_through_slist_carriers(void)
{
    const w3c_carrier_ops ops = {"curl_slist",  TW_FORMAT_HTTP_HEADERS, slist_in,     slist_reader,
                                 slist_free,    slist_out_new,          slist_writer, slist_get,
                                 slist_out_free};
    w3c_rules_run(&ops);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("contrib/curl", suite_init, suite_cleanup);
    CU_add_test(suite, "slist carriers round trip a context", test_slist_carriers_round_trip);
    CU_add_test(suite, "the W3C rules hold through the slist carriers",
                test_w3c_rules_through_slist_carriers);
    CU_add_test(suite, "one-call perform leaves nothing to release",
                test_one_call_perform_leaves_nothing_to_release);
    CU_add_test(suite, "one-call perform marks the parent when asked",
                test_one_call_perform_marks_the_parent_when_asked);
    CU_add_test(suite, "perform runs in a client span, child of the given parent",
                test_perform_runs_in_client_span_child_of_given_parent);
    CU_add_test(suite, "user headers merged, a stale trace header replaced",
                test_user_headers_merged_and_stale_trace_header_replaced);
    CU_add_test(suite, "connection refused marks error and returns the curl code",
                test_connection_refused_marks_error_and_returns_curl_code);
    CU_add_test(suite, "5xx marks error, 4xx does not", test_5xx_marks_error_4xx_does_not);
    CU_add_test(suite, "IPv6 peer tagged as peer.ipv6", test_ipv6_peer_tagged_as_ipv6);
    CU_add_test(suite, "credentials left out of http.url", test_credentials_left_out_of_url_tag);
    CU_add_test(suite, "active span is the parent when none is given",
                test_active_span_is_parent_when_none_given);
    CU_add_test(suite, "unsampled parent: decision propagated, nothing recorded",
                test_unsampled_parent_propagates_decision_records_nothing);
    CU_add_test(suite, "the tracer's propagator chooses the headers",
                test_tracer_propagator_chooses_the_headers);
    CU_add_test(suite, "multi interface with transfer begin and end",
                test_multi_interface_with_begin_and_end);
    CU_add_test(suite, "uninstrumented and released handles perform plainly",
                test_uninstrumented_and_released_handles_perform_plainly);
    CU_add_test(suite, "contract: NULL args, begin twice, release in progress",
                test_contract_null_args_begin_twice_release_in_progress);
    CU_add_test(suite, "a closed tracer never fails the transfer",
                test_closed_tracer_never_fails_the_transfer);
}
