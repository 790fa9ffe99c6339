/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_extract_b3.c: libFuzzer target for extract with the
 * B3 codecs (the b3 header and
 * X-B3-*; bit 1 of the first byte picks TW_CODEC_B3, which re-injects the
 * multi headers, or TW_CODEC_B3_SINGLE, which re-injects the b3 header). Input format and the
 * invariants checked: fuzz_extract_common.h. Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/extract_b3/, tokens in tests/fuzz/extract_b3.dict.
 */
#include "fuzz_extract_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const headers[] = {
    "b3", "X-B3-TraceId", "X-B3-SpanId", "X-B3-ParentSpanId", "X-B3-Sampled", "X-B3-Flags", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Bit 1 of the first byte picks the codec that re-injects: multi or single. */
    tw_codec codec = size > 0 && (data[0] & 2) ? TW_CODEC_B3_SINGLE : TW_CODEC_B3;
    return fuzz_extract_text(data, size, codec, headers);
}
