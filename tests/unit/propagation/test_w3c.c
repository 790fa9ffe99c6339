/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/propagation/test_w3c.c: suite "propagation/w3c": traceparent
 * (what inject writes, the flag mapping, versions, every malformed form the
 * W3C test suite sends), tracestate (joining, grammar, limits, truncation,
 * inheritance by child spans) and the W3C baggage header (docs/PROPAGATION.md,
 * "W3C Trace Context").
 */
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "harness.h"
#include "prop_test.h"

#define HTTP TW_FORMAT_HTTP_HEADERS
#define MAP TW_FORMAT_TEXT_MAP
#define W3C TW_CODEC_W3C

#define TP_TRACE "12345678901234567890123456789012"
#define TP_PARENT "1234567890123456"
#define TP(flags) "00-" TP_TRACE "-" TP_PARENT "-" flags
#define TP_HI 0x1234567890123456ULL
#define TP_LO 0x7890123456789012ULL
#define TP_SPAN 0x1234567890123456ULL

/* ---- inject ------------------------------------------------------------------------------- */

static void test_inject_writes_version_00_with_32_digit_trace_id(void)
{
    tw_span_context *c = make_context(0, 0xabc, 0xdef, 0x99, TW_FLAG_SAMPLED, NULL);
    tw_headers *h = inject_with(W3C, HTTP, c, NULL);
    CU_ASSERT_EQUAL(tw_headers_count(h), 1); /* no tracestate, no baggage */
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "traceparent"),
                           "00-00000000000000000000000000000abc-0000000000000def-01");
    const char *k;
    CU_ASSERT(tw_headers_item(h, 0, &k, NULL) && strcmp(k, "traceparent") == 0);
    tw_headers_free(h);
    tw_span_context_unref(c);
}

static void test_inject_maps_only_the_sampled_flag(void)
{
    static const struct {
        uint32_t flags;
        const char *want;
    } cases[] = {
        {TW_FLAG_SAMPLED, "01"},
        {0, "00"},
        {TW_FLAG_SAMPLED | TW_FLAG_DEBUG, "01"}, /* debug must not become 0x02 */
        {TW_FLAG_SAMPLED | TW_FLAG_DEBUG | TW_FLAG_FIREHOSE | 0xf0, "01"},
        {TW_FLAG_FIREHOSE, "00"},
        {TW__FLAG_DEFERRED, "00"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_span_context *c = make_context(1, 2, 3, 0, cases[i].flags, NULL);
        tw_headers *h = inject_with(W3C, MAP, c, NULL);
        const char *v = tw_headers_get(h, "traceparent");
        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        CU_ASSERT_EQUAL(strlen(v), 55);
        CU_ASSERT_STRING_EQUAL(v + 53, cases[i].want);
        tw_headers_free(h);
        tw_span_context_unref(c);
    }
}

static void test_tracestate_is_inherited_and_reemitted_unchanged(void)
{
    tw_span_context *up =
        extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", TP("01"), "tracestate",
                      "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(up);
    tw_reporter *memory = NULL;
    tw_tracer *tracer = tracer_always_sampled(&memory, NULL);
    tw_span *s = tw_span_start_child(tracer, "server", up);
    tw_span *child = tw_span_start_child(tracer, "client", tw_span_get_context(s));
    tw_headers *h = inject_with(W3C, HTTP, tw_span_get_context(child), NULL);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "tracestate"),
                           "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    char want[64];
    snprintf(want, sizeof want, "00-" TP_TRACE "-%016llx-01",
             (unsigned long long)tw_span_context_span_id(tw_span_get_context(child)));
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "traceparent"), want);
    tw_headers_free(h);
    tw_span_finish(child);
    tw_span_finish(s);
    tw_tracer_free(tracer);
    tw_span_context_unref(up);
}

