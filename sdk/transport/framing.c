/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transport/framing.c: the four HTTP body framings of framing.h, thin
 * adapters over the project's one encoder per wire format (wire/):
 *
 *   jaeger-http  application/x-thrift: a bare jaeger.thrift Batch in the
 *                binary protocol (docs/wire/jaeger-thrift.md), POST /api/traces
 *   zipkin       application/json: a Zipkin v2 ListOfSpans (docs/wire/zipkin-v2.md)
 *   otlp-http    application/json: an ExportTraceServiceRequest (OTLP/JSON)
 *   otlp-http-proto  application/x-protobuf: the same request in protobuf
 *                (wire/otlp/otlp_proto.h)
 *
 * Sizes are exact, computed from real encodings: each span is encoded once
 * as an item and its size measured; a body adds to the items only what does
 * not depend on the span count. Binary Thrift has fixed-width list headers
 * and i64s, so a Batch is (Batch with no spans) + the spans; a compact JSON
 * array is "[" + items joined by "," + "]", so a body is (body with an empty
 * array) + the items + one comma between each two; a protobuf request is
 * the items inside two length-delimited envelopes whose length prefixes
 * are computed from the items' total. The sender checks the built length
 * against body_size on every batch.
 *
 * Locking: none (one thread per format instance).
 */
#include <stdlib.h>
#include <string.h>

#include "transport/framing.h"
#include "wire/core/error.h"
#include "wire/otlp/otlp_json.h"
#include "wire/otlp/otlp_proto.h"
#include "wire/zipkin/zipkin_v2_json.h"

/* ---- Jaeger collector: Thrift binary Batch --------------------------------------------------- */

typedef struct {
    tw__jaeger_encoder *enc;
    tw__buf process;    /* encoded Process */
    size_t empty_batch; /* size of a Batch with no spans, seqNo and stats */
    tw__buf spans;      /* build's scratch: the items concatenated */
} jaeger_format;

typedef tw__http_item jaeger_item;

static tw__http_format *jaeger_new(void)
{
    jaeger_format *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->enc = tw__jaeger_encoder_new(TW__THRIFT_BINARY);
    if (!j->enc) {
        free(j);
        return NULL;
    }
    return (tw__http_format *)j;
}

static void jaeger_free(tw__http_format *f)
{
    jaeger_format *j = (jaeger_format *)f;
    if (!j)
        return;
    tw__jaeger_encoder_free(j->enc);
    tw__buf_free(&j->process);
    tw__buf_free(&j->spans);
    free(j);
}

static tw_status jaeger_open(tw__http_format *f, const tw__process *process, tw_error **err)
{
    jaeger_format *j = (jaeger_format *)f;
    tw__buf empty;
    tw__buf_init(&empty);
    tw__client_stats zero = {0, 0, 0};
    tw__buf_reset(&j->process);
    bool ok = tw__jaeger_encode_process(j->enc, process, &j->process) &&
              tw__jaeger_batch_struct(j->enc, j->process.data, j->process.len, NULL, 0, 0, 0, &zero,
                                      &empty);
    j->empty_batch = empty.len;
    tw__buf_free(&empty);
    if (!ok) {
        tw__set_error(err, TW_E_ENCODE, "jaeger-http: cannot encode the process");
        return TW_E_ENCODE;
    }
    return TW_OK;
}

static bool jaeger_encode_to(tw__http_format *f, const tw__span_data *span, tw__buf *out)
{
    return tw__jaeger_encode_span(((jaeger_format *)f)->enc, span, out);
}

static void *jaeger_encode(tw__http_format *f, const tw__span_data *span, size_t *size)
{
    jaeger_format *j = (jaeger_format *)f;
    tw__buf_reset(&j->spans);
    if (!jaeger_encode_to(f, span, &j->spans))
        return NULL;
    jaeger_item *item = malloc(sizeof(*item) + j->spans.len);
    if (!item)
        return NULL;
    item->len = j->spans.len;
    memcpy(item->data, j->spans.data, item->len);
    *size = item->len;
    return item;
}

