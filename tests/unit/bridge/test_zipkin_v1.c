/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/bridge/test_zipkin_v1.c: suite "bridge/zipkin_v1": the Zipkin
 * v1 readers (sdk/wire/zipkin/zipkin_v1_json_decode.c, zipkin_v1_thrift_read.c), the
 * Thrift decoder (sdk/wire/zipkin/zipkin_v1_thrift.c) and the V1 -> model
 * conversion (sdk/wire/zipkin/zipkin_v1.c).
 *
 * The conversion rules are checked one by one on small inline JSON spans;
 * the Thrift forms (raw list<Span>, concatenated lists, Scribe lines with
 * categories and MIME wrapping) on bytes written here with a minimal
 * TBinaryProtocol writer; every real fixture of the formats (INDEX.md rows
 * 1, 3-17) reads with the span counts and facts INDEX.md names; malformed
 * input is rejected with its line or offset and never crashes.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "read_capture.h"
#include "zipkin_v1_span_equal.h"
#include "wire/zipkin/zipkin_v1.h"
#include "wire/core/json_common.h"
#include "wire/zipkin/zipkin_v1_thrift.h"

/* ---- helpers -------------------------------------------------------------------------------- */

static void read_json(read_capture *c, const char *text)
{
    capture_init(c);
    CU_ASSERT_EQUAL(capture_read_mem(c, &twb_reader_zipkin_v1_json, text, strlen(text)), TW_OK);
}

static void read_thrift(read_capture *c, const void *data, size_t len)
{
    capture_init(c);
    CU_ASSERT_EQUAL(capture_read_mem(c, &twb_reader_zipkin_v1_thrift, data, len), TW_OK);
}

static const char *kind_of(const tw__span_data *s)
{
    const tw__tag *t = capture_tag(s, "span.kind");
    return t && t->type == TW_VALUE_STRING ? t->v.str : "";
}

/* The first span of kind @kind ("" for none), or NULL. */
static const twb_span *by_kind(const read_capture *c, const char *kind)
{
    for (size_t i = 0; i < c->n_spans; i++) {
        if (strcmp(kind_of(c->spans[i].data), kind) == 0)
            return &c->spans[i];
    }
    return NULL;
}

static bool tag_is(const tw__span_data *s, const char *key, const char *want)
{
    const tw__tag *t = capture_tag(s, key);
    return t && t->type == TW_VALUE_STRING && strcmp(t->v.str, want) == 0;
}

static bool tag_is_i64(const tw__tag *t, int64_t want)
{
    return t && t->type == TW_VALUE_INT64 && t->v.i64 == want;
}

static const tw__tag *proc_tag(const tw__process *p, const char *key)
{
    return tw__process_find_tag(p, key);
}

static bool has_log(const tw__span_data *s, const char *event, int64_t ts)
{
    for (size_t i = 0; i < s->n_logs; i++) {
        const tw__log *l = &s->logs[i];
        if (l->timestamp_us == ts && l->n_fields == 1 && strcmp(l->fields[0].key, "event") == 0 &&
            strcmp(l->fields[0].v.str, event) == 0)
            return true;
    }
    return false;
}

static bool reason_has(const read_capture *c, size_t i, const char *needle)
{
    return i < c->n_rejects && strstr(c->rejects[i].reason, needle) != NULL;
}

#define EP(svc) "{\"serviceName\":\"" svc "\",\"ipv4\":\"10.0.0.1\"}"
#define EP2(svc) "{\"serviceName\":\"" svc "\",\"ipv4\":\"10.0.0.2\",\"port\":8080}"
#define ANN(ts, v, ep) "{\"timestamp\":" #ts ",\"value\":\"" v "\",\"endpoint\":" ep "}"
#define HEAD "\"traceId\":\"a\",\"id\":\"b\",\"parentId\":\"c\",\"name\":\"get\""

/* ---- rules 1 and 4: split per host, shared server half ------------------------------------ */

static void test_rpc_splits_into_client_and_shared_server(void)
{
    read_capture c;
    read_json(
        &c,
        "{" HEAD
        ",\"timestamp\":100,\"duration\":50,\"annotations\":[" ANN(100, "cs", EP("front")) "," ANN(
            110, "sr",
            EP2("back")) "," ANN(115, "cache miss",
                                 EP2("back")) "," ANN(130, "ss",
                                                      EP2("back")) "," ANN(150, "cr",
                                                                           EP("front")) "," ANN(120,
                                                                                                "no"
                                                                                                " h"
                                                                                                "os"
                                                                                                "t",
                                                                                                "nu"
                                                                                                "l"
                                                                                                "l") "]}");
    CU_ASSERT_EQUAL(c.n_spans, 2);
    const twb_span *client = by_kind(&c, "client"), *server = by_kind(&c, "server");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_STRING_EQUAL(client->process->service_name, "front");
    CU_ASSERT_STRING_EQUAL(server->process->service_name, "back");
    CU_ASSERT_FALSE(client->data->shared);
    CU_ASSERT_TRUE(server->data->shared);
    CU_ASSERT_EQUAL(client->data->start_us, 100);
    CU_ASSERT_EQUAL(client->data->duration_us, 50);
    CU_ASSERT_EQUAL(server->data->start_us, 110);
    CU_ASSERT_EQUAL(server->data->duration_us, 20);
    CU_ASSERT_TRUE(has_log(server->data, "cache miss", 115));
    CU_ASSERT_TRUE(has_log(client->data, "no host", 120)); /* no endpoint: the first span */
    CU_ASSERT_EQUAL(client->data->n_logs, 1);              /* core annotations are not logs */
    for (size_t i = 0; i < 2; i++) {
        const tw__span_data *s = c.spans[i].data;
        CU_ASSERT_EQUAL(s->trace_id_low, 0xa);
        CU_ASSERT_EQUAL(s->span_id, 0xb);
        CU_ASSERT_EQUAL(s->parent_id, 0xc);
        CU_ASSERT_STRING_EQUAL(s->operation, "get");
        CU_ASSERT_EQUAL(s->flags, TW__FLAG_SAMPLED);
    }
    CU_ASSERT_TRUE(tag_is_i64(proc_tag(server->process, "port"), 8080));
    CU_ASSERT_PTR_NULL(proc_tag(client->process, "port"));
    CU_ASSERT_TRUE(capture_processes_equal(client->process, client->process));
    capture_free(&c);
}

static void test_loopback_still_yields_two_spans(void)
{
    read_capture c;
    read_json(&c,
              "{" HEAD ",\"annotations\":[" ANN(100, "cs", EP("self")) "," ANN(
                  110, "sr", EP("self")) "," ANN(130, "ss", EP("self")) "," ANN(150, "cr",
                                                                                EP("self")) "]}");
    CU_ASSERT_EQUAL(c.n_spans, 2);
    const twb_span *client = by_kind(&c, "client"), *server = by_kind(&c, "server");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_EQUAL(client->data->start_us, 100);
    CU_ASSERT_EQUAL(client->data->duration_us, 50); /* cr - cs */
    CU_ASSERT_TRUE(server->data->shared);
    CU_ASSERT_EQUAL(server->data->duration_us, 20);
    CU_ASSERT_PTR_EQUAL(client->process, server->process); /* same host, interned once */
    capture_free(&c);
}

static void test_one_way_call_has_no_duration(void)
{
    read_capture c;
    read_json(&c, "{" HEAD
                  ",\"annotations\":[" ANN(100, "cs", EP("a")) "," ANN(110, "sr", EP("b")) "]}");
    CU_ASSERT_EQUAL(c.n_spans, 2);
    const twb_span *client = by_kind(&c, "client"), *server = by_kind(&c, "server");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_EQUAL(client->data->start_us, 100);
    CU_ASSERT_TRUE(client->data->is_duration_unknown);
    CU_ASSERT_EQUAL(client->data->duration_us, 0);
    CU_ASSERT_EQUAL(server->data->start_us, 110);
    CU_ASSERT_TRUE(server->data->is_duration_unknown);
    CU_ASSERT_TRUE(server->data->shared);
    capture_free(&c);
}

