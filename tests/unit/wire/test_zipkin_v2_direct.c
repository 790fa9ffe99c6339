/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_zipkin_v2_direct.c: suite "wire/zipkin_v2_direct":
 * the direct reader of Zipkin v2 JSON spans (sdk/wire/zipkin/
 * zipkin_v2_json_direct.c) against the token path it stands in front of
 * (zipkin_v2_json_decode.c, which json_scan.c and Jansson feed): the same
 * input read both ways (tw__zipkin_v2_json_read with and without the direct
 * reader) gives the same spans (model_equal.h), processes, rejects (line,
 * reason, bytes) and warnings, on every real fixture, on random spans of
 * the common shape and of odd ones (keys in any order, blanks, nulls,
 * escapes, values of other types, repeated keys, too many tags), in every
 * input shape (array, arrays, NDJSON), and on random cuts and byte flips
 * of them. The common shapes are also checked to be taken by the direct
 * reader, so that the comparison is not between two token paths.
 */
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "read_capture.h"
#include "wire/core/buf.h"
#include "wire/zipkin/zipkin_v2_json_decode.h"
#include "wire/zipkin/zipkin_v2_json_int.h"

/* ---- reading both ways -------------------------------------------------------------------- */

/* The options both ways read with (the suites below vary them). */
static tw__time_unit time_unit = TW__TIME_AUTO;
static tw__id_base id_base = TW__ID_AUTO;

static tw_status read_way(read_capture *c, const void *data, size_t len, bool is_direct)
{
    capture_init(c);
    c->opts.time_unit = time_unit;
    c->opts.id_base = id_base;
    FILE *f = len ? fmemopen((void *)data, len, "r") : fopen("/dev/null", "r");
    if (!f)
        abort();
    tw_error *err = NULL;
    tw_status st = tw__zipkin_v2_json_read(f, &c->in, is_direct, &err);
    tw_error_free(err);
    fclose(f);
    return st;
}

static bool same_process(const tw__process *a, const tw__process *b)
{
    if ((a->service_name == NULL) != (b->service_name == NULL))
        return false;
    if (a->service_name && strcmp(a->service_name, b->service_name) != 0)
        return false;
    return tw_test_tags_equal(a->tags, a->n_tags, b->tags, b->n_tags);
}

/* model_equal.h's span equality, and the members it leaves out that this
 * reader sets. */
static bool same_span(const tw__span_data *a, const tw__span_data *b)
{
    return tw_test_spans_equal(a, b) && a->shared == b->shared &&
           a->is_duration_unknown == b->is_duration_unknown &&
           a->operation_len == b->operation_len && a->dropped_tags == b->dropped_tags &&
           a->dropped_logs == b->dropped_logs && a->truncated_values == b->truncated_values &&
           a->exempt_tags == b->exempt_tags;
}

static size_t n_compared;

/* Reads @data both ways; false (with the first difference printed) when
 * they disagree. */
static bool both_ways_agree(const void *data, size_t len)
{
    read_capture d, t;
    tw_status sd = read_way(&d, data, len, true);
    tw_status st = read_way(&t, data, len, false);
    const char *diff = NULL;
    if (sd != st)
        diff = "status";
    else if (d.n_spans != t.n_spans)
        diff = "number of spans";
    else if (d.n_rejects != t.n_rejects)
        diff = "number of rejects";
    else if (d.n_warnings != t.n_warnings || d.n_date_warnings != t.n_date_warnings ||
             strcmp(d.last_warning, t.last_warning) != 0)
        diff = "warnings";
    for (size_t i = 0; !diff && i < d.n_spans; i++) {
        if (!same_span(d.spans[i].data, t.spans[i].data))
            diff = "a span";
        else if (!same_process(d.spans[i].process, t.spans[i].process))
            diff = "a process";
    }
    for (size_t i = 0; !diff && i < d.n_rejects; i++) {
        const read_reject *x = &d.rejects[i], *y = &t.rejects[i];
        if (x->line_no != y->line_no || strcmp(x->reason, y->reason) != 0 ||
            x->raw_len != y->raw_len || memcmp(x->raw, y->raw, x->raw_len) != 0)
            diff = "a reject";
    }
    if (diff)
        fprintf(stderr, "\ndirect and token ways differ (%s) on:\n%.*s\n", diff,
                (int)(len < 4000 ? len : 4000), (const char *)data);
    capture_free(&d);
    capture_free(&t);
    n_compared++;
    return diff == NULL;
}

