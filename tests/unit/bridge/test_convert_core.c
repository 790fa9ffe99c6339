/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_convert_core.c: suite "bridge/convert_core": the
 * rules every part of `tracewire convert` shares (bridge/convert.h): id
 * parsing (hex of any case and length, decimal and two's complement, zeros
 * refused), time units, the JSON record splitter on every framing real
 * files use, the process table, the Jaeger error/service view, and the
 * framing of the writers around the SDK's encoders.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "convert.h"
#include "harness.h"
#include "wire/jaeger/jaeger_view.h"
#include "span_builder.h"
#include "wire/jaeger/jaeger_thrift_decode.h"
#include "wire/core/json_common.h"

static tw__span_data *span_new(uint64_t trace_lo, uint64_t span_id, uint64_t parent, const char *op)
{
    tw__span_data *s = tw__span_data_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    s->trace_id_low = trace_lo;
    s->span_id = span_id;
    s->parent_id = parent;
    s->flags = TW__FLAG_SAMPLED;
    tw__span_data_set_operation(s, op, strlen(op));
    return s;
}

/* ---- ids ---------------------------------------------------------------------------------- */

static void test_trace_ids_pad_and_accept_any_case(void)
{
    uint64_t hi = 1, lo = 0;
    char why[128];
    CU_ASSERT(twb_parse_trace_id("1", 1, TWB_ID_AUTO, &hi, &lo, why, sizeof why));
    CU_ASSERT(hi == 0 && lo == 1);
    CU_ASSERT(twb_parse_trace_id("ABCdef0123456789", 16, TWB_ID_AUTO, &hi, &lo, why, sizeof why));
    CU_ASSERT(hi == 0 && lo == 0xabcdef0123456789ull);
    /* 31 digits (leading zero stripped, as Jaeger storage does) */
    const char *t31 = "463ac35c9f6413ad48485a3953bb612";
    CU_ASSERT(twb_parse_trace_id(t31, strlen(t31), TWB_ID_AUTO, &hi, &lo, why, sizeof why));
    CU_ASSERT(hi == 0x0463ac35c9f6413aull && lo == 0xd48485a3953bb612ull);
    const char *t33 = "0463ac35c9f6413ad48485a3953bb61200";
    CU_ASSERT_FALSE(twb_parse_trace_id(t33, strlen(t33), TWB_ID_AUTO, &hi, &lo, why, sizeof why));
    CU_ASSERT(strstr(why, "at most 32") != NULL);
    CU_ASSERT_FALSE(
        twb_parse_trace_id("00000000000000000000", 20, TWB_ID_AUTO, &hi, &lo, why, sizeof why));
    CU_ASSERT(strstr(why, "all zeros") != NULL);
    CU_ASSERT_FALSE(twb_parse_trace_id("trace-123", 9, TWB_ID_AUTO, &hi, &lo, why, sizeof why));
    CU_ASSERT(strstr(why, "not hexadecimal") != NULL);
    CU_ASSERT_FALSE(twb_parse_trace_id("", 0, TWB_ID_AUTO, &hi, &lo, why, sizeof why));
}

static void test_decimal_ids_map_by_twos_complement(void)
{
    uint64_t id = 0;
    char why[128];
    /* merged_spans fixture: -3944181038374441761 = 0xc943743e25dc2cdf */
    const char *neg = "-3944181038374441761";
    CU_ASSERT(twb_parse_span_id(neg, strlen(neg), TWB_ID_AUTO, false, &id, why, sizeof why));
    CU_ASSERT_EQUAL(id, 0xc943743e25dc2cdfull);
    CU_ASSERT(
        twb_parse_span_id("18446744073709551615", 20, TWB_ID_DEC, false, &id, why, sizeof why));
    CU_ASSERT_EQUAL(id, UINT64_MAX);
    CU_ASSERT_FALSE(
        twb_parse_span_id("18446744073709551616", 20, TWB_ID_DEC, false, &id, why, sizeof why));
    CU_ASSERT_FALSE(
        twb_parse_span_id("-9223372036854775809", 20, TWB_ID_DEC, false, &id, why, sizeof why));
    CU_ASSERT(
        twb_parse_span_id("-9223372036854775808", 20, TWB_ID_DEC, false, &id, why, sizeof why));
    CU_ASSERT_EQUAL(id, 0x8000000000000000ull);
    /* "123" is hex unless decimal is asked for */
    CU_ASSERT(twb_parse_span_id("123", 3, TWB_ID_AUTO, false, &id, why, sizeof why));
    CU_ASSERT_EQUAL(id, 0x123);
    CU_ASSERT(twb_parse_span_id("123", 3, TWB_ID_DEC, false, &id, why, sizeof why));
    CU_ASSERT_EQUAL(id, 123);
    CU_ASSERT_FALSE(twb_parse_span_id("0", 1, TWB_ID_AUTO, false, &id, why, sizeof why));
    CU_ASSERT(twb_parse_span_id("0", 1, TWB_ID_AUTO, true, &id, why, sizeof why));
    CU_ASSERT_EQUAL(id, 0);
    CU_ASSERT_FALSE(
        twb_parse_span_id("00000000000000001", 17, TWB_ID_AUTO, false, &id, why, sizeof why));
    CU_ASSERT_FALSE(twb_parse_span_id("-", 1, TWB_ID_AUTO, false, &id, why, sizeof why));
}

