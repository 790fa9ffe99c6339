/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_reporter.c: suite "report/reporter": the
 * asynchronous reporter over a scripted sender (queue bound, drops counted,
 * report() never waits for a stuck sender, flush, close drains), and the
 * memory, logging and composite reporters. Every span is accounted for:
 * reported = sent + queue_full + too_large + failed.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bounded.h"
#include "harness.h"
#include "report/report.h"

/* A sender that counts what it gets and can be held stuck (a slow agent). */
typedef struct {
    tw__sender base;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool is_stuck;   /* guarded by lock */
    size_t appended; /* guarded by lock */
    size_t flushes;  /* guarded by lock */
} scripted_sender;

static tw_status scripted_open(tw__sender *s, const tw__process *p, tw_error **err)
{
    (void)s;
    (void)p;
    (void)err;
    return TW_OK;
}

static void scripted_append(tw__sender *s, tw__span_data *span)
{
    scripted_sender *x = (scripted_sender *)s;
    pthread_mutex_lock(&x->lock);
    while (x->is_stuck)
        pthread_cond_wait(&x->cond, &x->lock);
    x->appended++;
    pthread_mutex_unlock(&x->lock);
    tw__count(&s->counters->sent, 1);
    tw__span_data_unref(span);
}

static void scripted_flush(tw__sender *s)
{
    scripted_sender *x = (scripted_sender *)s;
    pthread_mutex_lock(&x->lock);
    x->flushes++;
    pthread_mutex_unlock(&x->lock);
}

static void scripted_free(tw__sender *s)
{
    scripted_sender *x = (scripted_sender *)s;
    pthread_mutex_destroy(&x->lock);
    pthread_cond_destroy(&x->cond);
    free(x);
}

static const tw__sender_vtable scripted_vtable = {.size = sizeof(tw__sender_vtable),
                                                  .name = "scripted",
                                                  .open = scripted_open,
                                                  .append = scripted_append,
                                                  .flush = scripted_flush,
                                                  .free = scripted_free};

static scripted_sender *scripted_new(void)
{
    scripted_sender *x = calloc(1, sizeof(*x));
    x->base.vtable = &scripted_vtable;
    pthread_mutex_init(&x->lock, NULL);
    pthread_cond_init(&x->cond, NULL);
    return x;
}

static void set_stuck(scripted_sender *x, bool is_stuck)
{
    pthread_mutex_lock(&x->lock);
    x->is_stuck = is_stuck;
    pthread_cond_broadcast(&x->cond);
    pthread_mutex_unlock(&x->lock);
}

static tw__process empty_process;

static uint64_t counter(tw_reporter *r, tw_counter c)
{
    return tw_reporter_counter(r, c);
}

static void assert_accounted(tw_reporter *r)
{
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED),
                    counter(r, TW_COUNTER_SPANS_SENT) + counter(r, TW_COUNTER_DROPPED_QUEUE_FULL) +
                        counter(r, TW_COUNTER_DROPPED_TOO_LARGE) +
                        counter(r, TW_COUNTER_FAILED_TO_EMIT));
}

static void test_full_queue_drops_and_counts_without_blocking(void)
{
    scripted_sender *sender = scripted_new();
    tw__async_options ao = {.max_queue_size = 16, .flush_interval_ms = 60000};
    tw_reporter *r = tw__async_reporter_new("scripted", &sender->base, &ao, NULL);
    CU_ASSERT_EQUAL_FATAL(tw__reporter_start(r, &empty_process, NULL), TW_OK);
    set_stuck(sender, true);
    tw__span_data *span = tw__span_data_new();
    /* The reporter thread takes at most one batch and then sticks in the
     * sender; everything beyond the queue is dropped, and report() returns
     * every time (this test would hang otherwise). */
    for (int i = 0; i < 1000; i++)
        tw__reporter_report(r, span);
    CU_ASSERT(counter(r, TW_COUNTER_DROPPED_QUEUE_FULL) >= 1000 - 2 * 16);
    CU_ASSERT(counter(r, TW_COUNTER_QUEUE_LENGTH) <= 16);
    set_stuck(sender, false);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(5000)), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), 1000);
    assert_accounted(r);
    tw__span_data_unref(span);
    tw_reporter_free(r);
}

