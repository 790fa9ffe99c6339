/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampling/adaptive.c: Dapper's adaptive sampling: the user names a target
 * rate of sampled traces per second, and each operation's probability
 * follows its traffic so that the process as a whole lands on the target.
 *
 * Every window (one second) the rate of new traces per operation is
 * estimated (an even mix of the last estimate and the last window, so one
 * odd second does not swing the probability), and the target is shared out
 * by water-filling: operations quieter than an equal share keep all their
 * traces (probability 1) and hand the unused share to the busier ones, whose
 * probabilities become share / rate. A rare operation is thus always seen
 * and a hot one cannot crowd it out. Until an operation has a full window of
 * history it samples at the initial probability (0.001, Jaeger's default),
 * so a burst of new traffic cannot overshoot the target.
 *
 * Decisions use Jaeger's probabilistic rule on the trace id and carry
 * sampler.type=probabilistic with the operation's current probability, as
 * Jaeger's own (server-side) adaptive sampling does. At most max_operations
 * names are tracked; the rest share one bucket, so memory stays bounded.
 *
 * Locking: `lock` guards everything; it is taken once per new trace, and
 * around fork() by the fork hooks (fork.h).
 */
#include "sampling/sampling.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fork.h"

#define WINDOW_NS 1000000000LL
#define INITIAL_PROBABILITY 0.001

typedef struct {
    uint64_t count;     /* new traces in the current window */
    double rate;        /* estimated traces per second; < 0 before the first window */
    double probability; /* current */
    uint64_t boundary;
} adaptive_entry;

typedef struct {
    tw_sampler base;
    pthread_mutex_t lock;
    GHashTable *operations; /* guarded by lock: owned name -> adaptive_entry */
    adaptive_entry other;   /* guarded by lock: operations past max_operations */
    double target_per_second;
    size_t max_operations;
    int64_t window_start_ns; /* guarded by lock */
    tw__fork_entry fork_entry;
} adaptive_sampler;

static void adaptive_fork_prepare(void *arg)
{
    pthread_mutex_lock(&((adaptive_sampler *)arg)->lock);
}

static void adaptive_fork_parent(void *arg)
{
    pthread_mutex_unlock(&((adaptive_sampler *)arg)->lock);
}

static void adaptive_fork_child(void *arg)
{
    pthread_mutex_unlock(&((adaptive_sampler *)arg)->lock);
}

static void set_probability(adaptive_entry *e, double p)
{
    e->probability = p < 0.0 ? 0.0 : p > 1.0 ? 1.0 : p;
    e->boundary = tw__probability_boundary(e->probability);
}

static int by_rate(const void *a, const void *b)
{
    double ra = (*(adaptive_entry *const *)a)->rate, rb = (*(adaptive_entry *const *)b)->rate;
    return ra < rb ? -1 : ra > rb;
}

/* Ends the window: new rate estimates, then water-filling of the target. */
static void rebalance_locked(adaptive_sampler *a, int64_t now)
{
    double seconds = (double)(now - a->window_start_ns) / 1e9;
    size_t n = (size_t)g_hash_table_size(a->operations) + 1;
    adaptive_entry **all = malloc(n * sizeof(*all));
    if (!all)
        return; /* keep the old probabilities; try again next window */
    size_t k = 0;
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, a->operations);
    while (g_hash_table_iter_next(&it, &key, &value))
        all[k++] = value;
    all[k++] = &a->other;
    for (size_t i = 0; i < k; i++) {
        double observed = (double)all[i]->count / seconds;
        all[i]->rate = all[i]->rate < 0 ? observed : 0.5 * all[i]->rate + 0.5 * observed;
        all[i]->count = 0;
    }
    qsort(all, k, sizeof(*all), by_rate);
    double remaining = a->target_per_second;
    for (size_t i = 0; i < k; i++) {
        double share = remaining / (double)(k - i);
        adaptive_entry *e = all[i];
        if (e->rate <= share) {
            set_probability(e, 1.0);
            remaining -= e->rate;
        } else {
            set_probability(e, share / e->rate);
            remaining -= share;
        }
    }
    free(all);
    a->window_start_ns = now;
}

