/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/async.c: the asynchronous reporter: a bounded queue filled by
 * application threads and drained by one background thread per reporter
 * that feeds a tw__sender (batching, encoding, sending).
 *
 * The application thread takes no lock: it claims the next position of a
 * bounded ring of span pointers with one compare-and-swap and publishes
 * the span in its slot, or counts a drop when the ring is full (the queue
 * never grows and report() never waits). The queue is bounded twice:
 * in spans (the ring's capacity) and in bytes (the heap the queued records
 * hold, tw__span_data_footprint, counted until the reporter thread has
 * handed each to the sender), so that a long queue of large spans cannot
 * take the process's memory; a drop at the byte bound is a queue_full drop,
 * also counted in queue_bytes_dropped. The reporter thread is woken when
 * the ring reaches a quarter of either bound, when a flush is requested, at
 * close, and otherwise every flush interval; it takes the spans published
 * by then out of the ring, in order, and hands each to the sender, all
 * without `lock` (which producers never take anyway), so producers are
 * never held up by encoding or sending. After a burst it trims the heap
 * (trim_heap_if_burst_over) so that the burst's memory goes back to the
 * system.
 *
 * Locking: producers touch only atomics (the ring's slots and tail, the
 * byte count, the counters); the reporter thread alone takes spans out
 * (the slots and head); `lock` guards the flush generations, the thread
 * and sender state and the close deadline; `wake` is signalled by
 * producers (only when the thread has said it waits and the queue reached
 * a quarter of a bound: taking `lock` then is what makes the signal
 * impossible to lose), flushers and close, `done` by the reporter thread
 * after each cycle. The sender runs on the reporter thread without any
 * lock; is_sender_busy says (under `lock`) that it is running. Counters
 * are relaxed atomics.
 *
 * A span that races with close (its report() saw the reporter open, then
 * the thread drained the ring for the last time) stays in the ring and is
 * counted as failed when the reporter is destroyed, which happens only
 * after every span of the tracer has finished.
 *
 * Close has a deadline: close_timeout_ms after it starts. The sender is
 * told (give_up_at_ns, then interrupt) and stops waiting on its transport
 * there; spans drained after it are counted as failed without being
 * handed to the sender. So close returns by the deadline (plus the time a
 * sender takes to notice, which for the HTTP sender is immediate and for
 * the UDP and file senders is one local write), counting what it could not
 * send.
 *
 * fork() (fork.h): the prepare hook takes `lock` only, for as long as the
 * reporter thread or a flusher holds it: it never waits for the sender,
 * so a fork does not wait for a request in flight. The child drops the
 * queued spans (the parent still holds and sends its own copies; a slot
 * another thread had claimed but not yet filled when the process forked
 * stays empty in the child, whose copy of that span is never freed),
 * restarts
 * its counters, and starts a new reporter thread lazily, on its first
 * report() or flush. A sender that was idle at the fork forgets its partial
 * batch (after_fork_child); a sender that was busy (or has no such hook) is
 * in whatever state the parent's thread left it, so the child abandons it
 * to a process-wide list (never touched or
 * freed again: a one-time leak per fork) and its new thread makes a fresh
 * sender with the same configuration (fork_clone). The parent just unlocks.
 * The reporter thread blocks asynchronous signals (spawn_thread).
 */
