/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampling/peroperation.c: the per-operation, guaranteed-throughput sampler
 * (Jaeger's "operationSampling" strategy; jaeger-client-go
 * PerOperationSampler and GuaranteedThroughputProbabilisticSampler).
 *
 * Each operation has a probability and a lower bound in traces per second:
 * the probabilistic rule decides first; when it says no, the operation's
 * rate limiter may still sample, so a rare operation is seen at least at the
 * lower bound. A probabilistic "yes" still takes a credit from the limiter,
 * so the lower bound is not exceeded on top of the probabilistic share.
 * Tags: probabilistic/<rate> when the probability decided, lowerbound/<rate>
 * when the limiter did. New operations get the defaults until
 * max_operations are known; past that, the default probabilistic rule
 * decides alone, so memory stays bounded whatever operation names arrive.
 *
 * Locking: `lock` (a rwlock) guards the table; decisions on known operations
 * share it for reading; the limiters synchronise themselves and are only
 * used with `lock` held, so the fork hooks (fork.h), which take `lock` for
 * writing, find every limiter free.
 */
#include "sampling/sampling.h"

#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fork.h"

typedef struct {
    double probability;
    uint64_t boundary;
    bool has_lower_bound; /* a bound of 0 means none (see decide_with) */
    tw__rate_limiter lower_bound;
} operation_entry;

typedef struct {
    tw_sampler base;
    pthread_rwlock_t lock;
    GHashTable *operations; /* guarded by lock: owned name -> operation_entry */
    double default_probability;
    uint64_t default_boundary;
    double lower_bound_per_second;
    size_t max_operations;
    tw__fork_entry fork_entry;
} per_operation_sampler;

static void per_operation_fork_prepare(void *arg)
{
    pthread_rwlock_wrlock(&((per_operation_sampler *)arg)->lock);
}

static void per_operation_fork_parent(void *arg)
{
    pthread_rwlock_unlock(&((per_operation_sampler *)arg)->lock);
}

static void per_operation_fork_child(void *arg)
{
    tw__sampling_rwlock_reset_in_child(&((per_operation_sampler *)arg)->lock);
}

static void entry_free(gpointer p)
{
    operation_entry *e = p;
    tw__rate_limiter_destroy(&e->lower_bound);
    free(e);
}

static operation_entry *entry_new(double probability, double lower_bound)
{
    operation_entry *e = malloc(sizeof(*e));
    if (!e)
        return NULL;
    e->probability = probability;
    e->boundary = tw__probability_boundary(probability);
    e->has_lower_bound = lower_bound > 0;
    tw__rate_limiter_init(&e->lower_bound, lower_bound);
    return e;
}

/* Adds @op with the defaults; NULL when the table is full or memory is out.
 * Called with the write lock held. */
static operation_entry *add_locked(per_operation_sampler *p, const char *op, double probability)
{
    if ((size_t)g_hash_table_size(p->operations) >= p->max_operations)
        return NULL;
    char *key = strdup(op);
    operation_entry *e = key ? entry_new(probability, p->lower_bound_per_second) : NULL;
    if (!e) {
        free(key);
        return NULL;
    }
    g_hash_table_insert(p->operations, key, e);
    return e;
}

/* A lower bound of 0 means no bound. Jaeger's Go client builds a limiter
 * even then, whose bucket (capped at max(rate, 1), starting full) lets one
 * trace of every operation through; a server that sends 0 means "none". */
static void decide_with(operation_entry *e, tw__trace_id *id, tw__sampling_decision *out)
{
    tw_value rate = {.type = TW_VALUE_DOUBLE, .as.dbl = e->probability};
    if (tw__probabilistic_hit(e->boundary, e->probability, id)) {
        if (e->has_lower_bound)
            tw__rate_limiter_take(&e->lower_bound, 1.0); /* counts against the bound */
        *out = (tw__sampling_decision){true, TW__SAMPLER_TYPE("probabilistic"), rate};
    } else {
        bool by_bound = e->has_lower_bound && tw__rate_limiter_take(&e->lower_bound, 1.0);
        *out = (tw__sampling_decision){by_bound, TW__SAMPLER_TYPE("lowerbound"), rate};
    }
}

