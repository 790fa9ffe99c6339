/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transport/batcher.c: the batcher of batcher.h. Open batches sit in a small
 * array (max_open, 64 at most in practice): a span of the same key as the
 * previous one skips the search, others scan it, which costs less than a
 * hash at these sizes. The pending total is kept exact: each batch caches
 * its body size after every add. The arrays of the last batch freed are
 * kept for the next one, so that a steady stream of full batches does not
 * grow them again, copy after copy, for each batch.
 *
 * Locking: none (one thread per batcher).
 */
#include "transport/batcher.h"

#include <stdlib.h>
#include <string.h>

struct tw__batcher {
    const tw__batch_ops *ops;
    void *ctx;
    tw__batcher_limits limits;
    int64_t flush_ns; /* 0: never by time */
    tw__batch_fn emit;
    void *emit_arg;
    tw__batch **open; /* limits.max_open slots */
    size_t n_open;
    tw__batch *last; /* the previous span's batch */
    uint64_t tick;
    size_t spans;
    size_t pending;   /* sum of the open batches' body_bytes */
    size_t too_large; /* the body of the last span refused as too large, alone */
    /* A freed batch's arrays (spare_cap slots each; NULL: none) for the
     * next batch. */
    void **spare_items;
    tw__batch_span *spare_meta;
    size_t spare_cap;
};

tw__batcher *tw__batcher_new(const tw__batch_ops *ops, void *ctx, const tw__batcher_limits *limits,
                             tw__batch_fn emit, void *emit_arg)
{
    tw__batcher *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->limits = *limits;
    if (b->limits.max_open == 0)
        b->limits.max_open = 1;
    b->open = calloc(b->limits.max_open, sizeof *b->open);
    if (!b->open) {
        free(b);
        return NULL;
    }
    b->ops = ops;
    b->ctx = ctx;
    b->flush_ns = (int64_t)limits->flush_ms * 1000000;
    b->emit = emit;
    b->emit_arg = emit_arg;
    return b;
}

static void batch_free(tw__batcher *b, tw__batch *batch)
{
    for (size_t i = 0; i < batch->n; i++)
        b->ops->free_item(b->ctx, batch->items[i]);
    if (batch->cap > b->spare_cap) { /* the larger pair stays */
        void **items = b->spare_items;
        tw__batch_span *meta = b->spare_meta;
        b->spare_items = batch->items;
        b->spare_meta = batch->meta;
        b->spare_cap = batch->cap;
        batch->items = items;
        batch->meta = meta;
    }
    free(batch->items);
    free(batch->meta);
    if (batch->state)
        b->ops->close(b->ctx, batch->state);
    free(batch);
}

/* Takes open batch @i out of the set (the last slot moves there). */
static tw__batch *take(tw__batcher *b, size_t i)
{
    tw__batch *batch = b->open[i];
    b->open[i] = b->open[--b->n_open];
    if (b->last == batch)
        b->last = NULL;
    b->spans -= batch->n;
    b->pending -= batch->body_bytes;
    return batch;
}

/* Emits and frees open batch @i. */
static void emit_at(tw__batcher *b, size_t i)
{
    tw__batch *batch = take(b, i);
    if (batch->n)
        b->emit(b->emit_arg, batch);
    batch_free(b, batch);
}

void tw__batcher_discard(tw__batcher *b)
{
    while (b->n_open)
        batch_free(b, take(b, b->n_open - 1));
}

void tw__batcher_free(tw__batcher *b)
{
    if (!b)
        return;
    tw__batcher_discard(b);
    free(b->spare_items);
    free(b->spare_meta);
    free(b->open);
    free(b);
}

static size_t index_of(const tw__batcher *b, const tw__batch *batch)
{
    for (size_t i = 0; i < b->n_open; i++) {
        if (b->open[i] == batch)
            return i;
    }
    return b->n_open;
}

/* The open batch of @key, or a new one (the least recently used is
 * emitted when all slots are taken). NULL: no memory or no state. */
static tw__batch *batch_for(tw__batcher *b, const void *key, int64_t now_ns, bool *is_nomem)
{
    *is_nomem = false;
    if (b->last && b->last->key == key)
        return b->last;
    for (size_t i = 0; i < b->n_open; i++) {
        if (b->open[i]->key == key)
            return b->last = b->open[i];
    }
    if (b->n_open == b->limits.max_open) {
        size_t lru = 0;
        for (size_t i = 1; i < b->n_open; i++) {
            if (b->open[i]->last_use < b->open[lru]->last_use)
                lru = i;
        }
        emit_at(b, lru);
    }
    tw__batch *batch = calloc(1, sizeof *batch);
    if (!batch) {
        *is_nomem = true;
        return NULL;
    }
    batch->state = b->ops->open(b->ctx, key);
    if (!batch->state) {
        free(batch);
        return NULL;
    }
    batch->key = key;
    batch->first_ns = now_ns;
    if (b->spare_cap) {
        batch->items = b->spare_items;
        batch->meta = b->spare_meta;
        batch->cap = b->spare_cap;
        b->spare_items = NULL;
        b->spare_meta = NULL;
        b->spare_cap = 0;
    }
    b->open[b->n_open++] = batch;
    return b->last = batch;
}

