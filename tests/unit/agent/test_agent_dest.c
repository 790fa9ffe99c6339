/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/agent/test_agent_dest.c: suite "agent/dest": a destination of
 * `tracewire agent` (bridge/agent/dest.c) with its thread, queue, batcher,
 * spool and delivery callback, against the scriptable libmicrohttpd receiver
 * of the SDK's HTTP tests. Threaded (several pushing threads, the
 * destination thread, the receiver's threads): this suite runs under TSan.
 *
 * What arrives is decoded with Jansson (OTLP/JSON, gzip inflated with zlib)
 * and counted span by span. Covered: spans pushed by four threads at once
 * all arrive once and the counters add up; a destination that answers 503
 * gets every batch in the spool, and the spool is replayed
 * in order once it answers 200 (no batch is retried in memory first); a full
 * queue drops and counts; a stop with a stuck destination ends by its deadline and spools what is
 * left; follow-mode chunks are told when their spans are done, and the delivery callback runs;
 * an OTLP protobuf destination posts application/x-protobuf bodies that decode to every span;
 * a destination that is behind gets its spans encoded by the pushing thread (twa_dest_push_early)
 * and posts every span once, under its process's resource; early-encoded spans left at a stuck
 * stop are counted and freed.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "agent/agent.h"
#include "harness.h"
#include "test_http_receiver.h"
#include "wire/otlp/otlp_proto.h"

static http_receiver rx;
static twa_procs *procs;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int suite_init(void)
{
    unsetenv("http_proxy");
    unsetenv("HTTP_PROXY");
    procs = twa_procs_new(NULL, 0);
    return procs ? 0 : 1;
}

static int suite_clean(void)
{
    twa_procs_free(procs);
    tw__span_data_pool_trim();
    return 0;
}

/* A span whose span id is @id (trace 0x77), of process @proc. */
static twa_item item(uint64_t id, twa_proc *proc, twa_chunk *chunk)
{
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_FATAL(s != NULL);
    s->trace_id_low = 0x77;
    s->span_id = id;
    s->start_us = 1700000000000000 + (int64_t)id;
    s->duration_us = 5;
    s->flags = 1;
    tw__span_data_set_operation(s, "op", 2);
    return (twa_item){.data = s, .proc = twa_proc_ref(proc), .chunk = chunk};
}

static twa_proc *proc_named(const char *service)
{
    tw__process p;
    tw__process_init(&p);
    tw__process_set_service(&p, service);
    twa_proc *q = twa_procs_intern(procs, &p);
    tw__process_clear(&p);
    return q;
}

/* @q's body, inflated when it is gzip: malloc'd (*len bytes), NULL when none. */
static uint8_t *plain_body(const http_request *q, size_t *len)
{
    if (!q->body)
        return NULL;
    const char *enc = http_request_header(q, "Content-Encoding");
    if (!enc || strcmp(enc, "gzip") != 0) {
        uint8_t *copy = malloc(q->body->len + 1);
        memcpy(copy, q->body->data, q->body->len);
        *len = q->body->len;
        return copy;
    }
    uLongf cap = 64u << 20;
    uint8_t *plain = malloc(cap);
    z_stream z = {0};
    inflateInit2(&z, 31);
    z.next_in = q->body->data;
    z.avail_in = (uInt)q->body->len;
    z.next_out = plain;
    z.avail_out = (uInt)cap;
    inflate(&z, Z_FINISH);
    *len = z.total_out;
    inflateEnd(&z);
    return plain;
}

/* Appends the span ids of @q's OTLP/JSON body to @ids. */
static void ids_of(const http_request *q, GArray *ids)
{
    size_t len = 0;
    uint8_t *plain = plain_body(q, &len);
    if (!plain)
        return;
    json_t *doc = json_loadb((const char *)plain, len, 0, NULL);
    free(plain);
    json_t *rs, *ss, *sp;
    size_t a, b, c;
    json_array_foreach(json_object_get(doc, "resourceSpans"), a, rs)
    {
        json_array_foreach(json_object_get(rs, "scopeSpans"), b, ss)
        {
            json_array_foreach(json_object_get(ss, "spans"), c, sp)
            {
                uint64_t id = strtoull(json_string_value(json_object_get(sp, "spanId")), NULL, 16);
                g_array_append_val(ids, id);
            }
        }
    }
    json_decref(doc);
}

