/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_zipkin_text.c: suite "wire/zipkin_text": the Zipkin
 * v2 encoder (tw__zipkin_encode_span, sdk/wire/zipkin/zipkin_v2_json.c),
 * which writes JSON directly, against the Jansson encoder it replaced (the
 * oracle, oracle_zipkin_v2.c). For every span of a large random corpus
 * (tests/unit/wire/span_corpus.h: invalid UTF-8 in keys and values, NUL
 * bytes, repeated keys, hundreds of tags) and the hand-built spans of
 * span_builder.h, with and without a process, the direct text must equal
 * the oracle's compact dump byte for byte. This suite is the guard that
 * lets the encoder write JSON by hand.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "span_builder.h"
#include "span_corpus.h"
#include "wire/core/json_common.h"
#include "oracle.h"
#include "wire/zipkin/zipkin_v2_json.h"

#define N_RANDOM 20000

/* Compares the two encodings of one span; prints the first difference. */
static bool same_text(const tw__span_data *s, const tw__process *p, const char *what, size_t i)
{
    json_t *json = oracle_zipkin_span_json(s, p);
    tw__buf expected, got;
    tw__buf_init(&expected);
    tw__buf_init(&got);
    bool ok = json && tw__json_dump(json, &expected);
    json_decref(json);
    /* The writer appends: a prefix must stay untouched. */
    ok = ok && tw__buf_append(&got, "[", 1) && tw__zipkin_encode_span(s, p, &got);
    bool is_same = ok && got.len == expected.len + 1 && got.data[0] == '[' &&
                   memcmp(got.data + 1, expected.data, expected.len) == 0;
    if (!is_same)
        fprintf(stderr, "%s %zu differs:\n jansson: %.*s\n direct:  %.*s\n", what, i,
                (int)expected.len, (const char *)expected.data, (int)(got.len ? got.len - 1 : 0),
                got.len ? (const char *)got.data + 1 : "");
    tw__buf_free(&expected);
    tw__buf_free(&got);
    return is_same;
}

static void test_builder_spans_match_jansson(void)
{
    tw__process p;
    tw__process_init(&p);
    tw_value ip = tw_test_str("10.1.2.3"), port = tw_test_i64(8080), v6 = tw_test_str("::1");
    CU_ASSERT_FATAL(tw__process_set_service(&p, "billing") && tw__process_add_tag(&p, "ip", &ip) &&
                    tw__process_add_tag(&p, "port", &port) && tw__process_add_tag(&p, "ipv6", &v6));
    tw__span_data *every = tw_test_span_every_field();
    tw__span_data *root = tw_test_span_root_64bit();
    CU_ASSERT_FATAL(every && root);
    CU_ASSERT(same_text(every, &p, "every_field", 0));
    CU_ASSERT(same_text(every, NULL, "every_field/no process", 0));
    CU_ASSERT(same_text(root, &p, "root_64bit", 0));
    CU_ASSERT(same_text(root, NULL, "root_64bit/no process", 0));
    tw__span_data_unref(every);
    tw__span_data_unref(root);
    tw__process_clear(&p);
}

