/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_extract_binary.c: libFuzzer target for tw_binary_extract
 * (Jaeger's binary layout, sdk/src/propagation/binary.c). The input is the
 * carrier itself, copied into an allocation of exactly its size so that ASan
 * catches any read past the end.
 *
 * Invariants (abort on violation): extract with and without an error out
 * parameter agree; failure sets an error whose status is MALFORMED (message
 * starting with "binary:") or NOMEM; success returns a context with ids
 * whose baggage obeys the limits, and which re-injects (after a correct size
 * query, and refusing a buffer one byte short) and re-extracts to the same
 * ids, flags and baggage. When extract reported no problem, the re-injected
 * bytes equal the input exactly (the layout has one encoding).
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/extract_binary/.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz_extract_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    tw_error *err = NULL;
    size_t n_warnings = 0;
    tw_span_context *c = tw__binary_extract(buf, size, NULL, NULL, &n_warnings, &err);
    tw_span_context *again = tw_binary_extract(buf, size, NULL, NULL, NULL);
    if ((c == NULL) != (again == NULL))
        fuzz_fail("the result depends on whether err is NULL", c);
    tw_span_context_unref(again);
    if (!c) {
        tw_status st = tw_error_status(err);
        if (!err || (st != TW_E_MALFORMED && st != TW_E_NOMEM))
            fuzz_fail("failure without a MALFORMED or NOMEM error", NULL);
        if (st == TW_E_MALFORMED && strncmp(tw_error_message(err), "binary: ", 8) != 0)
            fuzz_fail("a MALFORMED message does not start with \"binary: \"", NULL);
        tw_error_free(err);
        free(buf);
        return 0;
    }
    if (err || !tw_span_context_is_valid(c))
        fuzz_fail("success with an error set, or without ids", c);
    size_t n = tw_span_context_baggage_count(c), bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const char *k, *v;
        tw_span_context_baggage_item(c, i, &k, &v);
        if (!*k || strlen(k) + strlen(v) > TW_BAGGAGE_MAX_ITEM_BYTES)
            fuzz_fail("an item breaks the per-item limits", c);
        bytes += strlen(k) + strlen(v);
    }
    if (n > TW_BAGGAGE_MAX_ITEMS || bytes > TW_BAGGAGE_MAX_TOTAL_BYTES)
        fuzz_fail("the baggage breaks the limits", c);
    fuzz_check_binary_round_trip(c);
    if (n_warnings == 0) {
        size_t len = 0;
        uint8_t *out = malloc(size);
        if (!out)
            abort();
        if (tw_binary_inject(c, out, size, &len) != TW_OK || len != size ||
            memcmp(out, buf, size) != 0)
            fuzz_fail("a clean input does not re-inject to the same bytes", c);
        free(out);
    }
    tw_span_context_unref(c);
    free(buf);
    return 0;
}
