/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/harness.h: the contract between a CUnit test program and the
 * shared main() in harness.c.
 *
 * Each unit test program is one test_<module>.c plus harness.c. The test
 * file defines tw_test_register(), which adds its suite (named by source
 * path, "wire/jaeger_thrift") and tests with CU_add_suite / CU_add_test;
 * harness.c owns the registry, runs everything verbosely and turns any
 * failure into a non-zero exit status for the automake test driver.
 */
#ifndef TW_TESTS_HARNESS_H
#define TW_TESTS_HARNESS_H

#include <stddef.h>

#include <CUnit/CUnit.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define TW_TEST_HAVE_VALGRIND_H 1
#endif
#endif

/* Registers the program's suites and tests. Called once, after the CUnit
 * registry is initialised; a failed CU_add_* is reported by main(). */
void tw_test_register(void);

/* How many random rounds a randomised suite runs: @n, or a tenth of it (at
 * least 1) when the program runs under valgrind, which runs this code 20 to
 * 50 times slower. The same generator and the same checks run either way:
 * valgrind's stage looks for memory errors and leaks on the code paths, which
 * a tenth of the rounds still reach, while the distcheck (or plain, when it
 * runs alone), ASan and TSan stages run every round. Detected with
 * valgrind's client request (when its header was there at build time), not
 * a switch of ours. */
static inline size_t tw_test_rounds(size_t n)
{
#ifdef TW_TEST_HAVE_VALGRIND_H
    if (RUNNING_ON_VALGRIND)
        return n / 10 ? n / 10 : 1;
#endif
    return n;
}

#endif /* TW_TESTS_HARNESS_H */