#include "report/report.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h> /* malloc_trim */
#endif
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    tw_reporter base;
    const char *name;
    tw__sender *sender;       /* guarded by lock for replacement; run by the reporter thread only */
    tw__sender *stale_sender; /* a forked child's abandoned sender: fork_clone's model */
    const tw__process *process; /* from start: what a forked child's new sender opens with */
    tw__report_counters counters;

    pthread_mutex_t lock;
    pthread_cond_t wake; /* reporter thread waits here */
    pthread_cond_t done; /* flushers wait here */
    /* The ring: position p lives in slot p % cap. A producer claims the
     * position tail while tail - head < cap (the slot's span of one round
     * ago has been taken out then), and publishes its span there; the
     * reporter thread takes the span at head when it is there (not NULL:
     * claimed and not yet published stops it), clears the slot and then
     * advances head. NULL is free, so a ring fresh from calloc needs no
     * write to its pages. */
    _Atomic(tw__span_data *) *ring;
    size_t cap;         /* immutable */
    atomic_size_t tail; /* the next position to claim (producers) */
    /* The next position to take: written by the reporter thread (or by
     * fork_child and destroy, when no thread runs), read by producers. */
    atomic_size_t head;
    size_t wake_len;   /* immutable: len that wakes the thread */
    size_t max_bytes;  /* immutable: the byte bound */
    size_t wake_bytes; /* immutable: bytes that wake the thread */
    /* Heap bytes of the spans queued or drained and not yet handed to the
     * sender (tw__span_data_footprint): added by producers under `lock`,
     * taken off by the reporter thread as it hands spans over, without it. */
    atomic_size_t queued_bytes;
    bool is_closing;     /* guarded by lock */
    atomic_bool closing; /* is_closing, for producers (set under lock) */
    bool is_waiting;     /* guarded by lock: thread is in cond wait */
    /* The thread is about to wait or waits: a producer that sees the queue
     * reach a quarter of a bound clears it and signals `wake` (under lock).
     * Sequentially consistent against the ring's tail, so that the thread
     * arming it and then looking at the queue, and a producer filling the
     * queue and then looking at it, cannot both miss the other. */
    atomic_bool wants_wake;
    uint64_t flush_requested, flush_completed; /* guarded by lock */
    int64_t close_deadline_ns;                 /* guarded by lock: set when closing starts */

    unsigned int flush_interval_ms;
    unsigned int close_timeout_ms;
    bool has_thread; /* guarded by lock: `thread` runs and must be joined */
    /* A forked child whose thread is not started yet: written under lock,
     * read by producers without it first. */
    atomic_bool needs_restart;
    bool is_sender_open; /* guarded by lock: open() succeeded */
    bool is_sender_busy; /* guarded by lock: the sender runs (append, flush, open) */
    pthread_t thread;
    /* What log_losses last said (reporter thread only). */
    uint64_t said_queue_full, said_queue_bytes, said_too_large, said_failed;
    int64_t said_ns;
    /* Bytes of spans handed over since the heap was last trimmed (reporter
     * thread only). */
    size_t released_since_trim;
    tw__fork_entry fork_entry;
} async_reporter;

/* What forked children abandoned (their parent's busy sender): kept
 * reachable, never freed. Written only by fork child hooks, which run
 * single-threaded. */
typedef struct abandoned {
    struct abandoned *next;
    tw__sender *sender;
} abandoned;
static abandoned *abandoned_at_fork;

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
        tw__log_for(TW_LOG_WARN, a->name, "%s reporter: cannot restart its thread after fork: %s",
                    a->name, strerror(rc));
        return;
    }
    a->has_thread = true;
    atomic_store_explicit(&a->needs_restart, false, memory_order_relaxed);
}

/* Spans claimed and not yet taken out (published or about to be). */
static size_t queue_len(const async_reporter *a)
{
    size_t tail = atomic_load_explicit(&a->tail, memory_order_seq_cst);
    size_t head = atomic_load_explicit(&a->head, memory_order_relaxed);
    return tail - head < a->cap ? tail - head : a->cap;
}

/* A producer saw the queue reach a quarter of a bound: wakes the thread if
 * it said it waits (once per wait: the first producer to clear the flag). */
static __attribute__((noinline)) void wake_if_waiting(async_reporter *a)
{
    /* Against the thread's arming: our claim of the tail is ordered before
     * this load (see wants_wake). */
    atomic_thread_fence(memory_order_seq_cst);
    if (!atomic_load_explicit(&a->wants_wake, memory_order_relaxed) ||
        !atomic_exchange_explicit(&a->wants_wake, false, memory_order_relaxed))
        return;
    pthread_mutex_lock(&a->lock);
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
}

/* A forked child's first report: starts its thread. */
static __attribute__((noinline)) void restart_for_report(async_reporter *a)
{
    pthread_mutex_lock(&a->lock);
    if (atomic_load_explicit(&a->needs_restart, memory_order_relaxed))
        restart_locked(a);
    pthread_mutex_unlock(&a->lock);
}

/* A span that cannot be queued: counted; @size bytes were added for it;
 * @owned: the caller's reference is ours to drop. */
static __attribute__((noinline)) void drop_span(async_reporter *a, tw__span_data *span, bool owned,
                                                size_t size, bool is_len_full)
{
    if (owned)
        tw__span_data_unref(span);
    atomic_fetch_sub_explicit(&a->queued_bytes, size, memory_order_relaxed);
    tw__count(&a->counters.queue_full, 1);
    if (!is_len_full)
        tw__count(&a->counters.queue_bytes_dropped, 1); /* of queue_full: the byte bound */
}

/* A span that races with close cannot be sent any more: failed. */
static __attribute__((noinline)) void refuse_closing(async_reporter *a, tw__span_data *span,
                                                     bool owned)
{
    if (owned)
        tw__span_data_unref(span);
    tw__count(&a->counters.failed, 1);
}