static void test_each_host_gets_its_own_span(void)
{
    read_capture c;
    read_json(
        &c,
        "{" HEAD ",\"annotations\":[" ANN(1, "e1", EP("h1")) "," ANN(2, "e2", EP("h2")) "," ANN(
            3, "e3",
            EP("h3")) "," ANN(4, "e4",
                              EP("h4")) "," ANN(5, "e5",
                                                EP("h5")) "," ANN(6, "e6",
                                                                  EP("h6")) "," ANN(7, "again",
                                                                                    EP("H1")) "]}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 6);
    for (size_t i = 0; i < 6; i++) {
        char want[3] = {'h', (char)('1' + i), 0}, event[3] = {'e', (char)('1' + i), 0};
        CU_ASSERT_STRING_EQUAL(c.spans[i].process->service_name, want);
        CU_ASSERT_TRUE(has_log(c.spans[i].data, event, (int64_t)i + 1));
        CU_ASSERT_EQUAL(c.spans[i].data->start_us, (int64_t)i + 1);
    }
    CU_ASSERT_TRUE(has_log(c.spans[0].data, "again", 7)); /* service names: any case */
    capture_free(&c);
}

/* ---- rule 2: core annotations need two characters and a host ------------------------------ */

static void test_core_annotation_needs_endpoint(void)
{
    read_capture c;
    read_json(&c, "{" HEAD ",\"annotations\":[{\"timestamp\":100,\"value\":\"cs\"}," ANN(
                      120, "csf", EP("a")) "]}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT_STRING_EQUAL(kind_of(s), "");
    CU_ASSERT_TRUE(has_log(s, "cs", 100));
    CU_ASSERT_TRUE(has_log(s, "csf", 120));
    CU_ASSERT_EQUAL(s->start_us, 100); /* no timestamp: the earliest log's */
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "a");
    capture_free(&c);
}

/* ---- rule 3: only end events ------------------------------------------------------------------
 */

static void test_missing_start_synthesized_from_span_timing(void)
{
    read_capture c;
    read_json(&c, "{" HEAD ",\"timestamp\":100,\"duration\":50,\"annotations\":[" ANN(
                      150, "cr", EP("a")) "," ANN(140, "ss", EP("b")) "]}");
    /* cs synthesized at 100 (cr == ts + duration); sr is not (ss != 150) */
    const twb_span *client = by_kind(&c, "client");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT_EQUAL(client->data->start_us, 100);
    CU_ASSERT_EQUAL(client->data->duration_us, 50);
    CU_ASSERT_FALSE(client->data->shared);
    capture_free(&c);

    read_json(&c, "{" HEAD ",\"timestamp\":100,\"duration\":50,\"annotations\":[" ANN(
                      150, "ss", EP("b")) "]}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    const twb_span *server = by_kind(&c, "server");
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_EQUAL(server->data->start_us, 100);
    CU_ASSERT_EQUAL(server->data->duration_us, 50);
    CU_ASSERT_FALSE(server->data->shared); /* timestamp and duration set: not shared */
    capture_free(&c);
}

/* ---- rule 5: one side only, or incomplete --------------------------------------------------- */

static void test_single_side_and_incomplete_rpc(void)
{
    read_capture c;
    read_json(&c, "{" HEAD
                  ",\"annotations\":[" ANN(100, "cs", EP("a")) "," ANN(170, "cr", EP("a")) "]}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_STRING_EQUAL(kind_of(c.spans[0].data), "client");
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 100);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 70);
    capture_free(&c);

    /* Only cr: the start is unknown, cr stays as a log. */
    read_json(&c, "{" HEAD ",\"annotations\":[" ANN(170, "cr", EP("a")) "]}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_STRING_EQUAL(kind_of(c.spans[0].data), "client");
    CU_ASSERT_TRUE(has_log(c.spans[0].data, "cr", 170));
    CU_ASSERT_TRUE(c.spans[0].data->is_duration_unknown);
    capture_free(&c);

    /* Times whose difference overflows: no duration, a warning. */
    read_json(&c, "{" HEAD ",\"annotations\":[" ANN(-9000000000000000000, "cs", EP("a")) "," ANN(
                      9000000000000000000, "cr", EP("a")) "]}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    CU_ASSERT_TRUE(c.spans[0].data->is_duration_unknown);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "out of range"));
    capture_free(&c);

    /* Only sr, with the span's own timing: the first span keeps it. */
    read_json(&c, "{" HEAD ",\"timestamp\":90,\"duration\":30,\"annotations\":[" ANN(100, "sr",
                                                                                     EP("b")) "]}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_STRING_EQUAL(kind_of(c.spans[0].data), "server");
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 90);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 30);
    capture_free(&c);
}

/* ---- rule 6: server-only is shared when the span had no timing ------------------------------ */

static void test_server_only_shared_inference(void)
{
    read_capture c;
    read_json(&c, "{" HEAD
                  ",\"annotations\":[" ANN(100, "sr", EP("b")) "," ANN(130, "ss", EP("b")) "]}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_TRUE(c.spans[0].data->shared);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 100);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 30);
    capture_free(&c);

    read_json(&c, "{" HEAD ",\"timestamp\":100,\"duration\":30,\"annotations\":[" ANN(
                      100, "sr", EP("b")) "," ANN(130, "ss", EP("b")) "]}");
    CU_ASSERT_FALSE(c.spans[0].data->shared);
    capture_free(&c);

    read_json(&c, "{" HEAD ",\"timestamp\":100,\"annotations\":[" ANN(100, "sr", EP("b")) "," ANN(
                      130, "ss", EP("b")) "]}");
    CU_ASSERT_TRUE(c.spans[0].data->shared); /* ss but no span duration */
    capture_free(&c);
}

/* ---- rule 7: messaging ------------------------------------------------------------------------
 */

static void test_messaging_rules(void)
{
    read_capture c;
    read_json(&c, "{" HEAD
                  ",\"annotations\":[" ANN(100, "ms", EP("p")) "," ANN(104, "ws", EP("p")) "]}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_STRING_EQUAL(kind_of(c.spans[0].data), "producer");
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 100);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 4);
    CU_ASSERT_EQUAL(c.spans[0].data->n_logs, 0);
    capture_free(&c);

    read_json(&c, "{" HEAD
                  ",\"annotations\":[" ANN(200, "wr", EP("q")) "," ANN(209, "mr", EP("q")) "]}");
    CU_ASSERT_STRING_EQUAL(kind_of(c.spans[0].data), "consumer");
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 200);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 9);
    capture_free(&c);

    read_json(&c,
              "{" HEAD ",\"annotations\":[" ANN(100, "ms", EP("p")) "," ANN(
                  200, "mr",
                  EP2("q")) "],"
                            "\"binaryAnnotations\":[{\"key\":\"ma\",\"value\":true,\"endpoint\":"
                            "{\"serviceName\":\"kafka\"}}]}");
    CU_ASSERT_EQUAL(c.n_spans, 2);
    const twb_span *producer = by_kind(&c, "producer"), *consumer = by_kind(&c, "consumer");
    CU_ASSERT_PTR_NOT_NULL_FATAL(producer);
    CU_ASSERT_PTR_NOT_NULL_FATAL(consumer);
    CU_ASSERT_FALSE(producer->data->shared);
    CU_ASSERT_TRUE(consumer->data->shared);
    CU_ASSERT_EQUAL(consumer->data->start_us, 200);
    CU_ASSERT_TRUE(tag_is(producer->data, "peer.service", "kafka"));
    CU_ASSERT_TRUE(tag_is(consumer->data, "peer.service", "kafka"));
    capture_free(&c);

    /* ws/wr without messaging: plain logs. */
    read_json(&c, "{" HEAD ",\"annotations\":[" ANN(100, "cs", EP("a")) "," ANN(
                      101, "ws", EP("a")) "," ANN(150, "cr", EP("a")) "]}");
    CU_ASSERT_TRUE(has_log(c.spans[0].data, "ws", 101));
    capture_free(&c);
}

/* ---- rule 8: binary annotations ---------------------------------------------------------------
 */

static void test_addresses_component_and_tags(void)
{
    read_capture c;
    read_json(
        &c,
        "{" HEAD
        ",\"annotations\":[" ANN(100, "cs", EP("front")) "," ANN(110, "sr", EP2("back")) "," ANN(
            130, "ss",
            EP2("back")) "," ANN(150, "cr",
                                 EP("front")) "],"
                                              "\"binaryAnnotations\":["
                                              "{\"key\":\"sa\",\"value\":true,\"endpoint\":{"
                                              "\"serviceName\":\"back\","
                                              "\"ipv4\":\"192.168.1.1\",\"port\":9411}},"
                                              "{\"key\":\"ca\",\"value\":\"1\",\"endpoint\":{"
                                              "\"serviceName\":\"back\","
                                              "\"ipv6\":\"2001:DB8::1\",\"port\":40000}},"
                                              "{\"key\":\"lc\",\"value\":\"\",\"endpoint\":" EP(
                                                  "front") "},"
                                                           "{\"key\":\"http.path\",\"value\":\"/"
                                                           "x\",\"endpoint\":" EP2(
                                                               "back") "},"
                                                                       "{\"key\":\"error\","
                                                                       "\"value\":\"boom\"}]}");
    CU_ASSERT_EQUAL(c.n_spans, 2);
    const twb_span *client = by_kind(&c, "client"), *server = by_kind(&c, "server");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_TRUE(tag_is(client->data, "peer.service", "back"));
    CU_ASSERT_TRUE(tag_is(client->data, "peer.ipv4", "192.168.1.1"));
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(client->data, "peer.port"), 9411));
    /* ca of the server's own service: the name is dropped (Finagle) */
    CU_ASSERT_PTR_NULL(capture_tag(server->data, "peer.service"));
    CU_ASSERT_TRUE(tag_is(server->data, "peer.ipv6", "2001:db8::1"));
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(server->data, "peer.port"), 40000));
    CU_ASSERT_PTR_NULL(capture_tag(client->data, "lc")); /* empty lc: no tag */
    CU_ASSERT_TRUE(tag_is(server->data, "http.path", "/x"));
    CU_ASSERT_TRUE(tag_is(client->data, "error", "boom")); /* no host: the first span */
    CU_ASSERT_PTR_NULL(capture_tag(client->data, "sa"));
    capture_free(&c);

    /* No core annotations: ca alone makes a SERVER, sa alone a remote without kind,
     * ca+sa a span local to ca with remote sa; lc becomes component. */
    read_json(&c, "{" HEAD ",\"binaryAnnotations\":[{\"key\":\"ca\",\"value\":true,"
                  "\"endpoint\":" EP("caller") "}]}");
    CU_ASSERT_STRING_EQUAL(kind_of(c.spans[0].data), "server");
    CU_ASSERT_TRUE(tag_is(c.spans[0].data, "peer.service", "caller"));
    capture_free(&c);
    read_json(&c, "{" HEAD ",\"binaryAnnotations\":[{\"key\":\"sa\",\"value\":true,"
                  "\"endpoint\":" EP("db") "},{\"key\":\"lc\",\"value\":\"jdbc\","
                                           "\"endpoint\":" EP2("app") "}]}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_STRING_EQUAL(kind_of(c.spans[0].data), "");
    CU_ASSERT_TRUE(tag_is(c.spans[0].data, "peer.service", "db"));
    CU_ASSERT_TRUE(tag_is(c.spans[0].data, "lc", "jdbc"));
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "app");
    capture_free(&c);
    read_json(&c, "{" HEAD ",\"binaryAnnotations\":[{\"key\":\"ca\",\"value\":true,"
                  "\"endpoint\":" EP("me") "},{\"key\":\"sa\",\"value\":true,"
                                           "\"endpoint\":" EP2("you") "}]}");
    CU_ASSERT_EQUAL(c.n_spans, 1);
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "me");
    CU_ASSERT_TRUE(tag_is(c.spans[0].data, "peer.service", "you"));
    capture_free(&c);
}

