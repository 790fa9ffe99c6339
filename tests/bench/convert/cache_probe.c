/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/convert/cache_probe.c: how long a load from memory takes right
 * now, for the conversion benchmark (run_convert_bench.sh, `make bench`) to
 * print next to each timed row.
 *
 *   cache_probe [MIB [LOADS]]
 *
 * Follows a random cycle through MIB MiB (default 8: about the conversion's
 * assembly window of 10,000 spans) one 64-byte line at a time, each load's
 * address the previous load's value, so that no two loads overlap and no
 * prefetcher guesses the next: the time per load is the latency of wherever
 * the lines live. Prints it in nanoseconds ("%.1f\n"), the median of five
 * rounds of LOADS / 5 loads (default 2,000,000 in all).
 *
 * Why: on this project's virtual machine the same conversion runs up to 2.4
 * times slower for hours at a time. This probe read 120-225 ns over 8 MiB in
 * slow minutes (other tenants hold the L3: beyond about 2 MiB every load
 * goes to DRAM); its first version read 19.5 ns in a fast one (the
 * processor's 32 MiB L3 is ours). The conversions, which revisit each span
 * 10,000 spans after decoding it, slow down with it (CONTRIBUTING.md,
 * "Benchmark").
 *
 * Huge pages are asked for (madvise) so that the figure is the cache's, not
 * the TLB's; without them the first version read about 10% higher over
 * 8 MiB (197 against 180 ns). Exit status 0, or 2 on
 * a usage error or allocation failure.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* madvise's MADV_HUGEPAGE */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define LINE 64u
#define ROUNDS 5

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    char *end;
    unsigned long mib = argc > 1 ? strtoul(argv[1], &end, 10) : 8;
    if (argc > 1 && (*end || mib == 0 || mib > 4096)) {
        fprintf(stderr, "usage: cache_probe [MIB (1-4096) [LOADS]]\n");
        return 2;
    }
    unsigned long loads = argc > 2 ? strtoul(argv[2], &end, 10) : 2000000;
    if (argc > 2 && (*end || loads < ROUNDS)) {
        fprintf(stderr, "usage: cache_probe [MIB (1-4096) [LOADS]]\n");
        return 2;
    }
    size_t bytes = (size_t)mib << 20, n = bytes / LINE, stride = LINE / sizeof(size_t);
    size_t *mem = NULL;
    if (posix_memalign((void **)&mem, (size_t)2 << 20, bytes) != 0) {
        fprintf(stderr, "cache_probe: cannot allocate %lu MiB\n", mib);
        return 2;
    }
    (void)madvise(mem, bytes, MADV_HUGEPAGE); /* best effort */
    size_t *order = malloc(n * sizeof *order);
    if (!order) {
        fprintf(stderr, "cache_probe: cannot allocate %lu MiB\n", mib);
        return 2;
    }
    /* Sattolo's shuffle: a random permutation that is one cycle through
     * every line (xorshift64, fixed seed: the same walk in every run). */
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = n - 1; i > 0; i--) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t j = (size_t)(x % i);
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        mem[order[i] * stride] = order[(i + 1) % n] * stride;
    free(order);
    size_t p = 0;
    for (size_t i = 0; i < n; i++) /* one lap first: pages faulted in, TLB warm */
        p = mem[p];
    double per_load[ROUNDS];
    unsigned long each = loads / ROUNDS;
    for (int r = 0; r < ROUNDS; r++) {
        double t0 = now_ns();
        __asm__ volatile("" : "+r"(p) : : "memory");
        for (unsigned long i = 0; i < each; i++)
            p = mem[p];
        /* The chain must run between the two clock reads: the compiler
         * moved it past the second at -O2 before these barriers. */
        __asm__ volatile("" : "+r"(p) : : "memory");
        per_load[r] = (now_ns() - t0) / (double)each;
    }
    qsort(per_load, ROUNDS, sizeof per_load[0], cmp_double);
    printf("%.1f\n", per_load[ROUNDS / 2]);
    free(mem);
    return 0;
}
