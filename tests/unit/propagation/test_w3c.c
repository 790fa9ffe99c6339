/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/propagation/test_w3c.c: suite "propagation/w3c": traceparent
 * (what inject writes, the sampled and random-trace-id flags, versions, every
 * malformed form), the random-trace-id flag through spans (inherited by children,
 * set on new traces in both id sizes, never confused with Jaeger's debug bit),
 * tracestate (joining, key and value grammar, limits, duplicates, truncation,
 * inheritance, adding and updating a member) and the W3C baggage header. Written
 * from the W3C Trace Context specification (Level 2); the rules a service lives by
 * run through tw_headers in both formats (w3c_rules.h). docs/PROPAGATION.md, "W3C
 * Trace Context".
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fixtures.h"
#include "harness.h"
#include "prop_test.h"
#include "w3c_rules.h"

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

static void test_inject_writes_the_sampled_and_random_flags_only(void)
{
    /* "Vendors MUST set those [other flags] to zero." Jaeger's debug (0x02 in its own
     * byte) and firehose are not W3C flags. */
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
        {TW__FLAG_RANDOM, "02"},
        {TW__FLAG_RANDOM | TW_FLAG_SAMPLED, "03"},
        {TW__FLAG_RANDOM | TW_FLAG_SAMPLED | TW_FLAG_DEBUG | 0xf0, "03"},
        {TW__FLAG_RANDOM | TW__FLAG_DEFERRED, "02"},
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
        {0, TW__FLAG_RANDOM, TW__FLAG_RANDOM},
        {2, TW__FLAG_RANDOM | TW_FLAG_SAMPLED | TW_FLAG_DEBUG, TW__FLAG_RANDOM | TW_FLAG_SAMPLED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_span_context *c = make_context(cases[i].hi, 0x1111, 0x2222, 0x3333, cases[i].flags, "k",
                                          "v=1;2, 3%", "e", "", NULL);
        tw_headers *h = inject_with(W3C, MAP, c, NULL);
        collected_warnings w = {0};
        tw_span_context *back = extract_with(W3C, MAP, h, &w, NULL);
        CU_ASSERT(ids_equal(back, cases[i].hi, 0x1111, 0x2222, 0)); /* no grandparent in W3C */
        CU_ASSERT_EQUAL(tw_span_context_flags(back), cases[i].want & TW__FLAGS_WIRE);
        CU_ASSERT_EQUAL(tw_span_context_is_trace_id_random(back),
                        (cases[i].want & TW__FLAG_RANDOM) != 0);
        CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(back, "k"), "v=1;2, 3%");
        CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(back, "e"), "");
        CU_ASSERT_EQUAL(w.n, 0);
        tw_span_context_unref(back);
        tw_headers_free(h);
        tw_span_context_unref(c);
    }
}

/* ---- extract: traceparent ----------------------------------------------------------------- */