static void test_inject_baggage_header_encodes_and_limits(void)
{
    tw_span_context *c = make_context(0, 1, 2, 0, 1, "plain", "v", "spaced", "a b,c;d\"e\\f%g",
                                      "bad key", "x", "utf8", "\xc3\xa9", NULL);
    tw_headers *h = inject_with(W3C, HTTP, c, NULL);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "baggage"),
                           "plain=v,spaced=a%20b%2Cc%3Bd%22e%5Cf%25g,utf8=%C3%A9");
    tw_headers_free(h);
    tw_span_context_unref(c);

    /* 181 items: 180 sent. A member over 4096 bytes is not sent. */
    tw__baggage *bag = NULL;
    char key[16];
    char *big = repeat('x', TW_BAGGAGE_MAX_ITEM_BYTES);
    bool is_empty;
    tw__baggage *next = tw__baggage_with(bag, "big", big, &is_empty);
    bag = next;
    for (int i = 0; i < TW_BAGGAGE_MAX_ITEMS + 1; i++) {
        snprintf(key, sizeof key, "k%d", i);
        next = tw__baggage_with(bag, key, "v", &is_empty);
        tw__baggage_unref(bag);
        bag = next;
    }
    tw__context_parts parts = {.trace_id_low = 1, .span_id = 2, .baggage = bag};
    c = tw__span_context_build(&parts);
    tw__baggage_unref(bag);
    h = inject_with(W3C, HTTP, c, NULL);
    const char *v = tw_headers_get(h, "baggage");
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    CU_ASSERT_PTR_NULL(strstr(v, "big="));
    CU_ASSERT_PTR_NOT_NULL(strstr(v, ",k179=v"));
    CU_ASSERT_PTR_NULL(strstr(v, "k180="));
    CU_ASSERT(strlen(v) <= TW_BAGGAGE_MAX_TOTAL_BYTES);
    tw_span_context *back = extract_with(W3C, HTTP, h, NULL, NULL);
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(back), TW_BAGGAGE_MAX_ITEMS);
    tw_span_context_unref(back);
    tw_headers_free(h);
    tw_span_context_unref(c);
    free(big);
}

static void test_round_trip_keeps_ids_sampled_and_baggage(void)
{
    static const struct {
        uint64_t hi;
        uint32_t flags, want;
    } cases[] = {
        {0, TW_FLAG_SAMPLED, TW_FLAG_SAMPLED},
        {0xfedcba9876543210ULL, 0, 0},
        {1, TW_FLAG_SAMPLED | TW_FLAG_DEBUG | TW_FLAG_FIREHOSE, TW_FLAG_SAMPLED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_span_context *c = make_context(cases[i].hi, 0x1111, 0x2222, 0x3333, cases[i].flags, "k",
                                          "v=1;2, 3%", "e", "", NULL);
        tw_headers *h = inject_with(W3C, MAP, c, NULL);
        collected_warnings w = {0};
        tw_span_context *back = extract_with(W3C, MAP, h, &w, NULL);
        CU_ASSERT(ids_equal(back, cases[i].hi, 0x1111, 0x2222, 0)); /* no grandparent in W3C */
        CU_ASSERT_EQUAL(tw_span_context_flags(back), cases[i].want);
        CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(back, "k"), "v=1;2, 3%");
        CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(back, "e"), "");
        CU_ASSERT_EQUAL(w.n, 0);
        tw_span_context_unref(back);
        tw_headers_free(h);
        tw_span_context_unref(c);
    }
}

/* ---- extract: traceparent ----------------------------------------------------------------- */

