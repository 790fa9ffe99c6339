/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_zipkin_v2_json.c: libFuzzer target for the zipkin-v2-json
 * reader (sdk/wire/zipkin/zipkin_v2_json_decode.c) and, on what it reads, the
 * zipkin-v1-json writer (sdk/wire/zipkin/zipkin_v1_json_encode.c). Any bytes: the
 * reader never crashes, leaks or hangs; each reject has a reason; each span
 * has non-zero trace and span ids; and the writer turns the spans into one
 * JSON array with exactly one v1 span per span read, each with the same id.
 *
 * The reader scans records with wire/core/json_scan.c and leaves only what
 * the scanner refuses to Jansson, so the scanner is also held to Jansson
 * here, on the whole input as one text: it reads a text exactly when
 * Jansson (duplicate keys refused, NUL allowed) reads it as an object or
 * array, and then with the same values (the tokens of Jansson's compact
 * dump, scanned again, equal the scanner's own).
 *
 * The decoder's 16-digit id readers (tw__hex16, and tw__jd_hex16 of the
 * direct reader) are held to tw__parse_hex on the input's first 16 bytes:
 * the same verdict and value.
 *
 * The direct reader (zipkin_v2_json_direct.c) that the decoder tries first
 * on each record is held to the token path: the input read without it
 * (tw__zipkin_v2_json_read) gives the same spans, processes, rejects and
 * warnings. And what it takes of the input's start is one object that
 * Jansson and the scanner read alike, ending where the scanner ends it; and
 * its endpoint memo (texts kept from inputs before, and from the same input
 * read again) changes nothing it takes.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/zipkin_v2_json/.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"
#include "wire/core/hex.h"
#include "wire/core/json_scan.h"
#include "wire/core/json_stream.h"
#include "wire/zipkin/zipkin_v2_json_decode.h"
#include "wire/zipkin/zipkin_v2_json_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_zipkin_v2_json: %s\n", what);
    abort();
}

static bool same_tokens(const tw__json_scan *a, const tw__json_scan *b)
{
    if (a->n_tok != b->n_tok)
        return false;
    for (size_t i = 0; i < a->n_tok; i++) {
        const tw__jtok *x = &a->tok[i], *y = &b->tok[i];
        if (x->type != y->type || x->end != y->end)
            return false;
        switch (x->type) {
        case TW__J_STRING:
            if (x->len != y->len || memcmp(x->v.str, y->v.str, x->len) != 0)
                return false;
            break;
        case TW__J_INTEGER:
            if (x->v.i != y->v.i)
                return false;
            break;
        case TW__J_REAL:
            if (memcmp(&x->v.d, &y->v.d, sizeof x->v.d) != 0)
                return false;
            break;
        case TW__J_OBJECT:
        case TW__J_ARRAY:
            if (x->n != y->n)
                return false;
            break;
        default:
            break;
        }
    }
    return true;
}

/* The scanner against Jansson on @data as one JSON text. */
static void check_scanner(const uint8_t *data, size_t size)
{
    if (memchr(data, 0, size))
        return; /* the scanner's callers never hand it a NUL byte */
    tw__json_scan *direct = malloc(sizeof *direct), *dumped = malloc(sizeof *dumped);
    if (!direct || !dumped)
        abort();
    tw__json_scan_init(direct);
    tw__json_scan_init(dumped);
    direct->max_depth = TW__JSON_SCAN_DEEPEST;
    bool is_scanned = tw__json_scan_parse(direct, (const char *)data, size);
    json_t *v = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
    if (is_scanned != (v != NULL))
        fail(is_scanned ? "the scanner read a text Jansson refuses"
                        : "the scanner refused a text Jansson reads");
    if (v && (!tw__json_scan_value(dumped, v) || !same_tokens(direct, dumped)))
        fail("the scanner and Jansson read different values");
    json_decref(v);
    tw__json_scan_free(direct);
    tw__json_scan_free(dumped);
    free(direct);
    free(dumped);
}

