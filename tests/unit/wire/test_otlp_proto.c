/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/wire/test_otlp_proto.c: suite "wire/otlp_proto": OTLP in
 * protobuf (sdk/wire/otlp/otlp_proto.c, otlp_proto_decode.c).
 *
 * - The direct writer against protobuf-c's packer: for every span of the
 *   random corpus (tests/unit/wire/span_corpus.h) the same message is built
 *   as protobuf-c structs from the same plan (wire/otlp/otlp_map.h) and
 *   packed by protobuf_c_message_pack(); the bytes must be identical, for
 *   single spans and for whole requests.
 * - Both encodings agree: each span encoded as OTLP/JSON and read by the
 *   otlp-json reader equals the same span encoded as protobuf and read by
 *   the protobuf decoder (ids, name, times, tags, logs, references and the
 *   process).
 * - The HTTP format's predicted body size is the built size.
 * - Hostile and broken input is refused with a reason naming the field and
 *   the byte: nesting, truncation, wire types, ids of the wrong length,
 *   times past 2262; the arena refuses past its budget.
 * - What protobuf allows: fields in any order, a resource given twice
 *   (merged), unknown fields; detection of both file framings.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"
#include "harness.h"
#include "otlp_proto_ref.h"
#include "report/http.h"
#include "span_builder.h"
#include "span_corpus.h"
#include "tracewire/common.h"
#include "wire/core/pb_read.h"
#include "wire/core/pb_write.h"
#include "wire/otlp/otlp_map.h"
#include "wire/otlp/otlp_proto.h"
#include "wire/otlp/otlp_proto_int.h"
#include "wire/otlp/otlp_json.h"

#define N_RANDOM tw_test_rounds(8000) /* a tenth under valgrind (harness.h) */

static void dump_diff(const char *what, size_t i, const tw__buf *want, const tw__buf *got)
{
    size_t at = 0;
    while (at < want->len && at < got->len && want->data[at] == got->data[at])
        at++;
    fprintf(stderr, "%s %zu: %zu bytes from protobuf-c, %zu direct; first difference at %zu\n",
            what, i, want->len, got->len, at);
}

/* ---- differential: direct writer == protobuf-c -------------------------------------------- */

static bool same_request(tw__span_data *const *spans, size_t n, const tw__process *p,
                         const char *what, size_t i, bool *was_compared)
{
    ref r = {0};
    tw__buf want, got;
    tw__buf_init(&want);
    tw__buf_init(&got);
    ref_request(&r, spans, n, p, &want);
    bool ok = tw__otlp_proto_encode_request(spans, n, p, &got);
    *was_compared = !r.has_nul;
    bool is_same =
        ok && (r.has_nul || (got.len == want.len && memcmp(got.data, want.data, got.len) == 0));
    if (!is_same)
        dump_diff(what, i, &want, &got);
    tw__buf_free(&want);
    tw__buf_free(&got);
    ref_free(&r);
    return is_same;
}

static void test_builder_spans_match_protobuf_c(void)
{
    tw__process p;
    tw__process_init(&p);
    tw_value ip = tw_test_str("10.1.2.3"), host = tw_test_str("box-1");
    CU_ASSERT_FATAL(tw__process_set_service(&p, "billing") && tw__process_add_tag(&p, "ip", &ip) &&
                    tw__process_add_tag(&p, "hostname", &host));
    tw__span_data *spans[2] = {tw_test_span_every_field(), tw_test_span_root_64bit()};
    CU_ASSERT_FATAL(spans[0] && spans[1]);
    bool was_compared;
    CU_ASSERT(same_request(spans, 2, &p, "builder", 0, &was_compared));
    CU_ASSERT(was_compared);
    CU_ASSERT(same_request(spans, 1, NULL, "builder/no process", 1, &was_compared));
    CU_ASSERT(same_request(spans, 0, &p, "builder/no spans", 2, &was_compared));
    tw__span_data_unref(spans[0]);
    tw__span_data_unref(spans[1]);
    tw__process_clear(&p);
}

static void test_random_corpus_matches_protobuf_c(void)
{
    size_t n_compared = 0, n_differ = 0;
    for (size_t i = 0; i < N_RANDOM; i++) {
        tw__process p;
        bool has_process;
        tw__span_data *s = corpus_span(11, i, &p, &has_process, CORPUS_INVALID_KEYS);
        CU_ASSERT_FATAL(s != NULL);
        bool was_compared;
        if (!same_request(&s, 1, has_process ? &p : NULL, "corpus span", i, &was_compared))
            n_differ++;
        n_compared += was_compared;
        tw__span_data_unref(s);
        tw__process_clear(&p);
        if (n_differ > 5)
            break;
    }
    CU_ASSERT_EQUAL(n_differ, 0);
    /* Strings with NUL bytes cannot go through protobuf-c's C strings: most spans can. */
    CU_ASSERT(n_compared > N_RANDOM / 2);
    fprintf(stderr, "otlp_proto: %zu of %zu corpus requests byte-identical to protobuf-c\n",
            n_compared, N_RANDOM);
}

/* The span's length prefix takes one, two or three bytes (spans under 128
 * bytes, under 16 KiB, larger), and string values of every length up to
 * 24 bytes are ASCII or have one byte >= 0x80 (valid UTF-8 or not) at each
 * position: the encoder's fast paths for both, held to protobuf-c. */
