/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_extract_jaeger.c: libFuzzer target for extract with the
 * Jaeger codec (uber-trace-id, uberctx-*, jaeger-baggage, jaeger-debug-id). Input format and the
 * invariants checked: fuzz_extract_common.h. Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/extract_jaeger/, tokens in tests/fuzz/extract_jaeger.dict.
 */
#include "fuzz_extract_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const headers[] = {"uber-trace-id", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_extract_text(data, size, TW_CODEC_JAEGER, headers);
}