/* The span ids in the bodies recorded from the @from-th on, in arrival order. */
static GArray *ids_received(size_t from)
{
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    for (size_t i = from; i < http_receiver_count(&rx); i++) {
        const http_request *q = http_receiver_request(&rx, i);
        if (q->is_answered)
            ids_of(q, ids);
    }
    return ids;
}

/* A receiver that is down (503) until `is_up`; the ids it accepted, in order. */
static atomic_bool is_up;
static pthread_mutex_t accepted_lock = PTHREAD_MUTEX_INITIALIZER;
static GArray *accepted;

static unsigned int judge_up(const http_request *q, void *arg, const char **answer)
{
    (void)arg;
    (void)answer;
    if (!atomic_load(&is_up))
        return 503;
    pthread_mutex_lock(&accepted_lock);
    ids_of(q, accepted);
    pthread_mutex_unlock(&accepted_lock);
    return 200;
}

static twa_dest *new_dest(const char *spool, size_t queue_spans, unsigned int max_retries)
{
    char url[128], why[512] = "";
    snprintf(url, sizeof url, "%s/v1/traces", rx.base_url);
    twa_dest_options o;
    twa_dest_options_init(&o);
    o.url = url;
    o.flush_ms = 50;
    o.max_body_bytes = 4096;
    o.queue_max_spans = queue_spans;
    o.spool_dir = spool;
    o.spool_max_bytes = 64u << 20;
    o.max_retries = max_retries;
    o.initial_backoff_ms = 20;
    o.max_backoff_ms = 200;
    o.timeout_ms = 2000;
    twa_dest *d = twa_dest_new(&o, 0, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_FATAL(twa_dest_start(d, why, sizeof why));
    return d;
}

/* ---- concurrent pushes -------------------------------------------------------------------------
 */

typedef struct pusher {
    twa_dest *d;
    twa_proc *proc;
    uint64_t first;
    size_t n;
} pusher;

static void *push_thread(void *arg)
{
    pusher *p = arg;
    for (size_t i = 0; i < p->n; i++) {
        twa_item it = item(p->first + i, p->proc, NULL);
        twa_dest_push(p->d, &it, 1, true);
        twa_item_release(&it);
    }
    return NULL;
}

static void test_concurrent_pushes_arrive_once(void)
{
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, NULL));
    twa_dest *d = new_dest(NULL, 256, 3);
    pusher p[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof name, "svc-%d", i);
        p[i] = (pusher){d, proc_named(name), (uint64_t)(i + 1) * 100000, 500};
        pthread_create(&t[i], NULL, push_thread, &p[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    twa_dest_stop(d, 5000);
    twa_dest_join(d);
    twa_dest_stats *st = twa_dest_get_stats(d);
    CU_ASSERT_EQUAL(twa_get(&st->enqueued), 2000);
    CU_ASSERT_EQUAL(twa_get(&st->forwarded), 2000);
    GArray *ids = ids_received(0);
    CU_ASSERT_EQUAL(ids->len, 2000);
    GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    for (guint i = 0; i < ids->len; i++)
        g_hash_table_add(seen, &g_array_index(ids, uint64_t, i));
    CU_ASSERT_EQUAL(g_hash_table_size(seen), 2000);
    g_hash_table_destroy(seen);
    g_array_free(ids, TRUE);
    for (int i = 0; i < 4; i++)
        twa_proc_unref(p[i].proc);
    twa_dest_free(d);
    http_receiver_stop(&rx);
}

/* ---- spool
 * ----------------------------------------------------------------------------------------- */

static void test_failed_batches_spool_then_replay_in_order(void)
{
    char dir[] = "/tmp/tw-agent-spool.XXXXXX";
    CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, NULL));
    accepted = g_array_new(FALSE, FALSE, sizeof(uint64_t));
    atomic_store(&is_up, false);
    http_receiver_set_judge(&rx, judge_up, NULL);
    twa_dest *d = new_dest(dir, 4096, 3);
    twa_proc *proc = proc_named("spooled");
    twa_dest_stats *st = twa_dest_get_stats(d);
    for (uint64_t k = 0; k < 5; k++) {
        for (uint64_t i = 0; i < 20; i++) {
            twa_item it = item(k * 100 + i + 1, proc, NULL);
            twa_dest_push(d, &it, 1, false);
            twa_item_release(&it);
        }
        /* Waits for the batch to be spooled (the 1 s bound is checked end to end
         * by tests/bridge/test_agent_cmd.py: unit tests are not timed). */
        int64_t pushed = now_ms();
        while (twa_get(&st->spooled_spans) < (k + 1) * 20 && now_ms() - pushed < 30000)
            usleep(5000);
        CU_ASSERT_EQUAL(twa_get(&st->spooled_spans), (k + 1) * 20);
    }
    CU_ASSERT_EQUAL(twa_get(&st->spooled_spans), 100);
    CU_ASSERT(atomic_load(&st->spool_files) >= 1);
    atomic_store(&is_up, true); /* the destination is back */
    int64_t start = now_ms();
    while (twa_get(&st->forwarded) < 100 && now_ms() - start < 10000)
        usleep(10000);
    CU_ASSERT_EQUAL(twa_get(&st->forwarded), 100);
    CU_ASSERT_EQUAL(twa_get(&st->replayed_spans), 100);
    CU_ASSERT_EQUAL(atomic_load(&st->spool_bytes), 0);
    pthread_mutex_lock(&accepted_lock);
    CU_ASSERT_EQUAL(accepted->len, 100);
    for (guint i = 1; i < accepted->len; i++)
        CU_ASSERT(g_array_index(accepted, uint64_t, i - 1) < g_array_index(accepted, uint64_t, i));
    g_array_free(accepted, TRUE);
    accepted = NULL;
    pthread_mutex_unlock(&accepted_lock);
    twa_proc_unref(proc);
    twa_dest_stop(d, 1000);
    twa_dest_free(d);
    http_receiver_stop(&rx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_full_queue_drops_and_counts(void)
{
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, NULL));
    static const http_step hold = {.is_hold = true};
    http_receiver_script(&rx, &hold, 1);
    twa_dest *d = new_dest(NULL, 16, 0);
    twa_proc *proc = proc_named("full");
    size_t taken = 0;
    for (uint64_t i = 0; i < 200; i++) {
        twa_item it = item(i + 1, proc, NULL);
        taken += twa_dest_push(d, &it, 1, false);
        twa_item_release(&it);
        if (i == 20)
            http_receiver_wait_holding(&rx, 1, 5000); /* the first batch is stuck */
    }
    twa_dest_stats *st = twa_dest_get_stats(d);
    CU_ASSERT(taken < 200);
    CU_ASSERT_EQUAL(twa_get(&st->dropped[TWA_DROP_QUEUE_FULL]), 200 - taken);
    CU_ASSERT_EQUAL(twa_get(&st->enqueued), taken);
    http_receiver_release(&rx);
    twa_dest_stop(d, 5000);
    twa_dest_join(d);
    uint64_t dropped = 0;
    for (int r = TWA_DROP_TOO_LARGE; r < TWA_N_DROP; r++)
        dropped += twa_get(&st->dropped[r]);
    CU_ASSERT_EQUAL(twa_get(&st->forwarded) + dropped, taken);
    twa_proc_unref(proc);
    twa_dest_free(d);
    http_receiver_stop(&rx);
}