static void test_length_prefixes_and_strings_match_protobuf_c(void)
{
    static const size_t value_lens[] = {0, 60, 300, 20000};
    size_t n_differ = 0;
    for (size_t k = 0; k < sizeof value_lens / sizeof value_lens[0]; k++) {
        tw__span_data *s = tw_test_span_root_64bit();
        CU_ASSERT_FATAL(s != NULL);
        char *big = malloc(value_lens[k] + 1);
        memset(big, 'v', value_lens[k]);
        tw_value v = {.type = TW_VALUE_STRING, .len = value_lens[k], .as.str = big};
        tw__tag_set(&s->arena, tw__span_data_push_tag(s), "big", &v, SIZE_MAX, NULL);
        s->n_tags++;
        bool was_compared;
        n_differ +=
            !same_request(&s, 1, NULL, "span of value length", value_lens[k], &was_compared);
        free(big);
        tw__span_data_unref(s);
    }
    static const char *odd[] = {"\xc3\xa9", "\xff", "\xe2\x82"};
    for (size_t len = 0; len <= 24; len++) {
        for (size_t at = 0; at <= len; at++) {
            for (size_t o = 0; o < 3; o++) {
                char text[40];
                memset(text, 'a' + (char)(len % 26), sizeof text);
                size_t n = len;
                if (at < len) { /* one odd sequence at @at, the text keeps its length */
                    size_t m = strlen(odd[o]);
                    memcpy(text + at, odd[o], at + m <= len ? m : len - at);
                } else if (o) {
                    continue;
                }
                tw__span_data *s = tw_test_span_root_64bit();
                CU_ASSERT_FATAL(s != NULL);
                tw_value v = {.type = TW_VALUE_STRING, .len = n, .as.str = text};
                tw__tag_set_n(&s->arena, tw__span_data_push_tag(s), text, n ? n : 1, &v, SIZE_MAX,
                              NULL); /* the key too */
                s->n_tags++;
                bool was_compared;
                n_differ += !same_request(&s, 1, NULL, "string of length", len, &was_compared);
                tw__span_data_unref(s);
            }
        }
    }
    CU_ASSERT_EQUAL(n_differ, 0);
}

/* ---- both encodings read back the same ----------------------------------------------------- */

static bool sink_span(void *arg, tw__span_data *span, const tw__process *process,
                      const uint8_t *raw, size_t raw_len)
{
    (void)raw;
    (void)raw_len;
    read_capture *c = arg;
    return c->in.emit(&c->in, span, process);
}

static bool sink_reject(void *arg, const char *where, const char *why, const uint8_t *raw,
                        size_t raw_len)
{
    read_capture *c = arg;
    return twb_reject(&c->in, 0, raw, raw_len, "%s: %s", where, why);
}

static void sink_warn(void *arg, const char *where, const char *why)
{
    read_capture *c = arg;
    twb_warn(&c->in, 0, "%s: %s", where, why);
}

static tw__otlp_proto_status decode(read_capture *c, const tw__buf *b)
{
    const tw__otlp_proto_sink sink = {sink_span, sink_reject, sink_warn, c};
    return tw__otlp_proto_decode_request(b->data, b->len, &sink);
}

static bool has_nul_text(const tw__span_data *s, const tw__process *p)
{
    for (size_t i = 0; i < s->n_tags; i++) {
        if (s->tags[i].type == TW_VALUE_STRING && memchr(s->tags[i].v.str, 0, s->tags[i].len))
            return true;
    }
    for (size_t l = 0; l < s->n_logs; l++) {
        for (size_t f = 0; f < s->logs[l].n_fields; f++) {
            const tw__tag *t = &s->logs[l].fields[f];
            if (t->type == TW_VALUE_STRING && memchr(t->v.str, 0, t->len))
                return true;
        }
    }
    for (size_t i = 0; p && i < p->n_tags; i++) {
        if (p->tags[i].type == TW_VALUE_STRING && memchr(p->tags[i].v.str, 0, p->tags[i].len))
            return true;
    }
    return false;
}

/* An attribute whose KeyValue is just under, at and over 128 bytes (where
 * the encoder's one-pass KeyValue writer hands over to the field by field
 * one), with keys of 0..128 bytes and values of every type, negative
 * integers (ten-byte varints) among them: protobuf-c's bytes. */
static void test_key_values_around_128_bytes_match_protobuf_c(void)
{
    static const size_t key_lens[] = {0, 1, 7, 60, 110, 119, 120, 121, 122, 123, 124, 127, 128};
    char key[200], text[200];
    memset(key, 'k', sizeof key);
    memset(text, 'v', sizeof text);
    size_t n_differ = 0;
    for (size_t k = 0; k < sizeof key_lens / sizeof key_lens[0]; k++) {
        for (size_t len = 0; len <= 130; len++) {
            for (int type = 0; type < 5; type++) {
                if (type > 1 && len > 0)
                    continue; /* the scalar types once per key */
                for (int variant = 0; variant < (type == 3 ? 4 : 1); variant++) {
                    static const int64_t ints[] = {0, 127, -1, INT64_MIN};
                    tw_value v = {.type = TW_VALUE_STRING, .len = len, .as.str = text};
                    if (type == 1)
                        v = (tw_value){
                            .type = TW_VALUE_BINARY, .len = len, .as.bin = (const uint8_t *)text};
                    else if (type == 2)
                        v = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = true};
                    else if (type == 3)
                        v = (tw_value){.type = TW_VALUE_INT64, .as.i64 = ints[variant]};
                    else if (type == 4)
                        v = (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = -2.5};
                    tw__span_data *s = tw_test_span_root_64bit();
                    CU_ASSERT_FATAL(s != NULL);
                    CU_ASSERT_FATAL(tw__tag_set_n(&s->arena, tw__span_data_push_tag(s), key,
                                                  key_lens[k], &v, SIZE_MAX, NULL));
                    s->n_tags++;
                    bool was_compared;
                    n_differ += !same_request(&s, 1, NULL, "key value of key length", key_lens[k],
                                              &was_compared);
                    tw__span_data_unref(s);
                }
            }
        }
    }
    CU_ASSERT_EQUAL(n_differ, 0);
}