static size_t jaeger_body_size(const tw__http_format *f, size_t n, size_t items_size)
{
    (void)n; /* binary list headers have a fixed width */
    return ((const jaeger_format *)f)->empty_batch + items_size;
}

static bool jaeger_build(tw__http_format *f, void *const *items, size_t n, int64_t seq_no,
                         const tw__client_stats *stats, tw__buf *out)
{
    jaeger_format *j = (jaeger_format *)f;
    tw__buf_reset(&j->spans);
    for (size_t i = 0; i < n; i++) {
        const jaeger_item *item = items[i];
        if (!tw__buf_append(&j->spans, item->data, item->len))
            return false;
    }
    /* A negative seqNo would drop the field and change the size. */
    return tw__jaeger_batch_struct(j->enc, j->process.data, j->process.len, j->spans.data,
                                   j->spans.len, n, seq_no < 0 ? 0 : seq_no, stats, out);
}

const tw__http_format_vtable tw__http_jaeger_format = {
    .size = sizeof(tw__http_format_vtable),
    .name = "jaeger-http",
    .content_type = "application/x-thrift",
    .default_endpoint = "http://localhost:14268/api/traces",
    .retry_rule = TW__HTTP_RETRY_COLLECTOR,
    .new_format = jaeger_new,
    .free_format = jaeger_free,
    .open = jaeger_open,
    .encode = jaeger_encode,
    .free_item = free,
    .body_size = jaeger_body_size,
    .build = jaeger_build,
    .encode_to = jaeger_encode_to,
};

/* ---- JSON items (Zipkin and OTLP): each span's text, written by its encoder --------------------
 */

/* One span's encoding (a jaeger_item too: a length and the bytes). */
static void *item_from(const tw__buf *text, size_t *size)
{
    jaeger_item *item = malloc(sizeof(*item) + text->len);
    if (!item)
        return NULL;
    item->len = text->len;
    memcpy(item->data, text->data, text->len);
    *size = item->len;
    return item;
}

/* An array of @n >= 1 items adds one comma between each two. */
static size_t commas(size_t n)
{
    return n > 0 ? n - 1 : 0;
}

/* Appends the items joined by ','. */
static bool join_items(void *const *items, size_t n, tw__buf *out)
{
    for (size_t i = 0; i < n; i++) {
        const jaeger_item *item = items[i];
        if ((i && !tw__buf_append(out, ",", 1)) || !tw__buf_append(out, item->data, item->len))
            return false;
    }
    return true;
}

/* ---- Zipkin v2 ---------------------------------------------------------------------------- */

typedef struct {
    const tw__process *process; /* the tracer's, valid until free */
    tw__buf text;               /* encode's scratch */
} zipkin_format;

static tw__http_format *zipkin_new(void)
{
    return calloc(1, sizeof(zipkin_format));
}

static void zipkin_free(tw__http_format *f)
{
    if (f)
        tw__buf_free(&((zipkin_format *)f)->text);
    free(f);
}

static tw_status zipkin_open(tw__http_format *f, const tw__process *process, tw_error **err)
{
    (void)err;
    ((zipkin_format *)f)->process = process;
    return TW_OK;
}

static bool zipkin_encode_to(tw__http_format *f, const tw__span_data *span, tw__buf *out)
{
    return tw__zipkin_encode_span(span, ((zipkin_format *)f)->process, out);
}

static void *zipkin_encode(tw__http_format *f, const tw__span_data *span, size_t *size)
{
    zipkin_format *z = (zipkin_format *)f;
    tw__buf_reset(&z->text);
    if (!zipkin_encode_to(f, span, &z->text))
        return NULL;
    return item_from(&z->text, size);
}

static void *zipkin_encode_with(tw__http_format *f, const tw__process *process,
                                const tw__span_data *span, size_t *size)
{
    zipkin_format *z = (zipkin_format *)f;
    tw__buf_reset(&z->text);
    if (!tw__zipkin_encode_span(span, process, &z->text))
        return NULL;
    return item_from(&z->text, size);
}