/* The one base64 decoder: strict for our own formats and Go's JSON, lenient
 * (URL alphabet, optional padding) for legacy Zipkin and OTLP. */
static void test_base64_strict_and_lenient(void)
{
    uint8_t out[16];
    size_t n = 0;
    CU_ASSERT(tw__base64_decode_into("AQID", 4, true, out, &n) && n == 3 && out[2] == 3);
    CU_ASSERT(tw__base64_decode_into("AQ==", 4, true, out, &n) && n == 1);
    CU_ASSERT_FALSE(tw__base64_decode_into("AQ", 2, true, out, &n));   /* no padding */
    CU_ASSERT_FALSE(tw__base64_decode_into("-_8=", 4, true, out, &n)); /* URL alphabet */
    CU_ASSERT(tw__base64_decode_into("AQ", 2, false, out, &n) && n == 1);
    CU_ASSERT(tw__base64_decode_into("-_8=", 4, false, out, &n) && n == 2 && out[1] == 0xff);
    CU_ASSERT_FALSE(tw__base64_decode_into("A===", 4, false, out, &n));
    CU_ASSERT_FALSE(tw__base64_decode_into("AQ=A", 4, true, out, &n));
    uint8_t *heap = NULL;
    bool is_nomem = true;
    CU_ASSERT(tw__base64_decode("", 0, true, &heap, &n, &is_nomem) && n == 0 && !is_nomem);
    free(heap);
}

/* ---- time ----------------------------------------------------------------------------------- */

static void test_time_units_by_magnitude_and_forced(void)
{
    int64_t us = 0;
    CU_ASSERT(twb_time_to_us(1700000000.25, TWB_TIME_AUTO, &us));
    CU_ASSERT_EQUAL(us, 1700000000250000);
    CU_ASSERT(twb_time_to_us(1700000000123.0, TWB_TIME_AUTO, &us));
    CU_ASSERT_EQUAL(us, 1700000000123000);
    CU_ASSERT(twb_time_int_to_us(1700000000123456, TWB_TIME_AUTO, &us));
    CU_ASSERT_EQUAL(us, 1700000000123456);
    CU_ASSERT(twb_time_int_to_us(1700000000123456789, TWB_TIME_AUTO, &us));
    CU_ASSERT_EQUAL(us, 1700000000123457); /* rounded to the nearest microsecond */
    CU_ASSERT(twb_time_int_to_us(1500, TWB_TIME_US, &us));
    CU_ASSERT_EQUAL(us, 1500); /* forced: tiny epoch values of test fixtures stay µs */
    CU_ASSERT(twb_time_int_to_us(2, TWB_TIME_S, &us));
    CU_ASSERT_EQUAL(us, 2000000);
    CU_ASSERT_FALSE(twb_time_int_to_us(INT64_MAX / 10, TWB_TIME_S, &us));
    CU_ASSERT_FALSE(twb_time_to_us(1.0 / 0.0, TWB_TIME_US, &us));
    CU_ASSERT_EQUAL(twb_time_unit_parse("ns"), TWB_TIME_NS);
    CU_ASSERT_EQUAL((int)twb_time_unit_parse("minutes"), -1);
}

