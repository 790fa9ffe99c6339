/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_proto_doc.c: the zipkin-v2-proto document of
 * `tracewire convert --to`: one Zipkin proto3 ListOfSpans (the body of POST
 * /api/v2/spans as application/x-protobuf), a `spans` field per span
 * written by wire/zipkin/zipkin_proto.h. A ListOfSpans is a sequence of
 * such fields, so the document has no framing and no state. No locks.
 */
#include <stdlib.h>

#include "wire/formats.h"
#include "wire/zipkin/zipkin_proto.h"

struct tw__doc_encoder {
    char unused;
};

static tw__doc_encoder *doc_create(const tw__wire_options *opts, tw__span_reject_fn reject,
                                   void *reject_data)
{
    (void)opts;
    (void)reject; /* every span the model holds has a Zipkin v2 form */
    (void)reject_data;
    return calloc(1, sizeof(tw__doc_encoder));
}

static void doc_destroy(tw__doc_encoder *e)
{
    free(e);
}

static bool doc_encode(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out)
{
    (void)e;
    for (size_t i = 0; i < n; i++) {
        if (!tw__zipkin_proto_encode_span(spans[i].data, spans[i].process, out))
            return false;
    }
    return true;
}

static bool doc_finish(tw__doc_encoder *e, tw__buf *out)
{
    (void)e;
    (void)out;
    return true;
}

const tw__wire_encoder tw__zipkin_v2_proto_encoder = {
    .name = "zipkin-v2-proto",
    .summary = "Zipkin v2 proto3: one ListOfSpans (the body of POST /api/v2/spans as "
               "application/x-protobuf)",
    .flags = TW__ENCODER_BINARY,
    .create = doc_create,
    .encode = doc_encode,
    .finish = doc_finish,
    .destroy = doc_destroy,
};