/* The hand-written rules one by one, so a failure names the rule. */
static void test_rules_match_jansson(void)
{
    struct {
        const char *key;
        tw_value value;
    } cases[] = {
        {"span.kind", tw_test_str("SERVER")},
        {"span.kind", tw_test_str("internal")},
        {"error", tw_test_bool(false)},
        {"error", tw_test_i64(0)},
        {"error", tw_test_str("False")},
        {"error", tw_test_bool(true)},
        {"error", tw_test_dbl(2.5)},
        {"error", tw_test_str("disk full")},
        {"peer.port", tw_test_str("443")},
        {"peer.port", tw_test_str("99999")},
        {"peer.ipv4", tw_test_i64(-1062731775)},
        {"peer.ipv4", tw_test_str("::1")},
        {"peer.ipv6", tw_test_str("2001:DB8::1")},
        {"peer.service", tw_test_str("")},
        {"k", tw_test_str("\x01\x1f\"\\/\x7f\n")},
        {"k", tw_test_str("\xff\xc3(")},
        {"k", tw_test_dbl(0.1)},
        {"k", tw_test_i64(INT64_MIN)},
    };
    size_t n = sizeof cases / sizeof cases[0];
    for (size_t i = 0; i < n; i++) {
        for (int variant = 0; variant < 4; variant++) {
            tw__span_data *s = tw__span_data_new();
            tw__process p;
            tw__process_init(&p);
            tw_value pv = tw_test_str("process-value");
            CU_ASSERT_FATAL(s && tw__span_data_set_operation(s, "op", 2) &&
                            tw__process_set_service(&p, "svc") &&
                            tw__process_add_tag(&p, cases[i].key, &pv));
            s->trace_id_low = 1;
            s->span_id = 2;
            s->start_us = variant == 3 ? 0 : 1700000000000000;
            s->duration_us = variant;
            s->shared = true;
            /* variant 1: a second tag of the same key before it; 2: an error
             * message log and otel.status_description. */
            if (variant == 1)
                CU_ASSERT(tw_test_add_tag(s, cases[i].key, tw_test_str("first")));
            if (variant == 2) {
                tw_test_field f[2] = {{"event", tw_test_str("error")},
                                      {"message", tw_test_str("out of \"disk\"")}};
                CU_ASSERT(tw_test_add_log(s, 5, f, 2));
                CU_ASSERT(tw_test_add_tag(s, "otel.status_description", tw_test_str("desc")));
            }
            if (variant == 3)
                CU_ASSERT(tw_test_add_tag(s, "otel.status_description", tw_test_str("desc")));
            CU_ASSERT(tw_test_add_tag(s, cases[i].key, cases[i].value));
            CU_ASSERT(same_text(s, &p, cases[i].key, i * 4 + (size_t)variant));
            tw__span_data_unref(s);
            tw__process_clear(&p);
        }
    }
}

/* The tags object's plain path (zipkin_v2_json.c: plain ASCII keys, none
 * alike, no span `error` tag, written in order without the ordered map)
 * against the oracle, next to each thing that must send it to the general
 * path: a process key the span repeats, a key repeated inside the process
 * or the span, a span `error` tag, a key with bytes past ASCII, a key with
 * a NUL or a control byte, more tags than the plain path holds. */
