/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_custom.c: `--from custom` (sdk/wire/custom/custom.c):
 * the mapping parser (--map text and mapping files), JSON lines with dotted
 * paths, TSV by header name and by column number, ids in both bases, every
 * time form (units, auto by magnitude, float seconds, RFC 3339), end or
 * duration, kind, error, tags, and one rejection per bad line naming the
 * field.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "internal.h"
#include "model_equal.h"
#include "read_capture.h"

static int suite_cleanup(void)
{
    tw__span_data_pool_trim();
    return 0;
}

static bool tag_is_str(const tw__span_data *s, const char *key, const char *want)
{
    const tw__tag *t = capture_tag(s, key);
    return t && t->type == TW_VALUE_STRING && strcmp(t->v.str, want) == 0;
}

/* Reads @text with the mapping @spec (file text when @is_file). */
static tw_status read_mapped(read_capture *c, twb_custom_map *m, const char *spec, bool is_file,
                             const char *text)
{
    char why[200] = "";
    bool ok = twb_custom_map_parse(m, spec, is_file, why, sizeof why);
    CU_ASSERT(ok);
    if (!ok)
        fprintf(stderr, "mapping: %s\n", why);
    c->opts.custom = m;
    return capture_read_mem(c, &twb_reader_custom, text, strlen(text));
}

/* ---- the mapping parser --------------------------------------------------------------------- */

static void test_map_text_and_file_parse(void)
{
    twb_custom_map m = {0};
    char why[200];
    CU_ASSERT(twb_custom_map_parse(&m,
                                   "trace_id=tid, span_id=sid,parent_id=pid,name=op,service=svc,"
                                   "start=ts,end=te,duration=dur,kind=k,error=err,tags=a|b.c|d",
                                   false, why, sizeof why));
    CU_ASSERT_STRING_EQUAL(m.trace_id, "tid");
    CU_ASSERT_STRING_EQUAL(m.span_id, "sid");
    CU_ASSERT_STRING_EQUAL(m.error, "err");
    CU_ASSERT_FALSE(m.is_tsv);
    CU_ASSERT_FATAL(m.tag_fields != NULL);
    CU_ASSERT_STRING_EQUAL(m.tag_fields[1], "b.c");
    CU_ASSERT_PTR_NULL(m.tag_fields[3]);
    /* A file on top: later entries win. */
    CU_ASSERT(twb_custom_map_parse(&m,
                                   "# legacy gateway log\n"
                                   "format = tsv\n"
                                   "header=yes\n"
                                   "\n"
                                   "trace_id=Trace\n"
                                   "id_base=dec\n"
                                   "time_unit=ms\n"
                                   "duration_unit=us\n",
                                   true, why, sizeof why));
    CU_ASSERT_STRING_EQUAL(m.trace_id, "Trace");
    CU_ASSERT(m.is_tsv && m.has_header);
    CU_ASSERT_EQUAL(m.id_base, TWB_ID_DEC);
    CU_ASSERT_EQUAL(m.time_unit, TWB_TIME_MS);
    CU_ASSERT_EQUAL(m.duration_unit, TWB_TIME_US);
    /* Errors name the entry. */
    CU_ASSERT_FALSE(twb_custom_map_parse(&m, "colour=red", false, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "unknown mapping key \"colour\""));
    CU_ASSERT_FALSE(twb_custom_map_parse(&m, "a=1\ntime_unit=fortnights\n", true, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "line 1: unknown mapping key"));
    CU_ASSERT_FALSE(twb_custom_map_parse(&m, "#x\ntime_unit=fortnights\n", true, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "line 2: time_unit=fortnights"));
    CU_ASSERT_FALSE(twb_custom_map_parse(&m, "trace_id", false, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "is not field=name"));
    /* A file's line is never quoted: it may be a credential. */
    CU_ASSERT_FALSE(
        twb_custom_map_parse(&m, "#x\nAuthorization: Bearer S3CRET\n", true, why, sizeof why));
    CU_ASSERT_PTR_NOT_NULL(strstr(why, "line 2: not field=name"));
    CU_ASSERT_PTR_NULL(strstr(why, "S3CRET"));
    CU_ASSERT_FALSE(twb_custom_map_parse(&m, "format=xml", false, why, sizeof why));
    CU_ASSERT_FALSE(twb_custom_map_parse(&m, "span_id=", false, why, sizeof why));
    twb_custom_map_clear(&m);
    CU_ASSERT_PTR_NULL(m.trace_id);
    twb_custom_map_clear(NULL);
}

