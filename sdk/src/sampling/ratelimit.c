/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampling/ratelimit.c: the token bucket shared by samplers, and the
 * rate-limiting sampler (at most N traces per second, N may be fractional:
 * 0.1 means one trace every ten seconds).
 *
 * The bucket follows Jaeger's clients (jaeger-client-go utils/rate_limiter.go):
 * credits accrue at the rate, the balance is capped at max(rate, 1) so a
 * burst of at most one second's worth (and at least one trace) passes, and
 * it starts full.
 * Locking: `lock` guards the bucket; it is taken once per new trace only.
 * The rate-limiting sampler registers its bucket's lock with fork.h; a
 * bucket inside another sampler (per-operation) is taken only under that
 * sampler's own lock, which covers it at fork().
 */
#include "sampling/sampling.h"

#include <math.h>
#include <stdlib.h>

#include "fork.h"

void tw__sampling_rwlock_init(pthread_rwlock_t *lock)
{
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
#if defined(__GLIBC__)
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    pthread_rwlock_init(lock, &attr);
    pthread_rwlockattr_destroy(&attr);
}

void tw__sampling_rwlock_reset_in_child(pthread_rwlock_t *lock)
{
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
#if defined(__GLIBC__)
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
    tw__rwlock_reset_in_child(lock, &attr);
    pthread_rwlockattr_destroy(&attr);
}

void tw__rate_limiter_init(tw__rate_limiter *rl, double per_second)
{
    pthread_mutex_init(&rl->lock, NULL);
    rl->credits_per_ns = per_second / 1e9;
    rl->max_balance = per_second > 1.0 ? per_second : 1.0;
    rl->balance = rl->max_balance;
    rl->last_ns = tw__sampling_now_ns();
}

bool tw__rate_limiter_take(tw__rate_limiter *rl, double cost)
{
    int64_t now = tw__sampling_now_ns();
    pthread_mutex_lock(&rl->lock);
    if (now > rl->last_ns) {
        rl->balance += (double)(now - rl->last_ns) * rl->credits_per_ns;
        if (rl->balance > rl->max_balance)
            rl->balance = rl->max_balance;
        rl->last_ns = now;
    }
    bool ok = rl->balance >= cost;
    if (ok)
        rl->balance -= cost;
    pthread_mutex_unlock(&rl->lock);
    return ok;
}

void tw__rate_limiter_destroy(tw__rate_limiter *rl)
{
    pthread_mutex_destroy(&rl->lock);
}

typedef struct {
    tw_sampler base;
    double per_second;
    tw__rate_limiter limiter;
    tw__fork_entry fork_entry;
} rate_limiting_sampler;

static void limiter_fork_prepare(void *arg)
{
    pthread_mutex_lock(&((rate_limiting_sampler *)arg)->limiter.lock);
}

static void limiter_fork_parent(void *arg)
{
    pthread_mutex_unlock(&((rate_limiting_sampler *)arg)->limiter.lock);
}

static void limiter_fork_child(void *arg)
{
    pthread_mutex_unlock(&((rate_limiting_sampler *)arg)->limiter.lock);
}

static void rate_limiting_decide(tw_sampler *s, tw__trace_id *id, const char *op,
                                 tw__sampling_decision *out)
{
    (void)id;
    (void)op;
    rate_limiting_sampler *r = (rate_limiting_sampler *)s;
    *out = (tw__sampling_decision){tw__rate_limiter_take(&r->limiter, 1.0),
                                   TW__SAMPLER_TYPE("ratelimiting"),
                                   {.type = TW_VALUE_DOUBLE, .as.dbl = r->per_second}};
}

static void rate_limiting_free(tw_sampler *s)
{
    rate_limiting_sampler *r = (rate_limiting_sampler *)s;
    tw__fork_unregister(&r->fork_entry);
    tw__rate_limiter_destroy(&r->limiter);
    free(r);
}

static const tw__sampler_vtable rate_limiting_vtable = {sizeof(tw__sampler_vtable), "ratelimiting",
                                                        rate_limiting_decide, rate_limiting_free};

tw_sampler *tw_sampler_rate_limiting_new(double traces_per_second, tw_error **err)
{
    if (!(traces_per_second > 0.0) || isinf(traces_per_second)) {
        tw__set_error(err, TW_E_INVALID_ARG,
                      "rate-limiting sampler: %g traces per second is not a positive number",
                      traces_per_second);
        return NULL;
    }
    rate_limiting_sampler *r = malloc(sizeof(*r));
    if (!r) {
        tw__set_error(err, TW_E_NOMEM, "rate-limiting sampler: out of memory");
        return NULL;
    }
    r->base.vtable = &rate_limiting_vtable;
    r->per_second = traces_per_second;
    tw__rate_limiter_init(&r->limiter, traces_per_second);
    r->fork_entry = (tw__fork_entry){.level = TW__FORK_LEVEL_SAMPLER,
                                     .prepare = limiter_fork_prepare,
                                     .parent = limiter_fork_parent,
                                     .child = limiter_fork_child,
                                     .arg = r};
    if (!tw__fork_register(&r->fork_entry))
        tw__log_msg(TW_LOG_WARN, "rate-limiting sampler: pthread_atfork failed: a forked child "
                                 "may hang on its lock");
    return &r->base;
}
