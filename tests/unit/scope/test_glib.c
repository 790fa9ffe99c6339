/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/scope/test_glib.c: suite "scope/glib": work queued through
 * tracewire/glib.h runs under the context active where it was queued. A
 * GThreadPool item pushed inside a span starts, in the worker and with no
 * explicit parent, a child of that span (memory reporter: trace id and parent
 * id); two parents pushing to one exclusive pool never mix; items dropped by
 * an immediate free are freed. Idle and timeout sources on a private
 * GMainContext, dispatched by g_main_context_iteration on this thread (under
 * an unrelated active span) or on a loop thread, do the same at each
 * dispatch, and free their capture with the source. Also run under
 * ThreadSanitizer by scripts/test.sh.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"
#include "tracewire/glib.h"

static bool is_child_of(const tw_finished_span *child, const tw_finished_span *parent)
{
    return child && parent &&
           tw_finished_span_trace_id_high(child) == tw_finished_span_trace_id_high(parent) &&
           tw_finished_span_trace_id_low(child) == tw_finished_span_trace_id_low(parent) &&
           tw_finished_span_parent_id(child) == tw_finished_span_span_id(parent);
}

/* All finished spans named @op are children of @parent, and there are @n. */
static bool all_children(const tw_reporter *memory, const char *op, const tw_finished_span *parent,
                         size_t n)
{
    size_t found = 0;
    for (size_t i = 0; i < tw_memory_reporter_count(memory); i++) {
        const tw_finished_span *s = tw_memory_reporter_span(memory, i);
        if (strcmp(tw_finished_span_operation(s), op) != 0)
            continue;
        if (!is_child_of(s, parent))
            return false;
        found++;
    }
    return found == n;
}

/* ---- GThreadPool ------------------------------------------------------------------------- */

typedef struct {
    tw_tracer *tracer;
    const char *operation;
} job;

/* The pool function: a span with no explicit parent. */
static void run_job(gpointer data, gpointer user_data)
{
    job *j = data;
    (void)user_data;
    tw_span *s = tw_span_start(j->tracer, j->operation, NULL);
    tw_span_finish(s);
}

static void test_pool_work_is_a_child_of_the_pushing_span(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    GError *error = NULL;
    tw_glib_thread_pool *pool = tw_glib_thread_pool_new(tracer, run_job, NULL, 2, FALSE, &error);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    CU_ASSERT_PTR_NULL(error);
    CU_ASSERT_PTR_NOT_NULL(tw_glib_thread_pool_get_pool(pool));

    job in_span = {tracer, "pool-work"};
    job outside = {tracer, "pool-work-rootless"};
    tw_span *request = tw_span_start(tracer, "request", NULL);
    tw_scope *scope = tw_scope_activate(request, true);
    for (int i = 0; i < 8; i++)
        CU_ASSERT(tw_glib_thread_pool_push(pool, &in_span, NULL));
    tw_scope_close(scope); /* "request" may finish before the work runs */
    CU_ASSERT(tw_glib_thread_pool_push(pool, &outside, NULL));
    tw_glib_thread_pool_free(pool, FALSE, TRUE);

    const tw_finished_span *parent = finished_named(memory, "request");
    CU_ASSERT(all_children(memory, "pool-work", parent, 8));
    const tw_finished_span *rootless = finished_named(memory, "pool-work-rootless");
    CU_ASSERT_PTR_NOT_NULL_FATAL(rootless);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(rootless), 0);
    tw_tracer_free(tracer);
}