static bool push(tw__batch *batch, void *item, const tw__span_data *span, void *cookie, size_t size)
{
    if (batch->n == batch->cap) {
        size_t cap = batch->cap ? batch->cap * 2 : 64;
        void **items = realloc(batch->items, cap * sizeof *items);
        if (!items)
            return false;
        batch->items = items;
        tw__batch_span *meta = realloc(batch->meta, cap * sizeof *meta);
        if (!meta)
            return false; /* items grew: harmless, cap stays */
        batch->meta = meta;
        batch->cap = cap;
    }
    batch->items[batch->n] = item;
    batch->meta[batch->n] =
        (tw__batch_span){span->trace_id_high, span->trace_id_low, span->span_id, cookie, size};
    batch->n++;
    batch->items_size += size;
    return true;
}

/* Emits the largest open batches until the pending bodies fit the budget. */
static void bound_pending(tw__batcher *b)
{
    while (b->limits.max_pending_bytes && b->pending > b->limits.max_pending_bytes && b->n_open) {
        size_t largest = 0;
        for (size_t i = 1; i < b->n_open; i++) {
            if (b->open[i]->body_bytes > b->open[largest]->body_bytes)
                largest = i;
        }
        emit_at(b, largest);
    }
}

tw__batch_result tw__batcher_add(tw__batcher *b, const void *key, const tw__span_data *span,
                                 const void *arg, void *cookie, int64_t now_ns)
{
    bool is_nomem;
    tw__batch *batch = batch_for(b, key, now_ns, &is_nomem);
    if (!batch)
        return is_nomem ? TW__BATCH_NOMEM : TW__BATCH_ENCODE;
    size_t size = 0;
    void *item = b->ops->encode(b->ctx, batch->state, span, arg, &size);
    if (!item)
        return TW__BATCH_ENCODE;
    /* A body grows with its items: when this one fits with the batch's,
     * it fits alone, and only a body too large asks for the size alone. */
    size_t body = b->ops->body_size(b->ctx, batch->state, batch->n + 1, batch->items_size + size);
    size_t alone = body;
    if (body > b->limits.max_body_bytes &&
        (!batch->n ||
         (alone = b->ops->body_size(b->ctx, batch->state, 1, size)) > b->limits.max_body_bytes)) {
        b->too_large = batch->n ? alone : body;
        b->ops->free_item(b->ctx, item);
        return TW__BATCH_TOO_LARGE;
    }
    if (batch->n && body > b->limits.max_body_bytes) {
        emit_at(b, index_of(b, batch));
        batch = batch_for(b, key, now_ns, &is_nomem);
        if (!batch) {
            b->ops->free_item(b->ctx, item);
            return is_nomem ? TW__BATCH_NOMEM : TW__BATCH_ENCODE;
        }
        body = b->ops->body_size(b->ctx, batch->state, 1, size);
    }
    if (!push(batch, item, span, cookie, size)) {
        b->ops->free_item(b->ctx, item);
        return TW__BATCH_NOMEM;
    }
    batch->last_use = ++b->tick;
    if (batch->n == 1)
        batch->first_ns = now_ns;
    b->spans++;
    b->pending = b->pending - batch->body_bytes + body;
    batch->body_bytes = body;
    bound_pending(b);
    return TW__BATCH_OK;
}

void tw__batcher_tick(tw__batcher *b, int64_t now_ns)
{
    if (!b->flush_ns)
        return;
    for (size_t i = 0; i < b->n_open;) {
        if (now_ns - b->open[i]->first_ns >= b->flush_ns)
            emit_at(b, i); /* moves the last slot here */
        else
            i++;
    }
}

int64_t tw__batcher_deadline(const tw__batcher *b)
{
    int64_t due = INT64_MAX;
    if (!b->flush_ns)
        return due;
    for (size_t i = 0; i < b->n_open; i++) {
        if (b->open[i]->first_ns + b->flush_ns < due)
            due = b->open[i]->first_ns + b->flush_ns;
    }
    return due;
}

void tw__batcher_flush(tw__batcher *b)
{
    while (b->n_open)
        emit_at(b, b->n_open - 1);
}

size_t tw__batcher_too_large_bytes(const tw__batcher *b)
{
    return b->too_large;
}

size_t tw__batcher_spans(const tw__batcher *b)
{
    return b->spans;
}

size_t tw__batcher_pending_bytes(const tw__batcher *b)
{
    return b->pending;
}