/* ---- random spans ------------------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* True once in @n. */
static bool one_in(unsigned n)
{
    return rnd() % n == 0;
}

static void put(tw__buf *b, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof text || !tw__buf_put(b, text, (size_t)n))
        abort();
}

/* Blanks where JSON allows them, now and then. */
static void blank(tw__buf *b, bool odd)
{
    static const char *const blanks[] = {" ", "\n", "  ", "\t", "\r\n  "};
    if (odd && one_in(6))
        put(b, "%s", blanks[rnd() % 5]);
}

static void hex_digits(tw__buf *b, size_t n, bool upper)
{
    static const char lower_digits[] = "0123456789abcdef", upper_digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++)
        put(b, "%c", (upper ? upper_digits : lower_digits)[rnd() % 16]);
}

/* A string value: plain mostly, or with escapes, UTF-8, odd bytes. */
static void string_value(tw__buf *b, bool odd)
{
    static const char *const plain[] = {"GET /cart", "catalog", "db.query", "",
                                        "eu-west-1", "true",    "200",      "a/b/c?d=e&f"};
    static const char *const strange[] = {
        "esc\\\"aped\\\\", "tab\\there", "\\u00e9t\\u00E9", "caf\xc3\xa9",      "\\ud83d\\ude00",
        "nul\\u0000byte",  "bad\\x",     "\\ud800alone",    "\xff\xfe invalid", "ctl\x01"};
    put(b, "\"");
    if (odd && one_in(5))
        put(b, "%s", strange[rnd() % 10]);
    else
        put(b, "%s", plain[rnd() % 8]);
    if (one_in(4)) /* a long one, past the 16-byte runs */
        put(b, "-%016llx%016llx", (unsigned long long)rnd(), (unsigned long long)rnd());
    put(b, "\"");
}

/* An id of @digits hex digits as a JSON value, or something odd. */
static void id_value(tw__buf *b, size_t digits, bool odd)
{
    if (odd && one_in(8)) {
        static const char *const strange[] = {"null",
                                              "12",
                                              "\"\"",
                                              "\"0000000000000000\"",
                                              "\"00000000000000000000000000000000\"",
                                              "\"abc\"",
                                              "\"123456789abcdefg\"",
                                              "\"-12\"",
                                              "\"\\u0030123456789abcdef\"",
                                              "\"0123456789abcdef0\""};
        put(b, "%s", strange[rnd() % 10]);
        return;
    }
    put(b, "\"");
    hex_digits(b, digits, odd && one_in(6));
    put(b, "\"");
}

static void time_value(tw__buf *b, bool odd, bool is_duration)
{
    if (odd && one_in(5)) {
        static const char *const strange[] = {"null", "0",
                                              "-5",   "1.5",
                                              "1e3",  "\"1700000000000000\"",
                                              "true", "123456789012345678901",
                                              "-0",   "9223372036854775807"};
        put(b, "%s", strange[rnd() % 10]);
        return;
    }
    if (is_duration)
        put(b, "%llu", (unsigned long long)(rnd() % 100000));
    else
        put(b, "17000000%08llu", (unsigned long long)(rnd() % 100000000));
}

