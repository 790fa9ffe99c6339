/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/scope/test_scope.c: suite "scope/scope": the in-process context.
 * Activation makes the implicit parent; nesting and LIFO close; misuse (out
 * of order, twice, from another thread) is TW_E_STATE with a message and
 * changes nothing; finish_span_on_close; the snapshot outlives its span and
 * follows its baggage; per-tracer isolation; the tracer and span options that
 * turn it off; context and "no context" scopes; captures run on this and
 * other threads (tw_pthread_create, including pthread_exit); thread exit and
 * tracer free close what is left; many threads at once (also run under
 * ThreadSanitizer by scripts/test.sh).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"
#include "tracewire/pthread.h"

/* ---- fixtures: a logger that keeps the messages, and span checks -------------------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[8192]; /* guarded by log_lock: every message since log_reset() */

static void keep_log(tw_log_level level, const char *message, void *user_data)
{
    (void)level;
    (void)user_data;
    pthread_mutex_lock(&log_lock);
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s\n", message);
    pthread_mutex_unlock(&log_lock);
}

static void log_reset(void)
{
    pthread_mutex_lock(&log_lock);
    log_text[0] = '\0';
    pthread_mutex_unlock(&log_lock);
}

static bool log_has(const char *needle)
{
    pthread_mutex_lock(&log_lock);
    bool found = strstr(log_text, needle) != NULL;
    pthread_mutex_unlock(&log_lock);
    return found;
}

static int suite_init(void)
{
    tw_set_logger(keep_log, NULL, TW_LOG_WARN);
    return 0;
}

static int suite_cleanup(void)
{
    tw_set_logger(NULL, NULL, TW_LOG_ERROR);
    return 0;
}

/* Whether @child (finished) is a child of @parent (finished): same trace, parent id. */
static bool is_child_of(const tw_finished_span *child, const tw_finished_span *parent)
{
    return child && parent &&
           tw_finished_span_trace_id_high(child) == tw_finished_span_trace_id_high(parent) &&
           tw_finished_span_trace_id_low(child) == tw_finished_span_trace_id_low(parent) &&
           tw_finished_span_parent_id(child) == tw_finished_span_span_id(parent);
}

static bool is_root(const tw_finished_span *s)
{
    return s && tw_finished_span_parent_id(s) == 0;
}

static tw_tracer *tracer_with_active_span_off(tw_reporter **memory)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_use_active_span(opts, false);
    return tracer_always_sampled(memory, opts);
}

/* ---- activation and the implicit parent --------------------------------------------------- */

static void test_span_started_without_parent_is_child_of_active_span(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    CU_ASSERT_PTR_NULL(tw_tracer_active_span(tracer));
    CU_ASSERT_PTR_NULL(tw_tracer_active_context(tracer));

    tw_span *parent = tw_span_start(tracer, "parent", NULL);
    tw_scope *scope = tw_scope_activate(parent, false);
    CU_ASSERT_PTR_NOT_NULL_FATAL(scope);
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), parent);
    CU_ASSERT_PTR_EQUAL(tw_scope_span(scope), parent);
    CU_ASSERT_EQUAL(tw_span_context_span_id(tw_tracer_active_context(tracer)),
                    tw_span_context_span_id(tw_span_get_context(parent)));

    tw_span *with_options = tw_span_start(tracer, "child-opts", NULL);
    tw_span_finish(with_options);
    tw_span *with_null_parent = tw_span_start_child(tracer, "child-null", NULL);
    tw_span_finish(with_null_parent);
    CU_ASSERT_EQUAL(tw_scope_close(scope), TW_OK);
    CU_ASSERT_PTR_NULL(tw_tracer_active_span(tracer));
    tw_span *after = tw_span_start(tracer, "after-close", NULL);
    tw_span_finish(after);
    tw_span_finish(parent);

    const tw_finished_span *p = finished_named(memory, "parent");
    const tw_finished_span *c = finished_named(memory, "child-opts");
    CU_ASSERT(is_child_of(c, p));
    CU_ASSERT(is_child_of(finished_named(memory, "child-null"), p));
    CU_ASSERT(is_root(finished_named(memory, "after-close")));
    /* The implicit parent is recorded as a ChildOf reference, like an explicit one. */
    int type = -1;
    uint64_t hi = 0, lo = 0, id = 0;
    CU_ASSERT_EQUAL_FATAL(tw_finished_span_reference_count(c), 1);
    CU_ASSERT(tw_finished_span_reference(c, 0, &type, &hi, &lo, &id));
    CU_ASSERT_EQUAL(type, TW_REF_CHILD_OF);
    CU_ASSERT_EQUAL(id, tw_finished_span_span_id(p));
    tw_tracer_free(tracer);
}