static void test_extract_maps_the_sampled_bit_only(void)
{
    static const struct {
        const char *flags;
        unsigned int want;
    } cases[] = {{"01", 1}, {"00", 0}, {"02", 0}, {"03", 1}, {"ff", 1}, {"09", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char v[64];
        snprintf(v, sizeof v, "00-" TP_TRACE "-" TP_PARENT "-%s", cases[i].flags);
        tw_span_context *c = extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", v, NULL);
        CU_ASSERT(ids_equal(c, TP_HI, TP_LO, TP_SPAN, 0));
        CU_ASSERT_EQUAL(tw_span_context_flags(c), cases[i].want);
        CU_ASSERT_FALSE(tw_span_context_is_sampling_deferred(c));
        tw_span_context_unref(c);
    }
}

static void test_extract_header_names_and_white_space(void)
{
    static const char *const names[] = {"traceparent", "TraceParent", "TRACEPARENT"};
    static const char *const values[] = {" " TP("01"), "\t" TP("01"), TP("01") " ",
                                         "\t " TP("01") " \t"};
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 4; j++) {
            tw_span_context *c = extract_pairs(W3C, HTTP, NULL, NULL, names[i], values[j], NULL);
            CU_ASSERT(ids_equal(c, TP_HI, TP_LO, TP_SPAN, 0));
            tw_span_context_unref(c);
        }
    }
}

static void test_extract_future_versions(void)
{
    static const char *const ok[] = {
        "cc-" TP_TRACE "-" TP_PARENT "-01",
        "cc-" TP_TRACE "-" TP_PARENT "-01-what-the-future-will-be-like",
        "01-" TP_TRACE "-" TP_PARENT "-01-",
    };
    for (size_t i = 0; i < 3; i++) {
        tw_span_context *c = extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", ok[i], NULL);
        CU_ASSERT(ids_equal(c, TP_HI, TP_LO, TP_SPAN, 0));
        CU_ASSERT_EQUAL(tw_span_context_flags(c), TW_FLAG_SAMPLED);
        tw_span_context_unref(c);
    }
    tw_error *err = NULL;
    tw_span_context *c =
        extract_pairs(W3C, HTTP, NULL, &err, "traceparent",
                      "cc-" TP_TRACE "-" TP_PARENT "-01.what-the-future-will-be-like", NULL);
    ASSERT_MALFORMED(c, err, "traceparent", "separated by '-'");
}