/* report() and report_owned(): @owned says whether the caller's reference
 * is handed over (else the queue takes one of its own). */
static inline __attribute__((always_inline)) void enqueue(tw_reporter *r, tw__span_data *span,
                                                          bool owned)
{
    async_reporter *a = (async_reporter *)r;
    tw__count(&a->counters.reported, 1);
    if (__builtin_expect(atomic_load_explicit(&a->needs_restart, memory_order_relaxed), 0))
        restart_for_report(a);
    if (__builtin_expect(atomic_load_explicit(&a->closing, memory_order_acquire), 0)) {
        refuse_closing(a, span, owned);
        return;
    }
    size_t size = tw__span_data_footprint(span); /* the record is immutable now */
    /* The bytes first: every producer adds before it claims a slot, so the
     * sum can only overstate what is queued, and the bound holds. An empty
     * queue takes any span, so one larger than the whole bound is still
     * sent. */
    size_t queued = atomic_fetch_add_explicit(&a->queued_bytes, size, memory_order_relaxed);
    size_t queued_after = queued + size; /* no overflow: both are far below 2^63 */
    if (__builtin_expect(queued != 0 && queued_after > a->max_bytes, 0)) {
        drop_span(a, span, owned, size, false);
        return;
    }
    size_t pos = atomic_load_explicit(&a->tail, memory_order_relaxed), head;
    for (;;) {
        /* Acquire: the thread cleared the slot of position pos - cap
         * before it advanced head past it. */
        head = atomic_load_explicit(&a->head, memory_order_acquire);
        if (__builtin_expect(pos - head >= a->cap, 0)) {
            /* Full, unless pos was read before head moved past it. */
            size_t now = atomic_load_explicit(&a->tail, memory_order_relaxed);
            if (now == pos) {
                drop_span(a, span, owned, size, true);
                return;
            }
            pos = now;
            continue;
        }
        /* Sequentially consistent: see wants_wake. */
        if (atomic_compare_exchange_weak_explicit(&a->tail, &pos, pos + 1, memory_order_seq_cst,
                                                  memory_order_relaxed))
            break;
    }
    atomic_store_explicit(&a->ring[pos % a->cap], owned ? span : tw__span_data_ref(span),
                          memory_order_release);
    /* Wake the thread on reaching a quarter of either bound, so a busy
     * producer does not pay a futex call per span. */
    size_t len = pos + 1 - head;
    if (__builtin_expect(len >= a->wake_len || queued_after >= a->wake_bytes, 0))
        wake_if_waiting(a);
}

static void async_report(tw_reporter *r, tw__span_data *span)
{
    enqueue(r, span, false);
}

static void async_report_owned(tw_reporter *r, tw__span_data *span)
{
    enqueue(r, span, true);
}

