/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/tail.c: the trace-level tail sampler of the pipeline
 * (--tail-sample, docs/agent.md "Processing"). Spans are held per trace until
 * the trace has been quiet for --tail-quiet-ms; then the trace is kept whole
 * when one of its spans has an error tag (bool true, or a string other than
 * "false", "0" or "") or lasted --tail-slow-ms or more, or else when the
 * stable hash of its id falls under --tail-keep-share (the same splitmix64
 * hash of the low 64 bits as `convert --sample`, so every agent decides the
 * same trace the same way); otherwise its spans are dropped (sampled_out).
 *
 * Memory is bounded: at most --tail-max-traces traces and MAX_SPANS_PER_TRACE
 * spans per trace are held; past either, the oldest trace (or that trace) is
 * decided at once (counted as an early decision). The decisions of the last
 * --tail-max-traces traces are remembered, so a span arriving after its trace
 * was decided follows the decision.
 *
 * Threads: receivers add under the sampler's mutex; a thread of its own
 * decides every 50 ms and pushes kept spans to the destinations outside the
 * mutex. Follow-mode spans carry one pending delivery per destination already
 * (pipeline.c); a dropped one releases them.
 */
#include "agent/tail.h"

#include <glib.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_SPANS_PER_TRACE 10000
#define TICK_MS 50

typedef struct trace {
    uint64_t low;
    twa_item *items;
    size_t n, cap;
    bool interesting; /* an error or a slow span */
    int64_t first_ms, last_ms;
    struct trace *older, *newer; /* arrival order (oldest first) */
} trace;

struct twa_tail {
    twa_tail_options o;
    twa_dest *const *dests;
    size_t n_dests;
    pthread_mutex_t lock;
    GHashTable *traces; /* low 64 bits -> trace */
    trace *oldest, *newest;
    size_t n_spans;
    GHashTable *decided; /* low 64 bits -> 1 kept / 2 dropped */
    GQueue *decided_order;
    pthread_t thread;
    bool has_thread;
    atomic_bool stop;
    twa_tail_stats st;
};

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The `convert --sample` hash: the first splitmix64 output seeded with the
 * low 64 bits, as a fraction in [0, 1). */
static double trace_fraction(uint64_t low)
{
    uint64_t z = low + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static bool is_error(const tw__span_data *s)
{
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        if (strcmp(t->key, "error") != 0)
            continue;
        if (t->type == TW_VALUE_BOOL)
            return t->v.boolean;
        if (t->type == TW_VALUE_STRING)
            return t->len && strcmp(t->v.str, "false") != 0 && strcmp(t->v.str, "0") != 0;
        return true;
    }
    return false;
}

twa_tail *twa_tail_new(const twa_tail_options *o, twa_dest *const *dests, size_t n_dests)
{
    twa_tail *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->o = *o;
    if (!t->o.max_traces)
        t->o.max_traces = 10000;
    t->dests = dests;
    t->n_dests = n_dests;
    pthread_mutex_init(&t->lock, NULL);
    atomic_init(&t->stop, false);
    t->traces = g_hash_table_new(g_int64_hash, g_int64_equal);
    t->decided = g_hash_table_new(g_int64_hash, g_int64_equal);
    t->decided_order = g_queue_new();
    return t;
}

twa_tail_stats *twa_tail_get_stats(twa_tail *t)
{
    return &t->st;
}

/* Remembers a decision (lock held); the oldest is forgotten past the cap. */
static void remember(twa_tail *t, uint64_t low, bool keep)
{
    gpointer key = NULL, value = NULL;
    if (g_hash_table_lookup_extended(t->decided, &low, &key, &value)) {
        g_hash_table_insert(t->decided, key, GINT_TO_POINTER(keep ? 1 : 2));
        return;
    }
    uint64_t *k = g_new(uint64_t, 1);
    *k = low;
    g_hash_table_insert(t->decided, k, GINT_TO_POINTER(keep ? 1 : 2));
    g_queue_push_tail(t->decided_order, k);
    while (g_queue_get_length(t->decided_order) > t->o.max_traces) {
        uint64_t *old = g_queue_pop_head(t->decided_order);
        g_hash_table_remove(t->decided, old);
        g_free(old);
    }
}

static void unlink_trace(twa_tail *t, trace *tr)
{
    if (tr->older)
        tr->older->newer = tr->newer;
    else
        t->oldest = tr->newer;
    if (tr->newer)
        tr->newer->older = tr->older;
    else
        t->newest = tr->older;
    g_hash_table_remove(t->traces, &tr->low);
    t->n_spans -= tr->n;
    twa_gauge_add(&t->st.traces_held, -1);
    twa_gauge_add(&t->st.spans_held, -(int64_t)tr->n);
}

/* Drops or pushes @items (outside the lock). */
static void deliver(twa_tail *t, twa_item *items, size_t n, bool keep)
{
    if (!keep) {
        for (size_t i = 0; i < n; i++) {
            twa_chunk_done(items[i].chunk, (long)t->n_dests);
            twa_item_release(&items[i]);
        }
        twa_add(&t->st.sampled_out, n);
        return;
    }
    twa_add(&t->st.kept, n);
    bool can_wait = n && items[0].chunk;
    for (size_t d = 0; d < t->n_dests; d++) {
        size_t took = twa_dest_push(t->dests[d], items, n, can_wait);
        for (size_t i = took; i < n && !can_wait; i++)
            twa_chunk_done(items[i].chunk, 1);
    }
    for (size_t i = 0; i < n; i++)
        twa_item_release(&items[i]);
}