static void endpoint_value(tw__buf *b, bool odd)
{
    if (odd && one_in(10)) {
        static const char *const strange[] = {"null", "{}", "[]", "\"x\"", "{\"x\":1}"};
        put(b, "%s", strange[rnd() % 5]);
        return;
    }
    static const char *const ipv4[] = {"10.3.0.14",      "127.0.0.1", "1.2.3", "01.2.3.4",
                                       "::ffff:1.2.3.4", "300.1.1.1", "",      "::1"};
    static const char *const ipv6[] = {
        "::1", "2001:db8::1", "2001:DB8:0:0:0:0:0:1", "::ffff:10.0.0.1", "1.2.3.4", "fe80::1%eth0"};
    static const char *const port[] = {"9002",  "0",   "-1",   "65535",
                                       "65536", "1.5", "null", "\"80\""};
    const char *members[4];
    char text[4][128];
    size_t n = 0;
    if (!one_in(4)) {
        tw__buf s;
        tw__buf_init(&s);
        if (odd && one_in(8))
            put(&s, "%s", one_in(2) ? "null" : "7");
        else
            string_value(&s, odd);
        snprintf(text[n], sizeof text[n], "\"serviceName\":%.*s", (int)s.len, (char *)s.data);
        tw__buf_free(&s);
        members[n] = text[n];
        n++;
    }
    if (!one_in(3)) {
        snprintf(text[n], sizeof text[n], "\"ipv4\":\"%s\"",
                 odd ? ipv4[rnd() % 8] : ipv4[rnd() % 2]);
        members[n] = text[n];
        n++;
    }
    if (one_in(3)) {
        snprintf(text[n], sizeof text[n], "\"ipv6\":\"%s\"",
                 odd ? ipv6[rnd() % 6] : ipv6[rnd() % 2]);
        members[n] = text[n];
        n++;
    }
    if (one_in(2)) {
        snprintf(text[n], sizeof text[n], "\"port\":%s", odd ? port[rnd() % 8] : port[rnd() % 2]);
        members[n] = text[n];
        n++;
    }
    if (odd && one_in(3)) { /* another order */
        for (size_t i = n; i > 1; i--) {
            size_t j = rnd() % i;
            const char *m = members[i - 1];
            members[i - 1] = members[j];
            members[j] = m;
        }
    }
    put(b, "{");
    for (size_t i = 0; i < n; i++) {
        blank(b, odd);
        put(b, "%s%s", i ? "," : "", members[i]);
    }
    if (odd && n && one_in(12))
        put(b, ",%s", members[0]); /* a repeated member */
    put(b, "}");
}

static void annotations_value(tw__buf *b, bool odd)
{
    if (odd && one_in(10)) {
        put(b, "%s", one_in(2) ? "null" : "{}");
        return;
    }
    size_t n = rnd() % 4;
    if (odd && one_in(10))
        n = 30 + rnd() % 5; /* around the direct reader's limit */
    put(b, "[");
    for (size_t i = 0; i < n; i++) {
        put(b, "%s", i ? "," : "");
        blank(b, odd);
        bool value_first = odd && one_in(3);
        put(b, "{");
        if (value_first) {
            put(b, "\"value\":");
            string_value(b, odd);
            put(b, ",");
        }
        if (!(odd && one_in(15))) {
            put(b, "\"timestamp\":");
            time_value(b, odd, false);
        }
        if (!value_first && !(odd && one_in(15))) {
            put(b, ",\"value\":");
            if (odd && one_in(10))
                put(b, "%s", one_in(2) ? "null" : "42");
            else
                string_value(b, odd);
        }
        if (odd && one_in(20))
            put(b, ",\"endpoint\":{}");
        put(b, "}");
    }
    put(b, "]");
}

static void tags_value(tw__buf *b, bool odd)
{
    if (odd && one_in(12)) {
        put(b, "%s", one_in(2) ? "null" : "[]");
        return;
    }
    size_t n = rnd() % 12;
    if (odd && one_in(10))
        n = 60 + rnd() % 8; /* around the direct reader's limit */
    static const char *const keys[] = {"hostname", "component",   "http.method", "http.route",
                                       "region",   "error",       "client-uuid", "x",
                                       "",         "peer.service"};
    put(b, "{");
    for (size_t i = 0; i < n; i++) {
        put(b, "%s", i ? "," : "");
        blank(b, odd);
        if (odd && one_in(5))
            put(b, "\"%s\"", keys[rnd() % 10]); /* maybe repeated */
        else
            put(b, "\"%s.%zu\"", keys[rnd() % 8], i);
        blank(b, odd);
        put(b, ":");
        blank(b, odd);
        if (odd && one_in(12)) {
            static const char *const strange[] = {"null", "1",         "2.5",
                                                  "true", "[1,\"a\"]", "{\"a\":null}"};
            put(b, "%s", strange[rnd() % 6]);
        } else {
            string_value(b, odd);
        }
    }
    put(b, "}");
}

