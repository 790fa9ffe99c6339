/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_zipkin_proto.c: suite "wire/zipkin_proto": Zipkin
 * v2 in proto3 (sdk/wire/zipkin/zipkin_proto.c) and the zipkin-v2-proto
 * decoder and document encoder of the format registry
 * (sdk/wire/zipkin/zipkin_proto_read.c, zipkin_proto_doc.c).
 *
 * - The direct writer against protobuf-c's packer: every span of the random
 *   corpus, as the Zipkin v2 JSON object the mapping makes, packed by both;
 *   the bytes must be identical.
 * - Both encodings read back the same: the zipkin-v2-json reader on the JSON
 *   text and the zipkin-v2-proto reader on the proto3 bytes give equal spans
 *   and processes.
 * - Ids of the wrong length are refused with the reason; addresses of the
 *   wrong length are left out with a warning; detection.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"
#include "harness.h"
#include "span_builder.h"
#include "span_corpus.h"
#include "wire/core/pb_write.h"
#include "wire/core/json_common.h"
#include "wire/zipkin/zipkin_proto.h"
#include "wire/zipkin/zipkin_v2_json.h"
#include "zipkin/zipkin.pb-c.h"

#define N_RANDOM tw_test_rounds(5000) /* a tenth under valgrind (harness.h) */

/* ---- the reference: protobuf-c structs from the JSON object ------------------------------ */

typedef struct ref {
    void **ptrs;
    size_t n, cap;
    bool has_nul;
} ref;

static void *ref_alloc(ref *r, size_t size)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 32;
        r->ptrs = realloc(r->ptrs, r->cap * sizeof *r->ptrs);
        CU_ASSERT_FATAL(r->ptrs != NULL);
    }
    void *p = calloc(1, size ? size : 1);
    CU_ASSERT_FATAL(p != NULL);
    return r->ptrs[r->n++] = p;
}

static void ref_free(ref *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->ptrs[i]);
    free(r->ptrs);
}

static char *ref_str(ref *r, const json_t *v)
{
    size_t len = json_string_length(v);
    char *s = ref_alloc(r, len + 1);
    memcpy(s, json_string_value(v), len);
    if (memchr(s, 0, len))
        r->has_nul = true;
    return s;
}

static ProtobufCBinaryData ref_hex(ref *r, const json_t *v)
{
    const char *h = json_string_value(v);
    size_t n = strlen(h) / 2;
    uint8_t *p = ref_alloc(r, n);
    for (size_t i = 0; i < n; i++) {
        unsigned x;
        sscanf(h + 2 * i, "%2x", &x);
        p[i] = (uint8_t)x;
    }
    return (ProtobufCBinaryData){n, p};
}

static Zipkin__Proto3__Endpoint *ref_endpoint(ref *r, const json_t *ep)
{
    if (!ep)
        return NULL;
    Zipkin__Proto3__Endpoint *e = ref_alloc(r, sizeof *e);
    zipkin__proto3__endpoint__init(e);
    if (json_object_get(ep, "serviceName"))
        e->service_name = ref_str(r, json_object_get(ep, "serviceName"));
    const char *v4 = json_string_value(json_object_get(ep, "ipv4"));
    const char *v6 = json_string_value(json_object_get(ep, "ipv6"));
    if (v4) {
        e->ipv4 = (ProtobufCBinaryData){4, ref_alloc(r, 4)};
        CU_ASSERT(inet_pton(AF_INET, v4, e->ipv4.data) == 1);
    }
    if (v6) {
        e->ipv6 = (ProtobufCBinaryData){16, ref_alloc(r, 16)};
        CU_ASSERT(inet_pton(AF_INET6, v6, e->ipv6.data) == 1);
    }
    e->port = (int32_t)json_integer_value(json_object_get(ep, "port"));
    return e;
}