static void test_json_and_protobuf_read_back_equal(void)
{
    size_t n_compared = 0, n_differ = 0;
    for (size_t i = 0; i < N_RANDOM / 4 && n_differ < 5; i++) {
        tw__process p;
        bool has_process;
        tw__span_data *s = corpus_span(23, i, &p, &has_process, CORPUS_INVALID_KEYS);
        CU_ASSERT_FATAL(s != NULL);
        if (has_nul_text(s, &p) || s->start_us <= 0 || s->start_us > INT64_MAX / 1000) {
            /* JSON readers refuse \u0000; a span without a start, or one past 2262,
             * is refused by both (broken_spans_are_refused_with_reasons). */
            tw__span_data_unref(s);
            tw__process_clear(&p);
            continue;
        }
        tw__buf js, pb;
        tw__buf_init(&js);
        tw__buf_init(&pb);
        CU_ASSERT_FATAL(tw__otlp_encode_request(&s, 1, has_process ? &p : NULL, &js));
        CU_ASSERT_FATAL(tw__otlp_proto_encode_request(&s, 1, has_process ? &p : NULL, &pb));
        read_capture a, b;
        capture_init(&a);
        capture_init(&b);
        capture_read_mem(&a, &twb_reader_otlp_json, js.data, js.len);
        CU_ASSERT_EQUAL(decode(&b, &pb), TW__OTLP_PROTO_OK);
        bool same = a.n_spans == 1 && b.n_spans == 1 && a.n_rejects == 0 && b.n_rejects == 0 &&
                    tw_test_spans_equal(a.spans[0].data, b.spans[0].data) &&
                    capture_processes_equal(a.spans[0].process, b.spans[0].process);
        if (!same) {
            n_differ++;
            fprintf(stderr,
                    "corpus span %zu reads back differently (json %zu/%zu, proto %zu/%zu)\n", i,
                    a.n_spans, a.n_rejects, b.n_spans, b.n_rejects);
            if (a.n_rejects)
                fprintf(stderr, "  json: %s\n", a.rejects[0].reason);
            if (b.n_rejects)
                fprintf(stderr, "  proto: %s\n", b.rejects[0].reason);
        }
        n_compared++;
        capture_free(&a);
        capture_free(&b);
        tw__buf_free(&js);
        tw__buf_free(&pb);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    CU_ASSERT_EQUAL(n_differ, 0);
    CU_ASSERT(n_compared > N_RANDOM / 16);
}

/* ---- the direct reader == protobuf-c's unpack ------------------------------------------------ */

static void test_reader_matches_protobuf_c_unpack(void)
{
    size_t n_compared = 0, n_differ = 0;
    ref_decoded *dec = malloc(sizeof *dec);
    CU_ASSERT_FATAL(dec != NULL);
    for (size_t i = 0; i < N_RANDOM / 4 && n_differ < 5; i += 3) {
        /* Requests of three spans (one process), to cover more than one per body. */
        tw__span_data *spans[3];
        tw__process procs[3];
        bool has_process, has_nul = false;
        for (size_t k = 0; k < 3; k++) {
            spans[k] = corpus_span(29, i + k, &procs[k], &has_process, CORPUS_INVALID_KEYS);
            CU_ASSERT_FATAL(spans[k] != NULL);
            has_nul = has_nul || has_nul_text(spans[k], &procs[0]);
        }
        tw__buf b;
        tw__buf_init(&b);
        CU_ASSERT_FATAL(tw__otlp_proto_encode_request(spans, 3, &procs[0], &b));
        read_capture c;
        capture_init(&c);
        CU_ASSERT_EQUAL(decode(&c, &b), TW__OTLP_PROTO_OK);
        CU_ASSERT_FATAL(ref_decode_request(b.data, b.len, dec));
        size_t n_ref = 0;
        for (size_t k = 0; k < dec->n_spans; k++)
            n_ref += dec->spans[k] != NULL;
        bool same = dec->n_spans == 3 && c.n_spans == n_ref && c.n_rejects == 3 - n_ref;
        for (size_t k = 0, got = 0; same && k < dec->n_spans; k++) {
            if (!dec->spans[k])
                continue;
            same = tw_test_spans_equal(dec->spans[k], c.spans[got].data) &&
                   capture_processes_equal(&dec->procs[dec->span_proc[k]], c.spans[got].process);
            got++;
        }
        if (!has_nul) {
            n_compared++;
            if (!same) {
                n_differ++;
                fprintf(stderr, "corpus spans %zu..%zu: protobuf-c read %zu of %zu, ours %zu\n", i,
                        i + 2, n_ref, dec->n_spans, c.n_spans);
            }
        }
        ref_decoded_free(dec);
        capture_free(&c);
        tw__buf_free(&b);
        for (size_t k = 0; k < 3; k++) {
            tw__span_data_unref(spans[k]);
            tw__process_clear(&procs[k]);
        }
    }
    free(dec);
    CU_ASSERT_EQUAL(n_differ, 0);
    fprintf(stderr, "otlp_proto: %zu corpus requests read alike by both readers\n", n_compared);
    CU_ASSERT(n_compared > N_RANDOM / 48);
}

/* ---- the HTTP format ------------------------------------------------------------------------ */

static void test_http_format_predicts_body_size(void)
{
    const tw__http_format_vtable *vt = &tw__http_otlp_proto_format;
    CU_ASSERT_STRING_EQUAL(vt->content_type, "application/x-protobuf");
    CU_ASSERT_STRING_EQUAL(vt->name, "otlp-http-proto");
    tw__process p;
    tw__process_init(&p);
    CU_ASSERT_FATAL(tw__process_set_service(&p, "svc"));
    tw__http_format *f = vt->new_format();
    CU_ASSERT_FATAL(f != NULL);
    CU_ASSERT_EQUAL_FATAL(vt->open(f, &p, NULL), TW_OK);
    void *items[300];
    size_t total = 0;
    tw__buf body;
    tw__buf_init(&body);
    for (size_t n = 0; n < 300; n++) {
        tw__process unused;
        bool has;
        tw__span_data *s = corpus_span(5, n, &unused, &has, 0);
        size_t size = 0;
        items[n] = vt->encode(f, s, &size);
        CU_ASSERT_FATAL(items[n] != NULL);
        total += size;
        tw__span_data_unref(s);
        tw__process_clear(&unused);
        /* Sizes cross the 1-, 2- and 3-byte varint lengths of the envelopes. */
        CU_ASSERT_FATAL(vt->build(f, items, n + 1, 0, NULL, &body));
        CU_ASSERT_EQUAL(body.len, vt->body_size(f, n + 1, total));
    }
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(decode(&c, &body), TW__OTLP_PROTO_OK);
    CU_ASSERT_EQUAL(c.n_spans + c.n_rejects, 300);
    CU_ASSERT(c.n_spans > 0);
    CU_ASSERT_STRING_EQUAL(c.n_spans ? c.spans[0].process->service_name : "", "svc");
    capture_free(&c);
    for (size_t n = 0; n < 300; n++)
        vt->free_item(items[n]);
    vt->free_format(f);
    tw__buf_free(&body);
    tw__process_clear(&p);
}

static void test_reporter_option_selects_protobuf(void)
{
    tw_reporter_options *o = tw_reporter_options_new();
    CU_ASSERT_EQUAL(tw_reporter_options_set_otlp_protocol(o, (tw_otlp_protocol)7),
                    TW_E_INVALID_ARG);
    CU_ASSERT_EQUAL(tw_reporter_options_set_otlp_protocol(NULL, TW_OTLP_HTTP_PROTOBUF),
                    TW_E_INVALID_ARG);
    tw_error *err = NULL;
    tw_reporter *json = tw_reporter_otlp_http_new(o, &err);
    CU_ASSERT_EQUAL(tw_reporter_options_set_otlp_protocol(o, TW_OTLP_HTTP_PROTOBUF), TW_OK);
    tw_reporter *proto = tw_reporter_otlp_http_new(o, &err);
    CU_ASSERT_FATAL(json && proto);
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(json), "otlp-http");
    CU_ASSERT_STRING_EQUAL(tw_reporter_name(proto), "otlp-http-proto");
    tw_reporter_free(json);
    tw_reporter_free(proto);
    tw_reporter_options_free(o);
}

