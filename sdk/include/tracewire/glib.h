/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/glib.h: GLib's thread pools and main-loop sources that carry the
 * active context (tracewire/scope.h) from where work is queued to where it
 * runs.
 *
 * Contrib header: it includes <glib.h>, so <tracewire/tracewire.h> does not
 * include it, and it uses GLib's own types and conventions (GFunc,
 * GSourceFunc, GError) so that each function is a drop-in for the GLib call
 * it wraps. The functions live in libtracewire, which links GLib anyway.
 * Compile with $(pkg-config --cflags tracewire glib-2.0).
 *
 *   tw_glib_thread_pool *pool = tw_glib_thread_pool_new(tracer, handle_job, NULL, 4, FALSE, NULL);
 *   ...inside a span made active with tw_scope_activate():
 *   tw_glib_thread_pool_push(pool, job, NULL);     // handle_job's spans are its children
 *   tw_glib_idle_add(tracer, NULL, on_idle, data); // so are on_idle's, on the main loop
 *
 * Each queued item captures the queuing thread's active context of the
 * tracer (tw_context_capture(): the context travels, not the span) and runs
 * under it (tw_captured_run(): scopes the callback leaves open are closed
 * after it). Propagation is best effort: if a capture cannot be allocated the
 * work still runs, without the context (logged). When nothing is active
 * where the work is queued, it runs with nothing active, whatever is active
 * on the thread that runs it.
 *
 * Ownership: a pool is freed with tw_glib_thread_pool_free(); a source's
 * capture is freed with the source (its destroy notify).
 * Thread safety: as the GLib functions wrapped; each says so.
 */
#ifndef TRACEWIRE_GLIB_H
#define TRACEWIRE_GLIB_H

#include <glib.h>

#include "tracewire/common.h"
#include "tracewire/scope.h"
#include "tracewire/tracer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- GThreadPool ------------------------------------------------------------------------- */

typedef struct tw_glib_thread_pool tw_glib_thread_pool;

/**
 * tw_glib_thread_pool_new: a GThreadPool whose items run under the context
 * active where they were pushed. Arguments as g_thread_pool_new(), plus
 * @tracer, whose active context travels (borrowed: it must outlive the
 * pool).
 * Returns: (transfer full) (nullable) the pool; NULL with @error set when
 * GLib reports an error (an exclusive pool whose threads could not all
 * start: unlike g_thread_pool_new(), the pool is then freed, so that a call
 * fails exactly when it sets the error), or for a NULL @tracer or @func
 * (logged, @error not set).
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_glib_thread_pool *tw_glib_thread_pool_new(tw_tracer *tracer, GFunc func,
                                                       gpointer user_data, gint max_threads,
                                                       gboolean exclusive, GError **error);

/**
 * tw_glib_thread_pool_new_full: as tw_glib_thread_pool_new() with an
 * @item_free_func, called on items that tw_glib_thread_pool_free() drops
 * unprocessed (g_thread_pool_new_full()). With GLib older than 2.70 dropped
 * items are neither freed nor given to @item_free_func, and their captures
 * leak: free such pools with @immediate FALSE. Since: 0.1
 */
TW_EXTERN tw_glib_thread_pool *tw_glib_thread_pool_new_full(tw_tracer *tracer, GFunc func,
                                                            gpointer user_data,
                                                            GDestroyNotify item_free_func,
                                                            gint max_threads, gboolean exclusive,
                                                            GError **error);

/**
 * tw_glib_thread_pool_push: g_thread_pool_push() that captures the calling
 * thread's active context for @data; @data runs under it.
 * Returns: TRUE; FALSE with @error set when a new thread could not be started,
 * in which case @data is still queued, as with g_thread_pool_push(), and runs
 * when a thread is free. FALSE without queuing @data (logged, @error set to
 * G_THREAD_ERROR_AGAIN) when the item record cannot be allocated, or for a
 * NULL @pool (logged, @error not set).
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN gboolean tw_glib_thread_pool_push(tw_glib_thread_pool *pool, gpointer data,
                                            GError **error);

/**
 * tw_glib_thread_pool_free: g_thread_pool_free(), then frees the wrapper. NULL
 * is a no-op. With @wait_ TRUE, the work of every processed item (and the
 * spans it finished) is visible to the caller when this returns.
 * Thread safety: as g_thread_pool_free(): once, not from the pool's threads.
 * Since: 0.1
 */
TW_EXTERN void tw_glib_thread_pool_free(tw_glib_thread_pool *pool, gboolean immediate,
                                        gboolean wait_);

/**
 * tw_glib_thread_pool_get_pool: the wrapped GThreadPool, for
 * g_thread_pool_set_max_threads(), g_thread_pool_get_num_threads() and
 * g_thread_pool_unprocessed(). Never push to it or free it directly: its
 * items are tracewire records.
 * Returns: (transfer none) borrowed until tw_glib_thread_pool_free(); NULL
 * for NULL. Thread safety: any thread. Since: 0.1
 */
TW_EXTERN GThreadPool *tw_glib_thread_pool_get_pool(tw_glib_thread_pool *pool);

/* ---- GMainContext sources ---------------------------------------------------------------- */

/**
 * tw_glib_idle_add_full: g_idle_add_full() on @context (NULL: the global
 * default context, as g_idle_add()) whose @function runs, at each dispatch,
 * under the context active on the calling thread now. The capture is freed
 * with the source, after @notify(@data).
 * Returns: the source id (> 0) in @context (remove it with g_source_remove()
 * for the default context, else with g_main_context_find_source_by_id() and
 * g_source_destroy()); 0 for a NULL @tracer or @function (logged), or when
 * the closure cannot be allocated (logged; nothing is added and @notify is
 * not called).
 * Thread safety: any thread, as g_source_attach(). Since: 0.1
 */
TW_EXTERN guint tw_glib_idle_add_full(tw_tracer *tracer, GMainContext *context, gint priority,
                                      GSourceFunc function, gpointer data, GDestroyNotify notify);

/** tw_glib_idle_add: tw_glib_idle_add_full() with G_PRIORITY_DEFAULT_IDLE and
 * no @notify. Since: 0.1 */
TW_EXTERN guint tw_glib_idle_add(tw_tracer *tracer, GMainContext *context, GSourceFunc function,
                                 gpointer data);

/**
 * tw_glib_timeout_add_full: g_timeout_add_full() on @context (NULL: the
 * global default context): @function runs every @interval_ms milliseconds
 * while it returns G_SOURCE_CONTINUE, each time under the context active on
 * the calling thread now. Returns and frees as tw_glib_idle_add_full().
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN guint tw_glib_timeout_add_full(tw_tracer *tracer, GMainContext *context, gint priority,
                                         guint interval_ms, GSourceFunc function, gpointer data,
                                         GDestroyNotify notify);

/** tw_glib_timeout_add: tw_glib_timeout_add_full() with G_PRIORITY_DEFAULT and
 * no @notify. Since: 0.1 */
TW_EXTERN guint tw_glib_timeout_add(tw_tracer *tracer, GMainContext *context, guint interval_ms,
                                    GSourceFunc function, gpointer data);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_GLIB_H */
