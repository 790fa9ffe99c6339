/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/batch.c: the framings and the batcher of batch.h.
 *
 * Framings adapt the project's encoders: every HTTP body (Zipkin v2 JSON,
 * the Jaeger collector's Thrift Batch, OTLP/JSON and OTLP protobuf) is the
 * SDK's tw__http_format_vtable (report/http_formats.c, the bodies the
 * reporters and `convert --send` post), one instance per batch, opened with
 * the batch's process: each span is encoded once, when it is batched, into
 * an item of known size, and a body is the envelope around the items
 * (sizes exact); the Jaeger agent datagram is wire/jaeger/jaeger_thrift.h's
 * emitBatch (sizes exact, as the SDK's UDP sender predicts them), and a
 * file batch is one document of a convert writer (twb_writer_vtable)
 * written to memory. Jaeger targets see each span through the Jaeger view
 * (wire/jaeger/jaeger_view.h: the error tag rule, `lc`, unknown durations)
 * and an empty service named "empty-service-name"; OTLP targets name it
 * "unknown_service".
 *
 * Locking: none (the destination thread).
 */
#include "agent/batch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/http.h"
#include "wire/jaeger/jaeger_view.h"

struct twa_framing {
    twa_framing_kind kind;
    const tw__http_format_vtable *http; /* HTTP kinds */
    const twb_writer_vtable *writer;    /* TWA_FRAME_FILE */
    tw__jaeger_view view;               /* Jaeger kinds: the span seen by the encoder */
    tw__jaeger_encoder *udp_enc;        /* UDP kinds: shared by the batches */
    tw__buf scratch;
    twb_options opts; /* the writer's options */
};

/* The per-batch state. */
typedef struct frame_state {
    tw__process named;       /* scratch for the renamed process */
    const tw__process *proc; /* what the encoder sees */
    tw__http_format *fmt;    /* HTTP kinds */
    tw__buf process_bytes;   /* UDP: the encoded Process */
} frame_state;

typedef struct bytes_item {
    size_t len;
    uint8_t data[];
} bytes_item;

typedef struct file_item {
    tw__span_data *data;
    twa_proc *proc;
} file_item;

twa_framing *twa_framing_new(twa_framing_kind kind, const twb_writer_vtable *writer, char *why,
                             size_t why_size)
{
    twa_framing *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(why, why_size, "out of memory");
        return NULL;
    }
    f->kind = kind;
    tw__jaeger_view_init(&f->view);
    tw__buf_init(&f->scratch);
    f->opts.max_value_bytes = 65536;
    switch (kind) {
    case TWA_FRAME_ZIPKIN:
        f->http = &tw__http_zipkin_format;
        break;
    case TWA_FRAME_OTLP_JSON:
        f->http = &tw__http_otlp_format;
        break;
    case TWA_FRAME_OTLP_PROTO:
        f->http = &tw__http_otlp_proto_format;
        break;
    case TWA_FRAME_JAEGER_HTTP:
        f->http = &tw__http_jaeger_format;
        break;
    case TWA_FRAME_UDP_COMPACT:
    case TWA_FRAME_UDP_BINARY:
        f->udp_enc = tw__jaeger_encoder_new(kind == TWA_FRAME_UDP_COMPACT ? TW__THRIFT_COMPACT
                                                                          : TW__THRIFT_BINARY);
        if (!f->udp_enc) {
            snprintf(why, why_size, "cannot create the Jaeger Thrift encoder");
            twa_framing_free(f);
            return NULL;
        }
        break;
    case TWA_FRAME_FILE:
        f->writer = writer;
        break;
    default:
        break;
    }
    return f;
}

void twa_framing_free(twa_framing *f)
{
    if (!f)
        return;
    tw__jaeger_view_clear(&f->view);
    tw__jaeger_encoder_free(f->udp_enc);
    tw__buf_free(&f->scratch);
    free(f);
}

const char *twa_framing_content_type(const twa_framing *f)
{
    return f->http ? f->http->content_type : NULL;
}

