/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/w3c/w3c_service.c: a test service for the W3C Trace Context test
 * suite (github.com/w3c/trace-context, test/test.py), built only on tracewire's
 * public API, as a user's service would be.
 *
 * The suite's protocol: it POSTs to /test a JSON list of {"url": ..., "arguments":
 * [...]} with trace headers of its choosing; for each entry the service calls back,
 * POSTing "arguments" (JSON) to "url", and the suite checks the traceparent and
 * tracestate of those callbacks. Here: the request's headers go into a tw_headers
 * list, tw_tracer_extract (a tracer with the W3C propagator only) reads the caller's
 * context (a malformed or missing one starts a new trace), a SERVER span is its
 * child, and each callback runs in a CLIENT span, child of that one, injected with
 * tw_tracer_inject into the libcurl header list of the callback.
 *
 * Spans go nowhere (the null reporter) unless --log-spans prints them. The server
 * listens on 127.0.0.1 only, on --port (default 0: any free port), and prints
 * "w3c_service listening on http://127.0.0.1:PORT/test" on stdout once ready;
 * SIGTERM or SIGINT stops it. tests/interop/w3c/run_suite.sh runs the suite against
 * it; docs/PROPAGATION.md has the command.
 *
 * Threads: libmicrohttpd runs one thread per connection, each handler blocks on its
 * own callbacks; the tracer is shared (any thread); everything else is per request.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <tracewire/curl.h>
#include <tracewire/tracewire.h>

#define PROGRAM "w3c_service"
#define MAX_BODY_BYTES (1024 * 1024) /* the suite sends a few hundred bytes */
#define CALLBACK_TIMEOUT_MS 10000L

typedef struct service {
    tw_tracer *tracer;
    bool is_verbose;
} service;

/* One request's state across the access handler's calls (libmicrohttpd hands the
 * body over in pieces). */
typedef struct request {
    char *body;
    size_t len;
    bool is_too_large;
} request;

static enum MHD_Result respond(struct MHD_Connection *connection, unsigned int status,
                               const char *content_type, const char *body)
{
    struct MHD_Response *response =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!response)
        return MHD_NO;
    MHD_add_response_header(response, "Content-Type", content_type);
    enum MHD_Result ret = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return ret;
}

/* ---- the incoming context --------------------------------------------------------------- */

static enum MHD_Result add_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                  const char *value)
{
    (void)kind;
    /* Every field, repeated ones included, in order: the W3C codec decides what a second
     * traceparent or several tracestate fields mean. */
    return tw_headers_add(cls, key, value ? value : "") == TW_OK ? MHD_YES : MHD_NO;
}

static void log_headers(const char *what, const tw_headers *headers)
{
    const char *k, *v;
    for (size_t i = 0; tw_headers_item(headers, i, &k, &v); i++) {
        if (strcasecmp(k, "traceparent") == 0 || strcasecmp(k, "tracestate") == 0)
            fprintf(stderr, PROGRAM ": %s %s: %s\n", what, k, v);
    }
}

/* The caller's context, or NULL (none, or malformed: a new trace starts). */
static tw_span_context *extract(const service *svc, struct MHD_Connection *connection)
{
    tw_headers *headers = tw_headers_new();
    if (!headers)
        return NULL;
    tw_span_context *ctx = NULL;
    if (MHD_get_connection_values(connection, MHD_HEADER_KIND, add_header, headers) >= 0) {
        tw_carrier_reader reader = tw_headers_reader(headers);
        tw_error *err = NULL;
        ctx = tw_tracer_extract(svc->tracer, TW_FORMAT_HTTP_HEADERS, &reader, &err);
        if (svc->is_verbose) {
            log_headers("in", headers);
            if (!ctx)
                fprintf(stderr, PROGRAM ": no context: %s\n", tw_error_message(err));
        }
        tw_error_free(err);
    }
    tw_headers_free(headers);
    return ctx;
}

/* ---- callbacks ------------------------------------------------------------------------ */

static size_t discard(char *data, size_t size, size_t n, void *user_data)
{
    (void)data;
    (void)user_data;
    return size * n;
}

