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
 * plant holds the marker.
 * With bit 1 of the first byte set, the whole-URL mode (tw__redact_url on
 * a string known to be one URL) is checked against an exact oracle
 * instead: the rest splits at 0xff bytes into a user-info, a host, a path,
 * two query values and a fragment (any bytes but NUL; a query value
 * neither '&' nor '#', which end it; host and path from a plain alphabet),
 * put together as http://USER@HOST/PATH?k=V1&sig=V2#FRAG; the output must
 * be exactly "http://" "***@HOST/PATH?k=***&sig=***#***" (an empty value
 * or fragment: no ***), or "http://" "***" when the user-info holds '?',
 * '#' or ';' or a value or the fragment holds '@' (the '@' could then
 * belong to either), so that no byte of the user-info, a query value or the fragment
 * survives, whatever it holds (a quote, a space, '/', '@', a control byte).
 * Built and run by tests/fuzz/run_fuzz.sh.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
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

/* Appends @len bytes of @p to @out at *@w, NUL left out, and, when @plain,
 * each byte outside [a-z0-9.:/-] mapped into [a-z] (host and path). */
static void add(char *out, size_t *w, const uint8_t *p, size_t len, bool plain)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t c = p[i];
        if (!c)
            continue;
        if (plain && !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == ':' ||
                       c == '/' || c == '-'))
            c = (uint8_t)('a' + c % 26);
        out[(*w)++] = (char)c;
    }
}

static void whole_url(const uint8_t *data, size_t size)
{
    /* The six fields, split at 0xff (missing ones are empty). */
    const uint8_t *field[6] = {0};
    size_t len[6] = {0};
    size_t k = 0, start = 0;
    for (size_t i = 0; i <= size && k < 6; i++) {
        if (i == size || (data[i] == 0xff && k < 5)) {
            field[k] = data + start;
            len[k++] = i - start;
            start = i + 1;
        }
    }
    /* Query values: '&' and '#' end one, so they are not in it. */
    uint8_t *vals[2] = {NULL, NULL};
    size_t vlen[2] = {0, 0};
    for (int v = 0; v < 2; v++) {
        vals[v] = malloc(len[3 + v] + 1);
        if (!vals[v])
            goto done;
        for (size_t i = 0; i < len[3 + v]; i++) {
            uint8_t c = field[3 + v][i];
            if (c && c != '&' && c != '#')
                vals[v][vlen[v]++] = c;
        }
    }
    size_t total = 64;
    for (int f = 0; f < 6; f++)
        total += len[f];
    char *in = malloc(total), *want = malloc(total + 64);
    if (!in || !want) {
        free(in);
        free(want);
        goto done;
    }
    size_t w = 0;
    memcpy(in + w, "http://", 7), w += 7;
    size_t user_at = w;
    add(in, &w, field[0], len[0], false);
    size_t user_end = w;
    in[w++] = '@';
    size_t host_at = w;
    add(in, &w, field[1], len[1], true);
    in[w++] = '/';
    add(in, &w, field[2], len[2], true);
    size_t path_end = w;
    memcpy(in + w, "?k=", 3), w += 3;
    add(in, &w, vals[0], vlen[0], false);
    size_t v1_len = w - (path_end + 3);
    memcpy(in + w, "&sig=", 5), w += 5;
    size_t v2_at = w;
    add(in, &w, vals[1], vlen[1], false);
    size_t v2_len = w - v2_at;
    in[w++] = '#';
    size_t frag_at = w;
    add(in, &w, field[5], len[5], false);
    in[w] = '\0';
    bool is_ambiguous = memchr(in + path_end, '@', w - path_end) != NULL;
    for (size_t i = user_at; i < user_end; i++)
        is_ambiguous |= in[i] == '?' || in[i] == '#' || in[i] == ';';
    if (is_ambiguous) {
        snprintf(want, total + 64, "http://***");
    } else {
        size_t n = 0;
        n += (size_t)sprintf(want + n, "http://***@");
        memcpy(want + n, in + host_at, path_end - host_at), n += path_end - host_at;
        n += (size_t)sprintf(want + n, "?k=%s&sig=%s#%s", v1_len ? "***" : "", v2_len ? "***" : "",
                             w > frag_at ? "***" : "");
    }
    size_t cap = 4 * w + 16;
    char *full = malloc(cap);
    if (full) {
        tw__redact_url(in, full, cap);
        if (strcmp(full, want) != 0)
            abort();
        check(in, full, strlen(full), url_fn);
        free(full);
    }
    free(in);
    free(want);
done:
    free(vals[0]);
    free(vals[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 4096)
        return 0;
    if (data[0] & 2) {
        whole_url(data + 1, size - 1);
        return 0;
    }
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