/* ---- hostile and broken input --------------------------------------------------------------- */

/* A request around @span_body (the fields of one Span), resource {service.name = "s"}. */
static void wrap_span(tw__buf *out, const tw__buf *span_body)
{
    tw__buf_reset(out);
    size_t rs = tw__pb_begin(out, 1);
    size_t res = tw__pb_begin(out, 1);
    size_t kv = tw__pb_begin(out, 1);
    tw__pb_string_field(out, 1, "service.name", 12, true);
    size_t any = tw__pb_begin(out, 2);
    tw__pb_string_field(out, 1, "s", 1, true);
    tw__pb_end(out, any);
    tw__pb_end(out, kv);
    tw__pb_end(out, res);
    size_t ss = tw__pb_begin(out, 2);
    tw__pb_bytes_field(out, 2, span_body->data, span_body->len);
    tw__pb_end(out, ss);
    CU_ASSERT_FATAL(tw__pb_end(out, rs));
}

/* A Span's id and time fields, valid. */
static void good_span_head(tw__buf *b)
{
    tw__buf_reset(b);
    tw__pb_id_field(b, 1, 0x0102030405060708u, 0x1112131415161718u, true);
    tw__pb_id_field(b, 2, 0, 0x2122232425262728u, false);
    tw__pb_string_field(b, 5, "op", 2, false);
    tw__pb_fixed64_field(b, 7, 1700000000000000000u);
    tw__pb_fixed64_field(b, 8, 1700000000001000400u);
}

/* Decodes @body; expects no span and one reject whose reason holds @needle. */
static void expect_reject(const tw__buf *body, const char *needle)
{
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(decode(&c, body), TW__OTLP_PROTO_OK);
    CU_ASSERT_EQUAL(c.n_spans, 0);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
    if (!strstr(c.rejects[0].reason, needle))
        fprintf(stderr, "reason \"%s\" lacks \"%s\"\n", c.rejects[0].reason, needle);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, needle));
    capture_free(&c);
}