static void ref_pack(ref *r, const json_t *js, tw__buf *out)
{
    Zipkin__Proto3__Span s;
    zipkin__proto3__span__init(&s);
    s.trace_id = ref_hex(r, json_object_get(js, "traceId"));
    if (json_object_get(js, "parentId"))
        s.parent_id = ref_hex(r, json_object_get(js, "parentId"));
    s.id = ref_hex(r, json_object_get(js, "id"));
    static const char *const kinds[] = {"", "CLIENT", "SERVER", "PRODUCER", "CONSUMER"};
    const char *kind = json_string_value(json_object_get(js, "kind"));
    for (int k = 1; kind && k < 5; k++) {
        if (strcmp(kind, kinds[k]) == 0)
            s.kind = (Zipkin__Proto3__Span__Kind)k;
    }
    if (json_object_get(js, "name"))
        s.name = ref_str(r, json_object_get(js, "name"));
    s.timestamp = (uint64_t)json_integer_value(json_object_get(js, "timestamp"));
    s.duration = (uint64_t)json_integer_value(json_object_get(js, "duration"));
    s.local_endpoint = ref_endpoint(r, json_object_get(js, "localEndpoint"));
    s.remote_endpoint = ref_endpoint(r, json_object_get(js, "remoteEndpoint"));
    const json_t *anns = json_object_get(js, "annotations");
    s.annotations = ref_alloc(r, json_array_size(anns) * sizeof *s.annotations);
    size_t i;
    const json_t *a;
    json_array_foreach(anns, i, a)
    {
        Zipkin__Proto3__Annotation *an = ref_alloc(r, sizeof *an);
        zipkin__proto3__annotation__init(an);
        an->timestamp = (uint64_t)json_integer_value(json_object_get(a, "timestamp"));
        an->value = ref_str(r, json_object_get(a, "value"));
        s.annotations[s.n_annotations++] = an;
    }
    const json_t *tags = json_object_get(js, "tags");
    s.tags = ref_alloc(r, json_object_size(tags) * sizeof *s.tags);
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)tags, key, value)
    {
        Zipkin__Proto3__Span__TagsEntry *t = ref_alloc(r, sizeof *t);
        zipkin__proto3__span__tags_entry__init(t);
        json_t *k = json_string(key);
        t->key = ref_str(r, k);
        json_decref(k);
        t->value = ref_str(r, value);
        s.tags[s.n_tags++] = t;
    }
    s.debug = json_is_true(json_object_get(js, "debug"));
    s.shared = json_is_true(json_object_get(js, "shared"));
    /* A ListOfSpans of one span: exactly the field the encoder appends. */
    Zipkin__Proto3__ListOfSpans list;
    zipkin__proto3__list_of_spans__init(&list);
    Zipkin__Proto3__Span *one = &s;
    list.n_spans = 1;
    list.spans = &one;
    size_t size = protobuf_c_message_get_packed_size(&list.base);
    tw__buf_reset(out);
    CU_ASSERT_FATAL(tw__buf_reserve(out, size + 1));
    out->len = protobuf_c_message_pack(&list.base, out->data);
}