/* ---- JSON record splitter ------------------------------------------------------------------- */

typedef struct split {
    int records, bad;
    size_t lines[8];
    char texts[8][64];
    char why[160];
} split;

static split split_text(const char *text, size_t max_record)
{
    split s = {0};
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    twb_json_stream *js = twb_json_stream_new(f, max_record);
    for (;;) {
        const char *rec, *why;
        size_t len, line;
        twb_json_next n = twb_json_stream_next(js, &rec, &len, &line, &why);
        if (n == TWB_JSON_END || n == TWB_JSON_IO)
            break;
        if (n == TWB_JSON_BAD) {
            s.bad++;
            snprintf(s.why, sizeof s.why, "%s", why);
            continue;
        }
        if (s.records < 8) {
            s.lines[s.records] = line;
            snprintf(s.texts[s.records], sizeof s.texts[0], "%.*s", (int)len, rec);
        }
        s.records++;
    }
    twb_json_stream_free(js);
    fclose(f);
    return s;
}

static void test_splitter_reads_every_framing(void)
{
    split a = split_text("[{\"a\":1},\n {\"b\":\"}]\\\"\"}]", 0);
    CU_ASSERT_EQUAL(a.records, 2);
    CU_ASSERT_EQUAL(a.bad, 0);
    CU_ASSERT_STRING_EQUAL(a.texts[1], "{\"b\":\"}]\\\"\"}");
    CU_ASSERT_EQUAL(a.lines[1], 2);

    split nested = split_text("[[{\"a\":1}],[{\"b\":2},{\"c\":[3]}]]", 0);
    CU_ASSERT_EQUAL(nested.records, 3);
    CU_ASSERT_STRING_EQUAL(nested.texts[2], "{\"c\":[3]}");

    split one = split_text("\xEF\xBB\xBF  {\"only\":true}\n", 0);
    CU_ASSERT_EQUAL(one.records, 1);

    split nd = split_text("{\"a\":1}\n{\"a\":2}\n\n{\"a\":3}\n", 0);
    CU_ASSERT_EQUAL(nd.records, 3);
    CU_ASSERT_EQUAL(nd.lines[2], 4);

    split empty = split_text("[]", 0);
    CU_ASSERT_EQUAL(empty.records + empty.bad, 0);
}

static void test_splitter_reports_bad_regions_and_goes_on(void)
{
    split g = split_text("{\"a\":1}\nnot json at all\n{\"a\":2}\n", 0);
    CU_ASSERT_EQUAL(g.records, 2);
    CU_ASSERT_EQUAL(g.bad, 1);
    CU_ASSERT(strstr(g.why, "expected a JSON object") != NULL);

    split scalar = split_text("[1, {\"a\":1}]", 0);
    CU_ASSERT_EQUAL(scalar.records, 1);
    CU_ASSERT_EQUAL(scalar.bad, 1);

    split cut = split_text("[{\"a\":1}, {\"b\":", 0);
    CU_ASSERT_EQUAL(cut.records, 1);
    CU_ASSERT_EQUAL(cut.bad, 1);
    CU_ASSERT(strstr(cut.why, "ends inside") != NULL);

    split big = split_text("{\"a\":\"0123456789012345678901234567890123456789\"}\n{\"b\":1}", 32);
    CU_ASSERT_EQUAL(big.records, 1);
    CU_ASSERT_EQUAL(big.bad, 1);
    CU_ASSERT(strstr(big.why, "limit") != NULL);

    split deep = split_text("[[[{\"a\":1}]]]", 0);
    CU_ASSERT_EQUAL(deep.records, 0);
    CU_ASSERT(deep.bad >= 1);
}

/* ---- process table --------------------------------------------------------------------------- */