static void test_a_good_span_decodes_with_every_rule(void)
{
    tw__buf span, body;
    tw__buf_init(&span);
    tw__buf_init(&body);
    good_span_head(&span);
    tw__pb_id_field(&span, 4, 0, 0x3132333435363738u, false); /* parent */
    tw__pb_varint_field(&span, 6, 2);                         /* SERVER */
    size_t st = tw__pb_begin(&span, 15);
    tw__pb_string_field(&span, 2, "boom", 4, false);
    tw__pb_varint_field(&span, 3, 2);
    tw__pb_end(&span, st);
    tw__pb_string_field(&span, 3, "k=v", 3, false); /* trace_state, after status: any order */
    wrap_span(&body, &span);
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(decode(&c, &body), TW__OTLP_PROTO_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    const tw__span_data *s = c.spans[0].data;
    CU_ASSERT_EQUAL(s->trace_id_high, 0x0102030405060708u);
    CU_ASSERT_EQUAL(s->trace_id_low, 0x1112131415161718u);
    CU_ASSERT_EQUAL(s->span_id, 0x2122232425262728u);
    CU_ASSERT_EQUAL(s->parent_id, 0x3132333435363738u);
    CU_ASSERT_EQUAL(s->start_us, 1700000000000000);
    CU_ASSERT_EQUAL(s->duration_us, 1000); /* 1000.4 µs rounds to 1000 */
    CU_ASSERT_STRING_EQUAL(s->operation, "op");
    CU_ASSERT_STRING_EQUAL(tw__tag_str(capture_tag(s, "span.kind")), "server");
    CU_ASSERT_STRING_EQUAL(tw__tag_str(capture_tag(s, "otel.status_description")), "boom");
    CU_ASSERT_STRING_EQUAL(tw__tag_str(capture_tag(s, "w3c.tracestate")), "k=v");
    CU_ASSERT_EQUAL(capture_tag(s, "error")->type, TW_VALUE_BOOL);
    CU_ASSERT_STRING_EQUAL(c.spans[0].process->service_name, "s");
    capture_free(&c);
    tw__buf_free(&span);
    tw__buf_free(&body);
}

static void test_scope_strings_keep_their_bytes(void)
{
    /* A scope name holding a NUL byte (found by the fuzz target): its 3 bytes, no more. */
    tw__buf span, body;
    tw__buf_init(&span);
    tw__buf_init(&body);
    good_span_head(&span);
    size_t rs = tw__pb_begin(&body, 1);
    size_t ss = tw__pb_begin(&body, 2);
    tw__pb_bytes_field(&body, 2, span.data, span.len);
    size_t scope = tw__pb_begin(&body, 1); /* the scope after the span: still its scope */
    tw__pb_bytes_field(&body, 1, "a\0b", 3);
    tw__pb_end(&body, scope);
    tw__pb_end(&body, ss);
    CU_ASSERT_FATAL(tw__pb_end(&body, rs));
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(decode(&c, &body), TW__OTLP_PROTO_OK);
    CU_ASSERT_EQUAL_FATAL(c.n_spans, 1);
    const tw__tag *t = capture_tag(c.spans[0].data, "otel.scope.name");
    CU_ASSERT(t && t->len == 3 && memcmp(t->v.str, "a\0b", 3) == 0);
    capture_free(&c);
    tw__buf_free(&span);
    tw__buf_free(&body);
}

static void test_nesting_is_bounded(void)
{
    /* attributes[0].value = [[[[...]]]] 5000 levels deep: 4 bytes per level. */
    tw__buf span, body, inner;
    tw__buf_init(&span);
    tw__buf_init(&body);
    tw__buf_init(&inner);
    for (int level = 0; level < 5000; level++) {
        tw__buf next;
        tw__buf_init(&next);
        size_t arr = tw__pb_begin(&next, 5); /* AnyValue.array_value */
        size_t val = tw__pb_begin(&next, 1); /* ArrayValue.values */
        tw__buf_append(&next, inner.data, inner.len);
        tw__pb_end(&next, val);
        CU_ASSERT_FATAL(tw__pb_end(&next, arr));
        tw__buf_free(&inner);
        inner = next;
    }
    good_span_head(&span);
    size_t kv = tw__pb_begin(&span, 9);
    tw__pb_string_field(&span, 1, "deep", 4, false);
    tw__pb_bytes_field(&span, 2, inner.data, inner.len);
    tw__pb_end(&span, kv);
    wrap_span(&body, &span);
    expect_reject(&body, "nested deeper than");
    tw__buf_free(&inner);
    tw__buf_free(&span);
    tw__buf_free(&body);
}

static void test_broken_spans_are_refused_with_reasons(void)
{
    tw__buf span, body;
    tw__buf_init(&span);
    tw__buf_init(&body);
    struct {
        int change;
        const char *needle;
    } cases[] = {
        {0, "span_id is 7 bytes, not 8"},
        {1, "trace_id is all zeros"},
        {2, "kind 9 is not a SpanKind"},
        {3, "start_time_unix_nano is missing or 0"},
        {4, "start_time_unix_nano is past the year 2262"},
        {5, "attributes has wire type 0 where its type needs 2"},
        {6, "runs past the end of its message"},
        {7, "span_id is 0 bytes, not 8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tw__buf_reset(&span);
        switch (cases[i].change) {
        case 0:
            tw__pb_id_field(&span, 1, 1, 1, true);
            tw__pb_bytes_field(&span, 2, "1234567", 7);
            tw__pb_fixed64_field(&span, 7, 5);
            break;
        case 1:
            tw__pb_bytes_field(&span, 1, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
            tw__pb_id_field(&span, 2, 0, 1, false);
            tw__pb_fixed64_field(&span, 7, 5);
            break;
        case 2:
            good_span_head(&span);
            tw__pb_varint_field(&span, 6, 9);
            break;
        case 3:
            tw__pb_id_field(&span, 1, 1, 1, true);
            tw__pb_id_field(&span, 2, 0, 1, false);
            break;
        case 4:
            tw__pb_id_field(&span, 1, 1, 1, true);
            tw__pb_id_field(&span, 2, 0, 1, false);
            tw__pb_fixed64_field(&span, 7, UINT64_MAX);
            break;
        case 5:
            good_span_head(&span);
            tw__pb_varint_field(&span, 9, 1); /* attributes as a varint */
            break;
        case 6:
            good_span_head(&span);
            tw__buf_append(&span, "\x4a\x7f\x0a", 3); /* a KeyValue of 127 bytes, 1 there */
            break;
        case 7: {
            good_span_head(&span);
            size_t l = tw__pb_begin(&span, 13);
            tw__pb_id_field(&span, 1, 1, 1, true);
            tw__pb_end(&span, l);
            break;
        }
        }
        wrap_span(&body, &span);
        expect_reject(&body, cases[i].needle);
    }
    tw__buf_free(&span);
    tw__buf_free(&body);
}

static void test_a_bad_span_costs_only_itself(void)
{
    tw__buf good, bad, body;
    tw__buf_init(&good);
    tw__buf_init(&bad);
    tw__buf_init(&body);
    good_span_head(&good);
    tw__pb_id_field(&bad, 1, 0, 7, false); /* a 64-bit trace id... */
    tw__pb_bytes_field(&bad, 2, "x", 1);   /* ...and a 1-byte span id */
    tw__buf_reset(&body);
    size_t rs = tw__pb_begin(&body, 1);
    size_t ss = tw__pb_begin(&body, 2);
    tw__pb_bytes_field(&body, 2, good.data, good.len);
    tw__pb_bytes_field(&body, 2, bad.data, bad.len);
    tw__pb_bytes_field(&body, 2, good.data, good.len);
    tw__pb_end(&body, ss);
    size_t res = tw__pb_begin(&body, 1); /* the resource after the spans: still theirs */
    size_t kv = tw__pb_begin(&body, 1);
    tw__pb_string_field(&body, 1, "service.name", 12, true);
    size_t any = tw__pb_begin(&body, 2);
    tw__pb_varint_field(&body, 3, 42); /* an int service name: its text */
    tw__pb_end(&body, any);
    tw__pb_end(&body, kv);
    tw__pb_end(&body, res);
    tw__pb_varint_field(&body, 999, 7); /* an unknown field */
    tw__pb_end(&body, rs);
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(decode(&c, &body), TW__OTLP_PROTO_OK);
    CU_ASSERT_EQUAL(c.n_spans, 2);
    CU_ASSERT_EQUAL_FATAL(c.n_rejects, 1);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(c.rejects[0].reason, "resource_spans[0].scope_spans[0].spans[1]"));
    if (!strstr(c.rejects[0].reason, "span_id is 1 bytes"))
        fprintf(stderr, "reason: %s\n", c.rejects[0].reason);
    CU_ASSERT_PTR_NOT_NULL(strstr(c.rejects[0].reason, "span_id is 1 bytes"));
    CU_ASSERT_EQUAL(c.rejects[0].raw_len, bad.len);
    CU_ASSERT_STRING_EQUAL(c.n_spans ? c.spans[0].process->service_name : "", "42");
    capture_free(&c);
    tw__buf_free(&good);
    tw__buf_free(&bad);
    tw__buf_free(&body);
}

static void test_truncated_request_is_refused_from_the_bad_byte(void)
{
    tw__span_data *s = tw_test_span_every_field();
    tw__buf b;
    tw__buf_init(&b);
    CU_ASSERT_FATAL(tw__otlp_proto_encode_request(&s, 1, NULL, &b));
    for (size_t cut = 1; cut < b.len; cut += 7) {
        tw__buf part = {b.data, cut, cut};
        read_capture c;
        capture_init(&c);
        CU_ASSERT_EQUAL(decode(&c, &part), TW__OTLP_PROTO_OK);
        CU_ASSERT_EQUAL(c.n_spans, 0);
        CU_ASSERT_EQUAL(c.n_rejects, 1);
        CU_ASSERT(c.n_rejects == 1 && strstr(c.rejects[0].reason, "byte ") != NULL);
        capture_free(&c);
    }
    tw__buf_free(&b);
    tw__span_data_unref(s);
}

static void test_arena_refuses_past_its_budget(void)
{
    tw__span_data *s = tw_test_span_every_field();
    tw__buf b;
    tw__buf_init(&b);
    CU_ASSERT_FATAL(tw__otlp_proto_encode_span(s, &b));
    /* The Span message is the payload of the `spans` field just written. */
    tw__pb_field f;
    size_t pos = 0;
    const char *reason;
    CU_ASSERT_FATAL(tw__pb_next_field(b.data, b.len, &pos, &f, &reason) == TW__PB_NEXT_FIELD);
    tw__pb_arena a;
    tw__pb_arena_init(&a);
    a.budget_bytes = 64;
    ProtobufCMessage *m = protobuf_c_message_unpack(
        &opentelemetry__proto__trace__v1__span__descriptor, &a.allocator, f.len, f.data);
    CU_ASSERT_PTR_NULL(m);
    CU_ASSERT(a.is_over_budget);
    tw__pb_arena_reset(&a);
    char why[200];
    bool is_nomem;
    m = tw__pb_unpack(&opentelemetry__proto__trace__v1__span__descriptor, &a, f.data, f.len, 16, 0,
                      why, sizeof why, &is_nomem, NULL);
    CU_ASSERT_PTR_NOT_NULL(m);
    CU_ASSERT(a.used_bytes > 0 && a.used_bytes <= TW__PB_BUDGET(f.len));
    tw__pb_arena_free(&a);
    tw__buf_free(&b);
    tw__span_data_unref(s);
}

static void test_detects_both_framings(void)
{
    tw__span_data *s = tw_test_span_every_field();
    tw__process p;
    tw__process_init(&p);
    tw_value v = tw_test_str("x");
    CU_ASSERT_FATAL(tw__process_set_service(&p, "svc") && tw__process_add_tag(&p, "k", &v));
    tw__buf b, framed;
    tw__buf_init(&b);
    tw__buf_init(&framed);
    CU_ASSERT_FATAL(tw__otlp_proto_encode_request(&s, 1, &p, &b));
    uint8_t len4[4] = {(uint8_t)(b.len >> 24), (uint8_t)(b.len >> 16), (uint8_t)(b.len >> 8),
                       (uint8_t)b.len};
    tw__buf_append(&framed, len4, 4);
    tw__buf_append(&framed, b.data, b.len);
    bool is_framed;
    CU_ASSERT(tw__otlp_proto_sniff(b.data, b.len, &is_framed) >= 80);
    CU_ASSERT_FALSE(is_framed);
    CU_ASSERT(tw__otlp_proto_sniff(framed.data, framed.len, &is_framed) >= 80);
    CU_ASSERT(is_framed);
    CU_ASSERT_EQUAL(tw__otlp_proto_sniff((const uint8_t *)"{\"resourceSpans\":[]}", 20, &is_framed),
                    0);
    /* The command's reader takes both, and two frames in a row. */
    tw__buf_append(&framed, len4, 4);
    tw__buf_append(&framed, b.data, b.len);
    read_capture c;
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_otlp_proto, framed.data, framed.len), TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 2);
    CU_ASSERT_EQUAL(c.n_rejects, 0);
    capture_free(&c);
    capture_init(&c);
    CU_ASSERT_EQUAL(capture_read_mem(&c, &twb_reader_otlp_proto, b.data, b.len), TW_OK);
    CU_ASSERT_EQUAL(c.n_spans, 1);
    capture_free(&c);
    tw__buf_free(&b);
    tw__buf_free(&framed);
    tw__process_clear(&p);
    tw__span_data_unref(s);
}

