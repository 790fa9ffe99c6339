/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/memory.c: the in-memory reporter, for tests (ours and the users').
 * Synchronous: report() appends under `lock`, so a span is readable as soon
 * as tw_span_finish returns. Bounded by max_spans; overflow is counted as
 * queue_full like any other drop.
 */
#include "report/report.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct {
    tw_reporter base;
    pthread_mutex_t lock;
    tw__span_data **spans; /* guarded by lock */
    size_t n, cap;         /* guarded by lock */
    size_t max_spans;
    tw__report_counters counters;
    tw__fork_entry fork_entry;
} memory_reporter;

/* fork() (fork.h): the child keeps the spans, which are its memory too. */
static void memory_fork_prepare(void *arg)
{
    pthread_mutex_lock(&((memory_reporter *)arg)->lock);
}

static void memory_fork_parent(void *arg)
{
    pthread_mutex_unlock(&((memory_reporter *)arg)->lock);
}

static void memory_fork_child(void *arg)
{
    pthread_mutex_unlock(&((memory_reporter *)arg)->lock);
}

static void memory_report(tw_reporter *r, tw__span_data *span)
{
    memory_reporter *m = (memory_reporter *)r;
    tw__count(&m->counters.reported, 1);
    pthread_mutex_lock(&m->lock);
    if (m->n >= m->max_spans) {
        pthread_mutex_unlock(&m->lock);
        tw__count(&m->counters.queue_full, 1);
        return;
    }
    if (m->n == m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        tw__span_data **grown = realloc(m->spans, ncap * sizeof(*grown));
        if (!grown) {
            pthread_mutex_unlock(&m->lock);
            tw__count(&m->counters.failed, 1);
            return;
        }
        m->spans = grown;
        m->cap = ncap;
    }
    m->spans[m->n++] = tw__span_data_ref(span);
    pthread_mutex_unlock(&m->lock);
    tw__count(&m->counters.sent, 1);
}

static uint64_t memory_counter(const tw_reporter *r, tw_counter c)
{
    return tw__report_counters_get(&((const memory_reporter *)r)->counters, c);
}

static void clear_locked(memory_reporter *m)
{
    for (size_t i = 0; i < m->n; i++)
        tw__span_data_unref(m->spans[i]);
    m->n = 0;
}

static void memory_destroy(tw_reporter *r)
{
    memory_reporter *m = (memory_reporter *)r;
    tw__fork_unregister(&m->fork_entry);
    clear_locked(m);
    free(m->spans);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static const tw__reporter_vtable memory_vtable = {
    .size = sizeof(tw__reporter_vtable),
    .name = "memory",
    .report = memory_report,
    .counter = memory_counter,
    .destroy = memory_destroy,
};

tw_reporter *tw_reporter_memory_new(size_t max_spans)
{
    memory_reporter *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->base.vtable = &memory_vtable;
    pthread_mutex_init(&m->lock, NULL);
    m->max_spans = max_spans ? max_spans : 1000000;
    m->fork_entry = (tw__fork_entry){.level = TW__FORK_LEVEL_REPORTER,
                                     .prepare = memory_fork_prepare,
                                     .parent = memory_fork_parent,
                                     .child = memory_fork_child,
                                     .arg = m};
    if (!tw__fork_register(&m->fork_entry))
        tw__log_msg(TW_LOG_WARN,
                    "memory reporter: pthread_atfork failed: a forked child may hang on its lock");
    return &m->base;
}

static memory_reporter *as_memory(const tw_reporter *r)
{
    return r && r->vtable == &memory_vtable ? (memory_reporter *)r : NULL;
}

size_t tw_memory_reporter_count(const tw_reporter *reporter)
{
    memory_reporter *m = as_memory(reporter);
    if (!m)
        return 0;
    pthread_mutex_lock(&m->lock);
    size_t n = m->n;
    pthread_mutex_unlock(&m->lock);
    return n;
}

const tw_finished_span *tw_memory_reporter_span(const tw_reporter *reporter, size_t index)
{
    memory_reporter *m = as_memory(reporter);
    if (!m)
        return NULL;
    pthread_mutex_lock(&m->lock);
    const tw_finished_span *s = index < m->n ? (const tw_finished_span *)m->spans[index] : NULL;
    pthread_mutex_unlock(&m->lock);
    return s;
}

void tw_memory_reporter_clear(tw_reporter *reporter)
{
    memory_reporter *m = as_memory(reporter);
    if (!m)
        return;
    pthread_mutex_lock(&m->lock);
    clear_locked(m);
    pthread_mutex_unlock(&m->lock);
}