static void test_equal_processes_intern_to_one(void)
{
    twb_procs *t = twb_procs_new();
    tw__process a, b, c;
    tw__process_init(&a);
    tw__process_init(&b);
    tw__process_init(&c);
    tw_value ip = tw_test_str("10.0.0.1"), other = tw_test_str("10.0.0.2");
    tw__process_set_service(&a, "api");
    tw__process_add_tag(&a, "ip", &ip);
    tw__process_set_service(&b, "api");
    tw__process_add_tag(&b, "ip", &ip);
    tw__process_set_service(&c, "api");
    tw__process_add_tag(&c, "ip", &other);
    const tw__process *pa = twb_procs_intern(t, &a), *pb = twb_procs_intern(t, &b),
                      *pc = twb_procs_intern(t, &c);
    CU_ASSERT_PTR_NOT_NULL(pa);
    CU_ASSERT_PTR_EQUAL(pa, pb);
    CU_ASSERT_PTR_NOT_EQUAL(pa, pc);
    CU_ASSERT_EQUAL(twb_procs_count(t), 2);
    CU_ASSERT_STRING_EQUAL(pa->service_name, "api");
    tw__process_clear(&a);
    tw__process_clear(&b);
    tw__process_clear(&c);
    twb_procs_free(t);
}

/* Process @k of 300: the same service and tag shapes, values differing
 * only in the middle of a long string (what a fingerprint of the ends
 * cannot tell apart) or in one byte of a short one. */
static void numbered_process(tw__process *p, unsigned k)
{
    char host[64], ip[16];
    snprintf(host, sizeof host, "catalog-host-%03u.prod.example", k);
    snprintf(ip, sizeof ip, "10.0.0.%u", k % 10);
    tw_value h = tw_test_str(host), i = tw_test_str(ip);
    tw_value port = {.type = TW_VALUE_INT64, .as.i64 = 8000 + (int64_t)(k % 3)};
    tw__process_clear(p);
    tw__process_init(p);
    tw__process_set_service(p, "catalog");
    tw__process_add_tag(p, "hostname", &h);
    tw__process_add_tag(p, "ip", &i);
    tw__process_add_tag(p, "port", &port);
}

