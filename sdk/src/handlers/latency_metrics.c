/* SPDX-License-Identifier: Apache-2.0 */
/*
 * handlers/latency_metrics.c: per-operation latency metrics fed by a
 * finished-span handler that wants unsampled spans, so they count every span
 * even when the sampler reports 1% (tracewire/handler.h).
 *
 * Where it sits: one handler of the finished-span chain (handlers.h), run on
 * the finishing threads; readers run on any thread (an exporter, a status
 * page).
 *
 * Histogram (log-linear, as HdrHistogram with 32 sub-buckets): a duration v
 * in µs below 64 has its own bucket; above, with e = floor(log2 v), the
 * bucket is one of 32 equal slices of [2^e, 2^(e+1)), of width 2^(e-5). A
 * percentile reads the bucket that holds the nearest-rank sample and returns
 * its middle, clamped to [min, max] seen: off by at most half a width, which
 * is at most 1/64 of the sample's value. Durations from 2^36 µs up share the
 * top bucket. 1024 buckets of 8 bytes per operation; 32-bit counters would
 * halve that but wrap after 4 billion spans of one bucket.
 *
 * Locking: the table of operations is open addressing over a fixed array
 * twice the size of max_operations, so probing always ends at an empty slot.
 * Slots are published with release stores and read with acquire loads: the
 * lookup of a known operation takes no lock. Entries are never removed or
 * moved before tw_latency_metrics_free, so a pointer read from a slot stays
 * valid (no reclamation problem). `add_lock` serialises additions (at most
 * max_operations, each once). Counters and buckets are relaxed atomics:
 * statistics, never used to order other memory; min and max are relaxed CAS
 * loops. The refcount (user + one per handler) releases with acq_rel as
 * usual. `add_lock` is taken around fork() by the fork hooks (fork.h).
 */
#include "handlers/handlers.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fork.h"

#define SUB_BITS 5
#define SUB_COUNT (1u << SUB_BITS)  /* 32 slices per power of two */
#define EXACT_BELOW (2 * SUB_COUNT) /* durations below 64 µs have their own bucket */
#define TOP_EXPONENT 36             /* from 2^36 µs (19 h) up: the top bucket */
#define N_BUCKETS (SUB_COUNT + (TOP_EXPONENT - SUB_BITS) * SUB_COUNT) /* 1024 */
#define DEFAULT_MAX_OPERATIONS 256u

typedef struct {
    char *name; /* NULL for the overflow entry; immutable once published */
    atomic_uint_fast64_t count;
    atomic_uint_fast64_t sum_us;
    atomic_int_fast64_t min_us;
    atomic_int_fast64_t max_us;
    atomic_uint_fast64_t buckets[N_BUCKETS];
} op_stats;

struct tw_latency_metrics {
    atomic_uint refcount; /* the user's + one per handler value not yet destroyed */
    size_t max_operations;
    size_t mask;                /* slots - 1; slots is a power of two >= 2 * max_operations */
    _Atomic(op_stats *) *slots; /* by name hash; NULL = empty */
    _Atomic(op_stats *) *order; /* first-seen order, max_operations entries */
    atomic_size_t n_operations; /* published entries of `order` */
    pthread_mutex_t add_lock;   /* serialises additions (writes of slots and order) */
    op_stats other;             /* the overflow entry */
    tw__fork_entry fork_entry;
};

static void metrics_fork_prepare(void *arg)
{
    pthread_mutex_lock(&((tw_latency_metrics *)arg)->add_lock);
}

static void metrics_fork_parent(void *arg)
{
    pthread_mutex_unlock(&((tw_latency_metrics *)arg)->add_lock);
}

static void metrics_fork_child(void *arg)
{
    pthread_mutex_unlock(&((tw_latency_metrics *)arg)->add_lock);
}

/* ---- histogram ------------------------------------------------------------------------------ */

static size_t bucket_of(int64_t v)
{
    if (v < (int64_t)SUB_COUNT)
        return v < 0 ? 0 : (size_t)v;
    if (v >= (INT64_C(1) << TOP_EXPONENT))
        return N_BUCKETS - 1;
    unsigned int e = 63u - (unsigned int)__builtin_clzll((unsigned long long)v); /* 5..35 */
    size_t slice = (size_t)((uint64_t)v >> (e - SUB_BITS)) - SUB_COUNT;          /* 0..31 */
    return SUB_COUNT + (size_t)(e - SUB_BITS) * SUB_COUNT + slice;
}

/* The value a bucket stands for: the middle of its range. */
static int64_t bucket_value(size_t i)
{
    if (i < SUB_COUNT)
        return (int64_t)i;
    size_t octave = (i - SUB_COUNT) / SUB_COUNT; /* e - SUB_BITS */
    size_t slice = (i - SUB_COUNT) % SUB_COUNT;
    int64_t width = INT64_C(1) << octave;
    int64_t low = (int64_t)(SUB_COUNT + slice) << octave;
    return low + width / 2;
}

