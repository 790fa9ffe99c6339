/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_jaeger_json.c: libFuzzer target for the jaeger-json decoder
 * (sdk/wire/jaeger/jaeger_json_decode.c) and encoder (jaeger_json_encode.c).
 * Any bytes: the reader never crashes, leaks or hangs; each reject has a
 * reason; each span has non-zero ids. What it reads is written and read
 * again: the second reading rejects nothing and gives the same spans, by
 * trace id, span id and parent (the writer groups spans by trace, so their
 * order changes: they are compared as sorted sets, not by position); and
 * the writer's form is canonical: writing the second reading and reading
 * and writing that once more gives the same bytes. The writer's tag lists
 * (tw__jaeger_json_put_tags, with its own fast path) are the bytes of the
 * shared tw__json_put_typed_tag for every tag list read.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in tests/fuzz/corpus/jaeger_json/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"
#include "wire/core/json_write.h"
#include "wire/jaeger/jaeger_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_jaeger_json: %s\n", what);
    abort();
}

static char *write_all(const read_capture *c, size_t *len)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, len);
    if (!out)
        abort();
    twb_writer *w = twb_writer_jaeger_json.new_writer(out, NULL, NULL);
    if (!w || twb_writer_jaeger_json.write(w, c->spans, c->n_spans, NULL) != TW_OK ||
        twb_writer_jaeger_json.finish(w, NULL) != TW_OK)
        fail("the writer failed");
    twb_writer_jaeger_json.free_writer(w);
    fclose(out);
    return text;
}

static void read_clean(read_capture *c, const char *text, size_t len)
{
    capture_init(c);
    if (capture_read_mem(c, &twb_reader_jaeger_json, text, len) != TW_OK || c->n_rejects)
        fail("the writer's output does not read back cleanly");
}

/* What a round trip must keep of a span. */
typedef struct {
    uint64_t trace_high, trace_low, span_id, parent_id;
} span_key;

static int by_key(const void *a, const void *b)
{
    const span_key *x = a, *y = b;
    uint64_t xs[4] = {x->trace_high, x->trace_low, x->span_id, x->parent_id};
    uint64_t ys[4] = {y->trace_high, y->trace_low, y->span_id, y->parent_id};
    for (int i = 0; i < 4; i++) {
        if (xs[i] != ys[i])
            return xs[i] < ys[i] ? -1 : 1;
    }
    return 0;
}

/* The spans' keys, sorted (free them). */
static span_key *sorted_keys(const read_capture *c)
{
    span_key *keys = malloc((c->n_spans ? c->n_spans : 1) * sizeof *keys);
    if (!keys)
        abort();
    for (size_t i = 0; i < c->n_spans; i++) {
        const tw__span_data *s = c->spans[i].data;
        keys[i] = (span_key){s->trace_id_high, s->trace_id_low, s->span_id, s->parent_id};
    }
    qsort(keys, c->n_spans, sizeof *keys, by_key);
    return keys;
}

/* The tag list writer against the shared typed-tag writer, byte for byte. */
static void check_tags(const tw__tag *tags, size_t n)
{
    tw__buf fast = {0}, ref = {0};
    bool ok = tw__buf_put_byte(&ref, '[');
    for (size_t i = 0; ok && i < n; i++)
        ok = (i == 0 || tw__buf_put_byte(&ref, ',')) && tw__json_put_typed_tag(&ref, &tags[i]);
    ok = ok && tw__buf_put_byte(&ref, ']');
    bool fast_ok = tw__jaeger_json_put_tags(&fast, tags, n);
    if (ok && fast_ok && (fast.len != ref.len || memcmp(fast.data, ref.data, ref.len) != 0))
        fail("the tag list writer and the shared typed-tag writer differ");
    tw__buf_free(&fast);
    tw__buf_free(&ref);
}

static void check_all_tags(const read_capture *c)
{
    for (size_t i = 0; i < c->n_spans; i++) {
        const tw__span_data *s = c->spans[i].data;
        check_tags(s->tags, s->n_tags);
        for (size_t k = 0; k < s->n_logs; k++)
            check_tags(s->logs[k].fields, s->logs[k].n_fields);
        if (c->spans[i].process)
            check_tags(c->spans[i].process->tags, c->spans[i].process->n_tags);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_capture first, second, third;
    capture_init(&first);
    tw_status st = capture_read_mem(&first, &twb_reader_jaeger_json, data, size);
    if (st != TW_OK && st != TW_E_NOMEM)
        fail("the reader failed on a readable stream");
    for (size_t i = 0; i < first.n_rejects; i++) {
        if (!first.rejects[i].reason[0])
            fail("a reject without a reason");
    }
    check_all_tags(&first);
    size_t len1, len2, len3;
    char *text1 = write_all(&first, &len1);
    read_clean(&second, text1, len1);
    if (second.n_spans != first.n_spans)
        fail("the round trip changed the number of spans");
    for (size_t i = 0; i < second.n_spans; i++) {
        if (!first.spans[i].data->span_id || second.spans[i].data->start_us <= 0)
            fail("a span id of 0, or a start time of 0 after the round trip");
    }
    span_key *keys1 = sorted_keys(&first), *keys2 = sorted_keys(&second);
    for (size_t i = 0; i < first.n_spans; i++) {
        if (by_key(&keys1[i], &keys2[i]) != 0)
            fail("the round trip changed ids or parents");
    }
    free(keys1);
    free(keys2);
    char *text2 = write_all(&second, &len2);
    read_clean(&third, text2, len2);
    char *text3 = write_all(&third, &len3);
    if (len2 != len3 || memcmp(text2, text3, len2) != 0)
        fail("the writer's form is not canonical");
    free(text1);
    free(text2);
    free(text3);
    capture_free(&first);
    capture_free(&second);
    capture_free(&third);
    return 0;
}
