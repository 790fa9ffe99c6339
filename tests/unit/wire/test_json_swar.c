/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_json_swar.c: suite "wire/json_swar", the
 * eight-bytes-at-a-time fast paths of the JSON layer held to simple
 * byte-by-byte references: the plain-run finder tw__json_run_copy
 * (wire/core/json_write.h) of the string escaper, the escaper
 * tw__json_append_text itself, the record splitter tw__json_stream
 * (wire/core/json_stream.c, whose word-at-a-time state machine must cut
 * exactly where its byte loop would), and the scanner's exact decimal
 * conversion (wire/core/json_scan.c) against strtod; and the writers'
 * and readers' word-at-a-time integers and ids (wire/core/json_write.c,
 * wire/core/hex.[ch]) against printf and the table-driven hex parser.
 *
 * Inputs are random and adversarial: the bytes that stop a run at every
 * position of buffers of every length up to 40 (so at 8-byte boundaries
 * and as the last byte), the bytes that fool the usual SWAR tests by a
 * borrow ('#' after '"', 'z' after '{', 0x01 after NUL...), and records
 * that cross the splitter's 64 KiB read chunk. Every buffer is a heap
 * block of exactly its length, so that ASan sees any read past its end.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "harness.h"
#include "wire/core/buf.h"
#include "wire/core/hex.h"
#include "wire/core/json_scan.h"
#include "wire/core/json_stream.h"
#include "wire/core/json_write.h"
#include "wire/core/utf8.h"

static uint64_t rng_state = UINT64_C(0x9e3779b97f4a7c15);

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* Bytes that stop some run, fool a SWAR test, or are plain. */
static const unsigned char interesting[] = {
    '"',  '\\', '\n', '{',  '}',  '[',  ']',  0x00, 0x01, 0x1f, 0x20, '#',  'z', 'Z',
    '|',  ']',  '!',  '$',  0x7f, 0x80, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xff, 'a', '0',
    0x5c, 0x5d, 0x7b, 0x7d, 0x21, 0x23, 0x09, 0x0b, ':',  ',',  ' ',  'A',  0xf0};

static unsigned char random_byte(void)
{
    uint32_t r = rnd();
    if (r % 4 == 0)
        return (unsigned char)(r >> 8);
    if (r % 4 == 1)
        return 'a' + (r >> 8) % 26;
    return interesting[(r >> 8) % sizeof interesting];
}

static size_t run_reference(const unsigned char *p, size_t n)
{
    size_t i = 0;
    while (i < n && !tw__json_is_special(p[i]))
        i++;
    return i;
}

/* tw__json_plain_run and the copying form: the same length as the
 * reference, the run's bytes in a dst of exactly n bytes (ASan: no write
 * past it). */
static bool run_is_right(const unsigned char *p, size_t n)
{
    size_t expect = run_reference(p, n);
    unsigned char *dst = malloc(n ? n : 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dst);
    bool ok = tw__json_plain_run(p, n) == expect && tw__json_run_copy(p, n, dst) == expect &&
              memcmp(dst, p, expect) == 0;
    free(dst);
    return ok;
}

/* Every stopping byte at every position of plain buffers of every length
 * up to 40, also after a byte that could borrow into it. */