static void stats_init(op_stats *s, char *name)
{
    s->name = name;
    atomic_init(&s->count, 0);
    atomic_init(&s->sum_us, 0);
    atomic_init(&s->min_us, INT64_MAX);
    atomic_init(&s->max_us, -1);
    for (size_t i = 0; i < N_BUCKETS; i++)
        atomic_init(&s->buckets[i], 0);
}

static void record(op_stats *s, int64_t duration_us)
{
    if (duration_us < 0)
        duration_us = 0;
    atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->sum_us, (uint64_t)duration_us, memory_order_relaxed);
    atomic_fetch_add_explicit(&s->buckets[bucket_of(duration_us)], 1, memory_order_relaxed);
    int_fast64_t seen = atomic_load_explicit(&s->max_us, memory_order_relaxed);
    while (duration_us > seen &&
           !atomic_compare_exchange_weak_explicit(&s->max_us, &seen, duration_us,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
    seen = atomic_load_explicit(&s->min_us, memory_order_relaxed);
    while (duration_us < seen &&
           !atomic_compare_exchange_weak_explicit(&s->min_us, &seen, duration_us,
                                                  memory_order_relaxed, memory_order_relaxed))
        ;
}

/* ---- the table ------------------------------------------------------------------------------ */

static uint64_t hash_name(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h;
}

/* The entry of @name, or NULL; with @slot_out, the empty slot where it would go. */
static op_stats *lookup(const tw_latency_metrics *m, const char *name, uint64_t h, size_t *slot_out)
{
    for (size_t i = (size_t)h & m->mask;; i = (i + 1) & m->mask) {
        op_stats *e = atomic_load_explicit(&m->slots[i], memory_order_acquire);
        if (!e) {
            if (slot_out)
                *slot_out = i;
            return NULL;
        }
        if (strcmp(e->name, name) == 0)
            return e;
    }
}

/* The entry that counts @name: its own (added on first sight while there is
 * room), else the overflow entry. */
static op_stats *entry_for(tw_latency_metrics *m, const char *name)
{
    uint64_t h = hash_name(name);
    op_stats *e = lookup(m, name, h, NULL);
    if (e)
        return e;
    if (atomic_load_explicit(&m->n_operations, memory_order_relaxed) >= m->max_operations)
        return &m->other; /* full: no lock for the spans of every later operation */
    pthread_mutex_lock(&m->add_lock);
    size_t slot = 0;
    size_t n = atomic_load_explicit(&m->n_operations, memory_order_relaxed);
    e = lookup(m, name, h, &slot); /* again: another thread may have added it */
    if (!e && n < m->max_operations) {
        char *copy = strdup(name);
        e = copy ? malloc(sizeof(*e)) : NULL;
        if (e) {
            stats_init(e, copy);
            /* order before n_operations, and the entry before both slots: a
             * reader that sees the count or the slot sees a whole entry. */
            atomic_store_explicit(&m->order[n], e, memory_order_release);
            atomic_store_explicit(&m->n_operations, n + 1, memory_order_release);
            atomic_store_explicit(&m->slots[slot], e, memory_order_release);
        } else {
            free(copy); /* out of memory: counted as overflow */
        }
    }
    pthread_mutex_unlock(&m->add_lock);
    return e ? e : &m->other;
}

/* The entry a reader asks for: NULL is the overflow entry. */
static const op_stats *find(const tw_latency_metrics *m, const char *operation)
{
    if (!m)
        return NULL;
    if (!operation)
        return &m->other;
    return lookup(m, operation, hash_name(operation), NULL);
}

/* ---- life cycle ------------------------------------------------------------------------------ */

tw_latency_metrics *tw_latency_metrics_new(size_t max_operations)
{
    if (max_operations == 0)
        max_operations = DEFAULT_MAX_OPERATIONS;
    if (max_operations > SIZE_MAX / 4 / sizeof(void *))
        return NULL;
    size_t n_slots = 1;
    while (n_slots < 2 * max_operations)
        n_slots *= 2;
    tw_latency_metrics *m = malloc(sizeof(*m));
    if (!m)
        goto fail_metrics;
    m->slots = calloc(n_slots, sizeof(*m->slots));
    if (!m->slots)
        goto fail_slots;
    m->order = calloc(max_operations, sizeof(*m->order));
    if (!m->order)
        goto fail_order;
    if (pthread_mutex_init(&m->add_lock, NULL) != 0)
        goto fail_lock;
    /* calloc's zero bytes are NULL pointers for _Atomic(op_stats *) on every
     * platform we build for; the stores below need no atomic_init. */
    atomic_init(&m->refcount, 1);
    atomic_init(&m->n_operations, 0);
    m->max_operations = max_operations;
    m->mask = n_slots - 1;
    stats_init(&m->other, NULL);
    m->fork_entry = (tw__fork_entry){.level = TW__FORK_LEVEL_HANDLER,
                                     .prepare = metrics_fork_prepare,
                                     .parent = metrics_fork_parent,
                                     .child = metrics_fork_child,
                                     .arg = m};
    if (!tw__fork_register(&m->fork_entry))
        tw__log_msg(TW_LOG_WARN,
                    "latency metrics: pthread_atfork failed: a forked child may hang on its lock");
    return m;

fail_lock:
    free(m->order);
fail_order:
    free(m->slots);
fail_slots:
    free(m);
fail_metrics:
    return NULL;
}

static void metrics_unref(tw_latency_metrics *m)
{
    if (atomic_fetch_sub_explicit(&m->refcount, 1, memory_order_acq_rel) != 1)
        return;
    tw__fork_unregister(&m->fork_entry);
    size_t n = atomic_load_explicit(&m->n_operations, memory_order_acquire);
    for (size_t i = 0; i < n; i++) {
        op_stats *e = atomic_load_explicit(&m->order[i], memory_order_relaxed);
        free(e->name);
        free(e);
    }
    pthread_mutex_destroy(&m->add_lock);
    free(m->order);
    free(m->slots);
    free(m);
}

void tw_latency_metrics_free(tw_latency_metrics *metrics)
{
    if (metrics)
        metrics_unref(metrics);
}

/* ---- the handler ------------------------------------------------------------------------------
 */

static tw_handler_result metrics_on_finish(void *user_data, tw_mutable_span *span)
{
    tw_latency_metrics *m = user_data;
    record(entry_for(m, tw_mutable_span_operation(span)), tw_mutable_span_duration_us(span));
    return TW_HANDLER_KEEP;
}

static void metrics_destroy(void *user_data)
{
    metrics_unref(user_data);
}

tw_span_handler tw_latency_metrics_handler(tw_latency_metrics *metrics)
{
    tw_span_handler h = {.size = sizeof h};
    if (!metrics) {
        tw__log_msg(TW_LOG_ERROR, "tw_latency_metrics_handler: invalid argument: NULL metrics");
        return h;
    }
    /* Relaxed: the caller holds a reference, so the object cannot go meanwhile. */
    atomic_fetch_add_explicit(&metrics->refcount, 1, memory_order_relaxed);
    h.wants_unsampled = true;
    h.on_finish = metrics_on_finish;
    h.destroy = metrics_destroy;
    h.user_data = metrics;
    return h;
}

/* ---- readers ------------------------------------------------------------------------------- */

uint64_t tw_latency_metrics_count(const tw_latency_metrics *metrics, const char *operation)
{
    const op_stats *s = find(metrics, operation);
    return s ? atomic_load_explicit(&s->count, memory_order_relaxed) : 0;
}

uint64_t tw_latency_metrics_sum_us(const tw_latency_metrics *metrics, const char *operation)
{
    const op_stats *s = find(metrics, operation);
    return s ? atomic_load_explicit(&s->sum_us, memory_order_relaxed) : 0;
}

int64_t tw_latency_metrics_max_us(const tw_latency_metrics *metrics, const char *operation)
{
    const op_stats *s = find(metrics, operation);
    return s ? atomic_load_explicit(&s->max_us, memory_order_relaxed) : -1;
}

int64_t tw_latency_metrics_percentile_us(const tw_latency_metrics *metrics, const char *operation,
                                         double q)
{
    const op_stats *s = find(metrics, operation);
    if (!s || !(q >= 0.0 && q <= 1.0))
        return -1;
    /* The rank comes from the buckets themselves (not from `count`), so the
     * walk below always ends inside them even while spans are recorded. */
    uint64_t total = 0;
    for (size_t i = 0; i < N_BUCKETS; i++)
        total += atomic_load_explicit(&s->buckets[i], memory_order_relaxed);
    if (total == 0)
        return -1;
    int64_t lo = atomic_load_explicit(&s->min_us, memory_order_relaxed);
    int64_t hi = atomic_load_explicit(&s->max_us, memory_order_relaxed);
    uint64_t rank = (uint64_t)ceil(q * (double)total);
    if (rank < 1)
        rank = 1;
    if (rank >= total && hi >= 0)
        return hi; /* the last sample is the maximum, known exactly */
    if (rank == 1 && lo != INT64_MAX)
        return lo; /* the first is the minimum */
    uint64_t seen = 0;
    size_t i = 0;
    for (; i < N_BUCKETS - 1; i++) {
        seen += atomic_load_explicit(&s->buckets[i], memory_order_relaxed);
        if (seen >= rank)
            break;
    }
    int64_t v = bucket_value(i);
    if (hi >= 0 && v > hi)
        v = hi;
    if (lo != INT64_MAX && v < lo)
        v = lo;
    return v;
}

size_t tw_latency_metrics_operation_count(const tw_latency_metrics *metrics)
{
    return metrics ? atomic_load_explicit(&metrics->n_operations, memory_order_acquire) : 0;
}

const char *tw_latency_metrics_operation(const tw_latency_metrics *metrics, size_t index)
{
    if (!metrics || index >= atomic_load_explicit(&metrics->n_operations, memory_order_acquire))
        return NULL;
    return atomic_load_explicit(&metrics->order[index], memory_order_acquire)->name;
}
