/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_fork.c: suite "report/fork": fork() safety of the
 * library (fork.c, report/async.c). A parent and its child both report to
 * one UDP sink, or one span log file, and every span arrives exactly once,
 * with ids that differ between the two processes. The child starts empty:
 * spans queued in the parent at the fork, or batched in its sender, are the
 * parent's alone (an idle sender forgets its batch in the child; a busy one,
 * or one without the hook, is left alone and replaced by a clone), the
 * child's counters start at 0, and its reporter thread starts on first use.
 * fork() never waits for a sender: 200 forks while the sender is stuck and
 * the queue is full all return at once. No lock is left held in the child:
 * not the record pool's with a hundred spans queued (its hook used to run in
 * the wrong order), not the logger's (a rwlock), not the samplers' while
 * another thread samples, not a reporter's while another thread reports.
 *
 * Children report through their exit status (never CUnit, whose state is the
 * parent's) and _exit; an alarm turns a child that deadlocks after fork()
 * returned into a failure, and the parent's bounded wait (a pidfd) one that
 * deadlocks inside fork(). ASan and TSan run it (TSan with die_after_fork=0,
 * since the children start threads; scripts/test.sh sets it). Not under
 * valgrind: a child cannot free what the parent's other threads kept in
 * thread-local caches (the record pool, GLib's slice magazines), which
 * memcheck would report as lost at each child's exit.
 */
#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bounded.h"
#include "harness.h"
#include "internal.h"
#include "jaeger_decode.h"
#include "report/report.h"
#include "tracewire/tracewire.h"
#include "udp_sink.h"
#include "wire/dapper_log.h"

#define CHILD_ALARM_S 20

/* ---- helpers ------------------------------------------------------------------------------ */

static size_t thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return 0;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Forks; the child runs @fn and _exits with its result. Returns the pid. */
static pid_t fork_child(int (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(CHILD_ALARM_S);
        _exit(fn(arg));
    }
    return pid;
}

/* The child's exit status, or 100 + the signal that killed it, or
 * BOUNDED_CHILD_HUNG when it had to be killed: a child that deadlocks
 * inside fork() never reaches the alarm that fork_child sets. */
static int wait_child(pid_t pid)
{
    return wait_child_bounded(pid, (CHILD_ALARM_S + 10) * 1000);
}

/* Each reported span: its id and the first letter of its name. */
typedef struct arrivals {
    size_t n;
    uint64_t ids[256];
    char kinds[256];
} arrivals;

static void note(arrivals *a, uint64_t id, const char *name)
{
    if (a->n < 256) {
        a->ids[a->n] = id;
        a->kinds[a->n] = name[0];
    }
    a->n++;
}

static size_t count_kind(const arrivals *a, char kind)
{
    size_t n = 0;
    for (size_t i = 0; i < a->n && i < 256; i++)
        n += a->kinds[i] == kind;
    return n;
}

/* Every id exactly once, and no id shared by parent ('b'efore/'a'fter) and
 * 'c'hild spans. */
static bool ids_unique(const arrivals *a)
{
    for (size_t i = 0; i < a->n && i < 256; i++) {
        for (size_t k = i + 1; k < a->n && k < 256; k++) {
            if (a->ids[i] == a->ids[k])
                return false;
        }
    }
    return true;
}

static uint64_t counter(tw_reporter *r, tw_counter c)
{
    return tw_reporter_counter(r, c);
}

/* Finishes spans one at a time, each drained by the reporter thread before
 * the next (a queue of 4 wakes the thread for every span), so that they
 * all sit in the sender's partial batch: with no flush due, none is sent.
 * The wait is for a condition (bounded by 5 s), not for time to pass. */
static void finish_spans_into_batch(tw_tracer *t, const char *name, int n)
{
    tw_reporter *r = tw_tracer_reporter(t);
    for (int i = 0; i < n; i++) {
        tw_span_finish(tw_span_start(t, name, NULL));
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        do {
            sched_yield();
            clock_gettime(CLOCK_MONOTONIC, &now);
        } while (counter(r, TW_COUNTER_QUEUE_LENGTH) != 0 && now.tv_sec - start.tv_sec < 5);
    }
}

static tw_tracer *tracer_with(tw_reporter *r)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "fork-test");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    tw_tracer_options_set_reporter(opts, r);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    return t;
}

/* The spans the child of the tracer-level tests sends (none under TSan,
 * where it cannot start its reporter thread: bounded.h). */
#define CHILD_SPANS (CHILD_CAN_START_THREADS ? 5u : 0u)