/* The byte bound: with a stuck sender and room for 100,000 spans, the
 * queue takes spans only while their heap fits in max_queue_bytes (counted
 * until the thread has handed them over); the rest are dropped, counted as
 * queue_full and, of those, as dropped at the byte bound. */
static void test_queue_bounded_in_bytes_drops_and_counts(void)
{
    scripted_sender *sender = scripted_new();
    tw__async_options ao = {
        .max_queue_size = 100000, .flush_interval_ms = 60000, .max_queue_bytes = 65536};
    tw_reporter *r = tw__async_reporter_new("scripted", &sender->base, &ao, NULL);
    CU_ASSERT_EQUAL_FATAL(tw__reporter_start(r, &empty_process, NULL), TW_OK);
    set_stuck(sender, true);
    tw__span_data *span = tw__span_data_new();
    size_t footprint = tw__span_data_footprint(span);
    CU_ASSERT(footprint >= sizeof(tw__span_data) + TW__SPAN_INLINE_ARENA);
    for (int i = 0; i < 1000; i++)
        tw__reporter_report(r, span);
    uint64_t full = counter(r, TW_COUNTER_DROPPED_QUEUE_FULL);
    CU_ASSERT(1000 - full <= 65536 / footprint);
    CU_ASSERT(1000 - full >= 1);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_DROPPED_QUEUE_BYTES), full);
    CU_ASSERT(counter(r, TW_COUNTER_QUEUE_BYTES) <= 65536);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_QUEUE_BYTES), (1000 - full) * footprint);
    set_stuck(sender, false);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(5000)), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_QUEUE_BYTES), 0);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 1000 - full);
    assert_accounted(r);
    /* Room again once handed over. */
    tw__reporter_report(r, span);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(5000)), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 1001 - full);
    tw__span_data_unref(span);
    tw_reporter_free(r);
}

/* A span larger than the whole byte bound still goes when the queue is
 * empty (it is never stuck out), and alone. */
static void test_span_larger_than_the_byte_bound_goes_alone(void)
{
    scripted_sender *sender = scripted_new();
    tw__async_options ao = {
        .max_queue_size = 64, .flush_interval_ms = 60000, .max_queue_bytes = 100};
    tw_reporter *r = tw__async_reporter_new("scripted", &sender->base, &ao, NULL);
    CU_ASSERT_EQUAL_FATAL(tw__reporter_start(r, &empty_process, NULL), TW_OK);
    set_stuck(sender, true);
    tw__span_data *span = tw__span_data_new();
    for (int i = 0; i < 10; i++)
        tw__reporter_report(r, span);
    /* The first is queued (or in the stuck sender, still counted): the
     * other nine find the queue not empty. */
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_DROPPED_QUEUE_BYTES), 9);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_DROPPED_QUEUE_FULL), 9);
    set_stuck(sender, false);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(5000)), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 1);
    tw__reporter_report(r, span);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(5000)), TW_OK);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 2);
    assert_accounted(r);
    tw__span_data_unref(span);
    tw_reporter_free(r);
}

static void test_flush_delivers_everything_queued(void)
{
    scripted_sender *sender = scripted_new();
    tw__async_options ao = {.max_queue_size = 4096, .flush_interval_ms = 60000};
    tw_reporter *r = tw__async_reporter_new("scripted", &sender->base, &ao, NULL);
    tw__reporter_start(r, &empty_process, NULL);
    tw__span_data *span = tw__span_data_new();
    for (int i = 0; i < 10; i++)
        tw__reporter_report(r, span);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(5000)), TW_OK);
    pthread_mutex_lock(&sender->lock);
    CU_ASSERT_EQUAL(sender->appended, 10);
    CU_ASSERT(sender->flushes >= 1);
    pthread_mutex_unlock(&sender->lock);
    tw__span_data_unref(span);
    tw_reporter_free(r);
}

static void test_flush_times_out_on_stuck_sender(void)
{
    scripted_sender *sender = scripted_new();
    tw__async_options ao = {.max_queue_size = 64, .flush_interval_ms = 60000};
    tw_reporter *r = tw__async_reporter_new("scripted", &sender->base, &ao, NULL);
    tw__reporter_start(r, &empty_process, NULL);
    set_stuck(sender, true);
    tw__span_data *span = tw__span_data_new();
    tw__reporter_report(r, span);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(50)), TW_E_TIMEOUT);
    set_stuck(sender, false);
    tw__span_data_unref(span);
    tw_reporter_free(r);
}