/* One span object; @odd: anything the token path reads, or refuses. */
static void span_text(tw__buf *b, bool odd)
{
    enum { N_MEMBERS = 14 };
    tw__buf m[N_MEMBERS];
    size_t n = 0;
    for (size_t i = 0; i < N_MEMBERS; i++)
        tw__buf_init(&m[i]);
#define MEMBER(cond, name)                                                                         \
    if (cond)                                                                                      \
        for (int once_ = (put(&m[n], "\"%s\":", name), blank(&m[n], odd), 1); once_; once_ = 0, n++)
    MEMBER(!(odd && one_in(30)), "traceId") id_value(&m[n], one_in(3) ? 16 : 32, odd);
    MEMBER(one_in(4) || (odd && one_in(3)), "parentId") id_value(&m[n], 16, odd);
    MEMBER(!(odd && one_in(30)), "id") id_value(&m[n], 16, odd);
    MEMBER(one_in(2), "kind")
    {
        static const char *const kinds[] = {"\"SERVER\"",   "\"CLIENT\"", "\"PRODUCER\"",
                                            "\"CONSUMER\"", "\"server\"", "\"Client\"",
                                            "\"LOCAL\"",    "null",       "3",
                                            "\"SERVE\""};
        put(&m[n], "%s", kinds[odd ? rnd() % 10 : rnd() % 4]);
    }
    MEMBER(!one_in(10), "name") string_value(&m[n], odd);
    MEMBER(!one_in(10), "timestamp") time_value(&m[n], odd, false);
    MEMBER(!one_in(10), "duration") time_value(&m[n], odd, true);
    MEMBER(one_in(5), "debug")
    {
        static const char *const v[] = {"true", "false", "null", "1", "\"true\""};
        put(&m[n], "%s", v[odd ? rnd() % 5 : rnd() % 2]);
    }
    MEMBER(one_in(5), "shared")
    {
        static const char *const v[] = {"true", "false", "null", "0", "\"yes\""};
        put(&m[n], "%s", v[odd ? rnd() % 5 : rnd() % 2]);
    }
    MEMBER(!one_in(5), "localEndpoint") endpoint_value(&m[n], odd);
    MEMBER(one_in(3), "remoteEndpoint") endpoint_value(&m[n], odd);
    MEMBER(one_in(2), "annotations") annotations_value(&m[n], odd);
    MEMBER(!one_in(6), "tags") tags_value(&m[n], odd);
    MEMBER(odd && one_in(15), one_in(2) ? "unknown" : "traceId") put(&m[n], "\"x\"");
#undef MEMBER
    if (odd && one_in(3)) { /* another writer's order */
        for (size_t i = n; i > 1; i--) {
            size_t j = rnd() % i;
            tw__buf t = m[i - 1];
            m[i - 1] = m[j];
            m[j] = t;
        }
    }
    put(b, "{");
    for (size_t i = 0; i < n; i++) {
        blank(b, odd);
        if (i)
            put(b, ",");
        blank(b, odd);
        if (!tw__buf_put(b, m[i].data, m[i].len))
            abort();
    }
    blank(b, odd);
    put(b, "}");
    for (size_t i = 0; i < N_MEMBERS; i++)
        tw__buf_free(&m[i]);
}

/* Several spans in one of the input shapes. */
static void document(tw__buf *b, bool odd)
{
    size_t n = 1 + rnd() % 6;
    unsigned shape = (unsigned)(rnd() % 4);
    if (shape == 0)
        put(b, "[");
    if (shape == 1)
        put(b, "[[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            put(b, "%s", shape == 2 ? "\n" : shape == 1 && one_in(3) ? "],[" : ",");
        blank(b, odd);
        span_text(b, odd);
    }
    if (shape == 0)
        put(b, "]");
    if (shape == 1)
        put(b, "]]");
    if (shape == 2)
        put(b, "\n");
}

/* ---- the tests ---------------------------------------------------------------------------- */

/* The common shape (what Zipkin and most writers send) is the direct
 * reader's, whole: the comparisons below then compare two ways. */
