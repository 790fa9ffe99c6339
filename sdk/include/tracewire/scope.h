/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/scope.h: the in-process context (Dapper's thread-local trace
 * context that follows control flow, OpenTracing's ScopeManager).
 *
 * A scope makes a span (or a bare context) the active one of its tracer on
 * the calling thread until the scope is closed. Scopes of one thread and one
 * tracer form a stack: the innermost open scope is the active one, and
 * scopes close in reverse order of activation (LIFO). While a scope is
 * active, tw_span_start() with no explicit parent (no references in its
 * options, or tw_span_start_child() with a NULL parent) starts a child of
 * the active context; tw_tracer_options_set_use_active_span(opts, false)
 * turns that off for a tracer, and tw_span_options_set_ignore_active_span()
 * for one span. Stacks are per thread and per tracer: two tracers in one
 * process never see each other's scopes.
 *
 * A scope holds its own reference to the activated context (ids, flags,
 * baggage), taken at activation and refreshed when the activating thread
 * changes the span's baggage or flags. So the active context stays valid even
 * if the span is finished on another thread; only tw_scope_span() and
 * tw_tracer_active_span() then return a dead handle (on the activating thread
 * a finished span is forgotten: they return NULL).
 *
 * To carry the context to other threads, capture it where the work is
 * created and run the work under the capture: tw_context_capture() and
 * tw_captured_run(); tracewire/pthread.h and tracewire/glib.h do it for
 * pthread_create, GThreadPool and GMainContext sources.
 *
 * Ownership: the header default (tracewire/common.h). A scope handle is
 * owned by the activating thread until tw_scope_close(); it dies there, like
 * a span handle at finish. With finish_span_on_close the scope owns the span:
 * the caller must not finish it. A tw_captured is freed with
 * tw_captured_free().
 *
 * Cost: activation and close use a per-thread pool of scope records (no
 * malloc in the steady state, no lock, no atomic except references on the
 * context's baggage and extras when it has them): about 135 instructions
 * for the pair. When no scope is open on the thread, tw_span_start and
 * tw_span_finish each pay one thread-local load and a compare. A capture is
 * one malloc.
 *
 * Thread safety: scopes are thread-local: a scope is closed by the thread
 * that activated it (another thread gets TW_E_STATE), and the tw_tracer_active_*
 * lookups answer for the calling thread. Captures are immutable: any number
 * of threads may run one concurrently.
 */
#ifndef TRACEWIRE_SCOPE_H
#define TRACEWIRE_SCOPE_H

#include "tracewire/common.h"
#include "tracewire/context.h"
#include "tracewire/span.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_scope tw_scope;
typedef struct tw_captured tw_captured;

/* ---- scopes ------------------------------------------------------------------------------- */

/**
 * tw_scope_activate: makes @span the active span of its tracer on the calling
 * thread, until tw_scope_close().
 * @span: an open span; its tracer is the one whose stack the scope joins.
 * @finish_span_on_close: true: the scope owns @span and tw_scope_close()
 * finishes it (the caller must not); false: the caller keeps finishing it.
 * Returns: (transfer full) (nullable) the scope, closed by tw_scope_close()
 * on this thread. NULL for a NULL or finished @span or when no scope record
 * can be allocated (logged); then @span is unchanged and still the caller's
 * to finish, also with @finish_span_on_close.
 * Thread safety: any thread; the scope belongs to the calling thread.
 * Since: 0.1
 */
TW_EXTERN tw_scope *tw_scope_activate(tw_span *span, bool finish_span_on_close);

/**
 * tw_scope_activate_context: makes @ctx the active context of @tracer on the
 * calling thread, without a span (tw_tracer_active_span() is NULL under it).
 * Typical use: a server activates the context it extracted from a request.
 * @ctx: (nullable) copied into the scope (the caller keeps its reference). A
 * context without ids (a hint) is activated as is: spans started under it
 * begin a new trace that honours it. NULL activates "no context": until the
 * scope closes, nothing is active for @tracer on this thread and spans start
 * as roots (the scopes below are hidden, not closed).
 * Returns: (transfer full) (nullable) the scope; NULL for a NULL @tracer or
 * on allocation failure (logged).
 * Thread safety: any thread; the scope belongs to the calling thread.
 * Since: 0.1
 */
TW_EXTERN tw_scope *tw_scope_activate_context(tw_tracer *tracer, const tw_span_context *ctx);

/**
 * tw_scope_close: ends @scope: the scope below it (if any) is active again,
 * and with finish_span_on_close its span is finished.
 * Returns: TW_OK, or, with nothing changed and a logged message:
 * TW_E_STATE when @scope is not the innermost open scope of its tracer on
 * this thread (close scopes in reverse order of activation), when it was
 * activated on another thread, or when it is already closed (detected while
 * its record is not reused by a later activation on the same thread);
 * TW_E_INVALID_ARG for NULL, without a message (a failed activation, which
 * was logged, returns NULL, so the caller's code path can stay the same).
 * The handle is invalid after TW_OK.
 * Thread safety: the thread that activated @scope. Since: 0.1
 */
TW_EXTERN tw_status tw_scope_close(tw_scope *scope);

/**
 * tw_scope_span: the span @scope activated.
 * Returns: (transfer none) (nullable) borrowed until the span finishes; NULL
 * for a context scope, after the span finished on this thread, or for NULL.
 * Thread safety: the thread that activated @scope. Since: 0.1
 */
TW_EXTERN tw_span *tw_scope_span(const tw_scope *scope);

/**
 * tw_scope_context: the context @scope activated.
 * Returns: (transfer none) (nullable) borrowed until the scope closes (take
 * tw_span_context_ref() to keep it longer); NULL for a "no context" scope
 * or NULL. Thread safety: the thread that activated @scope. Since: 0.1
 */
TW_EXTERN const tw_span_context *tw_scope_context(const tw_scope *scope);

/**
 * tw_tracer_active_span: the span of the calling thread's innermost open
 * scope of @tracer.
 * Returns: (transfer none) (nullable) borrowed until that scope closes or the
 * span finishes; NULL when nothing is active, when the innermost scope is a
 * context scope or its span has finished on this thread, or for NULL.
 * Thread safety: any thread; each thread sees its own scopes. Since: 0.1
 */
TW_EXTERN tw_span *tw_tracer_active_span(const tw_tracer *tracer);

/**
 * tw_tracer_active_context: the context of the calling thread's innermost
 * open scope of @tracer: the one tw_span_start() uses as implicit parent
 * (when the tracer's use_active_span option is on).
 * Returns: (transfer none) (nullable) borrowed until that scope closes (take
 * tw_span_context_ref() to keep it longer); NULL when nothing is active or
 * for NULL.
 * Thread safety: any thread; each thread sees its own scopes. Since: 0.1
 */
TW_EXTERN const tw_span_context *tw_tracer_active_context(const tw_tracer *tracer);

/**
 * tw_span_options_set_ignore_active_span: with true, a span started with
 * these options and no explicit parent is a root even when a scope is active
 * (OpenTracing's ignoreActiveSpan). Default false.
 * Returns: TW_OK, TW_E_INVALID_ARG.
 * Thread safety: one thread at a time per options object. Since: 0.1
 */
TW_EXTERN tw_status tw_span_options_set_ignore_active_span(tw_span_options *opts,
                                                           bool ignore_active_span);

/* ---- carrying the context to other threads ----------------------------------------------- */

/**
 * tw_context_capture: captures the calling thread's active context of
 * @tracer, to run work under it later, on any thread. Takes its own
 * reference on the context (not on the span: only the context travels, and
 * tw_tracer_active_span() is NULL under a capture). When nothing is active,
 * the capture holds "no context": running under it hides the running thread's
 * scopes, so the work starts root spans, as it would have where it was
 * created. The capture also keeps @tracer's memory alive (not its reporter):
 * running it after tw_tracer_free() is safe, and spans started then are NULL.
 * Returns: (transfer full) (nullable) free with tw_captured_free(); NULL for
 * a NULL @tracer or on allocation failure (logged).
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_captured *tw_context_capture(tw_tracer *tracer);

/**
 * tw_captured_activate: activates @captured's context on the calling thread,
 * as tw_scope_activate_context() does (for loops that cannot wrap the work
 * in one callback).
 * Returns: (transfer full) (nullable) the scope, closed with
 * tw_scope_close() on this thread; NULL for a NULL @captured (silently: a
 * failed capture was logged) or on allocation failure (logged).
 * Thread safety: any thread, concurrently on one capture. Since: 0.1
 */
TW_EXTERN tw_scope *tw_captured_activate(const tw_captured *captured);

/**
 * tw_captured_run: calls @fn(@arg) with @captured's context active on the
 * calling thread, then restores the thread's previous scopes. Scopes of the
 * capture's tracer that @fn leaves open are closed after it returns (a
 * warning each), so one leaking callback cannot leak into the next work item
 * of a pooled thread. Context propagation is best effort, work is never
 * lost: with a NULL @captured (a failed capture) or if the scope cannot be
 * allocated, @fn still runs, under whatever is active on this thread.
 * @fn: must not be NULL (then nothing runs; logged).
 * Thread safety: any thread, concurrently on one capture. Since: 0.1
 */
TW_EXTERN void tw_captured_run(const tw_captured *captured, void (*fn)(void *arg), void *arg);

/**
 * tw_captured_free: drops the capture's context and tracer references. NULL
 * is a no-op. Scopes activated from the capture stay valid (they hold their
 * own reference). Thread safety: any thread, once no tw_captured_run or
 * tw_captured_activate on @captured is in progress. Since: 0.1
 */
TW_EXTERN void tw_captured_free(tw_captured *captured);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_SCOPE_H */