static void test_two_parents_sharing_an_exclusive_pool_never_mix(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_glib_thread_pool *pool = tw_glib_thread_pool_new(tracer, run_job, NULL, 2, TRUE, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    job for_a = {tracer, "work-of-a"};
    job for_b = {tracer, "work-of-b"};
    tw_span *a = tw_span_start(tracer, "parent-a", NULL);
    tw_span *b = tw_span_start(tracer, "parent-b", NULL);
    for (int i = 0; i < 50; i++) {
        tw_scope *sa = tw_scope_activate(a, false);
        tw_glib_thread_pool_push(pool, &for_a, NULL);
        tw_scope *sb = tw_scope_activate(b, false);
        tw_glib_thread_pool_push(pool, &for_b, NULL);
        tw_scope_close(sb);
        tw_scope_close(sa);
    }
    tw_span_finish(a);
    tw_span_finish(b);
    tw_glib_thread_pool_free(pool, FALSE, TRUE);
    CU_ASSERT(all_children(memory, "work-of-a", finished_named(memory, "parent-a"), 50));
    CU_ASSERT(all_children(memory, "work-of-b", finished_named(memory, "parent-b"), 50));
    tw_tracer_free(tracer);
}

static atomic_int items_freed;

static void count_item_free(gpointer data)
{
    (void)data;
    atomic_fetch_add(&items_freed, 1);
}

static void test_immediate_free_frees_dropped_items(void)
{
    tw_tracer *tracer = tracer_always_sampled(NULL, NULL);
    /* max_threads 0: a frozen pool, so every item is still queued at free. */
    tw_glib_thread_pool *pool =
        tw_glib_thread_pool_new_full(tracer, run_job, NULL, count_item_free, 0, FALSE, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
    job j = {tracer, "never-run"};
    tw_span *p = tw_span_start(tracer, "p", NULL);
    tw_scope *scope = tw_scope_activate(p, true);
    atomic_store(&items_freed, 0);
    for (int i = 0; i < 3; i++)
        tw_glib_thread_pool_push(pool, &j, NULL);
    tw_scope_close(scope);
    tw_glib_thread_pool_free(pool, TRUE, TRUE);
#if GLIB_CHECK_VERSION(2, 70, 0)
    CU_ASSERT_EQUAL(atomic_load(&items_freed), 3); /* and their captures: see ASan/valgrind */
#endif
    tw_tracer_free(tracer);
}

static void test_pool_bad_arguments(void)
{
    tw_tracer *tracer = tracer_always_sampled(NULL, NULL);
    CU_ASSERT_PTR_NULL(tw_glib_thread_pool_new(NULL, run_job, NULL, 1, FALSE, NULL));
    CU_ASSERT_PTR_NULL(tw_glib_thread_pool_new(tracer, NULL, NULL, 1, FALSE, NULL));
    CU_ASSERT_FALSE(tw_glib_thread_pool_push(NULL, NULL, NULL));
    CU_ASSERT_PTR_NULL(tw_glib_thread_pool_get_pool(NULL));
    tw_glib_thread_pool_free(NULL, TRUE, TRUE);
    CU_ASSERT_EQUAL(tw_glib_idle_add(NULL, NULL, NULL, NULL), 0);
    CU_ASSERT_EQUAL(tw_glib_timeout_add(tracer, NULL, 10, NULL, NULL), 0);
    tw_tracer_free(tracer);
}

/* ---- GMainContext sources ---------------------------------------------------------------- */

typedef struct {
    tw_tracer *tracer;
    const char *operation;
    int dispatches;     /* how many times the callback ran */
    int max_dispatches; /* it returns G_SOURCE_REMOVE at this count */
    atomic_bool is_done;
    int notified; /* the destroy notify ran */
} source_work;

static gboolean source_callback(gpointer data)
{
    source_work *w = data;
    tw_span *s = tw_span_start(w->tracer, w->operation, NULL);
    tw_span_finish(s);
    if (++w->dispatches < w->max_dispatches)
        return G_SOURCE_CONTINUE;
    atomic_store(&w->is_done, true);
    return G_SOURCE_REMOVE;
}

static void source_notify(gpointer data)
{
    ((source_work *)data)->notified++;
}

/* Iterates @context on this thread until @w is done. */
static void iterate_until_done(GMainContext *context, source_work *w)
{
    while (!atomic_load(&w->is_done))
        g_main_context_iteration(context, TRUE);
}

static void test_idle_callback_runs_under_the_adders_context(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    GMainContext *context = g_main_context_new();
    source_work w = {tracer, "idle-work", 0, 1, false, 0};

    tw_span *adder = tw_span_start(tracer, "adder", NULL);
    tw_scope *scope = tw_scope_activate(adder, true);
    guint id = tw_glib_idle_add_full(tracer, context, G_PRIORITY_DEFAULT_IDLE, source_callback, &w,
                                     source_notify);
    CU_ASSERT(id > 0);
    tw_scope_close(scope);

    /* Dispatched under an unrelated active span: the callback must not see it. */
    tw_span *busy = tw_span_start(tracer, "loop-busy", NULL);
    tw_scope *busy_scope = tw_scope_activate(busy, true);
    iterate_until_done(context, &w);
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), busy); /* restored */
    tw_scope_close(busy_scope);
    CU_ASSERT_EQUAL(w.notified, 1); /* the source is gone, with its capture */

    CU_ASSERT(all_children(memory, "idle-work", finished_named(memory, "adder"), 1));
    g_main_context_unref(context);
    tw_tracer_free(tracer);
}

