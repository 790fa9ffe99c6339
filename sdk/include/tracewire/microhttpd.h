/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/microhttpd.h: SERVER spans for requests served with
 * libmicrohttpd, continuing the trace the caller sent in its headers
 * (tw_tracer_extract with the tracer's propagator). Contrib header: it
 * includes <microhttpd.h> and is not part of <tracewire/tracewire.h>; the
 * functions live in their own library, built only when configure finds
 * libmicrohttpd, so that libtracewire does not depend on it:
 *   cc app.c $(pkg-config --cflags --libs tracewire-microhttpd)
 *
 *   // in the MHD_AccessHandlerCallback, first call of a request:
 *   tw_mhd_options o = {.size = sizeof o, .route = "/stock/{id}", .activate = true};
 *   tw_mhd_request *req = tw_mhd_request_begin(tracer, connection, method, url, &o);
 *   ...                // spans started here are children of the request's span
 *   ret = MHD_queue_response(connection, status, response);
 *   tw_mhd_request_end(req, status);
 *
 * or, without route or activation, the span alone:
 *
 *   tw_span *span = tw_mhd_start_span(tracer, connection, method, url);
 *   *req_cls = span;   // the handler may be called again for the body
 *   ...
 *   tw_mhd_finish_span(span, status);
 *
 * The span: operation "<method> <url>" (@url is what libmicrohttpd passes:
 * the path, without the query string), or "<method> <route>" with a route
 * template (tw_mhd_request_begin), which keeps operation names few when
 * paths carry ids and is the name the sampler decides on; tags
 * span.kind=server, http.route (with a route), component=libmicrohttpd, http.method, http.url
 * (the same path), peer.ipv4 or peer.ipv6 and peer.port (the client's
 * address, from MHD_get_connection_info). Its parent is the context
 * extracted from the request headers; without one the span starts a new
 * trace. A malformed trace header also starts a new trace and is logged on
 * the span (event=extract-failed, message=the reason), so a broken caller is
 * visible where it does harm.
 *
 * Limits: libmicrohttpd does not tell the application the status of a queued
 * response or when it has been sent, so the application passes the status
 * to tw_mhd_finish_span(), and the span ends when the application calls it
 * (usually right after MHD_queue_response, before the body is on the wire).
 * For an end at the last byte, keep the span and status in the request's
 * state and finish from the MHD_OPTION_NOTIFY_COMPLETED callback.
 *
 * Ownership: the span returned is the caller's, ended by tw_mhd_finish_span()
 * (or tw_span_finish()); a tw_mhd_request is the caller's until
 * tw_mhd_request_end(), which frees it. Nothing else is retained.
 * Thread safety: call from the thread running the access handler of
 * @connection (any threading mode of libmicrohttpd); the span then follows
 * span.h's rule (one thread at a time, may be finished on another thread).
 */
#ifndef TRACEWIRE_MICROHTTPD_H
#define TRACEWIRE_MICROHTTPD_H

#include <microhttpd.h>

#include "tracewire/common.h"
#include "tracewire/span.h"
#include "tracewire/tracer.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * tw_mhd_start_span: starts the SERVER span of a request.
 * @tracer: the tracer. @connection: the request's connection.
 * @method: the HTTP method, @url: the path, as given to the access handler.
 * Returns: (transfer full) (nullable) the span; NULL for a NULL tracer,
 * connection, method or url, or when the tracer cannot start a span (closed,
 * out of memory): the tw_span_* calls and tw_mhd_finish_span() accept NULL,
 * so the handler's code path stays the same.
 * Thread safety: the thread running the access handler. Since: 0.1
 */
TW_EXTERN tw_span *tw_mhd_start_span(tw_tracer *tracer, struct MHD_Connection *connection,
                                     const char *method, const char *url);

/**
 * tw_mhd_finish_span: tags http.status_code with @status_code, sets
 * error=true when it is 500 or above (a 4xx is the client's failure, not the
 * server's: it is tagged, not marked), and finishes the span. The handle is
 * invalid afterwards. NULL is a no-op.
 * Thread safety: one thread at a time per span. Since: 0.1
 */
TW_EXTERN void tw_mhd_finish_span(tw_span *span, unsigned int status_code);

/* Options of tw_mhd_request_begin(). Members are only appended: set @size
 * to sizeof(tw_mhd_options) so that the library knows which ones you have. */
typedef struct tw_mhd_options {
    size_t size;
    /* (nullable) The route template the URL matched, "/stock/{id}": the
     * span is named "<method> <route>" from its start (the sampler decides
     * on that name) and tagged http.route; http.url keeps the path. NULL:
     * the path names the span. Borrowed for the call. */
    const char *route;
    /* Make the request's span the calling thread's active span
     * (tracewire/scope.h) until tw_mhd_request_leave() or _end(), so that
     * spans started in the handler without a parent are its children. */
    bool activate;
} tw_mhd_options;

typedef struct tw_mhd_request tw_mhd_request;

/**
 * tw_mhd_request_begin: starts the SERVER span of a request, as
 * tw_mhd_start_span() does, with a route template and activation.
 * libmicrohttpd calls the access handler several times per request (the
 * headers, each piece of an upload, the end): begin in the first call and
 * keep the request in *req_cls; with @options->activate, the span is active
 * from here to tw_mhd_request_leave() or tw_mhd_request_end() in the same
 * call (a call that returns without ending must leave, and a later call
 * enter again, so that no context is left on a server thread).
 * @tracer, @connection, @method, @url: as tw_mhd_start_span().
 * @options: (nullable) route and activation; NULL: neither.
 * Returns: (transfer full) (nullable) the request, ended by
 * tw_mhd_request_end(); NULL when no span could be started (NULL
 * arguments, a closed tracer, no memory): every tw_mhd_request_* call
 * accepts NULL.
 * Thread safety: the thread running the access handler. Since: 0.1
 */
TW_EXTERN tw_mhd_request *tw_mhd_request_begin(tw_tracer *tracer, struct MHD_Connection *connection,
                                               const char *method, const char *url,
                                               const tw_mhd_options *options);

/**
 * tw_mhd_request_span: the request's span, to tag or log on.
 * Returns: (transfer none) (nullable) borrowed until tw_mhd_request_end().
 * Thread safety: the thread handling the request. Since: 0.1
 */
TW_EXTERN tw_span *tw_mhd_request_span(const tw_mhd_request *req);

/**
 * tw_mhd_request_enter: makes the span active on the calling thread again,
 * at the start of a later access-handler call of the same request.
 * Returns: TW_OK; TW_E_STATE when it is active already; TW_E_NOMEM (logged;
 * the handler runs without it); TW_E_INVALID_ARG for NULL.
 * Thread safety: the thread running this call of the handler. Since: 0.1
 */
TW_EXTERN tw_status tw_mhd_request_enter(tw_mhd_request *req);

/**
 * tw_mhd_request_leave: ends the span's activation on the calling thread
 * (before returning from a handler call that does not end the request).
 * Not active: nothing to do, TW_OK.
 * Returns: TW_OK; TW_E_STATE when a scope activated after it is still open
 * (close that first; logged); TW_E_INVALID_ARG for NULL.
 * Thread safety: the thread that entered. Since: 0.1
 */
TW_EXTERN tw_status tw_mhd_request_leave(tw_mhd_request *req);

/**
 * tw_mhd_request_end: leaves (if active), then tw_mhd_finish_span() with
 * @status_code, and frees @req. NULL is a no-op.
 * Thread safety: the thread handling the request (the one that entered, if
 * active). Since: 0.1
 */
TW_EXTERN void tw_mhd_request_end(tw_mhd_request *req, unsigned int status_code);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_MICROHTTPD_H */
