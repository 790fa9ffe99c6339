/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_fork.c: suite "report/fork": the queued reporters
 * after fork() (report/fork.c, async.c). A parent and its child both report
 * to one UDP sink, or one span log file, and every span arrives exactly
 * once, with ids that differ between the two processes. The child starts
 * empty: spans queued in the parent at the fork, or batched in its sender,
 * are the parent's alone (a sender with a fork hook forgets its batch in the
 * child; one without is flushed before the fork), the child's counters start
 * at 0, and its reporter thread starts on first use. Forking while another
 * thread reports never leaves a lock held in the child.
 *
 * Children report through their exit status (never CUnit, whose state is the
 * parent's) and _exit; an alarm turns a deadlocked child into a failure
 * instead of a hung test. Not a TSan program: ThreadSanitizer cannot start
 * threads in the child of a multi-threaded process ("starting new threads
 * after multi-threaded fork is not supported"); ASan and valgrind run it.
 * Under valgrind pass --child-silent-after-fork=yes and no --error-exitcode
 * for the children's sake: a child cannot free what the parent's other
 * threads kept in thread-local caches (the record pool, GLib's slice
 * magazines), which valgrind reports as lost at the child's exit. The
 * parent's leak check is exact.
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

#include "harness.h"
#include "internal.h"
#include "jaeger_decode.h"
#include "report/report.h"
#include "tracewire/tracewire.h"
#include "udp_sink.h"
#include "wire/dapper/dapper_log.h"

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

/* The child's exit status, or 100 + the signal that killed it. */
static int wait_child(pid_t pid)
{
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return 200;
    if (WIFSIGNALED(status))
        return 100 + WTERMSIG(status);
    return WEXITSTATUS(status);
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

/* The child's part of the tracer-level tests: five spans, sent and counted. */
static int child_reports_five(void *arg)
{
    tw_tracer *t = arg;
    tw_reporter *r = tw_tracer_reporter(t);
    if (counter(r, TW_COUNTER_SPANS_REPORTED) != 0 || counter(r, TW_COUNTER_QUEUE_LENGTH) != 0)
        return 1; /* the child starts empty */
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
    while (got.n < 20 && udp_sink_collect(&sink, sink.n + 1, 2000) > decoded) {
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
    CU_ASSERT_EQUAL(got.n, 20);
    CU_ASSERT_EQUAL(count_kind(&got, 'b'), 10);
    CU_ASSERT_EQUAL(count_kind(&got, 'a'), 5);
    CU_ASSERT_EQUAL(count_kind(&got, 'c'), 5);
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
    CU_ASSERT_EQUAL(got.n, 20);
    CU_ASSERT_EQUAL(count_kind(&got, 'b'), 10);
    CU_ASSERT_EQUAL(count_kind(&got, 'a'), 5);
    CU_ASSERT_EQUAL(count_kind(&got, 'c'), 5);
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

static const tw__sender_vtable counting_with_hook = {.size = sizeof(tw__sender_vtable),
                                                     .name = "counting",
                                                     .open = counting_open,
                                                     .append = counting_append,
                                                     .flush = counting_flush,
                                                     .free = counting_free,
                                                     .after_fork_child = counting_after_fork_child};

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
    for (int i = 0; i < 3; i++)
        tw__reporter_report(c->reporter, c->record);
    if (thread_count() != 2)
        return 3; /* started by the first report */
    if (c->reporter->vtable->flush(c->reporter, 5000) != TW_OK)
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
    CU_ASSERT_EQUAL(r->vtable->flush(r, 5000), TW_OK);
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
    if (c->sender->in_batch != 0)
        return 1;
    bool has_hook = c->sender->base.vtable == &counting_with_hook;
    if (c->sender->hook_calls != (has_hook ? 1u : 0u))
        return 2;
    tw__reporter_report(c->reporter, c->record);
    tw__reporter_report(c->reporter, c->record);
    if (c->reporter->vtable->flush(c->reporter, 5000) != TW_OK)
        return 3;
    if (c->sender->flushed != c->at_fork_flushed + 2 ||
        counter(c->reporter, TW_COUNTER_SPANS_SENT) != 2)
        return 4;
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
    bool has_hook = vt == &counting_with_hook;
    child_ctx c = {r, x, record, 0, 0};
    c.at_fork_flushed = has_hook ? 0 : 3; /* without a hook, prepare flushed them */
    pid_t pid = fork_child(child_batch_is_gone, &c);
    CU_ASSERT_FATAL(pid > 0);
    CU_ASSERT_EQUAL(read_locked(x, &x->flushed), has_hook ? 0u : 3u);
    CU_ASSERT_EQUAL(wait_child(pid), 0);
    CU_ASSERT_EQUAL(r->vtable->flush(r, 5000), TW_OK);
    CU_ASSERT_EQUAL(read_locked(x, &x->flushed), 3);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 3);
    tw_reporter_free(r);
    tw__span_data_unref(record);
}

static void test_sender_hook_forgets_the_batch_in_the_child(void)
{
    check_batched_spans_are_sent_once(&counting_with_hook);
}

static void test_sender_without_hook_is_flushed_before_the_fork(void)
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
    tw__reporter_report(h->reporter, h->record);
    if (h->reporter->vtable->flush(h->reporter, 5000) != TW_OK)
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
    CU_ASSERT_EQUAL(r->vtable->flush(r, 5000), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED),
                    counter(r, TW_COUNTER_SPANS_SENT) + counter(r, TW_COUNTER_DROPPED_QUEUE_FULL));
    CU_ASSERT_EQUAL(read_locked(x, &x->flushed), counter(r, TW_COUNTER_SPANS_SENT));
    tw_reporter_free(r);
    tw__span_data_unref(h.record);
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
    CU_add_test(suite, "sender_without_hook_is_flushed_before_the_fork",
                test_sender_without_hook_is_flushed_before_the_fork);
    CU_add_test(suite, "fork_while_another_thread_reports_leaves_no_lock_held",
                test_fork_while_another_thread_reports_leaves_no_lock_held);
}