/* The decoder's id fast path against the general hex parser. */
static void check_hex16(const uint8_t *data, size_t size)
{
    if (size < 16)
        return;
    uint64_t fast = 0, slow = 0;
    bool is_fast = tw__hex16((const char *)data, &fast);
    bool is_slow =
        tw__parse_hex((const char *)data, 16, 16, false, NULL, &slow, NULL) == TW__HEX_OK;
    if (is_fast != is_slow || (is_fast && fast != slow))
        fail("tw__hex16 and tw__parse_hex disagree");
    uint64_t wide = 0;
    bool is_wide = tw__jd_hex16((const char *)data, &wide);
    if (is_wide != is_slow || (is_wide && wide != slow))
        fail("tw__jd_hex16 and tw__parse_hex disagree");
}

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

/* Two readings of one text by the direct reader: the same in every member. */
static bool same_direct(const tw__z2d_span *a, const tw__z2d_span *b)
{
    if (!same_str(&a->trace_id, &b->trace_id) || !same_str(&a->id, &b->id) ||
        !same_str(&a->parent_id, &b->parent_id) || !same_str(&a->name, &b->name) ||
        !same_str(&a->kind, &b->kind) || a->has_timestamp != b->has_timestamp ||
        a->has_duration != b->has_duration || (a->has_timestamp && a->timestamp != b->timestamp) ||
        (a->has_duration && a->duration != b->duration) || a->debug != b->debug ||
        a->shared != b->shared || a->has_local != b->has_local || a->has_remote != b->has_remote ||
        !same_endpoint(&a->local, &b->local) || !same_endpoint(&a->remote, &b->remote) ||
        !same_str(&a->local_text, &b->local_text) || !same_str(&a->remote_text, &b->remote_text) ||
        a->n_tags != b->n_tags || a->n_annotations != b->n_annotations)
        return false;
    for (size_t i = 0; i < a->n_tags; i++) {
        if (!same_str(&a->tags[i].key, &b->tags[i].key) ||
            !same_str(&a->tags[i].value, &b->tags[i].value))
            return false;
    }
    for (size_t i = 0; i < a->n_annotations; i++) {
        if (a->annotations[i].timestamp != b->annotations[i].timestamp ||
            !same_str(&a->annotations[i].value, &b->annotations[i].value))
            return false;
    }
    return true;
}

/* The direct reader with its endpoint memo against it without: @data read
 * with a memo kept from input to input (texts of inputs before kept), then
 * again (this input's endpoints kept), each the same as without one. */
static bool check_direct_memo(const uint8_t *data, size_t size, tw__z2d_span *plain, bool taken,
                              size_t used)
{
    static tw__z2d_memo memo;
    static tw__z2d_span span;
    for (int round = 0; round < 2; round++) {
        char scratch[4096];
        tw__jd_scratch sc = {scratch, 0, sizeof scratch};
        size_t memo_used = 0;
        bool memo_taken =
            tw__zipkin_v2_direct_parse((const char *)data, size, &sc, &memo, &span, &memo_used);
        if (memo_taken != taken || (taken && (memo_used != used || !same_direct(&span, plain))))
            return false;
    }
    return true;
}

/* What the direct reader takes of @data's start: an object Jansson reads
 * (duplicate keys refused) and the scanner reads to the same end; and the
 * same with its endpoint memo. */
static void check_direct_parse(const uint8_t *data, size_t size)
{
    static tw__z2d_span span;
    char scratch[4096];
    tw__jd_scratch sc = {scratch, 0, sizeof scratch};
    size_t used = 0;
    bool taken = tw__zipkin_v2_direct_parse((const char *)data, size, &sc, NULL, &span, &used);
    if (!check_direct_memo(data, size, &span, taken, used))
        fail("the direct reader reads a text apart with its endpoint memo");
    if (!taken)
        return;
    if (used == 0 || used > size)
        fail("the direct reader took bytes it was not given");
    json_t *v = json_loadb((const char *)data, used, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, NULL);
    if (!json_is_object(v))
        fail("the direct reader took a text Jansson does not read as an object");
    json_decref(v);
    tw__json_scan *scan = malloc(sizeof *scan);
    if (!scan)
        abort();
    tw__json_scan_init(scan);
    scan->max_depth = TW__JSON_SCAN_DEEPEST;
    size_t scanned = 0;
    if (!memchr(data, 0, used) &&
        (!tw__json_scan_parse_prefix(scan, (const char *)data, size, &scanned) || scanned != used))
        fail("the direct reader and the scanner end an object apart");
    tw__json_scan_free(scan);
    free(scan);
}

