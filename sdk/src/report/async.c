/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/async.c: the asynchronous reporter: a bounded queue filled by
 * application threads and drained by one background thread per reporter
 * that feeds a tw__sender (batching, encoding, sending).
 *
 * The application thread's whole cost is one short critical section: push a
 * pointer into a ring buffer, or count a drop when the ring is full (the
 * queue never grows and report() never waits). The reporter thread is woken
 * when the ring reaches a quarter of its capacity, when a flush is requested,
 * at close, and otherwise every flush interval; it swaps the whole ring's
 * contents out under the lock and encodes outside it, so producers are never
 * held up by encoding or sending.
 *
 * Locking: `lock` guards ring/head/len, the flush generations, the thread
 * state and is_closing; `wake` is signalled by producers and flushers, `done`
 * by the reporter thread after each cycle. `send_lock` is held by the
 * reporter thread while it runs the sender, never together with `lock` by
 * that thread. Counters are relaxed atomics.
 *
 * fork() (report/fork.c): the prepare hook takes send_lock, which waits for
 * the batch being sent to reach the transport, then `lock`; so the child
 * gets a quiescent sender and a consistent queue. The child drops the queued
 * spans (the parent still holds and sends its own copies), forgets the
 * sender's partial batch, restarts its counters, and starts a new reporter
 * thread lazily, on its first report() or flush. The parent just unlocks.
 * The reporter thread blocks asynchronous signals (spawn_thread).
 */
#include "report/report.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"

typedef struct {
    tw_reporter base;
    const char *name;
    tw__sender *sender; /* used by the reporter thread only (and start/destroy) */
    tw__report_counters counters;

    pthread_mutex_t lock;
    pthread_cond_t wake;                       /* reporter thread waits here */
    pthread_cond_t done;                       /* flushers wait here */
    tw__span_data **ring;                      /* guarded by lock */
    size_t cap, head, len;                     /* guarded by lock */
    size_t wake_len;                           /* immutable: len that wakes the thread */
    bool is_closing;                           /* guarded by lock */
    bool is_waiting;                           /* guarded by lock: thread is in cond wait */
    uint64_t flush_requested, flush_completed; /* guarded by lock */

    unsigned int flush_interval_ms;
    bool has_thread;     /* guarded by lock: `thread` runs and must be joined */
    bool needs_restart;  /* guarded by lock: a forked child, thread not started yet */
    bool is_sender_open; /* guarded by send_lock: open() succeeded */
    pthread_t thread;
    /* What log_losses last said (reporter thread only). */
    uint64_t said_queue_full, said_too_large, said_failed;
    int64_t said_ns;
    tw__span_data **batch;     /* reporter thread's private drain array (cap) */
    pthread_mutex_t send_lock; /* held while the sender runs (see the top comment) */
    tw__fork_entry fork_entry;
} async_reporter;

static void *reporter_thread(void *arg);

/* Starts the reporter thread with every asynchronous signal blocked: the
 * application's handlers then run on its own threads, and a SIGPIPE or
 * SIGXFSZ raised by a sender's write (a FIFO without reader, RLIMIT_FSIZE)
 * stays pending on this thread while the write fails with EPIPE / EFBIG,
 * which the sender counts, instead of killing the process. Faults raised by
 * the thread's own code stay deliverable. Returns pthread_create's result. */
