/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_dapper_fast.c: suite "wire/dapper_fast": the
 * scanner-based Dapper log decoder (sdk/wire/dapper/dapper_log_fast.c, on
 * wire/core/json_scan.h) against the Jansson decoder it stands in front of.
 *
 * For every line the SDK's encoder writes for a large random corpus
 * (tests/unit/wire/span_corpus.h), and for rewritten forms of those lines
 * (whitespace everywhere, members in reverse order, \u escapes and "\/" in
 * keys and values, unknown members with nested values, Jansson's
 * ASCII-only dump), the fast decoder must accept and give a record and a
 * process equal to the Jansson decoder's. Hand-written edge lines (duplicate
 * keys, numbers Jansson reads differently, surrogates, control characters,
 * NUL in keys, depth, ...) must either decode equal or be declined, and a
 * declined line must give exactly the Jansson path's result and message.
 *
 * The reader's process memo (tw__dapper_log_reader_next_shared): a stream of
 * lines whose processes repeat (more of them than the memo holds, some
 * longer than it keeps, some lines mutated) must read record for record as
 * tw__dapper_log_decode reads each line alone, and a stamp met again must
 * be the same process, unchanged, at the same address.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "harness.h"
#include "internal.h"
#include "model_equal.h"
#include "span_corpus.h"
#include "wire/dapper/dapper_log.h"
#include "wire/dapper/dapper_log_int.h"
#include "wire/core/json_direct.h"

/* Under AddressSanitizer every decode costs several times more: the
 * loops are shortened there (CI's asan stage), the plain build runs them
 * whole; every kind of line and mutation is still covered. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifdef UNDER_ASAN
#define N_RANDOM 1200
#define N_MUTATED 150
#define N_NUMBERS 40000
#else
#define N_RANDOM 6000
#define N_MUTATED 800
#define N_NUMBERS 200000
#endif

static bool processes_equal(const tw__process *a, const tw__process *b)
{
    return strcmp(a->service_name, b->service_name) == 0 &&
           tw_test_tags_equal(a->tags, a->n_tags, b->tags, b->n_tags);
}

static bool records_equal(const tw__span_data *a, const tw__span_data *b)
{
    return tw_test_spans_equal(a, b) && a->shared == b->shared &&
           a->is_duration_unknown == b->is_duration_unknown;
}

typedef struct {
    size_t accepted, declined, mismatched;
    size_t direct_accepted; /* by the direct decoder (dapper_log_direct.c) */
} tally;

/* Decodes one line every way. The direct decoder, when it accepts, must
 * give Jansson's record (and so the fast decoder's, when that accepts too);
 * a fast result must equal Jansson's; a line both decline must decode
 * through tw__dapper_log_decode exactly as the Jansson path alone decodes
 * it (status and message). Returns whether the fast path accepted. */
static bool check_line(const char *line, size_t len, tally *t)
{
    tw__span_data *fs = NULL, *js = NULL, *ps = NULL, *ds = NULL;
    tw__process fp, jp, pp, dp;
    tw_error *je = NULL, *pe = NULL;
    bool direct_ok = tw__dapper_log_decode_direct(line, len, &ds, &dp);
    bool fast_ok = tw__dapper_log_decode_fast(line, len, &fs, &fp);
    tw_status jst = tw__dapper_log_decode_jansson(line, len, 3, &js, &jp, &je);
    bool ok = true;
    if (direct_ok) {
        t->direct_accepted++;
        ok = jst == TW_OK && records_equal(ds, js) && processes_equal(&dp, &jp);
        if (!ok)
            fprintf(stderr, "the direct decoder disagrees with Jansson:\n");
        tw__span_data_unref(ds);
        tw__process_clear(&dp);
    } else if (ds) {
        ok = false;
        fprintf(stderr, "the direct decoder declined and set its output:\n");
    }
    if (fast_ok) {
        t->accepted++;
        ok = ok && jst == TW_OK && records_equal(fs, js) && processes_equal(&fp, &jp);
        tw__span_data_unref(fs);
        tw__process_clear(&fp);
    } else {
        t->declined++;
        tw_status pst = tw__dapper_log_decode(line, len, 3, &ps, &pp, &pe);
        ok = ok && pst == jst;
        if (ok && pst == TW_OK) {
            ok = records_equal(ps, js) && processes_equal(&pp, &jp);
            tw__span_data_unref(ps);
            tw__process_clear(&pp);
        } else if (ok) {
            ok = strcmp(tw_error_message(pe), tw_error_message(je)) == 0;
        } else if (pst == TW_OK) {
            tw__span_data_unref(ps);
            tw__process_clear(&pp);
        }
    }
    if (jst == TW_OK) {
        tw__span_data_unref(js);
        tw__process_clear(&jp);
    }
    if (!ok) {
        t->mismatched++;
        fprintf(stderr, "decoders disagree (direct %s, fast %s, Jansson %s%s%s) on:\n%.*s\n",
                direct_ok ? "accepted" : "declined", fast_ok ? "accepted" : "declined",
                tw_status_str(jst), je ? ": " : "", je ? tw_error_message(je) : "", (int)len, line);
    }
    tw_error_free(je);
    tw_error_free(pe);
    return fast_ok;
}

/* ---- rewriting lines ---------------------------------------------------------------------- */

static void put(tw__buf *b, const void *p, size_t n)
{
    if (!tw__buf_append(b, p, n))
        CU_FAIL_FATAL("out of memory");
}

/* Random JSON whitespace after every structural character outside strings. */
static void add_whitespace(const char *in, size_t len, tw__buf *out, corpus_rng *r)
{
    static const char ws[] = " \t\r\n";
    bool in_string = false, escaped = false;
    put(out, " \t", 2);
    for (size_t i = 0; i < len; i++) {
        char c = in[i];
        put(out, &c, 1);
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        }
        if (!in_string &&
            (c == '{' || c == '}' || c == '[' || c == ']' || c == ':' || c == ',' || c == '"')) {
            size_t n = corpus_below(r, 3);
            for (size_t k = 0; k < n; k++)
                put(out, &ws[corpus_below(r, 4)], 1);
        }
    }
    put(out, "\r\n \t", 4);
}

static void put_u(tw__buf *out, unsigned cp, bool upper)
{
    char e[8];
    snprintf(e, sizeof e, upper ? "\\u%04X" : "\\u%04x", cp);
    put(out, e, 6);
}

/* Escapes characters inside strings: ASCII letters as \u00XX, '/' as "\/",
 * multi-byte characters as \uXXXX or a surrogate pair. */
static void add_escapes(const char *in, size_t len, tw__buf *out, corpus_rng *r)
{
    bool in_string = false;
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)in[i];
        if (!in_string) {
            in_string = c == '"';
            put(out, &in[i++], 1);
            continue;
        }
        if (c == '\\') { /* an escape already there: copy it whole */
            size_t n = in[i + 1] == 'u' ? 6 : 2;
            put(out, &in[i], n);
            i += n;
            continue;
        }
        if (c == '"') {
            in_string = false;
            put(out, &in[i++], 1);
            continue;
        }
        bool upper = corpus_below(r, 2);
        if (c < 0x80) {
            if (c == '/' && corpus_below(r, 2))
                put(out, "\\/", 2);
            else if (corpus_below(r, 3) == 0)
                put_u(out, c, upper);
            else
                put(out, &in[i], 1);
            i++;
            continue;
        }
        size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
        unsigned cp = c & (n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
        for (size_t k = 1; k < n; k++)
            cp = cp << 6 | ((unsigned char)in[i + k] & 0x3f);
        if (corpus_below(r, 2)) {
            put(out, &in[i], n);
        } else if (cp >= 0x10000) {
            cp -= 0x10000;
            put_u(out, 0xd800 + (cp >> 10), upper);
            put_u(out, 0xdc00 + (cp & 0x3ff), !upper);
        } else {
            put_u(out, cp, upper);
        }
        i += n;
    }
}