/* The child's part of the tracer-level tests: five spans, sent and counted. */
static int child_reports_five(void *arg)
{
    tw_tracer *t = arg;
    tw_reporter *r = tw_tracer_reporter(t);
    if (counter(r, TW_COUNTER_SPANS_REPORTED) != 0 || counter(r, TW_COUNTER_QUEUE_LENGTH) != 0)
        return 1; /* the child starts empty */
    if (!CHILD_CAN_START_THREADS)
        return 0;
    finish_spans_into_batch(t, "child", 5);
    if (tw_tracer_flush(t, 5000) != TW_OK)
        return 2;
    if (counter(r, TW_COUNTER_SPANS_REPORTED) != 5 || counter(r, TW_COUNTER_SPANS_SENT) != 5)
        return 3;
    tw_tracer_free(t);
    return 0;
}

/* ---- tracer level: UDP and file ----------------------------------------------------------- */

static void test_udp_parent_and_child_spans_arrive_exactly_once(void)
{
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_agent(ro, "127.0.0.1", sink.port);
    tw_reporter_options_set_max_queue_size(ro, 4);        /* the thread drains each span ... */
    tw_reporter_options_set_flush_interval_ms(ro, 60000); /* ... and never emits on its own */
    tw_tracer *t = tracer_with(tw_reporter_jaeger_udp_new(ro, NULL));
    tw_reporter_options_free(ro);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* At the fork these sit in the UDP sender's partial batch (the queue's
     * share is the counting-sender tests' below). */
    finish_spans_into_batch(t, "before", 10);
    CU_ASSERT_EQUAL(counter(tw_tracer_reporter(t), TW_COUNTER_SPANS_SENT), 0);
    pid_t pid = fork_child(child_reports_five, t);
    CU_ASSERT_FATAL(pid > 0);
    finish_spans_into_batch(t, "after", 5);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL(wait_child(pid), 0);
    tw_reporter *r = tw_tracer_reporter(t);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), 15); /* the parent is unaffected */
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 15);
    arrivals got = {0};
    size_t decoded = 0;
    while (got.n < 15 + CHILD_SPANS && udp_sink_collect(&sink, sink.n + 1, 2000) > decoded) {
        for (; decoded < sink.n; decoded++) {
            TwireJaegerBatch *b = tw_test_decode_emit_batch(sink.data[decoded], sink.len[decoded]);
            CU_ASSERT_PTR_NOT_NULL_FATAL(b);
            for (guint i = 0; i < b->spans->len; i++) {
                const TwireJaegerSpan *s = g_ptr_array_index(b->spans, i);
                note(&got, (uint64_t)s->spanId, s->operationName);
            }
            g_object_unref(b);
        }
    }
    udp_sink_collect(&sink, sink.n + 1, 200); /* a duplicate would show up now */
    CU_ASSERT_EQUAL(sink.n, decoded);
    CU_ASSERT_EQUAL(got.n, 15 + CHILD_SPANS);
    CU_ASSERT_EQUAL(count_kind(&got, 'b'), 10);
    CU_ASSERT_EQUAL(count_kind(&got, 'a'), 5);
    CU_ASSERT_EQUAL(count_kind(&got, 'c'), CHILD_SPANS);
    CU_ASSERT(ids_unique(&got)); /* ids.c reseeds the child's generator */
    tw_tracer_free(t);
    udp_sink_close(&sink);
}

static void test_file_parent_and_child_lines_appear_exactly_once(void)
{
    char dir[] = "/tmp/tw-fork-test-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/spans.log", dir);
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_file_path(ro, path);
    tw_reporter_options_set_max_queue_size(ro, 4);
    tw_reporter_options_set_flush_interval_ms(ro, 60000);
    tw_tracer *t = tracer_with(tw_reporter_file_new(ro, NULL));
    tw_reporter_options_free(ro);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    finish_spans_into_batch(t, "before", 10); /* pending in the file sender */
    CU_ASSERT_EQUAL(counter(tw_tracer_reporter(t), TW_COUNTER_SPANS_SENT), 0);
    pid_t pid = fork_child(child_reports_five, t);
    CU_ASSERT_FATAL(pid > 0);
    finish_spans_into_batch(t, "after", 5);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL(wait_child(pid), 0);
    tw_tracer_free(t);
    arrivals got = {0};
    size_t n_malformed = 0;
    FILE *f = fopen(path, "r");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    tw__dapper_log_reader *reader = tw__dapper_log_reader_new(f, 0);
    for (;;) {
        tw__span_data *span;
        tw__process process;
        tw_status st = tw__dapper_log_reader_next(reader, &span, &process, NULL);
        if (st == TW_E_NOT_FOUND)
            break;
        if (st != TW_OK) {
            n_malformed++;
            continue;
        }
        note(&got, span->span_id, span->operation);
        tw__span_data_unref(span);
        tw__process_clear(&process);
    }
    tw__dapper_log_reader_free(reader);
    fclose(f);
    CU_ASSERT_EQUAL(n_malformed, 0);
    CU_ASSERT_EQUAL(got.n, 15 + CHILD_SPANS);
    CU_ASSERT_EQUAL(count_kind(&got, 'b'), 10);
    CU_ASSERT_EQUAL(count_kind(&got, 'a'), 5);
    CU_ASSERT_EQUAL(count_kind(&got, 'c'), CHILD_SPANS);
    CU_ASSERT(ids_unique(&got));
    unlink(path);
    rmdir(dir);
}