static void test_stop_with_a_stuck_destination_ends_by_its_deadline(void)
{
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, NULL));
    static const http_step hold = {.is_hold = true};
    http_receiver_script(&rx, &hold, 1);
    twa_dest *d = new_dest(NULL, 4096, 3);
    twa_proc *proc = proc_named("stuck");
    for (uint64_t i = 0; i < 50; i++) {
        twa_item it = item(i + 1, proc, NULL);
        twa_dest_push(d, &it, 1, false);
        twa_item_release(&it);
    }
    CU_ASSERT(http_receiver_wait_holding(&rx, 1, 5000));
    int64_t start = now_ms();
    twa_dest_stop(d, 300);
    twa_dest_join(d);
    /* the attempt in flight is cut at the deadline */
    CU_ASSERT(now_ms() - start < 3000);
    twa_dest_stats *st = twa_dest_get_stats(d);
    CU_ASSERT_EQUAL(twa_get(&st->forwarded) + twa_get(&st->dropped[TWA_DROP_SHUTDOWN]), 50);
    http_receiver_release(&rx);
    twa_proc_unref(proc);
    twa_dest_free(d);
    http_receiver_stop(&rx);
}

/* ---- follow-mode chunks ------------------------------------------------------------------------
 */

static atomic_int deliveries;

static void on_delivery(void *arg, twa_outcome outcome, size_t n)
{
    (void)arg;
    (void)n;
    if (outcome == TWA_ACKED)
        atomic_fetch_add(&deliveries, 1);
}