static void test_run_stops_at_each_position_and_length(void)
{
    size_t wrong = 0;
    for (size_t len = 0; len <= 40; len++) {
        for (size_t at = 0; at <= len; at++) {
            for (size_t b = 0; b < sizeof interesting; b++) {
                unsigned char *p = malloc(len ? len : 1);
                CU_ASSERT_PTR_NOT_NULL_FATAL(p);
                memset(p, 'a', len);
                if (at < len)
                    p[at] = interesting[b];
                if (at + 1 < len)
                    p[at + 1] = interesting[(b * 7 + 3) % sizeof interesting];
                wrong += !run_is_right(p, len);
                free(p);
            }
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

static void test_run_matches_reference_on_random_bytes(void)
{
    size_t wrong = 0;
    for (size_t round = 0; round < 200000; round++) {
        size_t len = rnd() % 48;
        unsigned char *p = malloc(len ? len : 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        /* Mostly plain bytes with a few others, so long runs happen. */
        for (size_t i = 0; i < len; i++)
            p[i] = rnd() % 6 == 0 ? random_byte() : (unsigned char)('a' + rnd() % 26);
        wrong += !run_is_right(p, len);
        free(p);
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

/* The escaper's rules (json_write.h), one byte at a time. */
static void escape_reference(tw__buf *out, const unsigned char *s, size_t len)
{
    tw__buf_put_byte(out, '"');
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        if (c >= 0x80) {
            size_t n = tw__utf8_sequence(s + i, len - i);
            if (n == 0) {
                tw__buf_put(out, TW__UTF8_REPLACEMENT, 3);
                i++;
            } else {
                tw__buf_put(out, s + i, n);
                i += n;
            }
            continue;
        }
        char esc[8];
        switch (c) {
        case '"':
            tw__buf_put(out, "\\\"", 2);
            break;
        case '\\':
            tw__buf_put(out, "\\\\", 2);
            break;
        case '\b':
            tw__buf_put(out, "\\b", 2);
            break;
        case '\f':
            tw__buf_put(out, "\\f", 2);
            break;
        case '\n':
            tw__buf_put(out, "\\n", 2);
            break;
        case '\r':
            tw__buf_put(out, "\\r", 2);
            break;
        case '\t':
            tw__buf_put(out, "\\t", 2);
            break;
        default:
            if (c < 0x20) {
                snprintf(esc, sizeof esc, "\\u%04X", c);
                tw__buf_put(out, esc, 6);
            } else {
                tw__buf_put_byte(out, c);
            }
        }
        i++;
    }
    tw__buf_put_byte(out, '"');
}

static void test_escaper_matches_byte_reference(void)
{
    tw__buf fast, ref;
    tw__buf_init(&fast);
    tw__buf_init(&ref);
    size_t wrong = 0;
    for (size_t round = 0; round < 100000; round++) {
        size_t len = round < 50000 ? rnd() % 24 : rnd() % 200;
        unsigned char *p = malloc(len ? len : 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        for (size_t i = 0; i < len; i++)
            p[i] = rnd() % 5 == 0 ? random_byte() : (unsigned char)('a' + rnd() % 26);
        tw__buf_reset(&fast);
        tw__buf_reset(&ref);
        CU_ASSERT_TRUE_FATAL(tw__json_append_text(&fast, (const char *)p, len));
        escape_reference(&ref, p, len);
        if (fast.len != ref.len || memcmp(fast.data, ref.data, ref.len) != 0)
            wrong++;
        free(p);
    }
    CU_ASSERT_EQUAL(wrong, 0);
    tw__buf_free(&fast);
    tw__buf_free(&ref);
}

/* ---- the record splitter ---------------------------------------------------------------- */

/* A JSON-like record: objects and arrays of strings full of the bytes that
 * matter to the splitter (escaped quotes, brackets, raw newlines, '\\' at
 * every offset), numbers and literals. Not always valid JSON: the
 * splitter only tracks strings and brackets. */
static bool is_valid_mode; /* put_value writes valid JSON (keys strings, valid strings) */

static void put_value(tw__buf *b, int depth)
{
    uint32_t r = rnd() % 10;
    if (is_valid_mode && depth == 99)
        r = 3 + rnd() % 5; /* a key: a string */
    if (depth < 5 && r < 3) {
        bool is_object = r < 2;
        tw__buf_put_byte(b, is_object ? '{' : '[');
        size_t n = rnd() % 6;
        for (size_t i = 0; i < n; i++) {
            if (i)
                tw__buf_put_byte(b, ',');
            if (rnd() % 8 == 0)
                tw__buf_put_byte(b, rnd() % 4 == 0 ? '\n' : ' ');
            if (is_object) {
                put_value(b, 99); /* a key: a scalar */
                tw__buf_put_byte(b, ':');
            }
            put_value(b, depth + 1);
        }
        tw__buf_put_byte(b, is_object ? '}' : ']');
        return;
    }
    if (r < 8) {
        tw__buf_put_byte(b, '"');
        size_t n = rnd() % 30;
        for (size_t i = 0; i < n; i++) {
            if (is_valid_mode) {
                static const char *const parts[] = {"\\\"", "\\\\",     "{",       "}",        "[",
                                                    "]",    "\\n",      "\\u0041", "\xc3\xa9", "a",
                                                    "ab",   "abcdefgh", ":",       ",",        " "};
                const char *part = parts[rnd() % (sizeof parts / sizeof parts[0])];
                tw__buf_put(b, part, strlen(part));
                continue;
            }
            unsigned char c = random_byte();
            if (c == '"' || c == '\\') {
                tw__buf_put_byte(b, '\\');
                c = rnd() % 2 ? c : (unsigned char)"\"\\n{}[]u"[rnd() % 8];
            }
            tw__buf_put_byte(b, c);
        }
        tw__buf_put_byte(b, '"');
        return;
    }
    static const char *const scalars[] = {"1", "-2.5e3", "true", "null", "12345678901234567"};
    const char *s = scalars[rnd() % 5];
    tw__buf_put(b, s, strlen(s));
}

typedef struct ref_record {
    size_t start, len, line;
} ref_record;

/* The splitter's rules for inputs made of objects at the top or in one
 * array, byte by byte: strings and escapes tracked, a record ends where
 * its bracket depth comes back to 0. */
static size_t split_reference(const unsigned char *p, size_t n, ref_record *out, size_t max)
{
    size_t count = 0, line = 1, i = 0;
    while (i < n && count < max) {
        unsigned char c = p[i];
        if (c != '{') {
            line += c == '\n';
            i++;
            continue;
        }
        size_t start = i, start_line = line, depth = 0;
        bool in_string = false, escaped = false;
        for (; i < n; i++) {
            c = p[i];
            line += c == '\n';
            if (in_string) {
                if (escaped)
                    escaped = false;
                else if (c == '\\')
                    escaped = true;
                else if (c == '"')
                    in_string = false;
            } else if (c == '"') {
                in_string = true;
            } else if (c == '{' || c == '[') {
                depth++;
            } else if ((c == '}' || c == ']') && --depth == 0) {
                i++;
                break;
            }
        }
        out[count++] = (ref_record){start, i - start, start_line};
    }
    return count;
}

/* Splits random inputs with the stream (one pass through @scan when not
 * NULL) and compares with split_reference; a record that comes back
 * scanned must have the tokens a scan of its bytes alone gives. */
static void split_and_compare(tw__json_scan *scan, bool is_valid, size_t *n_scanned)
{
    size_t wrong = 0, records = 0;
    is_valid_mode = is_valid;
    tw__json_scan again;
    tw__json_scan_init(&again);
    again.max_depth = TW__JSON_SCAN_DEEPEST;
    for (size_t round = 0; round < 300; round++) {
        tw__buf in;
        tw__buf_init(&in);
        bool is_array = round % 2 == 0;
        size_t n_records = round % 50 == 0 ? 400 : 1 + rnd() % 30; /* some cross 64 KiB */
        if (is_array)
            tw__buf_put_byte(&in, '[');
        for (size_t r = 0; r < n_records; r++) {
            if (r)
                tw__buf_put(&in, is_array ? ",\n" : "\n", is_array ? 1 + rnd() % 2 : 1);
            size_t before = in.len;
            tw__buf_put_byte(&in, '{');
            size_t members = 1 + rnd() % (round % 50 == 0 ? 40 : 8);
            for (size_t m = 0; m < members; m++) {
                if (m)
                    tw__buf_put_byte(&in, ',');
                put_value(&in, 99);
                tw__buf_put_byte(&in, ':');
                put_value(&in, 1);
            }
            tw__buf_put_byte(&in, '}');
            (void)before;
        }
        if (is_array)
            tw__buf_put_byte(&in, ']');
        tw__buf_put_byte(&in, '\n');

        ref_record *expect = calloc(n_records, sizeof *expect);
        CU_ASSERT_PTR_NOT_NULL_FATAL(expect);
        size_t n_expect = split_reference(in.data, in.len, expect, n_records);
        CU_ASSERT_EQUAL(n_expect, n_records);

        FILE *f = fmemopen(in.data, in.len, "rb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        tw__json_stream *js = tw__json_stream_new(f, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(js);
        tw__json_stream_set_scan(js, scan);
        size_t got = 0;
        for (;;) {
            const char *rec, *why;
            size_t len, line_no;
            tw__json_next next = tw__json_stream_next(js, &rec, &len, &line_no, &why);
            if (next == TW__JSON_END)
                break;
            if (next != TW__JSON_RECORD || got >= n_expect) {
                wrong++;
                break;
            }
            const ref_record *e = &expect[got++];
            if (len != e->len || line_no != e->line || memcmp(rec, in.data + e->start, len) != 0)
                wrong++;
            if (tw__json_stream_is_scanned(js)) {
                (*n_scanned)++;
                if (!scan || !tw__json_scan_parse(&again, rec, len) || again.n_tok != scan->n_tok) {
                    wrong++;
                    continue;
                }
                for (size_t t = 0; t < again.n_tok; t++) {
                    const tw__jtok *a = &again.tok[t], *b = &scan->tok[t];
                    if (a->type != b->type || a->end != b->end || a->n != b->n ||
                        (a->type == TW__J_STRING &&
                         (a->len != b->len || memcmp(a->v.str, b->v.str, a->len) != 0)) ||
                        (a->type == TW__J_INTEGER && a->v.i != b->v.i))
                        wrong++;
                }
            }
        }
        CU_ASSERT_EQUAL(got, n_expect);
        records += got;
        tw__json_stream_free(js);
        fclose(f);
        free(expect);
        tw__buf_free(&in);
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT(records > 1000);
    tw__json_scan_free(&again);
}

static void test_splitter_cuts_where_byte_reference_does(void)
{
    size_t n_scanned = 0;
    split_and_compare(NULL, false, &n_scanned);
    split_and_compare(NULL, true, &n_scanned);
    CU_ASSERT_EQUAL(n_scanned, 0);
}

/* The one pass: records the scanner reads where they start come back with
 * its tokens, the others (invalid, crossing a read chunk) cut as before. */
static void test_one_pass_records_equal_split_then_scanned(void)
{
    tw__json_scan scan;
    tw__json_scan_init(&scan);
    scan.max_depth = TW__JSON_SCAN_DEEPEST;
    size_t n_scanned = 0;
    split_and_compare(&scan, true, &n_scanned);
    CU_ASSERT(n_scanned > 1000);
    split_and_compare(&scan, false, &n_scanned);
    tw__json_scan_free(&scan);
}

/* A record cut off at the end of the input is reported, not run past. */
static void test_splitter_reports_record_cut_at_any_byte(void)
{
    const char *full =
        "{\"a\":\"x\\\"{[\",\"b\":[{\"c\":\"}}}}\\\\\"}],\"d\":\"0123456789abcdef\"}";
    size_t n = strlen(full);
    for (size_t cut = 1; cut < n; cut++) {
        char *p = malloc(cut);
        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        memcpy(p, full, cut);
        FILE *f = fmemopen(p, cut, "rb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        tw__json_stream *js = tw__json_stream_new(f, 0);
        const char *rec, *why;
        size_t len, line_no;
        CU_ASSERT_EQUAL(tw__json_stream_next(js, &rec, &len, &line_no, &why), TW__JSON_BAD);
        tw__json_stream_free(js);
        fclose(f);
        free(p);
    }
    FILE *f = fmemopen((void *)full, n, "rb");
    tw__json_stream *js = tw__json_stream_new(f, 0);
    const char *rec, *why;
    size_t len, line_no;
    CU_ASSERT_EQUAL(tw__json_stream_next(js, &rec, &len, &line_no, &why), TW__JSON_RECORD);
    CU_ASSERT_EQUAL(len, n);
    tw__json_stream_free(js);
    fclose(f);
}

/* ---- the scanner's decimals ------------------------------------------------------------- */

static void test_scanned_reals_equal_strtod(void)
{
    tw__json_scan s;
    tw__json_scan_init(&s);
    size_t wrong = 0;
    char text[80];
    for (size_t round = 0; round < 200000; round++) {
        /* d.ddd with 1-24 digits on either side, sometimes leading zeros,
         * sometimes negative, sometimes an exponent. */
        size_t w = 0;
        text[w++] = '[';
        size_t start = w;
        if (rnd() % 3 == 0)
            text[w++] = '-';
        size_t int_digits = 1 + rnd() % (round % 2 ? 4 : 17);
        if (rnd() % 3 == 0) {
            text[w++] = '0';
        } else {
            text[w++] = (char)('1' + rnd() % 9);
            for (size_t i = 1; i < int_digits; i++)
                text[w++] = (char)('0' + rnd() % 10);
        }
        text[w++] = '.';
        size_t frac_digits = 1 + rnd() % 24;
        for (size_t i = 0; i < frac_digits; i++)
            text[w++] = (char)(rnd() % 3 == 0 ? '0' : '0' + rnd() % 10);
        if (rnd() % 10 == 0)
            w += (size_t)snprintf(text + w, sizeof text - w, "e%d", (int)(rnd() % 40) - 20);
        size_t end = w;
        text[w++] = ']';
        text[w] = '\0';
        char number[80];
        memcpy(number, text + start, end - start);
        number[end - start] = '\0';
        double expect = strtod(number, NULL);
        if (!tw__json_scan_parse(&s, text, w) || s.tok[1].type != TW__J_REAL ||
            memcmp(&s.tok[1].v.d, &expect, sizeof expect) != 0)
            wrong++;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    tw__json_scan_free(&s);
}

#ifdef TW__JSON_SWAR
static void test_eight_digits_match_byte_reference(void)
{
    static const unsigned char near[] = {'0',         '5',  '9',  '/',  ':',  0x00, 0xb0, 0xb9,
                                         0x30 + 0x80, 0x2a, 0x3f, 0x40, 0x36, 0x39, 0x20, 0xff};
    size_t wrong = 0;
    for (size_t round = 0; round < 300000; round++) {
        unsigned char b[8];
        for (size_t i = 0; i < 8; i++)
            b[i] = rnd() % 4 ? (unsigned char)('0' + rnd() % 10) : near[rnd() % sizeof near];
        uint64_t x;
        memcpy(&x, b, 8);
        bool all = true;
        uint64_t value = 0;
        for (size_t i = 0; i < 8; i++) {
            all = all && b[i] >= '0' && b[i] <= '9';
            value = value * 10 + (uint64_t)(b[i] - '0');
        }
        if (tw__json_eight_digits(x) != all || (all && tw__json_eight_digits_value(x) != value))
            wrong++;
    }
    CU_ASSERT_EQUAL(wrong, 0);
}
#endif

/* Integers of 1 to 21 digits (the eight-at-a-time digits, the int64 edges):
 * the scanner's value or refusal is strtoll's. */
static void test_scanned_integers_equal_strtoll(void)
{
    tw__json_scan s;
    tw__json_scan_init(&s);
    static const char *const edges[] = {"9223372036854775807",  "9223372036854775808",
                                        "-9223372036854775808", "-9223372036854775809",
                                        "18446744073709551615", "99999999999999999999",
                                        "10000000000000000",    "1700000000010367"};
    size_t wrong = 0;
    char text[40];
    for (size_t round = 0; round < 200000; round++) {
        size_t w = 0;
        text[w++] = '[';
        if (round < sizeof edges / sizeof edges[0]) {
            w += (size_t)snprintf(text + w, sizeof text - w, "%s", edges[round]);
        } else {
            if (rnd() % 3 == 0)
                text[w++] = '-';
            size_t digits = 1 + rnd() % 21;
            text[w++] = (char)('1' + rnd() % 9);
            for (size_t i = 1; i < digits; i++)
                text[w++] = (char)('0' + (rnd() % 4 ? rnd() % 10 : 9));
        }
        text[w] = '\0';
        errno = 0;
        long long expect = strtoll(text + 1, NULL, 10);
        bool fits = errno != ERANGE;
        text[w++] = ']';
        bool ok = tw__json_scan_parse(&s, text, w);
        if (ok != fits || (ok && (s.tok[1].type != TW__J_INTEGER || s.tok[1].v.i != expect)))
            wrong++;
    }
    CU_ASSERT_EQUAL(wrong, 0);
    tw__json_scan_free(&s);
}

/* tw__json_scan_pick's word-wise key comparison: objects whose keys differ
 * from the wanted ones in one byte at any position (lengths 0-20), in
 * any order, against a memcmp search. */
static void test_pick_matches_memcmp_search(void)
{
    tw__json_scan s;
    tw__json_scan_init(&s);
    size_t wrong = 0;
    char names[6][24];
    tw__json_key keys[6];
    tw__buf text;
    tw__buf_init(&text);
    for (size_t round = 0; round < 50000; round++) {
        size_t n_keys = 1 + rnd() % 6;
        for (size_t k = 0; k < n_keys; k++) {
            size_t len = rnd() % 21;
            for (size_t i = 0; i < len; i++)
                names[k][i] = (char)('a' + rnd() % 3);
            names[k][len] = '\0';
            keys[k].name = names[k];
            keys[k].len = len;
        }
        bool is_repeated = false; /* pick wants distinct keys */
        for (size_t a = 0; a < n_keys; a++)
            for (size_t b = a + 1; b < n_keys; b++)
                is_repeated = is_repeated || strcmp(names[a], names[b]) == 0;
        if (is_repeated)
            continue;
        /* The object: some wanted keys, some with one byte changed. */
        tw__buf_reset(&text);
        tw__buf_put_byte(&text, '{');
        size_t members = rnd() % 8;
        for (size_t m = 0; m < members; m++) {
            char key[24];
            const tw__json_key *w = &keys[rnd() % n_keys];
            memcpy(key, w->name, w->len);
            size_t len = w->len;
            if (rnd() % 2 && len)
                key[rnd() % len] = 'z';
            else if (rnd() % 4 == 0)
                key[len++] = 'a';
            if (m)
                tw__buf_put_byte(&text, ',');
            tw__buf_put_byte(&text, '"');
            tw__buf_put(&text, key, len);
            tw__buf_put(&text, "\":", 2);
            char v[16];
            tw__buf_put(&text, v, (size_t)snprintf(v, sizeof v, "%zu", m));
        }
        tw__buf_put_byte(&text, '}');
        if (!tw__json_scan_parse(&s, (const char *)text.data, text.len))
            continue; /* a key twice */
        size_t got[6], expect[6] = {0};
        CU_ASSERT_TRUE_FATAL(tw__json_scan_pick(&s, 0, keys, n_keys, got));
        for (size_t k = 0; k < n_keys; k++) {
            for (size_t j = 1; j < s.tok[0].end; j = s.tok[j + 1].end) {
                if (s.tok[j].len == keys[k].len &&
                    memcmp(s.tok[j].v.str, keys[k].name, keys[k].len) == 0)
                    expect[k] = j + 1;
            }
            wrong += got[k] != expect[k];
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    tw__buf_free(&text);
    tw__json_scan_free(&s);
}

/* ---- integers and ids ------------------------------------------------------------------------ */

/* Values at every digit-count edge, then random ones of every magnitude. */
static uint64_t number_sample(size_t i)
{
    static const uint64_t edges[] = {0,
                                     1,
                                     9,
                                     10,
                                     99,
                                     100,
                                     9999,
                                     10000,
                                     99999999,
                                     100000000,
                                     9999999999999999u,
                                     10000000000000000u,
                                     (uint64_t)INT64_MAX,
                                     (uint64_t)INT64_MAX + 1,
                                     UINT64_MAX};
    if (i < sizeof edges / sizeof edges[0])
        return edges[i];
    uint64_t v = (uint64_t)rnd() << 32 | rnd();
    return v >> (rnd() % 64);
}

static void test_integers_equal_printf(void)
{
    tw__buf b = {0};
    char expect[48];
    size_t wrong = 0;
    for (size_t i = 0; i < 400000; i++) {
        uint64_t v = number_sample(i);
        for (int k = 0; k < 4; k++) {
            tw__buf_reset(&b);
            int n;
            bool ok;
            switch (k) {
            case 0:
                ok = tw__json_put_uint(&b, v);
                n = snprintf(expect, sizeof expect, "%" PRIu64, v);
                break;
            case 1:
                ok = tw__json_put_int(&b, (int64_t)v);
                n = snprintf(expect, sizeof expect, "%" PRId64, (int64_t)v);
                break;
            case 2:
                ok = tw__json_put_quoted_uint(&b, v);
                n = snprintf(expect, sizeof expect, "\"%" PRIu64 "\"", v);
                break;
            default:
                ok = tw__json_put_quoted_int(&b, (int64_t)v);
                n = snprintf(expect, sizeof expect, "\"%" PRId64 "\"", (int64_t)v);
                break;
            }
            wrong += !ok || b.len != (size_t)n || memcmp(b.data, expect, b.len) != 0;
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    tw__buf_free(&b);
}

static void test_hex_ids_equal_printf(void)
{
    size_t wrong = 0;
    for (size_t i = 0; i < 400000; i++) {
        uint64_t v = number_sample(i);
        char got[17], expect[17];
        tw__hex64(v, got);
        snprintf(expect, sizeof expect, "%016" PRIx64, v);
        wrong += memcmp(got, expect, 17) != 0;
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

/* tw__parse_hex as it was before its eight-digit path: a table lookup per
 * digit, the first bad or refused digit located by a second loop. */
static tw__hex_error parse_hex_reference(const char *s, size_t n, size_t max_digits,
                                         bool lower_only, uint64_t *hi, uint64_t *lo,
                                         size_t *bad_at)
{
    if (n == 0)
        return TW__HEX_EMPTY;
    if (n > max_digits)
        return TW__HEX_TOO_LONG;
    uint64_t h = 0, l = 0;
    for (size_t i = 0; i < n; i++) {
        int v = tw__hex_value[(unsigned char)s[i]];
        if (v < 0 || (lower_only && (v & 0x10))) {
            *bad_at = i;
            return v < 0 ? TW__HEX_BAD_DIGIT : TW__HEX_UPPER;
        }
        if (n - i > 16)
            h = (h << 4) | (uint64_t)(v & 0xf);
        else
            l = (l << 4) | (uint64_t)(v & 0xf);
    }
    *hi = h;
    *lo = l;
    return TW__HEX_OK;
}

/* Both parsers on @s[0..n) (a heap block of exactly n bytes) in the four
 * modes; true when every result, output and bad index agrees. */
static bool hex_parsers_agree(const char *s, size_t n)
{
    bool same = true;
    for (int mode = 0; mode < 4; mode++) {
        size_t max_digits = mode & 1 ? 32 : 16;
        bool lower_only = mode & 2;
        uint64_t hi[2] = {7, 7}, lo[2] = {7, 7};
        size_t bad[2] = {99, 99};
        tw__hex_error e0 = tw__parse_hex(s, n, max_digits, lower_only, &hi[0], &lo[0], &bad[0]);
        tw__hex_error e1 =
            parse_hex_reference(s, n, max_digits, lower_only, &hi[1], &lo[1], &bad[1]);
        same = same && e0 == e1 && hi[0] == hi[1] && lo[0] == lo[1] && bad[0] == bad[1];
    }
    return same;
}

/* Every byte value at every position of every length 0..33, in a field of
 * random hex digits of both cases (one case only, and mixed); then random
 * fields with several bad bytes. */
static void test_hex_parse_matches_byte_reference(void)
{
    static const char digits[] = "0123456789abcdefABCDEF";
    size_t wrong = 0;
    for (size_t n = 0; n <= 33; n++) {
        char *s = malloc(n ? n : 1);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        for (int field = 0; field < 3; field++) {
            /* field 0: lower case only, 1: upper case only, 2: mixed. */
            for (size_t i = 0; i < n; i++) {
                uint32_t r = rnd();
                s[i] = field == 0   ? digits[r % 16]
                       : field == 1 ? digits[r % 16 < 10 ? r % 16 : r % 16 + 6]
                                    : digits[r % 22];
            }
            wrong += !hex_parsers_agree(s, n);
            for (size_t at = 0; at < n; at++) {
                char keep = s[at];
                for (int c = 0; c < 256; c++) {
                    s[at] = (char)c;
                    wrong += !hex_parsers_agree(s, n);
                }
                s[at] = keep;
            }
        }
        for (int round = 0; round < 2000; round++) {
            for (size_t i = 0; i < n; i++)
                s[i] = rnd() % 8 ? digits[rnd() % 22] : (char)rnd();
            wrong += !hex_parsers_agree(s, n);
        }
        free(s);
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/json_swar", NULL, NULL);
    if (!suite)
        return;
    CU_ADD_TEST(suite, test_run_stops_at_each_position_and_length);
    CU_ADD_TEST(suite, test_run_matches_reference_on_random_bytes);
    CU_ADD_TEST(suite, test_escaper_matches_byte_reference);
    CU_ADD_TEST(suite, test_splitter_cuts_where_byte_reference_does);
    CU_ADD_TEST(suite, test_one_pass_records_equal_split_then_scanned);
    CU_ADD_TEST(suite, test_splitter_reports_record_cut_at_any_byte);
    CU_ADD_TEST(suite, test_scanned_reals_equal_strtod);
    CU_ADD_TEST(suite, test_scanned_integers_equal_strtoll);
    CU_ADD_TEST(suite, test_pick_matches_memcmp_search);
    CU_ADD_TEST(suite, test_integers_equal_printf);
    CU_ADD_TEST(suite, test_hex_ids_equal_printf);
    CU_ADD_TEST(suite, test_hex_parse_matches_byte_reference);
#ifdef TW__JSON_SWAR
    CU_ADD_TEST(suite, test_eight_digits_match_byte_reference);
#endif
}