static void test_explicit_parent_wins_over_active_span(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *other = tw_span_start(tracer, "other", NULL);
    tw_span *active = tw_span_start(tracer, "active", NULL);
    tw_scope *scope = tw_scope_activate(active, true);
    tw_span *c = tw_span_start_child(tracer, "explicit", tw_span_get_context(other));
    tw_span_finish(c);
    tw_span_options *opts = tw_span_options_new();
    tw_span_options_add_reference(opts, TW_REF_FOLLOWS_FROM, tw_span_get_context(other));
    tw_span *f = tw_span_start(tracer, "follows", opts);
    tw_span_options_free(opts);
    tw_span_finish(f);
    tw_scope_close(scope);
    tw_span_finish(other);
    CU_ASSERT(is_child_of(finished_named(memory, "explicit"), finished_named(memory, "other")));
    CU_ASSERT(is_child_of(finished_named(memory, "follows"), finished_named(memory, "other")));
    tw_tracer_free(tracer);
}

static void test_nested_scopes_restore_the_outer_one(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *outer = tw_span_start(tracer, "outer", NULL);
    tw_scope *outer_scope = tw_scope_activate(outer, true);
    tw_span *inner = tw_span_start(tracer, "inner", NULL); /* child of outer */
    tw_scope *inner_scope = tw_scope_activate(inner, true);
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), inner);
    tw_span *leaf = tw_span_start(tracer, "leaf", NULL); /* child of inner */
    tw_span_finish(leaf);
    CU_ASSERT_EQUAL(tw_scope_close(inner_scope), TW_OK);
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), outer);
    tw_span *sibling = tw_span_start(tracer, "sibling", NULL); /* child of outer again */
    tw_span_finish(sibling);
    CU_ASSERT_EQUAL(tw_scope_close(outer_scope), TW_OK);
    CU_ASSERT_PTR_NULL(tw_tracer_active_span(tracer));

    const tw_finished_span *o = finished_named(memory, "outer");
    const tw_finished_span *i = finished_named(memory, "inner");
    CU_ASSERT(is_root(o));
    CU_ASSERT(is_child_of(i, o));
    CU_ASSERT(is_child_of(finished_named(memory, "leaf"), i));
    CU_ASSERT(is_child_of(finished_named(memory, "sibling"), o));
    tw_tracer_free(tracer);
}

/* ---- misuse ----------------------------------------------------------------------------- */

static void test_closing_out_of_order_is_a_state_error_that_changes_nothing(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *a = tw_span_start(tracer, "a", NULL);
    tw_span *b = tw_span_start(tracer, "b", NULL);
    tw_scope *sa = tw_scope_activate(a, true);
    tw_scope *sb = tw_scope_activate(b, true);
    log_reset();
    CU_ASSERT_EQUAL(tw_scope_close(sa), TW_E_STATE);
    CU_ASSERT(log_has("not the innermost"));
    CU_ASSERT(log_has("reverse order of activation"));
    /* Nothing changed: b is still active, a is not finished, both close in order. */
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), b);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    CU_ASSERT_EQUAL(tw_scope_close(sb), TW_OK);
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), a);
    CU_ASSERT_EQUAL(tw_scope_close(sa), TW_OK);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 2);
    tw_tracer_free(tracer);
}

static void test_closing_twice_or_null_is_reported_not_a_crash(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *s = tw_span_start(tracer, "once", NULL);
    tw_scope *scope = tw_scope_activate(s, true);
    CU_ASSERT_EQUAL(tw_scope_close(scope), TW_OK);
    log_reset();
    CU_ASSERT_EQUAL(tw_scope_close(scope), TW_E_STATE); /* still pooled: detected */
    CU_ASSERT(log_has("already closed"));
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 1); /* finished once */
    CU_ASSERT_EQUAL(tw_scope_close(NULL), TW_E_INVALID_ARG);
    tw_tracer_free(tracer);
}