/* Every object with its members in reverse order (Jansson rebuilds it). */
static json_t *reversed(const json_t *j)
{
    if (json_is_object(j)) {
        size_t n = json_object_size(j);
        const char **keys = calloc(n ? n : 1, sizeof *keys);
        json_t **values = calloc(n ? n : 1, sizeof *values);
        size_t k = 0;
        const char *key;
        json_t *value;
        json_object_foreach((json_t *)j, key, value)
        {
            keys[k] = key;
            values[k++] = value;
        }
        json_t *o = json_object();
        while (k > 0) {
            k--;
            json_object_set_new(o, keys[k], reversed(values[k]));
        }
        free(keys);
        free(values);
        return o;
    }
    if (json_is_array(j)) {
        json_t *a = json_array();
        for (size_t i = 0; i < json_array_size(j); i++)
            json_array_append_new(a, reversed(json_array_get(j, i)));
        return a;
    }
    return json_deep_copy(j);
}

static void reorder(const char *in, size_t len, tw__buf *out, size_t flags)
{
    json_t *j = json_loadb(in, len, JSON_ALLOW_NUL, NULL);
    CU_ASSERT_FATAL(j != NULL);
    json_t *r = reversed(j);
    char *text = json_dumps(r, flags);
    CU_ASSERT_FATAL(text != NULL);
    put(out, text, strlen(text));
    free(text);
    json_decref(r);
    json_decref(j);
}