/* ---- reporter level: a counting sender ---------------------------------------------------- */

/* Appends go to a batch that only flush() "sends" (and counts as sent). */
typedef struct {
    tw__sender base;
    pthread_mutex_t lock;
    pthread_cond_t appended_cond;
    size_t appended; /* guarded by lock */
    size_t in_batch; /* guarded by lock */
    size_t flushed;  /* guarded by lock */
    size_t hook_calls;
} counting_sender;

static tw_status counting_open(tw__sender *s, const tw__process *p, tw_error **err)
{
    (void)s;
    (void)p;
    (void)err;
    return TW_OK;
}

static void counting_append(tw__sender *s, tw__span_data *span)
{
    counting_sender *x = (counting_sender *)s;
    pthread_mutex_lock(&x->lock);
    x->appended++;
    x->in_batch++;
    pthread_cond_broadcast(&x->appended_cond);
    pthread_mutex_unlock(&x->lock);
    tw__span_data_unref(span);
}

static void counting_flush(tw__sender *s)
{
    counting_sender *x = (counting_sender *)s;
    pthread_mutex_lock(&x->lock);
    tw__count(&s->counters->sent, x->in_batch);
    x->flushed += x->in_batch;
    x->in_batch = 0;
    pthread_mutex_unlock(&x->lock);
}

static void counting_after_fork_child(tw__sender *s)
{
    counting_sender *x = (counting_sender *)s;
    x->in_batch = 0; /* the parent sends them */
    x->hook_calls++;
}

static void counting_free(tw__sender *s)
{
    counting_sender *x = (counting_sender *)s;
    pthread_mutex_destroy(&x->lock);
    pthread_cond_destroy(&x->appended_cond);
    free(x);
}

static tw__sender *counting_fork_clone(const tw__sender *s);

static const tw__sender_vtable counting_with_hook = {.size = sizeof(tw__sender_vtable),
                                                     .name = "counting",
                                                     .open = counting_open,
                                                     .append = counting_append,
                                                     .flush = counting_flush,
                                                     .free = counting_free,
                                                     .after_fork_child = counting_after_fork_child,
                                                     .fork_clone = counting_fork_clone};

/* A child whose sender was busy at the fork gets a new one. */
static tw__sender *counting_fork_clone(const tw__sender *s)
{
    counting_sender *x = calloc(1, sizeof(*x));
    x->base.vtable = s->vtable;
    pthread_mutex_init(&x->lock, NULL);
    pthread_cond_init(&x->appended_cond, NULL);
    return &x->base;
}

/* A sender written before the hook existed: its vtable ends at free. */
static const tw__sender_vtable counting_without_hook = {
    .size = offsetof(tw__sender_vtable, after_fork_child),
    .name = "counting-old",
    .open = counting_open,
    .append = counting_append,
    .flush = counting_flush,
    .free = counting_free};

static tw__process empty_process;

static tw_reporter *counting_reporter(const tw__sender_vtable *vt, size_t queue,
                                      counting_sender **out)
{
    counting_sender *x = calloc(1, sizeof(*x));
    x->base.vtable = vt;
    pthread_mutex_init(&x->lock, NULL);
    pthread_cond_init(&x->appended_cond, NULL);
    tw__async_options ao = {.max_queue_size = queue, .flush_interval_ms = 60000};
    tw_reporter *r = tw__async_reporter_new("counting", &x->base, &ao, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(tw__reporter_start(r, &empty_process, NULL), TW_OK);
    *out = x;
    return r;
}

static size_t read_locked(counting_sender *x, const size_t *field)
{
    pthread_mutex_lock(&x->lock);
    size_t v = *field;
    pthread_mutex_unlock(&x->lock);
    return v;
}

/* Waits (on the sender's condition, not a sleep) until @n spans reached it. */
static bool wait_appended(counting_sender *x, size_t n)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    pthread_mutex_lock(&x->lock);
    int rc = 0;
    while (x->appended < n && rc == 0)
        rc = pthread_cond_timedwait(&x->appended_cond, &x->lock, &deadline);
    bool ok = x->appended >= n;
    pthread_mutex_unlock(&x->lock);
    return ok;
}