typedef struct {
    tw_scope *scope;
    tw_status status;
} foreign_close;

static void *close_from_other_thread(void *p)
{
    foreign_close *fc = p;
    fc->status = tw_scope_close(fc->scope);
    return NULL;
}

static void test_closing_on_another_thread_is_a_state_error(void)
{
    tw_tracer *tracer = tracer_always_sampled(NULL, NULL);
    tw_span *s = tw_span_start(tracer, "mine", NULL);
    foreign_close fc = {tw_scope_activate(s, true), TW_OK};
    log_reset();
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, close_from_other_thread, &fc), 0);
    pthread_join(th, NULL);
    CU_ASSERT_EQUAL(fc.status, TW_E_STATE);
    CU_ASSERT(log_has("another thread"));
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), s);
    CU_ASSERT_EQUAL(tw_scope_close(fc.scope), TW_OK);
    tw_tracer_free(tracer);
}

static void test_bad_arguments_are_rejected(void)
{
    tw_tracer *tracer = tracer_always_sampled(NULL, NULL);
    log_reset();
    tw_set_logger(keep_log, NULL, TW_LOG_ERROR);
    CU_ASSERT_PTR_NULL(tw_scope_activate(NULL, false));
    CU_ASSERT(log_has("invalid argument"));
    tw_span *s = tw_span_start(tracer, "finished", NULL);
    tw_span_finish(s);
    CU_ASSERT_PTR_NULL(tw_scope_activate(s, false)); /* handle still pooled: detected */
    CU_ASSERT_PTR_NULL(tw_scope_activate_context(NULL, NULL));
    CU_ASSERT_PTR_NULL(tw_tracer_active_span(NULL));
    CU_ASSERT_PTR_NULL(tw_tracer_active_context(NULL));
    CU_ASSERT_PTR_NULL(tw_scope_span(NULL));
    CU_ASSERT_PTR_NULL(tw_scope_context(NULL));
    CU_ASSERT_PTR_NULL(tw_context_capture(NULL));
    CU_ASSERT_PTR_NULL(tw_captured_activate(NULL));
    CU_ASSERT_EQUAL(tw_span_options_set_ignore_active_span(NULL, true), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_tracer_options_set_use_active_span(NULL, true), TW_E_INVALID_ARG);
    tw_captured_free(NULL);
    pthread_t th;
    CU_ASSERT_EQUAL(tw_pthread_create(NULL, &th, NULL, NULL, NULL), EINVAL);
    tw_set_logger(keep_log, NULL, TW_LOG_WARN);
    tw_tracer_free(tracer);
}

/* ---- spans and their scopes ---------------------------------------------------------------- */

static void test_finish_span_on_close_decides_who_finishes(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *owned = tw_span_start(tracer, "owned", NULL);
    tw_scope *s1 = tw_scope_activate(owned, true);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 0);
    tw_scope_close(s1);
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory, "owned"));

    tw_span *kept = tw_span_start(tracer, "kept", NULL);
    tw_scope *s2 = tw_scope_activate(kept, false);
    tw_scope_close(s2);
    CU_ASSERT_PTR_NULL(finished_named(memory, "kept")); /* still the caller's */
    tw_span_set_tag_str(kept, "after", "close");
    tw_span_finish(kept);
    CU_ASSERT(tag_equals_str(finished_named(memory, "kept"), "after", "close"));
    tw_tracer_free(tracer);
}

static void test_span_finished_while_active_is_forgotten_but_context_stays(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *s = tw_span_start(tracer, "early-finish", NULL);
    tw_scope *outer = tw_scope_activate(s, true);
    tw_scope *inner = tw_scope_activate(s, true); /* the same span twice, both owning it */
    tw_span_finish(s);                            /* the application finishes it anyway */
    CU_ASSERT_PTR_NULL(tw_tracer_active_span(tracer));
    CU_ASSERT_PTR_NULL(tw_scope_span(inner));
    CU_ASSERT_PTR_NULL(tw_scope_span(outer));
    CU_ASSERT_PTR_NOT_NULL(tw_tracer_active_context(tracer));
    tw_span *child = tw_span_start(tracer, "late-child", NULL);
    tw_span_finish(child);
    log_reset();
    CU_ASSERT_EQUAL(tw_scope_close(inner), TW_OK);
    CU_ASSERT_EQUAL(tw_scope_close(outer), TW_OK);
    CU_ASSERT_FALSE(log_has("already finished")); /* no second finish */
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 2);
    CU_ASSERT(
        is_child_of(finished_named(memory, "late-child"), finished_named(memory, "early-finish")));
    tw_tracer_free(tracer);
}

