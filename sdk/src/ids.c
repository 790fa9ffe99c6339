/*
 * ids.c: id generation. Each thread has its own xoshiro256** state, seeded
 * from RAND_bytes (OpenSSL, itself seeded by the OS) on first use and after
 * fork(): a process-wide fork generation, bumped by a pthread_atfork child
 * handler, is compared on every call (one relaxed load), because a forked
 * child inherits its parent's thread-local state and would otherwise emit
 * the same ids. xoshiro256** is not cryptographic; ids need uniqueness and
 * uniform bits (for probabilistic sampling), not secrecy, and it costs a few
 * instructions against ~100 ns for a RAND_bytes call.
 */
#include "ids.h"

#include <openssl/rand.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tls.h"

atomic_uint tw__fork_generation; /* bumped in the child after fork */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

TW__TLS tw__id_state tw__ids;

static void on_fork_child(void)
{
    /* Relaxed: the child is single-threaded right after fork. */
    atomic_fetch_add_explicit(&tw__fork_generation, 1, memory_order_relaxed);
}

static void install_atfork(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void tw__random_bytes(void *buf, size_t len)
{
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

void tw__ids_seed(tw__id_state *st)
{
    pthread_once(&atfork_once, install_atfork);
    uint64_t seed_words[4];
    tw__random_bytes(seed_words, sizeof seed_words);
    /* Run the seed through splitmix so an all-zero state is impossible. */
    for (int i = 0; i < 4; i++) {
        uint64_t x = seed_words[i] + (uint64_t)i;
        st->s[i] = splitmix64(&x);
    }
    st->generation = atomic_load_explicit(&tw__fork_generation, memory_order_relaxed);
    st->is_seeded = true;
}