static void test_close_drains_the_queue(void)
{
    scripted_sender *sender = scripted_new();
    tw__async_options ao = {.max_queue_size = 4096, .flush_interval_ms = 60000};
    tw_reporter *r = tw__async_reporter_new("scripted", &sender->base, &ao, NULL);
    tw__reporter_start(r, &empty_process, NULL);
    tw__span_data *span = tw__span_data_new();
    for (int i = 0; i < 500; i++)
        tw__reporter_report(r, span);
    tw__reporter_close(r);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), 500);
    /* After close, a late span cannot be sent: counted as failed. */
    tw__reporter_report(r, span);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 1);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(10)), TW_E_CLOSED);
    assert_accounted(r);
    tw__reporter_close(r); /* idempotent */
    tw__span_data_unref(span);
    tw_reporter_free(r);
}

/* Several threads report at once into a small queue, the lock-free path:
 * every span is sent once or counted as dropped (none twice, none lost),
 * and each thread's spans reach the sender in the order it reported them. */
#define PRODUCERS 4
#define PER_PRODUCER 20000

typedef struct {
    tw__sender base;
    uint64_t next[PRODUCERS]; /* reporter thread only: the next index seen, per producer */
    size_t appended;
    size_t out_of_order;
} ordered_sender;

static void ordered_append(tw__sender *s, tw__span_data *span)
{
    ordered_sender *o = (ordered_sender *)s;
    uint64_t producer = span->span_id >> 32, index = span->span_id & 0xffffffffu;
    if (producer >= PRODUCERS || index < o->next[producer])
        o->out_of_order++; /* a duplicate, a reordering, or a foreign span */
    else
        o->next[producer] = index + 1;
    o->appended++;
    tw__count(&s->counters->sent, 1);
    tw__span_data_unref(span);
}

static void ordered_flush(tw__sender *s)
{
    (void)s;
}

static void ordered_free(tw__sender *s)
{
    free(s);
}

static const tw__sender_vtable ordered_vtable = {.size = sizeof(tw__sender_vtable),
                                                 .name = "ordered",
                                                 .open = scripted_open,
                                                 .append = ordered_append,
                                                 .flush = ordered_flush,
                                                 .free = ordered_free};

typedef struct {
    tw_reporter *r;
    uint64_t producer;
} producer_arg;

static void *produce(void *arg)
{
    producer_arg *p = arg;
    for (uint64_t i = 0; i < PER_PRODUCER; i++) {
        tw__span_data *span = tw__span_data_new();
        if (!span)
            continue;
        span->span_id = p->producer << 32 | i;
        tw__reporter_report(p->r, span);
        tw__span_data_unref(span);
    }
    return NULL;
}

static void test_concurrent_reports_are_each_sent_once_or_counted(void)
{
    ordered_sender *sender = calloc(1, sizeof(*sender));
    CU_ASSERT_PTR_NOT_NULL_FATAL(sender);
    sender->base.vtable = &ordered_vtable;
    tw__async_options ao = {.max_queue_size = 7, .flush_interval_ms = 60000};
    tw_reporter *r = tw__async_reporter_new("ordered", &sender->base, &ao, NULL);
    CU_ASSERT_EQUAL_FATAL(tw__reporter_start(r, &empty_process, NULL), TW_OK);
    pthread_t threads[PRODUCERS];
    producer_arg args[PRODUCERS];
    for (uint64_t i = 0; i < PRODUCERS; i++) {
        args[i] = (producer_arg){r, i};
        CU_ASSERT_EQUAL_FATAL(pthread_create(&threads[i], NULL, produce, &args[i]), 0);
    }
    for (size_t i = 0; i < PRODUCERS; i++)
        pthread_join(threads[i], NULL);
    CU_ASSERT_EQUAL(tw__reporter_flush(r, tw__flush_deadline(10000)), TW_OK);
    tw__reporter_close(r); /* the reporter thread has stopped: its fields are ours */
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), PRODUCERS * PER_PRODUCER);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_SENT), sender->appended);
    CU_ASSERT_EQUAL(sender->out_of_order, 0);
    CU_ASSERT(sender->appended > 0);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_QUEUE_LENGTH), 0);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_QUEUE_BYTES), 0);
    assert_accounted(r);
    tw_reporter_free(r);
}

