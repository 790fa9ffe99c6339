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

#include <CUnit/CUnit.h>

/* Registers the program's suites and tests. Called once, after the CUnit
 * registry is initialised; a failed CU_add_* is reported by main(). */
void tw_test_register(void);

#endif /* TW_TESTS_HARNESS_H */
