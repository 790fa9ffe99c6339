/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/batch.c: the framings of batch.h, and its batcher: the SDK's
 * one batcher keyed by process (transport/batcher.h) over these framings.
 *
 * Framings adapt the project's encoders: every HTTP body (Zipkin v2 JSON,
 * the Jaeger collector's Thrift Batch, OTLP/JSON and OTLP protobuf) is the
 * one framing of transport/framing.h (the bodies the reporters and
 * `convert --send` post), one instance per batch, opened with
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
 * Items of the HTTP and UDP kinds made on the destination thread live in
 * slabs of their batch (below) instead of one allocation each: the
 * allocator's work per span was a tenth of the thread's.
 *
 * Locking: none (the destination thread).
 */
#include "agent/batch.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/batcher.h"
#include "transport/framing.h"
#include "wire/jaeger/jaeger_view.h"

struct twa_framing {
    twa_framing_kind kind;
    const tw__http_format_vtable *http; /* HTTP kinds */
    const twb_writer_vtable *writer;    /* TWA_FRAME_FILE */
    tw__jaeger_view view;               /* Jaeger kinds: the span seen by the encoder */
    bool uses_view;                     /* encoders see spans through the view */
    tw__jaeger_encoder *udp_enc;        /* UDP kinds: shared by the batches */
    tw__buf scratch;
    twb_options opts; /* the writer's options */
};

/*
 * Slabs: a batch's items are put one after the other in blocks it owns
 * (4 KiB first, doubling to 64 KiB), each block counting the items in it
 * not yet freed. A block is freed when its batch is closed and its last
 * item freed: the one item a batch cut by size hands to the next batch of
 * its key (batcher.h) keeps its block alive until that batch is done, so a
 * batch holds at most one block of an earlier one. Items encoded early (on
 * a receiver thread, freed on the destination thread) get an allocation of
 * their own (slab NULL).
 */
typedef struct slab {
    size_t live;     /* items in it not yet freed */
    size_t used;     /* bytes given out (data[0..used)) */
    size_t cap;      /* bytes of data */
    bool is_current; /* its batch may still put items in it */
    max_align_t data[];
} slab;

#define SLAB_FIRST ((size_t)4 << 10)
#define SLAB_MAX ((size_t)64 << 10)

/* An item and what precedes it; the item itself (a tw__http_item, which
 * the HTTP framings read, and bytes_item, its UDP twin) starts at len. */
typedef struct item_head {
    slab *owner; /* NULL: its own allocation */
    size_t len;
    uint8_t data[];
} item_head;

typedef struct bytes_item {
    size_t len;
    uint8_t data[];
} bytes_item;

_Static_assert(offsetof(item_head, data) - offsetof(item_head, len) ==
                   offsetof(tw__http_item, data),
               "an item_head's item is a tw__http_item");
_Static_assert(offsetof(item_head, data) - offsetof(item_head, len) == offsetof(bytes_item, data),
               "an item_head's item is a bytes_item");

/* The per-batch state. */
typedef struct frame_state {
    twa_proc *key;           /* one reference: the batch's process */
    tw__process named;       /* scratch for the renamed process */
    const tw__process *proc; /* what the encoder sees */
    tw__http_format *fmt;    /* HTTP kinds */
    tw__buf process_bytes;   /* UDP: the encoded Process */
    tw__buf scratch;         /* one span's encoding, before it becomes an item */
    slab *slab;              /* where its items go; NULL before the first */
    size_t next_slab;        /* the next slab's size */
} frame_state;

static void slab_retire(slab *b)
{
    if (!b)
        return;
    b->is_current = false;
    if (b->live == 0)
        free(b);
}

/* An item holding @len bytes of @bytes: in @s's slab when @s is given,
 * else an allocation of its own. NULL when out of memory. */
static bytes_item *item_new(frame_state *s, const uint8_t *bytes, size_t len)
{
    if (len > SIZE_MAX / 2)
        return NULL;
    size_t need = twa_early_item_bytes(len); /* the same layout in a slab */
    item_head *h;
    if (!s) {
        h = malloc(need);
        if (!h)
            return NULL;
        h->owner = NULL;
    } else {
        slab *b = s->slab;
        if (!b || b->cap - b->used < need) {
            size_t cap = s->next_slab ? s->next_slab : SLAB_FIRST;
            s->next_slab = cap < SLAB_MAX ? cap * 2 : SLAB_MAX;
            if (cap < need)
                cap = need;
            b = malloc(sizeof *b + cap);
            if (!b)
                return NULL;
            *b = (slab){0, 0, cap, true};
            slab_retire(s->slab);
            s->slab = b;
        }
        h = (item_head *)((uint8_t *)b->data + b->used);
        b->used += need;
        b->live++;
        h->owner = b;
    }
    h->len = len;
    memcpy(h->data, bytes, len);
    return (bytes_item *)&h->len;
}

static void item_free(void *item)
{
    if (!item)
        return;
    item_head *h = (item_head *)((uint8_t *)item - offsetof(item_head, len));
    slab *b = h->owner;
    if (!b)
        free(h);
    else if (--b->live == 0 && !b->is_current)
        free(b);
}

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
    f->uses_view = twa_framing_is_jaeger(f) && kind != TWA_FRAME_FILE;
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
    tw__buf_free(&s->scratch);
    slab_retire(s->slab);
    twa_proc_unref(s->key);
    free(s);
}

