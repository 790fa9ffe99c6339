/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ids.h: trace and span ids (internal). A fast per-thread generator
 * (xoshiro256**, never rand()) seeded from OpenSSL's CSPRNG, reseeded in a
 * forked child so parent and child never repeat each other's ids.
 * Never returns 0. Thread safety: any thread (state is thread-local).
 */
#ifndef TW_IDS_H
#define TW_IDS_H

#include <stddef.h>
#include <stdint.h>

#include <stdatomic.h>
#include <stdbool.h>

#include "wire/core/tls.h"

/* Per-thread generator state; inline so a span start costs a few
 * instructions per id rather than a call (the unsampled path's budget). */
typedef struct tw__id_state {
    uint64_t s[4];
    /* The fork generation the state was seeded in; 0 (never a generation)
     * before the first seeding, so one compare covers both. */
    unsigned int generation;
} tw__id_state;

extern TW__TLS tw__id_state tw__ids;
extern atomic_uint tw__fork_generation;

/* Seeds (or reseeds after fork) the calling thread's state. */
void tw__ids_seed(tw__id_state *st);

static inline uint64_t tw__rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* The calling thread's state, seeded for this process. */
static inline tw__id_state *tw__id_state_ready(void)
{
    tw__id_state *st = &tw__ids;
    /* Relaxed: the generation only has to differ after fork, when the child
     * is single-threaded. */
    if (__builtin_expect(
            st->generation != atomic_load_explicit(&tw__fork_generation, memory_order_relaxed), 0))
        tw__ids_seed(st);
    return st;
}

/* One xoshiro256** step; never 0 (0 means "absent" on the wire). */
static inline uint64_t tw__id_next(tw__id_state *st)
{
    for (;;) {
        uint64_t *s = st->s;
        uint64_t result = tw__rotl64(s[1] * 5, 7) * 9;
        uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = tw__rotl64(s[3], 45);
        if (__builtin_expect(result != 0, 1))
            return result;
    }
}

/* A uniformly random 64-bit id, never 0 (0 means "absent" on the wire). */
static inline uint64_t tw__random_id(void)
{
    return tw__id_next(tw__id_state_ready());
}

/* Two ids (a 128-bit trace id's halves, low first) for one state lookup. */
static inline void tw__random_id_pair(uint64_t *low, uint64_t *high)
{
    tw__id_state *st = tw__id_state_ready();
    *low = tw__id_next(st);
    *high = tw__id_next(st);
}
/* Fills @buf with @len bytes from the OS/OpenSSL CSPRNG (for client-uuid). */
void tw__random_bytes(void *buf, size_t len);

#endif /* TW_IDS_H */
