/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_zipkin_v2_json.c: libFuzzer target for the zipkin-v2-json
 * reader (sdk/wire/zipkin/zipkin_v2_json_decode.c) and, on what it reads, the
 * zipkin-v1-json writer (sdk/wire/zipkin/zipkin_v1_json_encode.c). Any bytes: the
 * reader never crashes, leaks or hangs; each reject has a reason; each span
 * has non-zero trace and span ids; and the writer turns the spans into one
 * JSON array with exactly one v1 span per span read, each with the same id.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/zipkin_v2_json/.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_zipkin_v2_json: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_capture c;
    capture_init(&c);
    tw_status st = capture_read_mem(&c, &twb_reader_zipkin_v2_json, data, size);
    if (st != TW_OK && st != TW_E_NOMEM)
        fail("the reader failed on a readable stream");
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