static void *finish_in_thread(void *span)
{
    tw_span_finish(span);
    return NULL;
}

static void test_context_stays_valid_when_span_finishes_on_another_thread(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *s = tw_span_start(tracer, "finished-elsewhere", NULL);
    uint64_t span_id = tw_span_context_span_id(tw_span_get_context(s));
    tw_scope *scope = tw_scope_activate(s, false);
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, finish_in_thread, s), 0);
    pthread_join(th, NULL);
    const tw_span_context *ctx = tw_tracer_active_context(tracer);
    CU_ASSERT_EQUAL(tw_span_context_span_id(ctx), span_id);
    tw_span *child = tw_span_start(tracer, "child-of-finished", NULL);
    tw_span_finish(child);
    CU_ASSERT_EQUAL(tw_scope_close(scope), TW_OK);
    CU_ASSERT(is_child_of(finished_named(memory, "child-of-finished"),
                          finished_named(memory, "finished-elsewhere")));
    tw_tracer_free(tracer);
}

static void test_baggage_and_priority_set_after_activation_reach_children(void)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "late-changes");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);

    tw_span *s = tw_span_start(tracer, "root", NULL);
    tw_scope *scope = tw_scope_activate(s, true);
    tw_span_set_baggage(s, "user", "ada");
    tw_span_set_tag_int64(s, "sampling.priority", 1); /* forces sampling from now on */
    tw_span *child = tw_span_start(tracer, "child", NULL);
    CU_ASSERT_STRING_EQUAL(tw_span_get_baggage(child, "user"), "ada");
    CU_ASSERT(tw_span_is_sampled(child));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(tw_tracer_active_context(tracer), "user"),
                           "ada");
    tw_span_finish(child);
    tw_scope_close(scope);
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory, "child"));
    tw_tracer_free(tracer);
}

/* ---- tracers and options ------------------------------------------------------------------- */

static void test_tracers_do_not_see_each_others_scopes(void)
{
    tw_reporter *memory_a, *memory_b;
    tw_tracer *a = tracer_always_sampled(&memory_a, NULL);
    tw_tracer *b = tracer_always_sampled(&memory_b, NULL);
    tw_span *pa = tw_span_start(a, "a-parent", NULL);
    tw_scope *sa = tw_scope_activate(pa, true);
    CU_ASSERT_PTR_NULL(tw_tracer_active_span(b));
    tw_span *pb = tw_span_start(b, "b-root", NULL);
    tw_scope *sb = tw_scope_activate(pb, true);
    tw_span *ca = tw_span_start(a, "a-child", NULL);
    tw_span *cb = tw_span_start(b, "b-child", NULL);
    tw_span_finish(ca);
    tw_span_finish(cb);
    /* Per-tracer LIFO: a's scope may close while b's is open on top of it. */
    CU_ASSERT_EQUAL(tw_scope_close(sa), TW_OK);
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(b), pb);
    CU_ASSERT_PTR_NULL(tw_tracer_active_span(a));
    CU_ASSERT_EQUAL(tw_scope_close(sb), TW_OK);

    CU_ASSERT(is_root(finished_named(memory_b, "b-root")));
    CU_ASSERT(
        is_child_of(finished_named(memory_a, "a-child"), finished_named(memory_a, "a-parent")));
    CU_ASSERT(is_child_of(finished_named(memory_b, "b-child"), finished_named(memory_b, "b-root")));
    tw_tracer_free(a);
    tw_tracer_free(b);
}