static void test_incomplete_mapping_is_a_config_error(void)
{
    twb_custom_map m = {0};
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_custom, "{}\n", 3), TW_E_CONFIG);
    CU_ASSERT(twb_custom_map_parse(&m, "trace_id=t,span_id=s,start=ts", false, NULL, 0));
    c.opts.custom = &m;
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_custom, "{}\n", 3), TW_E_CONFIG);
    CU_ASSERT(twb_custom_map_parse(&m, "end=te,format=tsv", false, NULL, 0));
    /* TSV names without a header line. */
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_custom, "x\n", 2), TW_E_CONFIG);
    CU_ASSERT_EQUAL(c.n_spans + c.n_rejects, 0);
    capture_free(&c);
    twb_custom_map_clear(&m);
}

/* ---- JSON lines ----------------------------------------------------------------------------- */

static void test_json_lines_with_dotted_paths_and_every_field(void)
{
    const char *text =
        "{\"tid\":\"0AF7651916CD43DD8448EB211C80319C\",\"span\":{\"id\":\"b7ad6b7169203331\"},"
        "\"pid\":\"0\",\"op\":\"GET /x\",\"svc\":\"web\",\"host\":\"h1\",\"addr\":\"10.0.0.1\","
        "\"ts\":1700000000.25,\"te\":1700000000.5,\"k\":\"SERVER\",\"err\":\"timeout\","
        "\"http.status\":503,\"ratio\":0.5,\"ok\":false,\"obj\":{\"a\":[1]},\"dropped\":1}\n"
        "\n"
        "{\"tid\":-1,\"span.id\":2,\"pid\":\"2\",\"ts\":\"2024-01-02T03:04:05.1234565+01:00\","
        "\"dur\":7,\"k\":\"internal\",\"err\":true}\n";
    twb_custom_map m = {0};
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(read_mapped(&c, &m,
                                "trace_id=tid,span_id=span.id,parent_id=pid,name=op,service=svc,"
                                "host=host,ip=addr,start=ts,end=te,duration=dur,kind=k,error=err,"
                                "tags=http.status|ratio|ok|obj|missing",
                                false, text),
                    TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    const tw__span_data *a = c.spans[0].data;
    CU_ASSERT_EQUAL(a->trace_id_high, 0x0af7651916cd43ddu);
    CU_ASSERT_EQUAL(a->trace_id_low, 0x8448eb211c80319cu);
    CU_ASSERT_EQUAL(a->span_id, 0xb7ad6b7169203331u);
    CU_ASSERT_EQUAL(a->parent_id, 0);
    CU_ASSERT_STRING_EQUAL(a->operation, "GET /x");
    CU_ASSERT_EQUAL(a->start_us, 1700000000250000);
    CU_ASSERT_EQUAL(a->duration_us, 250000); /* end wins over a missing duration */
    CU_ASSERT_EQUAL(a->flags, TW__FLAG_SAMPLED);
    CU_ASSERT(tag_is_str(a, "span.kind", "server"));
    const tw__tag *e = capture_tag(a, "error");
    CU_ASSERT(e && e->type == TW_VALUE_BOOL && e->v.boolean);
    CU_ASSERT(tag_is_str(a, "error.message", "timeout"));
    const tw__tag *st = capture_tag(a, "http.status");
    CU_ASSERT(st && st->type == TW_VALUE_INT64 && st->v.i64 == 503);
    const tw__tag *ratio = capture_tag(a, "ratio"), *ok = capture_tag(a, "ok");
    CU_ASSERT(ratio && ratio->type == TW_VALUE_DOUBLE && ratio->v.dbl == 0.5);
    CU_ASSERT(ok && ok->type == TW_VALUE_BOOL && !ok->v.boolean);
    CU_ASSERT(tag_is_str(a, "obj", "{\"a\":[1]}"));
    CU_ASSERT_PTR_NULL(capture_tag(a, "dropped"));
    CU_ASSERT_PTR_NULL(capture_tag(a, "missing"));
    const tw__process *p = c.spans[0].process;
    CU_ASSERT_STRING_EQUAL(p->service_name, "web");
    CU_ASSERT_EQUAL_FATAL(p->n_tags, 2);
    CU_ASSERT_STRING_EQUAL(p->tags[0].key, "hostname");
    CU_ASSERT_STRING_EQUAL(p->tags[1].key, "ip");
    CU_ASSERT_STRING_EQUAL(p->tags[1].v.str, "10.0.0.1");

    const tw__span_data *b = c.spans[1].data;
    CU_ASSERT_EQUAL(b->trace_id_low, UINT64_MAX); /* -1: two's complement */
    CU_ASSERT_EQUAL(b->span_id, 2);               /* "span.id" literally */
    CU_ASSERT_EQUAL(b->parent_id, 0);             /* equal to the span: root */
    /* 2024-01-02T02:04:05.1234565Z, rounded to the µs. */
    CU_ASSERT_EQUAL(b->start_us, 1704161045123457);
    CU_ASSERT_EQUAL(b->duration_us, 7); /* RFC 3339 start: duration in µs */
    CU_ASSERT_PTR_NULL(capture_tag(b, "span.kind"));
    CU_ASSERT_PTR_NULL(capture_tag(b, "error.message"));
    CU_ASSERT_PTR_NOT_NULL(capture_tag(b, "error"));
    CU_ASSERT_STRING_EQUAL(c.spans[1].process->service_name, "");
    capture_free(&c);
    twb_custom_map_clear(&m);
}

static void test_time_units_by_magnitude_and_forced(void)
{
    const char *text = "{\"t\":\"a\",\"s\":\"1\",\"ts\":1700000000,\"d\":2}\n"
                       "{\"t\":\"a\",\"s\":\"2\",\"ts\":1700000000000,\"d\":2}\n"
                       "{\"t\":\"a\",\"s\":\"3\",\"ts\":1700000000000000,\"d\":2}\n"
                       "{\"t\":\"a\",\"s\":\"4\",\"ts\":\"1700000000000000500\",\"d\":2500}\n";
    twb_custom_map m = {0};
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(read_mapped(&c, &m, "trace_id=t,span_id=s,start=ts,duration=d", false, text),
                    TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 4);
    /* The duration is in the unit the start was read in. */
    CU_ASSERT(c.spans[0].data->start_us == 1700000000000000 &&
              c.spans[0].data->duration_us == 2000000);
    CU_ASSERT(c.spans[1].data->start_us == 1700000000000000 &&
              c.spans[1].data->duration_us == 2000);
    CU_ASSERT(c.spans[2].data->start_us == 1700000000000000 && c.spans[2].data->duration_us == 2);
    CU_ASSERT(c.spans[3].data->start_us == 1700000000000001 && c.spans[3].data->duration_us == 3);
    capture_free(&c);
    /* Forced: time_unit=ms with duration_unit=s; --time-unit when the map has none. */
    capture_init(&c);
    CU_ASSERT_EQUAL(read_mapped(&c, &m, "time_unit=ms,duration_unit=s", false,
                                "{\"t\":\"a\",\"s\":\"1\",\"ts\":5,\"d\":1.5}\n"),
                    TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 5000);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 1500000);
    capture_free(&c);
    twb_custom_map_clear(&m);
}