static void test_typed_binary_annotations(void)
{
    read_capture c;
    /* API shape: true, numbers with the old "type", BYTES base64. */
    read_json(&c, "{" HEAD ",\"binaryAnnotations\":["
                  "{\"key\":\"b\",\"value\":true},"
                  "{\"key\":\"n\",\"value\":-7,\"type\":\"I64\"},"
                  "{\"key\":\"s\",\"value\":\"12\",\"type\":\"I32\"},"
                  "{\"key\":\"d\",\"value\":1.5},"
                  "{\"key\":\"x\",\"value\":\"AAE=\",\"type\":\"BYTES\"}]}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    const tw__span_data *s = c.spans[0].data;
    const tw__tag *t = capture_tag(s, "b");
    CU_ASSERT_TRUE(t && t->type == TW_VALUE_BOOL && t->v.boolean);
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(s, "n"), -7));
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(s, "s"), 12));
    t = capture_tag(s, "d");
    CU_ASSERT_TRUE(t && t->type == TW_VALUE_DOUBLE && t->v.dbl == 1.5);
    t = capture_tag(s, "x");
    CU_ASSERT_TRUE(t && t->type == TW_VALUE_BINARY && t->len == 2 && t->v.bin[1] == 1);
    CU_ASSERT_EQUAL(c.n_warnings, 0);
    capture_free(&c);

    /* Thrift-as-JSON shape: base64 big-endian, signed; a wrong length stays binary + warning. */
    read_json(&c, "{\"trace_id\":1,\"id\":2,\"name\":\"x\",\"binary_annotations\":["
                  "{\"key\":\"i16\",\"value\":\"//4=\",\"annotation_type\":\"I16\"},"
                  "{\"key\":\"i32\",\"value\":\"gAAAAA==\",\"annotation_type\":3},"
                  "{\"key\":\"dbl\",\"value\":\"QAkh+1RELRg=\",\"annotation_type\":\"DOUBLE\"},"
                  "{\"key\":\"bad\",\"value\":\"AQ==\",\"annotation_type\":\"I64\"},"
                  "{\"key\":\"f\",\"value\":\"AA==\",\"annotation_type\":\"BOOL\"}]}");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    s = c.spans[0].data;
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(s, "i16"), -2));
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(s, "i32"), INT32_MIN));
    t = capture_tag(s, "dbl");
    CU_ASSERT_TRUE(t && t->type == TW_VALUE_DOUBLE && fabs(t->v.dbl - 3.141592653589793) < 1e-15);
    t = capture_tag(s, "bad");
    CU_ASSERT_TRUE(t && t->type == TW_VALUE_BINARY && t->len == 1);
    CU_ASSERT_EQUAL(c.n_warnings, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "'bad'"));
    t = capture_tag(s, "f");
    CU_ASSERT_TRUE(t && t->type == TW_VALUE_BOOL && !t->v.boolean);
    capture_free(&c);
}

/* ---- ids, flags, endpoints --------------------------------------------------------------------
 */

static void test_ids_flags_and_endpoints(void)
{
    read_capture c;
    read_json(&c,
              "{\"traceId\":\"0000000000000001000000000000000A\",\"id\":\"B\","
              "\"parentId\":\"b\",\"name\":\"n\",\"debug\":true,\"annotations\":["
              "{\"timestamp\":5,\"value\":\"e\",\"endpoint\":{\"serviceName\":\"s\","
              "\"ipv4\":\"1.2.3.4\",\"ipv6\":\"::1\",\"port\":80}}]}\n"
              "{\"trace_id\":-1,\"id\":-3944181038374441761,\"parent_id\":0,"
              "\"trace_id_high\":5,\"name\":\"n\",\"annotations\":[{\"timestamp\":5,"
              "\"value\":\"e\",\"host\":{\"service_name\":\"g\",\"ipv4\":-1062731519,"
              "\"port\":-1}}]}\n"
              "{\"traceId\":\"1\",\"id\":\"2\",\"name\":\"n\",\"annotations\":[{\"timestamp\":5,"
              "\"value\":\"e\",\"endpoint\":{\"serviceName\":\"m\","
              "\"ipv6\":\"::ffff:10.1.2.3\"}}]}\n");
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 3);
    const twb_span *a = &c.spans[0], *b = &c.spans[1], *m = &c.spans[2];
    CU_ASSERT_EQUAL(a->data->trace_id_high, 1);
    CU_ASSERT_EQUAL(a->data->trace_id_low, 0xa);
    CU_ASSERT_EQUAL(a->data->parent_id, 0); /* parent == id: root */
    CU_ASSERT_EQUAL(a->data->flags, TW__FLAG_SAMPLED | TW__FLAG_DEBUG);
    CU_ASSERT_TRUE(tag_is(a->data, "no-such", "x") == false);
    const tw__tag *ip = proc_tag(a->process, "ip"), *ip6 = proc_tag(a->process, "ipv6");
    CU_ASSERT_TRUE(ip && strcmp(ip->v.str, "1.2.3.4") == 0);
    CU_ASSERT_TRUE(ip6 && strcmp(ip6->v.str, "::1") == 0);
    CU_ASSERT_TRUE(tag_is_i64(proc_tag(a->process, "port"), 80));
    /* Go thrift-as-JSON: two's complement ids, signed ipv4 and port. */
    CU_ASSERT_EQUAL(b->data->trace_id_low, UINT64_MAX);
    CU_ASSERT_EQUAL(b->data->trace_id_high, 5);
    CU_ASSERT_EQUAL(b->data->span_id, 0xc943743e25dc2cdfULL);
    CU_ASSERT_EQUAL(b->data->parent_id, 0);
    ip = proc_tag(b->process, "ip");
    CU_ASSERT_TRUE(ip && strcmp(ip->v.str, "192.168.1.1") == 0);
    CU_ASSERT_TRUE(tag_is_i64(proc_tag(b->process, "port"), 65535));
    ip = proc_tag(m->process, "ip");
    CU_ASSERT_TRUE(ip && strcmp(ip->v.str, "10.1.2.3") == 0); /* mapped IPv6 is IPv4 */
    CU_ASSERT_PTR_NULL(proc_tag(m->process, "ipv6"));
    capture_free(&c);
}

static void test_forced_time_unit_scales_every_time(void)
{
    static const char text[] = "{" HEAD ",\"timestamp\":100,\"duration\":5,\"annotations\":[" ANN(
        100, "cs", EP("a")) "," ANN(102, "note", EP("a")) "," ANN(105, "cr", EP("a")) "]}";
    read_capture c;
    capture_init(&c);
    c.opts.time_unit = TWB_TIME_MS;
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_zipkin_v1_json, text, strlen(text)), TW_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    CU_ASSERT_EQUAL(c.spans[0].data->start_us, 100000);
    CU_ASSERT_EQUAL(c.spans[0].data->duration_us, 5000);
    CU_ASSERT_TRUE(has_log(c.spans[0].data, "note", 102000));
    capture_free(&c);
}

static void test_bad_records_rejected_naming_the_field(void)
{
    read_capture c;
    read_json(&c, "{\"traceId\":\"1\",\"id\":\"2\",\"parentId\":\"BADID\",\"name\":\"n\"}\n"
                  "{\"traceId\":\"0\",\"id\":\"2\",\"name\":\"n\"}\n"
                  "{\"traceId\":\"1\",\"name\":\"n\"}\n"
                  "{\"traceId\":\"1\",\"id\":[],\"name\":\"n\"}\n"
                  "{\"traceId\":\"1\",\"id\":\"2\",\"name\":\"ok\"}\n"
                  "[1, {\"traceId\":\"1\",\"id\":\"2\",\"name\":\"ok\"}]\n"
                  "{\"traceId\":\"1\",\"id\":\"2\",\"name\":\"n\",\"annotations\":");
    CU_ASSERT_EQUAL(c.n_spans, 2);
    CU_ASSERT_TRUE(c.n_rejects >= 6);
    CU_ASSERT_TRUE(reason_has(&c, 0, "parentId"));
    CU_ASSERT_TRUE(reason_has(&c, 0, "BADID"));
    CU_ASSERT_EQUAL(c.rejects[0].line_no, 1);
    CU_ASSERT_TRUE(reason_has(&c, 1, "traceId"));
    CU_ASSERT_TRUE(reason_has(&c, 2, "id: missing"));
    CU_ASSERT_TRUE(reason_has(&c, 3, "id"));
    CU_ASSERT_EQUAL(c.rejects[1].line_no, 2);
    capture_free(&c);
}