static void test_malformed_traceparent_is_an_error_with_the_reason(void)
{
    char *long_value = repeat('a', TW__TRACEPARENT_MAX + 1);
    const struct {
        const char *value, *reason;
    } cases[] = {
        {"ff-" TP_TRACE "-" TP_PARENT "-01", "version ff is invalid"},
        {".0-" TP_TRACE "-" TP_PARENT "-01", "version is not 2 lower-case hex digits"},
        {"0.-" TP_TRACE "-" TP_PARENT "-01", "version is not 2 lower-case hex digits"},
        {"000-" TP_TRACE "-" TP_PARENT "-01", "version is not 2 lower-case hex digits"},
        {"0000-" TP_TRACE "-" TP_PARENT "-01", "version is not 2 lower-case hex digits"},
        {"0-" TP_TRACE "-" TP_PARENT "-01", "version is not 2 lower-case hex digits"},
        {"0A-" TP_TRACE "-" TP_PARENT "-01", "version is not 2 lower-case hex digits"},
        {TP("01") ".", "56 bytes; version 00 has exactly 55"},
        {TP("01") "-what-the-future-will-be-like", "version 00 has exactly 55"},
        {"00-00000000000000000000000000000000-" TP_PARENT "-01", "trace id is all zeros"},
        {"00-" TP_TRACE "-0000000000000000-01", "parent id is all zeros"},
        {"00-.2345678901234567890123456789012-" TP_PARENT "-01", "trace id is not 32 hex"},
        {"00-1234567890123456789012345678901.-" TP_PARENT "-01", "trace id is not 32 hex"},
        {"00-ABCDEF78901234567890123456789012-" TP_PARENT "-01", "trace id has an upper-case"},
        {"00-" TP_TRACE "-ABCDEF7890123456-01", "parent id has an upper-case"},
        {"00-" TP_TRACE "-.234567890123456-01", "parent id is not 16 hex"},
        {"00-" TP_TRACE "-" TP_PARENT "-.0", "trace flags is not 2 hex"},
        {"00-" TP_TRACE "-" TP_PARENT "-0A", "trace flags has an upper-case"},
        {"00-123456789012345678901234567890123-" TP_PARENT "-01", "56 bytes"},
        {"00-1234567890123456789012345678901-" TP_PARENT "-01", "54 bytes"},
        {"00-" TP_TRACE "-12345678901234567-01", "56 bytes"},
        {"00-" TP_TRACE "-123456789012345-01", "54 bytes"},
        {"00-" TP_TRACE "-" TP_PARENT "-001", "56 bytes"},
        {"00-" TP_TRACE "-" TP_PARENT "-1", "54 bytes"},
        {"00_" TP_TRACE "-" TP_PARENT "-01", "version is not 2 lower-case hex digits and '-'"},
        {"00-" TP_TRACE "_" TP_PARENT "-01", "separated by '-'"},
        {"cc-" TP_TRACE "-" TP_PARENT, "at least 55 expected"},
        {"", "version is not"},
        {long_value, "more than 512"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_error *err = NULL;
        tw_span_context *c =
            extract_pairs(W3C, HTTP, NULL, &err, "traceparent", cases[i].value, NULL);
        ASSERT_MALFORMED(c, err, "traceparent", cases[i].reason);
    }
    free(long_value);
}

static void test_a_second_traceparent_is_malformed(void)
{
    /* The W3C test suite expects a new trace when traceparent is sent twice. */
    tw_error *err = NULL;
    tw_span_context *c = extract_pairs(W3C, HTTP, NULL, &err, "traceparent",
                                       "00-12345678901234567890123456789011-" TP_PARENT "-01",
                                       "traceparent", TP("01"), NULL);
    ASSERT_MALFORMED(c, err, "traceparent", "2 traceparent headers; exactly one is allowed");
}

static void test_tracestate_is_ignored_without_a_valid_traceparent(void)
{
    collected_warnings w = {0};
    tw_error *err = NULL;
    tw_span_context *c =
        extract_pairs(W3C, HTTP, &w, &err, "tracestate", "FOO=bad,foo=1,foo=2", NULL);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_NOT_FOUND);
    CU_ASSERT_EQUAL(w.n, 0); /* not even parsed */
    tw_error_free(err);
    err = NULL;
    c = extract_pairs(W3C, HTTP, &w, &err, "traceparent", TP("0x"), "tracestate", "FOO=bad", NULL);
    ASSERT_MALFORMED(c, err, "traceparent", "trace flags");
    CU_ASSERT_EQUAL(w.n, 0);
}

/* ---- extract: tracestate ------------------------------------------------------------------ */

/* The tracestate extracted with @value (a second header when @more is not NULL). */
static char *tracestate_of(const char *value, const char *more, collected_warnings *w)
{
    tw_headers *h = headers_of("traceparent", TP("00"), "tracestate", value, NULL);
    if (more)
        tw_headers_add(h, "tracestate", more);
    tw_span_context *c = extract_with(W3C, HTTP, h, w, NULL);
    CU_ASSERT(ids_equal(c, TP_HI, TP_LO, TP_SPAN, 0)); /* tracestate never costs the trace */
    const char *ts = tw_span_context_tracestate(c);
    char *copy = ts ? strdup(ts) : NULL;
    tw_span_context_unref(c);
    tw_headers_free(h);
    return copy;
}

/* The tracestate extracted from @value (and @more) is @want (NULL: none). */
static void assert_tracestate(const char *value, const char *more, const char *want)
{
    char *got = tracestate_of(value, more, NULL);
    if (want) {
        CU_ASSERT_PTR_NOT_NULL(got);
        if (got)
            CU_ASSERT_STRING_EQUAL(got, want);
    } else {
        CU_ASSERT_PTR_NULL(got);
    }
    free(got);
}