/* ---- TSV ------------------------------------------------------------------------------------ */

static void test_tsv_by_header_name_and_by_column_number(void)
{
    const char *with_header = "trace\tspan\tparent\tstart\tend\tname\tstatus\n"
                              "123\t456\t\t1700000000000\t1700000000250\tq\t500\n"
                              "123\t457\t456\t1700000000100\t1700000000200\tr\t\n";
    twb_custom_map m = {0};
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(read_mapped(&c, &m,
                                "format=tsv,header=yes,id_base=dec,trace_id=trace,span_id=span,"
                                "parent_id=parent,start=start,end=end,name=name,tags=status",
                                false, with_header),
                    TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 2);
    CU_ASSERT_EQUAL(c.spans[0].data->trace_id_low, 123);
    CU_ASSERT_EQUAL(c.spans[0].data->span_id, 456);
    CU_ASSERT_EQUAL(c.spans[0].data->parent_id, 0);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 250000);
    CU_ASSERT(tag_is_str(c.spans[0].data, "status", "500"));
    CU_ASSERT_EQUAL(c.spans[1].data->parent_id, 456);
    CU_ASSERT_PTR_NULL(capture_tag(c.spans[1].data, "status")); /* empty cell: absent */
    capture_free(&c);
    twb_custom_map_clear(&m);

    const char *by_number = "ab\tcd\t1700000000\t3\tclient\r\n";
    capture_init(&c);
    CU_ASSERT_EQUAL(read_mapped(&c, &m, "format=tsv,trace_id=1,span_id=2,start=3,duration=4,kind=5",
                                false, by_number),
                    TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    CU_ASSERT_EQUAL(c.spans[0].data->trace_id_low, 0xab);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 3000000);
    CU_ASSERT(tag_is_str(c.spans[0].data, "span.kind", "client")); /* CR stripped */
    capture_free(&c);
    twb_custom_map_clear(&m);
}