/* ---- Thrift: a minimal TBinaryProtocol writer ----------------------------------------------- */

typedef struct tbuf {
    uint8_t data[8192];
    size_t len;
} tbuf;

static void put(tbuf *b, const void *p, size_t n)
{
    CU_ASSERT_FATAL(b->len + n <= sizeof b->data);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}
static void put_be(tbuf *b, uint64_t v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint8_t x = (uint8_t)(v >> (8 * (n - 1 - i)));
        put(b, &x, 1);
    }
}
static void field(tbuf *b, uint8_t type, int16_t id)
{
    put(b, &type, 1);
    put_be(b, (uint16_t)id, 2);
}
static void str(tbuf *b, const char *s)
{
    put_be(b, strlen(s), 4);
    put(b, s, strlen(s));
}
static void stop(tbuf *b)
{
    put_be(b, 0, 1);
}
static void endpoint(tbuf *b, int16_t id, const char *service, uint32_t ipv4, uint16_t port)
{
    field(b, 12, id);
    field(b, 8, 1);
    put_be(b, ipv4, 4);
    field(b, 6, 2);
    put_be(b, port, 2);
    field(b, 11, 3);
    str(b, service);
    stop(b);
}
static void annotation(tbuf *b, int64_t ts, const char *value, const char *service)
{
    field(b, 10, 1);
    put_be(b, (uint64_t)ts, 8);
    field(b, 11, 2);
    str(b, value);
    if (service)
        endpoint(b, 3, service, 0x0a000001, 8080);
    stop(b);
}

/* A client span (cs/cr on "web"), a typed binary annotation, an unknown field. */
static void thrift_span(tbuf *b, int64_t trace, int64_t id, const char *name)
{
    field(b, 10, 1);
    put_be(b, (uint64_t)trace, 8);
    field(b, 11, 3);
    str(b, name);
    field(b, 10, 4);
    put_be(b, (uint64_t)id, 8);
    field(b, 15, 6);
    put_be(b, 12, 1);
    put_be(b, 3, 4);
    annotation(b, 1000, "cs", "web");
    annotation(b, 0, "dropped", "web"); /* timestamp 0: dropped, with a warning */
    annotation(b, 1500, "cr", "web");
    field(b, 15, 8);
    put_be(b, 12, 1);
    put_be(b, 1, 4);
    field(b, 11, 1);
    str(b, "count");
    field(b, 11, 2);
    put_be(b, 4, 4);
    put_be(b, (uint64_t)-5, 4);
    field(b, 8, 3);
    put_be(b, 3, 4); /* I32 */
    stop(b);
    field(b, 13, 99); /* unknown map<string,i32> field: skipped */
    put_be(b, 11, 1);
    put_be(b, 8, 1);
    put_be(b, 1, 4);
    str(b, "k");
    put_be(b, 1, 4);
    field(b, 2, 9);
    put_be(b, 1, 1);
    stop(b);
}

static void list_header(tbuf *b, uint32_t n)
{
    put_be(b, 12, 1);
    put_be(b, n, 4);
}

static void test_thrift_raw_lists_stream_every_span(void)
{
    tbuf b = {.len = 0};
    list_header(&b, 2);
    thrift_span(&b, 7, 8, "one");
    thrift_span(&b, -1, 9, "two");
    list_header(&b, 1); /* a second list right after the first */
    thrift_span(&b, 7, 10, "three");
    read_capture c;
    read_thrift(&c, b.data, b.len);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 3);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT_STRING_EQUAL(s->operation, "one");
    CU_ASSERT_STRING_EQUAL(kind_of(s), "client");
    CU_ASSERT_EQUAL(s->start_us, 1000);
    CU_ASSERT_EQUAL(s->duration_us, 500);
    CU_ASSERT_EQUAL(s->flags, TW__FLAG_SAMPLED | TW__FLAG_DEBUG);
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(s, "count"), -5));
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "web");
    const tw__tag *ip = proc_tag(c.spans[0].process, "ip");
    CU_ASSERT_TRUE(ip && strcmp(ip->v.str, "10.0.0.1") == 0);
    CU_ASSERT_EQUAL(c.spans[1].data->trace_id_low, UINT64_MAX);
    CU_ASSERT_EQUAL(c.spans[2].data->span_id, 10);
    CU_ASSERT_EQUAL(c.n_warnings, 3); /* one dropped annotation per span */
    capture_free(&c);

    /* Truncated at every length: never a crash; spans before the cut are kept. */
    size_t one = 0;
    {
        tbuf first = {.len = 0};
        thrift_span(&first, 7, 8, "one");
        one = first.len;
    }
    for (size_t cut = 1; cut < b.len; cut++) {
        read_thrift(&c, b.data, cut);
        CU_ASSERT_EQUAL(c.n_spans + c.n_rejects >= 1, true);
        if (cut > 5 + one && cut < 5 + 2 * one)
            CU_ASSERT_EQUAL(c.n_spans, 1);
        capture_free(&c);
    }
}

/* Binary annotation keys point into the input (no copy): as text a key ends
 * at its first NUL, as it did when the decoder made NUL-terminated copies. */
static void ba_raw(tbuf *b, const char *key, size_t key_len, const void *value, size_t value_len,
                   int32_t type)
{
    field(b, 11, 1);
    put_be(b, key_len, 4);
    put(b, key, key_len);
    field(b, 11, 2);
    put_be(b, value_len, 4);
    put(b, value, value_len);
    field(b, 8, 3);
    put_be(b, (uint32_t)type, 4);
    endpoint(b, 4, "web", 0x0a000001, 8080);
    stop(b);
}

static void test_thrift_keys_end_at_a_nul(void)
{
    tbuf b = {.len = 0};
    list_header(&b, 1);
    field(&b, 10, 1);
    put_be(&b, 7, 8);
    field(&b, 11, 3);
    str(&b, "op");
    field(&b, 10, 4);
    put_be(&b, 8, 8);
    field(&b, 10, 10);
    put_be(&b, 1000, 8);
    field(&b, 15, 8);
    put_be(&b, 12, 1);
    put_be(&b, 5, 4);
    ba_raw(&b, "http.path", 9, "/x", 2, 6);     /* an ordinary key */
    ba_raw(&b, "ab\0cd", 5, "v", 1, 6);         /* key "ab" */
    ba_raw(&b, "lc\0z", 4, "", 0, 6);           /* "lc" with no value: left out */
    ba_raw(&b, "n\0x", 3, "\0\0\0\x05", 4, 3);  /* "n": i32 5 */
    ba_raw(&b, "bad\0tail", 8, "\0\x01", 2, 3); /* "bad": 2 bytes for an i32: a warning */
    stop(&b);
    read_capture c;
    read_thrift(&c, b.data, b.len);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT_TRUE(tag_is(s, "http.path", "/x"));
    const tw__tag *ab = capture_tag(s, "ab");
    CU_ASSERT_TRUE(ab && ab->key_len == 2 && ab->type == TW_VALUE_STRING && ab->len == 1);
    CU_ASSERT_PTR_NULL(capture_tag(s, "lc"));
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(s, "n"), 5));
    const tw__tag *bad = capture_tag(s, "bad");
    CU_ASSERT_TRUE(bad && bad->key_len == 3 && bad->type == TW_VALUE_BINARY);
    CU_ASSERT_EQUAL(s->n_tags, 4);
    CU_ASSERT_EQUAL(c.n_warnings, 1);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "binary annotation 'bad': I32 value has 2"));
    capture_free(&c);
}

/* Where a key's text ends is found word by word for keys up to 64 bytes
 * (memchr past that): at every length to 72, a NUL at every position cuts
 * the key there, and a key without one is whole. */
static void test_thrift_key_nul_at_every_length_and_position(void)
{
    for (size_t n = 1; n <= 72; n++) {
        /* The NUL positions 1..n-1, and n for none; past 40 bytes every
         * third one and the last few (one span must fit in a tbuf). */
        size_t at[72], n_at = 0;
        for (size_t p = 1; p <= n; p++)
            if (n <= 40 || p % 3 == 0 || p + 9 > n || p < 9)
                at[n_at++] = p;
        tbuf b = {.len = 0};
        list_header(&b, 1);
        field(&b, 10, 1);
        put_be(&b, 7, 8);
        field(&b, 11, 3);
        str(&b, "op");
        field(&b, 10, 4);
        put_be(&b, 8, 8);
        field(&b, 10, 10);
        put_be(&b, 1000, 8);
        field(&b, 15, 8);
        put_be(&b, 12, 1);
        put_be(&b, (uint32_t)n_at, 4);
        char key[72];
        for (size_t j = 0; j < n_at; j++) {
            for (size_t i = 0; i < n; i++)
                key[i] = (char)(i == 0 ? 'k' : 'a' + (int)((i + n) % 26));
            if (at[j] < n)
                key[at[j]] = '\0';
            ba_raw(&b, key, n, "v", 1, 6);
        }
        stop(&b);
        read_capture c;
        read_thrift(&c, b.data, b.len);
        CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
        const tw__span_data *s = c.spans[0].data;
        size_t j = 0;
        for (size_t i = 0; i < s->n_tags; i++) {
            const tw__tag *t = &s->tags[i];
            if (t->key[0] != 'k')
                continue;
            CU_ASSERT_FATAL(j < n_at);
            CU_ASSERT_EQUAL(t->key_len, at[j]);
            CU_ASSERT_EQUAL(strlen(t->key), at[j]);
            j++;
        }
        CU_ASSERT_EQUAL(j, n_at);
        capture_free(&c);
    }
}

