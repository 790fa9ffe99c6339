/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/span_corpus.h: a large, varied, reproducible corpus of
 * span models and processes for the differential tests of the fast paths
 * (test_zipkin_text.c: direct Zipkin writer vs Jansson; test_dapper_fast.c:
 * scanner decoder vs Jansson decoder). Header-only, seeded PRNG.
 *
 * What it varies: 64/128-bit ids, parent absent/equal/other, flags incl.
 * debug, shared, is_duration_unknown, start and duration at their edges,
 * every span.kind spelling, peer.* tags of every form, error tags of every
 * type with and without a message log or otel.status_description, process
 * tags ip/ipv6/port in every form, repeated keys, strings with control
 * characters, quotes, backslashes, '/', DEL, valid multi-byte UTF-8,
 * invalid UTF-8 (stray continuation, overlong, surrogates, truncated, above
 * U+10FFFF) and NUL bytes, binary values with NULs, huge ints, NaN/Inf
 * doubles, many tags (beyond the direct writer's table), empty logs.
 */
#ifndef TW_TESTS_WIRE_SPAN_CORPUS_H
#define TW_TESTS_WIRE_SPAN_CORPUS_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "wire/model/span_data.h"

typedef struct {
    uint64_t state;
} corpus_rng;

/* corpus_span() options. */
enum {
    CORPUS_INVALID_KEYS = 1, /* keys that are not valid UTF-8 (writers repair them) */
    CORPUS_EMPTY_KEYS = 2    /* "" as a key (the Dapper decoder refuses those) */
};

static inline uint64_t corpus_next(corpus_rng *r)
{
    /* splitmix64 */
    uint64_t z = (r->state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static inline size_t corpus_below(corpus_rng *r, size_t n)
{
    return (size_t)(corpus_next(r) % n);
}

/* Appends a random piece to buf (cap bytes) at *len. */
static inline void corpus_piece(corpus_rng *r, char *buf, size_t cap, size_t *len, bool allow_nul,
                                bool allow_invalid)
{
    static const char *const pieces[] = {
        "a",  "Z",  "0",    " ",    "/",    "\"", "\\",    "\b", "\f",           "\n",
        "\r", "\t", "\x01", "\x1f", "\x7f", "é",  "€",     "😀",  "\xe2\x80\xa8", "{",
        "}",  "[",  "]",    ":",    ",",    "=",  "GET /x"};
    static const char *const invalid[] = {"\x80",         "\xc0\xaf",     "\xff",
                                          "\xed\xa0\x80", "\xe0\x80\x80", "\xf4\x90\x80\x80",
                                          "\xe2\x82",     "\xf0\x9f\x98", "\xc3"};
    const char *p;
    size_t n;
    size_t pick = corpus_below(r, 40);
    if (allow_nul && pick == 0) {
        p = "\0";
        n = 1;
    } else if (allow_invalid && pick < 5) {
        p = invalid[corpus_below(r, sizeof invalid / sizeof invalid[0])];
        n = strlen(p);
    } else {
        p = pieces[corpus_below(r, sizeof pieces / sizeof pieces[0])];
        n = strlen(p);
    }
    if (*len + n < cap) {
        memcpy(buf + *len, p, n);
        *len += n;
    }
    buf[*len] = '\0';
}

static inline size_t corpus_string(corpus_rng *r, char *buf, size_t cap, bool allow_nul,
                                   bool allow_invalid)
{
    size_t len = 0, n = corpus_below(r, 12);
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        corpus_piece(r, buf, cap, &len, allow_nul, allow_invalid);
    return len;
}

/* A random typed value; string/binary bytes in @buf (cap >= 64). @key
 * steers the value toward what that key's rules look at. */
static inline tw_value corpus_value(corpus_rng *r, const char *key, char *buf, size_t cap)
{
    static const char with_nul[] = "1.2.3.4\0junk";
    static const char *const texts[] = {
        "client", "SERVER",  "Producer", "consumer",    "internal",       "true", "FALSE", "false",
        "True",   "1.2.3.4", "::1",      "2001:DB8::1", "::ffff:1.2.3.4", "8080", "70000", "0",
        "",       "65535",   "boom",     with_nul,      "10.0.0.256",     "08080"};
    static const int64_t ints[] = {0,
                                   1,
                                   -1,
                                   INT64_MIN,
                                   INT64_MAX,
                                   80,
                                   65535,
                                   65536,
                                   0x7f000001,
                                   -1062731775,
                                   (int64_t)UINT32_MAX,
                                   (int64_t)UINT32_MAX + 1,
                                   INT32_MIN,
                                   9007199254740993LL,
                                   -9007199254740993LL};
    static const double dbls[] = {0.0, -0.0, 0.1, 1e300, 5e-324, 1.5, -2.25, 1e21, 123456789.125};
    tw_value v;
    memset(&v, 0, sizeof v);
    bool is_addressish = strncmp(key, "peer.", 5) == 0 || strcmp(key, "ip") == 0 ||
                         strcmp(key, "ipv6") == 0 || strcmp(key, "port") == 0 ||
                         strcmp(key, "span.kind") == 0 || strcmp(key, "error") == 0;
    switch (corpus_below(r, is_addressish ? 7 : 6)) {
    case 0:
    case 6: {
        size_t k = corpus_below(r, sizeof texts / sizeof texts[0]);
        size_t len = texts[k] == with_nul ? sizeof with_nul - 1 : strlen(texts[k]);
        memcpy(buf, texts[k], len + 1);
        v.type = TW_VALUE_STRING;
        v.as.str = buf;
        v.len = len;
        break;
    }
    case 1:
        v.type = TW_VALUE_STRING;
        v.len = corpus_string(r, buf, cap, true, true);
        v.as.str = buf;
        break;
    case 2:
        v.type = TW_VALUE_BOOL;
        v.as.boolean = corpus_below(r, 2);
        break;
    case 3:
        v.type = TW_VALUE_INT64;
        v.as.i64 = corpus_below(r, 3) ? ints[corpus_below(r, sizeof ints / sizeof ints[0])]
                                      : (int64_t)corpus_next(r);
        break;
    case 4: {
        v.type = TW_VALUE_DOUBLE;
        size_t k = corpus_below(r, 12);
        v.as.dbl = k < 9 ? dbls[k] : k == 9 ? NAN : k == 10 ? INFINITY : -INFINITY;
        break;
    }
    case 5: {
        size_t len = corpus_below(r, 3) ? corpus_below(r, 20) : 16;
        for (size_t i = 0; i < len; i++)
            buf[i] = (char)(corpus_below(r, 4) ? corpus_next(r) : 0);
        v.type = TW_VALUE_BINARY;
        v.as.bin = (const uint8_t *)buf;
        v.len = len;
        break;
    }
    }
    return v;
}

static inline const char *corpus_key(corpus_rng *r, char *buf, size_t cap, int options)
{
    static const char *const keys[] = {"span.kind",
                                       "error",
                                       "peer.service",
                                       "peer.ipv4",
                                       "peer.ipv6",
                                       "peer.port",
                                       "otel.status_description",
                                       "component",
                                       "ip",
                                       "ipv6",
                                       "port",
                                       "hostname",
                                       "event",
                                       "message",
                                       "http.url",
                                       "peer.hostname",
                                       "k",
                                       "",
                                       "a/b"};
    if (corpus_below(r, 3)) {
        const char *k = keys[corpus_below(r, sizeof keys / sizeof keys[0])];
        snprintf(buf, cap, "%s", k);
    } else {
        corpus_string(r, buf, cap, false, options & CORPUS_INVALID_KEYS);
    }
    if (!buf[0] && !(options & CORPUS_EMPTY_KEYS))
        snprintf(buf, cap, "e");
    return buf;
}

static inline bool corpus_add_tag(corpus_rng *r, tw__span_data *s, int options)
{
    char key[96], val[160];
    corpus_key(r, key, sizeof key, options);
    tw_value v = corpus_value(r, key, val, sizeof val);
    tw__tag *slot = tw__span_data_push_tag(s);
    bool was_truncated = false;
    if (!slot || !tw__tag_set(&s->arena, slot, key, &v, SIZE_MAX, &was_truncated))
        return false;
    s->n_tags++;
    return true;
}

/* Span number @i of the corpus (deterministic in @seed, @i); NULL on
 * allocation failure. @process is initialised and filled (tw__process_clear
 * it); *has_process says whether to pass it (else NULL). @options: CORPUS_*. */
static inline tw__span_data *corpus_span(uint64_t seed, size_t i, tw__process *process,
                                         bool *has_process, int options)
{
    corpus_rng r = {seed * 1000003u + i};
    tw__process_init(process);
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    char buf[160];
    s->trace_id_high = corpus_below(&r, 2) ? corpus_next(&r) : 0;
    s->trace_id_low = corpus_next(&r) | 1;
    s->span_id = corpus_next(&r) | 1;
    switch (corpus_below(&r, 3)) {
    case 0:
        s->parent_id = 0;
        break;
    case 1:
        s->parent_id = s->span_id + 1;
        break;
    default:
        s->parent_id = corpus_next(&r);
    }
    s->flags = (uint32_t)corpus_below(&r, 16);
    s->shared = corpus_below(&r, 3) == 0;
    s->is_duration_unknown = corpus_below(&r, 4) == 0;
    static const int64_t starts[] = {0, 1, 1700000000000000, INT64_MAX / 2};
    s->start_us = starts[corpus_below(&r, 4)];
    s->duration_us = corpus_below(&r, 3) ? (int64_t)corpus_below(&r, 100000) : 0;
    size_t op_len = corpus_string(&r, buf, sizeof buf, false, true);
    if (!tw__span_data_set_operation(s, buf, op_len))
        goto fail;
    size_t n_tags = corpus_below(&r, 12) ? corpus_below(&r, 12) : 60 + corpus_below(&r, 20);
    for (size_t t = 0; t < n_tags; t++) {
        if (!corpus_add_tag(&r, s, options))
            goto fail;
    }
    size_t n_logs = corpus_below(&r, 4);
    for (size_t l = 0; l < n_logs; l++) {
        size_t n_fields = corpus_below(&r, 4);
        tw__log *log = tw__span_data_push_log(s, n_fields);
        if (!log)
            goto fail;
        log->timestamp_us = (int64_t)corpus_below(&r, 1000) + s->start_us;
        for (size_t f = 0; f < n_fields; f++) {
            char key[96], val[160];
            tw_value v;
            if (corpus_below(&r, 2)) {
                snprintf(key, sizeof key, "%s", corpus_below(&r, 2) ? "event" : "message");
                v.type = TW_VALUE_STRING;
                v.as.str = corpus_below(&r, 2) ? "error" : "boom \"x\"\n";
                v.len = strlen(v.as.str);
            } else {
                corpus_key(&r, key, sizeof key, options);
                v = corpus_value(&r, key, val, sizeof val);
            }
            bool was_truncated = false;
            if (!tw__tag_set(&s->arena, &log->fields[f], key, &v, SIZE_MAX, &was_truncated))
                goto fail;
            log->n_fields++;
        }
        s->n_logs++;
    }
    size_t n_refs = corpus_below(&r, 3);
    for (size_t k = 0; k < n_refs; k++) {
        if (!tw__span_data_add_ref(s, corpus_below(&r, 2) ? TW__REF_CHILD_OF : TW__REF_FOLLOWS_FROM,
                                   corpus_below(&r, 2) ? corpus_next(&r) : 0, corpus_next(&r) | 1,
                                   corpus_next(&r) | 1))
            goto fail;
    }
    *has_process = corpus_below(&r, 8) != 0;
    corpus_string(&r, buf, sizeof buf, false, true);
    if (!tw__process_set_service(process, corpus_below(&r, 4) ? buf : "frontend"))
        goto fail;
    size_t n_ptags = corpus_below(&r, 6);
    for (size_t t = 0; t < n_ptags; t++) {
        char key[96], val[160];
        corpus_key(&r, key, sizeof key, options);
        tw_value v = corpus_value(&r, key, val, sizeof val);
        if (!tw__process_add_tag(process, key, &v))
            goto fail;
    }
    return s;
fail:
    tw__span_data_unref(s);
    return NULL;
}

#endif /* TW_TESTS_WIRE_SPAN_CORPUS_H */