/* Microseconds written into the nanosecond fields (a common exporter bug): both
 * encodings' readers take the span's unit from its start's magnitude, say so, and
 * read the same times. */
static void test_times_in_microseconds_are_read_by_magnitude(void)
{
    tw__span_data *s = tw_test_span_every_field();
    /* Written as ns = us * 1000: the fields then hold 2023 in microseconds. */
    s->start_us = INT64_C(1700000000000);
    s->duration_us = 5000;
    for (size_t i = 0; i < s->n_logs; i++)
        s->logs[i].timestamp_us = s->start_us + 1000;
    tw__buf js, pb;
    tw__buf_init(&js);
    tw__buf_init(&pb);
    CU_ASSERT_FATAL(tw__otlp_encode_request(&s, 1, NULL, &js));
    CU_ASSERT_FATAL(tw__otlp_proto_encode_request(&s, 1, NULL, &pb));
    read_capture a, b;
    capture_init(&a);
    capture_init(&b);
    CU_ASSERT_EQUAL(capture_read_mem(&a, &twb_reader_otlp_json, js.data, js.len), TW_OK);
    CU_ASSERT_EQUAL(capture_read_mem(&b, &twb_reader_otlp_proto, pb.data, pb.len), TW_OK);
    CU_ASSERT_FATAL(a.n_spans == 1 && b.n_spans == 1);
    for (int k = 0; k < 2; k++) {
        const read_capture *c = k ? &b : &a;
        const tw__span_data *got = c->spans[0].data;
        CU_ASSERT_EQUAL(got->start_us, INT64_C(1700000000000000));
        CU_ASSERT_EQUAL(got->duration_us, 5000000);
        for (size_t i = 0; i < got->n_logs; i++)
            CU_ASSERT_EQUAL(got->logs[i].timestamp_us, INT64_C(1700000001000000));
        CU_ASSERT(c->n_warnings == 1 && strstr(c->last_warning, "by their magnitude"));
    }
    capture_free(&a);
    capture_free(&b);
    tw__buf_free(&js);
    tw__buf_free(&pb);
    tw__span_data_unref(s);
}