static void test_the_common_shape_is_taken_whole(void)
{
    static const char *const spans[] = {
        "{\"traceId\":\"57f98f52c0a9efa2a71bb93bc2dc1773\",\"parentId\":\"a6c08b92e099d42e\","
        "\"id\":\"77029ee522645990\",\"name\":\"cache.lookup\",\"timestamp\":1700000000010367,"
        "\"duration\":36793,\"localEndpoint\":{\"serviceName\":\"catalog\",\"ipv4\":\"10.3.0.14\"},"
        "\"annotations\":[{\"timestamp\":1700000000028763,\"value\":\"cache miss\"}],"
        "\"tags\":{\"hostname\":\"catalog-4.prod.example\",\"cache.hit\":\"true\"}}",
        /* another writer's order, blanks, nulls, escapes, a remote endpoint */
        "{ \"id\" : \"e91b7911ae951dfb\",\n  \"traceId\": \"35d3ba7316bf49e3\",\n"
        "  \"kind\": \"client\", \"name\": \"caf\\u00e9 \\\"x\\\"\", \"parentId\": null,\n"
        "  \"remoteEndpoint\": {\"port\": 9002, \"ipv6\": \"2001:db8::1\", \"serviceName\": "
        "\"catalog\"},\n  \"debug\": true, \"shared\": false, \"tags\": {}, \"annotations\": [] }",
    };
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++) {
        tw__z2d_span *d = malloc(sizeof *d);
        char scratch[256];
        tw__jd_scratch sc = {scratch, 0, sizeof scratch};
        size_t used = 0, len = strlen(spans[i]);
        /* Followed by more bytes, which it does not look at. */
        char *text = malloc(len + 3);
        memcpy(text, spans[i], len);
        memcpy(text + len, ",{", 2);
        CU_ASSERT_TRUE(d && tw__zipkin_v2_direct_parse(text, len + 2, &sc, NULL, d, &used));
        CU_ASSERT_EQUAL(used, len);
        /* Cut anywhere, it is no object: declined. */
        for (size_t cut = 0; cut < len; cut++)
            CU_ASSERT_FALSE(tw__zipkin_v2_direct_parse(text, cut, &sc, NULL, d, &used));
        CU_ASSERT_TRUE(both_ways_agree(spans[i], len));
        free(text);
        free(d);
    }
}

/* The reader's output is reused span after span: a member one span has
 * and the next lacks must not stay from the one before (a stale name
 * length once read past a "" literal). */
static void test_nothing_stays_from_the_span_before(void)
{
    static const char with[] = "{\"traceId\":\"0123456789abcdef\",\"id\":\"0123456789abcdef\","
                               "\"name\":\"a long operation name\",\"kind\":\"SERVER\","
                               "\"parentId\":\"0000000000000001\",\"timestamp\":5,"
                               "\"duration\":6,\"debug\":true,\"shared\":true,"
                               "\"localEndpoint\":{\"serviceName\":\"s\"},"
                               "\"remoteEndpoint\":{\"port\":80},\"tags\":{\"a\":\"b\"},"
                               "\"annotations\":[{\"timestamp\":1,\"value\":\"v\"}]}";
    static const char without[] = "{\"traceId\":\"0123456789abcdef\",\"id\":\"0123456789abcdef\"}";
    tw__z2d_span *d = malloc(sizeof *d);
    char scratch[64];
    tw__jd_scratch sc = {scratch, 0, sizeof scratch};
    size_t used;
    CU_ASSERT_TRUE_FATAL(d && tw__zipkin_v2_direct_parse(with, strlen(with), &sc, NULL, d, &used));
    CU_ASSERT_TRUE_FATAL(tw__zipkin_v2_direct_parse(without, strlen(without), &sc, NULL, d, &used));
    CU_ASSERT_TRUE(!d->name.s && !d->name.len && !d->kind.s && !d->kind.len && !d->parent_id.s);
    CU_ASSERT_TRUE(!d->has_timestamp && !d->has_duration && !d->debug && !d->shared);
    CU_ASSERT_TRUE(!d->local_text.s && !d->remote_text.s && !d->local.service.s &&
                   !d->remote.has_port && d->n_tags == 0 && d->n_annotations == 0);
    free(d);
    char both[sizeof with + sizeof without];
    snprintf(both, sizeof both, "%s\n%s", with, without);
    CU_ASSERT_TRUE(both_ways_agree(both, strlen(both)));
}

/* Each random span of the common shape is taken by the direct reader and
 * read as the token path reads it. */
static void test_random_common_spans_agree(void)
{
    tw__z2d_span *d = malloc(sizeof *d);
    char scratch[4096];
    size_t taken = 0, rounds = tw_test_rounds(2000);
    for (size_t i = 0; i < rounds; i++) {
        tw__buf b;
        tw__buf_init(&b);
        span_text(&b, false);
        tw__jd_scratch sc = {scratch, 0, sizeof scratch};
        size_t used;
        taken += tw__zipkin_v2_direct_parse((const char *)b.data, b.len, &sc, NULL, d, &used) &&
                 used == b.len;
        CU_ASSERT_TRUE_FATAL(both_ways_agree(b.data, b.len));
        tw__buf_free(&b);
    }
    CU_ASSERT_EQUAL(taken, rounds);
    free(d);
}