/* ---- rejections ------------------------------------------------------------------------------ */

/* A NUL byte inside a record: that record alone is rejected (naming the
 * column), the next one is read. Lines used to be C strings: the NUL cut
 * the line, the next line was glued to it and a span vanished with
 * "rejected 0". */
static void test_a_nul_byte_rejects_its_line_alone(void)
{
    static const char tsv[] = "ab\tc\0d\t1700000000\t3\n"
                              "ac\tcd\t1700000001\t4\n";
    static const char jsonl[] = "{\"t\":\"ab\",\"s\":\"c\0d\",\"st\":1700000000,\"d\":3}\n"
                                "{\"t\":\"ac\",\"s\":\"cd\",\"st\":1700000001,\"d\":4}\n";
    const struct {
        const char *spec, *text;
        size_t len;
    } cases[] = {{"format=tsv,trace_id=1,span_id=2,start=3,duration=4", tsv, sizeof tsv - 1},
                 {"trace_id=t,span_id=s,start=st,duration=d", jsonl, sizeof jsonl - 1}};
    for (size_t i = 0; i < 2; i++) {
        twb_custom_map m = {0};
        char why[200] = "";
        CU_ASSERT_FATAL(twb_custom_map_parse(&m, cases[i].spec, false, why, sizeof why));
        read_capture c;
        capture_init(&c);
        c.opts.custom = &m;
        CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_custom, cases[i].text, cases[i].len),
                        TW_OK);
        CU_ASSERT_EQUAL(c.n_spans, 1);
        CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
        CU_ASSERT_EQUAL(c.rejects[0].line_no, 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "NUL"));
        CU_ASSERT(c.rejects[0].raw_len > 8); /* the whole line, verbatim */
        if (c.n_spans == 1)
            CU_ASSERT_EQUAL(c.spans[0].data->span_id, 0xcd);
        capture_free(&c);
        twb_custom_map_clear(&m);
    }
}