static struct timespec timespec_at_ns(int64_t ns)
{
    return (struct timespec){(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
}

/* In a forked child's new thread, when the parent's sender was abandoned:
 * a fresh one with its configuration, opened with the process. Called and
 * returns with `lock` held; opens without it. */
static void replace_sender_locked(async_reporter *a)
{
    tw__sender *old = a->stale_sender;
    a->stale_sender = NULL;
    tw__sender *fresh = TW__VTABLE_HAS(old->vtable, tw__sender_vtable, fork_clone)
                            ? old->vtable->fork_clone(old)
                            : NULL;
    if (!fresh) {
        tw__log_for(TW_LOG_WARN, a->name,
                    "%s reporter: its sender was busy when the process forked and cannot be "
                    "made anew in the child: the child's spans are counted as failed",
                    a->name);
        return;
    }
    fresh->counters = &a->counters;
    atomic_store(&fresh->give_up_at_ns, a->close_deadline_ns);
    a->sender = fresh;
    a->is_sender_busy = true;
    pthread_mutex_unlock(&a->lock);
    tw_error *err = NULL;
    tw_status st = fresh->vtable->open(fresh, a->process, &err);
    if (st != TW_OK)
        tw__log_for(TW_LOG_WARN, a->name, "%s reporter: cannot open its sender after fork: %s",
                    a->name, tw_error_message(err));
    tw_error_free(err);
    pthread_mutex_lock(&a->lock);
    a->is_sender_busy = false;
    a->is_sender_open = st == TW_OK;
}

/* The "too large" part of log_losses: what bound the spans met, how large
 * the largest was, and only the advice that can work. Names and keys are
 * cut at TW__MAX_NAME_BYTES, so what makes a span large is what the
 * TRACEWIRE_MAX_* limits bound: its values, tags, logs and fields; the
 * bound itself can be raised only as far as its setting goes. */
static void log_too_large(async_reporter *a, uint64_t large)
{
    tw__sender *s = a->sender;
    const tw__sender_vtable *vt = s ? s->vtable : NULL;
    uint64_t largest = s ? s->too_large_bytes : 0, bound = s ? s->too_large_bound : 0;
    unsigned long long n = (unsigned long long)(large - a->said_too_large);
    if (!vt || !TW__VTABLE_HAS(vt, tw__sender_vtable, bound_setting) || !largest || !bound) {
        tw__log_for(TW_LOG_WARN, a->name,
                    "%s reporter: %llu spans too large for one packet or body were dropped (%llu "
                    "in all); lower what a span carries (TRACEWIRE_MAX_VALUE_BYTES, "
                    "TRACEWIRE_MAX_TAGS, TRACEWIRE_MAX_LOGS, TRACEWIRE_MAX_LOG_FIELDS)",
                    a->name, n, (unsigned long long)large);
        return;
    }
    char raise[160];
    if (largest <= vt->bound_max)
        snprintf(raise, sizeof raise, ", or raise %s (now %llu, at most %llu)", vt->bound_setting,
                 (unsigned long long)bound, (unsigned long long)vt->bound_max);
    else
        snprintf(raise, sizeof raise, " (%s cannot go above %llu bytes: raising it cannot help)",
                 vt->bound_setting, (unsigned long long)vt->bound_max);
    tw__log_for(TW_LOG_WARN, a->name,
                "%s reporter: %llu spans too large for one %s were dropped (%llu in all): the "
                "largest came to %llu bytes, over the %s's limit of %llu bytes; operation names "
                "and keys are cut at %d bytes, so lower what a span carries "
                "(TRACEWIRE_MAX_VALUE_BYTES, TRACEWIRE_MAX_TAGS, TRACEWIRE_MAX_LOGS, "
                "TRACEWIRE_MAX_LOG_FIELDS)%s",
                a->name, n, vt->bound_unit, (unsigned long long)large, (unsigned long long)largest,
                vt->bound_unit, (unsigned long long)bound, TW__MAX_NAME_BYTES, raise);
    s->too_large_bytes = 0;
}

/* Says, at most once a minute (and at close), how many spans were lost
 * since the last time it spoke: a full queue (counted by the application
 * threads, said here so that they never write to a log), spans too large
 * for a packet or body, spans the transport could not take or that close
 * gave up on at its deadline (@is_past_deadline: the sender says nothing
 * about those, so this line names the deadline). The reporter thread only. */
#define LOSS_PERIOD_NS 60000000000LL
static void log_losses(async_reporter *a, int64_t now, bool is_closing, bool is_past_deadline)
{
    if (!is_closing && a->said_ns != 0 && now - a->said_ns < LOSS_PERIOD_NS)
        return;
    const tw__report_counters *c = &a->counters;
    uint64_t full = tw__read(&c->queue_full), large = tw__read(&c->too_large);
    uint64_t failed = tw__read(&c->failed), by_bytes = tw__read(&c->queue_bytes_dropped);
    if (full < a->said_queue_full || large < a->said_too_large || failed < a->said_failed ||
        by_bytes < a->said_queue_bytes)
        a->said_queue_full = a->said_too_large = a->said_failed = a->said_queue_bytes =
            0; /* counters restarted */
    if (full > a->said_queue_full)
        tw__log_for(
            TW_LOG_WARN, a->name,
            "%s reporter: the queue was full: %llu spans dropped (%llu in all), %llu "
            "at its limit of %zu spans and %llu at its limit of %zu bytes; spans are "
            "finished faster than they are sent: raise the queue's limits "
            "(JAEGER_REPORTER_MAX_QUEUE_SIZE, TRACEWIRE_REPORTER_MAX_QUEUE_BYTES) or "
            "sample less",
            a->name, (unsigned long long)(full - a->said_queue_full), (unsigned long long)full,
            (unsigned long long)((full - a->said_queue_full) - (by_bytes - a->said_queue_bytes)),
            a->cap, (unsigned long long)(by_bytes - a->said_queue_bytes), a->max_bytes);
    if (large > a->said_too_large)
        log_too_large(a, large);
    if (failed > a->said_failed && is_past_deadline)
        tw__log_for(TW_LOG_WARN, a->name,
                    "%s reporter: %llu spans could not be sent (%llu in all): close reached its "
                    "deadline of %u ms (TRACEWIRE_REPORTER_CLOSE_TIMEOUT) before they were sent",
                    a->name, (unsigned long long)(failed - a->said_failed),
                    (unsigned long long)failed, a->close_timeout_ms);
    else if (failed > a->said_failed)
        tw__log_for(TW_LOG_WARN, a->name,
                    "%s reporter: %llu spans could not be sent (%llu in all); the transport's "
                    "own message says why",
                    a->name, (unsigned long long)(failed - a->said_failed),
                    (unsigned long long)failed);
    if (full > a->said_queue_full || large > a->said_too_large || failed > a->said_failed)
        a->said_ns = now ? now : 1;
    a->said_queue_full = full;
    a->said_queue_bytes = by_bytes;
    a->said_too_large = large;
    a->said_failed = failed;
}

/* Whether the queued bytes call for the reporter thread. */
static bool is_bytes_due(async_reporter *a)
{
    return atomic_load_explicit(&a->queued_bytes, memory_order_relaxed) >= a->wake_bytes;
}

/* The reporter thread has handed @bytes of spans to the sender (or dropped
 * them): the queue has room for them again. */
static void release_bytes(async_reporter *a, size_t bytes)
{
    atomic_fetch_sub_explicit(&a->queued_bytes, bytes, memory_order_relaxed);
    a->released_since_trim += bytes;
}

/* After a burst, the records it made are free in malloc's heap, where
 * they stay resident unless the heap is trimmed (glibc gives back only
 * the top of the main heap by itself, and not at all once it has raised
 * its trim threshold). So once the burst is over, the thread returns the
 * free pages of every arena to the kernel (malloc_trim): when at least
 * TRIM_MIN_BYTES of spans were handed over since the last time and the
 * cycle was not started by the queue filling up (a timed cycle, a flush,
 * close): under a steady high load, which fills the queue, it never trims,
 * so the pages the next spans need are not given back and faulted in
 * again. The record pool keeps its bounded few thousand records. */
#define TRIM_MIN_BYTES ((size_t)4 << 20)
static void trim_heap_if_burst_over(async_reporter *a, bool was_filled)
{
    if (was_filled || a->released_since_trim < TRIM_MIN_BYTES)
        return;
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    a->released_since_trim = 0;
}

static void *reporter_thread(void *arg)
{
    async_reporter *a = arg;
    int64_t last_flush_ns = tw__mono_ns();
    pthread_mutex_lock(&a->lock);
    if (a->stale_sender)
        replace_sender_locked(a);
    for (;;) {
        struct timespec deadline =
            timespec_at_ns(tw__mono_ns() + (int64_t)a->flush_interval_ms * 1000000);
        while (!a->is_closing && a->flush_requested == a->flush_completed) {
            /* Armed first, then the queue looked at: a producer that fills
             * it after this look sees the flag and signals (under `lock`,
             * so not before this thread waits). */
            atomic_store_explicit(&a->wants_wake, true, memory_order_seq_cst);
            if (queue_len(a) >= a->wake_len || is_bytes_due(a))
                break;
            a->is_waiting = true;
            int rc = pthread_cond_timedwait(&a->wake, &a->lock, &deadline);
            a->is_waiting = false;
            if (rc == ETIMEDOUT)
                break;
        }
        atomic_store_explicit(&a->wants_wake, false, memory_order_relaxed);
        bool is_closing = a->is_closing;
        int64_t give_up_ns = a->close_deadline_ns;
        uint64_t flush_gen = a->flush_requested;
        /* Read under lock: flush() writes it under lock. */
        bool is_flush_due = flush_gen != a->flush_completed;
        bool was_filled =
            !is_closing && !is_flush_due && (queue_len(a) >= a->wake_len || is_bytes_due(a));
        /* This cycle takes what was claimed by now (so it ends), in order,
         * up to the first slot claimed but not yet filled. */
        size_t end = atomic_load_explicit(&a->tail, memory_order_acquire);
        atomic_store_explicit(&a->counters.queue_length, 0, memory_order_relaxed);
        tw__sender *sender = a->is_sender_open ? a->sender : NULL;
        a->is_sender_busy = true;
        pthread_mutex_unlock(&a->lock);

        size_t released = 0, n = 0;
        size_t pos = atomic_load_explicit(&a->head, memory_order_relaxed);
        /* Locals: the sender's calls would make the compiler load them
         * again for every span. */
        _Atomic(tw__span_data *) *const ring = a->ring;
        const size_t cap = a->cap;
        void (*const append)(tw__sender *, tw__span_data *) =
            sender ? sender->vtable->append : NULL;
        size_t at = pos % cap;
        for (; pos != end; pos++, n++) {
            tw__span_data *span = atomic_load_explicit(&ring[at], memory_order_acquire);
            if (!span)
                break; /* claimed, not yet published */
            /* Cleared, then head moved past it (release): the slot is free
             * for the position one round later. */
            atomic_store_explicit(&ring[at], NULL, memory_order_relaxed);
            atomic_store_explicit(&a->head, pos + 1, memory_order_release);
            if (++at == cap)
                at = 0;
            released += tw__span_data_footprint(span);
            /* Producers get the byte room back as it frees up, not at the
             * end of a long drain. */
            if (__builtin_expect((n & 255) == 255, 0)) {
                release_bytes(a, released);
                released = 0;
            }
            /* Past the close deadline nothing more is handed over: each
             * span left is counted here, at once. */
            if (__builtin_expect(!append || (is_closing && tw__mono_ns() >= give_up_ns), 0)) {
                tw__span_data_unref(span);
                tw__count(&a->counters.failed, 1);
                continue;
            }
            append(sender, span);
        }
        atomic_store_explicit(&a->head, pos, memory_order_relaxed);
        release_bytes(a, released);
        int64_t now = tw__mono_ns();
        bool interval_due = now - last_flush_ns >= (int64_t)a->flush_interval_ms * 1000000;
        if (sender && (interval_due || is_closing || is_flush_due)) {
            sender->vtable->flush(sender);
            last_flush_ns = now;
        }
        log_losses(a, now, is_closing, is_closing && now >= give_up_ns);
        /* Before the flush is done: a flush after a burst finds the heap
         * trimmed. */
        trim_heap_if_burst_over(a, was_filled);

        pthread_mutex_lock(&a->lock);
        a->is_sender_busy = false;
        a->flush_completed = flush_gen;
        pthread_cond_broadcast(&a->done);
        if (is_closing) {
            /* Past the deadline what is left is counted at destroy. */
            if (queue_len(a) == 0 || tw__mono_ns() >= give_up_ns)
                break;
            /* A producer claimed a slot and has not filled it yet: a few
             * instructions away, unless it was preempted there. */
            if (n == 0) {
                pthread_mutex_unlock(&a->lock);
                sched_yield();
                pthread_mutex_lock(&a->lock);
            }
        }
    }
    pthread_mutex_unlock(&a->lock);
    return NULL;
}

static tw_status async_start(tw_reporter *r, const tw__process *process, tw_error **err)
{
    async_reporter *a = (async_reporter *)r;
    pthread_mutex_lock(&a->lock);
    a->process = process;
    a->is_sender_busy = true; /* a fork meanwhile abandons it in the child */
    pthread_mutex_unlock(&a->lock);
    tw_status st = a->sender->vtable->open(a->sender, process, err);
    pthread_mutex_lock(&a->lock);
    a->is_sender_busy = false;
    a->is_sender_open = st == TW_OK;
    int rc = st == TW_OK ? spawn_thread(a) : 0;
    a->has_thread = st == TW_OK && rc == 0;
    pthread_mutex_unlock(&a->lock);
    if (st != TW_OK)
        return st;
    if (rc != 0) {
        tw__set_error(err, TW_E_STATE, "%s reporter: cannot start its thread: %s", a->name,
                      strerror(rc));
        return TW_E_STATE;
    }
    return TW_OK;
}

static tw_status async_flush_start(tw_reporter *r, uint64_t *ticket)
{
    async_reporter *a = (async_reporter *)r;
    pthread_mutex_lock(&a->lock);
    if (atomic_load_explicit(&a->needs_restart, memory_order_relaxed))
        restart_locked(a);
    if (!a->has_thread || a->is_closing) {
        pthread_mutex_unlock(&a->lock);
        return TW_E_CLOSED;
    }
    *ticket = ++a->flush_requested;
    pthread_cond_signal(&a->wake);
    pthread_mutex_unlock(&a->lock);
    return TW_OK;
}

static tw_status async_flush_wait(tw_reporter *r, uint64_t ticket, int64_t deadline_ns)
{
    async_reporter *a = (async_reporter *)r;
    tw_status st = TW_OK;
    struct timespec deadline = timespec_at_ns(deadline_ns);
    pthread_mutex_lock(&a->lock);
    while (a->flush_completed < ticket) {
        if (pthread_cond_timedwait(&a->done, &a->lock, &deadline) == ETIMEDOUT) {
            st = a->flush_completed < ticket ? TW_E_TIMEOUT : TW_OK;
            break;
        }
    }
    pthread_mutex_unlock(&a->lock);
    return st;
}

static void async_close_start(tw_reporter *r)
{
    async_reporter *a = (async_reporter *)r;
    tw__sender *to_interrupt = NULL;
    pthread_mutex_lock(&a->lock);
    if (!a->is_closing) {
        a->is_closing = true;
        atomic_store_explicit(&a->closing, true, memory_order_release);
        /* a child closing before its first span */
        atomic_store_explicit(&a->needs_restart, false, memory_order_relaxed);
        a->close_deadline_ns = tw__mono_ns() + (int64_t)a->close_timeout_ms * 1000000;
        if (a->sender) {
            atomic_store(&a->sender->give_up_at_ns, a->close_deadline_ns);
            if (a->is_sender_busy &&
                TW__VTABLE_HAS(a->sender->vtable, tw__sender_vtable, interrupt))
                to_interrupt = a->sender;
        }
        pthread_cond_signal(&a->wake);
    }
    pthread_mutex_unlock(&a->lock);
    /* Outside the lock: interrupt may take the sender's own. A sender is
     * freed only by destroy, after the thread is joined, so it is alive. */
    if (to_interrupt)
        to_interrupt->vtable->interrupt(to_interrupt);
}

static void async_close(tw_reporter *r)
{
    async_reporter *a = (async_reporter *)r;
    async_close_start(r);
    pthread_mutex_lock(&a->lock);
    bool should_join = a->has_thread;
    a->has_thread = false;
    pthread_mutex_unlock(&a->lock);
    if (should_join)
        pthread_join(a->thread, NULL);
}

static uint64_t async_counter(const tw_reporter *r, tw_counter c)
{
    const async_reporter *a = (const async_reporter *)r;
    if (c == TW_COUNTER_QUEUE_BYTES)
        return atomic_load_explicit(&a->queued_bytes, memory_order_relaxed);
    if (c == TW_COUNTER_QUEUE_LENGTH)
        return queue_len(a);
    return tw__report_counters_get(&a->counters, c);
}

bool tw__async_reporter_is_idle(tw_reporter *r)
{
    async_reporter *a = (async_reporter *)r;
    pthread_mutex_lock(&a->lock);
    bool is_idle = a->is_waiting && !a->is_sender_busy;
    pthread_mutex_unlock(&a->lock);
    return is_idle;
}

static void async_destroy(tw_reporter *r)
{
    async_reporter *a = (async_reporter *)r;
    tw__fork_unregister(&a->fork_entry); /* waits for a fork in progress */
    /* Spans still queued (reporter never started, or raced with close) are
     * dropped and counted. No producer runs now: each claimed slot is
     * filled. */
    size_t tail = atomic_load_explicit(&a->tail, memory_order_acquire), n = 0;
    for (size_t pos = atomic_load_explicit(&a->head, memory_order_relaxed); pos != tail; pos++) {
        tw__span_data *span = atomic_load_explicit(&a->ring[pos % a->cap], memory_order_acquire);
        if (span) {
            tw__span_data_unref(span);
            n++;
        }
    }
    if (n)
        tw__count(&a->counters.failed, n);
    if (a->sender)
        a->sender->vtable->free(a->sender);
    pthread_cond_destroy(&a->wake);
    pthread_cond_destroy(&a->done);
    pthread_mutex_destroy(&a->lock);
    free(a->ring);
    free(a);
}

/* ---- fork (registered with fork.c) -------------------------------------------------------- */

/* A forked child's queue: the published spans dropped (the child's copies
 * of the parent's); a slot claimed and not yet filled by a thread that
 * does not exist here is empty. Every slot is free then; nothing claimed. */
static void reset_ring(async_reporter *a)
{
    size_t tail = atomic_load_explicit(&a->tail, memory_order_relaxed);
    for (size_t pos = atomic_load_explicit(&a->head, memory_order_relaxed); pos != tail; pos++) {
        _Atomic(tw__span_data *) *slot = &a->ring[pos % a->cap];
        tw__span_data *span = atomic_load_explicit(slot, memory_order_relaxed);
        if (span)
            tw__span_data_unref(span);
        atomic_store_explicit(slot, NULL, memory_order_relaxed);
    }
    atomic_store_explicit(&a->tail, 0, memory_order_relaxed);
    atomic_store_explicit(&a->head, 0, memory_order_relaxed);
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
    pthread_mutex_lock(&((async_reporter *)arg)->lock);
}

static void fork_parent(void *arg)
{
    pthread_mutex_unlock(&((async_reporter *)arg)->lock);
}

/* The parent's sender stays behind in the child, unused. */
static void abandon_sender(async_reporter *a)
{
    abandoned *node = malloc(sizeof(*node));
    if (node) {
        *node = (abandoned){abandoned_at_fork, a->sender};
        abandoned_at_fork = node;
    }
    a->stale_sender = a->sender;
    a->sender = NULL;
    a->is_sender_open = false;
}

static void fork_child(void *arg)
{
    async_reporter *a = arg;
    /* One thread now, the one that took the lock in fork_prepare. The
     * condition variables may still count the parent's waiters (its reporter
     * thread, flushers), for whom glibc's signal and broadcast can wait:
     * they are made anew. */
    init_conds(a);
    /* fork.c released the record pool before this hook: dropping is safe. */
    reset_ring(a);
    /* The parent's thread's drained spans are not the child's either. */
    atomic_store_explicit(&a->queued_bytes, 0, memory_order_relaxed);
    a->released_since_trim = 0;
    a->is_waiting = false;
    a->flush_completed = a->flush_requested;
    if (a->has_thread) {
        a->has_thread = false;
        atomic_store_explicit(&a->needs_restart, !a->is_closing, memory_order_relaxed);
    }
    tw__report_counters *c = &a->counters;
    atomic_uint_fast64_t *all[] = {
        &c->reported, &c->sent,  &c->queue_full,       &c->too_large,    &c->failed,
        &c->batches,  &c->bytes, &c->resolve_failures, &c->queue_length, &c->queue_bytes_dropped};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        atomic_store_explicit(all[i], 0, memory_order_relaxed);
    a->said_queue_full = a->said_too_large = a->said_failed = a->said_queue_bytes = 0;
    a->said_ns = 0;
    if (a->sender) {
        bool has_hook = TW__VTABLE_HAS(a->sender->vtable, tw__sender_vtable, after_fork_child);
        if (a->is_sender_busy || !has_hook)
            abandon_sender(a);
        else if (a->is_sender_open)
            a->sender->vtable->after_fork_child(a->sender);
    }
    a->is_sender_busy = false;
    pthread_mutex_unlock(&a->lock);
}

static const tw__reporter_vtable async_vtable = {
    .size = sizeof(tw__reporter_vtable),
    .name = "async",
    .start = async_start,
    .report = async_report,
    .flush_start = async_flush_start,
    .flush_wait = async_flush_wait,
    .close_start = async_close_start,
    .close = async_close,
    .counter = async_counter,
    .destroy = async_destroy,
    .report_owned = async_report_owned,
};

tw_reporter *tw__async_reporter_new(const char *name, tw__sender *sender,
                                    const tw__async_options *opts, tw_error **err)
{
    async_reporter *a = calloc(1, sizeof(*a));
    if (!a)
        goto fail_alloc;
    /* calloc: a ring of NULLs is all free (its pages are not touched until
     * spans pass through them). */
    a->ring = calloc(opts->max_queue_size, sizeof(*a->ring));
    a->cap = opts->max_queue_size;
    if (!a->ring)
        goto fail_ring;
    init_conds(a);
    pthread_mutex_init(&a->lock, NULL);
    a->base.vtable = &async_vtable;
    a->base.name = name;
    a->name = name;
    a->sender = sender;
    sender->counters = &a->counters;
    atomic_store_explicit(&sender->give_up_at_ns, 0, memory_order_relaxed);
    atomic_init(&a->tail, 0); /* the slots are free already (calloc) */
    atomic_init(&a->head, 0);
    atomic_init(&a->closing, false);
    atomic_init(&a->wants_wake, false);
    atomic_init(&a->needs_restart, false);
    a->wake_len = a->cap / 4 ? a->cap / 4 : 1;
    a->max_bytes = opts->max_queue_bytes ? opts->max_queue_bytes : TW__DEFAULT_QUEUE_BYTES;
    a->wake_bytes = a->max_bytes / 4 ? a->max_bytes / 4 : 1;
    atomic_init(&a->queued_bytes, 0);
    a->flush_interval_ms = opts->flush_interval_ms;
    a->close_timeout_ms =
        opts->close_timeout_ms ? opts->close_timeout_ms : TW__DEFAULT_CLOSE_TIMEOUT_MS;
    a->fork_entry = (tw__fork_entry){.level = TW__FORK_LEVEL_REPORTER,
                                     .prepare = fork_prepare,
                                     .parent = fork_parent,
                                     .child = fork_child,
                                     .arg = a};
    if (!tw__fork_register(&a->fork_entry))
        tw__log_for(TW_LOG_WARN, a->name,
                    "%s reporter: pthread_atfork failed: a forked child cannot report", name);
    return &a->base;

fail_ring:
    free(a->ring);
    free(a);
fail_alloc:
    sender->vtable->free(sender);
    tw__set_error(err, TW_E_NOMEM, "%s reporter: out of memory for a queue of %zu spans", name,
                  opts->max_queue_size);
    return NULL;
}