static size_t zipkin_body_size(const tw__http_format *f, size_t n, size_t items_size)
{
    (void)f;
    return 2 + items_size + commas(n); /* "[" items "]" */
}

static bool zipkin_build(tw__http_format *f, void *const *items, size_t n, int64_t seq_no,
                         const tw__client_stats *stats, tw__buf *out)
{
    (void)f;
    (void)seq_no;
    (void)stats;
    tw__buf_reset(out);
    return tw__buf_append(out, "[", 1) && join_items(items, n, out) && tw__buf_append(out, "]", 1);
}

const tw__http_format_vtable tw__http_zipkin_format = {
    .size = sizeof(tw__http_format_vtable),
    .name = "zipkin",
    .content_type = "application/json",
    .default_endpoint = "http://localhost:9411/api/v2/spans",
    .retry_rule = TW__HTTP_RETRY_COLLECTOR,
    .new_format = zipkin_new,
    .free_format = zipkin_free,
    .open = zipkin_open,
    .encode = zipkin_encode,
    .free_item = free,
    .body_size = zipkin_body_size,
    .build = zipkin_build,
    .encode_with = zipkin_encode_with,
    .encode_to = zipkin_encode_to,
};

/* ---- OTLP/JSON ----------------------------------------------------------------------------- */

typedef struct {
    tw__buf head; /* the request up to its spans array: written once per tracer */
    tw__buf text; /* encode's scratch */
} otlp_format;

static tw__http_format *otlp_new(void)
{
    return calloc(1, sizeof(otlp_format));
}

static void otlp_free(tw__http_format *f)
{
    otlp_format *o = (otlp_format *)f;
    if (!o)
        return;
    tw__buf_free(&o->head);
    tw__buf_free(&o->text);
    free(o);
}

static tw_status otlp_open(tw__http_format *f, const tw__process *process, tw_error **err)
{
    otlp_format *o = (otlp_format *)f;
    tw__buf_reset(&o->head);
    if (!tw__otlp_encode_request_begin(process, &o->head)) {
        tw__set_error(err, TW_E_ENCODE, "otlp-http: cannot encode the resource");
        return TW_E_ENCODE;
    }
    return TW_OK;
}

static bool otlp_encode_to(tw__http_format *f, const tw__span_data *span, tw__buf *out)
{
    (void)f;
    return tw__otlp_encode_span(span, out);
}

static void *otlp_encode(tw__http_format *f, const tw__span_data *span, size_t *size)
{
    otlp_format *o = (otlp_format *)f;
    tw__buf_reset(&o->text);
    if (!tw__otlp_encode_span(span, &o->text))
        return NULL;
    return item_from(&o->text, size);
}

/* The request's tail after the spans (tw__otlp_encode_request_end). */
#define OTLP_TAIL_LEN 6

static size_t otlp_body_size(const tw__http_format *f, size_t n, size_t items_size)
{
    return ((const otlp_format *)f)->head.len + items_size + commas(n) + OTLP_TAIL_LEN;
}

static bool otlp_build(tw__http_format *f, void *const *items, size_t n, int64_t seq_no,
                       const tw__client_stats *stats, tw__buf *out)
{
    (void)seq_no;
    (void)stats;
    otlp_format *o = (otlp_format *)f;
    tw__buf_reset(out);
    return tw__buf_append(out, o->head.data, o->head.len) && join_items(items, n, out) &&
           tw__otlp_encode_request_end(out);
}

const tw__http_format_vtable tw__http_otlp_format = {
    .size = sizeof(tw__http_format_vtable),
    .name = "otlp-http",
    .content_type = "application/json",
    .default_endpoint = "http://localhost:4318/v1/traces",
    .retry_rule = TW__HTTP_RETRY_OTLP,
    .new_format = otlp_new,
    .free_format = otlp_free,
    .open = otlp_open,
    .encode = otlp_encode,
    .free_item = free,
    .body_size = otlp_body_size,
    .build = otlp_build,
    .encode_to = otlp_encode_to,
};

