/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/curl.h: CLIENT spans around libcurl easy transfers, with the
 * trace context injected into the request headers through the tracer's
 * propagator. Contrib header: it includes <curl/curl.h> and is not part of
 * <tracewire/tracewire.h>; the functions live in libtracewire itself, which
 * links libcurl anyway. Compile with $(pkg-config --cflags tracewire libcurl).
 *
 * The common case, one call, nothing to release:
 *
 *   struct curl_slist *mine = curl_slist_append(NULL, "Accept: application/json");
 *   curl_easy_setopt(easy, CURLOPT_URL, "http://backend/price");
 *   curl_easy_setopt(easy, CURLOPT_HTTPHEADER, mine);   // as the application already does
 *   CURLcode rc = tw_curl_perform(tracer, easy, NULL, mine, TW_CURL_MARK_PARENT_ERROR);
 *
 * A handle performed many times (or through the multi interface) can be
 * instrumented once instead:
 *
 *   tw_curl_instrument(tracer, easy, NULL, mine);  // NULL: the active span is the parent
 *   CURLcode rc = tw_curl_easy_perform(easy);      // one CLIENT span per call
 *   tw_curl_easy_cleanup(easy);                    // tw_curl_release + curl_easy_cleanup
 *
 * What is and is not possible, and why the API has this shape:
 * - Plain curl_easy_perform() is not traced. libcurl has no hook at the end
 *   of an easy transfer, so nothing could finish the span or read the status
 *   when curl_easy_perform() returns. CURLOPT_PREREQFUNCTION (libcurl 7.80)
 *   does not close the gap: it runs after the connection is made and before
 *   the request is sent, so it could start a span and (as observed with
 *   libcurl 7.88, undocumented) swap CURLOPT_HTTPHEADER in time, but it never
 *   runs when DNS, connect or TLS fails, so exactly the failed transfers
 *   would have no span, the span would miss connect time, and it would take
 *   the application's only PREREQFUNCTION slot. Hence tw_curl_easy_perform(),
 *   and tw_curl_transfer_begin()/_end() for the multi interface.
 * - libcurl cannot return a handle's CURLOPT_HTTPHEADER list, so the
 *   application gives its own list to tw_curl_instrument() instead of
 *   setting CURLOPT_HTTPHEADER. For each transfer tracewire builds a new list:
 *   a copy of the application's entries minus those named like a header the
 *   propagator writes (a stale uber-trace-id must not travel next to the new
 *   one), plus the injected headers. After the transfer it sets
 *   CURLOPT_HTTPHEADER back to the application's list and frees its own. The
 *   application's list is never modified or freed. A list set directly with
 *   CURLOPT_HTTPHEADER on an instrumented handle is replaced by the one given
 *   to tw_curl_instrument() at the next traced transfer.
 * - tw_curl_instrument() keeps per-handle state in a side table keyed by the
 *   CURL pointer, not in CURLOPT_PRIVATE, which stays the application's.
 *   libcurl has no cleanup hook either: call tw_curl_release() (or
 *   tw_curl_easy_cleanup()) before curl_easy_cleanup(), or the state leaks
 *   and a later handle at the same address would inherit it.
 *   curl_easy_duphandle() copies the application's header list but not the
 *   instrumentation. tw_curl_perform() keeps no state at all.
 * - Tracing never fails or delays a transfer: when a span, the header list or
 *   the injection cannot be made (no memory, a closed tracer, a propagator
 *   error), the transfer runs with the application's headers, and the problem
 *   goes to the logger. Nothing here waits for I/O beyond the transfer itself.
 *
 * The span: operation "HTTP <method>" ("HTTP" before libcurl 7.72, which
 * cannot report the method). libcurl reports the method only after the
 * transfer (there is no getter for CURLOPT_CUSTOMREQUEST/POST/NOBODY), so the
 * span starts as "HTTP" and is renamed at the end: a sampler deciding by
 * operation name sees "HTTP". Tags span.kind=client, component=libcurl,
 * http.method, http.url (the effective URL after redirects, without user
 * name and password), http.status_code (when a response arrived),
 * peer.hostname (the URL's host), peer.ipv4 or peer.ipv6 and peer.port (the
 * address libcurl last connected to, when it connected at all). One span per
 * perform: redirects followed inside it (CURLOPT_FOLLOWLOCATION) carry the
 * same injected headers and show up only in http.url.
 * Errors: a transfer that ends with a CURLcode other than CURLE_OK is marked
 * with tw_span_set_error(span, "curl", curl_easy_strerror(code)) plus the tag
 * curl.error_code; a response status >= 500 sets error=true. A 4xx status is
 * not an error of the client span: to the caller it is usually an answer
 * (404 for "no such item"), and the status code tag keeps it visible.
 *
 * Ownership: the tracer and the application's header list are borrowed: both
 * must outlive the instrumentation (until tw_curl_release() or the next
 * tw_curl_instrument() of the handle). A parent context is referenced, so the
 * caller may drop its own.
 * Thread safety: libcurl's rule, one thread at a time per easy handle, covers
 * every tw_curl_* call on that handle; different handles may be used from
 * different threads at once (the side table has its own lock, never held
 * during a transfer).
 */