/* Odd spans, in every input shape, agree whichever way they are read. */
static void test_random_odd_documents_agree(void)
{
    for (size_t i = 0; i < tw_test_rounds(4000); i++) {
        tw__buf b;
        tw__buf_init(&b);
        document(&b, i % 4 != 0);
        CU_ASSERT_TRUE_FATAL(both_ways_agree(b.data, b.len));
        tw__buf_free(&b);
    }
}

/* With a time unit or id base given, both ways still agree (the direct
 * reader reads decimal ids not at all). */
static void test_options_agree(void)
{
    static const tw__time_unit units[] = {TW__TIME_S, TW__TIME_MS, TW__TIME_US, TW__TIME_NS};
    for (size_t i = 0; i < tw_test_rounds(800); i++) {
        time_unit = units[i % 4];
        id_base = i % 3 == 0 ? TW__ID_DEC : i % 3 == 1 ? TW__ID_HEX : TW__ID_AUTO;
        tw__buf b;
        tw__buf_init(&b);
        document(&b, i % 2 != 0);
        CU_ASSERT_TRUE_FATAL(both_ways_agree(b.data, b.len));
        tw__buf_free(&b);
    }
    time_unit = TW__TIME_AUTO;
    id_base = TW__ID_AUTO;
}

/* Cut short or with a byte changed, the records still agree: declined by
 * the direct reader, read or rejected by the token path alike. */
static void test_cut_and_flipped_documents_agree(void)
{
    static const char flips[] = "{}[]\",:\\ \n0a-.eE\x80\xc3";
    for (size_t i = 0; i < tw_test_rounds(3000); i++) {
        tw__buf b;
        tw__buf_init(&b);
        document(&b, i % 2 != 0);
        if (b.len > 0) {
            size_t at = (size_t)(rnd() % b.len);
            if (one_in(2))
                b.len = at;
            else
                b.data[at] = (uint8_t)flips[rnd() % (sizeof flips - 1)];
        }
        CU_ASSERT_TRUE_FATAL(both_ways_agree(b.data, b.len));
        tw__buf_free(&b);
    }
}

/* A document larger than the read buffer: spans across its end are read
 * the token way, the others directly, all alike. */
static void test_spans_across_read_buffers_agree(void)
{
    tw__buf b;
    tw__buf_init(&b);
    put(&b, "[");
    for (int i = 0; i < 700; i++) {
        if (i)
            put(&b, ",");
        span_text(&b, i % 3 == 0);
    }
    put(&b, "]");
    CU_ASSERT_TRUE(b.len > 3 * 64 * 1024);
    CU_ASSERT_TRUE(both_ways_agree(b.data, b.len));
    tw__buf_free(&b);
}

static int compare_fixture(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type != FTW_F || st->st_size > 8 * 1024 * 1024)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    char *data = malloc((size_t)st->st_size + 1);
    size_t len = data ? fread(data, 1, (size_t)st->st_size, f) : 0;
    fclose(f);
    if (!both_ways_agree(data, len))
        fprintf(stderr, "fixture: %s\n", path);
    CU_ASSERT_TRUE(both_ways_agree(data, len));
    free(data);
    return 0;
}

/* Every real fixture (of any format: other formats' records are declined
 * and rejected alike) reads the same both ways. */
static void test_every_fixture_agrees(void)
{
    size_t before = n_compared;
    CU_ASSERT_EQUAL(nftw(TW_REAL_FIXTURES, compare_fixture, 16, FTW_PHYS), 0);
    CU_ASSERT_TRUE(n_compared - before >= 40);
}

/* The direct reader's id reader (json_direct.h, SSE2) against tw__hex16
 * and tw__parse_hex: every byte value at every place of a valid id, and
 * random ids of either case. */
/* ---- the endpoint memo --------------------------------------------------------------------- */