static void test_random_corpus_matches_protobuf_c(void)
{
    size_t n_compared = 0, n_differ = 0;
    for (size_t i = 0; i < N_RANDOM && n_differ < 5; i++) {
        tw__process p;
        bool has_process;
        tw__span_data *s = corpus_span(41, i, &p, &has_process, CORPUS_INVALID_KEYS);
        CU_ASSERT_FATAL(s != NULL);
        json_t *js = tw__zipkin_proto_span_object(s, has_process ? &p : NULL);
        CU_ASSERT_FATAL(js != NULL);
        ref r = {0};
        tw__buf want, got;
        tw__buf_init(&want);
        tw__buf_init(&got);
        ref_pack(&r, js, &want);
        CU_ASSERT_FATAL(tw__zipkin_proto_encode_json(js, &got));
        if (!r.has_nul) {
            n_compared++;
            if (got.len != want.len || memcmp(got.data, want.data, got.len) != 0) {
                n_differ++;
                char *text = json_dumps(js, TW__JSON_FLAGS);
                fprintf(stderr, "corpus span %zu: %zu bytes from protobuf-c, %zu direct: %s\n", i,
                        want.len, got.len, text);
                free(text);
            }
        }
        ref_free(&r);
        tw__buf_free(&want);
        tw__buf_free(&got);
        json_decref(js);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    CU_ASSERT_EQUAL(n_differ, 0);
    CU_ASSERT(n_compared > N_RANDOM / 2);
}

/* ---- both encodings read back the same ----------------------------------------------------- */

static void test_json_and_proto3_read_back_equal(void)
{
    size_t n_compared = 0, n_differ = 0;
    for (size_t i = 0; i < N_RANDOM / 4 && n_differ < 5; i++) {
        tw__process p;
        bool has_process;
        tw__span_data *s = corpus_span(43, i, &p, &has_process, CORPUS_INVALID_KEYS);
        CU_ASSERT_FATAL(s != NULL);
        const tw__process *pp = has_process ? &p : NULL;
        tw__buf text, bin;
        tw__buf_init(&text);
        tw__buf_init(&bin);
        CU_ASSERT_FATAL(tw__zipkin_encode_span(s, pp, &text));
        CU_ASSERT_FATAL(tw__zipkin_proto_encode_span(s, pp, &bin));
        read_capture a, b;
        capture_init(&a);
        capture_init(&b);
        capture_read_mem(&a, &twb_reader_zipkin_v2_json, text.data, text.len);
        capture_read_mem(&b, &twb_reader_zipkin_v2_proto, bin.data, bin.len);
        /* A string holding NUL: JSON keeps it, protobuf-c's C strings end there (warned). */
        bool is_cut = b.n_warnings && strstr(b.last_warning, "NUL");
        bool same =
            a.n_spans == b.n_spans && a.n_rejects == b.n_rejects &&
            (a.n_spans == 0 ||
             (tw_test_spans_equal(a.spans[0].data, b.spans[0].data) &&
              a.spans[0].data->shared == b.spans[0].data->shared &&
              a.spans[0].data->is_duration_unknown == b.spans[0].data->is_duration_unknown &&
              capture_processes_equal(a.spans[0].process, b.spans[0].process)));
        if (!is_cut) {
            n_compared++;
            if (!same) {
                n_differ++;
                fprintf(stderr, "corpus span %zu reads back differently: %.*s\n", i, (int)text.len,
                        (const char *)text.data);
            }
        }
        capture_free(&a);
        capture_free(&b);
        tw__buf_free(&text);
        tw__buf_free(&bin);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    CU_ASSERT_EQUAL(n_differ, 0);
    CU_ASSERT(n_compared > N_RANDOM / 8);
}

/* ---- refusals and warnings ------------------------------------------------------------------- */

static void test_bad_lengths_are_reported(void)
{
    struct {
        const char *trace, *id, *ipv4;
        size_t trace_len, id_len, ipv4_len;
        const char *reject, *warning;
    } cases[] = {
        {"0123456789", "01234567", NULL, 10, 8, 0, "trace_id is 10 bytes, not 8 or 16", NULL},
        {"01234567", "0123", NULL, 8, 4, 0, "id is 4 bytes, not 8", NULL},
        {"01234567", "01234567", "\x7f\0\1", 8, 8, 3, NULL, "ipv4: 3 bytes, not 4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw__buf span, list;
        tw__buf_init(&span);
        tw__buf_init(&list);
        tw__pb_bytes_field(&span, 1, cases[i].trace, cases[i].trace_len);
        tw__pb_bytes_field(&span, 3, cases[i].id, cases[i].id_len);
        tw__pb_fixed64_field(&span, 6, 1700000000000000u);
        if (cases[i].ipv4) {
            size_t ep = tw__pb_begin(&span, 8);
            tw__pb_string_field(&span, 1, "svc", 3, false);
            tw__pb_bytes_field(&span, 2, cases[i].ipv4, cases[i].ipv4_len);
            tw__pb_end(&span, ep);
        }
        tw__pb_bytes_field(&list, 1, span.data, span.len);
        read_capture c;
        capture_init(&c);
        CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_zipkin_v2_proto, list.data, list.len),
                        TW_OK);
        if (cases[i].reject) {
            CU_ASSERT_EQUAL(c.n_spans, 0);
            CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
            CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, cases[i].reject));
            CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "spans[0] (byte 0)"));
            CU_ASSERT_EQUAL(c.rejects[0].raw_len, span.len);
        } else {
            CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
            CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "svc");
            CU_ASSERT_PTR_NULL(tw__process_find_tag(c.spans[0].process, "ip"));
            CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, cases[i].warning));
        }
        capture_free(&c);
        tw__buf_free(&span);
        tw__buf_free(&list);
    }
}

