/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scope/scope.c: the in-process context: per-thread, per-tracer stacks of
 * active scopes, the implicit parent of tw_span_start, and captures that
 * carry a context to another thread (Dapper, section 2.2 "Instrumentation
 * points": the trace context lives in thread-local storage, and callbacks
 * keep their creator's context and run under it).
 *
 * Where it sits: before a span starts (span.c asks for the implicit parent)
 * and around work handed to other threads (pthread.c, glib.c). Nothing here
 * is on the reporter side.
 *
 * Data: one record (struct tw_scope) per activation, taken from a
 * per-thread pool (no malloc in the steady state). A record holds its own
 * snapshot of the activated context, embedded like a span's (refcount 0,
 * with references on the baggage and extras), so the active context never
 * dangles whatever happens to the span, and activation costs no context
 * allocation. The records of one (thread, tracer) form a stack through
 * `below`; the innermost record of each tracer is on the thread's
 * tw__scope_tops list (usually one element). Rejected: one array per thread
 * indexed by depth (handles would move when it grows; records in a pool stay
 * put); a heap context reference per scope (a malloc per activation, since a
 * span's embedded context is copied by tw_span_context_ref).
 *
 * Locking: none; every list here is thread-local. A capture is immutable
 * once built, so concurrent runs only read it. Thread exit closes what is
 * still open and frees the pool (pthread key destructor).
 */
#include "scope/scope.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define POOL_MAX 64 /* scope records kept per thread; beyond that they are freed */

enum scope_state { SCOPE_FREE = 0x5c0f, SCOPE_OPEN = 0x5c09 };

struct tw_scope {
    uint32_t state;            /* scope_state: catches a second close while pooled */
    bool has_context;          /* false: a "no context" scope, hiding the ones below */
    bool finish_span_on_close; /* the scope owns `span` */
    uint32_t depth;            /* 1 for the outermost scope of its stack */
    uint64_t tracer_key;       /* tw_tracer.scope_key: which stack of the thread */
    const void *owner;         /* &tls_thread of the activating thread */
    tw_span *span;             /* nullable; cleared when the span finishes on this thread */
    tw_span_context context;   /* snapshot, refcount 0, own baggage/extra references */
    struct tw_scope *below;    /* the next outer scope of the same stack */
    struct tw_scope *next;     /* on tw__scope_tops: next tracer's innermost; pooled: next free */
};

struct tw_captured {
    tw_tracer *tracer;       /* a reference on the tracer's memory (refcount) */
    uint64_t tracer_key;     /* copied: the capture never reads the tracer when run */
    bool has_context;        /* false: "no context" was captured */
    tw_span_context context; /* snapshot, refcount 0, own baggage/extra references */
};

/* The calling thread's pool and destructor registration. */
typedef struct {
    tw_scope *free_head;
    size_t n_free;
    bool has_destructor;
} scope_thread;

static TW__TLS scope_thread tls_thread;
TW__TLS tw_scope *tw__scope_tops;

static pthread_key_t thread_key;
static pthread_once_t thread_key_once = PTHREAD_ONCE_INIT;

/* Relaxed: keys only need to be unique, and a fetch_add is atomic whatever
 * the order; no other memory is published through this counter. */
static atomic_uint_fast64_t next_key;

uint64_t tw__scope_new_key(void)
{
    return atomic_fetch_add_explicit(&next_key, 1, memory_order_relaxed) + 1;
}

/* ---- snapshots ------------------------------------------------------------------------------ */

/* Copies @src into the embedded @dst (refcount 0) with references of its own. */
static inline void snapshot_set(tw_span_context *dst, const tw_span_context *src)
{
    atomic_init(&dst->refcount, 0);
    dst->flags = src->flags & ~TW__FLAG_IN_SPAN; /* a snapshot, not the span's own */
    dst->trace_id_high = src->trace_id_high;
    dst->trace_id_low = src->trace_id_low;
    dst->span_id = src->span_id;
    dst->parent_id = src->parent_id;
    /* The tests here skip two calls per scope in the common case of no
     * baggage and no extras (callgrind: ~25 of ~135 instructions). */
    dst->baggage = src->baggage ? tw__baggage_ref(src->baggage) : NULL;
    dst->extra = src->extra ? tw__ctx_extra_ref(src->extra) : NULL;
}

static inline void snapshot_clear(tw_span_context *c)
{
    if (c->baggage)
        tw__baggage_unref(c->baggage);
    if (c->extra)
        tw__ctx_extra_unref(c->extra);
    c->baggage = NULL;
    c->extra = NULL;
}

/* ---- the per-thread pool and the thread-exit destructor ------------------------------------ */

static void pool_drain(void)
{
    scope_thread *th = &tls_thread;
    while (th->free_head) {
        tw_scope *next = th->free_head->next;
        free(th->free_head);
        th->free_head = next;
    }
    th->n_free = 0;
}

static void close_all_of_thread(const char *why);

/* Thread exit: scopes still open are a leak of the application; closing them
 * (finishing the spans they own) is the one way to report those spans and
 * free their references. */
static void thread_exit(void *arg)
{
    (void)arg;
    close_all_of_thread("thread exit");
    pool_drain();
    /* A later activation by another key destructor registers again. */
    tls_thread.has_destructor = false;
}

static void thread_key_create(void)
{
    pthread_key_create(&thread_key, thread_exit);
}

static tw_scope *record_take(void)
{
    scope_thread *th = &tls_thread;
    if (__builtin_expect(!th->has_destructor, 0)) {
        /* Once per thread, so thread exit frees the pool and open scopes. */
        pthread_once(&thread_key_once, thread_key_create);
        if (pthread_setspecific(thread_key, th) != 0)
            return NULL;
        th->has_destructor = true;
    }
    tw_scope *s = th->free_head;
    if (__builtin_expect(s != NULL, 1)) {
        th->free_head = s->next;
        th->n_free--;
        return s;
    }
    return malloc(sizeof(tw_scope));
}

static void record_give(tw_scope *s)
{
    scope_thread *th = &tls_thread;
    s->state = SCOPE_FREE;
    s->span = NULL;
    if (th->n_free >= POOL_MAX) {
        free(s);
        return;
    }
    s->next = th->free_head;
    th->free_head = s;
    th->n_free++;
}

/* ---- stacks --------------------------------------------------------------------------------- */

/* The link that points at the innermost scope of @key on this thread (the
 * link is NULL-valued when there is none): for unlinking in place. */
static tw_scope **top_link(uint64_t key)
{
    tw_scope **link = &tw__scope_tops;
    while (*link && (*link)->tracer_key != key)
        link = &(*link)->next;
    return link;
}

/* Pushes a filled record (has_context, context, span, finish flag) for @key. */
static void push(tw_scope *s, uint64_t key)
{
    tw_scope **link = top_link(key);
    tw_scope *below = *link;
    s->state = SCOPE_OPEN;
    s->tracer_key = key;
    s->owner = &tls_thread;
    s->below = below;
    s->depth = below ? below->depth + 1 : 1;
    if (below) {
        s->next = below->next; /* take the outer scope's place in the list */
        *link = s;
    } else {
        s->next = tw__scope_tops; /* a tracer with no open scope yet */
        tw__scope_tops = s;
    }
}

/* Unlinks the innermost scope @s (found at @link); its outer scope takes its
 * place. Then drops the snapshot, finishes an owned span and pools the
 * record. The stack is consistent before the span finishes, so the finish
 * hook and a logger see a valid state. */
static inline void pop(tw_scope **link, tw_scope *s)
{
    if (s->below) {
        s->below->next = s->next;
        *link = s->below;
    } else {
        *link = s->next;
    }
    tw_span *owned = s->finish_span_on_close ? s->span : NULL;
    snapshot_clear(&s->context);
    record_give(s);
    if (owned)
        tw_span_finish(owned);
}

static void close_all_of_thread(const char *why)
{
    size_t n = 0;
    while (tw__scope_tops) {
        pop(&tw__scope_tops, tw__scope_tops);
        n++;
    }
    if (n)
        tw__log_msg(TW_LOG_WARN,
                    "scope: %s with %zu scope(s) still open; closed them (and finished the "
                    "spans they owned)",
                    why, n);
}

static inline tw_scope *activate(uint64_t key, const tw_span_context *ctx, tw_span *span,
                                 bool finish_span_on_close)
{
    tw_scope *s = record_take();
    if (!s) {
        tw__log_msg(TW_LOG_ERROR, "scope: out of memory activating a scope");
        return NULL;
    }
    s->has_context = ctx != NULL;
    if (ctx)
        snapshot_set(&s->context, ctx);
    else
        memset(&s->context, 0, sizeof s->context);
    s->span = span;
    s->finish_span_on_close = finish_span_on_close;
    push(s, key);
    return s;
}

/* ---- public: scopes ------------------------------------------------------------------------ */

tw_scope *tw_scope_activate(tw_span *span, bool finish_span_on_close)
{
    TW_CHECK_ARG(span && span->state == TW__SPAN_OPEN, NULL);
    tw__span_ensure_ids(span);      /* the snapshot carries them (lazy ids, internal.h) */
    span->needs_finish_work = true; /* its finish tells this thread's scopes */
    return activate(span->tracer->scope_key, &span->context, span, finish_span_on_close);
}

tw_scope *tw_scope_activate_context(tw_tracer *tracer, const tw_span_context *ctx)
{
    TW_CHECK_ARG(tracer, NULL);
    return activate(tracer->scope_key, ctx, NULL, false);
}

/* Checks that @s may be closed by this thread now; on success *link_out is
 * the list link that points at it. */
static tw_status check_closable(tw_scope *s, tw_scope ***link_out, const char *fn)
{
    if (s->state != SCOPE_OPEN) {
        tw__log_msg(TW_LOG_ERROR, "%s: scope already closed (or not a scope); nothing changed", fn);
        return TW_E_STATE;
    }
    if (s->owner != &tls_thread) {
        tw__log_msg(TW_LOG_ERROR,
                    "%s: scope was activated on another thread; close it on that thread; "
                    "nothing changed",
                    fn);
        return TW_E_STATE;
    }
    tw_scope **link = top_link(s->tracer_key);
    if (*link != s) {
        uint32_t top_depth = *link ? (*link)->depth : 0;
        tw__log_msg(TW_LOG_ERROR,
                    "%s: scope at depth %u is not the innermost (depth %u) of its tracer on "
                    "this thread: close scopes in reverse order of activation; nothing changed",
                    fn, (unsigned int)s->depth, (unsigned int)top_depth);
        return TW_E_STATE;
    }
    *link_out = link;
    return TW_OK;
}

tw_status tw_scope_close(tw_scope *scope)
{
    if (!scope)
        return TW_E_INVALID_ARG; /* a failed activation, already logged */
    tw_scope **link = NULL;
    tw_status st = check_closable(scope, &link, "tw_scope_close");
    if (st != TW_OK)
        return st;
    pop(link, scope);
    return TW_OK;
}

void tw__scope_close_unwinding(tw_scope *scope, const char *where)
{
    if (!scope)
        return;
    if (scope->state != SCOPE_OPEN || scope->owner != &tls_thread) {
        tw_scope_close(scope); /* reports the misuse */
        return;
    }
    tw_scope **link = top_link(scope->tracer_key);
    size_t n = 0;
    while (*link && *link != scope && (*link)->depth > scope->depth) {
        pop(link, *link);
        n++;
    }
    if (n)
        tw__log_msg(TW_LOG_WARN, "scope: %s left %zu scope(s) open; closed them", where, n);
    tw_scope_close(scope);
}

tw_span *tw_scope_span(const tw_scope *scope)
{
    return scope && scope->state == SCOPE_OPEN ? scope->span : NULL;
}

const tw_span_context *tw_scope_context(const tw_scope *scope)
{
    return scope && scope->state == SCOPE_OPEN && scope->has_context ? &scope->context : NULL;
}

tw_span *tw_tracer_active_span(const tw_tracer *tracer)
{
    TW_CHECK_ARG(tracer, NULL);
    tw_scope *top = *top_link(tracer->scope_key);
    return top ? top->span : NULL;
}

const tw_span_context *tw_tracer_active_context(const tw_tracer *tracer)
{
    TW_CHECK_ARG(tracer, NULL);
    tw_scope *top = *top_link(tracer->scope_key);
    return top && top->has_context ? &top->context : NULL;
}

/* ---- the core's hooks ------------------------------------------------------------------- */

const tw_span_context *tw__scope_implicit_parent(const tw_tracer *t, bool ignore)
{
    if (ignore || !t->use_active_span)
        return NULL;
    tw_scope *top = *top_link(t->scope_key);
    return top && top->has_context ? &top->context : NULL;
}

void tw__scope_span_changed(const tw_span *span)
{
    for (tw_scope *top = tw__scope_tops; top; top = top->next) {
        for (tw_scope *s = top; s; s = s->below) {
            if (s->span != span)
                continue;
            tw__baggage *old_baggage = s->context.baggage;
            tw__ctx_extra *old_extra = s->context.extra;
            snapshot_set(&s->context, &span->context);
            tw__baggage_unref(old_baggage);
            tw__ctx_extra_unref(old_extra);
        }
    }
}

void tw__scope_span_finished(const tw_span *span)
{
    for (tw_scope *top = tw__scope_tops; top; top = top->next) {
        for (tw_scope *s = top; s; s = s->below) {
            if (s->span == span)
                s->span = NULL;
        }
    }
}

void tw__scope_tracer_free(const tw_tracer *t)
{
    tw_scope **link = top_link(t->scope_key);
    size_t n = 0;
    while (*link) {
        pop(link, *link);
        n++;
    }
    if (n)
        tw__log_msg(TW_LOG_WARN,
                    "tw_tracer_free: %zu scope(s) of tracer \"%s\" still open on this thread; "
                    "closed them",
                    n, t->process.service_name);
    if (!tw__scope_tops)
        pool_drain();
}

/* ---- public: captures ------------------------------------------------------------------- */

tw_captured *tw_context_capture(tw_tracer *tracer)
{
    TW_CHECK_ARG(tracer, NULL);
    tw_captured *c = malloc(sizeof(*c));
    if (!c) {
        tw__log_msg(TW_LOG_ERROR, "tw_context_capture: out of memory");
        return NULL;
    }
    tw_scope *top = *top_link(tracer->scope_key);
    c->tracer = tracer;
    c->tracer_key = tracer->scope_key;
    c->has_context = top && top->has_context;
    if (c->has_context)
        snapshot_set(&c->context, &top->context);
    else
        memset(&c->context, 0, sizeof c->context);
    /* Relaxed, as every first reference: the caller holds the tracer. */
    atomic_fetch_add_explicit(&tracer->refcount, 1, memory_order_relaxed);
    return c;
}

tw_scope *tw_captured_activate(const tw_captured *captured)
{
    if (!captured)
        return NULL; /* a failed capture, already logged */
    return activate(captured->tracer_key, captured->has_context ? &captured->context : NULL, NULL,
                    false);
}

void tw_captured_run(const tw_captured *captured, void (*fn)(void *arg), void *arg)
{
    TW_CHECK_ARG_VOID(fn);
    tw_scope *scope = tw_captured_activate(captured);
    fn(arg);
    tw__scope_close_unwinding(scope, "tw_captured_run: the callback");
}

void tw_captured_free(tw_captured *captured)
{
    if (!captured)
        return;
    if (captured->has_context)
        snapshot_clear(&captured->context);
    tw__tracer_release(captured->tracer);
    free(captured);
}