bool twa_framing_is_jaeger(const twa_framing *f)
{
    return f->kind == TWA_FRAME_JAEGER_HTTP || f->kind == TWA_FRAME_UDP_COMPACT ||
           f->kind == TWA_FRAME_UDP_BINARY ||
           (f->kind == TWA_FRAME_FILE && (f->writer->target_flags & TWB_TARGET_JAEGER_IDS));
}

static bool is_udp(const twa_framing *f)
{
    return f->kind == TWA_FRAME_UDP_COMPACT || f->kind == TWA_FRAME_UDP_BINARY;
}

static void state_free(const twa_framing *f, frame_state *s)
{
    if (!s)
        return;
    if (s->fmt)
        f->http->free_format(s->fmt);
    tw__buf_free(&s->process_bytes);
    free(s);
}

static frame_state *state_open(twa_framing *f, const tw__process *proc)
{
    frame_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    tw__buf_init(&s->process_bytes);
    s->proc = proc;
    if (twa_framing_is_jaeger(f) && f->kind != TWA_FRAME_FILE)
        s->proc = tw__jaeger_process(proc, &s->named);
    else if (f->kind == TWA_FRAME_OTLP_JSON || f->kind == TWA_FRAME_OTLP_PROTO)
        s->proc = tw__process_named(proc, TW__OTLP_EMPTY_SERVICE, &s->named);
    if (f->http) {
        tw_error *e = NULL;
        s->fmt = f->http->new_format();
        if (!s->fmt || f->http->open(s->fmt, s->proc, &e) != TW_OK) {
            if (e)
                twa_log(TWA_WARN, "cannot encode the process of service \"%s\": %s",
                        proc->service_name ? proc->service_name : "", tw_error_message(e));
            tw_error_free(e);
            state_free(f, s);
            return NULL;
        }
    } else if (is_udp(f)) {
        if (!tw__jaeger_encode_process(f->udp_enc, s->proc, &s->process_bytes)) {
            state_free(f, s);
            return NULL;
        }
    }
    return s;
}

/* One span as an item; NULL on failure. */
static void *encode(twa_framing *f, frame_state *s, const twa_item *it, size_t *size)
{
    const tw__span_data *span = it->data;
    if (twa_framing_is_jaeger(f) && f->kind != TWA_FRAME_FILE) {
        span = tw__jaeger_view_of(&f->view, span);
        if (!span)
            return NULL;
    }
    if (f->http)
        return f->http->encode(s->fmt, span, size);
    if (is_udp(f)) {
        tw__buf_reset(&f->scratch);
        if (!tw__jaeger_encode_span(f->udp_enc, span, &f->scratch))
            return NULL;
        bytes_item *item = malloc(sizeof *item + f->scratch.len);
        if (!item)
            return NULL;
        item->len = f->scratch.len;
        memcpy(item->data, f->scratch.data, item->len);
        *size = item->len;
        return item;
    }
    file_item *item = malloc(sizeof *item);
    if (!item)
        return NULL;
    item->data = tw__span_data_ref(it->data);
    item->proc = twa_proc_ref(it->proc);
    /* An estimate: files have no size limit, it only bounds a batch's memory. */
    *size = 256 + (it->data->n_tags + it->data->n_logs) * 64;
    return item;
}

static void free_item(const twa_framing *f, void *item)
{
    if (f->http) {
        f->http->free_item(item);
    } else if (f->kind == TWA_FRAME_FILE) {
        file_item *fi = item;
        tw__span_data_unref(fi->data);
        twa_proc_unref(fi->proc);
        free(fi);
    } else {
        free(item);
    }
}

static size_t body_size(twa_framing *f, const frame_state *s, size_t n, size_t items_size)
{
    if (f->http)
        return f->http->body_size(s->fmt, n, items_size);
    if (is_udp(f))
        return tw__jaeger_emit_batch_size(f->udp_enc, s->process_bytes.len, n, items_size, -1,
                                          NULL);
    return items_size + 64;
}