static void test_chunks_are_done_when_their_spans_are_acknowledged(void)
{
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, NULL));
    char url[128], why[256];
    snprintf(url, sizeof url, "%s/v1/traces", rx.base_url);
    twa_dest_options o;
    twa_dest_options_init(&o);
    o.url = url;
    o.flush_ms = 20;
    o.on_delivery = on_delivery;
    twa_dest *d = twa_dest_new(&o, 0, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_FATAL(twa_dest_start(d, why, sizeof why));
    twa_proc *proc = proc_named("follow");
    twa_chunk chunks[10];
    memset(chunks, 0, sizeof chunks);
    for (int i = 0; i < 10; i++) {
        atomic_init(&chunks[i].pending, 3); /* three spans per line */
        for (int k = 0; k < 3; k++) {
            twa_item it = item((uint64_t)(i * 10 + k + 1), proc, &chunks[i]);
            CU_ASSERT_EQUAL(twa_dest_push(d, &it, 1, true), 1);
            twa_item_release(&it);
        }
    }
    int64_t start = now_ms();
    bool all = false;
    while (!all && now_ms() - start < 5000) {
        all = true;
        for (int i = 0; i < 10; i++)
            all = all && atomic_load(&chunks[i].pending) == 0;
        if (!all)
            usleep(5000);
    }
    CU_ASSERT(all);
    CU_ASSERT(atomic_load(&deliveries) >= 1);
    twa_proc_unref(proc);
    twa_dest_stop(d, 1000);
    twa_dest_free(d);
    http_receiver_stop(&rx);
}

/* ---- OTLP protobuf ------------------------------------------------------------------------------
 */

typedef struct proto_seen {
    GArray *ids;
    size_t n_named; /* spans whose resource names the pushed service */
} proto_seen;

static bool proto_span(void *arg, tw__span_data *span, const tw__process *process,
                       const uint8_t *raw, size_t raw_len)
{
    (void)raw;
    (void)raw_len;
    proto_seen *seen = arg;
    g_array_append_val(seen->ids, span->span_id);
    if (process && process->service_name && strcmp(process->service_name, "proto-svc") == 0)
        seen->n_named++;
    tw__span_data_unref(span);
    return true;
}

/* A backend that answers 200 at once and then trickles its body (slower
 * than the attempt's timeout) took the batch: forwarded once, never sent
 * again. */
static void test_accepted_answer_with_a_slow_body_is_not_sent_again(void)
{
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, NULL));
    const http_step trickle = {.status = 200, .trickle_ms = 100};
    const http_step steps[] = {trickle, trickle, trickle, trickle};
    http_receiver_script(&rx, steps, 4);
    char url[128], why[512] = "";
    snprintf(url, sizeof url, "%s/v1/traces", rx.base_url);
    twa_dest_options o;
    twa_dest_options_init(&o);
    o.url = url;
    o.flush_ms = 20;
    o.max_retries = 3;
    o.initial_backoff_ms = 20;
    o.timeout_ms = 1500;
    twa_dest *d = twa_dest_new(&o, 0, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_FATAL(twa_dest_start(d, why, sizeof why));
    twa_proc *proc = proc_named("slow-body");
    for (uint64_t id = 1; id <= 5; id++) {
        twa_item it = item(id, proc, NULL);
        CU_ASSERT_EQUAL(twa_dest_push(d, &it, 1, true), 1);
        twa_item_release(&it);
    }
    CU_ASSERT(http_receiver_wait(&rx, 1, 5000));
    twa_dest_stop(d, 10000);
    twa_dest_join(d);
    CU_ASSERT_EQUAL(http_receiver_arrived(&rx), 1);
    CU_ASSERT_EQUAL(twa_get(&twa_dest_get_stats(d)->forwarded), 5);
    twa_proc_unref(proc);
    twa_dest_free(d);
    http_receiver_stop(&rx);
}