/* POSTs @arguments to @url in a CLIENT span, child of @parent. Returns whether the
 * callback got an HTTP response. */
static bool call_back(const service *svc, const tw_span_context *parent, const char *url,
                      const json_t *arguments)
{
    tw_span *span = tw_span_start_child(svc->tracer, "POST callback", parent);
    tw_span_set_tag_str(span, "span.kind", "client");
    tw_span_set_tag_str(span, "http.method", "POST");
    tw_span_set_tag_str(span, "http.url", url);
    struct curl_slist *headers = curl_slist_append(NULL, "Content-Type: application/json");
    tw_carrier_writer writer = tw_curl_slist_writer(&headers);
    tw_status st =
        tw_tracer_inject(svc->tracer, tw_span_get_context(span), TW_FORMAT_HTTP_HEADERS, &writer);
    char *body = json_dumps(arguments, JSON_COMPACT | JSON_ENCODE_ANY);
    CURL *easy = curl_easy_init();
    bool ok = false;
    if (st != TW_OK || !headers || !body || !easy) {
        fprintf(stderr, PROGRAM ": %s: cannot prepare the callback (%s)\n", url,
                st != TW_OK ? tw_status_str(st) : "out of memory");
    } else {
        if (svc->is_verbose) {
            for (const struct curl_slist *l = headers; l; l = l->next)
                fprintf(stderr, PROGRAM ": out %s\n", l->data);
        }
        curl_easy_setopt(easy, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85 */
        curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
#else
        curl_easy_setopt(easy, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard);
        curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, CALLBACK_TIMEOUT_MS);
        curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
        CURLcode rc = curl_easy_perform(easy);
        long status = 0;
        curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
        tw_span_set_tag_int64(span, "http.status_code", status);
        if (rc != CURLE_OK) {
            tw_span_set_tag_bool(span, "error", true);
            fprintf(stderr, PROGRAM ": %s: %s\n", url, curl_easy_strerror(rc));
        }
        ok = rc == CURLE_OK;
    }
    curl_easy_cleanup(easy);
    free(body);
    curl_slist_free_all(headers);
    tw_span_finish(span);
    return ok;
}

/* Runs the callbacks a POST /test body asks for. Returns the HTTP status to answer
 * with and sets @message. */
static unsigned int run_test(const service *svc, const tw_span_context *parent, const char *body,
                             size_t len, char *message, size_t size)
{
    json_error_t jerr;
    json_t *list = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!list || !json_is_array(list)) {
        snprintf(message, size, "{\"error\": \"the body is not a JSON list\"}");
        json_decref(list);
        return MHD_HTTP_BAD_REQUEST;
    }
    size_t i, n_ok = 0;
    json_t *entry;
    json_array_foreach(list, i, entry)
    {
        const json_t *url = json_object_get(entry, "url");
        const json_t *arguments = json_object_get(entry, "arguments");
        if (!json_is_string(url)) {
            snprintf(message, size, "{\"error\": \"entry %zu has no \\\"url\\\" string\"}", i);
            json_decref(list);
            return MHD_HTTP_BAD_REQUEST;
        }
        json_t *empty = arguments ? NULL : json_array();
        n_ok += call_back(svc, parent, json_string_value(url), arguments ? arguments : empty);
        json_decref(empty);
    }
    snprintf(message, size, "{\"callbacks\": %zu, \"failed\": %zu}", json_array_size(list),
             json_array_size(list) - n_ok);
    json_decref(list);
    return MHD_HTTP_OK;
}

