/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_redact.c: libFuzzer target for the rule every message
 * goes through (wire/core/redact.[ch]), on text the fuzzer makes with a
 * credential planted in it. Checks, for tw__redact_text and tw__redact_url
 * and every output size up to the full one:
 *   - the output is NUL-terminated inside its buffer and its length is
 *     what the call returns;
 *   - no control byte reaches it;
 *   - a cut output is a prefix of the full one (nothing shown in part);
 *   - the planted password and query value never appear, whatever text
 *     the fuzzer puts before and after them.
 * Input: the first byte picks where the plant goes (bit 0: a query value,
 * else a user:password), the rest splits at its first 0xff byte into the
 * text before and after it; 'Z' is taken out of both so that only the
 * plant holds the marker. Built and run by tests/fuzz/run_fuzz.sh.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MARKER "ZqZ7"

static void check(const char *in, const char *full, size_t full_len,
                  size_t (*fn)(const char *, char *, size_t))
{
    if (strlen(full) != full_len || strstr(full, MARKER))
        abort();
    for (size_t i = 0; i < full_len; i++) {
        unsigned char c = (unsigned char)full[i];
        if (c < 0x20 || c == 0x7f)
            abort();
    }
    /* Every cut: a prefix of the full output. */
    char *cut = malloc(full_len + 2);
    if (!cut)
        return;
    for (size_t n = 1; n <= full_len + 1; n++) {
        memset(cut, 'x', full_len + 2);
        size_t len = fn(in, cut, n);
        if (len >= n || cut[len] != '\0' || strlen(cut) != len || memcmp(cut, full, len) != 0)
            abort();
    }
    free(cut);
}

static size_t url_fn(const char *in, char *out, size_t size)
{
    tw__redact_url(in, out, size);
    return size ? strlen(out) : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    bool in_query = data[0] & 1;
    const uint8_t *rest = data + 1;
    size_t n = size - 1;
    const uint8_t *cut = memchr(rest, 0xff, n);
    size_t before = cut ? (size_t)(cut - rest) : n;
    const char *plant = in_query ? "http://h/p?k=" MARKER : "http://u:" MARKER "@h/p";
    size_t plant_len = strlen(plant);
    char *in = malloc(n + plant_len + 1);
    if (!in)
        return 0;
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == before) {
            memcpy(in + w, plant, plant_len);
            w += plant_len;
            continue; /* the 0xff byte itself */
        }
        if (rest[i] != 'Z' && rest[i] != '\0')
            in[w++] = (char)rest[i];
    }
    if (before == n) {
        memcpy(in + w, plant, plant_len);
        w += plant_len;
    }
    in[w] = '\0';
    /* Output grows at most 4x (\xNN per byte) plus masks. */
    size_t cap = 4 * w + 16;
    char *full = malloc(cap);
    if (full) {
        size_t len = tw__redact_text(in, full, cap);
        check(in, full, len, tw__redact_text);
        tw__redact_url(in, full, cap);
        check(in, full, strlen(full), url_fn);
        free(full);
    }
    free(in);
    return 0;
}