/* ---- OTLP protobuf ------------------------------------------------------------------------- */

typedef struct {
    tw__otlp_proto_envelope envelope; /* the process's resource and our scope, encoded once */
    tw__buf scratch;                  /* encode's buffer, reused */
} otlp_proto_format;

static tw__http_format *otlp_proto_new(void)
{
    otlp_proto_format *o = calloc(1, sizeof(*o));
    if (o) {
        tw__buf_init(&o->envelope.resource);
        tw__buf_init(&o->envelope.scope);
        tw__buf_init(&o->scratch);
    }
    return (tw__http_format *)o;
}

static void otlp_proto_free(tw__http_format *f)
{
    otlp_proto_format *o = (otlp_proto_format *)f;
    if (!o)
        return;
    tw__otlp_proto_envelope_clear(&o->envelope);
    tw__buf_free(&o->scratch);
    free(o);
}

static tw_status otlp_proto_open(tw__http_format *f, const tw__process *process, tw_error **err)
{
    otlp_proto_format *o = (otlp_proto_format *)f;
    tw__otlp_proto_envelope_clear(&o->envelope);
    if (!tw__otlp_proto_envelope_init(&o->envelope, process)) {
        tw__set_error(err, TW_E_ENCODE, "otlp-http-proto: cannot encode the resource");
        return TW_E_ENCODE;
    }
    return TW_OK;
}

static bool otlp_proto_encode_to(tw__http_format *f, const tw__span_data *span, tw__buf *out)
{
    (void)f;
    return tw__otlp_proto_encode_span(span, out);
}

/* An item is a span's `spans` field as it goes into the body. */
static void *otlp_proto_encode(tw__http_format *f, const tw__span_data *span, size_t *size)
{
    otlp_proto_format *o = (otlp_proto_format *)f;
    tw__buf_reset(&o->scratch);
    if (!tw__otlp_proto_encode_span(span, &o->scratch))
        return NULL;
    return item_from(&o->scratch, size);
}

static size_t otlp_proto_body_size(const tw__http_format *f, size_t n, size_t items_size)
{
    (void)n;
    return tw__otlp_proto_resource_spans_size(&((const otlp_proto_format *)f)->envelope,
                                              items_size);
}

static bool otlp_proto_build(tw__http_format *f, void *const *items, size_t n, int64_t seq_no,
                             const tw__client_stats *stats, tw__buf *out)
{
    (void)seq_no;
    (void)stats;
    otlp_proto_format *o = (otlp_proto_format *)f;
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += ((const jaeger_item *)items[i])->len;
    size_t size = tw__otlp_proto_resource_spans_size(&o->envelope, total);
    tw__buf_reset(out);
    if (!tw__buf_reserve(out, size) ||
        !tw__otlp_proto_put_resource_spans_head(&o->envelope, total, out) ||
        out->len + total != size)
        return false;
    /* The room is reserved: the items go in without a check each. */
    for (size_t i = 0; i < n; i++) {
        const jaeger_item *item = items[i];
        memcpy(out->data + out->len, item->data, item->len);
        out->len += item->len;
    }
    return true;
}

const tw__http_format_vtable tw__http_otlp_proto_format = {
    .size = sizeof(tw__http_format_vtable),
    .name = "otlp-http-proto",
    .content_type = TW__OTLP_PROTO_CONTENT_TYPE,
    .default_endpoint = "http://localhost:4318/v1/traces",
    .retry_rule = TW__HTTP_RETRY_OTLP,
    .new_format = otlp_proto_new,
    .free_format = otlp_proto_free,
    .open = otlp_proto_open,
    .encode = otlp_proto_encode,
    .free_item = free,
    .body_size = otlp_proto_body_size,
    .build = otlp_proto_build,
    .encode_to = otlp_proto_encode_to,
};
