/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_json_scan.c: suite "wire/json_scan": the strict JSON
 * scanner (sdk/wire/core/json_scan.c) on its own, against Jansson and
 * against byte-simple references.
 *
 * - Depth: for every limit from 1 to 6 and nestings of arrays, objects,
 *   scalars and empty containers around it, the scanner reads a text
 *   exactly when no value is deeper than the limit (the top value is level
 *   1, a scalar counts), both entry points alike.
 * - Random texts (nested values, objects past the 16 members where the
 *   duplicate check turns to a hash, keys drawn from a small set so that
 *   some repeat, escapes, blanks): what the scanner reads, Jansson reads
 *   with JSON_REJECT_DUPLICATES with the same values; a text made without a
 *   repeated key is read by both.
 * - tw__json_scan_pick: against a linear search per key, for members in
 *   any order and keys absent or not asked for.
 * - The Zipkin v2 JSON decoder's 16-digit id reader (tw__hex16, its
 *   fast path over these tokens' strings) against tw__parse_hex: every
 *   byte value at every position, and random ids of either case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "harness.h"
#include "wire/core/buf.h"
#include "wire/core/hex.h"
#include "wire/core/json_scan.h"
#include "wire/zipkin/zipkin_v2_json_decode.h"

static void put(tw__buf *b, const char *s)
{
    CU_ASSERT_FATAL(tw__buf_append(b, s, strlen(s)));
}

/* ---- depth ------------------------------------------------------------------------------- */

/* Nests @inner in @levels containers (arrays or objects by @shape's bits,
 * outermost first); the text's depth is @levels + the inner value's. */
static void nest(tw__buf *b, int levels, unsigned shape, const char *inner)
{
    for (int i = 0; i < levels; i++)
        put(b, (shape >> i) & 1 ? "{\"k\":" : "[");
    put(b, inner);
    for (int i = levels - 1; i >= 0; i--)
        put(b, (shape >> i) & 1 ? "}" : "]");
}

static void test_depth_limit_is_exact(void)
{
    static const struct {
        const char *text;
        int depth; /* of the value alone */
    } inner[] = {{"1", 1},   {"\"s\"", 1},      {"[]", 1},  {"{}", 1},
                 {"[1]", 2}, {"{\"a\":[]}", 2}, {"[[]]", 2}};
    tw__json_scan s;
    tw__json_scan_init(&s);
    tw__buf b;
    tw__buf_init(&b);
    for (size_t limit = 1; limit <= 6; limit++) {
        s.max_depth = limit;
        for (int levels = 0; levels <= 6; levels++) {
            for (unsigned shape = 0; shape < 4; shape++) {
                for (size_t i = 0; i < sizeof inner / sizeof inner[0]; i++) {
                    if (levels == 0 && inner[i].text[0] != '[' && inner[i].text[0] != '{')
                        continue; /* the top is an object or an array */
                    tw__buf_reset(&b);
                    nest(&b, levels, shape, inner[i].text);
                    bool want = (size_t)(levels + inner[i].depth) <= limit;
                    bool got = tw__json_scan_parse(&s, (const char *)b.data, b.len);
                    size_t used = 0;
                    bool got_prefix =
                        tw__json_scan_parse_prefix(&s, (const char *)b.data, b.len, &used);
                    if (got != want || got_prefix != want || (want && used != b.len))
                        fprintf(stderr, "limit %zu: %.*s: %d %d, want %d\n", limit, (int)b.len,
                                (const char *)b.data, got, got_prefix, want);
                    CU_ASSERT_EQUAL(got, want);
                    CU_ASSERT_EQUAL(got_prefix, want);
                }
            }
        }
    }
    /* No limit below 1: nothing is read. */
    s.max_depth = 0;
    CU_ASSERT_FALSE(tw__json_scan_parse(&s, "[]", 2));
    tw__buf_free(&b);
    tw__json_scan_free(&s);
}

/* ---- random texts against Jansson ----------------------------------------------------------- */

static unsigned long long rng_state = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (unsigned)(rng_state % n);
}

static void blanks(tw__buf *b)
{
    static const char *const ws[] = {"", "", "", " ", "\n", "\t ", "\r\n"};
    put(b, ws[rnd(sizeof ws / sizeof ws[0])]);
}