static frame_state *state_open(twa_framing *f, twa_proc *key)
{
    const tw__process *proc = &key->process;
    frame_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->key = twa_proc_ref(key);
    tw__buf_init(&s->process_bytes);
    tw__buf_init(&s->scratch);
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

/* One span as an item; NULL on failure. @in_slab: the item goes in @s's
 * slab (the destination thread's batches), else in an allocation of its
 * own (early encoding). */
static inline __attribute__((always_inline)) void *
encode(twa_framing *f, frame_state *s, const twa_item *it, size_t *size, bool in_slab)
{
    if (it->encoded) {                   /* encoded early (twa_early_encode): the batch takes it */
        twa_item *mine = (twa_item *)it; /* the destination thread's own copy */
        void *item = mine->encoded;
        *size = mine->encoded_size;
        mine->encoded = NULL;
        mine->encoded_size = 0;
        return item;
    }
    const tw__span_data *span = it->data;
    if (f->uses_view) {
        span = tw__jaeger_view_of(&f->view, span);
        if (!span)
            return NULL;
    }
    if (f->http || is_udp(f)) {
        tw__buf_reset(&s->scratch);
        if (f->http ? !f->http->encode_to(s->fmt, span, &s->scratch)
                    : !tw__jaeger_encode_span(f->udp_enc, span, &s->scratch))
            return NULL;
        bytes_item *item = item_new(in_slab ? s : NULL, s->scratch.data, s->scratch.len);
        if (!item)
            return NULL;
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
    if (f->kind == TWA_FRAME_FILE) {
        file_item *fi = item;
        tw__span_data_unref(fi->data);
        twa_proc_unref(fi->proc);
        free(fi);
    } else {
        item_free(item);
    }
}

/* ---- early encoding ------------------------------------------------------------------------ */

struct twa_early {
    frame_state *state; /* opened for state->key, NULL before the first span */
    const tw__http_format_vtable *http;
};

bool twa_framing_encodes_early(const twa_framing *f)
{
    /* Their encode reads the framing (kind, vtable) and the per-thread
     * state only; Jaeger targets share the view and the UDP encoder. */
    return f->kind == TWA_FRAME_OTLP_JSON || f->kind == TWA_FRAME_OTLP_PROTO ||
           f->kind == TWA_FRAME_ZIPKIN;
}

void *twa_early_encode(const twa_framing *cf, twa_early **early, const twa_item *it, size_t *size)
{
    twa_framing *f = (twa_framing *)cf; /* not written for these kinds (see above) */
    if (!twa_framing_encodes_early(f))
        return NULL;
    twa_early *e = *early;
    if (!e) {
        e = calloc(1, sizeof *e);
        if (!e)
            return NULL;
        e->http = f->http;
        *early = e;
    }
    if (!e->state || e->state->key != it->proc) {
        state_free(f, e->state);
        e->state = state_open(f, it->proc);
        if (!e->state)
            return NULL;
    }
    twa_item plain = *it;
    plain.encoded = NULL;
    return encode(f, e->state, &plain, size, false);
}

void twa_early_free(twa_early *e)
{
    if (!e)
        return;
    if (e->state) {
        if (e->state->fmt)
            e->http->free_format(e->state->fmt);
        tw__buf_free(&e->state->process_bytes);
        tw__buf_free(&e->state->scratch);
        slab_retire(e->state->slab); /* none: early items are allocations of their own */
        twa_proc_unref(e->state->key);
        free(e->state);
    }
    free(e);
}

size_t twa_early_item_bytes(size_t size)
{
    const size_t align = _Alignof(item_head);
    return (sizeof(item_head) + size + align - 1) / align * align;
}

void twa_framing_free_item(const twa_framing *f, void *item)
{
    if (item)
        free_item(f, item);
}

static size_t body_size(const twa_framing *f, const frame_state *s, size_t n, size_t items_size)
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

/* ---- the batcher: transport/batcher.h over the framing ----------------------------------- */

static void *ops_open(void *ctx, const void *key)
{
    return state_open(ctx, (twa_proc *)key);
}

static void ops_close(void *ctx, void *state)
{
    state_free(ctx, state);
}

static void *ops_encode(void *ctx, void *state, const tw__span_data *span, const void *arg,
                        size_t *size)
{
    (void)span; /* the item (arg) holds it, with its process and chunk */
    return encode(ctx, state, arg, size, true);
}

static void ops_free_item(void *ctx, void *item)
{
    free_item(ctx, item);
}

static size_t ops_body_size(void *ctx, const void *state, size_t n, size_t items_size)
{
    return body_size(ctx, state, n, items_size);
}

static const tw__batch_ops framing_ops = {
    .open = ops_open,
    .close = ops_close,
    .encode = ops_encode,
    .free_item = ops_free_item,
    .body_size = ops_body_size,
};

twa_batcher *twa_batcher_new(twa_framing *f, size_t max_body_bytes, size_t max_open,
                             unsigned int flush_ms, twa_batch_fn emit, void *arg)
{
    /* The agent always cuts by time: 0 means at the next tick. */
    tw__batcher_limits limits = {max_body_bytes, max_open, flush_ms ? flush_ms : 1, 0};
    return tw__batcher_new(&framing_ops, f, &limits, emit, arg);
}

void twa_batcher_free(twa_batcher *b)
{
    tw__batcher_free(b);
}

void twa_batcher_tick(twa_batcher *b, int64_t now_ns)
{
    tw__batcher_tick(b, now_ns);
}

int64_t twa_batcher_deadline(const twa_batcher *b)
{
    return tw__batcher_deadline(b);
}

void twa_batcher_flush(twa_batcher *b)
{
    tw__batcher_flush(b);
}

size_t twa_batcher_spans(const twa_batcher *b)
{
    return tw__batcher_spans(b);
}
