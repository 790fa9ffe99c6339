/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/dapper/dapper_doc.c: the dapper document of `tracewire convert
 * --to`: the Dapper-style span log, one span per line, each written by the
 * one Dapper log encoder (wire/dapper/dapper_log.h) of its process (an
 * encoder per process, made on first use). A span the log cannot hold is
 * left out and reported through the reject callback, naming it; the lines
 * after it are still written. Single-threaded.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "wire/core/hex.h"
#include "wire/dapper/dapper_log.h"
#include "wire/formats.h"

struct tw__doc_encoder {
    GHashTable *encoders; /* const tw__process * -> tw__dapper_log_encoder * */
    tw__span_reject_fn reject;
    void *reject_data;
};

static void free_encoder(void *enc)
{
    tw__dapper_log_encoder_free(enc);
}

static tw__doc_encoder *doc_create(const tw__wire_options *opts, tw__span_reject_fn reject,
                                   void *reject_data)
{
    (void)opts;
    tw__doc_encoder *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->encoders = g_hash_table_new_full(NULL, NULL, NULL, free_encoder);
    e->reject = reject;
    e->reject_data = reject_data;
    return e;
}

static void doc_destroy(tw__doc_encoder *e)
{
    if (!e)
        return;
    g_hash_table_destroy(e->encoders);
    free(e);
}

static bool doc_encode(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out)
{
    for (size_t i = 0; i < n; i++) {
        tw__dapper_log_encoder *enc = g_hash_table_lookup(e->encoders, spans[i].process);
        if (!enc) {
            enc = tw__dapper_log_encoder_new(spans[i].process);
            if (!enc)
                return false;
            g_hash_table_insert(e->encoders, (void *)spans[i].process, enc);
        }
        if (tw__dapper_log_encode_span(enc, spans[i].data, out))
            continue;
        /* The encoder refuses a span whose end does not fit (start + duration
         * beyond int64) or a negative duration, or runs out of memory. */
        const tw__span_data *s = spans[i].data;
        if (e->reject) {
            char why[160];
            snprintf(why, sizeof why,
                     "it cannot be written as a Dapper log line (start %" PRId64
                     " us, duration %" PRId64 " us: the end must fit, the duration be >= 0)",
                     s->start_us, s->duration_us);
            e->reject(e->reject_data, &spans[i], why);
        }
    }
    return true;
}

static bool doc_finish(tw__doc_encoder *e, tw__buf *out)
{
    (void)e;
    (void)out;
    return true;
}

const tw__wire_encoder tw__dapper_encoder = {
    .name = "dapper",
    .summary = "Dapper-style span log: one JSON object per line (docs/dapper-log-format.md)",
    .create = doc_create,
    .encode = doc_encode,
    .finish = doc_finish,
    .destroy = doc_destroy,
};