static void test_a_new_tracer_at_a_freed_tracers_address_sees_nothing(void)
{
    /* Scopes left open by a freed tracer on another thread must not leak into
     * whichever tracer is allocated next (possibly at the same address). */
    tw_tracer *old = tracer_always_sampled(NULL, NULL);
    tw_scope *leaked = tw_scope_activate_context(old, NULL);
    CU_ASSERT_PTR_NOT_NULL(leaked);
    log_reset();
    tw_tracer_free(old); /* closes this thread's scope of `old`, with a warning */
    CU_ASSERT(log_has("still open on this thread"));
    tw_reporter *memory;
    tw_tracer *fresh = tracer_always_sampled(&memory, NULL);
    CU_ASSERT_PTR_NULL(tw_tracer_active_context(fresh));
    tw_span *s = tw_span_start(fresh, "fresh", NULL);
    tw_span_finish(s);
    CU_ASSERT(is_root(finished_named(memory, "fresh")));
    tw_tracer_free(fresh);
}

static void test_use_active_span_off_starts_roots(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_with_active_span_off(&memory);
    tw_span *p = tw_span_start(tracer, "p", NULL);
    tw_scope *scope = tw_scope_activate(p, true);
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), p); /* scopes still work */
    tw_span *c = tw_span_start(tracer, "not-a-child", NULL);
    tw_span_finish(c);
    tw_span *e = tw_span_start_child(tracer, "explicit", tw_tracer_active_context(tracer));
    tw_span_finish(e);
    tw_scope_close(scope);
    CU_ASSERT(is_root(finished_named(memory, "not-a-child")));
    CU_ASSERT(is_child_of(finished_named(memory, "explicit"), finished_named(memory, "p")));
    tw_tracer_free(tracer);
}

static void test_ignore_active_span_starts_one_root(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *p = tw_span_start(tracer, "p", NULL);
    tw_scope *scope = tw_scope_activate(p, true);
    tw_span_options *opts = tw_span_options_new();
    CU_ASSERT_EQUAL(tw_span_options_set_ignore_active_span(opts, true), TW_OK);
    tw_span *r = tw_span_start(tracer, "detached", opts);
    tw_span_finish(r);
    tw_span_options_reset(opts); /* back to the default */
    tw_span *c = tw_span_start(tracer, "attached", opts);
    tw_span_finish(c);
    tw_span_options_free(opts);
    tw_scope_close(scope);
    CU_ASSERT(is_root(finished_named(memory, "detached")));
    CU_ASSERT(is_child_of(finished_named(memory, "attached"), finished_named(memory, "p")));
    tw_tracer_free(tracer);
}

/* ---- context scopes ------------------------------------------------------------------------ */

static void test_context_scope_parents_spans_and_no_context_hides_outer(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span_context *remote = tw_span_context_new(0x11, 0x22, 0x33, 0, TW_FLAG_SAMPLED, NULL);
    tw_scope *outer = tw_scope_activate_context(tracer, remote);
    tw_span_context_unref(remote); /* the scope holds its own reference */
    CU_ASSERT_PTR_NULL(tw_tracer_active_span(tracer));
    CU_ASSERT_EQUAL(tw_span_context_span_id(tw_scope_context(outer)), 0x33);
    tw_span *server = tw_span_start(tracer, "server", NULL);
    tw_span_finish(server);

    tw_scope *hidden = tw_scope_activate_context(tracer, NULL);
    CU_ASSERT_PTR_NULL(tw_tracer_active_context(tracer));
    CU_ASSERT_PTR_NULL(tw_scope_context(hidden));
    tw_span *detached = tw_span_start(tracer, "detached", NULL);
    tw_span_finish(detached);
    CU_ASSERT_EQUAL(tw_scope_close(hidden), TW_OK);
    CU_ASSERT_EQUAL(tw_span_context_span_id(tw_tracer_active_context(tracer)), 0x33);
    CU_ASSERT_EQUAL(tw_scope_close(outer), TW_OK);

    const tw_finished_span *s = finished_named(memory, "server");
    CU_ASSERT_EQUAL(tw_finished_span_trace_id_low(s), 0x22);
    CU_ASSERT_EQUAL(tw_finished_span_parent_id(s), 0x33);
    CU_ASSERT(is_root(finished_named(memory, "detached")));
    tw_tracer_free(tracer);
}

/* ---- captures ------------------------------------------------------------------------------ */

typedef struct {
    tw_tracer *tracer;
    const char *operation;
    bool saw_active_span;
    uint64_t active_span_id;
} work;

