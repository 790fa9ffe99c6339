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
 * core's tw__ symbols are hidden in the shared library). It owns nothing
 * between calls and takes no lock.
 *
 * Spec: OpenTracing semantic conventions (span.kind, http.*, peer.*, error).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "tracewire/microhttpd.h"
#include "tracewire/propagation.h"

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

tw_span *tw_mhd_start_span(tw_tracer *tracer, struct MHD_Connection *connection, const char *method,
                           const char *url)
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
    tw_span_options_add_tag_str(opts, "span.kind", "server");
    tw_span_options_add_tag_str(opts, "component", "libmicrohttpd");
    tw_span_options_add_tag_str(opts, "http.method", method);
    tw_span_options_add_tag_str(opts, "http.url", url);
    tag_peer(opts, connection);

    /* "<method> <url>": the buffer is sized from the inputs (no limit needed:
     * libmicrohttpd bounds the request line by its memory pool). */
    size_t name_len = strlen(method) + 1 + strlen(url) + 1;
    char *operation = malloc(name_len);
    tw_span *span = NULL;
    if (operation) {
        snprintf(operation, name_len, "%s %s", method, url);
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

void tw_mhd_finish_span(tw_span *span, unsigned int status_code)
{
    if (!span)
        return;
    tw_span_set_tag_int64(span, "http.status_code", (int64_t)status_code);
    if (status_code >= 500)
        tw_span_set_tag_bool(span, "error", true);
    tw_span_finish(span);
}