#ifndef TRACEWIRE_CURL_H
#define TRACEWIRE_CURL_H

#include <curl/curl.h>

#include "tracewire/common.h"
#include "tracewire/context.h"
#include "tracewire/tracer.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * tw_curl_instrument: makes tw_curl_easy_perform() (or
 * tw_curl_transfer_begin/_end) on @easy run in a CLIENT span of @tracer.
 * Calling it again on an instrumented handle replaces tracer, parent and
 * header list (at most one transfer may be in progress: TW_E_STATE).
 * Sets CURLOPT_HTTPHEADER to @user_headers at once, so that an untraced
 * curl_easy_perform() on the handle sends the same application headers.
 * @tracer: (transfer none) must outlive the instrumentation.
 * @easy: the easy handle.
 * @parent: (nullable) the parent of every span of this handle (referenced);
 *   NULL: whatever tw_span_start() picks at the start of each transfer: the
 *   calling thread's active context of @tracer (tracewire/scope.h), or a
 *   new trace when nothing is active (or the tracer does not use the
 *   active span).
 * @user_headers: (transfer none) (nullable) the application's own request
 *   headers, in place of CURLOPT_HTTPHEADER; must stay alive and unchanged
 *   until tw_curl_release() or the next tw_curl_instrument().
 * Returns: TW_OK; TW_E_INVALID_ARG for a NULL tracer or handle; TW_E_NOMEM;
 * TW_E_STATE while a transfer of @easy is in progress. On failure the
 * handle's instrumentation and options are unchanged.
 * Thread safety: one thread at a time per easy handle. Since: 0.1
 */
TW_EXTERN tw_status tw_curl_instrument(tw_tracer *tracer, CURL *easy, const tw_span_context *parent,
                                       struct curl_slist *user_headers);

/* tw_curl_perform() flags. */
/* Also mark the parent span failed (tw_span_set_error, kind "http", message
 * "HTTP request to <url> failed: <reason>") when the transfer failed
 * (a CURLcode other than CURLE_OK, or a 5xx status). */
#define TW_CURL_MARK_PARENT_ERROR 0x1u

/**
 * tw_curl_perform: the common case in one call: curl_easy_perform(@easy)
 * in a CLIENT span of @tracer, with the trace context injected next to the
 * application's headers, and the span tagged and finished before it
 * returns (the span's rules are tw_curl_easy_perform()'s, above). Nothing
 * is kept afterwards: no release step, and @easy is left exactly as the
 * caller set it (CURLOPT_HTTPHEADER is @headers again).
 * @tracer: the tracer (NULL: the transfer runs untraced, logged).
 * @easy: the easy handle, options set (URL, method, body, ...).
 * @parent: (nullable) the parent span; NULL: the calling thread's active
 *   span of @tracer (tracewire/scope.h), or a new trace.
 * @headers: (transfer none) (nullable) the list the application set (or
 *   would set) as CURLOPT_HTTPHEADER: libcurl cannot give it back, so it is
 *   passed here. Never modified or freed. NULL: no headers of its own.
 * @flags: 0, or TW_CURL_MARK_PARENT_ERROR (the parent, or the active span,
 *   is marked failed when the transfer fails).
 * Returns: exactly what curl_easy_perform() returned; tracing problems go
 * to the logger and never stop the transfer.
 * Do not use it on a handle instrumented with tw_curl_instrument().
 * Thread safety: one thread at a time per easy handle; the parent span
 * follows span.h's rule. Since: 0.1
 */
