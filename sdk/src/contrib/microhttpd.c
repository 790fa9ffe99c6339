/* SPDX-License-Identifier: Apache-2.0 */
/*
 * contrib/microhttpd.c: SERVER spans for libmicrohttpd requests
 * (tracewire/microhttpd.h).
 *
 * Where it sits: at the entry of a request, on the server's handler thread:
 * the request headers are read through a carrier over
 * MHD_get_connection_values, the tracer's propagator extracts the caller's
 * context (propagation/), and the span starts as its child (core); the
 * finish helper hands it to the reporter as any other span.
 *
 * This file is its own library (libtracewire-microhttpd) so that libtracewire
 * does not link libmicrohttpd; it therefore uses the public API only (the
 * core's tw__ symbols are hidden in the shared library). It takes no lock;
 * a tw_mhd_request (span, scope) lives from begin to end of one request.
 *
 * Spec: OpenTracing semantic conventions (span.kind, http.*, peer.*, error).
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tracewire/microhttpd.h"
#include "tracewire/propagation.h"
#include "tracewire/scope.h"
#include "tracewire/tags.h"

/* ---- a carrier reader over the request headers -------------------------------------------- */

typedef struct header_walk {
    tw_carrier_handler_fn handler;
    void *handler_data;
    tw_status status; /* the first non-OK status of the handler, which stops the walk */
} header_walk;

static enum MHD_Result visit_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    (void)kind;
    header_walk *walk = cls;
    /* A header sent without a value ("X-Foo:") comes with value NULL. */
    walk->status = walk->handler(walk->handler_data, key, value ? value : "");
    return walk->status == TW_OK ? MHD_YES : MHD_NO;
}

static tw_status foreach_header(void *user_data, tw_carrier_handler_fn handler, void *handler_data)
{
    header_walk walk = {handler, handler_data, TW_OK};
    MHD_get_connection_values(user_data, MHD_HEADER_KIND, visit_header, &walk);
    return walk.status;
}

/* ---- peer address ------------------------------------------------------------------------- */

static void tag_peer(tw_span_options *opts, struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr)
        return;
    char text[INET6_ADDRSTRLEN];
    const struct sockaddr *addr = info->client_addr;
    if (addr->sa_family == AF_INET) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)addr;
        if (inet_ntop(AF_INET, &in4->sin_addr, text, sizeof(text)))
            tw_span_options_add_tag_str(opts, "peer.ipv4", text);
        tw_span_options_add_tag_int64(opts, "peer.port", ntohs(in4->sin_port));
    } else if (addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        if (inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text)))
            tw_span_options_add_tag_str(opts, "peer.ipv6", text);
        tw_span_options_add_tag_int64(opts, "peer.port", ntohs(in6->sin6_port));
    }
}

/* ---- start and finish ----------------------------------------------------------------------- */

/* The SERVER span of a request; @route (nullable) names the operation in
 * place of the path. */
