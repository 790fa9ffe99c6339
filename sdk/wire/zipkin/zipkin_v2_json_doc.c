/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v2_json_doc.c: the zipkin-v2-json document of
 * `tracewire convert --to`: one JSON array of spans (the body of POST
 * /api/v2/spans), each span written by the one Zipkin v2 encoder
 * (wire/zipkin/zipkin_v2_json.h). "[" before the first span, "," between,
 * "]" and a newline at the end ("[]" when there was none). No locks.
 */
#include <stdlib.h>

#include "wire/formats.h"
#include "wire/zipkin/zipkin_v2_json.h"

struct tw__doc_encoder {
    size_t n_written;
    /* Each process's endpoint and tags rendered once (a document has
     * thousands of spans per process); NULL: rendered every time. */
    tw__zipkin_process_cache *cache;
};

static tw__doc_encoder *doc_create(const tw__wire_options *opts, tw__span_reject_fn reject,
                                   void *reject_data)
{
    (void)opts;
    (void)reject; /* every span the model holds has a Zipkin v2 form */
    (void)reject_data;
    tw__doc_encoder *e = calloc(1, sizeof(tw__doc_encoder));
    if (e)
        e->cache = tw__zipkin_process_cache_new();
    return e;
}

static void doc_destroy(tw__doc_encoder *e)
{
    if (e)
        tw__zipkin_process_cache_free(e->cache);
    free(e);
}

static bool doc_encode(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out)
{
    /* The spans of one call and their processes are alive and unchanged
     * until it returns (tw__wire_encoder). */
    tw__zipkin_process_cache_new_batch(e->cache);
    for (size_t i = 0; i < n; i++) {
        if (!tw__buf_append(out, e->n_written++ ? "," : "[", 1) ||
            !tw__zipkin_encode_span_cached(spans[i].data, spans[i].process, out, e->cache))
            return false;
    }
    return true;
}

static bool doc_finish(tw__doc_encoder *e, tw__buf *out)
{
    return e->n_written ? tw__buf_append(out, "]\n", 2) : tw__buf_append(out, "[]\n", 3);
}

const tw__wire_encoder tw__zipkin_v2_json_encoder = {
    .name = "zipkin-v2-json",
    .summary = "Zipkin v2 JSON: one array of spans (the body of POST /api/v2/spans)",
    .create = doc_create,
    .encode = doc_encode,
    .finish = doc_finish,
    .destroy = doc_destroy,
};