TW_EXTERN CURLcode tw_curl_perform(tw_tracer *tracer, CURL *easy, tw_span *parent,
                                   struct curl_slist *headers, unsigned int flags);

/**
 * tw_curl_slist_writer: a carrier writer that appends "Key: value" header
 * lines to *@list (with curl_slist_append; an existing line of the same name
 * is not removed). Use it to inject into a header list you pass to
 * CURLOPT_HTTPHEADER yourself. The writer borrows @list for as long as it
 * is used. Thread safety: one thread at a time per list. Since: 0.1
 */
TW_EXTERN tw_carrier_writer tw_curl_slist_writer(struct curl_slist **list);

/**
 * tw_curl_slist_reader: a carrier reader over the "Key: value" lines of
 * @list (for example response headers collected with CURLOPT_HEADERFUNCTION):
 * names and values are trimmed of spaces; lines without ':' (a status line)
 * are skipped. Borrows @list while used. Since: 0.1
 */
TW_EXTERN tw_carrier_reader tw_curl_slist_reader(const struct curl_slist *list);

/**
 * tw_curl_easy_perform: curl_easy_perform() in a CLIENT span: starts the
 * span and injects its context, performs, then tags and finishes the span
 * and restores the application's header list. On a handle that is not
 * instrumented it is curl_easy_perform() and nothing else.
 * Returns: exactly what curl_easy_perform() returned; tracing problems are
 * never reported here (see the logger).
 * Thread safety: one thread at a time per easy handle. Since: 0.1
 */
TW_EXTERN CURLcode tw_curl_easy_perform(CURL *easy);

/**
 * tw_curl_transfer_begin: the first half of tw_curl_easy_perform(), for the
 * multi interface: call it before curl_multi_add_handle(), on the thread
 * whose active span should be the parent. The span starts here, so it
 * includes the time the handle waits in the multi handle.
 * Returns: TW_OK, also when no span could be made (closed tracer, no
 * memory: logged) or the context could not be injected (logged);
 * TW_E_NOT_FOUND when @easy is not instrumented; TW_E_STATE when a transfer
 * is already in progress (end it with tw_curl_transfer_end() first). Run the
 * transfer whatever this returns: tracing never stands in its way.
 * Thread safety: one thread at a time per easy handle. Since: 0.1
 */
TW_EXTERN tw_status tw_curl_transfer_begin(CURL *easy);

/**
 * tw_curl_transfer_end: the second half: reads the transfer's information,
 * tags and finishes the span, restores the application's header list. Call
 * it with the CURLMSG_DONE result (msg->data.result) before
 * curl_multi_remove_handle() or before reusing the handle. Without a
 * transfer in progress it does nothing.
 * Thread safety: one thread at a time per easy handle. Since: 0.1
 */
TW_EXTERN void tw_curl_transfer_end(CURL *easy, CURLcode result);

/**
 * tw_curl_release: forgets the instrumentation of @easy and drops the parent
 * reference; CURLOPT_HTTPHEADER keeps the application's list. A
 * transfer still in progress (begin without end) is finished as failed
 * ("transfer abandoned"). NULL or a handle that is not instrumented: no-op.
 * Thread safety: one thread at a time per easy handle. Since: 0.1
 */
TW_EXTERN void tw_curl_release(CURL *easy);

/**
 * tw_curl_easy_cleanup: tw_curl_release() then curl_easy_cleanup(). NULL is
 * a no-op. Thread safety: one thread at a time per easy handle. Since: 0.1
 */
TW_EXTERN void tw_curl_easy_cleanup(CURL *easy);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_CURL_H */