/* ---- the memos against the general path ----------------------------------------------------
 *
 * The binary decoder reuses the decoding of an Endpoint whose bytes repeat a
 * recent one's, and the raw reader reuses the process of a recent local
 * endpoint. Neither happens in the compact protocol or through
 * tw__zipkin_v1_emit, so the same spans written in both protocols must give
 * the same spans, processes, warnings and rejects both ways. */

typedef struct pbuf {
    tbuf b;
    bool compact;
    int16_t last[8]; /* compact: the last field id per open struct */
    int depth;
} pbuf;

static void c_varint(tbuf *b, uint64_t v)
{
    for (; v >= 0x80; v >>= 7)
        put_be(b, (v & 0x7f) | 0x80, 1);
    put_be(b, v, 1);
}

static uint64_t zz(int64_t v)
{
    return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

/* A field header: binary type @type, compact type @ctype. */
static void p_field(pbuf *p, uint8_t type, uint8_t ctype, int16_t id)
{
    if (!p->compact) {
        field(&p->b, type, id);
        return;
    }
    int16_t delta = (int16_t)(id - p->last[p->depth]);
    if (delta > 0 && delta <= 15) {
        put_be(&p->b, (uint64_t)(delta << 4 | ctype), 1);
    } else {
        put_be(&p->b, ctype, 1);
        c_varint(&p->b, zz(id));
    }
    p->last[p->depth] = id;
}

static void p_int(pbuf *p, int64_t v, size_t bytes)
{
    if (p->compact)
        c_varint(&p->b, zz(v));
    else
        put_be(&p->b, (uint64_t)v, bytes);
}

static void p_bytes(pbuf *p, const void *data, size_t len)
{
    if (p->compact)
        c_varint(&p->b, len);
    else
        put_be(&p->b, len, 4);
    put(&p->b, data, len);
}

static void p_list(pbuf *p, int16_t id, size_t n)
{
    p_field(p, 15, 9, id);
    if (!p->compact) {
        put_be(&p->b, 12, 1);
        put_be(&p->b, n, 4);
    } else if (n < 15) {
        put_be(&p->b, n << 4 | 12, 1);
    } else {
        put_be(&p->b, 0xfc, 1);
        c_varint(&p->b, n);
    }
}

static void p_begin(pbuf *p)
{
    p->last[++p->depth] = 0;
}

static void p_end(pbuf *p)
{
    stop(&p->b);
    p->depth--;
}

/* Endpoint @k of a pool whose members differ in one field each (service
 * case, length, ipv4, port, ipv6, a bad ipv6, an unknown field, none). */
static void p_endpoint(pbuf *p, int16_t id, unsigned k)
{
    static const char *const services[] = {"web", "Web", "web2", "db", "", "web"};
    static const uint8_t v6[16] = {0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7};
    p_field(p, 12, 12, id);
    p_begin(p);
    if (k % 7 != 6) {
        p_field(p, 8, 5, 1);
        p_int(p, k % 5 == 4 ? 0x0a000002 : 0x0a000001, 4);
    }
    p_field(p, 6, 4, 2);
    p_int(p, k % 4 == 3 ? 9090 : 8080, 2);
    const char *svc = services[k % 6];
    p_field(p, 11, 8, 3);
    p_bytes(p, svc, strlen(svc));
    if (k % 9 == 8) {
        p_field(p, 11, 8, 4);
        p_bytes(p, v6, k % 2 ? 16 : 5); /* 5 bytes: a bad ipv6, counted per copy */
    }
    if (k % 11 == 10) {
        p_field(p, 10, 6, 9); /* unknown: skipped */
        p_int(p, 42, 8);
    }
    p_end(p);
}

static uint64_t memo_rnd(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/* Span @n: core and other annotations and binary annotations on hosts
 * drawn from a pool of @pool endpoints (some without a host). */
static void p_span(pbuf *p, unsigned n, uint64_t *rs, unsigned pool)
{
    static const char *const values[] = {"cs", "sr", "ss", "cr", "ms", "mr", "retry", "wr"};
    static const char *const keys[] = {"ca", "sa", "lc", "http.path", "error", "ma"};
    p->depth = 0;
    p_begin(p);
    p_field(p, 10, 6, 1);
    p_int(p, 1000 + n / 3, 8);
    p_field(p, 11, 8, 3);
    p_bytes(p, "op", 2);
    p_field(p, 10, 6, 4);
    p_int(p, n % 13 == 12 ? 0 : 5000 + n, 8); /* span id 0: rejected */
    size_t na = (size_t)(memo_rnd(rs) % 7);
    p_list(p, 6, na);
    for (size_t i = 0; i < na; i++) {
        p_begin(p);
        p_field(p, 10, 6, 1);
        p_int(p, 100 + (int64_t)(memo_rnd(rs) % 50), 8);
        const char *v = values[memo_rnd(rs) % 8];
        p_field(p, 11, 8, 2);
        p_bytes(p, v, strlen(v));
        if (memo_rnd(rs) % 8)
            p_endpoint(p, 3, (unsigned)(memo_rnd(rs) % pool));
        p_end(p);
    }
    size_t nb = (size_t)(memo_rnd(rs) % 5);
    p_list(p, 8, nb);
    for (size_t i = 0; i < nb; i++) {
        p_begin(p);
        const char *k = keys[memo_rnd(rs) % 6];
        p_field(p, 11, 8, 1);
        p_bytes(p, k, strlen(k));
        p_field(p, 11, 8, 2);
        p_bytes(p, "v", 1);
        if (memo_rnd(rs) % 8)
            p_endpoint(p, 4, (unsigned)(memo_rnd(rs) % pool));
        p_end(p);
    }
    p_end(p);
}

/* Decodes and emits every span of @p (one after another, no list header);
 * @warnings gets the last warning of each span that had one. */
static void memo_read(read_capture *c, const pbuf *p, bool general, char *warnings,
                      size_t warnings_size)
{
    warnings[0] = '\0';
    capture_init(c);
    tw__zipkin_v1_procs *procs = general ? NULL : tw__zipkin_v1_procs_new();
    CU_ASSERT_FATAL(general || procs);
    tw__zipkin_v1_span span;
    tw__zipkin_v1_span_init(&span);
    char why[256];
    for (size_t pos = 0; pos < p->b.len;) {
        size_t size = 0;
        tw__thrift_result r = general
                                  ? tw__zipkin_compact_decode_span(p->b.data + pos, p->b.len - pos,
                                                                   &span, &size, why, sizeof why)
                                  : tw__zipkin_thrift_decode_span(p->b.data + pos, p->b.len - pos,
                                                                  &span, &size, why, sizeof why);
        CU_ASSERT_EQUAL_FATAL(r, TW__THRIFT_OK);
        size_t warned = c->n_warnings;
        tw__zipkin_v1_emit_with(&c->in, 0, &span, p->b.data + pos, size, procs);
        if (c->n_warnings != warned) {
            size_t at = strlen(warnings);
            snprintf(warnings + at, warnings_size - at, "%s\n", c->last_warning);
        }
        tw__zipkin_v1_span_clear(&span);
        pos += size;
    }
    tw__zipkin_v1_span_clear(&span);
    tw__zipkin_v1_procs_free(procs);
}

static void test_endpoint_and_process_memos_match_general_path(void)
{
    static const unsigned pools[] = {1, 3, 12, 40}; /* 12 and 40 evict from both memos */
    for (size_t t = 0; t < 4 * 8; t++) {
        uint64_t rs_bin = 0x2545f4914f6cdd1du + t, rs_compact = rs_bin;
        pbuf bin = {.compact = false}, compact = {.compact = true};
        for (unsigned n = 0; n < 12; n++) { /* what fits in a tbuf */
            p_span(&bin, n, &rs_bin, pools[t % 4]);
            p_span(&compact, n, &rs_compact, pools[t % 4]);
        }
        read_capture fast, general;
        static char fast_warnings[16384], general_warnings[16384];
        memo_read(&fast, &bin, false, fast_warnings, sizeof fast_warnings);
        memo_read(&general, &compact, true, general_warnings, sizeof general_warnings);
        CU_ASSERT_STRING_EQUAL(fast_warnings, general_warnings);
        CU_ASSERT_EQUAL(fast.n_spans, general.n_spans);
        CU_ASSERT_EQUAL(fast.n_rejects, general.n_rejects);
        CU_ASSERT_EQUAL(fast.n_warnings, general.n_warnings);
        CU_ASSERT(fast.n_spans >= 11);
        for (size_t i = 0; i < fast.n_spans && i < general.n_spans; i++) {
            CU_ASSERT(tw_test_spans_equal(fast.spans[i].data, general.spans[i].data));
            CU_ASSERT(capture_processes_equal(fast.spans[i].process, general.spans[i].process));
        }
        capture_free(&fast);
        capture_free(&general);
    }
}

/* The binary decoder's fast path against the protocol-neutral reader on
 * the same bytes: @data decoded both ways must give the same result, size,
 * reason and span. */
static void fast_and_slow_agree(const uint8_t *bytes, size_t len)
{
    /* A copy of exactly @len bytes: a read past the end is the sanitizers'. */
    uint8_t *data = malloc(len ? len : 1);
    CU_ASSERT_FATAL(data != NULL);
    memcpy(data, bytes, len);
    static tw__zipkin_v1_span fast, slow;
    tw__zipkin_v1_span_init(&fast);
    tw__zipkin_v1_span_init(&slow);
    size_t fast_size = 0, slow_size = 0;
    char fast_why[256], slow_why[256];
    tw__thrift_result f =
        tw__zipkin_thrift_decode_span(data, len, &fast, &fast_size, fast_why, sizeof fast_why);
    tw__thrift_result s =
        tw__zipkin_thrift_decode_span_slow(data, len, &slow, &slow_size, slow_why, sizeof slow_why);
    CU_ASSERT_EQUAL(f, s);
    CU_ASSERT_STRING_EQUAL(fast_why, slow_why);
    if (f == TW__THRIFT_OK && s == TW__THRIFT_OK) {
        CU_ASSERT_EQUAL(fast_size, slow_size);
        CU_ASSERT(tw_test_v1_spans_equal(&fast, &slow));
    }
    /* Again into the same span: its Endpoints now come from the ones the
     * fast path kept from the first decode; the answer is the same. */
    size_t again_size = 0;
    char again_why[256];
    tw__thrift_result a =
        tw__zipkin_thrift_decode_span(data, len, &fast, &again_size, again_why, sizeof again_why);
    CU_ASSERT_EQUAL(a, s);
    CU_ASSERT_STRING_EQUAL(again_why, slow_why);
    if (a == TW__THRIFT_OK && s == TW__THRIFT_OK) {
        CU_ASSERT_EQUAL(again_size, slow_size);
        CU_ASSERT(tw_test_v1_spans_equal(&fast, &slow));
    }
    tw__zipkin_v1_span_clear(&fast);
    tw__zipkin_v1_span_clear(&slow);
    free(data);
}

static void test_thrift_fast_path_matches_general_reader(void)
{
    /* Spans from the memo test's generator (unknown endpoint fields and bad
     * ipv6 included), each whole, cut short at every length, and with one
     * byte changed at every position to a few values (types, ids, lengths). */
    static const uint8_t twists[] = {0x00, 0x01, 0x02, 0x08, 0x0b, 0x0c,
                                     0x0d, 0x0e, 0x0f, 0x80, 0xff};
    static uint8_t copy[sizeof(((tbuf *)0)->data)];
    unsigned checked = 0;
    for (size_t t = 0; t < 16; t++) {
        uint64_t rs = 0x9e3779b97f4a7c15u + t;
        pbuf p = {.compact = false};
        p_span(&p, (unsigned)t, &rs, t % 2 ? 3 : 40);
        if (t % 4 != 3) { /* a debug field (0, 1, 2) first, then the rest */
            static tbuf rest;
            rest = p.b;
            p.b.len = 0;
            field(&p.b, 2, 9);
            put_be(&p.b, t % 4, 1);
            put(&p.b, rest.data, rest.len);
        }
        CU_ASSERT_FATAL(p.b.len <= sizeof copy);
        fast_and_slow_agree(p.b.data, p.b.len);
        for (size_t cut = 0; cut < p.b.len; cut++)
            fast_and_slow_agree(p.b.data, cut);
        for (size_t at = 0; at < p.b.len; at++) {
            for (size_t k = 0; k < sizeof twists; k++) {
                memcpy(copy, p.b.data, p.b.len);
                if (copy[at] == twists[k])
                    continue;
                copy[at] = twists[k];
                fast_and_slow_agree(copy, p.b.len);
                checked++;
            }
        }
    }
    CU_ASSERT(checked > 1000);
}

static void test_thrift_malformed_and_hostile_input(void)
{
    read_capture c;
    /* A list whose count exceeds the spans present (a cut file): the spans
     * that are there are converted, the cut one is rejected. The count is not
     * checked against the bytes buffered first: that made the reader buffer
     * the whole list before its first span. */
    {
        tbuf many = {.len = 0};
        put_be(&many, 12, 1);
        put_be(&many, INT32_MAX, 4);
        thrift_span(&many, 7, 8, "one");
        thrift_span(&many, 7, 9, "two");
        read_thrift(&c, many.data, many.len - 3);
        CU_ASSERT_EQUAL(c.n_spans, 1);
        CU_ASSERT_EQUAL(c.n_rejects, 1);
        CU_ASSERT_TRUE(reason_has(&c, 0, "span 2 of 2147483647"));
        CU_ASSERT_TRUE(reason_has(&c, 0, "truncated"));
        capture_free(&c);
        /* A negative count is malformed. */
        static const uint8_t negative_count[] = {12, 0xff, 0xff, 0xff, 0xff, 0};
        read_thrift(&c, negative_count, sizeof negative_count);
        CU_ASSERT_EQUAL(c.n_rejects, 1);
        CU_ASSERT_TRUE(reason_has(&c, 0, "negative length"));
        capture_free(&c);
    }
    /* A string claiming 2 GiB - 1 bytes: truncated, not an allocation. */
    static const uint8_t huge[] = {12, 0, 0, 0, 1, 11, 0, 3, 0x7f, 0xff, 0xff, 0xff, 'x'};
    read_thrift(&c, huge, sizeof huge);
    CU_ASSERT_EQUAL(c.n_spans, 0);
    CU_ASSERT_EQUAL(c.n_rejects, 1);
    CU_ASSERT_TRUE(reason_has(&c, 0, "truncated"));
    CU_ASSERT_TRUE(reason_has(&c, 0, "byte 5"));
    capture_free(&c);
    /* A negative length and an unknown type: malformed. */
    static const uint8_t negative[] = {12, 0, 0, 0, 1, 11, 0, 3, 0xff, 0xff, 0xff, 0xfe};
    read_thrift(&c, negative, sizeof negative);
    CU_ASSERT_TRUE(reason_has(&c, 0, "negative length"));
    capture_free(&c);
    static const uint8_t bad_type[] = {12, 0, 0, 0, 1, 77, 0, 3, 0};
    read_thrift(&c, bad_type, sizeof bad_type);
    CU_ASSERT_TRUE(reason_has(&c, 0, "unknown field type 77"));
    capture_free(&c);
    /* Structs nested past the depth limit. */
    uint8_t deep[5 + 3 * 200 + 1] = {12, 0, 0, 0, 1};
    for (size_t i = 0; i < 200; i++) {
        deep[5 + 3 * i] = 12;
        deep[5 + 3 * i + 2] = 50;
    }
    read_thrift(&c, deep, sizeof deep);
    CU_ASSERT_TRUE(reason_has(&c, 0, "nested"));
    capture_free(&c);
    /* Not a list of structs. */
    static const uint8_t not_list[] = {12, 0x80, 0, 0, 1, 0};
    read_thrift(&c, not_list, sizeof not_list);
    CU_ASSERT_EQUAL(c.n_rejects, 1);
    CU_ASSERT_TRUE(reason_has(&c, 0, "list 1"));
    capture_free(&c);
    /* A span larger than the reader's 16 MiB bound: rejected, not buffered whole. */
    size_t big_len = 17u << 20;
    uint8_t *big = calloc(1, big_len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    static const uint8_t big_head[] = {12, 0, 0, 0, 1, 11, 0, 3, 0x01, 0x40, 0, 0};
    memcpy(big, big_head, sizeof big_head);
    read_thrift(&c, big, big_len);
    CU_ASSERT_EQUAL(c.n_rejects, 1);
    CU_ASSERT_TRUE(reason_has(&c, 0, "larger than 16777216 bytes"));
    capture_free(&c);
    free(big);
    /* An empty span (no ids): rejected by the conversion. */
    static const uint8_t empty[] = {12, 0, 0, 0, 1, 0};
    read_thrift(&c, empty, sizeof empty);
    CU_ASSERT_TRUE(reason_has(&c, 0, "trace id is zero"));
    capture_free(&c);
}

/* ---- Scribe lines -----------------------------------------------------------------------------
 */

static char *base64_of(const uint8_t *data, size_t len)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc(len / 3 * 4 + 8);
    size_t n = 0;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)data[i + 1] << 8;
        if (i + 2 < len)
            v |= data[i + 2];
        out[n++] = digits[v >> 18];
        out[n++] = digits[(v >> 12) & 63];
        out[n++] = i + 1 < len ? digits[(v >> 6) & 63] : '=';
        out[n++] = i + 2 < len ? digits[v & 63] : '=';
    }
    out[n] = '\0';
    return out;
}