/* model_equal.h's span equality, and what it leaves out that the reader
 * sets. */
static bool same_span(const tw__span_data *a, const tw__span_data *b)
{
    return tw_test_spans_equal(a, b) && a->shared == b->shared &&
           a->is_duration_unknown == b->is_duration_unknown && a->operation_len == b->operation_len;
}

static bool same_process(const tw__process *a, const tw__process *b)
{
    if ((a->service_name == NULL) != (b->service_name == NULL) ||
        (a->service_name && strcmp(a->service_name, b->service_name) != 0))
        return false;
    return tw_test_tags_equal(a->tags, a->n_tags, b->tags, b->n_tags);
}

/* The input read without the direct reader (the token path only) against
 * @c, read with it. */
static void check_token_path(const read_capture *c, tw_status st, const uint8_t *data, size_t size)
{
    read_capture t;
    capture_init(&t);
    FILE *f = size ? fmemopen((void *)data, size, "r") : fopen("/dev/null", "r");
    if (!f)
        abort();
    tw_error *err = NULL;
    tw_status tst = tw__zipkin_v2_json_read(f, &t.in, false, &err);
    tw_error_free(err);
    fclose(f);
    if (st == TW_E_NOMEM || tst == TW_E_NOMEM) {
        capture_free(&t);
        return; /* one way ran out of memory: nothing to compare */
    }
    if (tst != st || t.n_spans != c->n_spans || t.n_rejects != c->n_rejects ||
        t.n_warnings != c->n_warnings || t.n_date_warnings != c->n_date_warnings ||
        strcmp(t.last_warning, c->last_warning) != 0)
        fail("the direct and token ways read different counts or warnings");
    for (size_t i = 0; i < c->n_spans; i++) {
        if (!same_span(c->spans[i].data, t.spans[i].data) ||
            !same_process(c->spans[i].process, t.spans[i].process))
            fail("the direct and token ways read a span differently");
    }
    for (size_t i = 0; i < c->n_rejects; i++) {
        const read_reject *x = &c->rejects[i], *y = &t.rejects[i];
        if (x->line_no != y->line_no || strcmp(x->reason, y->reason) != 0 ||
            x->raw_len != y->raw_len || memcmp(x->raw, y->raw, x->raw_len) != 0)
            fail("the direct and token ways reject differently");
    }
    capture_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_hex16(data, size);
    check_scanner(data, size);
    check_direct_parse(data, size);
    read_capture c;
    capture_init(&c);
    tw_status st = capture_read_mem(&c, &twb_reader_zipkin_v2_json, data, size);
    if (st != TW_OK && st != TW_E_NOMEM)
        fail("the reader failed on a readable stream");
    check_token_path(&c, st, data, size);
    for (size_t i = 0; i < c.n_rejects; i++) {
        if (!c.rejects[i].reason[0])
            fail("a reject without a reason");
    }
    for (size_t i = 0; i < c.n_spans; i++) {
        const tw__span_data *s = c.spans[i].data;
        if (!s->span_id || (!s->trace_id_high && !s->trace_id_low) || s->parent_id == s->span_id)
            fail("a span with a zero id or a circular parent");
    }

    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    if (!out)
        abort();
    twb_writer *w = twb_writer_zipkin_v1_json.new_writer(out, NULL, NULL);
    if (!w || twb_writer_zipkin_v1_json.write(w, c.spans, c.n_spans, NULL) != TW_OK ||
        twb_writer_zipkin_v1_json.finish(w, NULL) != TW_OK)
        fail("the v1 writer failed");
    twb_writer_zipkin_v1_json.free_writer(w);
    fclose(out);
    json_t *doc = json_loadb(text, text_len, JSON_ALLOW_NUL, NULL);
    if (!json_is_array(doc) || json_array_size(doc) != c.n_spans)
        fail("the v1 output is not one array of the spans read");
    for (size_t i = 0; i < c.n_spans; i++) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)c.spans[i].data->span_id);
        const char *id = json_string_value(json_object_get(json_array_get(doc, i), "id"));
        if (!id || strcmp(id, hex) != 0)
            fail("a v1 span lost its id");
    }
    json_decref(doc);
    free(text);
    capture_free(&c);
    return 0;
}