bool twa_batch_body(const twa_framing *cf, twa_batch *b, size_t lo, size_t n, tw__buf *out)
{
    twa_framing *f = (twa_framing *)cf;
    frame_state *s = b->state;
    if (f->http) {
        static const tw__client_stats zero = {0, 0, 0};
        return f->http->build(s->fmt, b->items + lo, n, 0, &zero, out);
    }
    if (is_udp(f)) {
        tw__buf_reset(&f->scratch);
        for (size_t i = lo; i < lo + n; i++) {
            const bytes_item *item = b->items[i];
            if (!tw__buf_append(&f->scratch, item->data, item->len))
                return false;
        }
        return tw__jaeger_emit_batch_message(f->udp_enc, s->process_bytes.data,
                                             s->process_bytes.len, f->scratch.data, f->scratch.len,
                                             n, -1, NULL, tw__jaeger_msg_seq_id(-1), out);
    }
    /* A file: one whole document of the writer. */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return false;
    tw_error *e = NULL;
    twb_writer *w = f->writer->new_writer(mem, &f->opts, &e);
    bool ok = w != NULL;
    twb_span *spans = ok ? malloc(n * sizeof *spans) : NULL;
    ok = ok && spans;
    for (size_t i = 0; ok && i < n; i++) {
        const file_item *fi = b->items[lo + i];
        spans[i] = (twb_span){fi->data, &fi->proc->process};
    }
    ok = ok && f->writer->write(w, spans, n, &e) == TW_OK && f->writer->finish(w, &e) == TW_OK;
    if (w)
        f->writer->free_writer(w);
    free(spans);
    if (e) {
        twa_log(TWA_WARN, "file writer %s: %s", f->writer->name, tw_error_message(e));
        tw_error_free(e);
    }
    fclose(mem);
    tw__buf_reset(out);
    ok = ok && tw__buf_append(out, text, len);
    free(text);
    return ok;
}

/* ---- the batcher ------------------------------------------------------------------------------
 */

struct twa_batcher {
    twa_framing *f;
    size_t max_body, max_open;
    int64_t flush_ns;
    twa_batch_fn emit;
    void *arg;
    twa_batch **open; /* max_open slots */
    size_t n_open;
    twa_batch *last; /* the previous span's batch */
    int64_t tick;
    size_t spans;
};

twa_batcher *twa_batcher_new(twa_framing *f, size_t max_body_bytes, size_t max_open,
                             unsigned int flush_ms, twa_batch_fn emit, void *arg)
{
    twa_batcher *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->open = calloc(max_open ? max_open : 1, sizeof *b->open);
    if (!b->open) {
        free(b);
        return NULL;
    }
    b->f = f;
    b->max_body = max_body_bytes;
    b->max_open = max_open ? max_open : 1;
    b->flush_ns = (int64_t)flush_ms * 1000000;
    b->emit = emit;
    b->arg = arg;
    return b;
}

static void batch_free(twa_batcher *b, twa_batch *batch)
{
    for (size_t i = 0; i < batch->n; i++)
        free_item(b->f, batch->items[i]);
    free(batch->items);
    free(batch->meta);
    state_free(b->f, batch->state);
    twa_proc_unref(batch->proc);
    free(batch);
}

/* Emits and frees open batch @i. */
static void emit_at(twa_batcher *b, size_t i)
{
    twa_batch *batch = b->open[i];
    b->open[i] = b->open[--b->n_open];
    if (b->last == batch)
        b->last = NULL;
    b->spans -= batch->n;
    if (batch->n)
        b->emit(b->arg, batch);
    batch_free(b, batch);
}

void twa_batcher_free(twa_batcher *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n_open; i++)
        batch_free(b, b->open[i]);
    free(b->open);
    free(b);
}

