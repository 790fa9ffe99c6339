/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scope/scope.h: the tw__ functions of the in-process context (scope.c) that
 * the core (span.c, tracer.c) and the thread wrappers (pthread.c, glib.c)
 * call.
 *
 * Where it sits: tw_span_start with no explicit parent asks the calling
 * thread's innermost scope of its tracer for the parent (Dapper's
 * thread-local trace context); span.c tells this module when a span that
 * may be active changes (baggage, flags) or finishes on the activating
 * thread.
 *
 * Hot path: tw__scope_tops is the calling thread's list of innermost
 * scopes, one per tracer with an open scope, and NULL when nothing is
 * active. Callers test it before calling in (one initial-exec TLS load and a
 * compare), so a thread without scopes pays nothing more.
 *
 * Locking: none. Every structure here is thread-local; a tw_captured is
 * immutable after tw_context_capture returns.
 */
#ifndef TW_SCOPE_SCOPE_H
#define TW_SCOPE_SCOPE_H

#include "internal.h"

/* The calling thread's innermost scope of each tracer that has one, linked
 * through their `next` field; NULL when no scope is open on this thread
 * (the state tested on every span start and finish). Defined in scope.c. */
extern TW__TLS struct tw_scope *tw__scope_tops;

/* A process-unique key for a new tracer's scope stacks: tracers are told
 * apart by key, not by address, so a tracer allocated where a freed one
 * lived never sees scopes left behind by the old one. Never returns 0. */
uint64_t tw__scope_new_key(void);

/* The implicit parent of a span started on @t with no explicit parent: the
 * context of the calling thread's innermost scope of @t, or NULL (nothing
 * active, a "no context" scope, @t's use_active_span off, or @ignore).
 * Call only when tw__scope_tops != NULL. Borrowed until that scope closes. */
const tw_span_context *tw__scope_implicit_parent(const tw_tracer *t, bool ignore);

/* @span changed its baggage or flags: refresh the snapshots of the calling
 * thread's scopes that activated it. Call only when tw__scope_tops != NULL. */
void tw__scope_span_changed(const tw_span *span);

/* @span is finishing on this thread: the calling thread's scopes that hold it
 * forget it (tw_scope_span and tw_tracer_active_span return NULL from now on,
 * and a finish_span_on_close scope does not finish it a second time). Their
 * context snapshot stays active. Call only when tw__scope_tops != NULL. */
void tw__scope_span_finished(const tw_span *span);

/* Closes @scope after closing, with a warning each, the scopes of the same
 * stack that a callback left open above it, so that one callback's leak does
 * not leak into the next work item run on the same thread. NULL is a no-op. */
void tw__scope_close_unwinding(tw_scope *scope, const char *where);

/* tw_tracer_free: closes the calling thread's scopes of @t that are still open
 * (a warning each) and, when no scope is left on the thread, frees its pool
 * of scope records, so a single-threaded program ends with nothing
 * reachable. Scopes of @t open on other threads are closed at their exit. */
void tw__scope_tracer_free(const tw_tracer *t);

#endif /* TW_SCOPE_SCOPE_H */