static void test_each_bad_line_is_rejected_naming_the_field(void)
{
    const char *text =
        "{\"t\":\"1\",\"s\":\"1\",\"ts\":10}\n"                     /* 1 ok, warns */
        "{\"t\":\"1\",\"ts\":10,\"te\":11}\n"                       /* 2 no span id */
        "{\"t\":\"xyz\",\"s\":\"1\",\"ts\":10}\n"                   /* 3 bad hex */
        "{\"t\":\"1\",\"s\":\"1\"}\n"                               /* 4 no start */
        "{\"t\":\"1\",\"s\":\"1\",\"ts\":\"soon\"}\n"               /* 5 bad time */
        "{\"t\":\"1\",\"s\":\"1\",\"ts\":10,\"te\":9}\n"            /* 6 end < start */
        "not json at all\n"                                         /* 7 */
        "[1,2]\n"                                                   /* 8 not an object */
        "{\"t\":\"0\",\"s\":\"1\",\"ts\":10}\n"                     /* 9 zero trace */
        "{\"t\":\"1\",\"s\":\"1\",\"ts\":10,\"k\":\"sideways\"}\n"; /* 10 warns twice */
    twb_custom_map m = {0};
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(read_mapped(&c, &m, "trace_id=t,span_id=s,start=ts,end=te,kind=k", false, text),
                    TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 2);
    CU_ASSERT_EQUAL(c.n_warnings, 3); /* lines 1 and 10 have no end; line 10's kind */
    CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "k: \"sideways\" is not a span kind"));
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 8);
    static const size_t lines[8] = {2, 3, 4, 5, 6, 7, 8, 9};
    static const char *const reasons[8] = {"s: missing (span_id)",
                                           "t: \"xyz\" is not hexadecimal",
                                           "ts: missing (start)",
                                           "ts: \"soon\" is not a number",
                                           "te: the end is before the start",
                                           "invalid JSON",
                                           "not a JSON object",
                                           "t: the trace id is all zeros"};
    for (size_t i = 0; i < 8; i++) {
        CU_ASSERT_EQUAL(c.rejects[i].line_no, lines[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[i].reason, reasons[i]));
    }
    CU_ASSERT_EQUAL(c.rejects[5].raw_len, strlen("not json at all"));
    CU_ASSERT(memcmp(c.rejects[5].raw, "not json at all", 15) == 0);
    capture_free(&c);
    twb_custom_map_clear(&m);
}

static void test_custom_is_never_sniffed(void)
{
    CU_ASSERT_PTR_NULL(twb_reader_custom.sniff);
    CU_ASSERT_STRING_EQUAL(twb_reader_custom.name, "custom");
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/readers/custom", NULL, suite_cleanup);
    CU_add_test(suite, "map_text_and_file_parse", test_map_text_and_file_parse);
    CU_add_test(suite, "incomplete_mapping_is_a_config_error",
                test_incomplete_mapping_is_a_config_error);
    CU_add_test(suite, "json_lines_with_dotted_paths_and_every_field",
                test_json_lines_with_dotted_paths_and_every_field);
    CU_add_test(suite, "time_units_by_magnitude_and_forced",
                test_time_units_by_magnitude_and_forced);
    CU_add_test(suite, "tsv_by_header_name_and_by_column_number",
                test_tsv_by_header_name_and_by_column_number);
    CU_add_test(suite, "each_bad_line_is_rejected_naming_the_field",
                test_each_bad_line_is_rejected_naming_the_field);
    CU_add_test(suite, "custom_is_never_sniffed", test_custom_is_never_sniffed);
    CU_add_test(suite, "a_nul_byte_rejects_its_line_alone", test_a_nul_byte_rejects_its_line_alone);
}