static void per_operation_decide(tw_sampler *s, tw__trace_id *id, const char *op,
                                 tw__sampling_decision *out)
{
    per_operation_sampler *p = (per_operation_sampler *)s;
    char cut[TW__MAX_NAME_BYTES + 1];
    op = tw__sampler_key(op, cut);
    pthread_rwlock_rdlock(&p->lock);
    operation_entry *e = g_hash_table_lookup(p->operations, op);
    if (e) {
        decide_with(e, id, out);
        pthread_rwlock_unlock(&p->lock);
        return;
    }
    pthread_rwlock_unlock(&p->lock);
    pthread_rwlock_wrlock(&p->lock);
    e = g_hash_table_lookup(p->operations, op);
    if (!e)
        e = add_locked(p, op, p->default_probability);
    if (e) {
        decide_with(e, id, out);
    } else {
        *out = (tw__sampling_decision){
            tw__probabilistic_hit(p->default_boundary, p->default_probability, id),
            TW__SAMPLER_TYPE("probabilistic"),
            {.type = TW_VALUE_DOUBLE, .as.dbl = p->default_probability}};
    }
    pthread_rwlock_unlock(&p->lock);
}

static void per_operation_free(tw_sampler *s)
{
    per_operation_sampler *p = (per_operation_sampler *)s;
    tw__fork_unregister(&p->fork_entry);
    g_hash_table_destroy(p->operations);
    pthread_rwlock_destroy(&p->lock);
    free(p);
}

static const tw__sampler_vtable per_operation_vtable = {sizeof(tw__sampler_vtable), "per-operation",
                                                        per_operation_decide, per_operation_free};

static bool is_probability(double p)
{
    return !isnan(p) && p >= 0.0 && p <= 1.0;
}

tw_sampler *tw_sampler_per_operation_new(double default_probability, double lower_bound_per_second,
                                         size_t max_operations, tw_error **err)
{
    if (!is_probability(default_probability)) {
        tw__set_error(err, TW_E_INVALID_ARG,
                      "per-operation sampler: default probability %g is outside [0, 1]",
                      default_probability);
        return NULL;
    }
    if (isnan(lower_bound_per_second) || lower_bound_per_second < 0.0 ||
        isinf(lower_bound_per_second)) {
        tw__set_error(err, TW_E_INVALID_ARG,
                      "per-operation sampler: lower bound %g traces/s is not a non-negative "
                      "number",
                      lower_bound_per_second);
        return NULL;
    }
    per_operation_sampler *p = calloc(1, sizeof(*p));
    if (!p) {
        tw__set_error(err, TW_E_NOMEM, "per-operation sampler: out of memory");
        return NULL;
    }
    p->base.vtable = &per_operation_vtable;
    tw__sampling_rwlock_init(&p->lock);
    p->operations = g_hash_table_new_full(g_str_hash, g_str_equal, free, entry_free);
    p->default_probability = default_probability;
    p->default_boundary = tw__probability_boundary(default_probability);
    p->lower_bound_per_second = lower_bound_per_second;
    p->max_operations = max_operations ? max_operations : 2000;
    p->fork_entry = (tw__fork_entry){.level = TW__FORK_LEVEL_SAMPLER,
                                     .prepare = per_operation_fork_prepare,
                                     .parent = per_operation_fork_parent,
                                     .child = per_operation_fork_child,
                                     .arg = p};
    if (!tw__fork_register(&p->fork_entry))
        tw__log_msg(TW_LOG_WARN, "per-operation sampler: pthread_atfork failed: a forked child "
                                 "may hang on its lock");
    return &p->base;
}

tw_status tw_sampler_per_operation_set(tw_sampler *sampler, const char *operation,
                                       double probability)
{
    TW_CHECK_ARG(sampler && sampler->vtable == &per_operation_vtable && operation,
                 TW_E_INVALID_ARG);
    TW_CHECK_ARG(is_probability(probability), TW_E_INVALID_ARG);
    per_operation_sampler *p = (per_operation_sampler *)sampler;
    tw_status st = TW_OK;
    char cut[TW__MAX_NAME_BYTES + 1];
    operation = tw__sampler_key(operation, cut);
    pthread_rwlock_wrlock(&p->lock);
    operation_entry *e = g_hash_table_lookup(p->operations, operation);
    if (e) {
        e->probability = probability;
        e->boundary = tw__probability_boundary(probability);
    } else if (!add_locked(p, operation, probability)) {
        st =
            (size_t)g_hash_table_size(p->operations) >= p->max_operations ? TW_E_LIMIT : TW_E_NOMEM;
    }
    pthread_rwlock_unlock(&p->lock);
    return st;
}