static void test_memory_reporter_is_bounded(void)
{
    tw_reporter *m = tw_reporter_memory_new(3);
    tw__span_data *span = tw__span_data_new();
    for (int i = 0; i < 5; i++)
        tw__reporter_report(m, span);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(m), 3);
    CU_ASSERT_EQUAL(counter(m, TW_COUNTER_DROPPED_QUEUE_FULL), 2);
    assert_accounted(m);
    CU_ASSERT_PTR_NULL(tw_memory_reporter_span(m, 3));
    tw_memory_reporter_clear(m);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(m), 0);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(NULL), 0);
    tw__span_data_unref(span);
    tw_reporter_free(m);
}

static char last_line[4096];
static void capture_line(tw_log_level level, const char *message, void *user_data)
{
    (void)level;
    (*(int *)user_data)++;
    snprintf(last_line, sizeof last_line, "%s", message);
}

static void test_logging_reporter_writes_one_line_per_span(void)
{
    int lines = 0;
    tw_reporter *l = tw_reporter_logging_new(capture_line, &lines);
    tw__span_data *span = tw__span_data_new();
    span->trace_id_low = 0xabc;
    span->span_id = 0x1;
    span->duration_us = 42;
    tw__span_data_set_operation(span, "GET /users", 10);
    tw__tag *t = tw__span_data_push_tag(span);
    tw_value v = {.type = TW_VALUE_INT64, .as.i64 = 200};
    bool cut;
    tw__tag_set(&span->arena, t, "http.status_code", &v, SIZE_MAX, &cut);
    span->n_tags++;
    tw__reporter_report(l, span);
    CU_ASSERT_EQUAL(lines, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(last_line, "span 0000000000000abc:0000000000000001"));
    CU_ASSERT_PTR_NOT_NULL(strstr(last_line, "op=\"GET /users\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(last_line, "duration_us=42"));
    CU_ASSERT_PTR_NOT_NULL(strstr(last_line, "http.status_code=200"));
    tw__span_data_unref(span);
    tw_reporter_free(l);
}

static void test_composite_fans_out_and_sums_counters(void)
{
    tw_reporter *a = tw_reporter_memory_new(0);
    tw_reporter *b = tw_reporter_memory_new(1);
    tw_reporter *children[2] = {a, b};
    tw_reporter *c = tw_reporter_composite_new(children, 2);
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(c), "composite");
    CU_ASSERT_EQUAL(tw_reporter_composite_count(c), 2);
    CU_ASSERT_PTR_EQUAL(tw_reporter_composite_get(c, 1), b);
    CU_ASSERT_PTR_NULL(tw_reporter_composite_get(c, 2));
    CU_ASSERT_EQUAL(tw_reporter_composite_count(a), 0);
    tw__reporter_start(c, &empty_process, NULL);
    tw__span_data *span = tw__span_data_new();
    tw__reporter_report(c, span);
    tw__reporter_report(c, span);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(a), 2);
    CU_ASSERT_EQUAL(tw_memory_reporter_count(b), 1);
    CU_ASSERT_EQUAL(counter(c, TW_COUNTER_SPANS_REPORTED), 4);
    CU_ASSERT_EQUAL(counter(c, TW_COUNTER_DROPPED_QUEUE_FULL), 1);
    assert_accounted(c);
    tw__span_data_unref(span);
    tw_reporter_free(c);
    tw_reporter *with_null[2] = {tw_reporter_memory_new(0), NULL};
    CU_ASSERT_PTR_NULL(tw_reporter_composite_new(with_null, 2)); /* frees the first */
}