static bool same_str(const tw__z2d_str *a, const tw__z2d_str *b)
{
    return (a->s == NULL) == (b->s == NULL) && a->len == b->len &&
           (!a->s || memcmp(a->s, b->s, a->len) == 0);
}

static bool same_endpoint(const tw__z2d_endpoint *a, const tw__z2d_endpoint *b)
{
    return same_str(&a->service, &b->service) && same_str(&a->ipv4, &b->ipv4) &&
           same_str(&a->ipv6, &b->ipv6) && a->has_port == b->has_port &&
           (!a->has_port || a->port == b->port);
}

/* @text parsed with @memo and without one: the same verdict, end and
 * endpoints (the rest is read the same way either way). */
static bool memo_agrees(tw__z2d_memo *memo, const char *text, size_t len)
{
    tw__z2d_span *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    char sa[512], sb[512];
    tw__jd_scratch sca = {sa, 0, sizeof sa}, scb = {sb, 0, sizeof sb};
    size_t ua = 0, ub = 0;
    CU_ASSERT_TRUE_FATAL(a && b);
    bool ra = tw__zipkin_v2_direct_parse(text, len, &sca, memo, a, &ua);
    bool rb = tw__zipkin_v2_direct_parse(text, len, &scb, NULL, b, &ub);
    bool same = ra == rb;
    if (same && ra)
        same = ua == ub && a->has_local == b->has_local && a->has_remote == b->has_remote &&
               same_endpoint(&a->local, &b->local) && same_endpoint(&a->remote, &b->remote) &&
               same_str(&a->local_text, &b->local_text) &&
               same_str(&a->remote_text, &b->remote_text) && a->n_tags == b->n_tags;
    free(a);
    free(b);
    return same;
}

/* One span with @local and @remote endpoint texts. */
static size_t memo_span(char *out, size_t size, const char *local, const char *remote)
{
    int n =
        snprintf(out, size,
                 "{\"traceId\":\"57f98f52c0a9efa2a71bb93bc2dc1773\",\"id\":\"77029ee522645990\","
                 "\"localEndpoint\":%s,\"remoteEndpoint\":%s,\"tags\":{\"a\":\"b\"}}",
                 local, remote);
    return (size_t)n;
}

/* The same endpoint text twice (the second taken from the memo), a text
 * that differs in one byte from a kept one (early, late, its length), one
 * whose strings hold escapes (not kept), and every cut of a span whose
 * endpoints the memo holds: each parsed as without the memo. */