static void test_tracestate_headers_are_joined_in_order(void)
{
    assert_tracestate("foo=1,bar=2", "rojo=1,congo=2", "foo=1,bar=2,rojo=1,congo=2");
    assert_tracestate("", "foo=1", "foo=1");
    assert_tracestate("foo=1", "", "foo=1");
    assert_tracestate("", NULL, NULL);
    assert_tracestate(" , ,\t", NULL, NULL);
    assert_tracestate("foo=1 \t , \t bar=2, \t baz=3", NULL, "foo=1,bar=2,baz=3");
    assert_tracestate("foo=1\t \t,\t \tbar=2,,", NULL, "foo=1,bar=2");
    assert_tracestate("\t foo=1 \t", NULL, "foo=1");
    assert_tracestate("foo= leading space", NULL, "foo= leading space");
}

static void test_tracestate_grammar(void)
{
    /* Every allowed character, simple and multi-tenant keys. */
    char value[128];
    size_t n = 0;
    for (int ch = 0x20; ch <= 0x7e; ch++) {
        if (ch != ',' && ch != '=')
            value[n++] = (char)ch;
    }
    value[n] = '\0';
    char member[512];
    snprintf(member, sizeof member, "abcdefghijklmnopqrstuvwxyz0123456789_-*/=%s", value);
    assert_tracestate(member, NULL, member);
    snprintf(member, sizeof member, "0tenant_-*/@a-z0-9_-*/=%s", value);
    assert_tracestate(member, NULL, member);

    static const char *const invalid[] = {
        "foo =1",       "FOO=1",        "foo.bar=1",        "1foo=1",
        "foo@=1,bar=2", "@foo=1,bar=2", "foo@@bar=1,bar=2", "foo@bar@baz=1,bar=2",
        "foo@Bar=1",    "foo@1bar=1",   "foo=bar=baz",      "foo=,bar=3",
        "foo",          "=1",           "foo=a\tb",         "foo=\x7f",
        "foo=\xc3\xa9", "foo=1,foo=1",  "foo=1,foo=2",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        collected_warnings w = {0};
        char *got = tracestate_of(invalid[i], NULL, &w);
        CU_ASSERT_PTR_NULL(got);
        CU_ASSERT(warned(&w, "the whole tracestate is discarded"));
        free(got);
    }
    /* A duplicate across two headers too. */
    assert_tracestate("foo=1", "foo=2", NULL);
}

static void test_tracestate_key_lengths(void)
{
    char *k256 = repeat('z', 256), *k257 = repeat('z', 257);
    char *t241 = repeat('t', 241), *t242 = repeat('t', 242);
    char *v14 = repeat('v', 14), *v15 = repeat('v', 15), *v256 = repeat('v', 256);
    char *v257 = repeat('v', 257);
    char buf[1024];
    snprintf(buf, sizeof buf, "%s=1", k256);
    char *got = tracestate_of("foo=1", buf, NULL);
    CU_ASSERT_PTR_NOT_NULL(got);
    free(got);
    snprintf(buf, sizeof buf, "%s=1", k257);
    assert_tracestate("foo=1", buf, NULL);
    snprintf(buf, sizeof buf, "%s@%s=1", t241, v14);
    got = tracestate_of("foo=1", buf, NULL);
    CU_ASSERT_PTR_NOT_NULL(got);
    free(got);
    snprintf(buf, sizeof buf, "%s@v=1", t242);
    assert_tracestate("foo=1", buf, NULL);
    snprintf(buf, sizeof buf, "t@%s=1", v15);
    assert_tracestate("foo=1", buf, NULL);
    snprintf(buf, sizeof buf, "k=%s", v256);
    assert_tracestate(buf, NULL, buf);
    snprintf(buf, sizeof buf, "k=%s", v257);
    assert_tracestate(buf, NULL, NULL);
    free(k256);
    free(k257);
    free(t241);
    free(t242);
    free(v14);
    free(v15);
    free(v256);
    free(v257);
}