static void test_interning_through_one_scratch_process_stays_exact(void)
{
    /* Readers that reuse one process for every record, and readers that
     * keep one per host, get the interned process equal to what they pass:
     * address guesses and fingerprints are only tried, never trusted. */
    twb_procs *t = twb_procs_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    static const tw__process *first[300];
    tw__process scratch, kept[3];
    tw__process_init(&scratch);
    for (unsigned k = 0; k < 3; k++) {
        tw__process_init(&kept[k]);
        numbered_process(&kept[k], k * 7);
    }
    uint64_t rs = 0x243f6a8885a308d3u;
    for (unsigned round = 0; round < 4000; round++) {
        rs ^= rs << 13;
        rs ^= rs >> 7;
        rs ^= rs << 17;
        unsigned k = round < 300 ? round : (unsigned)(rs % 300);
        const tw__process *got;
        if (round % 5 == 4) {
            got = twb_procs_intern(t, &kept[round % 3]);
            k = (round % 3) * 7;
        } else {
            numbered_process(&scratch, k);
            got = twb_procs_intern(t, &scratch);
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        if (!first[k])
            first[k] = got;
        CU_ASSERT_PTR_EQUAL(got, first[k]);
        CU_ASSERT_STRING_EQUAL(got->service_name, "catalog");
        CU_ASSERT_EQUAL(got->n_tags, 3);
    }
    CU_ASSERT_EQUAL(twb_procs_count(t), 300);
    for (unsigned a = 0; a < 300; a++) {
        for (unsigned b = a + 1; b < 300; b++)
            CU_ASSERT_FATAL(first[a] != first[b]);
    }
    tw__process_clear(&scratch);
    for (unsigned k = 0; k < 3; k++)
        tw__process_clear(&kept[k]);
    twb_procs_free(t);
}

static void test_interning_with_stamps(void)
{
    /* A stamp is trusted only with the address it was given with: the
     * same stamp at the same address skips the comparison; a new stamp, or
     * none, at that address (a reader that reuses it for other content)
     * is compared in full. */
    twb_procs *t = twb_procs_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    tw__process scratch, other;
    tw__process_init(&scratch);
    tw__process_init(&other);
    numbered_process(&scratch, 1);
    numbered_process(&other, 2);
    const tw__process *one = twb_procs_intern_stamped(t, &scratch, 7);
    CU_ASSERT_PTR_NOT_NULL_FATAL(one);
    CU_ASSERT_PTR_EQUAL(twb_procs_intern_stamped(t, &scratch, 7), one);
    CU_ASSERT_PTR_EQUAL(twb_procs_intern(t, &scratch), one);
    /* Other content at the same address: a new stamp, or none. */
    numbered_process(&scratch, 2);
    const tw__process *two = twb_procs_intern_stamped(t, &scratch, 8);
    CU_ASSERT_PTR_NOT_NULL_FATAL(two);
    CU_ASSERT_PTR_NOT_EQUAL(two, one);
    CU_ASSERT_PTR_EQUAL(twb_procs_intern(t, &other), two);
    numbered_process(&scratch, 1);
    CU_ASSERT_PTR_EQUAL(twb_procs_intern(t, &scratch), one);
    numbered_process(&scratch, 3);
    const tw__process *three = twb_procs_intern_stamped(t, &scratch, 0);
    CU_ASSERT_PTR_NOT_EQUAL(three, one);
    CU_ASSERT_PTR_NOT_EQUAL(three, two);
    /* A stamp given with another address is not that process. */
    CU_ASSERT_PTR_EQUAL(twb_procs_intern_stamped(t, &other, 7), two);
    CU_ASSERT_EQUAL(twb_procs_count(t), 3);
    tw__process_clear(&scratch);
    tw__process_clear(&other);
    twb_procs_free(t);
}

/* ---- the Jaeger view --------------------------------------------------------------------------
 */

static void test_jaeger_view_types_error_tags(void)
{
    tw__span_data *s = span_new(1, 2, 0, "op");
    twb_tag_str(s, "error", "connection reset", 16);
    twb_tag_str(s, "http.method", "GET", 3);
    tw__jaeger_view v;
    tw__jaeger_view_init(&v);
    const tw__span_data *view = tw__jaeger_view_of(&v, s);
    CU_ASSERT_PTR_NOT_EQUAL(view, s);
    CU_ASSERT_EQUAL(view->n_tags, 3);
    CU_ASSERT_EQUAL(view->tags[0].type, TW_VALUE_BOOL);
    CU_ASSERT(view->tags[0].v.boolean);
    CU_ASSERT_STRING_EQUAL(view->tags[1].key, "error.message");
    CU_ASSERT_STRING_EQUAL(view->tags[1].v.str, "connection reset");
    CU_ASSERT_EQUAL(s->n_tags, 2); /* the record is untouched */
    CU_ASSERT_EQUAL(s->tags[0].type, TW_VALUE_STRING);

    tw__span_data *f = span_new(1, 3, 0, "op");
    twb_tag_str(f, "error", "FALSE", 5);
    view = tw__jaeger_view_of(&v, f);
    CU_ASSERT_EQUAL(view->n_tags, 1);
    CU_ASSERT(view->tags[0].type == TW_VALUE_BOOL && !view->tags[0].v.boolean);

    tw__span_data *plain = span_new(1, 4, 0, "op");
    plain->duration_us = 5;
    CU_ASSERT_PTR_EQUAL(tw__jaeger_view_of(&v, plain), plain);
    plain->duration_us = 0; /* unknown: Jaeger gets 1 µs */
    plain->is_duration_unknown = true;
    view = tw__jaeger_view_of(&v, plain);
    CU_ASSERT_PTR_NOT_EQUAL(view, plain);
    CU_ASSERT_EQUAL(view->duration_us, 1);
    CU_ASSERT_EQUAL(plain->duration_us, 0);

    tw__process empty, scratch;
    tw__process_init(&empty);
    CU_ASSERT_STRING_EQUAL(tw__jaeger_process(&empty, &scratch)->service_name,
                           TW__JAEGER_EMPTY_SERVICE);
    tw__process_clear(&empty);
    tw__jaeger_view_clear(&v);
    tw__span_data_unref(s);
    tw__span_data_unref(f);
    tw__span_data_unref(plain);
}

/* ---- writers ----------------------------------------------------------------------------------
 */

static char *write_all(const twb_writer_vtable *vt, const twb_span *spans, size_t n,
                       size_t *len_out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    twb_options opts = {0};
    twb_writer *w = vt->new_writer(f, &opts, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    if (n)
        CU_ASSERT_EQUAL(vt->write(w, spans, n, NULL), TW_OK);
    CU_ASSERT_EQUAL(vt->finish(w, NULL), TW_OK);
    vt->free_writer(w);
    fclose(f);
    if (len_out)
        *len_out = len;
    return text;
}

static void test_json_writers_frame_one_document(void)
{
    char *empty = write_all(&twb_writer_zipkin_v2_json, NULL, 0, NULL);
    CU_ASSERT_STRING_EQUAL(empty, "[]\n");
    free(empty);
    char *none = write_all(&twb_writer_otlp_json, NULL, 0, NULL);
    CU_ASSERT_STRING_EQUAL(none, "{\"resourceSpans\":[]}\n");
    free(none);

    tw__process p1, p2;
    tw__process_init(&p1);
    tw__process_init(&p2);
    tw__process_set_service(&p1, "frontend");
    tw__process_set_service(&p2, "backend");
    tw_value ip = tw_test_str("10.0.0.9"), port = tw_test_i64(8080);
    tw__process_add_tag(&p2, "ip", &ip);
    tw__process_add_tag(&p2, "port", &port);
    tw__span_data *client = span_new(0xabc, 0x10, 0, "get");
    twb_tag_str(client, "span.kind", "client", 6);
    client->start_us = 1700000000000000;
    client->duration_us = 500;
    tw__span_data *server = span_new(0xabc, 0x10, 0, "get");
    twb_tag_str(server, "span.kind", "server", 6);
    server->shared = true;
    server->start_us = 1700000000000100;
    server->is_duration_unknown = true;
    twb_span spans[2] = {{client, &p1}, {server, &p2}};

    char *zipkin = write_all(&twb_writer_zipkin_v2_json, spans, 2, NULL);
    json_error_t jerr;
    json_t *list = json_loads(zipkin, 0, &jerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(list);
    CU_ASSERT_EQUAL(json_array_size(list), 2);
    json_t *srv = json_array_get(list, 1);
    CU_ASSERT(json_is_true(json_object_get(srv, "shared")));
    CU_ASSERT_PTR_NULL(json_object_get(srv, "duration")); /* unknown: absent, not 1 */
    json_t *local = json_object_get(srv, "localEndpoint");
    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(local, "ipv4")), "10.0.0.9");
    CU_ASSERT_EQUAL(json_integer_value(json_object_get(local, "port")), 8080);
    CU_ASSERT_PTR_NULL(json_object_get(srv, "tags")); /* ip and port are not repeated */
    CU_ASSERT_PTR_NULL(json_object_get(json_array_get(list, 0), "shared"));
    json_decref(list);
    free(zipkin);

    char *otlp = write_all(&twb_writer_otlp_json, spans, 2, NULL);
    json_t *doc = json_loads(otlp, 0, &jerr);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    CU_ASSERT_EQUAL(json_array_size(json_object_get(doc, "resourceSpans")), 2);
    json_decref(doc);
    free(otlp);

    tw__span_data_unref(client);
    tw__span_data_unref(server);
    tw__process_clear(&p1);
    tw__process_clear(&p2);
}

/* The dapper writer's lines read back with the dapper reader. */
typedef struct collected {
    twb_input in;
    int spans, rejects;
    char service[32];
} collected;

static bool collect_emit(twb_input *in, tw__span_data *span, const tw__process *process)
{
    collected *c = (collected *)in;
    c->spans++;
    snprintf(c->service, sizeof c->service, "%s", process->service_name);
    tw__span_data_unref(span);
    return true;
}

static bool collect_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                           const char *reason)
{
    (void)line_no;
    (void)raw;
    (void)raw_len;
    (void)reason;
    ((collected *)in)->rejects++;
    return true;
}