static void test_otlp_protobuf_destination_sends_the_sdk_body(void)
{
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, NULL));
    char url[128], why[512] = "";
    snprintf(url, sizeof url, "%s/v1/traces", rx.base_url);
    twa_dest_options o;
    twa_dest_options_init(&o);
    o.url = url;
    o.format = "otlp-http-protobuf";
    o.flush_ms = 20;
    o.max_body_bytes = 4096; /* several bodies */
    twa_dest *d = twa_dest_new(&o, 0, why, sizeof why);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_FATAL(twa_dest_start(d, why, sizeof why));
    twa_proc *proc = proc_named("proto-svc");
    for (uint64_t id = 1; id <= 200; id++) {
        twa_item it = item(id, proc, NULL);
        CU_ASSERT_EQUAL(twa_dest_push(d, &it, 1, true), 1);
        twa_item_release(&it);
    }
    twa_dest_stop(d, 5000);
    twa_dest_join(d);
    CU_ASSERT_EQUAL(twa_get(&twa_dest_get_stats(d)->forwarded), 200);
    proto_seen seen = {g_array_new(FALSE, FALSE, sizeof(uint64_t)), 0};
    const tw__otlp_proto_sink sink = {proto_span, NULL, NULL, &seen};
    size_t n_bodies = 0;
    for (size_t i = 0; i < http_receiver_count(&rx); i++) {
        const http_request *q = http_receiver_request(&rx, i);
        const char *type = http_request_header(q, "Content-Type");
        CU_ASSERT(type && strcmp(type, TW__OTLP_PROTO_CONTENT_TYPE) == 0);
        size_t len = 0;
        uint8_t *plain = plain_body(q, &len);
        CU_ASSERT_EQUAL(tw__otlp_proto_decode_request(plain, len, &sink), TW__OTLP_PROTO_OK);
        free(plain);
        n_bodies++;
    }
    CU_ASSERT(n_bodies > 1);
    CU_ASSERT_EQUAL(seen.ids->len, 200);
    CU_ASSERT_EQUAL(seen.n_named, 200);
    uint64_t sum = 0;
    for (guint i = 0; i < seen.ids->len; i++)
        sum += g_array_index(seen.ids, uint64_t, i);
    CU_ASSERT_EQUAL(sum, 200 * 201 / 2);
    g_array_free(seen.ids, TRUE);
    twa_proc_unref(proc);
    twa_dest_free(d);
    http_receiver_stop(&rx);
}

/* ---- early encoding ------------------------------------------------------------------------ */

/* The spans of the OTLP/JSON bodies received whose resource's service.name is @service. */
static size_t spans_of_service(const char *service)
{
    size_t n = 0;
    for (size_t i = 0; i < http_receiver_count(&rx); i++) {
        const http_request *q = http_receiver_request(&rx, i);
        size_t len = 0;
        uint8_t *plain = q->is_answered ? plain_body(q, &len) : NULL;
        if (!plain)
            continue;
        json_t *doc = json_loadb((const char *)plain, len, 0, NULL);
        free(plain);
        json_t *rs, *ss, *attr;
        size_t a, b, c;
        json_array_foreach(json_object_get(doc, "resourceSpans"), a, rs)
        {
            bool named = false;
            json_array_foreach(json_object_get(json_object_get(rs, "resource"), "attributes"), c,
                               attr)
            {
                const char *v = json_string_value(
                    json_object_get(json_object_get(attr, "value"), "stringValue"));
                named = named || (strcmp(json_string_value(json_object_get(attr, "key")),
                                         "service.name") == 0 &&
                                  v && strcmp(v, service) == 0);
            }
            json_array_foreach(json_object_get(rs, "scopeSpans"), b, ss)
            {
                if (named)
                    n += json_array_size(json_object_get(ss, "spans"));
            }
        }
        json_decref(doc);
    }
    return n;
}

/* Pushes spans [first, first + n) in calls of 100 through @early; returns how many were taken.
 * Every other call moves its references into the queue (the pipeline's last destination), so
 * that the leak checks see both ways, encoded early or not. */
static size_t push_early_run(twa_dest *d, twa_proc *proc, twa_early **early, uint64_t first,
                             size_t n)
{
    size_t taken = 0;
    twa_item batch[100];
    for (size_t at = 0; at < n; at += 100) {
        size_t k = n - at < 100 ? n - at : 100;
        bool is_move = (at / 100) % 2 == 1;
        for (size_t j = 0; j < k; j++)
            batch[j] = item(first + at + j, proc, NULL);
        size_t took = twa_dest_push_early(d, batch, k, false, early, is_move, 0);
        taken += took;
        for (size_t j = is_move ? took : 0; j < k; j++)
            twa_item_release(&batch[j]);
    }
    return taken;
}