static void test_tracestate_member_count_limit(void)
{
    char list[512] = "";
    for (int i = 1; i <= 32; i++) {
        char m[16];
        snprintf(m, sizeof m, "%sbar%02d=%02d", i > 1 ? "," : "", i, i);
        strcat(list, m);
    }
    assert_tracestate(list, NULL, list); /* 32: kept */
    collected_warnings w = {0};
    char *got = tracestate_of(list, "bar33=33", &w);
    CU_ASSERT_PTR_NULL(got); /* 33: all discarded */
    CU_ASSERT(warned(&w, "more than 32 members"));
    free(got);
}

static void test_long_tracestate_loses_whole_members(void)
{
    /* 5 members of 130 bytes (+ short ones): over 512, the long ones go first, from the
     * right, until it fits. */
    char *v = repeat('x', 126);
    char list[2048];
    snprintf(list, sizeof list, "a1=%s,s1=1,a2=%s,a3=%s,s2=2,a4=%s,a5=%s", v, v, v, v, v);
    collected_warnings w = {0};
    char *got = tracestate_of(list, NULL, &w);
    char want[1024];
    snprintf(want, sizeof want, "a1=%s,s1=1,a2=%s,a3=%s,s2=2", v, v, v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, want);
    CU_ASSERT(strlen(got) <= TW__TRACESTATE_MAX_BYTES);
    CU_ASSERT(warned(&w, "member \"a5\" (129 bytes) dropped: the list exceeds 512 bytes"));
    CU_ASSERT(warned(&w, "member \"a4\" (129 bytes) dropped"));
    CU_ASSERT_EQUAL(w.n, 2);
    free(got);

    /* Short members only: dropped from the right. */
    char many[1024] = "";
    for (int i = 0; i < 30; i++) {
        char m[32];
        snprintf(m, sizeof m, "%sk%02d=%s", i ? "," : "", i, "yyyyyyyyyyyyyyyy"); /* 20 bytes */
        strcat(many, m);
    }
    memset(&w, 0, sizeof w);
    got = tracestate_of(many, NULL, &w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_EQUAL(strlen(got), 24 * 21 - 1); /* 24 members fit in 512 */
    CU_ASSERT_PTR_NOT_NULL(strstr(got, "k23="));
    CU_ASSERT_PTR_NULL(strstr(got, "k24="));
    CU_ASSERT_EQUAL(w.n, 6);
    free(got);
    free(v);
}

static void test_huge_tracestate_is_discarded_unread(void)
{
    char *huge = repeat('a', TW__TRACESTATE_MAX_RAW + 1);
    collected_warnings w = {0};
    char *got = tracestate_of(huge, NULL, &w);
    CU_ASSERT_PTR_NULL(got);
    CU_ASSERT(warned(&w, "tracestate: more than 20480 bytes in all; discarded"));
    free(huge);
}

/* ---- extract: baggage ---------------------------------------------------------------------- */

static void test_baggage_header_members(void)
{
    collected_warnings w = {0};
    tw_span_context *c = extract_pairs(W3C, HTTP, &w, NULL, "traceparent", TP("01"), "baggage",
                                       " k1 = v1 ;prop=1;flag , k2=a%20b%2C%3B , k3=, k4=x+y",
                                       "Baggage", "k5=%E2%82%AC,bad", NULL);
    CU_ASSERT(ids_equal(c, TP_HI, TP_LO, TP_SPAN, 0));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k1"), "v1"); /* properties dropped */
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k2"), "a b,;");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k3"), "");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k4"), "x+y"); /* '+' is literal */
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k5"), "\xe2\x82\xac");
    CU_ASSERT_EQUAL(tw_span_context_baggage_count(c), 5);
    CU_ASSERT(warned(&w, "baggage: member \"bad\" has no '='; dropped"));
    CU_ASSERT_EQUAL(w.n, 1);
    tw_span_context_unref(c);
}