/* Waits (bounded by 5 s, yielding) until the reporter thread is back in
 * its wait with its sender idle. */
static bool wait_idle(tw_reporter *r)
{
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    do {
        if (tw__async_reporter_is_idle(r))
            return true;
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec - start.tv_sec < 5);
    return false;
}

typedef struct {
    tw_reporter *reporter;
    counting_sender *sender;
    tw__span_data *record;
    size_t at_fork_appended, at_fork_flushed;
} child_ctx;

static int child_queue_is_empty_and_thread_lazy(void *arg)
{
    child_ctx *c = arg;
    if (thread_count() != 1)
        return 1; /* the reporter thread is not started before it is needed */
    if (counter(c->reporter, TW_COUNTER_SPANS_REPORTED) != 0 ||
        counter(c->reporter, TW_COUNTER_QUEUE_LENGTH) != 0)
        return 2;
    if (!CHILD_CAN_START_THREADS)
        return 0;
    for (int i = 0; i < 3; i++)
        tw__reporter_report(c->reporter, c->record);
    if (thread_count() != 2)
        return 3; /* started by the first report */
    if (tw__reporter_flush(c->reporter, tw__flush_deadline(5000)) != TW_OK)
        return 4;
    /* Only the child's three reached its sender: the parent's ten did not. */
    if (c->sender->appended != c->at_fork_appended + 3 || c->sender->flushed != 3)
        return 5;
    if (counter(c->reporter, TW_COUNTER_SPANS_SENT) != 3)
        return 6;
    tw_reporter_free(c->reporter);
    return 0;
}

static void test_child_drops_queued_spans_and_starts_its_thread_lazily(void)
{
    counting_sender *x;
    /* 1024 slots: the thread wakes at 256, so ten spans stay queued. */
    tw_reporter *r = counting_reporter(&counting_with_hook, 1024, &x);
    tw__span_data *record = tw__span_data_new();
    for (int i = 0; i < 10; i++)
        tw__reporter_report(r, record);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_QUEUE_LENGTH), 10);
    child_ctx c = {r, x, record, read_locked(x, &x->appended), 0};
    pid_t pid = fork_child(child_queue_is_empty_and_thread_lazy, &c);
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_EQUAL(wait_child(pid), 0);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(5000)), TW_OK);
    CU_ASSERT_EQUAL(read_locked(x, &x->flushed), 10); /* the parent sent its own */
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), 10);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 10);
    CU_ASSERT_EQUAL(x->hook_calls, 0); /* the hook ran in the child only */
    tw_reporter_free(r);
    tw__span_data_unref(record);
}

static int child_batch_is_gone(void *arg)
{
    child_ctx *c = arg;
    bool has_hook = c->sender->base.vtable == &counting_with_hook;
    /* With the hook, the idle sender forgets its batch; without it, the
     * child never touches the parent's sender again (it has no clone, so
     * the child's spans fail, counted). */
    if (c->sender->in_batch != (has_hook ? 0u : 3u))
        return 1;
    if (c->sender->hook_calls != (has_hook ? 1u : 0u))
        return 2;
    if (!CHILD_CAN_START_THREADS)
        return 0;
    tw__reporter_report(c->reporter, c->record);
    tw__reporter_report(c->reporter, c->record);
    if (tw__reporter_flush(c->reporter, tw__flush_deadline(5000)) != TW_OK)
        return 3;
    uint64_t sent = counter(c->reporter, TW_COUNTER_SPANS_SENT);
    uint64_t failed = counter(c->reporter, TW_COUNTER_FAILED_TO_EMIT);
    if (has_hook ? c->sender->flushed != 2 || sent != 2 : sent != 0 || failed != 2)
        return 4;
    if (c->sender->appended != 3 + (has_hook ? 2u : 0u))
        return 5;
    tw_reporter_free(c->reporter);
    return 0;
}