static void test_reporter_options_validate(void)
{
    tw_reporter_options *o = tw_reporter_options_new();
    CU_ASSERT_EQUAL(tw_reporter_options_set_agent(o, "", 6831), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_agent(o, "h", 0), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_agent(o, "h", 70000), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_packet_size(o, 100), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_packet_size(o, 65508), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_queue_size(o, 0), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_flush_interval_ms(o, 0), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(o->close_timeout_ms, 5000); /* the documented default */
    CU_ASSERT_EQUAL(tw_reporter_options_set_close_timeout_ms(o, 0), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_close_timeout_ms(o, 3600001), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_close_timeout_ms(NULL, 10), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_close_timeout_ms(o, 3600000), TW_OK);
    CU_ASSERT_EQUAL(tw_reporter_options_set_agent(o, "::1", 6831), TW_OK);
    CU_ASSERT_EQUAL(o->max_queue_bytes, (size_t)8 << 20); /* the documented default */
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_queue_bytes(o, 65535), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_queue_bytes(o, ((size_t)1 << 40) + 1),
                    TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_queue_bytes(NULL, 65536), TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_max_queue_bytes(o, 65536), TW_OK);
    CU_ASSERT_EQUAL(tw__async_options_from(o).max_queue_bytes, 65536);
    tw_reporter_options_free(o);
    tw_reporter_options_free(NULL);
}

static int suite_init(void)
{
    tw__process_init(&empty_process);
    return tw__process_set_service(&empty_process, "scripted") ? 0 : 1;
}

static int suite_cleanup(void)
{
    tw__process_clear(&empty_process);
    return 0;
}

/* A composite's flush is bounded by the caller's timeout as a whole, not
 * per child: four stuck children, one 400 ms budget. */
static void test_composite_flush_respects_the_callers_timeout(void)
{
    enum { N = 4 };
    scripted_sender *senders[N];
    tw_reporter *children[N];
    tw__async_options ao = {.max_queue_size = 64, .flush_interval_ms = 60000};
    for (int i = 0; i < N; i++) {
        senders[i] = scripted_new();
        set_stuck(senders[i], true);
        children[i] = tw__async_reporter_new("scripted", &senders[i]->base, &ao, NULL);
        CU_ASSERT_PTR_NOT_NULL_FATAL(children[i]);
    }
    tw_reporter *c = tw_reporter_composite_new(children, N);
    CU_ASSERT_EQUAL_FATAL(tw__reporter_start(c, &empty_process, NULL), TW_OK);
    tw__span_data *span = tw__span_data_new();
    tw__reporter_report(c, span);
    int64_t start = bounded_now_ms();
    CU_ASSERT_EQUAL(tw__reporter_flush(c, tw__flush_deadline(400)), TW_E_TIMEOUT);
    int64_t elapsed_ms = bounded_now_ms() - start;
    /* One budget for all: 400 ms and scheduling, far from 4 x 400 ms. */
    CU_ASSERT(elapsed_ms < 1200);
    fprintf(stderr, "(composite flush took %lld ms for a 400 ms timeout) ", (long long)elapsed_ms);
    for (int i = 0; i < N; i++)
        set_stuck(senders[i], false);
    CU_ASSERT_EQUAL(tw__reporter_flush(c, tw__flush_deadline(5000)), TW_OK);
    CU_ASSERT_EQUAL(counter(c, TW_COUNTER_SPANS_SENT), N);
    assert_accounted(c);
    tw__span_data_unref(span);
    tw_reporter_free(c);
}

/* A sender that waits for its transport as a sender should: until it is
 * released or its give-up time comes, woken by interrupt. */
typedef struct {
    tw__sender base;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* on CLOCK_MONOTONIC */
    bool is_released;    /* guarded by lock */
    size_t interrupts;   /* guarded by lock */
    size_t entered;      /* guarded by lock: appends begun */
} patient_sender;

static void patient_append(tw__sender *s, tw__span_data *span)
{
    patient_sender *x = (patient_sender *)s;
    pthread_mutex_lock(&x->lock);
    x->entered++;
    pthread_cond_broadcast(&x->cond);
    while (!x->is_released) {
        unsigned int left_ms = tw__sender_ms_left(s, 60000);
        if (left_ms == 0)
            break;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += left_ms / 1000;
        until.tv_nsec += (long)(left_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&x->cond, &x->lock, &until);
    }
    bool is_sent = x->is_released;
    pthread_mutex_unlock(&x->lock);
    tw__count(is_sent ? &s->counters->sent : &s->counters->failed, 1);
    tw__span_data_unref(span);
}

static void patient_flush(tw__sender *s)
{
    (void)s;
}

static void patient_interrupt(tw__sender *s)
{
    patient_sender *x = (patient_sender *)s;
    pthread_mutex_lock(&x->lock);
    x->interrupts++;
    pthread_cond_broadcast(&x->cond);
    pthread_mutex_unlock(&x->lock);
}