static twa_batch *batch_for(twa_batcher *b, twa_proc *proc, int64_t now_ns)
{
    if (b->last && b->last->proc == proc)
        return b->last;
    for (size_t i = 0; i < b->n_open; i++) {
        if (b->open[i]->proc == proc)
            return b->last = b->open[i];
    }
    if (b->n_open == b->max_open) {
        size_t lru = 0;
        for (size_t i = 1; i < b->n_open; i++) {
            if (b->open[i]->last_use < b->open[lru]->last_use)
                lru = i;
        }
        emit_at(b, lru);
    }
    twa_batch *batch = calloc(1, sizeof *batch);
    if (!batch)
        return NULL;
    batch->state = state_open(b->f, &proc->process);
    if (!batch->state) {
        free(batch);
        return NULL;
    }
    batch->proc = twa_proc_ref(proc);
    batch->first_ns = now_ns;
    b->open[b->n_open++] = batch;
    return b->last = batch;
}

static bool push(twa_batch *batch, void *item, const twa_item *it, size_t size)
{
    if (batch->n == batch->cap) {
        size_t cap = batch->cap ? batch->cap * 2 : 64;
        void **items = realloc(batch->items, cap * sizeof *items);
        if (!items)
            return false;
        batch->items = items;
        twa_span_meta *meta = realloc(batch->meta, cap * sizeof *meta);
        if (!meta)
            return false;
        batch->meta = meta;
        batch->cap = cap;
    }
    const tw__span_data *s = it->data;
    batch->items[batch->n] = item;
    batch->meta[batch->n] =
        (twa_span_meta){s->trace_id_high, s->trace_id_low, s->span_id, it->chunk, size};
    batch->n++;
    batch->items_size += size;
    return true;
}

static size_t index_of(const twa_batcher *b, const twa_batch *batch)
{
    for (size_t i = 0; i < b->n_open; i++) {
        if (b->open[i] == batch)
            return i;
    }
    return b->n_open;
}

twa_add_result twa_batcher_add(twa_batcher *b, const twa_item *it, int64_t now_ns)
{
    twa_batch *batch = batch_for(b, it->proc, now_ns);
    if (!batch)
        return TWA_ADD_ENCODE;
    size_t size = 0;
    void *item = encode(b->f, batch->state, it, &size);
    if (!item)
        return TWA_ADD_ENCODE;
    if (body_size(b->f, batch->state, 1, size) > b->max_body) {
        free_item(b->f, item);
        return TWA_ADD_TOO_LARGE;
    }
    if (batch->n &&
        body_size(b->f, batch->state, batch->n + 1, batch->items_size + size) > b->max_body) {
        emit_at(b, index_of(b, batch));
        batch = batch_for(b, it->proc, now_ns);
        if (!batch) {
            free_item(b->f, item);
            return TWA_ADD_NOMEM;
        }
        /* The item was encoded with the old batch's state: the HTTP formats'
         * items do not depend on it (only the body does), UDP items neither. */
    }
    if (!push(batch, item, it, size)) {
        free_item(b->f, item);
        return TWA_ADD_NOMEM;
    }
    batch->last_use = ++b->tick;
    if (batch->n == 1)
        batch->first_ns = now_ns;
    b->spans++;
    return TWA_ADD_OK;
}

void twa_batcher_tick(twa_batcher *b, int64_t now_ns)
{
    for (size_t i = 0; i < b->n_open;) {
        if (now_ns - b->open[i]->first_ns >= b->flush_ns)
            emit_at(b, i); /* moves the last slot here */
        else
            i++;
    }
}

int64_t twa_batcher_deadline(const twa_batcher *b)
{
    int64_t due = INT64_MAX;
    for (size_t i = 0; i < b->n_open; i++) {
        if (b->open[i]->first_ns + b->flush_ns < due)
            due = b->open[i]->first_ns + b->flush_ns;
    }
    return due;
}

void twa_batcher_flush(twa_batcher *b)
{
    while (b->n_open)
        emit_at(b, b->n_open - 1);
}

size_t twa_batcher_spans(const twa_batcher *b)
{
    return b->spans;
}