static void test_scribe_lines_categories_and_mime_wrapping(void)
{
    tbuf b = {.len = 0};
    thrift_span(&b, 7, 8, "scribed");
    char *b64 = base64_of(b.data, b.len);
    size_t b64_len = strlen(b64);
    CU_ASSERT_FATAL(b64_len > 2 * 76);
    /* Bare, with the category, another category, MIME-wrapped with CRLF. */
    size_t cap = 8 * b64_len + 256;
    char *text = malloc(cap);
    size_t n = (size_t)snprintf(text, cap, "%s\nzipkin\t%s\r\nother\t%s\n\n", b64, b64, b64);
    for (size_t at = 0; at < b64_len; at += 76) {
        size_t piece = b64_len - at < 76 ? b64_len - at : 76;
        memcpy(text + n, b64 + at, piece);
        n += piece;
        memcpy(text + n, "\r\n", 2);
        n += 2;
    }
    n += (size_t)snprintf(text + n, cap - n, "zipkin\t%s\n", b64);
    read_capture c;
    read_thrift(&c, text, n);
    CU_ASSERT_EQUAL(c.n_spans, 4);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "1 Scribe entry"));
    for (size_t i = 0; i < c.n_spans; i++)
        CU_ASSERT_STRING_EQUAL(c.spans[i].data->operation, "scribed");
    capture_free(&c);

    /* --scribe-category: keep only "spans". */
    n = (size_t)snprintf(text, cap, "spans\t%s\nzipkin\t%s\n", b64, b64);
    capture_init(&c);
    c.opts.scribe_category = "spans";
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_zipkin_v1_thrift, text, n), TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 1);
    capture_free(&c);

    /* Bad base64, a truncated span, bytes after the span, a wrapped span cut short. */
    char *cut = strndup(b64, 40);
    char *with_tail = malloc(b64_len + 8);
    tbuf tail = b;
    put(&tail, "\0\0\0", 3);
    free(with_tail);
    with_tail = base64_of(tail.data, tail.len);
    char *wrapped_head = strndup(b64, 76);
    n = (size_t)snprintf(text, cap, "zipkin\tnot*base64\n%s\n%s\n%s\n%s\n", cut, with_tail,
                         wrapped_head, b64);
    read_thrift(&c, text, n);
    CU_ASSERT_EQUAL(c.n_spans, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 4);
    CU_ASSERT_TRUE(reason_has(&c, 0, "not base64"));
    CU_ASSERT_EQUAL(c.rejects[0].line_no, 1);
    CU_ASSERT_EQUAL(c.rejects[0].raw_len, strlen("zipkin\tnot*base64"));
    CU_ASSERT_TRUE(reason_has(&c, 1, "truncated"));
    CU_ASSERT_EQUAL(c.rejects[1].line_no, 2);
    CU_ASSERT_TRUE(reason_has(&c, 2, "3 bytes after"));
    /* The 76-char head waits for a continuation: the next line (a whole
     * span) is joined to it, and the two are not one span: one reject
     * holding both lines. */
    CU_ASSERT_EQUAL(c.rejects[3].line_no, 4);
    CU_ASSERT_EQUAL(c.rejects[3].raw_len, 76 + 1 + b64_len);
    free(cut);
    free(with_tail);
    free(wrapped_head);
    capture_free(&c);

    /* A line holding a base64 list<Span>: every span is emitted. */
    tbuf list = {.len = 0};
    list_header(&list, 2);
    thrift_span(&list, 7, 8, "a");
    thrift_span(&list, 7, 9, "b");
    char *list64 = base64_of(list.data, list.len);
    n = (size_t)snprintf(text, cap, "%s", list64);
    read_thrift(&c, text, n);
    CU_ASSERT_EQUAL(c.n_spans, 2);
    capture_free(&c);
    free(list64);
    free(text);
    free(b64);
}