/* ---- the one-step KeyValue == the general reading ----------------------------------------- */

/* Decodes @body with the one-step KeyValue reading off, then on: the same
 * spans, processes and rejects (with their reasons) both ways. */
static bool decodes_alike(const tw__buf *body)
{
    read_capture slow, fast;
    capture_init(&slow);
    capture_init(&fast);
    tw__otlp_proto_set_common_kv(false);
    tw__otlp_proto_status a = decode(&slow, body);
    tw__otlp_proto_set_common_kv(true);
    tw__otlp_proto_status b = decode(&fast, body);
    bool same = a == b && slow.n_spans == fast.n_spans && slow.n_rejects == fast.n_rejects;
    for (size_t i = 0; same && i < slow.n_spans; i++)
        same = tw_test_spans_equal(slow.spans[i].data, fast.spans[i].data) &&
               capture_processes_equal(slow.spans[i].process, fast.spans[i].process);
    for (size_t i = 0; same && i < slow.n_rejects; i++)
        same = strcmp(slow.rejects[i].reason, fast.rejects[i].reason) == 0;
    capture_free(&slow);
    capture_free(&fast);
    return same;
}

/* KeyValues in and around the layout the one-step reading takes (keys with
 * a NUL, of 0 to 128 bytes; every AnyValue member, empty, cut, doubled,
 * with wrong wire types and lengths; fields out of order or unknown), as a
 * span's attribute, an event's and the resource's: read as the general
 * reading reads them. */
