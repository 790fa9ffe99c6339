/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scope/glib.c: GThreadPool and GMainContext sources that carry the active
 * context from where work is queued to where it runs (tracewire/glib.h).
 *
 * Where it sits: around application work handed to GLib, before any span of
 * that work starts. Each queued item is a small malloc'd record: the
 * application's item or callback plus a tw_captured taken on the queuing
 * thread. The running thread activates the capture, calls the application,
 * closes the scope (and any the callback left open) and frees the record.
 *
 * Synchronisation: GLib's queues and sources hand the records over. GLib's
 * mutexes are futex-based and invisible to ThreadSanitizer, so each record
 * also carries an atomic flag stored with release after it is filled and
 * loaded with acquire before it is read: one uncontended atomic per item,
 * and the hand-over is a happens-before edge TSan can check instead of a
 * suppression. The pool wrapper is reference-counted (the owner plus one
 * per queued item), so tw_glib_thread_pool_free() with wait_ FALSE cannot
 * free it under a running item, and with wait_ TRUE the last decrement
 * orders every item's work before the return.
 */
#include "scope/scope.h"

#include <stdlib.h>

#include "tracewire/glib.h"

/* ---- GThreadPool ------------------------------------------------------------------------- */

struct tw_glib_thread_pool {
    GThreadPool *pool;
    tw_tracer *tracer;
    GFunc func;
    gpointer user_data;
    GDestroyNotify item_free_func;
    atomic_uint refs; /* the owner + one per queued item; the last one frees */
};

typedef struct {
    atomic_bool is_published; /* the TSan-visible hand-over (file comment) */
    tw_glib_thread_pool *pool;
    tw_captured *captured; /* NULL: the capture failed; runs without it */
    gpointer data;
} pool_item;

static void pool_unref(tw_glib_thread_pool *p)
{
    /* acq_rel: the last decrement must see every item's work (wait_ TRUE). */
    if (atomic_fetch_sub_explicit(&p->refs, 1, memory_order_acq_rel) == 1)
        free(p);
}

static void pool_item_free(pool_item *it)
{
    tw_glib_thread_pool *p = it->pool;
    tw_captured_free(it->captured);
    free(it);
    pool_unref(p);
}

static void pool_worker(gpointer item, gpointer pool_data)
{
    pool_item *it = item;
    tw_glib_thread_pool *p = pool_data;
    (void)atomic_load_explicit(&it->is_published, memory_order_acquire);
    tw_scope *scope = tw_captured_activate(it->captured);
    p->func(it->data, p->user_data);
    tw__scope_close_unwinding(scope, "tw_glib_thread_pool: the pool function");
    pool_item_free(it);
}

/* An item the pool dropped unprocessed (immediate free; GLib >= 2.70). */
static void pool_item_drop(gpointer item)
{
    pool_item *it = item;
    (void)atomic_load_explicit(&it->is_published, memory_order_acquire);
    if (it->pool->item_free_func)
        it->pool->item_free_func(it->data);
    pool_item_free(it);
}

tw_glib_thread_pool *tw_glib_thread_pool_new_full(tw_tracer *tracer, GFunc func, gpointer user_data,
                                                  GDestroyNotify item_free_func, gint max_threads,
                                                  gboolean exclusive, GError **error)
{
    TW_CHECK_ARG(tracer && func, NULL);
    tw_glib_thread_pool *p = malloc(sizeof(*p));
    if (!p) {
        tw__log_msg(TW_LOG_ERROR, "tw_glib_thread_pool_new: out of memory");
        g_set_error_literal(error, G_THREAD_ERROR, G_THREAD_ERROR_AGAIN,
                            "tracewire: out of memory for the thread pool");
        return NULL;
    }
    p->tracer = tracer;
    p->func = func;
    p->user_data = user_data;
    p->item_free_func = item_free_func;
    atomic_init(&p->refs, 1);
    GError *local = NULL;
#if GLIB_CHECK_VERSION(2, 70, 0)
    p->pool =
        g_thread_pool_new_full(pool_worker, p, pool_item_drop, max_threads, exclusive, &local);
#else
    p->pool = g_thread_pool_new(pool_worker, p, max_threads, exclusive, &local);
#endif
    if (local) {
        /* GLib returns the pool with the error set when an exclusive pool's
         * threads could not all start; our rule is "fail exactly when the
         * error is set", so the pool goes. */
        if (p->pool)
            g_thread_pool_free(p->pool, TRUE, TRUE);
        g_propagate_error(error, local);
        free(p);
        return NULL;
    }
    if (!p->pool) {
        free(p); /* bad arguments: GLib logged a critical */
        return NULL;
    }
    return p;
}

tw_glib_thread_pool *tw_glib_thread_pool_new(tw_tracer *tracer, GFunc func, gpointer user_data,
                                             gint max_threads, gboolean exclusive, GError **error)
{
    return tw_glib_thread_pool_new_full(tracer, func, user_data, NULL, max_threads, exclusive,
                                        error);
}