/* ---- the server ----------------------------------------------------------------------- */

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    const service *svc = cls;
    if (strcmp(url, "/test") != 0)
        return respond(connection, MHD_HTTP_NOT_FOUND, "text/plain", "POST /test only\n");
    if (strcmp(method, "POST") != 0)
        return respond(connection, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "POST /test only\n");
    request *req = *req_cls;
    if (!req) { /* first call: the headers only */
        req = calloc(1, sizeof *req);
        if (!req)
            return MHD_NO;
        *req_cls = req;
        return MHD_YES;
    }
    if (*upload_data_size) { /* a piece of the body */
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (req->is_too_large || n > MAX_BODY_BYTES - req->len) {
            req->is_too_large = true;
            return MHD_YES;
        }
        char *grown = realloc(req->body, req->len + n);
        if (!grown)
            return MHD_NO;
        memcpy(grown + req->len, upload_data, n);
        req->body = grown;
        req->len += n;
        return MHD_YES;
    }
    if (req->is_too_large)
        return respond(connection, 413 /* Content Too Large */, "text/plain",
                       "body larger than 1 MiB\n");
    tw_span_context *up = extract(svc, connection);
    tw_span *span = tw_span_start_child(svc->tracer, "POST /test", up); /* NULL: a new trace */
    tw_span_set_tag_str(span, "span.kind", "server");
    char message[160];
    unsigned int status = run_test(svc, tw_span_get_context(span), req->body ? req->body : "",
                                   req->len, message, sizeof message);
    tw_span_set_tag_int64(span, "http.status_code", status);
    enum MHD_Result ret = respond(connection, status, "application/json", message);
    tw_span_finish(span);
    tw_span_context_unref(up);
    return ret;
}

static void request_done(void *cls, struct MHD_Connection *connection, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)connection;
    (void)toe;
    request *req = *req_cls;
    if (req) {
        free(req->body);
        free(req);
        *req_cls = NULL;
    }
}

static tw_tracer *make_tracer(bool log_spans)
{
    tw_codec w3c = TW_CODEC_W3C;
    tw_error *err = NULL;
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_propagator *propagator = tw_propagator_new(&w3c, 1, &err);
    tw_tracer *tracer = NULL;
    if (opts && propagator) {
        tw_tracer_options_set_service(opts, PROGRAM);
        tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
        tw_tracer_options_set_reporter(opts, log_spans ? tw_reporter_logging_new(NULL, NULL)
                                                       : tw_reporter_null_new());
        tw_tracer_options_set_propagator(opts, propagator);
        propagator = NULL;
        tracer = tw_tracer_new(opts, &err);
    }
    if (!tracer)
        fprintf(stderr, PROGRAM ": cannot make the tracer: %s\n",
                err ? tw_error_message(err) : "out of memory");
    tw_propagator_free(propagator);
    tw_tracer_options_free(opts);
    tw_error_free(err);
    return tracer;
}

static void usage(FILE *out)
{
    fprintf(out, "Usage: " PROGRAM " [--port N] [--verbose] [--log-spans]\n"
                 "Serves POST /test on 127.0.0.1 for the W3C trace-context test suite.\n"
                 "  --port N      port to listen on (default 0: any free port)\n"
                 "  --verbose     print the trace headers of every request and callback\n"
                 "  --log-spans   print every finished span (default: spans are dropped)\n");
}

int main(int argc, char **argv)
{
    unsigned long port = 0;
    bool is_verbose = false, log_spans = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            port = strtoul(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || port > 65535) {
                fprintf(stderr, PROGRAM ": --port: \"%s\" is not a port number\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--verbose") == 0) {
            is_verbose = true;
        } else if (strcmp(argv[i], "--log-spans") == 0) {
            log_spans = true;
        } else if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, PROGRAM ": unknown argument \"%s\"\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    /* SIGTERM and SIGINT are taken by sigwait below, in this thread only. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, PROGRAM ": curl_global_init failed\n");
        return 1;
    }
    service svc = {make_tracer(log_spans), is_verbose};
    if (!svc.tracer) {
        curl_global_cleanup();
        return 1;
    }
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, handle, &svc, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr,
        MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL, MHD_OPTION_END);
    int rc = 1;
    if (!daemon) {
        fprintf(stderr, PROGRAM ": cannot listen on 127.0.0.1:%lu\n", port);
    } else {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
        printf(PROGRAM " listening on http://127.0.0.1:%u/test\n",
               info ? (unsigned int)info->port : (unsigned int)port);
        fflush(stdout);
        int sig = 0;
        while (sigwait(&stop, &sig) != 0) {
        }
        MHD_stop_daemon(daemon);
        rc = 0;
    }
    tw_tracer_close(svc.tracer);
    tw_tracer_free(svc.tracer);
    curl_global_cleanup();
    return rc;
}
