/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampling/sampling.h: sampler internals shared with the core.
 *
 * A sampler implements tw__sampler_vtable; adding one touches its own file
 * and its public constructor in sampler.h. Decisions are made once per
 * trace, where a trace starts in this process (a root span, or the first
 * span under a deferred upstream decision), and travel in the context's
 * sampled flag.
 *
 * A decision says which sampler.type/sampler.param tags the deciding span
 * carries, as Jaeger's clients tag it. The type is always a string literal
 * and the param a plain value, so the span copies the two tags by value and
 * no sampler memory is referenced by a record (samplers can be swapped by
 * the remote sampler while records are still queued).
 *
 * The trace id reaches a sampler as a tw__trace_id that may not be drawn
 * yet: a new trace's id is drawn when the sampler first reads it, so a
 * sampler that does not look at it (const, rate limiting, probability 0)
 * leaves an unsampled root span with no id to draw until something reads
 * the span's context (span.c, lazy ids).
 *
 * Time comes through tw__sampling_now_ns, a seam that tests replace to
 * simulate minutes of traffic without sleeping.
 */
#ifndef TW_SAMPLING_H
#define TW_SAMPLING_H

#include <pthread.h>
#include <string.h>

#include "ids.h"
#include "internal.h"

typedef struct tw__sampling_decision {
    bool is_sampled;
    const char *type; /* "const", "probabilistic", "ratelimiting", "lowerbound": a literal */
    size_t type_len;  /* strlen(type), known at compile time (TW__SAMPLER_TYPE) */
    tw_value param;   /* sampler.param: bool or double */
} tw__sampling_decision;

/* The type and type_len of a decision, from a literal. */
#define TW__SAMPLER_TYPE(literal) literal, sizeof(literal) - 1

/* The trace id a decision is about: given, or drawn on first read (then
 * kept here, for the span to take). Owned by the caller, on its stack. */
typedef struct tw__trace_id {
    uint64_t high; /* 0 for a 64-bit id */
    uint64_t low;
    bool is_drawn;  /* high and low hold the id */
    bool is_128bit; /* what a draw makes */
} tw__trace_id;

/* The low half, drawn now (with the high half of a 128-bit id) if not yet:
 * low first, as span.c always drew them. */
static inline uint64_t tw__trace_id_low(tw__trace_id *id)
{
    if (!id->is_drawn) {
        if (id->is_128bit) {
            tw__random_id_pair(&id->low, &id->high);
        } else {
            id->low = tw__random_id();
            id->high = 0;
        }
        id->is_drawn = true;
    }
    return id->low;
}

typedef struct tw__sampler_vtable {
    size_t size;
    const char *type;
    /* Decides for a new trace; reads the id only through tw__trace_id_low
     * (and only when the decision depends on it). Thread safety: any
     * thread; a sampler with state synchronises internally. */
    void (*decide)(tw_sampler *s, tw__trace_id *id, const char *op, tw__sampling_decision *out);
    void (*free)(tw_sampler *s);
} tw__sampler_vtable;

struct tw_sampler {
    const tw__sampler_vtable *vtable;
};

/* A decision about a known trace id. */
static inline void tw__sampler_decide(tw_sampler *s, uint64_t hi, uint64_t lo, const char *op,
                                      tw__sampling_decision *out)
{
    tw__trace_id id = {.high = hi, .low = lo, .is_drawn = true, .is_128bit = hi != 0};
    s->vtable->decide(s, &id, op, out);
}

/* A decision about a trace whose id may not be drawn yet (@id->is_drawn
 * false): afterwards @id->is_drawn says whether the sampler drew it. */
static inline void tw__sampler_decide_lazy(tw_sampler *s, tw__trace_id *id, const char *op,
                                           tw__sampling_decision *out)
{
    s->vtable->decide(s, id, op, out);
}

/* The name a per-operation table keeps for @op: @op itself, or, when it is
 * longer than a span's name may be (TW__MAX_NAME_BYTES), its cut as the
 * span's name is cut, copied to @buf. Keyed by the name the spans carry, an
 * entry costs at most 1 KiB whatever the caller passes, and names that
 * differ only past the cut are one operation, as in the spans. */
static inline const char *tw__sampler_key(const char *op, char buf[TW__MAX_NAME_BYTES + 1])
{
    if (strnlen(op, TW__MAX_NAME_BYTES + 1) <= TW__MAX_NAME_BYTES)
        return op;
    size_t n = tw__utf8_cut(op, TW__MAX_NAME_BYTES);
    memcpy(buf, op, n);
    buf[n] = '\0';
    return buf;
}

/* Whether @s says no to every trace whatever its id and name: a const
 * sampler of false, or a probabilistic one of rate 0 (both immutable). The
 * tracer then skips the call on every root span. */
bool tw__sampler_never_samples(const tw_sampler *s);

/* Monotonic nanoseconds; tests may replace it (before samplers are used). */
extern int64_t (*tw__sampling_now_ns)(void);

/* ---- building blocks shared by samplers ------------------------------------------------ */

/* Jaeger's probabilistic rule: sampled iff (lo & 2^63-1) <= boundary(rate).
 * Rate 0 decides without reading (so without drawing) the id. */
uint64_t tw__probability_boundary(double rate);
static inline bool tw__probabilistic_hit(uint64_t boundary, double rate, tw__trace_id *id)
{
    return rate > 0.0 && (tw__trace_id_low(id) & 0x7fffffffffffffffULL) <= boundary;
}

/* A token bucket in Jaeger's shape: credits/s, max balance max(rate, 1),
 * starting full, refilled from elapsed time on each check. */
typedef struct tw__rate_limiter {
    pthread_mutex_t lock;
    double credits_per_ns; /* guarded by lock */
    double balance;        /* guarded by lock */
    double max_balance;    /* guarded by lock */
    int64_t last_ns;       /* guarded by lock */
} tw__rate_limiter;

/* A rwlock that lets a waiting writer in before new readers (glibc's
 * default lets readers starve a writer): the fork hooks take sampler
 * rwlocks for writing while other threads keep deciding. Readers must not
 * nest. */
void tw__sampling_rwlock_init(pthread_rwlock_t *lock);
/* The same lock made free again in a fork child hook (fork.h,
 * tw__rwlock_reset_in_child), writer-preferring still. */
void tw__sampling_rwlock_reset_in_child(pthread_rwlock_t *lock);

void tw__rate_limiter_init(tw__rate_limiter *rl, double per_second);
bool tw__rate_limiter_take(tw__rate_limiter *rl, double cost);
void tw__rate_limiter_destroy(tw__rate_limiter *rl);

#endif /* TW_SAMPLING_H */