static void start_one_span(void *p)
{
    work *w = p;
    w->saw_active_span = tw_tracer_active_span(w->tracer) != NULL;
    w->active_span_id = tw_span_context_span_id(tw_tracer_active_context(w->tracer));
    tw_span *s = tw_span_start(w->tracer, w->operation, NULL);
    tw_span_finish(s);
}

static void test_captured_run_restores_the_captured_context(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *p = tw_span_start(tracer, "capturer", NULL);
    tw_scope *scope = tw_scope_activate(p, true);
    uint64_t p_id = tw_span_context_span_id(tw_span_get_context(p));
    tw_captured *captured = tw_context_capture(tracer);
    CU_ASSERT_EQUAL(tw_scope_close(scope), TW_OK); /* the span finishes: the capture lives on */

    tw_span *unrelated = tw_span_start(tracer, "unrelated", NULL);
    tw_scope *other = tw_scope_activate(unrelated, true);
    work w = {tracer, "run-later", true, 0};
    tw_captured_run(captured, start_one_span, &w);
    CU_ASSERT_FALSE(w.saw_active_span); /* only the context travels */
    CU_ASSERT_EQUAL(w.active_span_id, p_id);
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), unrelated); /* restored */
    tw_scope_close(other);
    tw_captured_run(captured, start_one_span, &(work){tracer, "run-again", false, 0});
    tw_captured_free(captured);

    CU_ASSERT(is_child_of(finished_named(memory, "run-later"), finished_named(memory, "capturer")));
    CU_ASSERT(is_child_of(finished_named(memory, "run-again"), finished_named(memory, "capturer")));
    tw_tracer_free(tracer);
}

static void test_capture_of_nothing_hides_the_runners_scopes(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_captured *nothing = tw_context_capture(tracer);
    CU_ASSERT_PTR_NOT_NULL_FATAL(nothing);
    tw_span *busy = tw_span_start(tracer, "runner-busy", NULL);
    tw_scope *scope = tw_scope_activate(busy, true);
    tw_captured_run(nothing, start_one_span, &(work){tracer, "queued-from-root", false, 0});
    CU_ASSERT_PTR_EQUAL(tw_tracer_active_span(tracer), busy);
    tw_scope_close(scope);
    tw_captured_free(nothing);
    CU_ASSERT(is_root(finished_named(memory, "queued-from-root")));
    tw_tracer_free(tracer);
}

static void leak_a_scope(void *p)
{
    tw_tracer *tracer = p;
    tw_span *s = tw_span_start(tracer, "leaked-by-callback", NULL);
    tw_scope_activate(s, true); /* never closed by the callback */
}

static void test_captured_run_closes_scopes_the_callback_left_open(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_captured *captured = tw_context_capture(tracer);
    log_reset();
    tw_captured_run(captured, leak_a_scope, tracer);
    CU_ASSERT(log_has("left 1 scope(s) open"));
    CU_ASSERT_PTR_NULL(tw_tracer_active_context(tracer)); /* nothing leaked out */
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory, "leaked-by-callback"));
    tw_captured_run(captured, NULL, NULL); /* logged, nothing runs */
    tw_captured_run(NULL, start_one_span, &(work){tracer, "null-capture", false, 0});
    CU_ASSERT(is_root(finished_named(memory, "null-capture")));
    tw_captured_free(captured);
    tw_tracer_free(tracer);
}

static void test_capture_outlives_its_tracer(void)
{
    tw_tracer *tracer = tracer_always_sampled(NULL, NULL);
    tw_span *p = tw_span_start(tracer, "p", NULL);
    tw_scope *scope = tw_scope_activate(p, true);
    tw_captured *captured = tw_context_capture(tracer);
    tw_scope_close(scope);
    tw_tracer_free(tracer);
    work w = {tracer, "after-free", false, 0};
    tw_set_logger(NULL, NULL, TW_LOG_ERROR); /* the closed tracer refuses the span: expected */
    tw_captured_run(captured, start_one_span, &w); /* tracer memory held by the capture */
    tw_set_logger(keep_log, NULL, TW_LOG_WARN);
    CU_ASSERT(w.active_span_id != 0);
    tw_captured_free(captured);
}

/* ---- other threads -------------------------------------------------------------------------- */

static void *thread_start_one_span(void *p)
{
    start_one_span(p);
    return p;
}