static int spawn_thread(async_reporter *a)
{
    sigset_t blocked, old;
    sigfillset(&blocked);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++)
        sigdelset(&blocked, faults[i]);
    pthread_sigmask(SIG_SETMASK, &blocked, &old);
    int rc = pthread_create(&a->thread, NULL, reporter_thread, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* In a forked child: starts the thread on first use. On failure the spans
 * wait in the queue and the next call tries again. */
static void restart_locked(async_reporter *a)
{
    int rc = spawn_thread(a);
    if (rc != 0) {
        tw__log_msg(TW_LOG_WARN, "%s reporter: cannot restart its thread after fork: %s", a->name,
                    strerror(rc));
        return;
    }
    a->has_thread = true;
    a->needs_restart = false;
}

static void async_report(tw_reporter *r, tw__span_data *span)
{
    async_reporter *a = (async_reporter *)r;
    tw__count(&a->counters.reported, 1);
    pthread_mutex_lock(&a->lock);
    if (a->needs_restart)
        restart_locked(a);
    if (a->len == a->cap || a->is_closing) {
        bool is_closing = a->is_closing;
        pthread_mutex_unlock(&a->lock);
        /* A span that races with close cannot be sent any more: failed. */
        tw__count(is_closing ? &a->counters.failed : &a->counters.queue_full, 1);
        return;
    }
    size_t tail = a->head + a->len;
    if (tail >= a->cap)
        tail -= a->cap;
    a->ring[tail] = tw__span_data_ref(span);
    a->len++;
    /* Wake only on the crossing, so a busy producer does not pay a futex
     * call per span. */
    bool should_wake = a->len == a->wake_len && a->is_waiting;
    pthread_mutex_unlock(&a->lock);
    if (should_wake)
        pthread_cond_signal(&a->wake);
}

static size_t drain_locked(async_reporter *a)
{
    size_t n = a->len;
    size_t first = a->cap - a->head < n ? a->cap - a->head : n;
    memcpy(a->batch, a->ring + a->head, first * sizeof(*a->batch));
    if (n > first)
        memcpy(a->batch + first, a->ring, (n - first) * sizeof(*a->batch));
    a->head = 0;
    a->len = 0;
    return n;
}

static struct timespec deadline_after_ms(unsigned int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Says, at most once a minute (and at close), how many spans were lost
 * since the last time it spoke: a full queue (counted by the application
 * threads, said here so that they never write to a log), spans too large
 * for a packet or body, spans the transport could not take. The reporter
 * thread only. */
#define LOSS_PERIOD_NS 60000000000LL
static void log_losses(async_reporter *a, int64_t now, bool is_closing)
{
    if (!is_closing && a->said_ns != 0 && now - a->said_ns < LOSS_PERIOD_NS)
        return;
    const tw__report_counters *c = &a->counters;
    uint64_t full = tw__read(&c->queue_full), large = tw__read(&c->too_large);
    uint64_t failed = tw__read(&c->failed);
    if (full < a->said_queue_full || large < a->said_too_large || failed < a->said_failed)
        a->said_queue_full = a->said_too_large = a->said_failed = 0; /* counters restarted */
    if (full > a->said_queue_full)
        tw__log_msg(TW_LOG_WARN,
                    "%s reporter: the queue of %zu spans was full: %llu spans dropped (%llu in "
                    "all); spans are finished faster than they are sent: raise the queue size "
                    "(JAEGER_REPORTER_MAX_QUEUE_SIZE) or sample less",
                    a->name, a->cap, (unsigned long long)(full - a->said_queue_full),
                    (unsigned long long)full);
    if (large > a->said_too_large)
        tw__log_msg(TW_LOG_WARN,
                    "%s reporter: %llu spans too large for one packet or body were dropped (%llu "
                    "in all); lower the per-span limits (TRACEWIRE_MAX_*) or raise the packet or "
                    "body size",
                    a->name, (unsigned long long)(large - a->said_too_large),
                    (unsigned long long)large);
    if (failed > a->said_failed)
        tw__log_msg(TW_LOG_WARN,
                    "%s reporter: %llu spans could not be sent (%llu in all); the transport's "
                    "own message says why",
                    a->name, (unsigned long long)(failed - a->said_failed),
                    (unsigned long long)failed);
    if (full > a->said_queue_full || large > a->said_too_large || failed > a->said_failed)
        a->said_ns = now ? now : 1;
    a->said_queue_full = full;
    a->said_too_large = large;
    a->said_failed = failed;
}

static void *reporter_thread(void *arg)
{
    async_reporter *a = arg;
    int64_t last_flush_ns = tw__mono_ns();
    pthread_mutex_lock(&a->lock);
    for (;;) {
        struct timespec deadline = deadline_after_ms(a->flush_interval_ms);
        while (!a->is_closing && a->len < a->wake_len && a->flush_requested == a->flush_completed) {
            a->is_waiting = true;
            int rc = pthread_cond_timedwait(&a->wake, &a->lock, &deadline);
            a->is_waiting = false;
            if (rc == ETIMEDOUT)
                break;
        }
        bool is_closing = a->is_closing;
        uint64_t flush_gen = a->flush_requested;
        size_t n = drain_locked(a);
        atomic_store_explicit(&a->counters.queue_length, 0, memory_order_relaxed);
        /* Read under lock: flush() writes it under lock. */
        bool is_flush_due = flush_gen != a->flush_completed;
        pthread_mutex_unlock(&a->lock);

        pthread_mutex_lock(&a->send_lock);
        for (size_t i = 0; i < n; i++)
            a->sender->vtable->append(a->sender, a->batch[i]);
        int64_t now = tw__mono_ns();
        bool interval_due = now - last_flush_ns >= (int64_t)a->flush_interval_ms * 1000000;
        if (interval_due || is_closing || is_flush_due) {
            a->sender->vtable->flush(a->sender);
            last_flush_ns = now;
        }
        pthread_mutex_unlock(&a->send_lock);
        log_losses(a, now, is_closing);

        pthread_mutex_lock(&a->lock);
        a->flush_completed = flush_gen;
        pthread_cond_broadcast(&a->done);
        if (is_closing && a->len == 0)
            break;
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

static tw_status async_start(tw_reporter *r, const tw__process *process, tw_error **err)
{
    async_reporter *a = (async_reporter *)r;
    pthread_mutex_lock(&a->send_lock); /* a fork may flush the sender meanwhile */
    tw_status st = a->sender->vtable->open(a->sender, process, err);
    a->is_sender_open = st == TW_OK;
    pthread_mutex_unlock(&a->send_lock);
    if (st != TW_OK)
        return st;
    pthread_mutex_lock(&a->lock);
    int rc = spawn_thread(a);
    a->has_thread = rc == 0;
    pthread_mutex_unlock(&a->lock);
    if (rc != 0) {
        tw__set_error(err, TW_E_STATE, "%s reporter: cannot start its thread: %s", a->name,
                      strerror(rc));
        return TW_E_STATE;
    }
    return TW_OK;
}

static tw_status async_flush(tw_reporter *r, unsigned int timeout_ms)
{
    async_reporter *a = (async_reporter *)r;
    tw_status st = TW_OK;
    pthread_mutex_lock(&a->lock);
    if (a->needs_restart)
        restart_locked(a);
    if (!a->has_thread || a->is_closing) {
        pthread_mutex_unlock(&a->lock);
        return TW_E_CLOSED;
    }
    uint64_t gen = ++a->flush_requested;
    pthread_cond_signal(&a->wake);
    struct timespec deadline = deadline_after_ms(timeout_ms ? timeout_ms : 5000);
    while (a->flush_completed < gen) {
        if (pthread_cond_timedwait(&a->done, &a->lock, &deadline) == ETIMEDOUT) {
            st = TW_E_TIMEOUT;
            break;
        }
    }
    pthread_mutex_unlock(&a->lock);
    return st;
}

static void async_close(tw_reporter *r)
{
    async_reporter *a = (async_reporter *)r;
    pthread_mutex_lock(&a->lock);
    bool was_closing = a->is_closing;
    a->is_closing = true;
    a->needs_restart = false; /* a child closing before its first span */
    bool should_join = !was_closing && a->has_thread;
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
    if (should_join) {
        pthread_join(a->thread, NULL);
        pthread_mutex_lock(&a->lock);
        a->has_thread = false;
        pthread_mutex_unlock(&a->lock);
    }
}

static uint64_t async_counter(const tw_reporter *r, tw_counter c)
{
    const async_reporter *a = (const async_reporter *)r;
    if (c == TW_COUNTER_QUEUE_LENGTH) {
        pthread_mutex_lock((pthread_mutex_t *)&a->lock);
        size_t len = a->len;
        pthread_mutex_unlock((pthread_mutex_t *)&a->lock);
        return len;
    }
    return tw__report_counters_get(&a->counters, c);
}

static void async_destroy(tw_reporter *r)
{
    async_reporter *a = (async_reporter *)r;
    tw__fork_unregister(&a->fork_entry); /* waits for a fork in progress */
    /* Spans still queued (reporter never started) are dropped and counted. */
    for (size_t i = 0; i < a->len; i++) {
        size_t idx = (a->head + i) % a->cap;
        tw__span_data_unref(a->ring[idx]);
    }
    if (a->len)
        tw__count(&a->counters.failed, a->len);
    a->sender->vtable->free(a->sender);
    pthread_cond_destroy(&a->wake);
    pthread_cond_destroy(&a->done);
    pthread_mutex_destroy(&a->lock);
    pthread_mutex_destroy(&a->send_lock);
    free(a->ring);
    free(a->batch);
    free(a);
}

/* ---- fork (registered with report/fork.c) ---------------------------------------------------- */

static bool sender_has_fork_hook(const async_reporter *a)
{
    return TW__VTABLE_HAS(a->sender->vtable, tw__sender_vtable, after_fork_child);
}

static void init_conds(async_reporter *a)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&a->wake, &attr);
    pthread_cond_init(&a->done, &attr);
    pthread_condattr_destroy(&attr);
}

static void fork_prepare(void *arg)
{
    async_reporter *a = arg;
    pthread_mutex_lock(&a->send_lock);
    /* A sender that cannot forget its partial batch in the child sends it
     * now, so that the child has nothing to send twice. */
    if (a->is_sender_open && !sender_has_fork_hook(a))
        a->sender->vtable->flush(a->sender);
    pthread_mutex_lock(&a->lock);
}

static void fork_parent(void *arg)
{
    async_reporter *a = arg;
    pthread_mutex_unlock(&a->lock);
    pthread_mutex_unlock(&a->send_lock);
}

static void fork_child(void *arg)
{
    async_reporter *a = arg;
    /* One thread now, the one that took both locks in fork_prepare. The
     * condition variables may still count the parent's waiters (its reporter
     * thread, flushers), for whom glibc's signal and broadcast can wait:
     * they are made anew. */
    init_conds(a);
    for (size_t i = 0; i < a->len; i++)
        tw__span_data_unref(a->ring[(a->head + i) % a->cap]);
    a->head = 0;
    a->len = 0;
    a->is_waiting = false;
    a->flush_completed = a->flush_requested;
    if (a->has_thread) {
        a->has_thread = false;
        a->needs_restart = !a->is_closing;
    }
    tw__report_counters *c = &a->counters;
    atomic_uint_fast64_t *all[] = {
        &c->reported, &c->sent,  &c->queue_full,       &c->too_large,   &c->failed,
        &c->batches,  &c->bytes, &c->resolve_failures, &c->queue_length};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        atomic_store_explicit(all[i], 0, memory_order_relaxed);
    if (a->is_sender_open && sender_has_fork_hook(a))
        a->sender->vtable->after_fork_child(a->sender);
    pthread_mutex_unlock(&a->lock);
    pthread_mutex_unlock(&a->send_lock);
}

static const tw__reporter_vtable async_vtable = {
    .size = sizeof(tw__reporter_vtable),
    .name = "async",
    .start = async_start,
    .report = async_report,
    .flush = async_flush,
    .close = async_close,
    .counter = async_counter,
    .destroy = async_destroy,
};

tw_reporter *tw__async_reporter_new(const char *name, tw__sender *sender,
                                    const tw__async_options *opts, tw_error **err)
{
    async_reporter *a = calloc(1, sizeof(*a));
    if (!a)
        goto fail_alloc;
    a->ring = malloc(opts->max_queue_size * sizeof(*a->ring));
    a->batch = malloc(opts->max_queue_size * sizeof(*a->batch));
    if (!a->ring || !a->batch)
        goto fail_arrays;
    init_conds(a);
    pthread_mutex_init(&a->lock, NULL);
    pthread_mutex_init(&a->send_lock, NULL);
    a->base.vtable = &async_vtable;
    a->base.name = name;
    a->name = name;
    a->sender = sender;
    sender->counters = &a->counters;
    a->cap = opts->max_queue_size;
    a->wake_len = a->cap / 4 ? a->cap / 4 : 1;
    a->flush_interval_ms = opts->flush_interval_ms;
    a->fork_entry = (tw__fork_entry){
        .prepare = fork_prepare, .parent = fork_parent, .child = fork_child, .arg = a};
    if (!tw__fork_register(&a->fork_entry))
        tw__log_msg(TW_LOG_WARN, "%s reporter: pthread_atfork failed: a forked child cannot report",
                    name);
    return &a->base;

fail_arrays:
    free(a->ring);
    free(a->batch);
    free(a);
fail_alloc:
    sender->vtable->free(sender);
    tw__set_error(err, TW_E_NOMEM, "%s reporter: out of memory for a queue of %zu spans", name,
                  opts->max_queue_size);
    return NULL;
}