static void test_dapper_writer_reads_back(void)
{
    tw__process p;
    tw__process_init(&p);
    tw__process_set_service(&p, "billing");
    tw__span_data *a = span_new(7, 8, 0, "charge");
    a->start_us = 1700000000000000;
    a->duration_us = 42;
    tw__span_data *b = span_new(7, 9, 8, "db");
    b->start_us = 1700000000000001;
    b->duration_us = 4;
    twb_span spans[2] = {{a, &p}, {b, &p}};
    size_t len;
    char *text = write_all(&twb_writer_dapper, spans, 2, &len);
    FILE *f = fmemopen(text, len, "r");
    twb_options opts = {0};
    collected c = {
        .in = {.name = "mem", .opts = &opts, .emit = collect_emit, .reject = collect_reject}};
    CU_ASSERT_EQUAL(twb_reader_dapper.read(f, &c.in, NULL), TW_OK);
    CU_ASSERT_EQUAL(c.spans, 2);
    CU_ASSERT_EQUAL(c.rejects, 0);
    CU_ASSERT_STRING_EQUAL(c.service, "billing");
    fclose(f);
    free(text);
    CU_ASSERT(twb_reader_dapper.sniff((const uint8_t *)"{\"v\":1,\"trace_id\"", 17) == 100);
    tw__span_data_unref(a);
    tw__span_data_unref(b);
    tw__process_clear(&p);
}