/* Three spans sit in the sender's batch (appended, not flushed) at the fork. */
static void check_batched_spans_are_sent_once(const tw__sender_vtable *vt)
{
    counting_sender *x;
    tw_reporter *r = counting_reporter(vt, 4, &x); /* 4 slots: the thread wakes per span */
    tw__span_data *record = tw__span_data_new();
    for (int i = 0; i < 3; i++)
        tw__reporter_report(r, record);
    CU_ASSERT_FATAL(wait_appended(x, 3));
    /* Fork with the sender quiescent (the thread back in its wait), so the
     * child takes the after_fork_child path, not the busy one. */
    CU_ASSERT_FATAL(wait_idle(r));
    child_ctx c = {r, x, record, 0, 0};
    pid_t pid = fork_child(child_batch_is_gone, &c);
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_EQUAL(read_locked(x, &x->flushed), 0); /* fork() sends nothing */
    CU_ASSERT_EQUAL(wait_child(pid), 0);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(5000)), TW_OK);
    CU_ASSERT_EQUAL(read_locked(x, &x->flushed), 3);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 3);
    tw_reporter_free(r);
    tw__span_data_unref(record);
}

static void test_sender_hook_forgets_the_batch_in_the_child(void)
{
    check_batched_spans_are_sent_once(&counting_with_hook);
}

static void test_sender_without_hook_is_left_alone_in_the_child(void)
{
    check_batched_spans_are_sent_once(&counting_without_hook);
}

/* ---- forking under load ------------------------------------------------------------------- */

typedef struct {
    tw_reporter *reporter;
    tw__span_data *record;
    atomic_bool is_stopping;
} hammer_ctx;

static void *hammer(void *arg)
{
    hammer_ctx *h = arg;
    while (!atomic_load(&h->is_stopping))
        tw__reporter_report(h->reporter, h->record);
    return NULL;
}

static int child_reports_one(void *arg)
{
    hammer_ctx *h = arg;
    if (counter(h->reporter, TW_COUNTER_SPANS_REPORTED) != 0)
        return 3;
    if (!CHILD_CAN_START_THREADS)
        return 0;
    tw__reporter_report(h->reporter, h->record);
    if (tw__reporter_flush(h->reporter, tw__flush_deadline(5000)) != TW_OK)
        return 1;
    if (counter(h->reporter, TW_COUNTER_SPANS_SENT) != 1)
        return 2;
    tw_reporter_free(h->reporter);
    return 0;
}

static void test_fork_while_another_thread_reports_leaves_no_lock_held(void)
{
    counting_sender *x;
    hammer_ctx h = {.record = tw__span_data_new()};
    h.reporter = counting_reporter(&counting_with_hook, 64, &x);
    atomic_init(&h.is_stopping, false);
    pthread_t thread;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&thread, NULL, hammer, &h), 0);
    /* The forks race the reporting loop, not the thread's start. A thread
     * starting allocates (its stack and TLS bookkeeping), and GCC 12's
     * AddressSanitizer, unlike glibc's malloc, does not hold its allocator
     * locks across fork(): a child forked during that allocation inherits
     * a size class locked for good, and its own new thread blocks in it
     * (5 of 60 runs under ASan, in the first or second child). In the loop
     * neither thread of the parent allocates. */
    CU_ASSERT_FATAL(wait_appended(x, 1));
    int failures = 0;
    for (int i = 0; i < 25; i++) {
        pid_t pid = fork_child(child_reports_one, &h);
        CU_ASSERT_FATAL(pid > 0);
        int rc = wait_child(pid);
        if (rc != 0)
            fprintf(stderr, "child %d: status %d\n", i, rc);
        failures += rc != 0;
    }
    CU_ASSERT_EQUAL(failures, 0);
    atomic_store(&h.is_stopping, true);
    pthread_join(thread, NULL);
    tw_reporter *r = h.reporter;
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(5000)), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED),
                    counter(r, TW_COUNTER_SPANS_SENT) + counter(r, TW_COUNTER_DROPPED_QUEUE_FULL));
    CU_ASSERT_EQUAL(read_locked(x, &x->flushed), counter(r, TW_COUNTER_SPANS_SENT));
    tw_reporter_free(r);
    tw__span_data_unref(h.record);
}

/* ---- locks held across fork(), whoever registered first -------------------------------------- */

/* The child of a tracer whose queue wakes its thread late: three spans,
 * then a flush. */
static int child_reports_three_at_once(void *arg)
{
    tw_tracer *t = arg;
    tw_reporter *r = tw_tracer_reporter(t);
    if (counter(r, TW_COUNTER_SPANS_REPORTED) != 0 || counter(r, TW_COUNTER_QUEUE_LENGTH) != 0)
        return 1;
    if (!CHILD_CAN_START_THREADS)
        return 0;
    for (int i = 0; i < 3; i++)
        tw_span_finish(tw_span_start(t, "child", NULL));
    if (tw_tracer_flush(t, 5000) != TW_OK)
        return 2;
    if (counter(r, TW_COUNTER_SPANS_REPORTED) != 3 || counter(r, TW_COUNTER_SPANS_SENT) != 3)
        return 3;
    tw_tracer_free(t);
    return 0;
}