static void *thread_exits_early(void *p)
{
    start_one_span(p);
    tw_span *s = tw_span_start(((work *)p)->tracer, "left-open-at-exit", NULL);
    tw_scope_activate(s, true); /* closed by the thread-exit path, span finished */
    pthread_exit(p);
    return NULL;
}

static void test_pthread_create_carries_the_context(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *p = tw_span_start(tracer, "spawner", NULL);
    tw_scope *scope = tw_scope_activate(p, true);
    work w1 = {tracer, "in-thread", true, 0};
    work w2 = {tracer, "in-exiting-thread", true, 0};
    pthread_t t1, t2;
    CU_ASSERT_EQUAL_FATAL(tw_pthread_create(tracer, &t1, NULL, thread_start_one_span, &w1), 0);
    CU_ASSERT_EQUAL_FATAL(tw_pthread_create(tracer, &t2, NULL, thread_exits_early, &w2), 0);
    tw_scope_close(scope); /* the parent finishes before the threads may even run */
    void *r1 = NULL, *r2 = NULL;
    pthread_join(t1, &r1);
    pthread_join(t2, &r2);
    CU_ASSERT_PTR_EQUAL(r1, &w1);
    CU_ASSERT_PTR_EQUAL(r2, &w2);
    CU_ASSERT_FALSE(w1.saw_active_span);

    /* Nothing active at creation: the thread starts roots. */
    work w3 = {tracer, "from-nothing", false, 0};
    pthread_t t3;
    CU_ASSERT_EQUAL_FATAL(tw_pthread_create(tracer, &t3, NULL, thread_start_one_span, &w3), 0);
    pthread_join(t3, NULL);

    const tw_finished_span *spawner = finished_named(memory, "spawner");
    CU_ASSERT(is_child_of(finished_named(memory, "in-thread"), spawner));
    CU_ASSERT(is_child_of(finished_named(memory, "in-exiting-thread"), spawner));
    /* pthread_exit ran the cleanup: the scope the routine left open was closed. */
    CU_ASSERT(is_child_of(finished_named(memory, "left-open-at-exit"), spawner));
    CU_ASSERT(is_root(finished_named(memory, "from-nothing")));
    tw_tracer_free(tracer);
}

static void *thread_leaves_scope_open(void *p)
{
    tw_tracer *tracer = p;
    tw_span *s = tw_span_start(tracer, "open-at-thread-exit", NULL);
    tw_scope_activate(s, true);
    return NULL; /* plain pthread: the key destructor closes it */
}

static void test_thread_exit_closes_scopes_and_finishes_owned_spans(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    log_reset();
    pthread_t th;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th, NULL, thread_leaves_scope_open, tracer), 0);
    pthread_join(th, NULL);
    CU_ASSERT_PTR_NOT_NULL(finished_named(memory, "open-at-thread-exit"));
    CU_ASSERT(log_has("thread exit with 1 scope(s) still open"));
    tw_tracer_free(tracer);
}

#define THREADS 8
#define ROUNDS 300

typedef struct {
    tw_tracer *tracer;
    const tw_captured *shared; /* one capture run by every thread at once */
    uint64_t shared_span_id;
    atomic_int *failures;
} stress_arg;

static void check_shared(void *p)
{
    stress_arg *a = p;
    if (tw_span_context_span_id(tw_tracer_active_context(a->tracer)) != a->shared_span_id)
        atomic_fetch_add(a->failures, 1);
}

static void *stress_thread(void *p)
{
    stress_arg *a = p;
    for (int i = 0; i < ROUNDS; i++) {
        tw_span *root = tw_span_start_child(a->tracer, "stress-root", NULL);
        if (tw_span_context_parent_id(tw_span_get_context(root)) != 0)
            atomic_fetch_add(a->failures, 1); /* another thread's scope leaked in */
        tw_scope *s1 = tw_scope_activate(root, true);
        tw_span *child = tw_span_start(a->tracer, "stress-child", NULL);
        if (tw_span_context_parent_id(tw_span_get_context(child)) !=
            tw_span_context_span_id(tw_span_get_context(root)))
            atomic_fetch_add(a->failures, 1);
        tw_scope *s2 = tw_scope_activate(child, true);
        tw_captured_run(a->shared, check_shared, a);
        if (tw_tracer_active_span(a->tracer) != child)
            atomic_fetch_add(a->failures, 1);
        tw_span *leaf = tw_span_start(a->tracer, "stress-leaf", NULL);
        if (tw_span_context_parent_id(tw_span_get_context(leaf)) !=
            tw_span_context_span_id(tw_span_get_context(child)))
            atomic_fetch_add(a->failures, 1);
        tw_span_finish(leaf);
        if (tw_scope_close(s2) != TW_OK || tw_scope_close(s1) != TW_OK)
            atomic_fetch_add(a->failures, 1);
    }
    return NULL;
}