static void test_baggage_problems_are_warnings(void)
{
    collected_warnings w = {0};
    tw_span_context *c =
        extract_pairs(W3C, HTTP, &w, NULL, "baggage", "k=50%,bad key=1,=2,ok=1,ok=2", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_FALSE(tw_span_context_is_valid(c)); /* baggage alone is a hint */
    CU_ASSERT(tw_span_context_is_sampling_deferred(c));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k"), "50%");
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "ok"), "1");
    CU_ASSERT(warned(&w, "baggage: bad percent-encoding in the value of \"k\"; kept as received"));
    CU_ASSERT(warned(&w, "baggage: key \"bad key\" is not a token; member dropped"));
    CU_ASSERT(warned(&w, "baggage: key \"\" is not a token"));
    CU_ASSERT(warned(&w, "baggage key \"ok\" repeated; the first value is kept"));
    CU_ASSERT_EQUAL(w.n, 4);
    tw_span_context_unref(c);
}

static void test_baggage_limits(void)
{
    char *big = repeat('v', TW_BAGGAGE_MAX_ITEM_BYTES);
    char header[8192 + 64];
    snprintf(header, sizeof header, "big=%s,small=1", big);
    collected_warnings w = {0};
    tw_span_context *c =
        extract_pairs(W3C, HTTP, &w, NULL, "traceparent", TP("01"), "baggage", header, NULL);
    CU_ASSERT(tw_span_context_is_valid(c));
    CU_ASSERT_PTR_NULL(tw_span_context_baggage_get(c, "big"));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "small"), "1");
    CU_ASSERT(warned(&w, "\"big\" dropped: key and value exceed 4096 bytes"));
    tw_span_context_unref(c);
    free(big);
}

void tw_test_register(void)
{
    CU_pSuite s = CU_add_suite("propagation/w3c", NULL, NULL);
    CU_add_test(s, "inject_writes_version_00_with_32_digit_trace_id",
                test_inject_writes_version_00_with_32_digit_trace_id);
    CU_add_test(s, "inject_maps_only_the_sampled_flag", test_inject_maps_only_the_sampled_flag);
    CU_add_test(s, "tracestate_is_inherited_and_reemitted_unchanged",
                test_tracestate_is_inherited_and_reemitted_unchanged);
    CU_add_test(s, "inject_baggage_header_encodes_and_limits",
                test_inject_baggage_header_encodes_and_limits);
    CU_add_test(s, "round_trip_keeps_ids_sampled_and_baggage",
                test_round_trip_keeps_ids_sampled_and_baggage);
    CU_add_test(s, "extract_maps_the_sampled_bit_only", test_extract_maps_the_sampled_bit_only);
    CU_add_test(s, "extract_header_names_and_white_space",
                test_extract_header_names_and_white_space);
    CU_add_test(s, "extract_future_versions", test_extract_future_versions);
    CU_add_test(s, "malformed_traceparent_is_an_error_with_the_reason",
                test_malformed_traceparent_is_an_error_with_the_reason);
    CU_add_test(s, "a_second_traceparent_is_malformed", test_a_second_traceparent_is_malformed);
    CU_add_test(s, "tracestate_is_ignored_without_a_valid_traceparent",
                test_tracestate_is_ignored_without_a_valid_traceparent);
    CU_add_test(s, "tracestate_headers_are_joined_in_order",
                test_tracestate_headers_are_joined_in_order);
    CU_add_test(s, "tracestate_grammar", test_tracestate_grammar);
    CU_add_test(s, "tracestate_key_lengths", test_tracestate_key_lengths);
    CU_add_test(s, "tracestate_member_count_limit", test_tracestate_member_count_limit);
    CU_add_test(s, "long_tracestate_loses_whole_members", test_long_tracestate_loses_whole_members);
    CU_add_test(s, "huge_tracestate_is_discarded_unread", test_huge_tracestate_is_discarded_unread);
    CU_add_test(s, "baggage_header_members", test_baggage_header_members);
    CU_add_test(s, "baggage_problems_are_warnings", test_baggage_problems_are_warnings);
    CU_add_test(s, "baggage_limits", test_baggage_limits);
}