static void test_plain_tags_match_jansson(void)
{
    static const char *const twists[] = {"none",        "process dup", "process pair",
                                         "span dup",    "error",       "utf8 key",
                                         "control key", "many",        "short nul key"};
    for (size_t v = 0; v < sizeof twists / sizeof twists[0]; v++) {
        tw__span_data *s = tw__span_data_new();
        tw__process p;
        tw__process_init(&p);
        tw_value host = tw_test_str("host-1"), region = tw_test_str("eu"),
                 ip = tw_test_str("10.0.0.1");
        CU_ASSERT_FATAL(
            s && tw__span_data_set_operation(s, "op", 2) && tw__process_set_service(&p, "svc") &&
            tw__process_add_tag(&p, "host.name", &host) && tw__process_add_tag(&p, "ip", &ip) &&
            tw__process_add_tag(&p, "region", &region));
        s->trace_id_low = 1;
        s->span_id = 2;
        s->start_us = 1700000000000000;
        s->duration_us = 5;
        CU_ASSERT(tw_test_add_tag(s, "http.method", tw_test_str("GET")) &&
                  tw_test_add_tag(s, "http.status_code", tw_test_i64(200)) &&
                  tw_test_add_tag(s, "cache.hit", tw_test_bool(true)) &&
                  tw_test_add_tag(s, "load", tw_test_dbl(0.5)) &&
                  tw_test_add_tag(s, "peer.service", tw_test_str("db")));
        if (v == 1)
            CU_ASSERT(tw_test_add_tag(s, "region", tw_test_str("us")));
        if (v == 2)
            CU_ASSERT(tw__process_add_tag(&p, "host.name", &region));
        if (v == 3)
            CU_ASSERT(tw_test_add_tag(s, "http.method", tw_test_str("PUT")));
        if (v == 4)
            CU_ASSERT(tw_test_add_tag(s, "error", tw_test_bool(false)));
        if (v == 5)
            CU_ASSERT(tw_test_add_tag(s, "caf\xc3\xa9", tw_test_str("x")) &&
                      tw_test_add_tag(s, "caf\xff", tw_test_str("y")));
        if (v == 6) {
            /* A NUL inside a key's first eight bytes (Jansson cuts the key
             * there: "nul"; variant 8: in the tail of a short key), and a tab. */
            tw__tag *t = tw__span_data_push_tag(s);
            tw_value x = tw_test_str("x");
            bool cut = false;
            CU_ASSERT_FATAL(t &&
                            tw__tag_set_n(&s->arena, t, "nul\0key-of-14b", 14, &x, SIZE_MAX, &cut));
            s->n_tags++;
            CU_ASSERT(tw_test_add_tag(s, "tab\tkey", tw_test_str("x")));
        }
        if (v == 8) {
            tw__tag *t = tw__span_data_push_tag(s);
            tw_value x = tw_test_str("x");
            bool cut = false;
            CU_ASSERT_FATAL(t && tw__tag_set_n(&s->arena, t, "nul\0key", 7, &x, SIZE_MAX, &cut));
            s->n_tags++;
        }
        for (int i = 0; v == 7 && i < 70; i++) {
            char key[16];
            snprintf(key, sizeof key, "k%d", i);
            CU_ASSERT(tw_test_add_tag(s, key, tw_test_i64(i)));
        }
        CU_ASSERT(same_text(s, &p, twists[v], v));
        CU_ASSERT(same_text(s, NULL, twists[v], v));
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
}

/* Whether the span takes the plain-key path (zipkin_v2_json.c repairs and
 * cuts odd keys, indexes very many tags): only to report coverage. */
static bool key_is_plain(const tw__tag *t)
{
    const unsigned char *k = (const unsigned char *)t->key;
    for (size_t i = 0; i < t->key_len;) {
        size_t n = k[i] ? tw__utf8_sequence(k + i, t->key_len - i) : 0;
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

static bool is_direct(const tw__span_data *s, const tw__process *p)
{
    bool ok = s->n_tags + (p ? p->n_tags : 0) <= 64;
    for (size_t k = 0; ok && k < s->n_tags; k++)
        ok = key_is_plain(&s->tags[k]);
    for (size_t k = 0; ok && p && k < p->n_tags; k++)
        ok = key_is_plain(&p->tags[k]);
    return ok;
}

/* Two corpora: keys of any bytes (mostly the Jansson fallback), and keys
 * that are valid UTF-8 (mostly the direct path). */
static void test_random_corpus_matches_jansson(void)
{
    size_t n_same = 0, n_direct = 0, n_with_process = 0;
    for (size_t i = 0; i < 2 * N_RANDOM; i++) {
        tw__process p;
        bool has_process = false;
        int options = i < N_RANDOM ? CORPUS_INVALID_KEYS | CORPUS_EMPTY_KEYS : CORPUS_EMPTY_KEYS;
        tw__span_data *s = corpus_span(7, i, &p, &has_process, options);
        CU_ASSERT_FATAL(s != NULL);
        const tw__process *pp = has_process ? &p : NULL;
        bool ok = same_text(s, pp, "random span", i);
        CU_ASSERT(ok);
        n_same += ok;
        n_direct += is_direct(s, pp);
        n_with_process += has_process;
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    printf("\n  %zu of %d random spans byte-identical (%zu on the direct path, %zu with a "
           "process) ",
           n_same, 2 * N_RANDOM, n_direct, n_with_process);
    CU_ASSERT(n_direct > N_RANDOM);
}

/* The per-process cache of tw__zipkin_encode_span_cached (the document
 * encoder's) against the uncached encoder, byte for byte: every random span
 * once with a fresh process at one stack address (so that each process is
 * new content at an address the cache has seen: a stale entry must be
 * refused), and then twice more (the second a cache hit); then many live
 * processes encoded in turn (entries evicted and taken again). */
static bool cached_is_same(const tw__span_data *s, const tw__process *p,
                           tw__zipkin_process_cache *cache)
{
    tw__buf plain, cached;
    tw__buf_init(&plain);
    tw__buf_init(&cached);
    bool ok = tw__zipkin_encode_span(s, p, &plain) &&
              tw__zipkin_encode_span_cached(s, p, &cached, cache) && plain.len == cached.len &&
              memcmp(plain.data, cached.data, plain.len) == 0;
    tw__buf_free(&plain);
    tw__buf_free(&cached);
    return ok;
}

static void test_process_cache_is_the_same_text(void)
{
    tw__zipkin_process_cache *cache = tw__zipkin_process_cache_new();
    CU_ASSERT_FATAL(cache != NULL);
    size_t n_same = 0, n = 0;
    for (size_t i = 0; i < 2 * N_RANDOM; i++) {
        tw__process p;
        bool has_process = false;
        int options = i < N_RANDOM ? CORPUS_INVALID_KEYS | CORPUS_EMPTY_KEYS : CORPUS_EMPTY_KEYS;
        tw__span_data *s = corpus_span(11, i, &p, &has_process, options);
        CU_ASSERT_FATAL(s != NULL);
        const tw__process *pp = has_process ? &p : NULL;
        for (int round = 0; round < 3; round++, n++)
            n_same += cached_is_same(s, pp, cache);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    CU_ASSERT_EQUAL(n_same, n);
    /* Live processes, more than the cache's slots, in turn. */
    enum { LIVE = 200 };
    static tw__process procs[LIVE];
    tw__span_data *spans[LIVE];
    bool has[LIVE];
    for (size_t i = 0; i < LIVE; i++) {
        spans[i] = corpus_span(13, i, &procs[i], &has[i], CORPUS_EMPTY_KEYS);
        CU_ASSERT_FATAL(spans[i] != NULL);
    }
    n_same = n = 0;
    for (size_t round = 0; round < 5; round++) {
        for (size_t i = 0; i < LIVE; i++, n++) {
            size_t k = (i * 7 + round * 31) % LIVE;
            n_same += cached_is_same(spans[k], has[k] ? &procs[k] : NULL, cache);
        }
    }
    CU_ASSERT_EQUAL(n_same, n);
    for (size_t i = 0; i < LIVE; i++) {
        tw__span_data_unref(spans[i]);
        tw__process_clear(&procs[i]);
    }
    tw__zipkin_process_cache_free(cache);
    tw__zipkin_process_cache_free(NULL);
}

static void test_refuses_null(void)
{
    tw__buf b;
    tw__buf_init(&b);
    CU_ASSERT_FALSE(tw__zipkin_encode_span(NULL, NULL, &b));
    CU_ASSERT_EQUAL(b.len, 0);
    tw__span_data *s = tw_test_span_root_64bit();
    CU_ASSERT_FALSE(tw__zipkin_encode_span(s, NULL, NULL));
    tw__span_data_unref(s);
    tw__buf_free(&b);
}

/* tw__double_text writes common values (six decimals at most) without
 * printf: the text must be the one of the precision loop it stands in for
 * (the fewest %.*g digits that read back), for those values, their
 * neighbours and random bit patterns alike. */
static void general_double_text(double v, char *out, size_t size)
{
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(out, size, "%.*g", precision, v);
        if (strtod(out, NULL) == v)
            break;
    }
}

static void test_double_text_is_the_shortest_that_reads_back(void)
{
    static const double fixed[] = {0.0,   -0.0,  1e-4,  9.9999e-5, 1e15, 999999999999999.0,
                                   1e14,  123.0, 120.0, 0.1,       0.2,  0.30000000000000004,
                                   0.875, -5.5,  1e-5,  100.0,     1.0,  2.5e-4};
    uint64_t state = UINT64_C(0x9e3779b97f4a7c15);
    size_t mismatched = 0;
    for (size_t i = 0; i < 200000; i++) {
        double v;
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        if (i < sizeof fixed / sizeof fixed[0]) {
            v = fixed[i];
        } else if (i % 3 == 0) {
            memcpy(&v, &state, sizeof v);
            if (!isfinite(v))
                continue;
        } else if (i % 3 == 1) {
            static const double scale[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8};
            v = (double)(int64_t)(state % UINT64_C(2000000000000000)) / scale[(state >> 56) % 9];
        } else {
            v = nextafter((double)(state % 100000) / 1000.0, (state >> 60) & 1 ? 1e300 : -1e300);
        }
        char fast[40], general[40];
        tw__double_text(v, fast, sizeof fast);
        general_double_text(v, general, sizeof general);
        if (strcmp(fast, general) != 0 && mismatched++ < 5)
            fprintf(stderr, "%.17g: \"%s\", the general way \"%s\"\n", v, fast, general);
    }
    CU_ASSERT_EQUAL(mismatched, 0);
}

/* tw__ipv4_is_canonical stands in for inet_pton + inet_ntop on endpoint
 * addresses: true exactly when inet_pton(AF_INET) reads the text and
 * inet_ntop writes it back unchanged. */
static void test_ipv4_canonical_is_what_inet_ntop_writes(void)
{
    static const char alphabet[] = "0123456789.x";
    static const char *const fixed[] = {"0.0.0.0", "255.255.255.255", "256.1.1.1", "01.2.3.4",
                                        "1.2.3",   "1.2.3.4.",        "1..2.3",    "1.2.3.0004",
                                        "",        "10.3.0.14",       "1.2.3.4 ",  "9.09.9.9"};
    uint64_t state = UINT64_C(0x2545f4914f6cdd1d);
    size_t mismatched = 0;
    for (size_t i = 0; i < 300000; i++) {
        char text[24];
        if (i < sizeof fixed / sizeof fixed[0]) {
            snprintf(text, sizeof text, "%s", fixed[i]);
        } else {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            size_t len = 7 + state % 9;
            uint64_t bits = state >> 8;
            for (size_t k = 0; k < len; k++) {
                /* mostly digits, a dot in about one place of four */
                text[k] = (bits & 3) == 0 ? '.' : alphabet[(bits >> 2) % 12];
                bits = bits * UINT64_C(6364136223846793005) + 1442695040888963407u;
                bits ^= bits >> 29;
            }
            text[len] = '\0';
        }
        struct in_addr v4;
        char back[INET_ADDRSTRLEN];
        bool is_expected = inet_pton(AF_INET, text, &v4) == 1 &&
                           inet_ntop(AF_INET, &v4, back, sizeof back) && strcmp(back, text) == 0;
        if (tw__ipv4_is_canonical(text) != is_expected && mismatched++ < 5)
            fprintf(stderr, "\"%s\": canonical %d, inet_pton/ntop %d\n", text,
                    tw__ipv4_is_canonical(text), is_expected);
    }
    CU_ASSERT_EQUAL(mismatched, 0);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/zipkin_text", NULL, NULL);
    CU_add_test(suite, "builder_spans_match_jansson", test_builder_spans_match_jansson);
    CU_add_test(suite, "rules_match_jansson", test_rules_match_jansson);
    CU_add_test(suite, "plain_tags_match_jansson", test_plain_tags_match_jansson);
    CU_add_test(suite, "random_corpus_matches_jansson", test_random_corpus_matches_jansson);
    CU_add_test(suite, "process_cache_is_the_same_text", test_process_cache_is_the_same_text);
    CU_add_test(suite, "refuses_null", test_refuses_null);
    CU_add_test(suite, "ipv4_canonical_is_what_inet_ntop_writes",
                test_ipv4_canonical_is_what_inet_ntop_writes);
    CU_add_test(suite, "double_text_is_the_shortest_that_reads_back",
                test_double_text_is_the_shortest_that_reads_back);
}
