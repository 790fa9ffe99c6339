/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_jaeger_json.c: libFuzzer target for the jaeger-json reader
 * (bridge/readers/jaeger_json.c) and writer (bridge/sinks/jaeger_json.c).
 * Any bytes: the reader never crashes, leaks or hangs; each reject has a
 * reason; each span has non-zero ids. What it reads is written and read
 * again: the second reading rejects nothing and gives as many spans with
 * the same ids and parents; and the writer's form is canonical: writing the
 * second reading and reading and writing that once more gives the same bytes.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in tests/fuzz/corpus/jaeger_json/.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"

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
    size_t len1, len2, len3;
    char *text1 = write_all(&first, &len1);
    read_clean(&second, text1, len1);
    if (second.n_spans != first.n_spans)
        fail("the round trip changed the number of spans");
    for (size_t i = 0; i < first.n_spans; i++) {
        const tw__span_data *a = first.spans[i].data, *b = second.spans[i].data;
        if (!a->span_id || a->trace_id_high != b->trace_id_high ||
            a->trace_id_low != b->trace_id_low || a->span_id != b->span_id ||
            a->parent_id != b->parent_id || b->start_us <= 0)
            fail("the round trip changed ids or parents, or left a start time of 0");
    }
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