/* What a writer left out (opts.span_rejected). */
typedef struct {
    size_t n;
    char reason[256];
} left_out;

static void on_span_rejected(void *user_data, const tw__wire_span *span, const char *reason)
{
    (void)span;
    left_out *lo = user_data;
    lo->n++;
    snprintf(lo->reason, sizeof lo->reason, "%s", reason);
}

/* A span the Dapper log cannot hold (an end beyond int64) is left out and
 * reported, naming it; the spans after it are still written and the run
 * goes on (the write used to fail and stop the run). */
static void test_dapper_writer_leaves_out_a_span_it_cannot_hold(void)
{
    tw__process p;
    tw__process_init(&p);
    tw__process_set_service(&p, "billing");
    tw__span_data *bad = span_new(7, 8, 0, "overflow");
    bad->start_us = INT64_MAX;
    bad->duration_us = 10;
    tw__span_data *good = span_new(7, 9, 8, "db");
    good->start_us = 1700000000000001;
    good->duration_us = 4;
    twb_span spans[2] = {{bad, &p}, {good, &p}};
    left_out lo = {0};
    twb_options opts = {.span_rejected = on_span_rejected, .span_rejected_data = &lo};
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    twb_writer *w = twb_writer_dapper.new_writer(f, &opts, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    CU_ASSERT_EQUAL(twb_writer_dapper.write(w, spans, 2, NULL), TW_OK);
    CU_ASSERT_EQUAL(twb_writer_dapper.finish(w, NULL), TW_OK);
    twb_writer_dapper.free_writer(w);
    fclose(f);
    CU_ASSERT_EQUAL(lo.n, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(lo.reason, "Dapper"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"span_id\":\"0000000000000009\""));
    CU_ASSERT_PTR_NULL(strstr(text, "\"span_id\":\"0000000000000008\""));
    free(text);
    tw__span_data_unref(bad);
    tw__span_data_unref(good);
    tw__process_clear(&p);
}

static void test_dapper_reader_rejects_bad_lines_and_goes_on(void)
{
    const char *text = "{\"v\":1}\nnot json\n";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    twb_options opts = {0};
    collected c = {
        .in = {.name = "mem", .opts = &opts, .emit = collect_emit, .reject = collect_reject}};
    CU_ASSERT_EQUAL(twb_reader_dapper.read(f, &c.in, NULL), TW_OK);
    CU_ASSERT_EQUAL(c.rejects, 2);
    fclose(f);
}

/* jaeger-thrift gathers spans per process across write() calls: three
 * groups of two processes make two Batches, each with its process's spans. */
static void test_jaeger_thrift_writes_one_batch_per_process(void)
{
    tw__process a, b;
    tw__process_init(&a);
    tw__process_init(&b);
    tw__process_set_service(&a, "frontend");
    /* b's service stays empty: Jaeger's name for it is used */
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    twb_options opts = {0};
    twb_writer *w = twb_writer_jaeger_thrift.new_writer(f, &opts, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    for (uint64_t g = 1; g <= 3; g++) {
        tw__span_data *x = span_new(g, 10 * g, 0, "x"), *y = span_new(g, 10 * g + 1, 10 * g, "y");
        twb_span group[2] = {{x, &a}, {y, &b}};
        CU_ASSERT_EQUAL(twb_writer_jaeger_thrift.write(w, group, 2, NULL), TW_OK);
        tw__span_data_unref(x);
        tw__span_data_unref(y);
    }
    CU_ASSERT_EQUAL(twb_writer_jaeger_thrift.finish(w, NULL), TW_OK);
    twb_writer_jaeger_thrift.free_writer(w);
    fclose(f);
    size_t pos = 0, batches = 0, spans = 0;
    while (pos < len) {
        tw__jaeger_record info;
        tw__thrift_result rc =
            tw__jaeger_decode((const uint8_t *)text + pos, len - pos, TW__THRIFT_BINARY, false,
                              NULL, &info, NULL, NULL, NULL, 0);
        CU_ASSERT_EQUAL_FATAL(rc, TW__THRIFT_OK);
        CU_ASSERT_EQUAL(info.n_spans, 3);
        batches++;
        spans += info.n_spans;
        pos += info.size;
    }
    CU_ASSERT_EQUAL(batches, 2);
    CU_ASSERT_EQUAL(spans, 6);
    CU_ASSERT(memmem(text, len, TW__JAEGER_EMPTY_SERVICE, strlen(TW__JAEGER_EMPTY_SERVICE)) !=
              NULL);
    free(text);
    tw__process_clear(&a);
    tw__process_clear(&b);
}

/* `convert`'s readers and writers are the registry's: the same formats, in
 * the same order, and the writers' names, summaries and flags (which repeat
 * the encoders', constant initialisers cannot read them) agree. */
static void test_readers_and_writers_agree_with_the_registry(void)
{
    size_t n_readers = 0, n_writers = 0;
    for (size_t i = 0; tw__wire_formats[i]; i++) {
        const tw__wire_format *f = tw__wire_formats[i];
        if (f->decoder) {
            CU_ASSERT_PTR_EQUAL(twb_readers[n_readers], f->decoder);
            CU_ASSERT_PTR_EQUAL(twb_reader_find(f->name), f->decoder);
            if (twb_readers[n_readers])
                n_readers++;
        }
        if (f->encoder) {
            CU_ASSERT_STRING_EQUAL(f->encoder->name, f->name);
            const twb_writer_vtable *w = twb_writer_find(f->name);
            CU_ASSERT_PTR_NOT_NULL_FATAL(w);
            CU_ASSERT_STRING_EQUAL(w->name, f->encoder->name);
            CU_ASSERT_STRING_EQUAL(w->summary, f->encoder->summary);
            CU_ASSERT_EQUAL(w->target_flags, f->encoder->flags);
            n_writers++;
        }
    }
    CU_ASSERT_PTR_NULL(twb_readers[n_readers]);
    size_t n_vtables = 0;
    while (twb_writers[n_vtables])
        n_vtables++;
    CU_ASSERT_EQUAL(n_vtables, n_writers);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/convert_core", NULL, NULL);
    CU_add_test(suite, "trace_ids_pad_and_accept_any_case", test_trace_ids_pad_and_accept_any_case);
    CU_add_test(suite, "interning_with_stamps", test_interning_with_stamps);
    CU_add_test(suite, "interning_through_one_scratch_process_stays_exact",
                test_interning_through_one_scratch_process_stays_exact);
    CU_add_test(suite, "readers_and_writers_agree_with_the_registry",
                test_readers_and_writers_agree_with_the_registry);
    CU_add_test(suite, "decimal_ids_map_by_twos_complement",
                test_decimal_ids_map_by_twos_complement);
    CU_add_test(suite, "base64_strict_and_lenient", test_base64_strict_and_lenient);
    CU_add_test(suite, "time_units_by_magnitude_and_forced",
                test_time_units_by_magnitude_and_forced);
    CU_add_test(suite, "splitter_reads_every_framing", test_splitter_reads_every_framing);
    CU_add_test(suite, "splitter_reports_bad_regions_and_goes_on",
                test_splitter_reports_bad_regions_and_goes_on);
    CU_add_test(suite, "equal_processes_intern_to_one", test_equal_processes_intern_to_one);
    CU_add_test(suite, "jaeger_view_types_error_tags", test_jaeger_view_types_error_tags);
    CU_add_test(suite, "json_writers_frame_one_document", test_json_writers_frame_one_document);
    CU_add_test(suite, "dapper_writer_reads_back", test_dapper_writer_reads_back);
    CU_add_test(suite, "dapper_writer_leaves_out_a_span_it_cannot_hold",
                test_dapper_writer_leaves_out_a_span_it_cannot_hold);
    CU_add_test(suite, "jaeger_thrift_writes_one_batch_per_process",
                test_jaeger_thrift_writes_one_batch_per_process);
    CU_add_test(suite, "dapper_reader_rejects_bad_lines_and_goes_on",
                test_dapper_reader_rejects_bad_lines_and_goes_on);
}