/* ---- real fixtures ----------------------------------------------------------------------------
 */

typedef struct fixture {
    const char *path;
    const twb_reader *reader;
    size_t spans;   /* model spans */
    size_t rejects; /* records rejected */
} fixture;

static const fixture fixtures[] = {
    {"/honeycombio__honeycomb-opentracing-proxy/app__testdata__payload_0.thrift",
     &twb_reader_zipkin_v1_thrift, 8, 0},
    {"/openzipkin__zipkin/benchmarks__src__main__resources__span-rpc.json",
     &twb_reader_zipkin_v1_json, 2, 0},
    {"/openzipkin__zipkin/benchmarks__src__main__resources__span-rpc-ipv6.json",
     &twb_reader_zipkin_v1_json, 2, 0},
    {"/openzipkin__zipkin/benchmarks__src__main__resources__span-local.json",
     &twb_reader_zipkin_v1_json, 1, 0},
    {"/openzipkin__zipkin/benchmarks__src__main__resources__span-client.json",
     &twb_reader_zipkin_v1_json, 1, 0},
    {"/open-telemetry__opentelemetry-collector/"
     "translator__trace__zipkinv1__testdata__zipkin_v1_single_batch.json",
     &twb_reader_zipkin_v1_json, 5, 0},
    {"/open-telemetry__opentelemetry-collector/"
     "translator__trace__zipkinv1__testdata__zipkin_v1_multiple_batches.json",
     &twb_reader_zipkin_v1_json, 5, 0},
    {"/open-telemetry__opentelemetry-collector/"
     "translator__trace__zipkinv1__testdata__zipkin_v1_error_batch.json",
     &twb_reader_zipkin_v1_json, 1, 1},
    {"/open-telemetry__opentelemetry-collector/"
     "translator__trace__zipkinv1__testdata__zipkin_v1_local_component.json",
     &twb_reader_zipkin_v1_json, 2, 0},
    {"/open-telemetry__opentelemetry-collector/"
     "translator__trace__zipkinv2__testdata__zipkin_v2_notimestamp.json",
     &twb_reader_zipkin_v1_json, 1, 0},
    {"/jaegertracing__jaeger/model__converter__thrift__zipkin__fixtures__zipkin_01.json",
     &twb_reader_zipkin_v1_json, 3, 0},
    {"/jaegertracing__jaeger/model__converter__thrift__zipkin__fixtures__zipkin_02.json",
     &twb_reader_zipkin_v1_json, 1, 0},
    {"/jaegertracing__jaeger/model__converter__thrift__zipkin__fixtures__zipkin_03.json",
     &twb_reader_zipkin_v1_json, 1, 0},
    {"/jaegertracing__jaeger/"
     "cmd__collector__app__handler__testdata__zipkin_thrift_v1_merged_spans.json",
     &twb_reader_zipkin_v1_json, 3, 0},
    {"/open-telemetry__opentelemetry-collector/"
     "translator__trace__zipkinv1__testdata__zipkin_v1_thrift_single_batch.json",
     &twb_reader_zipkin_v1_json, 5, 0},
    {"/open-telemetry__opentelemetry-collector/"
     "translator__trace__zipkinv1__testdata__zipkin_v1_thrift_local_component.json",
     &twb_reader_zipkin_v1_json, 2, 0},
};

static void read_fixture(read_capture *c, const char *name, const twb_reader *reader)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", TW_REAL_FIXTURES, name);
    capture_init(c);
    CU_ASSERT_EQUAL(capture_read_file(c, reader, path), TW_OK);
}

static void test_every_real_fixture_reads_with_index_counts(void)
{
    for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++) {
        read_capture c;
        read_fixture(&c, fixtures[i].path, fixtures[i].reader);
        if (c.n_spans != fixtures[i].spans || c.n_rejects != fixtures[i].rejects)
            fprintf(stderr, "%s: %zu spans, %zu rejects\n", fixtures[i].path, c.n_spans,
                    c.n_rejects);
        CU_ASSERT_EQUAL(c.n_spans, fixtures[i].spans);
        CU_ASSERT_EQUAL(c.n_rejects, fixtures[i].rejects);
        /* The detector picks the right reader for each file. */
        char path[1024];
        snprintf(path, sizeof path, "%s%s", TW_REAL_FIXTURES, fixtures[i].path);
        FILE *f = fopen(path, "rb");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        uint8_t head[4096];
        size_t n = fread(head, 1, sizeof head, f);
        fclose(f);
        int own = fixtures[i].reader->sniff(head, n);
        const twb_reader *other = fixtures[i].reader == &twb_reader_zipkin_v1_json
                                      ? &twb_reader_zipkin_v1_thrift
                                      : &twb_reader_zipkin_v1_json;
        CU_ASSERT_TRUE(own >= 85);
        CU_ASSERT_EQUAL(other->sniff(head, n), 0);
        capture_free(&c);
    }
}