static void test_a_destination_behind_gets_spans_encoded_by_the_pusher(void)
{
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, NULL));
    static const http_step hold = {.is_hold = true};
    http_receiver_script(&rx, &hold, 1);
    twa_dest *d = new_dest(NULL, 4096, 3);
    twa_dest_stats *st = twa_dest_get_stats(d);
    twa_proc *proc = proc_named("early-svc");
    twa_early *early = NULL;
    /* While the destination keeps up, its own thread encodes. */
    CU_ASSERT_EQUAL(push_early_run(d, proc, &early, 1, 20), 20);
    CU_ASSERT_FATAL(http_receiver_wait_holding(&rx, 1, 5000)); /* its first batch is stuck */
    CU_ASSERT_EQUAL(twa_get(&st->encoded_early), 0);
    /* Behind (more than 512 spans queued): the pusher encodes. */
    CU_ASSERT_EQUAL(push_early_run(d, proc, &early, 21, 2000), 2000);
    uint64_t early_n = twa_get(&st->encoded_early);
    CU_ASSERT(early_n > 0 && early_n <= 1500);
    http_receiver_release(&rx);
    twa_dest_stop(d, 5000);
    twa_dest_join(d);
    CU_ASSERT_EQUAL(twa_get(&st->enqueued), 2020);
    CU_ASSERT_EQUAL(twa_get(&st->forwarded), 2020);
    CU_ASSERT_EQUAL(atomic_load(&st->queue_bytes), 0);
    GArray *ids = ids_received(0);
    CU_ASSERT_EQUAL(ids->len, 2020);
    GHashTable *seen = g_hash_table_new(g_int64_hash, g_int64_equal);
    uint64_t sum = 0;
    for (guint i = 0; i < ids->len; i++) {
        g_hash_table_add(seen, &g_array_index(ids, uint64_t, i));
        sum += g_array_index(ids, uint64_t, i);
    }
    CU_ASSERT_EQUAL(g_hash_table_size(seen), 2020);
    CU_ASSERT_EQUAL(sum, 2020u * 2021u / 2);
    CU_ASSERT_EQUAL(spans_of_service("early-svc"), 2020);
    g_hash_table_destroy(seen);
    g_array_free(ids, TRUE);
    twa_dest_early_free(early);
    twa_proc_unref(proc);
    twa_dest_free(d);
    http_receiver_stop(&rx);
}

static void test_early_encoded_spans_left_at_a_stuck_stop_are_counted(void)
{
    CU_ASSERT_FATAL(http_receiver_start(&rx, 200, NULL));
    static const http_step hold = {.is_hold = true};
    http_receiver_script(&rx, &hold, 1);
    twa_dest *d = new_dest(NULL, 4096, 3);
    twa_proc *proc = proc_named("early-stuck");
    twa_early *early = NULL;
    CU_ASSERT_EQUAL(push_early_run(d, proc, &early, 1, 20), 20);
    CU_ASSERT_FATAL(http_receiver_wait_holding(&rx, 1, 5000));
    CU_ASSERT_EQUAL(push_early_run(d, proc, &early, 21, 1000), 1000);
    twa_dest_stats *st = twa_dest_get_stats(d);
    CU_ASSERT(twa_get(&st->encoded_early) > 0);
    twa_dest_stop(d, 300);
    twa_dest_join(d);
    CU_ASSERT_EQUAL(twa_get(&st->forwarded) + twa_get(&st->dropped[TWA_DROP_SHUTDOWN]), 1020);
    http_receiver_release(&rx);
    twa_dest_early_free(early);
    twa_proc_unref(proc);
    twa_dest_free(d); /* frees what is still queued, early items included (ASan, valgrind) */
    http_receiver_stop(&rx);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("agent/dest", suite_init, suite_clean);
    CU_add_test(s, "spans pushed by four threads arrive once, counters add up",
                test_concurrent_pushes_arrive_once);
    CU_add_test(s, "failed batches are spooled within 1 s and replayed in order",
                test_failed_batches_spool_then_replay_in_order);
    CU_add_test(s, "a full queue drops and counts", test_full_queue_drops_and_counts);
    CU_add_test(s, "a stop with a stuck destination ends by its deadline",
                test_stop_with_a_stuck_destination_ends_by_its_deadline);
    CU_add_test(s, "follow chunks are done when their spans are acknowledged",
                test_chunks_are_done_when_their_spans_are_acknowledged);
    CU_add_test(s, "a 2xx whose body trickles is accepted once, never sent again",
                test_accepted_answer_with_a_slow_body_is_not_sent_again);
    CU_add_test(s, "a destination behind gets spans encoded by the pusher, each once",
                test_a_destination_behind_gets_spans_encoded_by_the_pusher);
    CU_add_test(s, "early-encoded spans left at a stuck stop are counted and freed",
                test_early_encoded_spans_left_at_a_stuck_stop_are_counted);
    CU_add_test(s, "an OTLP protobuf destination sends the SDK's protobuf bodies",
                test_otlp_protobuf_destination_sends_the_sdk_body);
}