static void test_timeout_callback_is_restored_at_each_dispatch(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    GMainContext *context = g_main_context_new();
    source_work w = {tracer, "tick", 0, 3, false, 0};

    tw_span *adder = tw_span_start(tracer, "timer-owner", NULL);
    tw_scope *scope = tw_scope_activate(adder, true);
    /* 0 ms: ready at every iteration, so the test does not wait on a clock. */
    guint id = tw_glib_timeout_add_full(tracer, context, G_PRIORITY_DEFAULT, 0, source_callback, &w,
                                        source_notify);
    CU_ASSERT(id > 0);
    tw_scope_close(scope);
    iterate_until_done(context, &w);
    CU_ASSERT_EQUAL(w.dispatches, 3);
    CU_ASSERT_EQUAL(w.notified, 1);
    CU_ASSERT_PTR_NULL(tw_tracer_active_context(tracer)); /* nothing left behind */
    CU_ASSERT(all_children(memory, "tick", finished_named(memory, "timer-owner"), 3));

    /* The plain variant, added with nothing active: roots. */
    source_work r = {tracer, "root-tick", 0, 1, false, 0};
    CU_ASSERT(tw_glib_timeout_add(tracer, context, 0, source_callback, &r) > 0);
    iterate_until_done(context, &r);
    const tw_finished_span *root = finished_named(memory, "root-tick");
    CU_ASSERT_PTR_NOT_NULL_FATAL(root);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(root), 0);
    g_main_context_unref(context);
    tw_tracer_free(tracer);
}

static void test_removed_source_frees_its_capture(void)
{
    tw_tracer *tracer = tracer_always_sampled(NULL, NULL);
    GMainContext *context = g_main_context_new();
    source_work w = {tracer, "never", 0, 1, false, 0};
    tw_span *p = tw_span_start(tracer, "p", NULL);
    tw_scope *scope = tw_scope_activate(p, true);
    guint id = tw_glib_timeout_add_full(tracer, context, G_PRIORITY_DEFAULT, 3600 * 1000,
                                        source_callback, &w, source_notify);
    tw_scope_close(scope);
    GSource *source = g_main_context_find_source_by_id(context, id);
    CU_ASSERT_PTR_NOT_NULL_FATAL(source);
    g_source_destroy(source);
    CU_ASSERT_EQUAL(w.notified, 1);
    CU_ASSERT_EQUAL(w.dispatches, 0);
    g_main_context_unref(context);
    tw_tracer_free(tracer);
}

typedef struct {
    GMainContext *context;
    source_work *work;
} loop_arg;

static void *loop_thread(void *p)
{
    loop_arg *a = p;
    g_main_context_push_thread_default(a->context);
    iterate_until_done(a->context, a->work);
    g_main_context_pop_thread_default(a->context);
    return NULL;
}

static void test_idle_on_a_context_run_by_another_thread(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    GMainContext *context = g_main_context_new();
    source_work w = {tracer, "remote-idle", 0, 1, false, 0};
    loop_arg arg = {context, &w};
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, loop_thread, &arg), 0);
    tw_span *adder = tw_span_start(tracer, "remote-adder", NULL);
    tw_scope *scope = tw_scope_activate(adder, true);
    CU_ASSERT(tw_glib_idle_add(tracer, context, source_callback, &w) > 0); /* wakes the loop */
    tw_scope_close(scope);
    pthread_join(th, NULL);
    CU_ASSERT(all_children(memory, "remote-idle", finished_named(memory, "remote-adder"), 1));
    g_main_context_unref(context);
    tw_tracer_free(tracer);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("scope/glib", NULL, NULL);
    CU_add_test(s, "pool work is a child of the pushing span",
                test_pool_work_is_a_child_of_the_pushing_span);
    CU_add_test(s, "two parents sharing an exclusive pool never mix",
                test_two_parents_sharing_an_exclusive_pool_never_mix);
    CU_add_test(s, "immediate free frees dropped items", test_immediate_free_frees_dropped_items);
    CU_add_test(s, "pool bad arguments", test_pool_bad_arguments);
    CU_add_test(s, "idle callback runs under the adder's context",
                test_idle_callback_runs_under_the_adders_context);
    CU_add_test(s, "timeout callback is restored at each dispatch",
                test_timeout_callback_is_restored_at_each_dispatch);
    CU_add_test(s, "removed source frees its capture", test_removed_source_frees_its_capture);
    CU_add_test(s, "idle on a context run by another thread",
                test_idle_on_a_context_run_by_another_thread);
}