static void random_string(tw__buf *b, bool is_key, bool *has_repeat_risk)
{
    static const char *const keys[] = {"a",    "b",     "id",  "name",    "k\\u0041", "kA",
                                       "tags", "x\\/y", "x/y", "\\u00e9", "\xc3\xa9"};
    static const char *const parts[] = {
        "abc",          "\\n",        "\\\"",   "\\\\",    "\\u0000", "\\ud83d\\ude00",
        "\xe2\x82\xac", "0123456789", "\\t",    "\\u001f", " ",       "longer text here",
        "\\b",          "\\f",        "\\r",    "\\/",     "\\u20AC", "\\uDBFF\\uDFFF",
        "\\u0080",      "\\u07ff",    "\\u0800"};
    put(b, "\"");
    if (is_key && rnd(2)) {
        put(b, keys[rnd(sizeof keys / sizeof keys[0])]);
        *has_repeat_risk = true;
    } else {
        unsigned n = rnd(4);
        for (unsigned i = 0; i < n; i++) {
            const char *p = parts[rnd(sizeof parts / sizeof parts[0])];
            if (is_key && strcmp(p, "\\u0000") == 0)
                p = "z";
            put(b, p);
        }
        if (is_key) { /* unique: a counter */
            static unsigned counter;
            char c[16];
            snprintf(c, sizeof c, "#%u", counter++);
            put(b, c);
        }
    }
    put(b, "\"");
}

static void random_value(tw__buf *b, int depth, bool *has_repeat_risk)
{
    static const char *const scalars[] = {"0",
                                          "-0",
                                          "12",
                                          "-7",
                                          "9223372036854775807",
                                          "-9223372036854775808",
                                          "1.5",
                                          "-0.25",
                                          "1e3",
                                          "2E-2",
                                          "true",
                                          "false",
                                          "null",
                                          "3.14159265358979",
                                          "123456789012345678901.5",
                                          "0.1234567890123456789012",
                                          "1.7976931348623157e308",
                                          "4.9e-324",
                                          "0.30000000000000004",
                                          "-1.0E+2",
                                          "1e-400",
                                          "900719925474099.3"};
    unsigned kind = depth > 5 ? 2 + rnd(2) : rnd(4);
    blanks(b);
    if (kind == 0) {
        unsigned n = rnd(3) == 0 ? 17 + rnd(8) : rnd(6);
        put(b, "{");
        for (unsigned i = 0; i < n; i++) {
            if (i)
                put(b, ",");
            blanks(b);
            random_string(b, true, has_repeat_risk);
            blanks(b);
            put(b, ":");
            random_value(b, depth + 1, has_repeat_risk);
        }
        blanks(b);
        put(b, "}");
    } else if (kind == 1) {
        unsigned n = rnd(5);
        put(b, "[");
        for (unsigned i = 0; i < n; i++) {
            if (i)
                put(b, ",");
            random_value(b, depth + 1, has_repeat_risk);
        }
        blanks(b);
        put(b, "]");
    } else if (kind == 2) {
        random_string(b, false, has_repeat_risk);
    } else {
        put(b, scalars[rnd(sizeof scalars / sizeof scalars[0])]);
    }
    blanks(b);
}

/* Whether the tokens from @i equal the Jansson value @v; *next: the token
 * after the value. */
static bool same_value(const tw__json_scan *s, size_t i, const json_t *v)
{
    const tw__jtok *t = &s->tok[i];
    switch ((tw__jtype)t->type) {
    case TW__J_OBJECT: {
        if (!json_is_object(v) || json_object_size(v) != t->n)
            return false;
        size_t members = 0;
        for (size_t j = i + 1; j < t->end; j = s->tok[j + 1].end, members++) {
            const json_t *m = json_object_get(v, s->tok[j].v.str);
            if (!m || !same_value(s, j + 1, m))
                return false;
        }
        return members == t->n;
    }
    case TW__J_ARRAY: {
        if (!json_is_array(v) || json_array_size(v) != t->n)
            return false;
        size_t k = 0;
        for (size_t j = i + 1; j < t->end; j = s->tok[j].end, k++) {
            if (!same_value(s, j, json_array_get(v, k)))
                return false;
        }
        return k == t->n;
    }
    case TW__J_STRING:
        return json_is_string(v) && json_string_length(v) == t->len &&
               memcmp(json_string_value(v), t->v.str, t->len) == 0 && t->v.str[t->len] == '\0' &&
               (memchr(t->v.str, '\0', t->len) != NULL) == (t->has_nul != 0);
    case TW__J_INTEGER:
        return json_is_integer(v) && json_integer_value(v) == t->v.i;
    case TW__J_REAL:
        return json_is_real(v) && json_real_value(v) == t->v.d;
    case TW__J_TRUE:
        return json_is_true(v);
    case TW__J_FALSE:
        return json_is_false(v);
    case TW__J_NULL:
        return json_is_null(v);
    }
    return false;
}

