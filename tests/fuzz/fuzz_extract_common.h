/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_extract_common.h: the shared body of the text-codec
 * extract fuzz targets (fuzz_extract_jaeger.c, _b3.c, _w3c.c) and the
 * invariants every extracted context must keep. Header-only: run_fuzz.sh
 * builds each target from its one .c file plus the library.
 *
 * Input: byte 0 bit 0 picks the format (0 TEXT_MAP, 1 HTTP_HEADERS); the
 * rest is lines separated by '\n', each "key:value" split at the first ':'
 * (a line without ':' is a key with an empty value). Every key and value is
 * copied into an allocation of exactly its size, and the carrier hands out
 * each pair from a scratch copy that it overwrites afterwards, so ASan sees a
 * read past a NUL and a codec that keeps a carrier pointer.
 *
 * Invariants (abort on violation):
 *   - extract with and without an error out parameter agree (control flow never
 *     depends on err); it fails exactly when it sets an error, whose status is
 *     MALFORMED (message starting with one of the codec's header names and ':'),
 *     NOT_FOUND or NOMEM;
 *   - a context without ids is a hint and inject refuses it (INVALID_ARG);
 *   - a context with ids re-injects (same codec, same format) and re-extracts to
 *     the same trace id, span id, flags (and parent, tracestate, where the
 *     format carries them), with the baggage the format can carry unchanged;
 *   - the binary format round-trips it exactly (ids, wire flags, all baggage).
 */
#ifndef TW_FUZZ_EXTRACT_COMMON_H
#define TW_FUZZ_EXTRACT_COMMON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "propagation/propagation.h"

#define FUZZ_MAX_PAIRS 256

typedef struct fuzz_carrier {
    char *keys[FUZZ_MAX_PAIRS];
    char *values[FUZZ_MAX_PAIRS];
    size_t n;
} fuzz_carrier;

static inline void fuzz_fail(const char *what, const tw_span_context *c)
{
    char hex[40] = "-";
    if (c)
        tw_span_context_trace_id_hex(c, hex, sizeof hex);
    fprintf(stderr, "fuzz_extract: invariant broken: %s (trace %s)\n", what, hex);
    abort();
}

static inline char *fuzz_copy(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        abort();
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static inline void fuzz_carrier_parse(fuzz_carrier *fc, const uint8_t *data, size_t size)
{
    fc->n = 0;
    const uint8_t *end = data + size;
    for (const uint8_t *line = data; line < end && fc->n < FUZZ_MAX_PAIRS;) {
        const uint8_t *nl = memchr(line, '\n', (size_t)(end - line));
        const uint8_t *stop = nl ? nl : end;
        const uint8_t *colon = memchr(line, ':', (size_t)(stop - line));
        const uint8_t *key_end = colon ? colon : stop;
        fc->keys[fc->n] = fuzz_copy(line, (size_t)(key_end - line));
        fc->values[fc->n] =
            colon ? fuzz_copy(colon + 1, (size_t)(stop - colon - 1)) : fuzz_copy(line, 0);
        fc->n++;
        line = nl ? nl + 1 : end;
    }
}

static inline void fuzz_carrier_free(fuzz_carrier *fc)
{
    for (size_t i = 0; i < fc->n; i++) {
        free(fc->keys[i]);
        free(fc->values[i]);
    }
}

/* Hands each pair out of a scratch copy, overwritten after the handler returns. */
static inline tw_status fuzz_foreach(void *user_data, tw_carrier_handler_fn handler, void *data)
{
    const fuzz_carrier *fc = user_data;
    for (size_t i = 0; i < fc->n; i++) {
        size_t kl = strlen(fc->keys[i]), vl = strlen(fc->values[i]);
        char *k = fuzz_copy((const uint8_t *)fc->keys[i], kl);
        char *v = fuzz_copy((const uint8_t *)fc->values[i], vl);
        tw_status st = handler(data, k, v);
        memset(k, 'X', kl);
        memset(v, 'X', vl);
        free(k);
        free(v);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

static inline bool fuzz_starts_with_header(const char *message, const char *const *headers)
{
    for (size_t i = 0; headers[i]; i++) {
        size_t n = strlen(headers[i]);
        if (strncmp(message, headers[i], n) == 0 && message[n] == ':')
            return true;
    }
    return false;
}

static inline bool fuzz_has_other_case_key(const tw_span_context *c, const char *key)
{
    size_t n = tw_span_context_baggage_count(c);
    for (size_t i = 0; i < n; i++) {
        const char *k;
        tw_span_context_baggage_item(c, i, &k, NULL);
        if (strcmp(k, key) != 0 && strcasecmp(k, key) == 0)
            return true;
    }
    return false;
}

static inline bool fuzz_is_lower(const char *s)
{
    for (; *s; s++) {
        if (*s >= 'A' && *s <= 'Z')
            return false;
    }
    return true;
}

/* Baggage after a text round trip: nothing invented or altered; every item the
 * codec can carry (see docs/PROPAGATION.md) still there. */
static inline void fuzz_check_text_baggage(tw_codec codec, tw_format format,
                                           const tw_span_context *a, const tw_span_context *b)
{
    size_t nb = tw_span_context_baggage_count(b);
    for (size_t i = 0; i < nb; i++) {
        const char *k, *v;
        tw_span_context_baggage_item(b, i, &k, &v);
        const char *orig = tw_span_context_baggage_get(a, k);
        if (codec == TW_CODEC_JAEGER && !orig) {
            /* uberctx- keys come back lower-cased: find the original ignoring case. */
            size_t na = tw_span_context_baggage_count(a);
            for (size_t j = 0; j < na && !orig; j++) {
                const char *ak, *av;
                tw_span_context_baggage_item(a, j, &ak, &av);
                if (strcasecmp(ak, k) == 0)
                    orig = av;
            }
        }
        if (!orig)
            fuzz_fail("a baggage item appeared in the round trip", a);
        if (codec == TW_CODEC_W3C && strcmp(orig, v) != 0)
            fuzz_fail("a baggage value changed in the round trip", a);
    }
    size_t na = tw_span_context_baggage_count(a);
    size_t encoded = 0;
    for (size_t i = 0; i < na; i++) {
        const char *k, *v;
        tw_span_context_baggage_item(a, i, &k, &v);
        encoded += strlen(k) + 1 + 3 * strlen(v) + 1;
    }
    for (size_t i = 0; i < na; i++) {
        const char *k, *v;
        tw_span_context_baggage_item(a, i, &k, &v);
        bool is_token = tw__is_token(k, strlen(k));
        bool must_survive;
        if (codec == TW_CODEC_JAEGER)
            must_survive = (format == TW_FORMAT_TEXT_MAP || is_token) && fuzz_is_lower(k) &&
                           !fuzz_has_other_case_key(a, k);
        else /* W3C: within the header limits even when every byte is %-encoded */
            must_survive = is_token && encoded <= TW_BAGGAGE_MAX_TOTAL_BYTES &&
                           strlen(k) + 1 + 3 * strlen(v) <= TW_BAGGAGE_MAX_ITEM_BYTES;
        const char *got = tw_span_context_baggage_get(b, k);
        if (must_survive && (!got || strcmp(got, v) != 0))
            fuzz_fail("a baggage item was lost or changed in the round trip", a);
    }
}

/* The binary format carries everything a valid context has, exactly. */
static inline void fuzz_check_binary_round_trip(const tw_span_context *c)
{
    size_t need = 0;
    if (tw_binary_inject(c, NULL, 0, &need) != TW_E_LIMIT || need < 37)
        fuzz_fail("binary inject did not report its size", c);
    uint8_t *buf = malloc(need);
    size_t len = 0;
    if (!buf)
        abort();
    if (tw_binary_inject(c, buf, need - 1, &len) != TW_E_LIMIT || len != need)
        fuzz_fail("binary inject wrote into a short buffer", c);
    if (tw_binary_inject(c, buf, need, &len) != TW_OK || len != need)
        fuzz_fail("binary inject failed", c);
    tw_span_context *b = tw_binary_extract(buf, len, NULL, NULL, NULL);
    if (!b || b->trace_id_high != c->trace_id_high || b->trace_id_low != c->trace_id_low ||
        b->span_id != c->span_id || b->parent_id != c->parent_id)
        fuzz_fail("binary round trip changed the ids", c);
    if (b->flags != tw__wire_flags(c))
        fuzz_fail("binary round trip changed the flags", c);
    size_t n = tw_span_context_baggage_count(c);
    if (tw_span_context_baggage_count(b) != n)
        fuzz_fail("binary round trip changed the baggage count", c);
    for (size_t i = 0; i < n; i++) {
        const char *k, *v;
        tw_span_context_baggage_item(c, i, &k, &v);
        const char *got = tw_span_context_baggage_get(b, k);
        if (!got || strcmp(got, v) != 0)
            fuzz_fail("binary round trip changed a baggage item", c);
    }
    tw_span_context_unref(b);
    free(buf);
}

static inline void fuzz_check_text_round_trip(tw_codec codec, tw_format format, tw_propagator *p,
                                              const tw_span_context *a)
{
    tw_headers *h = tw_headers_new();
    tw_carrier_writer w = tw_headers_writer(h);
    if (!h || tw_propagator_inject(p, a, format, &w) != TW_OK)
        fuzz_fail("inject of an extracted context failed", a);
    tw_carrier_reader r = tw_headers_reader(h);
    tw_error *err = NULL;
    tw_span_context *b = tw_propagator_extract(p, format, &r, NULL, NULL, &err);
    if (!b) {
        fprintf(stderr, "re-extract: %s\n", tw_error_message(err));
        fuzz_fail("re-extract of an injected context failed", a);
    }
    if (!tw_span_context_is_valid(b) || b->trace_id_high != a->trace_id_high ||
        b->trace_id_low != a->trace_id_low || b->span_id != a->span_id)
        fuzz_fail("round trip changed the trace or span id", a);
    bool single_deferred = codec == TW_CODEC_B3_SINGLE && (a->flags & TW__FLAG_DEFERRED);
    uint64_t parent = codec == TW_CODEC_W3C || single_deferred ? 0 : a->parent_id;
    if (b->parent_id != parent)
        fuzz_fail("round trip changed the parent id", a);
    if (b->flags != a->flags)
        fuzz_fail("round trip changed the flags", a);
    const char *ts_a = tw_span_context_tracestate(a), *ts_b = tw_span_context_tracestate(b);
    if (codec == TW_CODEC_W3C &&
        ((ts_a == NULL) != (ts_b == NULL) || (ts_a && strcmp(ts_a, ts_b) != 0)))
        fuzz_fail("round trip changed the tracestate", a);
    fuzz_check_text_baggage(codec, format, a, b);
    tw_span_context_unref(b);
    tw_headers_free(h);
}

/* The body of LLVMFuzzerTestOneInput for one text codec. @headers: the
 * names a MALFORMED message may start with, NULL-terminated. */
static inline int fuzz_extract_text(const uint8_t *data, size_t size, tw_codec codec,
                                    const char *const *headers)
{
    if (size < 1)
        return 0;
    tw_format format = (data[0] & 1) ? TW_FORMAT_HTTP_HEADERS : TW_FORMAT_TEXT_MAP;
    fuzz_carrier fc;
    fuzz_carrier_parse(&fc, data + 1, size - 1);
    tw_carrier_reader reader = {fuzz_foreach, &fc};
    tw_propagator *p = tw_propagator_new(&codec, 1, NULL);
    if (!p)
        abort();

    tw_error *err = NULL;
    tw_span_context *c = tw_propagator_extract(p, format, &reader, NULL, NULL, &err);
    tw_span_context *again = tw_propagator_extract(p, format, &reader, NULL, NULL, NULL);
    if ((c == NULL) != (again == NULL))
        fuzz_fail("the result depends on whether err is NULL", c);
    if (again && (again->trace_id_low != c->trace_id_low || again->span_id != c->span_id ||
                  again->flags != c->flags))
        fuzz_fail("two extracts of the same carrier differ", c);
    tw_span_context_unref(again);

    if (!c) {
        if (!err)
            fuzz_fail("extract failed without an error", NULL);
        tw_status st = tw_error_status(err);
        if (st == TW_E_MALFORMED && !fuzz_starts_with_header(tw_error_message(err), headers)) {
            fprintf(stderr, "message: %s\n", tw_error_message(err));
            fuzz_fail("a MALFORMED message does not start with the header's name", NULL);
        }
        if (st != TW_E_MALFORMED && st != TW_E_NOT_FOUND && st != TW_E_NOMEM)
            fuzz_fail("unexpected error status", NULL);
        tw_error_free(err);
    } else {
        if (err)
            fuzz_fail("extract succeeded but set an error", c);
        tw_headers *h = tw_headers_new();
        tw_carrier_writer w = tw_headers_writer(h);
        if (!tw_span_context_is_valid(c)) {
            if (c->trace_id_high || c->trace_id_low || c->span_id)
                fuzz_fail("a hint carries half of an id", c);
            if (tw_propagator_inject(p, c, format, &w) != TW_E_INVALID_ARG ||
                tw_headers_count(h) != 0)
                fuzz_fail("inject accepted a hint", c);
        } else {
            fuzz_check_text_round_trip(codec, format, p, c);
            fuzz_check_binary_round_trip(c);
        }
        tw_headers_free(h);
        tw_span_context_unref(c);
    }
    tw_propagator_free(p);
    fuzz_carrier_free(&fc);
    return 0;
}

#endif /* TW_FUZZ_EXTRACT_COMMON_H */
