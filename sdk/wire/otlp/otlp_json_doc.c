/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_json_doc.c: the otlp-json document of `tracewire convert
 * --to`: one ExportTraceServiceRequest (the body of POST /v1/traces) with
 * one resourceSpans entry per process per group of spans, each written by
 * the one OTLP/JSON encoder (wire/otlp/otlp_json.h). A process with an
 * empty service is named "unknown_service", OpenTelemetry's name for a
 * resource without service.name. No locks.
 */
#include <stdlib.h>

#include "wire/formats.h"
#include "wire/jaeger/jaeger_view.h" /* tw__process_named */
#include "wire/otlp/otlp_json.h"

struct tw__doc_encoder {
    size_t n_written; /* resourceSpans entries */
};

static tw__doc_encoder *doc_create(const tw__wire_options *opts, tw__span_reject_fn reject,
                                   void *reject_data)
{
    (void)opts;
    (void)reject; /* every span the model holds has an OTLP form */
    (void)reject_data;
    return calloc(1, sizeof(tw__doc_encoder));
}

static void doc_destroy(tw__doc_encoder *e)
{
    free(e);
}

static bool doc_encode(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out)
{
    /* The distinct processes of the group in order of first appearance
     * (pointer equality): one resourceSpans entry each. */
    const tw__process *small[16];
    const tw__process **procs = n <= 16 ? small : malloc(n * sizeof *procs);
    if (!procs)
        return false;
    size_t n_procs = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        while (k < n_procs && procs[k] != spans[i].process)
            k++;
        if (k == n_procs)
            procs[n_procs++] = spans[i].process;
    }
    bool ok = true;
    for (size_t p = 0; p < n_procs && ok; p++) {
        tw__process named;
        bool is_first = e->n_written++ == 0;
        ok = tw__buf_append(out, is_first ? "{\"resourceSpans\":[" : ",", is_first ? 18 : 1) &&
             tw__otlp_encode_resource_begin(
                 tw__process_named(procs[p], TW__OTLP_EMPTY_SERVICE, &named), out);
        size_t k = 0;
        for (size_t i = 0; ok && i < n; i++) {
            if (spans[i].process == procs[p])
                ok = (k++ == 0 || tw__buf_append(out, ",", 1)) &&
                     tw__otlp_encode_span(spans[i].data, out);
        }
        ok = ok && tw__otlp_encode_resource_end(out);
    }
    if (procs != small)
        free(procs);
    return ok;
}

static bool doc_finish(tw__doc_encoder *e, tw__buf *out)
{
    return e->n_written ? tw__buf_append(out, "]}\n", 3)
                        : tw__buf_append(out, "{\"resourceSpans\":[]}\n", 21);
}

const tw__wire_encoder tw__otlp_json_encoder = {
    .name = "otlp-json",
    .summary = "OTLP/JSON: one ExportTraceServiceRequest (the body of POST /v1/traces)",
    .create = doc_create,
    .encode = doc_encode,
    .finish = doc_finish,
    .destroy = doc_destroy,
};
