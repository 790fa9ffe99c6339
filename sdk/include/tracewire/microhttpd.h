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
 *   tw_span *span = tw_mhd_start_span(tracer, connection, method, url);
 *   *req_cls = span;   // the handler may be called again for the body
 *   ...
 *   ret = MHD_queue_response(connection, status, response);
 *   tw_mhd_finish_span(span, status);
 *
 * The span: operation "<method> <url>" (@url is what libmicrohttpd passes:
 * the path, without the query string; rename the span with
 * tw_span_set_operation_name() when paths carry ids, to keep operation names
 * few); tags span.kind=server, component=libmicrohttpd, http.method, http.url
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
 * (or tw_span_finish()). Nothing else is retained.
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

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_MICROHTTPD_H */