typedef struct decided_trace {
    twa_item *items;
    size_t n;
    bool keep;
} decided_trace;

/* Decides @tr (lock held): unlinks it and hands it to @out. */
static void decide(twa_tail *t, trace *tr, GArray *out)
{
    bool keep = tr->interesting || trace_fraction(tr->low) < t->o.keep_share;
    unlink_trace(t, tr);
    remember(t, tr->low, keep);
    decided_trace d = {tr->items, tr->n, keep};
    g_array_append_val(out, d);
    g_free(tr);
}

static void flush_decided(twa_tail *t, GArray *out)
{
    for (guint i = 0; i < out->len; i++) {
        decided_trace *d = &g_array_index(out, decided_trace, i);
        deliver(t, d->items, d->n, d->keep);
        free(d->items);
    }
    g_array_set_size(out, 0);
}

void twa_tail_add(twa_tail *t, twa_item *items, size_t n)
{
    GArray *now = g_array_new(FALSE, FALSE, sizeof(decided_trace));
    GArray *late = g_array_new(FALSE, FALSE, sizeof(twa_item));
    int64_t ms = now_ms();
    pthread_mutex_lock(&t->lock);
    for (size_t i = 0; i < n; i++) {
        tw__span_data *s = items[i].data;
        uint64_t low = s->trace_id_low;
        gpointer past = g_hash_table_lookup(t->decided, &low);
        if (past) { /* the trace was decided already */
            decided_trace d = {NULL, 1, GPOINTER_TO_INT(past) == 1};
            d.items = malloc(sizeof *d.items);
            if (d.items) {
                d.items[0] = items[i];
                g_array_append_val(now, d);
            } else {
                g_array_append_val(late, items[i]);
            }
            continue;
        }
        trace *tr = g_hash_table_lookup(t->traces, &low);
        if (!tr) {
            if (g_hash_table_size(t->traces) >= t->o.max_traces && t->oldest) {
                twa_add(&t->st.early_decisions, 1);
                decide(t, t->oldest, now);
            }
            tr = g_new0(trace, 1);
            tr->low = low;
            tr->first_ms = ms;
            tr->older = t->newest;
            if (t->newest)
                t->newest->newer = tr;
            else
                t->oldest = tr;
            t->newest = tr;
            g_hash_table_insert(t->traces, &tr->low, tr);
            twa_gauge_add(&t->st.traces_held, 1);
        }
        if (tr->n == tr->cap) {
            size_t cap = tr->cap ? tr->cap * 2 : 8;
            twa_item *grown = realloc(tr->items, cap * sizeof *grown);
            if (!grown) {
                g_array_append_val(late, items[i]); /* kept: never lost for memory */
                continue;
            }
            tr->items = grown;
            tr->cap = cap;
        }
        tr->items[tr->n++] = items[i];
        t->n_spans++;
        twa_gauge_add(&t->st.spans_held, 1);
        tr->last_ms = ms;
        if (!tr->interesting)
            tr->interesting = is_error(s) || (t->o.slow_us > 0 && s->duration_us >= t->o.slow_us);
        if (tr->n >= MAX_SPANS_PER_TRACE) {
            twa_add(&t->st.early_decisions, 1);
            decide(t, tr, now);
        }
    }
    pthread_mutex_unlock(&t->lock);
    flush_decided(t, now);
    if (late->len)
        deliver(t, (twa_item *)late->data, late->len, true);
    g_array_free(now, TRUE);
    g_array_free(late, TRUE);
}

/* Decides the traces quiet for quiet_ms (all with @all). */
static void tick(twa_tail *t, bool all)
{
    GArray *out = g_array_new(FALSE, FALSE, sizeof(decided_trace));
    int64_t ms = now_ms();
    pthread_mutex_lock(&t->lock);
    /* Arrival order is not quiet order: every trace is checked. */
    for (trace *tr = t->oldest; tr;) {
        trace *next = tr->newer;
        if (all || ms - tr->last_ms >= (int64_t)t->o.quiet_ms)
            decide(t, tr, out);
        tr = next;
    }
    pthread_mutex_unlock(&t->lock);
    flush_decided(t, out);
    g_array_free(out, TRUE);
}

static void *run(void *arg)
{
    twa_tail *t = arg;
    while (!atomic_load(&t->stop)) {
        struct timespec ts = {0, TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
        tick(t, false);
    }
    return NULL;
}

bool twa_tail_start(twa_tail *t)
{
    if (pthread_create(&t->thread, NULL, run, t) != 0)
        return false;
    t->has_thread = true;
    return true;
}

void twa_tail_stop(twa_tail *t)
{
    if (!t)
        return;
    if (t->has_thread) {
        atomic_store(&t->stop, true);
        pthread_join(t->thread, NULL);
        t->has_thread = false;
    }
    tick(t, true); /* what is held is decided now */
}

void twa_tail_free(twa_tail *t)
{
    if (!t)
        return;
    twa_tail_stop(t);
    g_hash_table_destroy(t->traces);
    while (!g_queue_is_empty(t->decided_order))
        g_free(g_queue_pop_head(t->decided_order));
    g_queue_free(t->decided_order);
    g_hash_table_destroy(t->decided);
    pthread_mutex_destroy(&t->lock);
    free(t);
}