static tw_span *start_span(tw_tracer *tracer, struct MHD_Connection *connection, const char *method,
                           const char *url, const char *route)
{
    if (!tracer || !connection || !method || !url)
        return NULL;
    tw_carrier_reader reader = {foreach_header, connection};
    tw_error *extract_error = NULL;
    tw_span_context *parent =
        tw_tracer_extract(tracer, TW_FORMAT_HTTP_HEADERS, &reader, &extract_error);

    tw_span_options *opts = tw_span_options_new();
    if (!opts) {
        tw_span_context_unref(parent);
        tw_error_free(extract_error);
        return NULL;
    }
    tw_span_options_add_reference(opts, TW_REF_CHILD_OF, parent);
    tw_span_options_add_tag_str(opts, TW_TAG_SPAN_KIND, "server");
    tw_span_options_add_tag_str(opts, TW_TAG_COMPONENT, "libmicrohttpd");
    tw_span_options_add_tag_str(opts, TW_TAG_HTTP_METHOD, method);
    tw_span_options_add_tag_str(opts, TW_TAG_HTTP_URL, url);
    if (route)
        tw_span_options_add_tag_str(opts, TW_ATTR_HTTP_ROUTE, route);
    tag_peer(opts, connection);

    /* "<method> <route or url>", the name the sampler sees: the buffer is
     * sized from the inputs (no limit needed: libmicrohttpd bounds the
     * request line by its memory pool, the route is the application's). */
    const char *name = route ? route : url;
    size_t name_len = strlen(method) + 1 + strlen(name) + 1;
    char *operation = malloc(name_len);
    tw_span *span = NULL;
    if (operation) {
        snprintf(operation, name_len, "%s %s", method, name);
        span = tw_span_start(tracer, operation, opts);
        free(operation);
    }
    tw_span_options_free(opts);
    tw_span_context_unref(parent);

    /* "No context" is the normal case of a request from outside the trace;
     * anything else (a malformed header) is worth seeing on the span. */
    if (extract_error && tw_error_status(extract_error) != TW_E_NOT_FOUND)
        tw_span_log_kv(span, "event", "extract-failed", "message", tw_error_message(extract_error),
                       NULL);
    tw_error_free(extract_error);
    return span;
}

tw_span *tw_mhd_start_span(tw_tracer *tracer, struct MHD_Connection *connection, const char *method,
                           const char *url)
{
    return start_span(tracer, connection, method, url, NULL);
}

/* ---- requests: route and activation ---------------------------------------------------------- */

struct tw_mhd_request {
    tw_span *span;   /* owned: ended by tw_mhd_request_end */
    tw_scope *scope; /* while the span is active on the calling thread, else NULL */
};

tw_mhd_request *tw_mhd_request_begin(tw_tracer *tracer, struct MHD_Connection *connection,
                                     const char *method, const char *url,
                                     const tw_mhd_options *options)
{
    /* Members the caller's struct is too old to have are taken as absent. */
    const char *route = NULL;
    bool is_active = false;
    if (options && options->size >= offsetof(tw_mhd_options, route) + sizeof options->route)
        route = options->route;
    if (options && options->size >= offsetof(tw_mhd_options, activate) + sizeof options->activate)
        is_active = options->activate;
    tw_mhd_request *req = calloc(1, sizeof *req);
    if (!req)
        return NULL;
    req->span = start_span(tracer, connection, method, url, route);
    if (!req->span) {
        free(req);
        return NULL;
    }
    if (is_active)
        req->scope = tw_scope_activate(req->span, false); /* NULL: logged; runs inactive */
    return req;
}

tw_span *tw_mhd_request_span(const tw_mhd_request *req)
{
    return req ? req->span : NULL;
}

tw_status tw_mhd_request_enter(tw_mhd_request *req)
{
    if (!req)
        return TW_E_INVALID_ARG;
    if (req->scope)
        return TW_E_STATE;
    req->scope = tw_scope_activate(req->span, false);
    return req->scope ? TW_OK : TW_E_NOMEM;
}

tw_status tw_mhd_request_leave(tw_mhd_request *req)
{
    if (!req)
        return TW_E_INVALID_ARG;
    if (!req->scope)
        return TW_OK;
    tw_status st = tw_scope_close(req->scope);
    if (st == TW_OK)
        req->scope = NULL;
    return st;
}

void tw_mhd_request_end(tw_mhd_request *req, unsigned int status_code)
{
    if (!req)
        return;
    tw_mhd_request_leave(req);
    tw_mhd_finish_span(req->span, status_code);
    free(req);
}

void tw_mhd_finish_span(tw_span *span, unsigned int status_code)
{
    if (!span)
        return;
    tw_span_set_tag_int64(span, "http.status_code", (int64_t)status_code);
    if (status_code >= 500)
        tw_span_set_tag_bool(span, "error", true);
    tw_span_finish(span);
}
