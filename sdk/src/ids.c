/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ids.c: id generation. Each thread has its own xoshiro256** state, derived
 * on first use from a process-wide master seed drawn from the kernel
 * (getrandom; OpenSSL's RAND_bytes if that fails), which a forked child
 * draws anew: a process-wide fork generation, bumped by the fork child
 * hook (fork.c), is compared on every call (one relaxed load), because a
 * forked child inherits its parent's thread-local state and would otherwise
 * emit the same ids. xoshiro256** is not cryptographic; ids need uniqueness and
 * uniform bits (for probabilistic sampling), not secrecy, and it costs a few
 * instructions against ~100 ns for a call into a CSPRNG.
 */
#include "ids.h"

#include <errno.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "wire/core/tls.h"

/* Bumped in the child after fork; never 0, which marks an unseeded state. */
atomic_uint tw__fork_generation = 1;

TW__TLS tw__id_state tw__ids;

static pthread_mutex_t master_lock = PTHREAD_MUTEX_INITIALIZER;

/* master_lock is one of fork.h's innermost locks: fork.c takes it around
 * fork() so the child never inherits it held. */
void tw__ids_fork_prepare(void)
{
    pthread_mutex_lock(&master_lock);
}

void tw__ids_fork_parent(void)
{
    pthread_mutex_unlock(&master_lock);
}

void tw__ids_fork_child(void)
{
    pthread_mutex_unlock(&master_lock);
    /* Relaxed: the child is single-threaded right after fork. */
    if (atomic_fetch_add_explicit(&tw__fork_generation, 1, memory_order_relaxed) + 1 == 0)
        atomic_store_explicit(&tw__fork_generation, 1, memory_order_relaxed);
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* The kernel's CSPRNG first (getrandom, no state in this process), then
 * OpenSSL's: initialising OpenSSL's RNG loads its default provider, about
 * 2 MB of resident memory for a few bytes of seed (bench_tracer, RSS row). */
void tw__random_bytes(void *buf, size_t len)
{
    unsigned char *out = buf;
    size_t got = 0;
    while (got < len) {
        ssize_t n = getrandom(out + got, len - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got == len)
        return;
    if (RAND_bytes(buf, (int)len) == 1)
        return;
    /* OpenSSL could not seed (no entropy source): fall back to a mix of
     * clock, pid and address bits, still unique per process and thread. */
    uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)buf;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    x ^= (uint64_t)ts.tv_nsec * 0x2545F4914F6CDD1DULL;
    unsigned char *p = buf;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t r = splitmix64(&x);
        memcpy(p + i, &r, len - i < 8 ? len - i : 8);
    }
}

/* The process-wide master seed: drawn from RAND_bytes once per process (and
 * again in a forked child), then each thread's state is derived from it and
 * a counter. Threads therefore never call into OpenSSL's CSPRNG themselves:
 * OpenSSL 3 gives every calling thread its own DRBG, which a thread pool's
 * long-lived workers would keep alive to exit (a leak report under ASan in
 * the three-process demo) and which costs every new thread. Distinct
 * counters through splitmix64 give independent streams. */
static uint64_t master_seed;           /* guarded by master_lock */
static uint64_t master_counter;        /* guarded by master_lock */
static unsigned int master_generation; /* guarded by master_lock */
static bool has_master;                /* guarded by master_lock */

void tw__ids_seed(tw__id_state *st)
{
    tw__fork_install(); /* the child's generation bump comes from fork.c */
    unsigned int generation = atomic_load_explicit(&tw__fork_generation, memory_order_relaxed);
    pthread_mutex_lock(&master_lock);
    if (!has_master || master_generation != generation) {
        /* First use, or a forked child: the parent's master and counter
         * would make this process repeat the parent's future ids. */
        tw__random_bytes(&master_seed, sizeof master_seed);
        master_counter = 0;
        master_generation = generation;
        has_master = true;
    }
    uint64_t x = master_seed ^ (++master_counter * 0xd1b54a32d192ed03ULL);
    pthread_mutex_unlock(&master_lock);
    /* splitmix64 output is never all-zero over four draws, so the
     * xoshiro state is valid. */
    for (int i = 0; i < 4; i++)
        st->s[i] = splitmix64(&x);
    st->generation = generation;
}