static void test_extract_reads_the_sampled_and_random_bits(void)
{
    /* "both 01 (00000001) and 03 (00000011) represent that the trace has been sampled
     * [...] 03 and 02 (00000010) both represent that at least the right-most 7 bytes of
     * the trace-id are randomly (or pseudo-randomly) generated": bits, not values. */
    static const struct {
        const char *flags;
        unsigned int sampled;
        bool random;
    } cases[] = {{"01", 1, false}, {"00", 0, false}, {"02", 0, true},  {"03", 1, true},
                 {"ff", 1, true},  {"09", 1, false}, {"04", 0, false}, {"fe", 0, true}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char v[64];
        snprintf(v, sizeof v, "00-" TP_TRACE "-" TP_PARENT "-%s", cases[i].flags);
        tw_span_context *c = extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", v, NULL);
        CU_ASSERT(ids_equal(c, TP_HI, TP_LO, TP_SPAN, 0));
        /* The Jaeger flags: W3C's 0x02 is never Jaeger's debug. */
        CU_ASSERT_EQUAL(tw_span_context_flags(c), cases[i].sampled);
        CU_ASSERT_FALSE(tw_span_context_is_debug(c));
        CU_ASSERT_EQUAL(tw_span_context_is_trace_id_random(c), cases[i].random);
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

/* The list "foo=1,<member>" loses nothing (@keeps) or is discarded whole, with a
 * warning saying so. */
static void assert_member(const char *member, bool keeps)
{
    char *list = malloc(strlen(member) + 7);
    sprintf(list, "foo=1,%s", member);
    collected_warnings w = {0};
    char *got = tracestate_of(list, NULL, &w);
    if (keeps) {
        if (!got || strcmp(got, list) != 0)
            fprintf(stderr, "\n  \"%.80s\" should be kept, got \"%.80s\"\n", list,
                    got ? got : "(none)");
        CU_ASSERT(got && strcmp(got, list) == 0);
        CU_ASSERT_EQUAL(w.n, 0);
    } else {
        if (got)
            fprintf(stderr, "\n  \"%.80s\" should be discarded\n", list);
        CU_ASSERT_PTR_NULL(got);
        CU_ASSERT(warned(&w, "the whole tracestate is discarded"));
    }
    free(got);
    free(list);
}

static void test_tracestate_key_grammar(void)
{
    /* key = ( lcalpha / DIGIT ) 0*255 ( keychar )
     * keychar = lcalpha / DIGIT / "_" / "-"/ "*" / "/" / "@"
     * "A key MUST begin with a lowercase letter or a digit and contain up to 256
     * characters including lowercase letters (a-z), digits (0-9), underscores (_),
     * dashes (-), asterisks (*), forward slashes (/), and at signs (@)." */
    static const char *const valid[] = {
        "a=1",
        "0=1",
        "1foo=1", /* a digit first: valid (the first Recommendation refused it) */
        "abcdefghijklmnopqrstuvwxyz0123456789_-*/@=1",
        "0123456789abcdefghijklmnopqrstuvwxyz@_-*/=1",
        "foo@=1",     /* '@' is a key character like any other */
        "foo@@bar=1", /* ... so it may repeat */
        "foo@bar@baz=1",
        "foo@1bar=1",          /* and what follows it may start with a digit */
        "t@vvvvvvvvvvvvvvv=1", /* no separate 14-character limit after '@' */
        "z-=1",
        "z*=1",
    };
    for (size_t i = 0; i < sizeof valid / sizeof valid[0]; i++)
        assert_member(valid[i], true);
    static const char *const invalid[] = {
        "@foo=1", "_foo=1",    "-foo=1",        "*foo=1", "/foo=1",  "FOO=1",
        "fOo=1",  "foo.bar=1", "foo =1",        "f oo=1", "foo\t=1", "=1",
        "foo",    "foo:bar=1", "foo\xc3\xa9=1", "foo#=1",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        assert_member(invalid[i], false);
}

static void test_tracestate_key_length(void)
{
    /* "up to 256 characters", whatever the '@' does inside. */
    char member[600];
    char *z256 = repeat('z', 256), *z257 = repeat('z', 257);
    char *t241 = repeat('t', 241), *t242 = repeat('t', 242), *v15 = repeat('v', 15);
    char *t254 = repeat('t', 254), *t255 = repeat('t', 255);
    snprintf(member, sizeof member, "%s=1", z256);
    assert_member(member, true);
    snprintf(member, sizeof member, "%s=1", z257);
    assert_member(member, false);
    snprintf(member, sizeof member, "%s@%s=1", t241, "vvvvvvvvvvvvvv"); /* 256 */
    assert_member(member, true);
    snprintf(member, sizeof member, "%s@v=1", t242); /* 244: valid now */
    assert_member(member, true);
    snprintf(member, sizeof member, "t@%s=1", v15);
    assert_member(member, true);
    snprintf(member, sizeof member, "%s@v=1", t254); /* 256 */
    assert_member(member, true);
    snprintf(member, sizeof member, "%s@v=1", t255); /* 257 */
    assert_member(member, false);
    free(z256);
    free(z257);
    free(t241);
    free(t242);
    free(v15);
    free(t254);
    free(t255);
}

static void test_tracestate_value_grammar(void)
{
    /* value = 0*255(chr) nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E;
     * chr = %x20 / nblk-chr. "up to 256 printable ASCII characters (i.e., the range
     * 0x20 to 0x7E) except comma (,) and (=). The string must end with a character
     * which is not a space (0x20)." */
    char value[128];
    size_t n = 0;
    for (int ch = 0x20; ch <= 0x7e; ch++) {
        if (ch != ',' && ch != '=')
            value[n++] = (char)ch;
    }
    value[n] = '\0';
    char member[600];
    snprintf(member, sizeof member, "k=%s", value);
    assert_member(member, true);
    assert_member("k= leading spaces are kept", true);
    assert_member("k=!", true);
    char *v256 = repeat('v', 256), *v257 = repeat('v', 257);
    snprintf(member, sizeof member, "k=%s", v256);
    assert_member(member, true);
    snprintf(member, sizeof member, "k=%s", v257);
    assert_member(member, false);
    free(v256);
    free(v257);
    static const char *const invalid[] = {
        "k=", "k=a=b", "k=a\tb", "k=\x7f", "k=\x1f", "k=\xc3\xa9", "k=  ", "k=a\x0d",
    };
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++)
        assert_member(invalid[i], false);
    /* "All trailing spaces are considered to be optional whitespace characters not part
     * of the value": they are not sent on. */
    assert_tracestate("k=a b \t ", NULL, "k=a b");
}

static void test_tracestate_that_cannot_be_parsed_is_discarded_whole(void)
{
    /* "If the tracestate header cannot be parsed the vendor MAY discard the entire
     * header." (Processing Model, 3.) tracewire does, so that a list it could not
     * validate is never forwarded; the rest of the list goes with the bad member, and
     * the warning says which one. */
    collected_warnings w = {0};
    char *got = tracestate_of("foo=1,bar=2", "Bad=3,baz=4", &w);
    CU_ASSERT_PTR_NULL(got);
    CU_ASSERT(warned(&w, "tracestate: a member has an invalid key (\"Bad=3\"); the whole "
                         "tracestate is discarded"));
    CU_ASSERT_EQUAL(w.n, 1);
    free(got);
    memset(&w, 0, sizeof w);
    got = tracestate_of("foo=1,bar", NULL, &w);
    CU_ASSERT_PTR_NULL(got);
    CU_ASSERT(warned(&w, "a member has no '='"));
    free(got);
    memset(&w, 0, sizeof w);
    got = tracestate_of("foo=1,bar=", NULL, &w);
    CU_ASSERT_PTR_NULL(got);
    CU_ASSERT(warned(&w, "a member has an invalid value"));
    free(got);
}

static void test_tracestate_repeated_key_keeps_the_first_member(void)
{
    /* "Adding a key/value pair MUST NOT result in the same key being present multiple
     * times" and "vendors MAY also discard duplicate keys that were not generated by
     * them": the left-most member (the most recent position) stays, later ones go. */
    collected_warnings w = {0};
    char *got = tracestate_of("foo=1,bar=2,foo=3,baz=4,foo=5", NULL, &w);
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, "foo=1,bar=2,baz=4");
    CU_ASSERT(warned(&w, "tracestate: member \"foo\" (5 bytes) dropped: its key occurs earlier"));
    CU_ASSERT_EQUAL(w.n, 2);
    free(got);
    assert_tracestate("foo=1,foo=1", NULL, "foo=1");
    assert_tracestate("foo=1", "foo=2", "foo=1"); /* across header fields too */
    assert_tracestate("a=1", "b=2,a=3,b=4", "a=1,b=2");
    /* A repeated key in a list that is discarded anyway is not reported on its own. */
    memset(&w, 0, sizeof w);
    got = tracestate_of("foo=1,foo=2,BAD=3", NULL, &w);
    CU_ASSERT_PTR_NULL(got);
    CU_ASSERT_EQUAL(w.n, 1);
    free(got);
}

static void test_tracestate_member_count_limit(void)
{
    /* "There can be a maximum of 32 list-members in a list." A longer one is not a
     * list the grammar allows (list-member 0*31( OWS "," OWS list-member )): it cannot
     * be parsed, so it is discarded whole. Empty members are not counted. */
    char list[512] = "";
    for (int i = 1; i <= 32; i++) {
        char m[16];
        snprintf(m, sizeof m, "%sbar%02d=%02d", i > 1 ? "," : "", i, i);
        strcat(list, m);
    }
    assert_tracestate(list, NULL, list); /* 32: kept */
    char with_empty[600];
    snprintf(with_empty, sizeof with_empty, ",,%s,, ,", list);
    assert_tracestate(with_empty, NULL, list);
    collected_warnings w = {0};
    char *got = tracestate_of(list, "bar33=33", &w);
    CU_ASSERT_PTR_NULL(got); /* 33: all discarded */
    CU_ASSERT(warned(&w, "more than 32 members"));
    free(got);
    /* Duplicates count as members of the list received. */
    memset(&w, 0, sizeof w);
    got = tracestate_of(list, "bar01=1", &w);
    CU_ASSERT_PTR_NULL(got);
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

/* ---- adding and updating tracewire's own member ------------------------------------------- */

/* Whether @c's tracestate is @want (NULL-safe, so a failed call fails the test only). */
static bool tracestate_is(const tw_span_context *c, const char *want)
{
    const char *got = tw_span_context_tracestate(c);
    if (got && strcmp(got, want) == 0)
        return true;
    fprintf(stderr, "\n  tracestate \"%.100s\", want \"%.100s\"\n", got ? got : "(none)", want);
    return false;
}

static void test_with_tracestate_adds_to_the_left(void)
{
    /* "The new key/value pair SHOULD be added to the beginning of the list." */
    tw_span_context *up =
        extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", TP("03"), "tracestate",
                      "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", "baggage", "k=v", NULL);
    tw_error *err = NULL;
    tw_span_context *c = tw_span_context_with_tracestate(up, "tw", "ab12", &err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(tracestate_is(c, "tw=ab12,rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
    /* Everything else is kept; the original is unchanged. */
    CU_ASSERT(ids_equal(c, TP_HI, TP_LO, TP_SPAN, 0));
    CU_ASSERT(tw_span_context_is_sampled(c) && tw_span_context_is_trace_id_random(c));
    CU_ASSERT_STRING_EQUAL(tw_span_context_baggage_get(c, "k"), "v");
    CU_ASSERT(tracestate_is(up, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
    tw_headers *h = inject_with(W3C, HTTP, c, NULL);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "tracestate"),
                           "tw=ab12,rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
    tw_headers_free(h);
    tw_span_context_unref(c);

    /* A context without a tracestate gets a list of one. */
    tw_span_context *bare = make_context(0, 1, 2, 0, TW_FLAG_SAMPLED, NULL);
    c = tw_span_context_with_tracestate(bare, "0tw@acme", "x", NULL);
    CU_ASSERT(tracestate_is(c, "0tw@acme=x"));
    tw_span_context_unref(c);
    tw_span_context_unref(bare);
    tw_span_context_unref(up);
}

static void test_with_tracestate_update_moves_the_key_left(void)
{
    /* "Modified keys MUST be moved to the beginning (left) of the list", "the order of
     * unmodified key/value pairs MUST be preserved", and the key is never twice. */
    tw_span_context *up = extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", TP("01"),
                                        "tracestate", "a=1,tw=old,b=2", NULL);
    tw_span_context *c = tw_span_context_with_tracestate(up, "tw", "new", NULL);
    CU_ASSERT(tracestate_is(c, "tw=new,a=1,b=2"));
    /* A NULL value deletes the member; deleting the last one leaves no tracestate. */
    tw_span_context *d = tw_span_context_with_tracestate(c, "a", NULL, NULL);
    CU_ASSERT(tracestate_is(d, "tw=new,b=2"));
    tw_span_context *e = tw_span_context_with_tracestate(d, "tw", NULL, NULL);
    tw_span_context *f = tw_span_context_with_tracestate(e, "b", NULL, NULL);
    CU_ASSERT_PTR_NULL(tw_span_context_tracestate(f));
    tw_headers *h = inject_with(W3C, HTTP, f, NULL);
    CU_ASSERT_PTR_NULL(tw_headers_get(h, "tracestate")); /* "SHOULD avoid sending" empty */
    tw_headers_free(h);
    tw_span_context_unref(f);
    tw_span_context_unref(e);
    tw_span_context_unref(d);
    tw_span_context_unref(c);
    tw_span_context_unref(up);
}

static void test_with_tracestate_keeps_at_most_32_members(void)
{
    /* "If adding an entry would cause the tracestate list to contain more than 32
     * list-members the right-most list-member should be removed from the list." */
    tw_span_context *up = extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", TP("01"),
                                        "tracestate", W3C_32_MEMBERS, NULL);
    tw_span_context *c = tw_span_context_with_tracestate(up, "tw", "1", NULL);
    const char *ts = tw_span_context_tracestate(c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ts);
    CU_ASSERT_EQUAL(strncmp(ts, "tw=1,a01=1,", 11), 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(ts, ",a31=31"));
    CU_ASSERT_PTR_NULL(strstr(ts, "a32="));
    size_t commas = 0;
    for (const char *p = ts; *p; p++)
        commas += *p == ',';
    CU_ASSERT_EQUAL(commas, 31);
    /* Updating a key already there does not push anything out. */
    tw_span_context *d = tw_span_context_with_tracestate(up, "a17", "x", NULL);
    const char *ts_d = tw_span_context_tracestate(d);
    CU_ASSERT(ts_d && strncmp(ts_d, "a17=x,a01=1,", 12) == 0 && strstr(ts_d, ",a32=32"));
    tw_span_context_unref(d);
    tw_span_context_unref(c);
    tw_span_context_unref(up);
}

static void test_with_tracestate_fits_the_propagated_size(void)
{
    /* The list stays within the 512 bytes propagated; others' members go as extract
     * truncates ("Entries larger than 128 characters long SHOULD be removed first"),
     * ours never. */
    char *v = repeat('x', 200);
    char list[1024];
    snprintf(list, sizeof list, "a=%s,s=1,b=%s", v, v); /* 408 bytes */
    tw_span_context *up =
        extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", TP("01"), "tracestate", list, NULL);
    CU_ASSERT(tracestate_is(up, list));
    char *mine = repeat('m', 150);
    tw_span_context *c = tw_span_context_with_tracestate(up, "tw", mine, NULL);
    char want[1024];
    snprintf(want, sizeof want, "tw=%s,a=%s,s=1", mine, v);
    CU_ASSERT(tracestate_is(c, want));
    tw_span_context_unref(c);
    /* A member that alone exceeds 512 bytes is refused. */
    char *k256 = repeat('k', 256), *v256 = repeat('v', 256);
    tw_error *err = NULL;
    c = tw_span_context_with_tracestate(up, k256, v256, &err);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_LIMIT);
    CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), "513 bytes"));
    tw_error_free(err);
    free(k256);
    free(v256);
    free(mine);
    free(v);
    tw_span_context_unref(up);
}