gboolean tw_glib_thread_pool_push(tw_glib_thread_pool *pool, gpointer data, GError **error)
{
    TW_CHECK_ARG(pool, FALSE);
    pool_item *it = malloc(sizeof(*it));
    if (!it) {
        tw__log_msg(TW_LOG_ERROR, "tw_glib_thread_pool_push: out of memory; item not queued");
        g_set_error_literal(error, G_THREAD_ERROR, G_THREAD_ERROR_AGAIN,
                            "tracewire: out of memory for the work item");
        return FALSE;
    }
    it->pool = pool;
    it->data = data;
    it->captured = tw_context_capture(pool->tracer); /* NULL on OOM (logged): runs without */
    /* Relaxed: the caller holds the owner's reference. */
    atomic_fetch_add_explicit(&pool->refs, 1, memory_order_relaxed);
    atomic_store_explicit(&it->is_published, true, memory_order_release);
    /* On FALSE GLib has still queued the item (it runs when a thread is
     * free), so it is not freed here. */
    return g_thread_pool_push(pool->pool, it, error);
}

void tw_glib_thread_pool_free(tw_glib_thread_pool *pool, gboolean immediate, gboolean wait_)
{
    if (!pool)
        return;
    g_thread_pool_free(pool->pool, immediate, wait_);
    pool->pool = NULL;
    pool_unref(pool);
}

GThreadPool *tw_glib_thread_pool_get_pool(tw_glib_thread_pool *pool)
{
    return pool ? pool->pool : NULL;
}

/* ---- GMainContext sources ---------------------------------------------------------------- */

typedef struct {
    atomic_bool is_published; /* the TSan-visible hand-over (file comment) */
    tw_captured *captured;    /* NULL: the capture failed; runs without it */
    GSourceFunc function;
    gpointer data;
    GDestroyNotify notify;
} source_closure;

static gboolean source_dispatch(gpointer p)
{
    source_closure *c = p;
    (void)atomic_load_explicit(&c->is_published, memory_order_acquire);
    tw_scope *scope = tw_captured_activate(c->captured);
    gboolean again = c->function(c->data);
    tw__scope_close_unwinding(scope, "tw_glib source: the callback");
    return again;
}

static void source_closure_free(gpointer p)
{
    source_closure *c = p;
    (void)atomic_load_explicit(&c->is_published, memory_order_acquire);
    if (c->notify)
        c->notify(c->data);
    tw_captured_free(c->captured);
    free(c);
}

/* Takes @source (a new idle or timeout source) and attaches it. */
static guint attach(tw_tracer *tracer, GSource *source, GMainContext *context, gint priority,
                    source_closure *c)
{
    c->captured = tw_context_capture(tracer); /* NULL on OOM (logged): runs without */
    atomic_store_explicit(&c->is_published, true, memory_order_release);
    g_source_set_priority(source, priority);
    g_source_set_callback(source, source_dispatch, c, source_closure_free);
    guint id = g_source_attach(source, context);
    g_source_unref(source);
    return id;
}

static source_closure *closure_new(GSourceFunc function, gpointer data, GDestroyNotify notify,
                                   const char *fn)
{
    source_closure *c = malloc(sizeof(*c));
    if (!c) {
        tw__log_msg(TW_LOG_ERROR, "%s: out of memory; source not added", fn);
        return NULL;
    }
    c->function = function;
    c->data = data;
    c->notify = notify;
    c->captured = NULL;
    return c;
}

guint tw_glib_idle_add_full(tw_tracer *tracer, GMainContext *context, gint priority,
                            GSourceFunc function, gpointer data, GDestroyNotify notify)
{
    TW_CHECK_ARG(tracer && function, 0);
    source_closure *c = closure_new(function, data, notify, "tw_glib_idle_add");
    if (!c)
        return 0;
    return attach(tracer, g_idle_source_new(), context, priority, c);
}

guint tw_glib_idle_add(tw_tracer *tracer, GMainContext *context, GSourceFunc function,
                       gpointer data)
{
    return tw_glib_idle_add_full(tracer, context, G_PRIORITY_DEFAULT_IDLE, function, data, NULL);
}

guint tw_glib_timeout_add_full(tw_tracer *tracer, GMainContext *context, gint priority,
                               guint interval_ms, GSourceFunc function, gpointer data,
                               GDestroyNotify notify)
{
    TW_CHECK_ARG(tracer && function, 0);
    source_closure *c = closure_new(function, data, notify, "tw_glib_timeout_add");
    if (!c)
        return 0;
    return attach(tracer, g_timeout_source_new(interval_ms), context, priority, c);
}

guint tw_glib_timeout_add(tw_tracer *tracer, GMainContext *context, guint interval_ms,
                          GSourceFunc function, gpointer data)
{
    return tw_glib_timeout_add_full(tracer, context, G_PRIORITY_DEFAULT, interval_ms, function,
                                    data, NULL);
}