static adaptive_entry *entry_locked(adaptive_sampler *a, const char *op)
{
    adaptive_entry *e = g_hash_table_lookup(a->operations, op);
    if (e)
        return e;
    if ((size_t)g_hash_table_size(a->operations) >= a->max_operations)
        return &a->other;
    char *key = strdup(op);
    e = key ? malloc(sizeof(*e)) : NULL;
    if (!e) {
        free(key);
        return &a->other;
    }
    e->count = 0;
    e->rate = -1.0;
    set_probability(e, INITIAL_PROBABILITY);
    g_hash_table_insert(a->operations, key, e);
    return e;
}

static void adaptive_decide(tw_sampler *s, tw__trace_id *id, const char *op,
                            tw__sampling_decision *out)
{
    adaptive_sampler *a = (adaptive_sampler *)s;
    char cut[TW__MAX_NAME_BYTES + 1];
    op = tw__sampler_key(op, cut);
    int64_t now = tw__sampling_now_ns();
    pthread_mutex_lock(&a->lock);
    if (now - a->window_start_ns >= WINDOW_NS)
        rebalance_locked(a, now);
    adaptive_entry *e = entry_locked(a, op);
    e->count++;
    *out = (tw__sampling_decision){tw__probabilistic_hit(e->boundary, e->probability, id),
                                   TW__SAMPLER_TYPE("probabilistic"),
                                   {.type = TW_VALUE_DOUBLE, .as.dbl = e->probability}};
    pthread_mutex_unlock(&a->lock);
}

static void adaptive_free(tw_sampler *s)
{
    adaptive_sampler *a = (adaptive_sampler *)s;
    tw__fork_unregister(&a->fork_entry);
    g_hash_table_destroy(a->operations);
    pthread_mutex_destroy(&a->lock);
    free(a);
}

static const tw__sampler_vtable adaptive_vtable = {sizeof(tw__sampler_vtable), "adaptive",
                                                   adaptive_decide, adaptive_free};

tw_sampler *tw_sampler_adaptive_new(double target_traces_per_second, size_t max_operations,
                                    tw_error **err)
{
    if (!(target_traces_per_second > 0.0) || isinf(target_traces_per_second)) {
        tw__set_error(err, TW_E_INVALID_ARG,
                      "adaptive sampler: target %g traces/s is not a positive number",
                      target_traces_per_second);
        return NULL;
    }
    adaptive_sampler *a = calloc(1, sizeof(*a));
    if (!a) {
        tw__set_error(err, TW_E_NOMEM, "adaptive sampler: out of memory");
        return NULL;
    }
    a->base.vtable = &adaptive_vtable;
    pthread_mutex_init(&a->lock, NULL);
    a->operations = g_hash_table_new_full(g_str_hash, g_str_equal, free, free);
    a->target_per_second = target_traces_per_second;
    a->max_operations = max_operations ? max_operations : 2000;
    a->other.rate = -1.0;
    set_probability(&a->other, INITIAL_PROBABILITY);
    a->window_start_ns = tw__sampling_now_ns();
    a->fork_entry = (tw__fork_entry){.level = TW__FORK_LEVEL_SAMPLER,
                                     .prepare = adaptive_fork_prepare,
                                     .parent = adaptive_fork_parent,
                                     .child = adaptive_fork_child,
                                     .arg = a};
    if (!tw__fork_register(&a->fork_entry))
        tw__log_msg(TW_LOG_WARN,
                    "adaptive sampler: pthread_atfork failed: a forked child may hang on its lock");
    return &a->base;
}

double tw_sampler_adaptive_probability(const tw_sampler *sampler, const char *operation)
{
    TW_CHECK_ARG(sampler && sampler->vtable == &adaptive_vtable && operation, -1.0);
    adaptive_sampler *a = (adaptive_sampler *)sampler;
    char cut[TW__MAX_NAME_BYTES + 1];
    operation = tw__sampler_key(operation, cut);
    pthread_mutex_lock(&a->lock);
    const adaptive_entry *e = g_hash_table_lookup(a->operations, operation);
    double p = e ? e->probability : -1.0;
    pthread_mutex_unlock(&a->lock);
    return p;
}