static void test_with_tracestate_refuses_what_the_grammar_refuses(void)
{
    tw_span_context *c = make_context(0, 1, 2, 0, TW_FLAG_SAMPLED, NULL);
    static const struct {
        const char *key, *value, *reason;
    } cases[] = {
        {"Tw", "1", "key \"Tw\" is not"},      {"@tw", "1", "key \"@tw\" is not"},
        {"", "1", "key \"\" is not"},          {"tw", "", "value \"\" is not"},
        {"tw", "a,b", "value \"a,b\" is not"}, {"tw", "a=b", "value"},
        {"tw", "ends in space ", "value"},     {"tw", "line\nbreak", "value \"line\\x0abreak\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw_error *err = NULL;
        tw_span_context *d = tw_span_context_with_tracestate(c, cases[i].key, cases[i].value, &err);
        CU_ASSERT_PTR_NULL(d);
        CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
        CU_ASSERT_PTR_NOT_NULL(strstr(tw_error_message(err), cases[i].reason));
        tw_error_free(err);
    }
    /* A hint has no trace id, so no traceparent to go with a tracestate. */
    tw_span_context *hint = extract_pairs(W3C, HTTP, NULL, NULL, "baggage", "k=v", NULL);
    tw_error *err = NULL;
    CU_ASSERT_PTR_NULL(tw_span_context_with_tracestate(hint, "tw", "1", &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    tw_error_free(err);
    err = NULL;
    CU_ASSERT_PTR_NULL(tw_span_context_with_tracestate(NULL, "tw", "1", &err));
    CU_ASSERT_EQUAL(tw_error_status(err), TW_E_INVALID_ARG);
    tw_error_free(err);
    tw_span_context_unref(hint);
    tw_span_context_unref(c);
}

/* ---- the random-trace-id flag through spans ------------------------------------------------ */

/* The traceparent flags a child of @parent (NULL: a root) writes, from @tracer. */
static void child_flags(tw_tracer *tracer, const tw_span_context *parent, char out[3])
{
    tw_span *s = tw_span_start_child(tracer, "child", parent);
    tw_span *grandchild = tw_span_start_child(tracer, "grandchild", tw_span_get_context(s));
    tw_headers *h = inject_with(W3C, HTTP, tw_span_get_context(grandchild), NULL);
    const char *tp = tw_headers_get(h, "traceparent");
    snprintf(out, 3, "%s", tp && strlen(tp) == 55 ? tp + 53 : "??");
    tw_headers_free(h);
    tw_span_finish(grandchild);
    tw_span_finish(s);
}

static void test_random_flag_is_carried_to_every_child(void)
{
    /* "If the flag is set in the incoming traceparent header, it MUST also be set in all
     * outgoing traceparent headers which use the same trace-id", and unset stays unset. */
    tw_tracer *tracer = tracer_always_sampled(NULL, NULL);
    static const char *const flags[] = {"00", "01", "02", "03"};
    for (size_t i = 0; i < 4; i++) {
        char v[64], got[3];
        snprintf(v, sizeof v, "00-" TP_TRACE "-" TP_PARENT "-%s", flags[i]);
        tw_span_context *up = extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", v, NULL);
        child_flags(tracer, up, got);
        CU_ASSERT_STRING_EQUAL(got, flags[i]); /* the caller's decision, the caller's flag */
        tw_span_context_unref(up);
    }
    /* A deferred decision is made by the child's sampler; the flag stays with the trace. */
    for (int random = 0; random < 2; random++) {
        char got[3];
        tw_span_context *up =
            make_context(1, 2, 3, 0, TW__FLAG_DEFERRED | (random ? TW__FLAG_RANDOM : 0), NULL);
        child_flags(tracer, up, got);
        CU_ASSERT_STRING_EQUAL(got, random ? "03" : "01");
        tw_span_context_unref(up);
    }
    /* sampling.priority changes the decision, not the flag. */
    tw_span_context *up = extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", TP("02"), NULL);
    tw_span *s = tw_span_start_child(tracer, "prio", up);
    tw_span_set_tag_int64(s, "sampling.priority", 1);
    CU_ASSERT(tw_span_context_is_trace_id_random(tw_span_get_context(s)));
    tw_headers *h = inject_with(W3C, HTTP, tw_span_get_context(s), NULL);
    CU_ASSERT(tw_headers_get(h, "traceparent") &&
              strcmp(tw_headers_get(h, "traceparent") + 53, "03") == 0);
    tw_headers_free(h);
    tw_span_finish(s);
    tw_span_context_unref(up);
    tw_tracer_free(tracer);
}

static void test_new_traces_claim_a_random_trace_id(void)
{
    /* "When at least the right-most 7 bytes of the trace-id are randomly (or
     * pseudo-randomly) generated, the random-trace-id flag SHOULD be set to 1." A
     * root's trace id is drawn by the id generator: the low half always (the right-most
     * 8 bytes), the high half too with 128-bit ids, 0 otherwise (left padding). */
    for (int is_128bit = 0; is_128bit < 2; is_128bit++) {
        tw_tracer_options *opts = tw_tracer_options_new();
        tw_tracer_options_set_trace_id_128bit(opts, is_128bit);
        tw_tracer *tracer = tracer_always_sampled(NULL, opts);
        char got[3];
        child_flags(tracer, NULL, got);
        CU_ASSERT_STRING_EQUAL(got, "03");
        tw_span *root = tw_span_start_child(tracer, "root", NULL);
        const tw_span_context *c = tw_span_get_context(root);
        CU_ASSERT(tw_span_context_is_trace_id_random(c));
        CU_ASSERT_EQUAL(tw_span_context_trace_id_high(c) != 0, is_128bit);
        tw_span_finish(root);
        /* A new trace started from a hint (B3 decision alone) is ours too. */
        tw_span_context *hint = extract_pairs(TW_CODEC_B3, HTTP, NULL, NULL, "b3", "0", NULL);
        child_flags(tracer, hint, got);
        CU_ASSERT_STRING_EQUAL(got, "02"); /* not sampled, as the hint said; random */
        tw_span_context_unref(hint);
        tw_tracer_free(tracer);
    }
}

static void test_random_flag_and_jaeger_debug_stay_apart(void)
{
    /* Jaeger's flags byte has debug at 0x02: it never becomes W3C's random flag, and
     * the random flag never reaches a format that has no such bit. */
    tw_span_context *j = extract_pairs(TW_CODEC_JAEGER, HTTP, NULL, NULL, "uber-trace-id",
                                       TP_TRACE ":" TP_PARENT ":0:3", NULL);
    CU_ASSERT(tw_span_context_is_debug(j));
    CU_ASSERT_FALSE(tw_span_context_is_trace_id_random(j));
    tw_headers *h = inject_with(W3C, HTTP, j, NULL);
    CU_ASSERT(tw_headers_get(h, "traceparent") &&
              strcmp(tw_headers_get(h, "traceparent") + 53, "01") == 0);
    tw_headers_free(h);
    tw_span_context_unref(j);

    tw_span_context *b3 =
        extract_pairs(TW_CODEC_B3, HTTP, NULL, NULL, "b3", TP_TRACE "-" TP_PARENT "-d", NULL);
    CU_ASSERT_FALSE(tw_span_context_is_trace_id_random(b3));
    tw_span_context_unref(b3);

    tw_span_context *w = extract_pairs(W3C, HTTP, NULL, NULL, "traceparent", TP("02"), NULL);
    CU_ASSERT_EQUAL(tw_span_context_flags(w), 0); /* no Jaeger bit at all */
    h = inject_with(TW_CODEC_JAEGER, HTTP, w, NULL);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "uber-trace-id"),
                           TP_TRACE ":" TP_PARENT ":0000000000000000:0");
    tw_headers_free(h);
    h = inject_with(TW_CODEC_B3_SINGLE, HTTP, w, NULL);
    CU_ASSERT_STRING_EQUAL(tw_headers_get(h, "b3"), TP_TRACE "-" TP_PARENT "-0");
    tw_headers_free(h);
    uint8_t buf[64];
    size_t len = 0;
    CU_ASSERT_EQUAL(tw_binary_inject(w, buf, sizeof buf, &len), TW_OK);
    CU_ASSERT_EQUAL(buf[32], 0); /* the Jaeger flags byte */
    tw_span_context_unref(w);
}

/* ---- the rules, through tw_headers --------------------------------------------------------- */

static void *headers_in(const char *const *pairs)
{
    tw_headers *h = tw_headers_new();
    for (size_t i = 0; pairs[i]; i += 2)
        tw_headers_add(h, pairs[i], pairs[i + 1]);
    return h;
}

static tw_carrier_reader headers_reader(void *in)
{
    return tw_headers_reader(in);
}

static void headers_free(void *h)
{
    tw_headers_free(h);
}

static void *headers_out(void)
{
    return tw_headers_new();
}

static tw_carrier_writer headers_writer(void *out)
{
    return tw_headers_writer(out);
}

static const char *headers_get(void *out, const char *name, size_t *count)
{
    const char *k, *v, *first = NULL;
    *count = 0;
    for (size_t i = 0; tw_headers_item(out, i, &k, &v); i++) {
        if (strcasecmp(k, name) == 0 && (*count)++ == 0)
            first = v;
    }
    return first;
}

static void test_w3c_rules_through_tw_headers(void)
{
    const w3c_carrier_ops http = {"tw_headers, HTTP_HEADERS",
                                  HTTP,
                                  headers_in,
                                  headers_reader,
                                  headers_free,
                                  headers_out,
                                  headers_writer,
                                  headers_get,
                                  headers_free};
    const w3c_carrier_ops map = {"tw_headers, TEXT_MAP", MAP,          headers_in,
                                 headers_reader,         headers_free, headers_out,
                                 headers_writer,         headers_get,  headers_free};
    w3c_rules_run(&http);
    w3c_rules_run(&map);
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
    CU_add_test(s, "inject_writes_the_sampled_and_random_flags_only",
                test_inject_writes_the_sampled_and_random_flags_only);
    CU_add_test(s, "tracestate_is_inherited_and_reemitted_unchanged",
                test_tracestate_is_inherited_and_reemitted_unchanged);
    CU_add_test(s, "inject_baggage_header_encodes_and_limits",
                test_inject_baggage_header_encodes_and_limits);
    CU_add_test(s, "round_trip_keeps_ids_sampled_and_baggage",
                test_round_trip_keeps_ids_sampled_and_baggage);
    CU_add_test(s, "extract_reads_the_sampled_and_random_bits",
                test_extract_reads_the_sampled_and_random_bits);
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
    CU_add_test(s, "tracestate_key_grammar", test_tracestate_key_grammar);
    CU_add_test(s, "tracestate_key_length", test_tracestate_key_length);
    CU_add_test(s, "tracestate_value_grammar", test_tracestate_value_grammar);
    CU_add_test(s, "tracestate_that_cannot_be_parsed_is_discarded_whole",
                test_tracestate_that_cannot_be_parsed_is_discarded_whole);
    CU_add_test(s, "tracestate_repeated_key_keeps_the_first_member",
                test_tracestate_repeated_key_keeps_the_first_member);
    CU_add_test(s, "tracestate_member_count_limit", test_tracestate_member_count_limit);
    CU_add_test(s, "long_tracestate_loses_whole_members", test_long_tracestate_loses_whole_members);
    CU_add_test(s, "huge_tracestate_is_discarded_unread", test_huge_tracestate_is_discarded_unread);
    CU_add_test(s, "with_tracestate_adds_to_the_left", test_with_tracestate_adds_to_the_left);
    CU_add_test(s, "with_tracestate_update_moves_the_key_left",
                test_with_tracestate_update_moves_the_key_left);
    CU_add_test(s, "with_tracestate_keeps_at_most_32_members",
                test_with_tracestate_keeps_at_most_32_members);
    CU_add_test(s, "with_tracestate_fits_the_propagated_size",
                test_with_tracestate_fits_the_propagated_size);
    CU_add_test(s, "with_tracestate_refuses_what_the_grammar_refuses",
                test_with_tracestate_refuses_what_the_grammar_refuses);
    CU_add_test(s, "random_flag_is_carried_to_every_child",
                test_random_flag_is_carried_to_every_child);
    CU_add_test(s, "new_traces_claim_a_random_trace_id", test_new_traces_claim_a_random_trace_id);
    CU_add_test(s, "random_flag_and_jaeger_debug_stay_apart",
                test_random_flag_and_jaeger_debug_stay_apart);
    CU_add_test(s, "w3c_rules_through_tw_headers", test_w3c_rules_through_tw_headers);
    CU_add_test(s, "baggage_header_members", test_baggage_header_members);
    CU_add_test(s, "baggage_problems_are_warnings", test_baggage_problems_are_warnings);
    CU_add_test(s, "baggage_limits", test_baggage_limits);
}