static void test_endpoint_memo_parses_as_without(void)
{
    static const char *const eps[] = {
        "{\"serviceName\":\"catalog\",\"ipv4\":\"10.3.0.14\"}",
        "{\"serviceName\":\"catalog\",\"ipv4\":\"10.3.0.14\"}",
        "{\"serviceName\":\"catalog\",\"ipv4\":\"10.3.0.15\"}",
        "{\"serviceName\":\"catalog\",\"ipv4\":\"10.3.0.1\"}",
        "{\"serviceName\":\"catalogue\",\"ipv4\":\"10.3.0.14\"}",
        "{\"serviceName\":\"Catalog\",\"ipv4\":\"10.3.0.14\"}",
        "{\"serviceName\":\"catalog\",\"ipv4\":\"10.3.0.14\",\"port\":9002}",
        "{\"serviceName\":\"catalog\",\"ipv4\":\"10.3.0.14\",\"port\":9003}",
        "{\"serviceName\":\"cat\\u0061log\",\"ipv4\":\"10.3.0.14\"}",
        "{\"serviceName\":\"cat\\u0061log\",\"ipv4\":\"10.3.0.14\"}",
        "{\"serviceName\":\"catalog\", \"ipv4\":\"10.3.0.14\"}",
        "{\"serviceName\":\"catalog\",\"ipv4\":\"10.3.0.14\",\"ipv4\":\"10.3.0.14\"}",
        "{\"serviceName\":\"a}b\",\"ipv6\":\"2001:db8::1\",\"port\":1}",
        "{\"serviceName\":\"a}b\",\"ipv6\":\"2001:db8::1\",\"port\":1}",
        "{\"serviceName\":\"\",\"ipv6\":\"2001:db8::1\"}",
        "null",
        "{}",
    };
    size_t n = sizeof eps / sizeof eps[0];
    tw__z2d_memo *memo = calloc(1, sizeof *memo);
    CU_ASSERT_TRUE_FATAL(memo != NULL);
    char text[1024];
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < n; i++) {
            for (size_t j = 0; j < n; j += 3) {
                size_t len = memo_span(text, sizeof text, eps[i], eps[(i + j) % n]);
                CU_ASSERT_TRUE(memo_agrees(memo, text, len));
                /* Cut anywhere (inside a kept endpoint too): as without. */
                for (size_t cut = 0; cut < len; cut += 1 + (cut > 150) * 7)
                    CU_ASSERT_TRUE(memo_agrees(memo, text, cut));
            }
        }
    }
    /* More distinct texts than the memo has slots, then the first again. */
    for (int k = 0; k < TW__Z2D_MEMO_SLOTS * 3; k++) {
        char ep[128];
        snprintf(ep, sizeof ep, "{\"serviceName\":\"svc%d\",\"ipv4\":\"10.0.%d.%d\"}", k % 7,
                 k / 200, k % 200);
        size_t len = memo_span(text, sizeof text, ep, ep);
        CU_ASSERT_TRUE(memo_agrees(memo, text, len));
    }
    CU_ASSERT_TRUE(memo->last_gen > TW__Z2D_MEMO_SLOTS);
    free(memo);

    /* The whole reader, both ways, on a document of these spans: the
     * decoder's processes and endpoints kept per slot give the same spans. */
    tw__buf b;
    tw__buf_init(&b);
    put(&b, "[");
    for (int round = 0; round < 3; round++) {
        for (size_t i = 0; i < n; i++) {
            size_t len = memo_span(text, sizeof text, eps[(i * 5) % n], eps[(i + round) % n]);
            put(&b, "%s%.*s", round || i ? "," : "", (int)len, text);
        }
    }
    /* An address that is none: declined each time, from the memo too. */
    for (int k = 0; k < 3; k++) {
        size_t len =
            memo_span(text, sizeof text, "{\"serviceName\":\"bad\",\"ipv4\":\"10.3.0.999\"}",
                      "{\"serviceName\":\"bad\",\"ipv4\":\"10.3.0.256\",\"port\":70000}");
        put(&b, ",%.*s", (int)len, text);
    }
    put(&b, "]");
    CU_ASSERT_TRUE(both_ways_agree(b.data, b.len));
    tw__buf_free(&b);
}

static void test_hex16_reads_as_tw_hex16(void)
{
    char text[17] = "0123456789abcdef";
    for (int i = 0; i < 20000; i++) {
        static const char digits[] = "0123456789abcdefABCDEF";
        for (int k = 0; k < 16; k++)
            text[k] = digits[rnd() % 22];
        if (i < 16 * 256)
            text[i / 256] = (char)(i % 256);
        uint64_t a = 0, b = 0, c = 0;
        bool is_a = tw__jd_hex16(text, &a), is_b = tw__hex16(text, &b);
        bool is_c = tw__parse_hex(text, 16, 16, false, NULL, &c, NULL) == TW__HEX_OK;
        CU_ASSERT_EQUAL(is_a, is_b);
        CU_ASSERT_EQUAL(is_a, is_c);
        if (is_a && is_b && is_c) {
            CU_ASSERT_EQUAL(a, b);
            CU_ASSERT_EQUAL(a, c);
        }
    }
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/zipkin_v2_direct", NULL, NULL);
    CU_add_test(suite, "hex16_reads_as_tw_hex16", test_hex16_reads_as_tw_hex16);
    CU_add_test(suite, "the_common_shape_is_taken_whole", test_the_common_shape_is_taken_whole);
    CU_add_test(suite, "nothing_stays_from_the_span_before",
                test_nothing_stays_from_the_span_before);
    CU_add_test(suite, "random_common_spans_agree", test_random_common_spans_agree);
    CU_add_test(suite, "random_odd_documents_agree", test_random_odd_documents_agree);
    CU_add_test(suite, "options_agree", test_options_agree);
    CU_add_test(suite, "cut_and_flipped_documents_agree", test_cut_and_flipped_documents_agree);
    CU_add_test(suite, "spans_across_read_buffers_agree", test_spans_across_read_buffers_agree);
    CU_add_test(suite, "every_fixture_agrees", test_every_fixture_agrees);
    CU_add_test(suite, "endpoint_memo_parses_as_without", test_endpoint_memo_parses_as_without);
}