/* The record pool's lock was taken by a fork hook registered after the
 * reporter's, so the reporter's child hook, freeing the queued records into
 * the pool, waited forever for it: the child never returned from fork()
 * once more than a thread's worth (64) of records were queued. */
static void test_fork_with_a_hundred_queued_spans_returns_in_the_child(void)
{
    udp_sink sink;
    CU_ASSERT_FATAL(udp_sink_open(&sink, "127.0.0.1"));
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_agent(ro, "127.0.0.1", sink.port);
    tw_reporter_options_set_max_queue_size(ro, 1024);     /* wakes the thread at 256 ... */
    tw_reporter_options_set_flush_interval_ms(ro, 60000); /* ... or in a minute */
    tw_tracer *t = tracer_with(tw_reporter_jaeger_udp_new(ro, NULL));
    tw_reporter_options_free(ro);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw_reporter *r = tw_tracer_reporter(t);
    for (int i = 0; i < 100; i++)
        tw_span_finish(tw_span_start(t, "queued", NULL));
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_QUEUE_LENGTH), 100);
    pid_t pid = fork_child(child_reports_three_at_once, t);
    CU_ASSERT_FATAL(pid > 0);
    int status = wait_child(pid);
    CU_ASSERT_EQUAL(status, 0);
    if (status != 0)
        fprintf(stderr, "child status %d\n", status);
    CU_ASSERT_EQUAL(tw_tracer_flush(t, 5000), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), 100);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 100);
    tw_tracer_free(t);
    udp_sink_close(&sink);
}

/* A sender whose append waits at a gate: a stuck transport. */
typedef struct {
    tw__sender base;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool is_open;   /* guarded by lock */
    size_t waiting; /* guarded by lock: appends waiting at the gate */
    size_t appended;
} gate_sender;

static tw_status gate_open_sender(tw__sender *s, const tw__process *p, tw_error **err)
{
    (void)s;
    (void)p;
    (void)err;
    return TW_OK;
}

static void gate_append(tw__sender *s, tw__span_data *span)
{
    gate_sender *g = (gate_sender *)s;
    pthread_mutex_lock(&g->lock);
    g->waiting++;
    pthread_cond_broadcast(&g->cond);
    while (!g->is_open)
        pthread_cond_wait(&g->cond, &g->lock);
    g->waiting--;
    g->appended++;
    pthread_mutex_unlock(&g->lock);
    tw__count(&s->counters->sent, 1);
    tw__span_data_unref(span);
}

static void gate_flush(tw__sender *s)
{
    (void)s;
}

static void gate_free(tw__sender *s)
{
    gate_sender *g = (gate_sender *)s;
    pthread_mutex_destroy(&g->lock);
    pthread_cond_destroy(&g->cond);
    free(g);
}

static void gate_after_fork_child(tw__sender *s)
{
    (void)s;
}

static tw__sender *gate_fork_clone(const tw__sender *s);

static const tw__sender_vtable gate_vtable = {.size = sizeof(tw__sender_vtable),
                                              .name = "gate",
                                              .open = gate_open_sender,
                                              .append = gate_append,
                                              .flush = gate_flush,
                                              .free = gate_free,
                                              .after_fork_child = gate_after_fork_child,
                                              .fork_clone = gate_fork_clone};

static gate_sender *gate_new(void)
{
    gate_sender *g = calloc(1, sizeof(*g));
    g->base.vtable = &gate_vtable;
    pthread_mutex_init(&g->lock, NULL);
    pthread_cond_init(&g->cond, NULL);
    return g;
}

/* The child's sender, made on its reporter thread: an open gate (the
 * parent's sender, stuck at the fork, is never touched in the child). */
static tw__sender *gate_fork_clone(const tw__sender *s)
{
    (void)s;
    gate_sender *g = gate_new();
    g->is_open = true;
    return &g->base;
}

static void gate_release(void *arg)
{
    gate_sender *g = arg;
    pthread_mutex_lock(&g->lock);
    g->is_open = true;
    pthread_cond_broadcast(&g->cond);
    pthread_mutex_unlock(&g->lock);
}

/* Waits (on the condition, bounded by 5 s) until an append waits at the gate. */
static bool gate_wait_stuck(gate_sender *g)
{
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 5;
    pthread_mutex_lock(&g->lock);
    int rc = 0;
    while (g->waiting == 0 && rc == 0)
        rc = pthread_cond_timedwait(&g->cond, &g->lock, &deadline);
    bool ok = g->waiting > 0;
    pthread_mutex_unlock(&g->lock);
    return ok;
}