static void patient_free(tw__sender *s)
{
    patient_sender *x = (patient_sender *)s;
    pthread_mutex_destroy(&x->lock);
    pthread_cond_destroy(&x->cond);
    free(x);
}

static const tw__sender_vtable patient_vtable = {.size = sizeof(tw__sender_vtable),
                                                 .name = "patient",
                                                 .open = scripted_open,
                                                 .append = patient_append,
                                                 .flush = patient_flush,
                                                 .free = patient_free,
                                                 .interrupt = patient_interrupt};

/* Close with a transport that never answers: it ends at the close
 * deadline, the sender is interrupted (not left to find out later), and
 * every span queued or in flight is counted as failed. */
static void test_close_ends_at_its_deadline_and_counts_what_was_not_sent(void)
{
    patient_sender *x = calloc(1, sizeof(*x));
    x->base.vtable = &patient_vtable;
    pthread_mutex_init(&x->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&x->cond, &attr);
    pthread_condattr_destroy(&attr);
    tw__async_options ao = {
        .max_queue_size = 256, .flush_interval_ms = 60000, .close_timeout_ms = 300};
    tw_reporter *r = tw__async_reporter_new("patient", &x->base, &ao, NULL);
    CU_ASSERT_EQUAL_FATAL(tw__reporter_start(r, &empty_process, NULL), TW_OK);
    tw__span_data *span = tw__span_data_new();
    for (int i = 0; i < 100; i++)
        tw__reporter_report(r, span);
    /* The thread (woken at 64 queued) waits in the sender: close must
     * interrupt that wait, not let it run its 60 s. */
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&x->lock);
    while (x->entered == 0 && pthread_cond_timedwait(&x->cond, &x->lock, &until) == 0)
        ;
    CU_ASSERT(x->entered == 1);
    pthread_mutex_unlock(&x->lock);
    int64_t start = bounded_now_ms();
    tw__reporter_close(r);
    int64_t elapsed_ms = bounded_now_ms() - start;
    CU_ASSERT(elapsed_ms >= 290);
    CU_ASSERT(elapsed_ms < 3000);
    pthread_mutex_lock(&x->lock);
    CU_ASSERT(x->interrupts >= 1); /* woken at close, not left to its 60 s wait */
    pthread_mutex_unlock(&x->lock);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_SPANS_REPORTED), 100);
    CU_ASSERT_EQUAL(counter(r, TW_COUNTER_FAILED_TO_EMIT), 100);
    assert_accounted(r);
    tw__span_data_unref(span);
    tw_reporter_free(r);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("report/reporter", suite_init, suite_cleanup);
    CU_add_test(suite, "concurrent_reports_are_each_sent_once_or_counted",
                test_concurrent_reports_are_each_sent_once_or_counted);
    CU_add_test(suite, "full_queue_drops_and_counts_without_blocking",
                test_full_queue_drops_and_counts_without_blocking);
    CU_add_test(suite, "queue_bounded_in_bytes_drops_and_counts",
                test_queue_bounded_in_bytes_drops_and_counts);
    CU_add_test(suite, "span_larger_than_the_byte_bound_goes_alone",
                test_span_larger_than_the_byte_bound_goes_alone);
    CU_add_test(suite, "flush_delivers_everything_queued", test_flush_delivers_everything_queued);
    CU_add_test(suite, "flush_times_out_on_stuck_sender", test_flush_times_out_on_stuck_sender);
    CU_add_test(suite, "close_drains_the_queue", test_close_drains_the_queue);
    CU_add_test(suite, "memory_reporter_is_bounded", test_memory_reporter_is_bounded);
    CU_add_test(suite, "logging_reporter_writes_one_line_per_span",
                test_logging_reporter_writes_one_line_per_span);
    CU_add_test(suite, "composite_fans_out_and_sums_counters",
                test_composite_fans_out_and_sums_counters);
    CU_add_test(suite, "reporter_options_validate", test_reporter_options_validate);
    CU_add_test(suite, "composite_flush_respects_the_callers_timeout",
                test_composite_flush_respects_the_callers_timeout);
    CU_add_test(suite, "close_ends_at_its_deadline_and_counts_what_was_not_sent",
                test_close_ends_at_its_deadline_and_counts_what_was_not_sent);
}
