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
 */
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

#define N_RANDOM 6000

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
} tally;

/* Decodes one line both ways. A fast result must equal Jansson's; a
 * declined line must decode through tw__dapper_log_decode exactly as the
 * Jansson path alone decodes it (status and message). Returns whether the
 * fast path accepted. */
static bool check_line(const char *line, size_t len, tally *t)
{
    tw__span_data *fs = NULL, *js = NULL, *ps = NULL;
    tw__process fp, jp, pp;
    tw_error *je = NULL, *pe = NULL;
    bool fast_ok = tw__dapper_log_decode_fast(line, len, &fs, &fp);
    tw_status jst = tw__dapper_log_decode_jansson(line, len, 3, &js, &jp, &je);
    bool ok;
    if (fast_ok) {
        t->accepted++;
        ok = jst == TW_OK && records_equal(fs, js) && processes_equal(&fp, &jp);
        tw__span_data_unref(fs);
        tw__process_clear(&fp);
    } else {
        t->declined++;
        tw_status pst = tw__dapper_log_decode(line, len, 3, &ps, &pp, &pe);
        ok = pst == jst;
        if (ok && pst == TW_OK) {
            ok = records_equal(ps, js) && processes_equal(&pp, &jp);
            tw__span_data_unref(ps);
            tw__process_clear(&pp);
        } else if (ok) {
            ok = strcmp(tw_error_message(pe), tw_error_message(je)) == 0;
        }
    }
    if (jst == TW_OK) {
        tw__span_data_unref(js);
        tw__process_clear(&jp);
    }
    if (!ok) {
        t->mismatched++;
        fprintf(stderr, "fast and Jansson decoders disagree (fast %s, Jansson %s%s%s) on:\n%.*s\n",
                fast_ok ? "accepted" : "declined", tw_status_str(jst), je ? ": " : "",
                je ? tw_error_message(je) : "", (int)len, line);
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
        CU_ASSERT(check_line(text, len, &sdk));
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
    printf(
        "\n  SDK lines: %zu accepted, %zu declined; rewritten lines: %zu accepted, %zu declined ",
        sdk.accepted, sdk.declined, rewrites.accepted, rewrites.declined);
    CU_ASSERT_EQUAL(sdk.declined, 0);
    CU_ASSERT_EQUAL(rewrites.declined, 0);
    CU_ASSERT_EQUAL(sdk.mismatched + rewrites.mismatched, 0);
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

/* Deeper than the scanner goes: declined, and the Jansson path still reads
 * it. An object of many members (whose repeated keys the scanner finds with
 * a hash) is read by the fast path, with the same result as Jansson's. */
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

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/dapper_fast", NULL, NULL);
    CU_add_test(suite, "sdk_lines_and_rewrites_decode_equal",
                test_sdk_lines_and_rewrites_decode_equal);
    CU_add_test(suite, "edge_lines", test_edge_lines);
    CU_add_test(suite, "scanner_depth_falls_back_wide_objects_do_not",
                test_scanner_depth_falls_back_wide_objects_do_not);
}