static void test_many_threads_keep_their_own_stacks(void)
{
    tw_reporter *memory;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *shared_parent = tw_span_start(tracer, "shared", NULL);
    tw_scope *scope = tw_scope_activate(shared_parent, false);
    tw_captured *shared = tw_context_capture(tracer);
    atomic_int failures = 0;
    stress_arg arg = {tracer, shared, tw_span_context_span_id(tw_span_get_context(shared_parent)),
                      &failures};
    tw_scope_close(scope);
    tw_span_finish(shared_parent);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        CU_ASSERT_EQUAL_FATAL(pthread_create(&th[i], NULL, stress_thread, &arg), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    tw_captured_free(shared);
    CU_ASSERT_EQUAL(atomic_load(&failures), 0);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(memory), 1 + THREADS * ROUNDS * 3);
    tw_tracer_free(tracer);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("scope/scope", suite_init, suite_cleanup);
    CU_add_test(s, "span started without parent is child of active span",
                test_span_started_without_parent_is_child_of_active_span);
    CU_add_test(s, "explicit parent wins over active span",
                test_explicit_parent_wins_over_active_span);
    CU_add_test(s, "nested scopes restore the outer one", test_nested_scopes_restore_the_outer_one);
    CU_add_test(s, "closing out of order is a state error that changes nothing",
                test_closing_out_of_order_is_a_state_error_that_changes_nothing);
    CU_add_test(s, "closing twice or NULL is reported, not a crash",
                test_closing_twice_or_null_is_reported_not_a_crash);
    CU_add_test(s, "closing on another thread is a state error",
                test_closing_on_another_thread_is_a_state_error);
    CU_add_test(s, "bad arguments are rejected", test_bad_arguments_are_rejected);
    CU_add_test(s, "finish_span_on_close decides who finishes",
                test_finish_span_on_close_decides_who_finishes);
    CU_add_test(s, "span finished while active is forgotten, its context stays",
                test_span_finished_while_active_is_forgotten_but_context_stays);
    CU_add_test(s, "context stays valid when span finishes on another thread",
                test_context_stays_valid_when_span_finishes_on_another_thread);
    CU_add_test(s, "baggage and priority set after activation reach children",
                test_baggage_and_priority_set_after_activation_reach_children);
    CU_add_test(s, "tracers do not see each other's scopes",
                test_tracers_do_not_see_each_others_scopes);
    CU_add_test(s, "a new tracer at a freed tracer's address sees nothing",
                test_a_new_tracer_at_a_freed_tracers_address_sees_nothing);
    CU_add_test(s, "use_active_span off starts roots", test_use_active_span_off_starts_roots);
    CU_add_test(s, "ignore_active_span starts one root", test_ignore_active_span_starts_one_root);
    CU_add_test(s, "context scope parents spans, no-context scope hides outer",
                test_context_scope_parents_spans_and_no_context_hides_outer);
    CU_add_test(s, "captured run restores the captured context",
                test_captured_run_restores_the_captured_context);
    CU_add_test(s, "capture of nothing hides the runner's scopes",
                test_capture_of_nothing_hides_the_runners_scopes);
    CU_add_test(s, "captured run closes scopes the callback left open",
                test_captured_run_closes_scopes_the_callback_left_open);
    CU_add_test(s, "capture outlives its tracer", test_capture_outlives_its_tracer);
    CU_add_test(s, "pthread_create carries the context", test_pthread_create_carries_the_context);
    CU_add_test(s, "thread exit closes scopes and finishes owned spans",
                test_thread_exit_closes_scopes_and_finishes_owned_spans);
    CU_add_test(s, "many threads keep their own stacks", test_many_threads_keep_their_own_stacks);
}