typedef struct {
    tw_reporter *reporter;
    int n_forks;
    int failures;
    int first_failure; /* the first failed child's status */
} fork_loop_ctx;

/* In each child: the parent's full queue is gone, the thread starts on
 * demand, and the child's own spans are counted (its sender is not the
 * parent's stuck one). */
static int child_of_full_queue(void *arg)
{
    fork_loop_ctx *c = arg;
    if (counter(c->reporter, TW_COUNTER_QUEUE_LENGTH) != 0 ||
        counter(c->reporter, TW_COUNTER_SPANS_REPORTED) != 0)
        return 1;
    if (!CHILD_CAN_START_THREADS)
        return 0;
    for (int i = 0; i < 3; i++) {
        tw__span_data *s = tw__span_data_new();
        tw__reporter_report(c->reporter, s);
        tw__span_data_unref(s);
    }
    tw_status st = tw__reporter_flush(c->reporter, tw__flush_deadline(5000));
    if (st != TW_OK)
        return 2;
    if (counter(c->reporter, TW_COUNTER_SPANS_REPORTED) != 3 ||
        counter(c->reporter, TW_COUNTER_SPANS_SENT) != 3)
        return 3;
    tw_reporter_free(c->reporter);
    return 0;
}

static void fork_loop(void *arg)
{
    fork_loop_ctx *c = arg;
    for (int i = 0; i < c->n_forks; i++) {
        pid_t pid = fork_child(child_of_full_queue, c);
        if (pid < 0) {
            c->failures++;
            c->first_failure = 201;
            return;
        }
        int rc = wait_child(pid);
        if (rc != 0) {
            if (c->failures++ == 0)
                c->first_failure = rc;
            fprintf(stderr, "fork %d: child status %d\n", i, rc);
            return;
        }
    }
}

/* 200 forks while the reporter thread is stuck in its sender and the queue
 * is full of records from the pool: each fork returns at once (it does not
 * wait for the transport), and each child starts empty and works. */
static void test_two_hundred_forks_with_a_full_queue_and_a_stuck_sender(void)
{
    gate_sender *g = gate_new();
    tw__async_options ao = {.max_queue_size = 128, .flush_interval_ms = 60000};
    tw_reporter *r = tw__async_reporter_new("gate", &g->base, &ao, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    CU_ASSERT_EQUAL_FATAL(tw__reporter_start(r, &empty_process, NULL), TW_OK);
    /* One span, and a flush request that wakes the thread: it sticks in
     * the sender with that span. */
    tw__span_data *first = tw__span_data_new();
    tw__reporter_report(r, first);
    tw__span_data_unref(first);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(1)), TW_E_TIMEOUT);
    CU_ASSERT_FATAL(gate_wait_stuck(g));
    uint64_t reported = 1;
    /* Fill the queue behind the stuck thread; the queue holds the only
     * reference to each record, so the child's drop frees them. */
    while (counter(r, TW_COUNTER_DROPPED_QUEUE_FULL) == 0 && reported < 100000) {
        tw__span_data *s = tw__span_data_new();
        tw__reporter_report(r, s);
        tw__span_data_unref(s);
        reported++;
    }
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_QUEUE_LENGTH), 128);
    fork_loop_ctx c = {.reporter = r, .n_forks = 200};
    int64_t elapsed_ms = 0;
    bool in_time = bounded_call(fork_loop, &c, 60000, gate_release, g, &elapsed_ms);
    CU_ASSERT(in_time);
    CU_ASSERT_EQUAL(c.failures, 0);
    if (c.failures)
        fprintf(stderr, "first failed child: status %d\n", c.first_failure);
    gate_release(g);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(10000)), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), reported);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 1 + 128);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_DROPPED_QUEUE_FULL), reported - 129);
    tw_reporter_free(r);
}

/* The logger's lock was a rwlock taken for writing around fork() and
 * "unlocked" in the child by a thread whose id had changed, which glibc
 * reads as a reader's unlock: the lock stayed held, and the child's first
 * log line waited forever. */
static atomic_int log_lines;

static void count_log_line(tw_log_level level, const char *message, void *user_data)
{
    (void)level;
    (void)message;
    (void)user_data;
    atomic_fetch_add(&log_lines, 1);
}

static int child_logs(void *arg)
{
    (void)arg;
    int before = atomic_load(&log_lines);
    tw__log_msg(TW_LOG_WARN, "a line from the child");
    tw_set_logger(count_log_line, NULL, TW_LOG_DEBUG);
    tw__log_msg(TW_LOG_WARN, "another line from the child");
    return atomic_load(&log_lines) == before + 2 ? 0 : 1;
}