static void test_common_key_values_read_as_the_general_reading(void)
{
    static const char key_128[] =
        "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk"
        "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk";
    static const struct {
        const char *bytes;
        size_t len;
    } keys[] = {{"k", 1},       {"", 0},        {"a\0b", 3},   {"\0", 1},
                {key_128, 120}, {key_128, 127}, {key_128, 128}};
    char text[140];
    memset(text, 'v', sizeof text);
    /* AnyValue bodies (field bytes): NULL length -1 marks the text ones built below. */
    static const struct {
        const char *bytes;
        size_t len;
    } anys[] = {
        {"", 0},
        {"\x0a\x00", 2},
        {"\x0a\x03"
         "abc",
         5},
        {"\x0a\x04"
         "abc",
         5}, /* cut */
        {"\x0a\x02"
         "abc",
         5}, /* a byte after */
        {"\x10\x01", 2},
        {"\x10\x00", 2},
        {"\x10\x80\x01", 3},
        {"\x18\x7f", 2},
        {"\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 11}, /* -1 */
        {"\x18\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 11}, /* over 64 bits */
        {"\x18\x80", 2},                                      /* cut varint */
        {"\x21"
         "\x00\x00\x00\x00\x00\x00\xe0\x3f",
         9},
        {"\x21"
         "\x00\x00\x00\x00\x00\x00\xf0\x7f",
         9}, /* infinity */
        {"\x21"
         "\x00\x00\x00\x00\x00\x00\xe0",
         8}, /* cut */
        {"\x3a\x02\x00\xff", 4},
        {"\x3a\x00", 2},
        {"\x2a\x00", 2},     /* an empty array */
        {"\x32\x00", 2},     /* an empty kvlist */
        {"\x08\x01", 2},     /* string_value as a varint */
        {"\x12\x01\x00", 3}, /* bool_value as bytes */
        {"\x0a\x01"
         "a"
         "\x18\x05",
         5},             /* two members: the last wins */
        {"\x48\x01", 2}, /* an unknown field */
        {"\x0a\x01"
         "a"
         "\x48\x01",
         5},                 /* a member and an unknown field */
        {"\x0a\x80\x01", 3}, /* a long length, cut */
        {"\x07", 1},         /* a bad wire type */
    };
    size_t n_differ = 0, n_common = 0, n_cases = 0;
    tw__buf kv, span, attr, body;
    tw__buf_init(&kv);
    tw__buf_init(&span);
    tw__buf_init(&attr);
    tw__buf_init(&body);
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        for (size_t a = 0; a < sizeof anys / sizeof anys[0] + 4; a++) {
            uint8_t any_bytes[160];
            size_t any_len;
            if (a < sizeof anys / sizeof anys[0]) {
                memcpy(any_bytes, anys[a].bytes, anys[a].len);
                any_len = anys[a].len;
            } else {
                /* Strings making the value 127, 128 and 129 bytes, and 125. */
                static const size_t text_lens[] = {125, 126, 127, 123};
                size_t n = text_lens[a - sizeof anys / sizeof anys[0]];
                tw__buf b;
                tw__buf_init(&b);
                tw__pb_string_field(&b, 1, text, n, true);
                memcpy(any_bytes, b.data, b.len);
                any_len = b.len;
                tw__buf_free(&b);
            }
            for (int layout = 0; layout < 6; layout++) {
                tw__buf_reset(&kv);
                if (layout == 1) /* the value first */
                    tw__pb_bytes_field(&kv, 2, any_bytes, any_len);
                if (layout == 4) /* the key as a varint: not a KeyValue */
                    tw__pb_raw_varint(&kv, TW__PB_TAG(1, TW__PB_VARINT)), tw__pb_raw_varint(&kv, 3);
                tw__pb_bytes_field(&kv, 1, (const uint8_t *)keys[k].bytes, keys[k].len);
                if (layout != 1 && layout != 3)
                    tw__pb_bytes_field(&kv, 2, any_bytes, any_len);
                if (layout == 2) /* the value twice: merged */
                    tw__pb_bytes_field(&kv, 2, (const uint8_t *)"\x18\x09", 2);
                if (layout == 5) /* an unknown field after */
                    tw__pb_raw_varint(&kv, TW__PB_TAG(9, TW__PB_VARINT)), tw__pb_raw_varint(&kv, 1);
                const char *ck;
                size_t ck_len;
                tw_value cv;
                n_common += tw__otlp_proto_key_value_common(kv.data, kv.len, &ck, &ck_len, &cv);
                for (int where = 0; where < 3; where++) {
                    good_span_head(&span);
                    if (where == 0) {
                        tw__pb_bytes_field(&span, 9, kv.data, kv.len);
                    } else {
                        /* An event's attribute; a link's (read by its own rule). */
                        tw__buf_reset(&attr);
                        if (where == 1) {
                            tw__pb_fixed64_field(&attr, 1, 1700000000000500000u);
                            tw__pb_bytes_field(&attr, 3, kv.data, kv.len);
                            tw__pb_bytes_field(&span, 11, attr.data, attr.len);
                        } else {
                            tw__pb_id_field(&attr, 1, 1, 2, true);
                            tw__pb_id_field(&attr, 2, 0, 3, false);
                            tw__pb_bytes_field(&attr, 4, kv.data, kv.len);
                            tw__pb_bytes_field(&span, 13, attr.data, attr.len);
                        }
                    }
                    wrap_span(&body, &span);
                    n_cases++;
                    if (!decodes_alike(&body)) {
                        fprintf(stderr, "key %zu value %zu layout %d in %d: read differently\n", k,
                                a, layout, where);
                        n_differ++;
                    }
                }
            }
        }
    }
    fprintf(stderr, "otlp_proto: %zu of %zu KeyValues taken in one step, all read alike\n",
            n_common, n_cases / 3);
    CU_ASSERT(n_common > 60); /* layout 0 with a valid scalar or string */
    CU_ASSERT_EQUAL(n_differ, 0);
    tw__buf_free(&kv);
    tw__buf_free(&span);
    tw__buf_free(&attr);
    tw__buf_free(&body);
}

/* The random corpus through the reader, the one-step KeyValue off and on. */
static void test_corpus_reads_alike_with_the_common_key_value(void)
{
    size_t n_differ = 0;
    tw__buf b;
    tw__buf_init(&b);
    for (size_t i = 0; i < 2000; i++) {
        tw__process p;
        bool has_process;
        tw__span_data *s = corpus_span(13, i, &p, &has_process, CORPUS_INVALID_KEYS);
        CU_ASSERT_FATAL(s != NULL);
        tw__buf_reset(&b);
        CU_ASSERT_FATAL(tw__otlp_proto_encode_request(&s, 1, has_process ? &p : NULL, &b));
        n_differ += !decodes_alike(&b);
        tw__span_data_unref(s);
        tw__process_clear(&p);
    }
    tw__buf_free(&b);
    CU_ASSERT_EQUAL(n_differ, 0);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("wire/otlp_proto", NULL, NULL);
    CU_add_test(suite, "builder_spans_match_protobuf_c", test_builder_spans_match_protobuf_c);
    CU_add_test(suite, "random_corpus_matches_protobuf_c", test_random_corpus_matches_protobuf_c);
    CU_add_test(suite, "length_prefixes_and_strings_match_protobuf_c",
                test_length_prefixes_and_strings_match_protobuf_c);
    CU_add_test(suite, "key_values_around_128_bytes_match_protobuf_c",
                test_key_values_around_128_bytes_match_protobuf_c);
    CU_add_test(suite, "json_and_protobuf_read_back_equal", test_json_and_protobuf_read_back_equal);
    CU_add_test(suite, "reader_matches_protobuf_c_unpack", test_reader_matches_protobuf_c_unpack);
    CU_add_test(suite, "http_format_predicts_body_size", test_http_format_predicts_body_size);
    CU_add_test(suite, "reporter_option_selects_protobuf", test_reporter_option_selects_protobuf);
    CU_add_test(suite, "a_good_span_decodes_with_every_rule",
                test_a_good_span_decodes_with_every_rule);
    CU_add_test(suite, "scope_strings_keep_their_bytes", test_scope_strings_keep_their_bytes);
    CU_add_test(suite, "nesting_is_bounded", test_nesting_is_bounded);
    CU_add_test(suite, "broken_spans_are_refused_with_reasons",
                test_broken_spans_are_refused_with_reasons);
    CU_add_test(suite, "a_bad_span_costs_only_itself", test_a_bad_span_costs_only_itself);
    CU_add_test(suite, "truncated_request_is_refused_from_the_bad_byte",
                test_truncated_request_is_refused_from_the_bad_byte);
    CU_add_test(suite, "arena_refuses_past_its_budget", test_arena_refuses_past_its_budget);
    CU_add_test(suite, "detects_both_framings", test_detects_both_framings);
    CU_add_test(suite, "common_key_values_read_as_the_general_reading",
                test_common_key_values_read_as_the_general_reading);
    CU_add_test(suite, "corpus_reads_alike_with_the_common_key_value",
                test_corpus_reads_alike_with_the_common_key_value);
    CU_add_test(suite, "times_in_microseconds_are_read_by_magnitude",
                test_times_in_microseconds_are_read_by_magnitude);
}