/* An enum number the proto does not name (here -1, as a 10-byte varint, and
 * 7) is kept as the tag span.kind with a warning, never used as an index. */
static void test_unknown_kind_is_kept_with_a_warning(void)
{
    static const uint64_t numbers[] = {UINT64_MAX, 7};
    static const char *const expect[] = {"-1", "7"};
    for (size_t i = 0; i < 2; i++) {
        tw__buf span, list;
        tw__buf_init(&span);
        tw__buf_init(&list);
        tw__pb_bytes_field(&span, 1, "01234567", 8);
        tw__pb_bytes_field(&span, 3, "01234567", 8);
        tw__pb_varint_field(&span, 4, numbers[i]);
        tw__pb_fixed64_field(&span, 6, 1700000000000000u);
        tw__pb_bytes_field(&list, 1, span.data, span.len);
        read_capture c;
        capture_init(&c);
        CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_zipkin_v2_proto, list.data, list.len),
                        TW_OK);
        CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
        const tw__tag *kind = tw__span_data_find_tag(c.spans[0].data, "span.kind");
        CU_ASSERT_FATAL(kind != NULL);
        CU_ASSERT_STRING_EQUAL(kind->v.str, expect[i]);
        CU_ASSERT_PTR_NOT_NULL(strstr(c.last_warning, "kind: unknown value"));
        capture_free(&c);
        tw__buf_free(&span);
        tw__buf_free(&list);
    }
}

static void test_not_protobuf_is_refused_once(void)
{
    static const char junk[] = "\x0a\x05\x0a\x10xx"; /* a span whose trace id runs past it */
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_zipkin_v2_proto, junk, sizeof junk - 1),
                    TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 0);
    CU_ASSERT_EQUAL(c.n_rejects, 1);
    capture_free(&c);
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_zipkin_v2_proto, "\x0b\x01", 2), TW_OK);
    CU_ASSERT_EQUAL(c.n_rejects, 1);
    CU_ASSERT(c.n_rejects && strstr(c.rejects[0].reason, "not a ListOfSpans"));
    capture_free(&c);
}

static void test_detection(void)
{
    tw__span_data *s = tw_test_span_every_field();
    tw__buf b;
    tw__buf_init(&b);
    CU_ASSERT_FATAL(tw__zipkin_proto_encode_span(s, NULL, &b));
    CU_ASSERT(tw__zipkin_proto_sniff(b.data, b.len) >= 90);
    /* The OTLP sniffer must not claim it more strongly (detection picks the highest). */
    CU_ASSERT(twb_reader_otlp_proto.sniff(b.data, b.len) < tw__zipkin_proto_sniff(b.data, b.len));
    CU_ASSERT_EQUAL(tw__zipkin_proto_sniff((const uint8_t *)"[{\"traceId\":1}]", 15), 0);
    tw__buf_free(&b);
    tw__span_data_unref(s);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/zipkin_proto", NULL, NULL);
    CU_add_test(suite, "random_corpus_matches_protobuf_c", test_random_corpus_matches_protobuf_c);
    CU_add_test(suite, "json_and_proto3_read_back_equal", test_json_and_proto3_read_back_equal);
    CU_add_test(suite, "bad_lengths_are_reported", test_bad_lengths_are_reported);
    CU_add_test(suite, "unknown_kind_is_kept_with_a_warning",
                test_unknown_kind_is_kept_with_a_warning);
    CU_add_test(suite, "not_protobuf_is_refused_once", test_not_protobuf_is_refused_once);
    CU_add_test(suite, "detection", test_detection);
}