static void test_fixture_facts(void)
{
    read_capture c;
    /* payload_0.thrift: a 15-hex-digit trace id, BOOL sampler.param, lc with a host. */
    read_fixture(&c, fixtures[0].path, fixtures[0].reader);
    size_t n_short_trace = 0;
    for (size_t i = 0; i < c.n_spans; i++) {
        const tw__span_data *s = c.spans[i].data;
        if (s->trace_id_low == 0x01950d9457034248ULL)
            n_short_trace++;
        CU_ASSERT_STRING_EQUAL(c.spans[i].process->service_name, "poodle");
        const tw__tag *ip = proc_tag(c.spans[i].process, "ip");
        CU_ASSERT_TRUE(ip && strcmp(ip->v.str, "10.129.211.111") == 0);
        if (s->span_id == s->trace_id_low) {
            CU_ASSERT_EQUAL(s->parent_id, 0);
            const tw__tag *p = capture_tag(s, "sampler.param");
            CU_ASSERT_TRUE(p && p->type == TW_VALUE_BOOL && p->v.boolean);
        } else {
            CU_ASSERT_EQUAL(s->parent_id, s->trace_id_low);
        }
    }
    CU_ASSERT_EQUAL(n_short_trace, 4);
    capture_free(&c);

    /* span-rpc.json: one record, a CLIENT and a shared SERVER with their own timing. */
    read_fixture(&c, fixtures[1].path, fixtures[1].reader);
    const twb_span *client = by_kind(&c, "client"), *server = by_kind(&c, "server");
    CU_ASSERT_PTR_NOT_NULL_FATAL(client);
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_EQUAL(client->data->span_id, server->data->span_id);
    CU_ASSERT_TRUE(server->data->shared);
    CU_ASSERT_EQUAL(client->data->duration_us, 51000);
    CU_ASSERT_EQUAL(server->data->start_us, 1461750491298000);
    CU_ASSERT_EQUAL(server->data->duration_us, 4000);
    CU_ASSERT_STRING_EQUAL(server->process->service_name, "zipkin-query");
    CU_ASSERT_TRUE(tag_is(server->data, "peer.ipv4", "172.18.0.3"));
    capture_free(&c);

    /* span-client.json: 128-bit trace id. */
    read_fixture(&c, fixtures[4].path, fixtures[4].reader);
    CU_ASSERT_NOT_EQUAL(c.spans[0].data->trace_id_high, 0);
    capture_free(&c);

    /* merged_spans: negative decimal ids by two's complement; one record with cs+sr. */
    read_fixture(&c, fixtures[13].path, fixtures[13].reader);
    size_t n_c943 = 0;
    for (size_t i = 0; i < c.n_spans; i++)
        n_c943 += c.spans[i].data->span_id == 0xc943743e25dc2cdfULL;
    CU_ASSERT_EQUAL(n_c943, 2);
    server = by_kind(&c, "server");
    CU_ASSERT_PTR_NOT_NULL_FATAL(server);
    CU_ASSERT_TRUE(server->data->duration_us > 0); /* the 15-digit ss never gives < 0 */
    capture_free(&c);

    /* zipkin_03: every annotation type, typed; four values of the wrong length warned. */
    read_fixture(&c, fixtures[12].path, fixtures[12].reader);
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(s, "i16"), 12345));
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(s, "i32"), 12345));
    CU_ASSERT_TRUE(tag_is_i64(capture_tag(s, "i64"), 12345));
    const tw__tag *d = capture_tag(s, "double");
    CU_ASSERT_TRUE(d && d->type == TW_VALUE_DOUBLE && d->v.dbl == 12345.0);
    CU_ASSERT_TRUE(tag_is(s, "string", "some-host.com"));
    CU_ASSERT_EQUAL(capture_tag(s, "bytes")->type, TW_VALUE_BINARY);
    CU_ASSERT_EQUAL(capture_tag(s, "i64_bad_value")->type, TW_VALUE_BINARY);
    CU_ASSERT_EQUAL(s->flags, TW__FLAG_SAMPLED | TW__FLAG_DEBUG);
    CU_ASSERT_EQUAL(c.n_warnings, 5); /* 4 bad lengths + the sr without timestamp */
    capture_free(&c);

    /* thrift_single_batch: negative i32 ipv4 = 172.31.0.4; I64 of 10 bytes kept binary. */
    read_fixture(&c, fixtures[14].path, fixtures[14].reader);
    bool seen = false;
    for (size_t i = 0; i < c.n_spans; i++) {
        const tw__tag *ip = proc_tag(c.spans[i].process, "ip");
        seen |= ip && strcmp(ip->v.str, "172.31.0.4") == 0;
        const tw__tag *code = capture_tag(c.spans[i].data, "http.status_code");
        if (code)
            CU_ASSERT_TRUE(code->type == TW_VALUE_BINARY && code->len == 10);
    }
    CU_ASSERT_TRUE(seen);
    capture_free(&c);
}

static void test_sniff_tells_jaeger_batches_apart(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s", TW_REAL_FIXTURES,
             "/elastic__apm-server/testdata__jaeger__span.thrift");
    FILE *f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    uint8_t head[4096];
    size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    CU_ASSERT_TRUE(twb_reader_zipkin_v1_thrift.sniff(head, n) < 50);
    CU_ASSERT_EQUAL(twb_reader_zipkin_v1_json.sniff(head, n), 0);
    static const char scribe[] = "zipkin\tCgABAAAAAAAAAAELAAMAAAABeAoABAAAAAAAAAACAA==\n";
    CU_ASSERT_TRUE(twb_reader_zipkin_v1_thrift.sniff((const uint8_t *)scribe, strlen(scribe)) >=
                   85);
    CU_ASSERT_EQUAL(twb_reader_zipkin_v1_thrift.sniff((const uint8_t *)"[{\"a\":1}]", 9), 0);
}

static void test_stop_from_emit_stops_the_reader(void)
{
    read_capture c;
    capture_init(&c);
    c.stop_after = 1;
    char path[1024];
    snprintf(path, sizeof path, "%s%s", TW_REAL_FIXTURES, fixtures[0].path);
    CU_ASSERT_EQUAL(capture_read_file(&c, &twb_reader_zipkin_v1_thrift, path), TW_E_STATE);
    CU_ASSERT_EQUAL(c.n_spans, 1);
    capture_free(&c);
    capture_init(&c);
    c.stop_after = 1;
    snprintf(path, sizeof path, "%s%s", TW_REAL_FIXTURES, fixtures[1].path);
    CU_ASSERT_EQUAL(capture_read_file(&c, &twb_reader_zipkin_v1_json, path), TW_E_STATE);
    CU_ASSERT_EQUAL(c.n_spans, 1);
    capture_free(&c);
}

static void test_base64_decoder_is_strict(void)
{
    uint8_t out[16];
    size_t n = 0;
    CU_ASSERT_TRUE(tw__base64_decode_into("AQID", 4, false, out, &n) && n == 3 && out[2] == 3);
    CU_ASSERT_TRUE(tw__base64_decode_into("AQ==", 4, false, out, &n) && n == 1);
    CU_ASSERT_TRUE(tw__base64_decode_into("AQ", 2, false, out, &n) && n == 1);
    CU_ASSERT_TRUE(tw__base64_decode_into("-_8=", 4, false, out, &n) && n == 2 && out[1] == 0xff);
    CU_ASSERT_FALSE(tw__base64_decode_into("A", 1, false, out, &n));
    CU_ASSERT_FALSE(tw__base64_decode_into("AQ=A", 4, false, out, &n));
    CU_ASSERT_FALSE(tw__base64_decode_into("A Q=", 4, false, out, &n));
    CU_ASSERT_FALSE(tw__base64_decode_into("AQ=", 3, false, out, &n));
}

static int suite_cleanup(void)
{
    tw__span_data_pool_trim();
    return 0;
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("bridge/zipkin_v1", NULL, suite_cleanup);
    CU_add_test(suite, "rpc_splits_into_client_and_shared_server",
                test_rpc_splits_into_client_and_shared_server);
    CU_add_test(suite, "each_host_gets_its_own_span", test_each_host_gets_its_own_span);
    CU_add_test(suite, "loopback_still_yields_two_spans", test_loopback_still_yields_two_spans);
    CU_add_test(suite, "one_way_call_has_no_duration", test_one_way_call_has_no_duration);
    CU_add_test(suite, "core_annotation_needs_endpoint", test_core_annotation_needs_endpoint);
    CU_add_test(suite, "missing_start_synthesized_from_span_timing",
                test_missing_start_synthesized_from_span_timing);
    CU_add_test(suite, "single_side_and_incomplete_rpc", test_single_side_and_incomplete_rpc);
    CU_add_test(suite, "server_only_shared_inference", test_server_only_shared_inference);
    CU_add_test(suite, "messaging_rules", test_messaging_rules);
    CU_add_test(suite, "addresses_component_and_tags", test_addresses_component_and_tags);
    CU_add_test(suite, "typed_binary_annotations", test_typed_binary_annotations);
    CU_add_test(suite, "ids_flags_and_endpoints", test_ids_flags_and_endpoints);
    CU_add_test(suite, "forced_time_unit_scales_every_time",
                test_forced_time_unit_scales_every_time);
    CU_add_test(suite, "bad_records_rejected_naming_the_field",
                test_bad_records_rejected_naming_the_field);
    CU_add_test(suite, "thrift_keys_end_at_a_nul", test_thrift_keys_end_at_a_nul);
    CU_add_test(suite, "thrift_key_nul_at_every_length_and_position",
                test_thrift_key_nul_at_every_length_and_position);
    CU_add_test(suite, "thrift_raw_lists_stream_every_span",
                test_thrift_raw_lists_stream_every_span);
    CU_add_test(suite, "thrift_malformed_and_hostile_input",
                test_thrift_malformed_and_hostile_input);
    CU_add_test(suite, "thrift_fast_path_matches_general_reader",
                test_thrift_fast_path_matches_general_reader);
    CU_add_test(suite, "endpoint_and_process_memos_match_general_path",
                test_endpoint_and_process_memos_match_general_path);
    CU_add_test(suite, "scribe_lines_categories_and_mime_wrapping",
                test_scribe_lines_categories_and_mime_wrapping);
    CU_add_test(suite, "every_real_fixture_reads_with_index_counts",
                test_every_real_fixture_reads_with_index_counts);
    CU_add_test(suite, "fixture_facts", test_fixture_facts);
    CU_add_test(suite, "sniff_tells_jaeger_batches_apart", test_sniff_tells_jaeger_batches_apart);
    CU_add_test(suite, "stop_from_emit_stops_the_reader", test_stop_from_emit_stops_the_reader);
    CU_add_test(suite, "base64_decoder_is_strict", test_base64_decoder_is_strict);
}