/* Unknown members with nested values, at the top and in the process. */
static void add_unknown(const char *in, size_t len, tw__buf *out)
{
    static const char extra[] =
        "\"zz_unknown\":{\"a\":[1,-2.5e-3,1E+2,true,false,null,\"\\u00e9\\/\",[],{}],\"b\":{}},";
    put(out, "{", 1);
    put(out, extra, sizeof extra - 1);
    /* The process is the encoder's last member: its last occurrence (a
     * value could hold the same text, escaped). */
    static const char member[] = ",\"process\":{";
    const char *process = NULL;
    for (size_t at = len; at >= sizeof member - 1 && !process; at--) {
        if (memcmp(in + at - (sizeof member - 1), member, sizeof member - 1) == 0)
            process = in + at - (sizeof member - 1) + 1;
    }
    CU_ASSERT_FATAL(process != NULL);
    size_t head = (size_t)(process - in) + 11;
    put(out, in + 1, head - 1);
    put(out, extra, sizeof extra - 1);
    put(out, in + head, len - head);
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_sdk_lines_and_rewrites_decode_equal(void)
{
    tally sdk = {0}, rewrites = {0};
    tw__buf line, variant;
    tw__buf_init(&line);
    tw__buf_init(&variant);
    corpus_rng r = {42};
    for (size_t i = 0; i < N_RANDOM; i++) {
        tw__process p;
        bool has_process;
        tw__span_data *s = corpus_span(11, i, &p, &has_process, CORPUS_INVALID_KEYS);
        CU_ASSERT_FATAL(s != NULL);
        tw__dapper_log_encoder *enc = tw__dapper_log_encoder_new(&p);
        CU_ASSERT_FATAL(enc != NULL);
        tw__buf_reset(&line);
        CU_ASSERT_FATAL(tw__dapper_log_encode_span(enc, s, &line));
        const char *text = (const char *)line.data;
        size_t len = line.len - 1; /* without "\n" */
        size_t direct_before = sdk.direct_accepted;
        CU_ASSERT(check_line(text, len, &sdk));
        /* The direct decoder reads every line of the encoder but those
         * with a NUL in a string (corpus_span makes many on purpose). */
        if (!memmem(text, len, "\\u0000", 6)) {
            if (sdk.direct_accepted == direct_before)
                fprintf(stderr, "the direct decoder declined an SDK line: %.*s\n", (int)len, text);
            CU_ASSERT_EQUAL(sdk.direct_accepted, direct_before + 1);
        }
        for (int v = 0; v < 5; v++) {
            tw__buf_reset(&variant);
            switch (v) {
            case 0:
                add_whitespace(text, len, &variant, &r);
                break;
            case 1:
                add_escapes(text, len, &variant, &r);
                break;
            case 2:
                reorder(text, len, &variant,
                        JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
                break;
            case 3:
                reorder(text, len, &variant,
                        JSON_INDENT(1) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(17));
                break;
            case 4:
                add_unknown(text, len, &variant);
                break;
            }
            CU_ASSERT(check_line((const char *)variant.data, variant.len, &rewrites));
        }
        tw__dapper_log_encoder_free(enc);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    printf("\n  SDK lines: %zu accepted, %zu declined (direct decoder: %zu accepted); rewritten "
           "lines: %zu accepted, %zu declined (direct: %zu accepted) ",
           sdk.accepted, sdk.declined, sdk.direct_accepted, rewrites.accepted, rewrites.declined,
           rewrites.direct_accepted);
    CU_ASSERT_EQUAL(sdk.declined, 0);
    CU_ASSERT_EQUAL(rewrites.declined, 0);
    CU_ASSERT_EQUAL(sdk.mismatched + rewrites.mismatched, 0);
    tw__buf_free(&line);
    tw__buf_free(&variant);
}

/* ---- mutations of the encoder's lines (the direct decoder's shape) ------------------------- */

/* The members of the object at text[from] ('{'): *n ranges [start, end). */
static size_t object_members(const char *text, size_t len, size_t from, size_t *start, size_t *end,
                             size_t max)
{
    size_t n = 0, depth = 0;
    bool in_string = false, escaped = false;
    for (size_t i = from; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth == 1 && n < max)
                start[n] = i + 1;
        } else if (c == '}' || c == ']') {
            if (depth-- == 1) {
                if (n < max && start[n] < i)
                    end[n++] = i;
                return n;
            }
        } else if (c == ',' && depth == 1 && n < max) {
            end[n++] = i;
            if (n < max)
                start[n] = i + 1;
        }
    }
    return n;
}

/* @text with its members [start[i], end[i]) dropped (@how 0), repeated (1)
 * or swapped with the next one (2). */
static void mutate_member(const char *text, size_t len, const size_t *start, const size_t *end,
                          size_t n, size_t i, int how, tw__buf *out)
{
    size_t a = start[i], b = end[i];
    if (how == 0) { /* with the comma before it, or after it for the first */
        size_t cut_from = i > 0 ? start[i] - 1 : a, cut_to = i > 0 ? b : (i + 1 < n ? b + 1 : b);
        put(out, text, cut_from);
        put(out, text + cut_to, len - cut_to);
    } else if (how == 1) {
        put(out, text, b);
        put(out, ",", 1);
        put(out, text + a, len - a);
    } else if (i + 1 < n) {
        size_t c = start[i + 1], d = end[i + 1];
        put(out, text, a);
        put(out, text + c, d - c);
        put(out, ",", 1);
        put(out, text + a, b - a);
        put(out, text + d, len - d);
    } else {
        put(out, text, len);
    }
}

/* Bytes and snippets that make a line valid in another way, or invalid. */
static const char *const snippets[] = {"\"",
                                       "\\",
                                       ",",
                                       ":",
                                       "{",
                                       "}",
                                       "[",
                                       "]",
                                       "0",
                                       "9",
                                       "-",
                                       ".",
                                       "e",
                                       "E",
                                       "a",
                                       "A",
                                       "F",
                                       "g",
                                       " ",
                                       "\t",
                                       "\x7f",
                                       "\xc3",
                                       "\xff",
                                       "\x01",
                                       "\xed\xa0\x80",
                                       "\xf4\x90\x80\x80",
                                       "\\u0000",
                                       "\\ud800",
                                       "\\udc00",
                                       "\\ud83d\\ude00",
                                       "\\u00e9",
                                       "\\n",
                                       "\\\"",
                                       "\\/",
                                       "\\x",
                                       "1e5",
                                       ".5",
                                       "00",
                                       "-0",
                                       "999999999999999999",
                                       "9223372036854775808",
                                       "\"x\":1,",
                                       ",\"v\":1",
                                       "true",
                                       "false",
                                       "null",
                                       "\"\"",
                                       "0.20000000000000001",
                                       "1.5e-7",
                                       "\\u0041",
                                       "\xe2\x82\xac"};

static void mutate_bytes(const char *text, size_t len, corpus_rng *r, tw__buf *out)
{
    size_t at = corpus_below(r, len + 1);
    const char *sn = snippets[corpus_below(r, sizeof snippets / sizeof snippets[0])];
    switch (corpus_below(r, 5)) {
    case 0: /* replace a byte */
        put(out, text, at);
        put(out, sn, strlen(sn));
        if (at < len)
            put(out, text + at + 1, len - at - 1);
        break;
    case 1: /* insert */
        put(out, text, at);
        put(out, sn, strlen(sn));
        put(out, text + at, len - at);
        break;
    case 2: /* delete a few bytes */
    {
        size_t n = 1 + corpus_below(r, 4);
        put(out, text, at);
        if (at + n < len)
            put(out, text + at + n, len - at - n);
        break;
    }
    case 3: /* cut */
        put(out, text, at);
        break;
    default: /* repeat a piece */
    {
        size_t n = corpus_below(r, 24);
        put(out, text, at);
        put(out, text + (at > n ? at - n : 0), at > n ? n : at);
        put(out, text + at, len - at);
        break;
    }
    }
}

/* The encoder's lines with members dropped, repeated, swapped (at the top
 * and in the process), and bytes replaced, inserted, deleted: the direct
 * decoder accepts only what it reads as Jansson does (check_line). */
static void test_direct_decoder_on_mutated_lines(void)
{
    tally t = {0};
    tw__buf line, variant;
    tw__buf_init(&line);
    tw__buf_init(&variant);
    corpus_rng r = {7};
    for (size_t i = 0; i < N_MUTATED; i++) {
        tw__process p;
        bool has_process;
        tw__span_data *s = corpus_span(23, i, &p, &has_process, CORPUS_EMPTY_KEYS);
        CU_ASSERT_FATAL(s != NULL);
        tw__dapper_log_encoder *enc = tw__dapper_log_encoder_new(&p);
        CU_ASSERT_FATAL(enc != NULL);
        tw__buf_reset(&line);
        CU_ASSERT_FATAL(tw__dapper_log_encode_span(enc, s, &line));
        const char *text = (const char *)line.data;
        size_t len = line.len - 1;
        check_line(text, len, &t);
        size_t start[32], end[32];
        size_t n = object_members(text, len, 0, start, end, 32);
        for (size_t m = 0; m < n; m++) {
            for (int how = 0; how < 3; how++) {
                tw__buf_reset(&variant);
                mutate_member(text, len, start, end, n, m, how, &variant);
                check_line((const char *)variant.data, variant.len, &t);
            }
        }
        /* The process object: the last member's value. */
        if (n > 0 && end[n - 1] - start[n - 1] > 11 &&
            memcmp(text + start[n - 1], "\"process\":{", 11) == 0) {
            size_t ps[16], pe[16];
            size_t pn = object_members(text, len, start[n - 1] + 10, ps, pe, 16);
            for (size_t m = 0; m < pn; m++) {
                for (int how = 0; how < 3; how++) {
                    tw__buf_reset(&variant);
                    mutate_member(text, len, ps, pe, pn, m, how, &variant);
                    check_line((const char *)variant.data, variant.len, &t);
                }
            }
        }
        for (int k = 0; k < 24; k++) {
            tw__buf_reset(&variant);
            mutate_bytes(text, len, &r, &variant);
            if (!memchr(variant.data, '\0', variant.len)) /* the caller refuses NUL bytes */
                check_line((const char *)variant.data, variant.len, &t);
        }
        /* A NUL byte anywhere: tw__dapper_log_decode gives such a line to
         * the direct decoder before it looks for NULs; it must decline. */
        for (int k = 0; k < 4; k++) {
            tw__buf_reset(&variant);
            size_t at = corpus_below(&r, len);
            put(&variant, text, len);
            variant.data[at] = '\0';
            tw__span_data *ds = NULL;
            tw__process dp;
            CU_ASSERT_FALSE(
                tw__dapper_log_decode_direct((const char *)variant.data, len, &ds, &dp));
            CU_ASSERT_PTR_NULL(ds);
            tw_error *e = NULL;
            CU_ASSERT_EQUAL(tw__dapper_log_decode((const char *)variant.data, len, 1, &ds, &dp, &e),
                            TW_E_MALFORMED);
            CU_ASSERT(e && strstr(tw_error_message(e), "a NUL byte at column") != NULL);
            tw_error_free(e);
        }
        tw__dapper_log_encoder_free(enc);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    printf("\n  %zu mutated lines: the direct decoder accepted %zu, the fast one %zu ",
           t.accepted + t.declined, t.direct_accepted, t.accepted);
    CU_ASSERT(t.direct_accepted > 0);
    CU_ASSERT_EQUAL(t.mismatched, 0);
    tw__buf_free(&line);
    tw__buf_free(&variant);
}

#define BASE_HEAD "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\","
#define BASE_TAIL "\"start_us\":1,\"end_us\":2,\"process\":{\"service\":\"s\"}}"
#define TAG(type, value) "\"tags\":[{\"key\":\"k\",\"type\":\"" type "\",\"value\":" value "}],"

/* Lines the fast decoder must decline (Jansson reads them differently, or
 * rejects them, or they exceed the scanner's limits). */
static const char *const must_decline[] = {
    BASE_HEAD "\"v\":1," BASE_TAIL,                       /* duplicate key */
    BASE_HEAD "\"\\u0076\":1," BASE_TAIL,                 /* duplicate through an escape */
    BASE_HEAD "\"\":\"a\",\"x\":1,\"\":\"b\"," BASE_TAIL, /* duplicate empty keys (fuzz) */
    BASE_HEAD "\"ab\":1,\"aab\":1,\"ab\":2," BASE_TAIL,
    BASE_HEAD "\"start_us\":1,\"end_us\":2,\"process\":{\"service\":\"s\",\"service\":\"t\"}}",
    BASE_HEAD "\"start_us\":1.0,\"end_us\":2,\"process\":{\"service\":\"s\"}}",
    BASE_HEAD "\"start_us\":1e0,\"end_us\":2,\"process\":{\"service\":\"s\"}}",
    BASE_HEAD "\"start_us\":01,\"end_us\":2,\"process\":{\"service\":\"s\"}}",
    BASE_HEAD "\"start_us\":+1,\"end_us\":2,\"process\":{\"service\":\"s\"}}",
    BASE_HEAD "\"start_us\":1,\"end_us\":9223372036854775808,\"process\":{\"service\":\"s\"}}",
    BASE_HEAD TAG("float64", "1e400") BASE_TAIL, /* Jansson: real number overflow */
    BASE_HEAD TAG("float64", "1.") BASE_TAIL,
    BASE_HEAD TAG("float64", ".5") BASE_TAIL,
    BASE_HEAD TAG("float64", "-") BASE_TAIL,
    BASE_HEAD "\"x\":\"\\ud800\"," BASE_TAIL, /* lone high surrogate */
    BASE_HEAD "\"x\":\"\\udc00\"," BASE_TAIL, /* lone low surrogate */
    BASE_HEAD "\"x\":\"\\ud800\\u0041\"," BASE_TAIL,
    BASE_HEAD "\"x\":\"\\ud800x\"," BASE_TAIL,
    BASE_HEAD "\"x\":\"\\x\"," BASE_TAIL,
    BASE_HEAD "\"x\":\"\\u12g4\"," BASE_TAIL,
    BASE_HEAD "\"x\":\"a\tb\"," BASE_TAIL,         /* raw control character */
    BASE_HEAD "\"x\":\"\xc3\x28\"," BASE_TAIL,     /* invalid UTF-8 */
    BASE_HEAD "\"x\":\"\xed\xa0\x80\"," BASE_TAIL, /* an encoded surrogate */
    BASE_HEAD "\"x\":\"\xc0\xaf\"," BASE_TAIL,     /* overlong */
    BASE_HEAD "\"x\\u0000\":1," BASE_TAIL,         /* NUL in a key */
    BASE_HEAD "\"x\":tru," BASE_TAIL,
    BASE_HEAD "\"x\":nul," BASE_TAIL,
    BASE_HEAD "\"x\":[1,]," BASE_TAIL,
    BASE_HEAD "\"x\":{,}," BASE_TAIL,
    BASE_HEAD BASE_TAIL ",",
    BASE_HEAD BASE_TAIL " x",
    BASE_HEAD BASE_TAIL "{}",
    "\xef\xbb\xbf" BASE_HEAD BASE_TAIL, /* BOM */
    "[" BASE_HEAD BASE_TAIL "]",
    "",
    "   ",
    "{}",
    "null",
    "1",
    "\"s\"",
    BASE_HEAD "\"name\":\"a\\u0000b\"," BASE_TAIL, /* duplicate name, and a NUL */
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"a\\u0000b\"," BASE_TAIL,
    "{\"v\":2,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\"," BASE_TAIL,
    "{\"v\":1,\"trace_id\":\"0\",\"span_id\":\"2\",\"name\":\"n\"," BASE_TAIL,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"parent_id\":\"2\",\"name\":\"n\"," BASE_TAIL,
    BASE_HEAD TAG("int64", "\"+1\"") BASE_TAIL,
    BASE_HEAD TAG("int64", "\"99999999999999999999\"") BASE_TAIL,
    BASE_HEAD TAG("int64", "1.5") BASE_TAIL,
    BASE_HEAD TAG("binary", "\"abc\"") BASE_TAIL,
    BASE_HEAD TAG("bool", "1") BASE_TAIL,
    BASE_HEAD TAG("other", "1") BASE_TAIL,
    BASE_HEAD "\"kind\":\"client\",\"annotations\":[{\"ts_us\":1,\"value\":\"sr\"}]," BASE_TAIL,
    BASE_HEAD "\"kind\":\"CLIENT\"," BASE_TAIL,
    BASE_HEAD "\"shared\":1," BASE_TAIL,
    BASE_HEAD "\"flags\":-1," BASE_TAIL,
    BASE_HEAD "\"start_us\":3,\"end_us\":2,\"process\":{\"service\":\"s\"}}",
    BASE_HEAD "\"start_us\":1,\"end_us\":2}",
    BASE_HEAD "\"start_us\":1,\"end_us\":2,\"process\":{\"service\":\"s\",\"tags\":{}}}",
};

/* Lines the fast decoder may accept (then they must decode equal). */
static const char *const may_accept[] = {
    BASE_HEAD BASE_TAIL,
    BASE_HEAD "\"start_us\":-0,\"end_us\":2,\"process\":{\"service\":\"s\"}}",
    BASE_HEAD TAG("float64", "1E2") BASE_TAIL,
    BASE_HEAD TAG("float64", "-0.0") BASE_TAIL,
    BASE_HEAD TAG("float64", "1e-400") BASE_TAIL, /* underflow: Jansson reads 0 */
    BASE_HEAD TAG("float64", "4.9e-324") BASE_TAIL,
    BASE_HEAD TAG("float64", "3") BASE_TAIL,
    BASE_HEAD TAG("float64", "-9223372036854775808") BASE_TAIL,
    BASE_HEAD TAG("float64", "\"NaN\\u0000x\"") BASE_TAIL, /* C-string compare, as Jansson's */
    BASE_HEAD TAG("float64", "0.1000000000000000055511151231257827") BASE_TAIL,
    BASE_HEAD TAG("int64", "\"-0\"") BASE_TAIL,
    BASE_HEAD TAG("int64", "-9223372036854775808") BASE_TAIL,
    BASE_HEAD TAG("string", "\"a\\u0000b\\ud83d\\ude00\\uD83D\\uDE00\\/\\b\\f\\n\\r\\t\\\"\\\\\"")
        BASE_TAIL,
    BASE_HEAD "\"tags\":[{\"key\":\"k\",\"type\":\"string\\u0000x\",\"value\":\"v\"}]," BASE_TAIL,
    BASE_HEAD TAG("binary", "\"AA==\"") BASE_TAIL,
    BASE_HEAD TAG("binary", "\"\"") BASE_TAIL,
    BASE_HEAD "\"x\":\"\x7f\xf4\x8f\xbf\xbf\"," BASE_TAIL,
    BASE_HEAD "\"kind\":\"server\",\"annotations\":[{\"ts_us\":1,\"value\":\"sr\"},"
              "{\"ts_us\":1,\"value\":\"custom\"}],\"tags\":[{\"key\":\"span.kind\",\"type\":"
              "\"string\",\"value\":\"SERVER\"}]," BASE_TAIL,
    BASE_HEAD
    "\"refs\":[{\"type\":\"follows_from\",\"trace_id\":\"ABC\",\"span_id\":\"9\"}]," BASE_TAIL,
    BASE_HEAD "\"logs\":[{\"ts_us\":5},{\"ts_us\":6,\"fields\":[]}]," BASE_TAIL,
    BASE_HEAD "\"start_us\":1,\"end_us\":2,\"process\":{\"service\":\"s\",\"host\":\"h\\u0000\","
              "\"ip\":\"1.2.3.4\",\"tags\":[{\"key\":\"ip\",\"type\":\"int64\",\"value\":5}]}}",
    BASE_HEAD "\"shared\":false,\"duration_unknown\":true,\"flags\":4294967295," BASE_TAIL,
    "\t\r\n " BASE_HEAD BASE_TAIL " \t\r\n",
};

static void test_edge_lines(void)
{
    tally t = {0};
    for (size_t i = 0; i < sizeof must_decline / sizeof must_decline[0]; i++) {
        const char *line = must_decline[i];
        bool accepted = check_line(line, strlen(line), &t);
        if (accepted)
            fprintf(stderr, "accepted a line it must decline: %s\n", line);
        CU_ASSERT_FALSE(accepted);
    }
    size_t declined_before = t.declined;
    for (size_t i = 0; i < sizeof may_accept / sizeof may_accept[0]; i++) {
        const char *line = may_accept[i];
        if (!check_line(line, strlen(line), &t))
            fprintf(stderr, "declined: %s\n", line);
    }
    CU_ASSERT_EQUAL(t.mismatched, 0);
    /* All of these are plain valid records: none needs Jansson. */
    CU_ASSERT_EQUAL(t.declined, declined_before);
}

/* ---- the direct decoder's own edges ------------------------------------------------------- */

/* Lines in the encoder's shape (the direct decoder's), with one value each. */
#define DH                                                                                         \
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2"
#define DT ",\"process\":{\"service\":\"s\"}}"
#define DTAG(type, value) ",\"tags\":[{\"key\":\"k\",\"type\":\"" type "\",\"value\":" value "}]"

/* The direct decoder must read these (and as Jansson does). */
static const char *const direct_reads[] = {
    DH DT,
    DH DTAG("int64", "999999999999999999") DT,
    DH DTAG("int64", "-999999999999999999") DT,
    DH DTAG("int64", "-0") DT,
    DH DTAG("int64", "9223372036854775807") DT,
    DH DTAG("int64", "-9223372036854775808") DT,
    DH DTAG("float64", "-9223372036854775808") DT,
    DH DTAG("float64", "9223372036854775807") DT,
    DH DTAG("int64", "\"9223372036854775807\"") DT,
    DH DTAG("int64", "\"-9223372036854775808\"") DT,
    DH DTAG("float64", "0.20000000000000001") DT,
    DH DTAG("float64", "0.1") DT,
    DH DTAG("float64", "-0.0") DT,
    DH DTAG("float64", "123456789012345.5") DT,
    DH DTAG("float64", "0.000000000000000000000001") DT,
    DH DTAG("float64", "1.7976931348623157e308") DT,
    DH DTAG("float64", "4.9E-324") DT,
    DH DTAG("float64", "1e-400") DT, /* underflow: Jansson reads 0 */
    DH DTAG("float64", "5") DT,
    DH DTAG("float64", "-999999999999999999") DT,
    DH DTAG("float64", "\"NaN\"") DT,
    DH DTAG("float64", "\"Infinity\"") DT,
    DH DTAG("float64", "\"-Infinity\"") DT,
    DH DTAG("string", "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u00e9\\u20AC\\ud83d\\ude00\\u0041\"") DT,
    DH DTAG("string", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\x7f\xf4\x8f\xbf\xbf\"") DT,
    DH DTAG("string", "\"\"") DT,
    DH DTAG("binary", "\"AAEC\"") DT,
    DH DTAG("binary", "\"\"") DT,
    DH DTAG("bool", "false") DT,
    DH DTAG("bool", "true") DT,
    "{\"v\":1,\"trace_id\":\"0123456789ABCDEFabcdef0123456789\",\"span_id\":\"FFFFFFFFFFFFFFFF\","
    "\"parent_id\":\"1\",\"name\":\"a\\tb\\u00e9\",\"start_us\":0,\"end_us\":0" DT,
    "{\"v\":1,\"trace_id\":\"00000000000000000000000000000001\",\"span_id\":\"0000000000000002\","
    "\"name\":\"n\",\"start_us\":1,\"end_us\":9007199254740993" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"kind\":\"server\",\"start_us\":"
    "1,"
    "\"end_us\":2,\"flags\":4294967295,\"shared\":true,\"duration_unknown\":false,"
    "\"annotations\":[{\"ts_us\":1,\"value\":\"sr\"},{\"ts_us\":-1,\"value\":\"custom\"}],"
    "\"tags\":[{\"key\":\"span.kind\",\"type\":\"string\",\"value\":\"SERVER\"}],"
    "\"logs\":[{\"ts_us\":5,\"fields\":[]},{\"ts_us\":6,\"fields\":[{\"key\":\"e\",\"type\":"
    "\"binary\",\"value\":\"AA==\"}]}],\"refs\":[{\"type\":\"follows_from\",\"trace_id\":\"abc\","
    "\"span_id\":\"9\"},{\"type\":\"child_of\",\"trace_id\":\"1\",\"span_id\":\"2\"}]"
    ",\"process\":{\"service\":\"s\",\"host\":\"h\",\"ip\":\"1.2.3.4\",\"tags\":[{\"key\":\"ip\","
    "\"type\":\"int64\",\"value\":5},{\"key\":\"b\",\"type\":\"binary\",\"value\":\"AQ==\"}]}}",
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2,"
    "\"duration_unknown\":true,\"annotations\":[{\"ts_us\":1,\"value\":\"mr\"}]"
    ",\"process\":{\"service\":\"s\",\"host\":\"h\",\"tags\":[{\"key\":\"hostname\",\"type\":"
    "\"string\",\"value\":\"other\"}]}}",
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2,"
    "\"annotations\":[]" DTAG("string",
                              "\"v\"") ",\"logs\":[],\"refs\":[]"
                                       ",\"process\":{\"service\":\"\",\"ip\":\"\",\"tags\":[]}}",
};

/* The direct decoder must decline these (the others read them, or reject
 * them, with their own results). */
static const char *const direct_declines[] = {
    DH DTAG("int64", "9223372036854775808") DT, /* Jansson: too big */
    DH DTAG("int64", "-9223372036854775809") DT,
    DH DTAG("int64", "12345678901234567890") DT,
    DH DTAG("float64", "9223372036854775808") DT,
    DH DTAG("int64", "01") DT,
    DH DTAG("int64", "1.0") DT,
    DH DTAG("int64", "\"+1\"") DT,
    DH DTAG("float64", "1e400") DT,
    DH DTAG("float64", "1.") DT,
    DH DTAG("float64", ".5") DT,
    DH DTAG("float64", "-") DT,
    DH DTAG("float64", "+1") DT,
    DH DTAG("float64", "1e") DT,
    DH DTAG("float64", "0.10000000000000000000000000000000000000000000000000000000000001") DT,
    DH DTAG("float64", "\"nan\"") DT,
    DH DTAG("string", "\"a\\u0000b\"") DT,
    DH DTAG("string", "\"\\ud800\"") DT,
    DH DTAG("string", "\"\\udc00\"") DT,
    DH DTAG("string", "\"\\ud800\\u0041\"") DT,
    DH DTAG("string", "\"\\ud800x\"") DT,
    DH DTAG("string", "\"\\x\"") DT,
    DH DTAG("string", "\"\\u12g4\"") DT,
    DH DTAG("string", "\"\\u12\"") DT,
    DH DTAG("string", "\"a\tb\"") DT,
    DH DTAG("string", "\"\xc3\x28\"") DT,
    DH DTAG("string", "\"\xed\xa0\x80\"") DT,
    DH DTAG("string", "\"\xc0\xaf\"") DT,
    DH DTAG("string", "\"\xf4\x90\x80\x80\"") DT,
    DH DTAG("string", "\"\xe2\x82\"") DT,
    DH DTAG("string", "1") DT,
    DH DTAG("bool", "1") DT,
    DH DTAG("other", "1") DT,
    DH DTAG("binary", "\"abc\"") DT,
    DH ",\"tags\":[{\"key\":\"\",\"type\":\"string\",\"value\":\"v\"}]" DT,
    DH ",\"tags\":[{\"type\":\"string\",\"key\":\"k\",\"value\":\"v\"}]" DT,
    DH ",\"tags\":[{\"key\":\"k\",\"type\":\"string\",\"value\":\"v\",\"x\":1}]" DT,
    DH ",\"tags\":[{\"key\":\"k\",\"type\":\"string\",\"value\":\"v\"},]" DT,
    DH ",\"tags\":[{\"key\":\"k\",\"type\":\"string\",\"value\":\"v\"}" DT,
    DH ",\"tags\":{}" DT,
    DH ",\"flags\":1,\"flags\":1" DT,
    DH ",\"flags\":-1" DT,
    DH ",\"flags\":4294967296" DT,
    DH ",\"shared\":1" DT,
    DH ",\"zz\":1" DT,
    DH DT " ",
    " " DH DT,
    DH " " DT,
    DH DT "\n",
    DH DT "}",
    DH,
    "{\"v\":1, \"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2" DT,
    "{\"v\":2,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"0\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"0\",\"name\":\"n\",\"start_us\":1,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"parent_id\":\"2\",\"name\":\"n\","
    "\"start_us\":1,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"1g\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"123456789012345678901234567890123\",\"span_id\":\"2\",\"name\":\"n\","
    "\"start_us\":1,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"12345678901234567\",\"name\":\"n\",\"start_us\":1,"
    "\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"a\\u0000\",\"start_us\":1,"
    "\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":-1,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":3,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"kind\":\"CLIENT\","
    "\"start_us\":1,\"end_us\":2" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"kind\":\"client\","
    "\"start_us\":1,\"end_us\":2,\"annotations\":[{\"ts_us\":1,\"value\":\"sr\"}]" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"start_us\":1,\"end_us\":2,"
    "\"annotations\":[{\"ts_us\":1,\"value\":\"cs\"},{\"ts_us\":1,\"value\":\"sr\"}]" DT,
    "{\"v\":1,\"trace_id\":\"1\",\"span_id\":\"2\",\"name\":\"n\",\"kind\":\"client\","
    "\"start_us\":1,\"end_us\":2,\"tags\":[{\"key\":\"span.kind\",\"type\":\"string\","
    "\"value\":\"server\"}]" DT,
    DH ",\"refs\":[{\"type\":\"parent\",\"trace_id\":\"1\",\"span_id\":\"2\"}]" DT,
    DH ",\"logs\":[{\"ts_us\":1}]" DT,
    DH ",\"process\":{\"host\":\"h\",\"service\":\"s\"}}",
    DH ",\"process\":{\"service\":\"s\",\"service\":\"t\"}}",
    DH
    ",\"process\":{\"service\":\"s\",\"tags\":[{\"key\":\"\",\"type\":\"bool\",\"value\":true}]}}",
    DH ",\"process\":{\"service\":\"s\"}",
    DH ",\"process\":{\"service\":\"s\"}}}",
};

/* A line of @n log fields, annotations or escapes (beyond the direct
 * decoder's stack room, or within it), checked every way. */
static void check_generated(int what, size_t n, tally *t)
{
    tw__buf b;
    tw__buf_init(&b);
    put(&b, DH, strlen(DH));
    if (what == 0) {
        put(&b, ",\"logs\":[{\"ts_us\":1,\"fields\":[",
            strlen(",\"logs\":[{\"ts_us\":1,\"fields\":["));
        for (size_t i = 0; i < n; i++) {
            char f[64];
            snprintf(f, sizeof f, "%s{\"key\":\"k%zu\",\"type\":\"int64\",\"value\":%zu}",
                     i ? "," : "", i, i);
            put(&b, f, strlen(f));
        }
        put(&b, "]}]", 3);
    } else if (what == 1) {
        put(&b, ",\"annotations\":[", strlen(",\"annotations\":["));
        for (size_t i = 0; i < n; i++) {
            char f[64];
            snprintf(f, sizeof f, "%s{\"ts_us\":%zu,\"value\":\"a%zu\"}", i ? "," : "", i, i);
            put(&b, f, strlen(f));
        }
        put(&b, "]", 1);
    } else {
        put(&b, ",\"tags\":[{\"key\":\"k\",\"type\":\"string\",\"value\":\"",
            strlen(",\"tags\":[{\"key\":\"k\",\"type\":\"string\",\"value\":\""));
        for (size_t i = 0; i < n; i++)
            put(&b, "\\n", 2);
        put(&b, "\"}]", 3);
    }
    put(&b, DT, strlen(DT));
    check_line((const char *)b.data, b.len, t);
    tw__buf_free(&b);
}

static void test_direct_decoder_edge_lines(void)
{
    tally t = {0};
    for (size_t i = 0; i < sizeof direct_reads / sizeof direct_reads[0]; i++) {
        size_t before = t.direct_accepted;
        check_line(direct_reads[i], strlen(direct_reads[i]), &t);
        if (t.direct_accepted == before)
            fprintf(stderr, "the direct decoder declined: %s\n", direct_reads[i]);
        CU_ASSERT_EQUAL(t.direct_accepted, before + 1);
    }
    for (size_t i = 0; i < sizeof direct_declines / sizeof direct_declines[0]; i++) {
        size_t before = t.direct_accepted;
        check_line(direct_declines[i], strlen(direct_declines[i]), &t);
        if (t.direct_accepted != before)
            fprintf(stderr, "the direct decoder accepted: %s\n", direct_declines[i]);
        CU_ASSERT_EQUAL(t.direct_accepted, before);
    }
    /* Its stack room: 32 fields per log, 8 annotations, 4 KiB of unescaped
     * text; one more is declined (the fast decoder reads those lines). */
    size_t before = t.direct_accepted;
    check_generated(0, 32, &t);
    check_generated(1, 8, &t);
    check_generated(2, 2047, &t);
    CU_ASSERT_EQUAL(t.direct_accepted, before + 3);
    check_generated(0, 33, &t);
    check_generated(1, 9, &t);
    check_generated(2, 2048, &t);
    CU_ASSERT_EQUAL(t.direct_accepted, before + 3);
    CU_ASSERT_EQUAL(t.mismatched, 0);
}

/* ---- numbers: json_direct.h against strtod (Jansson's reading) ----------------------------- */

static size_t n_number_mismatches;

/* tw__jd_number on @text must give strtod's double (bit for bit) or, for
 * an integer text, (double) of its int64; or decline. */
static void check_number(const char *text)
{
    tw__jd c = {text, text + strlen(text)};
    double got;
    if (!tw__jd_number(&c, &got))
        return;
    double want;
    if (strpbrk(text, ".eE")) {
        want = strtod(text, NULL);
    } else {
        errno = 0;
        long long i = strtoll(text, NULL, 10);
        want = errno ? NAN : (double)i;
    }
    if (c.p != c.e || memcmp(&got, &want, sizeof got) != 0) {
        if (n_number_mismatches++ < 10)
            fprintf(stderr, "tw__jd_number(\"%s\") = %.17g, strtod: %.17g\n", text, got, want);
    }
}

/* "@hi.@lo" with @lo written with @frac digits (leading zeros kept). */
static void check_fixed(uint64_t hi, uint64_t lo, int frac, bool is_negative)
{
    char text[64];
    if (frac == 0)
        snprintf(text, sizeof text, "%s%llu", is_negative ? "-" : "", (unsigned long long)hi);
    else
        snprintf(text, sizeof text, "%s%llu.%0*llu", is_negative ? "-" : "", (unsigned long long)hi,
                 frac, (unsigned long long)lo);
    check_number(text);
}

static void test_direct_numbers_read_as_strtod(void)
{
    corpus_rng r = {99};
    char text[64];
    n_number_mismatches = 0;
    for (size_t i = 0; i < N_NUMBERS; i++) {
        /* Random doubles as writers print them: %.15g to %.19g. */
        uint64_t bits = corpus_next(&r);
        double d;
        memcpy(&d, &bits, sizeof d);
        if (!isfinite(d))
            continue;
        snprintf(text, sizeof text, "%.*g", 15 + (int)(i % 5), d);
        check_number(text);
        /* Random digits around the integer/fraction sizes each path takes. */
        int frac = (int)corpus_below(&r, 21);
        uint64_t lo = 1;
        for (int k = 0; k < frac && k < 19; k++)
            lo *= 10;
        uint64_t hi = corpus_next(&r) >> corpus_below(&r, 64);
        check_fixed(hi, frac ? corpus_next(&r) % lo : 0, frac > 19 ? 19 : frac, i & 1);
        check_fixed(hi % 100000, corpus_next(&r) % lo, frac > 19 ? 19 : frac, i & 2);
        /* Exact halfway points between doubles, and one unit off in their
         * last digit: (2m+1) / 2^(j+1) = (2m+1) * 5^(j+1) / 10^(j+1). */
        int j = (int)corpus_below(&r, 12);
        uint64_t m = (corpus_next(&r) >> (10 + corpus_below(&r, 24))) | (UINT64_C(1) << 30);
        __extension__ unsigned __int128 v = (unsigned __int128)(2 * m + 1);
        uint64_t p10 = 1;
        for (int k = 0; k <= j; k++) {
            v *= 5;
            p10 *= 10;
        }
        if (v / p10 <= UINT64_MAX) {
            uint64_t ip = (uint64_t)(v / p10), fp = (uint64_t)(v % p10);
            check_fixed(ip, fp, j + 1, false);
            if (fp + 1 < p10)
                check_fixed(ip, fp + 1, j + 1, false);
            if (fp > 0)
                check_fixed(ip, fp - 1, j + 1, true);
        }
    }
    static const char *const edges[] = {"0.0",
                                        "-0.0",
                                        "0.5",
                                        "9007199254740993.0",
                                        "9007199254740993.5",
                                        "9007199254740992.5",
                                        "18014398509481985.0",
                                        "0.20000000000000001",
                                        "0.1000000000000000055511151231257827",
                                        "1234567890123456789.5",
                                        "9999999999999999999.9",
                                        "0.9999999999999999999",
                                        "0.0000000000000000001",
                                        "0.00000000000000000001",
                                        "1.7976931348623157e308",
                                        "4.9e-324",
                                        "2.2250738585072011e-308",
                                        "123456789012345678",
                                        "-9223372036854775808",
                                        "9223372036854775807"};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check_number(edges[i]);
    CU_ASSERT_EQUAL(n_number_mismatches, 0);
}

/* Deeper than the scanner goes: declined, and the Jansson path still reads
 * it. An object of many members (whose repeated keys the scanner finds with
 * a hash) is read by the fast path, with the same result as Jansson's. */
/* tw__jd_int64 (its short path for plain integers) against what
 * tw__jd_scan_number reads as an integer: the same answer, value and end,
 * for integers of 1 to 21 digits, signed or not, with leading zeros, and
 * every kind of byte after them (or none). */
static void check_int64(const char *text, size_t len)
{
    char *copy = malloc(len ? len : 1); /* exactly @len bytes: ASan sees a read past them */
    CU_ASSERT_FATAL(copy != NULL);
    memcpy(copy, text, len);
    tw__jd a = {copy, copy + len}, b = {copy, copy + len};
    int64_t va = 0, vb = 0;
    double d;
    bool is_real = false;
    bool got = tw__jd_int64(&a, &va);
    bool want = tw__jd_scan_number(&b, &is_real, &vb, &d) && !is_real;
    if (!want)
        b.p = copy;
    if (got != want || (got && (va != vb || a.p != b.p)) || (!got && a.p != copy)) {
        n_number_mismatches++;
        printf("\n  int64 %.*s: %d %lld vs %d %lld ", (int)len, text, got, (long long)va, want,
               (long long)vb);
    }
    free(copy);
}

static void test_direct_int64_short_path(void)
{
    static const char *const after[] = {"", ",", "}", "]", ".5", "e3", "E-1", "0", " ", "\""};
    corpus_rng r = {5};
    char text[64];
    n_number_mismatches = 0;
    for (size_t i = 0; i < N_NUMBERS / 4; i++) {
        int n = 1 + (int)corpus_below(&r, 21);
        int at = 0;
        if (corpus_below(&r, 8) == 0)
            text[at++] = '-';
        for (int k = 0; k < n; k++) {
            unsigned digit = (unsigned)corpus_below(&r, 10);
            if (k == 0 && corpus_below(&r, 4) && !digit)
                digit = 1; /* mostly no leading zero */
            text[at++] = (char)('0' + digit);
        }
        const char *tail = after[corpus_below(&r, sizeof after / sizeof after[0])];
        size_t tl = strlen(tail);
        memcpy(text + at, tail, tl);
        check_int64(text, (size_t)at + tl);
    }
    static const char *const edges[] = {"1",
                                        "0",
                                        "00",
                                        "-0",
                                        "999999999999999999",
                                        "1000000000000000000",
                                        "9223372036854775807",
                                        "9223372036854775808",
                                        "-9223372036854775808",
                                        "1700000000010367,",
                                        "17000000000103671",
                                        "12345678",
                                        "123456789012345678901"};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check_int64(edges[i], strlen(edges[i]));
    CU_ASSERT_EQUAL(n_number_mismatches, 0);
}

static void test_scanner_depth_falls_back_wide_objects_do_not(void)
{
    tally t = {0};
    tw__buf b;
    tw__buf_init(&b);
    put(&b, BASE_HEAD "\"deep\":", strlen(BASE_HEAD "\"deep\":"));
    for (int i = 0; i < 100; i++)
        put(&b, "[", 1);
    for (int i = 0; i < 100; i++)
        put(&b, "]", 1);
    put(&b, "," BASE_TAIL, strlen("," BASE_TAIL));
    CU_ASSERT_FALSE(check_line((const char *)b.data, b.len, &t));
    tw__buf_reset(&b);
    put(&b, BASE_HEAD, strlen(BASE_HEAD));
    for (int i = 0; i < 80; i++) {
        char m[32];
        snprintf(m, sizeof m, "\"m%d\":%d,", i, i);
        put(&b, m, strlen(m));
    }
    put(&b, BASE_TAIL, strlen(BASE_TAIL));
    CU_ASSERT_TRUE(check_line((const char *)b.data, b.len, &t));
    CU_ASSERT_EQUAL(t.mismatched, 0);
    /* The same with one key twice, far apart: declined (Jansson refuses it). */
    tw__buf_reset(&b);
    put(&b, BASE_HEAD "\"m0\":0,", strlen(BASE_HEAD "\"m0\":0,"));
    for (int i = 1; i < 80; i++) {
        char m[32];
        snprintf(m, sizeof m, "\"m%d\":%d,", i, i);
        put(&b, m, strlen(m));
    }
    put(&b, "\"m0\":1," BASE_TAIL, strlen("\"m0\":1," BASE_TAIL));
    CU_ASSERT_FALSE(check_line((const char *)b.data, b.len, &t));
    CU_ASSERT_EQUAL(t.mismatched, 0);
    /* The wide record again, for the public decoder below. */
    tw__buf_reset(&b);
    put(&b, BASE_HEAD, strlen(BASE_HEAD));
    for (int i = 0; i < 80; i++) {
        char m[32];
        snprintf(m, sizeof m, "\"m%d\":%d,", i, i);
        put(&b, m, strlen(m));
    }
    put(&b, BASE_TAIL, strlen(BASE_TAIL));
    /* The public decoder reads both (through Jansson). */
    tw__span_data *s = NULL;
    tw__process p;
    CU_ASSERT_EQUAL(tw__dapper_log_decode((const char *)b.data, b.len, 1, &s, &p, NULL), TW_OK);
    tw__span_data_unref(s);
    tw__process_clear(&p);
    tw__buf_free(&b);
}

/* A stream whose lines repeat N_PROCS processes in a random order. */
#define N_PROCS 90 /* more than the memo's 64 entries: entries are replaced */
#ifdef UNDER_ASAN
#define N_SHARED_LINES 1500
#else
#define N_SHARED_LINES 6000
#endif

typedef struct {
    uint64_t stamp;
    const tw__process *at;
    tw__process copy;
} seen_stamp;

static void test_shared_reader_agrees_with_line_decoder(void)
{
    tw__dapper_log_encoder *enc[N_PROCS];
    for (size_t k = 0; k < N_PROCS; k++) {
        tw__process p;
        bool has_process;
        tw__span_data *s = corpus_span(31, k, &p, &has_process, 0);
        CU_ASSERT_FATAL(s != NULL);
        if (k % 10 == 9) { /* a process too long for the memo */
            char big[1500];
            memset(big, 'x', sizeof big - 1);
            big[sizeof big - 1] = '\0';
            tw_value v = {.type = TW_VALUE_STRING, .as.str = big, .len = sizeof big - 1};
            CU_ASSERT_FATAL(tw__process_add_tag(&p, "big", &v));
        }
        enc[k] = tw__dapper_log_encoder_new(&p);
        CU_ASSERT_FATAL(enc[k] != NULL);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    tw__buf stream, line;
    tw__buf_init(&stream);
    tw__buf_init(&line);
    corpus_rng r = {11};
    for (size_t i = 0; i < N_SHARED_LINES; i++) {
        tw__process p;
        bool has_process;
        tw__span_data *s = corpus_span(37, i, &p, &has_process, CORPUS_EMPTY_KEYS);
        CU_ASSERT_FATAL(s != NULL);
        /* Mostly a few hot processes, as in a log of one service's hosts. */
        size_t k = corpus_below(&r, 4) ? corpus_below(&r, 12) : corpus_below(&r, N_PROCS);
        tw__buf_reset(&line);
        CU_ASSERT_FATAL(tw__dapper_log_encode_span(enc[k], s, &line));
        if (corpus_below(&r, 8) == 0) { /* a changed byte: often in the process */
            tw__buf variant;
            tw__buf_init(&variant);
            mutate_bytes((const char *)line.data, line.len - 1, &r, &variant);
            for (size_t b = 0; b < variant.len; b++) {
                if (variant.data[b] == '\n')
                    variant.data[b] = ' ';
            }
            put(&stream, variant.data, variant.len);
            put(&stream, "\n", 1);
            tw__buf_free(&variant);
        } else {
            put(&stream, line.data, line.len);
        }
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    FILE *f = fmemopen(stream.data, stream.len, "r");
    CU_ASSERT_FATAL(f != NULL);
    tw__dapper_log_reader *reader = tw__dapper_log_reader_new(f, 0);
    CU_ASSERT_FATAL(reader != NULL);
    seen_stamp *seen = calloc(N_SHARED_LINES, sizeof *seen);
    CU_ASSERT_FATAL(seen != NULL);
    size_t n_seen = 0, records = 0, errors = 0, repeats = 0, unstamped = 0, mismatched = 0;
    for (;;) {
        tw__span_data *span = NULL;
        const tw__process *process = NULL;
        uint64_t stamp = 0;
        tw_error *e = NULL;
        tw_status st = tw__dapper_log_reader_next_shared(reader, &span, &process, &stamp, &e);
        if (st == TW_E_NOT_FOUND)
            break;
        size_t raw_len;
        const char *raw = tw__dapper_log_reader_raw(reader, &raw_len);
        tw__span_data *want = NULL;
        tw__process want_p;
        tw_error *want_e = NULL;
        tw_status want_st = tw__dapper_log_decode(raw, raw_len, tw__dapper_log_reader_line(reader),
                                                  &want, &want_p, &want_e);
        if (st != want_st) {
            mismatched++;
        } else if (st != TW_OK) {
            errors++;
            if (!e || !want_e || strcmp(tw_error_message(e), tw_error_message(want_e)) != 0)
                mismatched++;
        } else {
            records++;
            if (!records_equal(span, want) || !processes_equal(process, &want_p))
                mismatched++;
        }
        tw_error_free(e);
        tw_error_free(want_e);
        tw__span_data_unref(span);
        tw__span_data_unref(want);
        if (st != TW_OK || want_st != TW_OK)
            continue;
        unstamped += stamp == 0;
        size_t i = 0;
        while (stamp && i < n_seen && seen[i].stamp != stamp)
            i++;
        if (stamp && i < n_seen) {
            repeats++;
            if (seen[i].at != process || !processes_equal(&seen[i].copy, process))
                mismatched++;
        } else if (stamp) {
            seen[n_seen++] = (seen_stamp){.stamp = stamp, .at = process, .copy = want_p};
            continue; /* the copy is the table's now */
        }
        tw__process_clear(&want_p);
    }
    printf("\n  %zu records, %zu errors: %zu stamps, met again %zu times, %zu unstamped ", records,
           errors, n_seen, repeats, unstamped);
    CU_ASSERT_EQUAL(mismatched, 0);
    CU_ASSERT(repeats > records / 4); /* the memo is used */
    CU_ASSERT(unstamped > 0);         /* and long processes bypass it */
    CU_ASSERT(errors > 0);
    for (size_t i = 0; i < n_seen; i++)
        tw__process_clear(&seen[i].copy);
    free(seen);
    tw__dapper_log_reader_free(reader);
    fclose(f);
    tw__buf_free(&stream);
    tw__buf_free(&line);
    for (size_t k = 0; k < N_PROCS; k++)
        tw__dapper_log_encoder_free(enc[k]);
}

/* A line cut right after "process": leaves nothing to look up: the memo must
 * not take the empty rest for one of its unused entries (length 0, hash 0),
 * which handed out a process and accepted the line (fuzz_dapper_log). */
static void test_shared_reader_line_cut_after_process(void)
{
    static const char text[] =
        "{\"v\":1,\"trace_id\":\"aa\",\"span_id\":\"bb\",\"name\":\"\",\"start_us\":1,"
        "\"end_us\":1,\"flags\":1,\"process\":\n"
        "{\"v\":1,\"trace_id\":\"aa\",\"span_id\":\"bb\",\"name\":\"\",\"start_us\":1,"
        "\"end_us\":1,\"flags\":1,\"process\":{\"service\":\"s\"}}\n"
        "{\"v\":1,\"trace_id\":\"aa\",\"span_id\":\"bb\",\"name\":\"\",\"start_us\":1,"
        "\"end_us\":1,\"flags\":1,\"process\":\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    CU_ASSERT_FATAL(f != NULL);
    tw__dapper_log_reader *reader = tw__dapper_log_reader_new(f, 0);
    CU_ASSERT_FATAL(reader != NULL);
    /* The first line meets an empty memo, the third one that holds an entry. */
    static const tw_status want[] = {TW_E_MALFORMED, TW_OK, TW_E_MALFORMED};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        tw__span_data *span = NULL;
        const tw__process *process = NULL;
        uint64_t stamp = 0;
        tw_error *e = NULL;
        tw_status st = tw__dapper_log_reader_next_shared(reader, &span, &process, &stamp, &e);
        CU_ASSERT_EQUAL(st, want[i]);
        if (st == TW_OK)
            CU_ASSERT(process != NULL && process->service_name &&
                      strcmp(process->service_name, "s") == 0);
        tw_error_free(e);
        tw__span_data_unref(span);
    }
    tw__dapper_log_reader_free(reader);
    fclose(f);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/dapper_fast", NULL, NULL);
    CU_add_test(suite, "sdk_lines_and_rewrites_decode_equal",
                test_sdk_lines_and_rewrites_decode_equal);
    CU_add_test(suite, "edge_lines", test_edge_lines);
    CU_add_test(suite, "direct_decoder_on_mutated_lines", test_direct_decoder_on_mutated_lines);
    CU_add_test(suite, "direct_decoder_edge_lines", test_direct_decoder_edge_lines);
    CU_add_test(suite, "direct_numbers_read_as_strtod", test_direct_numbers_read_as_strtod);
    CU_add_test(suite, "direct_int64_short_path", test_direct_int64_short_path);
    CU_add_test(suite, "scanner_depth_falls_back_wide_objects_do_not",
                test_scanner_depth_falls_back_wide_objects_do_not);
    CU_add_test(suite, "shared_reader_line_cut_after_process",
                test_shared_reader_line_cut_after_process);
    CU_add_test(suite, "shared_reader_agrees_with_line_decoder",
                test_shared_reader_agrees_with_line_decoder);
}
