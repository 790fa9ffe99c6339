/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/harness.c: main() of every unit test program (see harness.h).
 *
 * It initialises the CUnit registry, lets the test file register its suites,
 * runs them with the verbose basic interface (one line per test in the
 * automake .log file), prints the failure list and exits 1 when a test or a
 * suite fixture failed, 2 when CUnit itself could not run, so that `make
 * check` reports the program as failed either way.
 */
#include <stdio.h>
#include <stdlib.h>

#include <CUnit/Basic.h>

#include "harness.h"

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS) {
        fprintf(stderr, "harness: cannot initialise CUnit: %s\n", CU_get_error_msg());
        return 2;
    }
    tw_test_register();
    if (CU_get_error() != CUE_SUCCESS) {
        fprintf(stderr, "harness: registering tests failed: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    if (CU_basic_run_tests() != CUE_SUCCESS) {
        fprintf(stderr, "harness: running tests failed: %s\n", CU_get_error_msg());
        CU_cleanup_registry();
        return 2;
    }
    /* Assertion failures and failed suite init/cleanup both produce failure
     * records; counting both catches a suite whose fixture never built. */
    unsigned int failures = CU_get_number_of_failures();
    unsigned int records = CU_get_number_of_failure_records();
    unsigned int suites_failed = CU_get_number_of_suites_failed();
    if (records > 0) {
        printf("\n");
        CU_basic_show_failures(CU_get_failure_list());
        printf("\n");
    }
    CU_cleanup_registry();
    return failures > 0 || records > 0 || suites_failed > 0 ? 1 : 0;
}
