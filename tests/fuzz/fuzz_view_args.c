/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_view_args.c: libFuzzer target for the parsers of the
 * views' command-line values (bridge/views/select.c): durations
 * (--min-duration), times (--since, --until), trace id prefixes (--trace)
 * and `tracewire diff`'s sides (PREFIX, FILE, PREFIX@FILE). The input is one
 * argument (up to its first NUL). Each parser must accept or refuse it with a
 * reason, never crash, overflow or leak, and what it accepts must be
 * well-formed: a duration >= 0, a prefix of 1-32 lower-case hex digits, a
 * side with a prefix or a path inside the argument.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in tests/fuzz/corpus/view_args/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views/views.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_view_args: %s\n", what);
    abort();
}

static bool odd_exists(const char *path)
{
    return strlen(path) % 2 == 1; /* some hex arguments "exist": the ambiguity path runs */
}

static void check_prefix(const char *p)
{
    size_t n = strlen(p);
    if (n == 0 || n > 32)
        fail("a prefix of the wrong length was accepted");
    for (size_t i = 0; i < n; i++) {
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
            fail("a prefix that is not lower-case hex was accepted");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *arg = malloc(size + 1);
    if (!arg)
        return 0;
    memcpy(arg, data, size);
    arg[size] = '\0';
    char why[512];

    int64_t us = -1;
    why[0] = '\0';
    if (twv_parse_duration(arg, &us, why, sizeof why)) {
        if (us < 0)
            fail("a negative duration was accepted");
    } else if (!why[0]) {
        fail("a duration was refused without a reason");
    }

    why[0] = '\0';
    if (!twv_parse_time(arg, INT64_C(1700000000000000), &us, why, sizeof why) && !why[0])
        fail("a time was refused without a reason");

    char prefix[33];
    why[0] = '\0';
    if (twv_parse_trace_prefix(arg, prefix, why, sizeof why)) {
        check_prefix(prefix);
        twv_filter f = {0};
        memcpy(f.trace_prefix, prefix, sizeof prefix);
        (void)twv_filter_match_id(&f, 0, 0x4d1e000000000001ull);
        (void)twv_filter_match_id(&f, 0x4d1eull, 1);
    } else if (!why[0]) {
        fail("a prefix was refused without a reason");
    }

    twv_side side;
    why[0] = '\0';
    if (twv_parse_side(arg, odd_exists, &side, why, sizeof why)) {
        if (side.prefix[0])
            check_prefix(side.prefix);
        if (side.path && (side.path < arg || side.path > arg + size || !side.path[0]))
            fail("a side's path is not a non-empty part of the argument");
        if (!side.prefix[0] && !side.path)
            fail("a side with neither prefix nor path");
    } else if (!why[0]) {
        fail("a side was refused without a reason");
    }
    free(arg);
    return 0;
}