static void test_random_texts_agree_with_jansson(void)
{
    tw__json_scan *s = malloc(sizeof *s);
    CU_ASSERT_FATAL(s != NULL);
    tw__json_scan_init(s);
    s->max_depth = TW__JSON_SCAN_DEEPEST;
    tw__buf b;
    tw__buf_init(&b);
    size_t rounds = tw_test_rounds(4000), read = 0, mismatched = 0, unique_declined = 0;
    for (size_t r = 0; r < rounds; r++) {
        tw__buf_reset(&b);
        bool has_repeat_risk = false;
        put(&b, rnd(2) ? "{\"top\":" : "[");
        random_value(&b, 1, &has_repeat_risk);
        put(&b, b.data[0] == '{' ? "}" : "]");
        const char *text = (const char *)b.data;
        json_error_t err;
        json_t *v = json_loadb(text, b.len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
        bool ok = tw__json_scan_parse(s, text, b.len);
        if (ok) {
            read++;
            if (!v || !same_value(s, 0, v)) {
                mismatched++;
                fprintf(stderr, "mismatch: %.*s\n", (int)b.len, text);
            }
        } else if (v && !has_repeat_risk) {
            unique_declined++;
            fprintf(stderr, "declined: %.*s\n", (int)b.len, text);
        }
        /* The prefix entry point reads the same text the same way, with
         * anything after it. */
        size_t used = 0;
        CU_ASSERT_FATAL(tw__buf_append(&b, " [", 2));
        bool ok_prefix = tw__json_scan_parse_prefix(s, (const char *)b.data, b.len, &used);
        CU_ASSERT_EQUAL(ok_prefix, ok);
        json_decref(v);
    }
    CU_ASSERT_EQUAL(mismatched, 0);
    CU_ASSERT_EQUAL(unique_declined, 0);
    CU_ASSERT(read > rounds / 4); /* the generator makes mostly readable texts */
    tw__buf_free(&b);
    tw__json_scan_free(s);
    free(s);
}

/* Every escape form, valid or not, alone in a string, whole and cut short:
 * the scanner reads the text exactly when Jansson does, with its value. */
static void test_every_escape_agrees_with_jansson(void)
{
    static const char *const escapes[] = {"\\\"",
                                          "\\\\",
                                          "\\/",
                                          "\\b",
                                          "\\f",
                                          "\\n",
                                          "\\r",
                                          "\\t",
                                          "\\a",
                                          "\\x41",
                                          "\\'",
                                          "\\0",
                                          "\\U0041",
                                          "\\",
                                          "\\u",
                                          "\\u0",
                                          "\\u00",
                                          "\\u004",
                                          "\\u0000",
                                          "\\u0041",
                                          "\\u00e9",
                                          "\\u00E9",
                                          "\\u07ff",
                                          "\\u0800",
                                          "\\uffff",
                                          "\\uFFFF",
                                          "\\u12G4",
                                          "\\ug000",
                                          "\\ud83d\\ude00",
                                          "\\uD83D\\uDE00",
                                          "\\udbff\\udfff",
                                          "\\ud800\\udc00",
                                          "\\ud800",
                                          "\\udc00",
                                          "\\udfff",
                                          "\\ud800\\u0041",
                                          "\\ud800\\ud800",
                                          "\\ud800\\n",
                                          "\\ud800x",
                                          "\\ud83d\\ude0",
                                          "\\ud83d\\u",
                                          "\\ud83d\\"};
    tw__json_scan *s = malloc(sizeof *s);
    CU_ASSERT_FATAL(s != NULL);
    tw__json_scan_init(s);
    size_t checked = 0;
    for (size_t k = 0; k < sizeof escapes / sizeof escapes[0]; k++) {
        for (int shape = 0; shape < 3; shape++) {
            char text[64];
            /* whole, with text around it; alone; as a key */
            int n = snprintf(text, sizeof text,
                             shape == 0   ? "[\"a%sb\"]"
                             : shape == 1 ? "[\"%s\"]"
                                          : "{\"%s\":1}",
                             escapes[k]);
            CU_ASSERT_FATAL(n > 0 && (size_t)n < sizeof text);
            json_error_t err;
            json_t *v = json_loadb(text, (size_t)n, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &err);
            bool ok = tw__json_scan_parse(s, text, (size_t)n);
            CU_ASSERT_EQUAL(ok, v != NULL);
            if (ok && v && !same_value(s, 0, v))
                CU_FAIL("a different value");
            if (ok != (v != NULL))
                fprintf(stderr, "escape %s, shape %d: scanner %d, Jansson %d\n", escapes[k], shape,
                        ok, v != NULL);
            json_decref(v);
            checked++;
        }
    }
    CU_ASSERT_EQUAL(checked, 3 * sizeof escapes / sizeof escapes[0]);
    tw__json_scan_free(s);
    free(s);
}

/* ---- pick ------------------------------------------------------------------------------------ */

static void test_pick_matches_linear_search(void)
{
    static const char *const names[] = {"traceId",   "parentId", "id",    "kind",   "name",
                                        "timestamp", "duration", "debug", "shared", "tags",
                                        "idx",       "i",        "nam"};
    enum { N = sizeof names / sizeof names[0] };
    tw__json_key keys[N];
    for (size_t k = 0; k < N; k++)
        keys[k] = (tw__json_key){names[k], strlen(names[k])};
    tw__json_scan s;
    tw__json_scan_init(&s);
    tw__buf b;
    tw__buf_init(&b);
    for (size_t r = 0; r < tw_test_rounds(3000); r++) {
        /* A random subset of the names, shuffled, plus some not asked for. */
        size_t order[N];
        for (size_t k = 0; k < N; k++)
            order[k] = k;
        for (size_t k = N - 1; k > 0; k--) {
            size_t j = rnd((unsigned)k + 1), t = order[k];
            order[k] = order[j];
            order[j] = t;
        }
        size_t n_members = rnd(N + 1), n_keys = 1 + rnd(N);
        tw__buf_reset(&b);
        put(&b, "{");
        for (size_t m = 0; m < n_members; m++) {
            char member[48];
            snprintf(member, sizeof member, "%s\"%s\":%zu", m ? "," : "", names[order[m]], m);
            put(&b, member);
        }
        put(&b, "}");
        CU_ASSERT_FATAL(tw__json_scan_parse(&s, (const char *)b.data, b.len));
        /* Ask for the first n_keys names in a rotated order. */
        size_t rot = rnd(N);
        tw__json_key asked[N];
        for (size_t k = 0; k < n_keys; k++)
            asked[k] = keys[(k + rot) % N];
        size_t out[N];
        CU_ASSERT_TRUE(tw__json_scan_pick(&s, 0, asked, n_keys, out));
        for (size_t k = 0; k < n_keys; k++) {
            size_t want = 0;
            for (size_t j = 1; j < s.tok[0].end; j = s.tok[j + 1].end) {
                if (s.tok[j].len == asked[k].len &&
                    memcmp(s.tok[j].v.str, asked[k].name, asked[k].len) == 0)
                    want = j + 1;
            }
            CU_ASSERT_EQUAL(out[k], want);
        }
    }
    /* Not an object: all 0. */
    CU_ASSERT_FATAL(tw__json_scan_parse(&s, "[1]", 3));
    size_t out[2] = {7, 7};
    CU_ASSERT_FALSE(tw__json_scan_pick(&s, 0, keys, 2, out));
    CU_ASSERT_EQUAL(out[0], 0);
    CU_ASSERT_EQUAL(out[1], 0);
    tw__buf_free(&b);
    tw__json_scan_free(&s);
}

/* ---- the decoder's id reader ----------------------------------------------------------------- */

static void check_hex16(const char *text, size_t *checked)
{
    uint64_t fast = 0, slow = 0;
    bool is_fast = tw__hex16(text, &fast);
    bool is_slow = tw__parse_hex(text, 16, 16, false, NULL, &slow, NULL) == TW__HEX_OK;
    if (is_fast != is_slow || (is_fast && fast != slow))
        fprintf(stderr, "hex16 %.16s: %d %016llx, parse_hex %d %016llx\n", text, is_fast,
                (unsigned long long)fast, is_slow, (unsigned long long)slow);
    CU_ASSERT_EQUAL(is_fast, is_slow);
    if (is_fast && is_slow)
        CU_ASSERT_EQUAL(fast, slow);
    (*checked)++;
}

static void test_hex16_matches_parse_hex(void)
{
    static const char digits[] = "0123456789abcdefABCDEF";
    char text[17];
    size_t checked = 0;
    for (size_t pos = 0; pos < 16; pos++) {
        for (int c = 0; c < 256; c++) {
            memcpy(text, "0123456789aBcDeF", 17);
            text[pos] = (char)c;
            check_hex16(text, &checked);
        }
    }
    for (size_t r = 0; r < tw_test_rounds(200000); r++) {
        for (size_t i = 0; i < 16; i++)
            text[i] = digits[rnd(sizeof digits - 1)];
        if (rnd(4) == 0)
            text[rnd(16)] = (char)rnd(256);
        check_hex16(text, &checked);
    }
    CU_ASSERT(checked > 4096);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/json_scan", NULL, NULL);
    CU_add_test(suite, "depth_limit_is_exact", test_depth_limit_is_exact);
    CU_add_test(suite, "random_texts_agree_with_jansson", test_random_texts_agree_with_jansson);
    CU_add_test(suite, "every_escape_agrees_with_jansson", test_every_escape_agrees_with_jansson);
    CU_add_test(suite, "pick_matches_linear_search", test_pick_matches_linear_search);
    CU_add_test(suite, "hex16_matches_parse_hex", test_hex16_matches_parse_hex);
}
