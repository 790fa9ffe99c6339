/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_extract_w3c.c: libFuzzer target for extract with the
 * W3C codec (traceparent, tracestate, baggage). Input format and the invariants checked:
 * fuzz_extract_common.h. Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/extract_w3c/, tokens in tests/fuzz/extract_w3c.dict.
 */
#include "fuzz_extract_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const headers[] = {"traceparent", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_extract_text(data, size, TW_CODEC_W3C, headers);
}