static void test_child_can_log_after_fork(void)
{
    tw_set_logger(count_log_line, NULL, TW_LOG_DEBUG);
    tw__log_msg(TW_LOG_DEBUG, "a line from the parent");
    pid_t pid = fork_child(child_logs, NULL);
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_EQUAL(wait_child(pid), 0);
    tw_set_logger(NULL, NULL, TW_LOG_ERROR);
}

/* Samplers with locks (the token bucket, per-operation, adaptive) decided
 * on by another thread while the process forks: the child can still decide
 * on each, new operations included. */
typedef struct {
    tw_sampler *samplers[3];
    atomic_bool is_stopping;
} sampler_hammer_ctx;

static void *sampler_hammer(void *arg)
{
    sampler_hammer_ctx *h = arg;
    uint64_t id = 1;
    char op[16];
    while (!atomic_load(&h->is_stopping)) {
        snprintf(op, sizeof op, "op-%u", (unsigned)(id % 50));
        for (int k = 0; k < 3; k++)
            tw_sampler_is_sampled(h->samplers[k], 0, id * 0x9e3779b97f4a7c15u, op);
        id++;
    }
    return NULL;
}

static int child_decides(void *arg)
{
    sampler_hammer_ctx *h = arg;
    for (int k = 0; k < 3; k++) {
        tw_sampler_is_sampled(h->samplers[k], 0, 42, "op-1");
        tw_sampler_is_sampled(h->samplers[k], 0, 42, "a new operation in the child");
    }
    return 0;
}

static void test_fork_while_another_thread_samples_leaves_no_sampler_lock_held(void)
{
    sampler_hammer_ctx h;
    h.samplers[0] = tw_sampler_rate_limiting_new(1000.0, NULL);
    h.samplers[1] = tw_sampler_per_operation_new(0.5, 1.0, 100, NULL);
    h.samplers[2] = tw_sampler_adaptive_new(10.0, 100, NULL);
    for (int k = 0; k < 3; k++)
        CU_ASSERT_PTR_NOT_NULL_FATAL(h.samplers[k]);
    atomic_init(&h.is_stopping, false);
    pthread_t thread;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&thread, NULL, sampler_hammer, &h), 0);
    int failures = 0;
    for (int i = 0; i < 100 && failures == 0; i++) {
        pid_t pid = fork_child(child_decides, &h);
        CU_ASSERT_FATAL(pid > 0);
        int rc = wait_child(pid);
        if (rc != 0)
            fprintf(stderr, "fork %d: child status %d\n", i, rc);
        failures += rc != 0;
    }
    CU_ASSERT_EQUAL(failures, 0);
    atomic_store(&h.is_stopping, true);
    pthread_join(thread, NULL);
    for (int k = 0; k < 3; k++)
        tw_sampler_free(h.samplers[k]);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("report/fork", NULL, NULL);
    CU_add_test(suite, "udp_parent_and_child_spans_arrive_exactly_once",
                test_udp_parent_and_child_spans_arrive_exactly_once);
    CU_add_test(suite, "file_parent_and_child_lines_appear_exactly_once",
                test_file_parent_and_child_lines_appear_exactly_once);
    CU_add_test(suite, "child_drops_queued_spans_and_starts_its_thread_lazily",
                test_child_drops_queued_spans_and_starts_its_thread_lazily);
    CU_add_test(suite, "sender_hook_forgets_the_batch_in_the_child",
                test_sender_hook_forgets_the_batch_in_the_child);
    CU_add_test(suite, "sender_without_hook_is_left_alone_in_the_child",
                test_sender_without_hook_is_left_alone_in_the_child);
    CU_add_test(suite, "fork_while_another_thread_reports_leaves_no_lock_held",
                test_fork_while_another_thread_reports_leaves_no_lock_held);
    CU_add_test(suite, "fork_with_a_hundred_queued_spans_returns_in_the_child",
                test_fork_with_a_hundred_queued_spans_returns_in_the_child);
    CU_add_test(suite, "two_hundred_forks_with_a_full_queue_and_a_stuck_sender",
                test_two_hundred_forks_with_a_full_queue_and_a_stuck_sender);
    CU_add_test(suite, "child_can_log_after_fork", test_child_can_log_after_fork);
    CU_add_test(suite, "fork_while_another_thread_samples_leaves_no_sampler_lock_held",
                test_fork_while_another_thread_samples_leaves_no_sampler_lock_held);
}
