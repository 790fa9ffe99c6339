/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/demo/frontend.c: the "frontend" service of the demo (demo.h):
 * GET /checkout asks backend-a for the price and backend-b for the stock,
 * over HTTP with libcurl. Its SERVER span is the active span while it
 * calls, so each tw_curl_easy_perform() runs in a CLIENT span that is its
 * child, and the backends receive that client span's context in the
 * request headers (the tracer's propagator: JAEGER_PROPAGATION, default
 * Jaeger's uber-trace-id).
 */
#include <stdio.h>
#include <string.h>

#include <curl/curl.h>
#include <glib.h>
#include <tracewire/curl.h>
#include <tracewire/microhttpd.h>
#include <tracewire/scope.h>

#include "demo.h"

static tw_tracer *tracer;
static demo_config config;

static size_t collect_body(char *data, size_t size, size_t n, void *user_data)
{
    g_string_append_len(user_data, data, (gssize)(size * n));
    return size * n;
}

/* GET @base@path in a CLIENT span (child of the active span); the body,
 * without its final newline, goes to @out. Returns the HTTP status, 0 when
 * the transfer failed. */
static long call_backend(const char *base, const char *path, GString *out)
{
    char url[256];
    snprintf(url, sizeof(url), "%s%s", base, path);
    struct curl_slist *headers = curl_slist_append(NULL, "Accept: text/plain");
    CURL *easy = curl_easy_init();
    long status = 0;
    if (easy && headers) {
        curl_easy_setopt(easy, CURLOPT_URL, url);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, collect_body);
        curl_easy_setopt(easy, CURLOPT_WRITEDATA, out);
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 5000L);
        /* Our header list goes here, not to CURLOPT_HTTPHEADER: tracewire adds
         * the trace headers to a copy for each transfer (tracewire/curl.h). */
        tw_curl_instrument(tracer, easy, NULL, headers);
        if (tw_curl_easy_perform(easy) == CURLE_OK)
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    }
    tw_curl_easy_cleanup(easy);
    curl_slist_free_all(headers);
    while (out->len > 0 && out->str[out->len - 1] == '\n')
        g_string_truncate(out, out->len - 1);
    return status;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)cls;
    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)req_cls;
    tw_span *span = tw_mhd_start_span(tracer, connection, method, url);
    tw_scope *scope = tw_scope_activate(span, false);

    unsigned int status = 200;
    GString *body = g_string_new(NULL);
    if (strcmp(method, "GET") == 0 && strcmp(url, "/checkout") == 0) {
        GString *price = g_string_new(NULL), *stock = g_string_new(NULL);
        long price_status = call_backend(config.backend_a, "/price", price);
        long stock_status = call_backend(config.backend_b, "/stock", stock);
        if (price_status == 200 && stock_status == 200) {
            g_string_printf(body, "checkout: %s, %s\n", price->str, stock->str);
        } else {
            status = 502;
            g_string_printf(body, "a backend failed: price %ld, stock %ld\n", price_status,
                            stock_status);
        }
        g_string_free(price, TRUE);
        g_string_free(stock, TRUE);
    } else {
        status = 404;
        g_string_assign(body, "no such resource\n");
    }

    tw_scope_close(scope);
    enum MHD_Result ret = demo_respond(connection, status, body->str);
    tw_mhd_finish_span(span, status);
    g_string_free(body, TRUE);
    return ret;
}

int main(int argc, char **argv)
{
    demo_block_stop_signals();
    if (!demo_config_parse(argc, argv, true, &config))
        return 2;
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
        return 1;
    tracer = demo_tracer_from_env("frontend");
    if (!tracer)
        return 1;
    struct MHD_Daemon *daemon = demo_serve("frontend", config.port, handle, NULL);
    int rc = 1;
    if (daemon) {
        demo_wait_for_stop();
        MHD_stop_daemon(daemon); /* waits for the handlers: every span is finished */
        rc = 0;
    }
    tw_tracer_free(tracer); /* closes: drains the queue and flushes to the agent */
    curl_global_cleanup();
    return rc;
}
