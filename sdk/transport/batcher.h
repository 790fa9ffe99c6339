/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transport/batcher.h: the one batcher of the tree, keyed by process, with
 * size- and time-bounded batches. Used by the SDK's HTTP sender
 * (report/http_sender.c: the reporters, one process; `tracewire convert
 * --send` through transport/sender.h, many processes) and by `tracewire
 * agent` (bridge/agent/batch.c, every destination format).
 *
 * A batch holds the spans of one key (a process: a Jaeger Batch and an OTLP
 * resource carry one; a caller whose format lets spans of many processes
 * share a body, Zipkin, uses one key for all). Each span is encoded once, on
 * arrival, by the caller's framing (tw__batch_ops) into an opaque item of
 * known size; the batch keeps the item, the span's ids and a cookie of the
 * caller's, never the span record. A batch is cut and handed to the emit
 * callback:
 *   - when the next span would make its body larger than max_body_bytes
 *     (body_size is the framing's exact prediction);
 *   - when it is flush_ms old (tw__batcher_tick; the caller's clock);
 *   - when a new key arrives and max_open batches are open (the least
 *     recently used is emitted);
 *   - when the bodies of all open batches together pass max_pending_bytes
 *     (the largest is emitted);
 *   - on tw__batcher_flush.
 * A span whose body alone would exceed max_body_bytes is refused
 * (TW__BATCH_TOO_LARGE). Memory is therefore bounded by max_open bodies
 * (and by max_pending_bytes when set).
 *
 * Ownership: the batcher owns its batches and their items; the emit
 * callback borrows a batch, which is freed (items, framing state) when it
 * returns. Keys are compared by pointer and never dereferenced here; the
 * caller keeps them valid while a batch of theirs is open.
 * Locking: none; a batcher belongs to one thread (the reporter's, the
 * command's, an agent destination's).
 */
#ifndef TW_TRANSPORT_BATCHER_H
#define TW_TRANSPORT_BATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/model/span_data.h"

/* What a batch keeps per span besides its item. */
typedef struct tw__batch_span {
    uint64_t trace_id_high, trace_id_low, span_id;
    void *cookie; /* the caller's (the agent: the follow-mode chunk); NULL allowed */
    size_t size;  /* bytes its item adds to a body */
} tw__batch_span;

/* One batch, as the emit callback sees it. */
typedef struct tw__batch {
    const void *key; /* the process it was opened for */
    void *state;     /* the framing's state for this batch (ops->open) */
    void **items;    /* items[0..n): the encoded spans, in arrival order */
    tw__batch_span *meta;
    size_t n, cap;
    size_t items_size; /* sum of meta[i].size */
    size_t body_bytes; /* the framing's body_size for all n items */
    int64_t first_ns;  /* when its first span arrived (the caller's clock) */
    uint64_t last_use;
} tw__batch;

/* The caller's framing. @ctx is the batcher's ctx argument. */
typedef struct tw__batch_ops {
    /* The per-batch state for @key (NULL on failure: the span is refused
     * with TW__BATCH_ENCODE). */
    void *(*open)(void *ctx, const void *key);
    void (*close)(void *ctx, void *state); /* NULL state is never passed */
    /* One span as an item (NULL on failure); *size: the bytes it adds to a
     * body. @arg is tw__batcher_add's. The item must not depend on @state
     * beyond what every batch of the key shares (a batch cut by size is
     * replaced by a new one of the same key, and the item moves to it). */
    void *(*encode)(void *ctx, void *state, const tw__span_data *span, const void *arg,
                    size_t *size);
    void (*free_item)(void *ctx, void *item);
    /* The exact (or, for files, bounding) body size of @n >= 1 items whose
     * sizes total @items_size. */
    size_t (*body_size)(void *ctx, const void *state, size_t n, size_t items_size);
} tw__batch_ops;

typedef struct tw__batcher_limits {
    size_t max_body_bytes;    /* a body never exceeds this */
    size_t max_open;          /* batches (keys) open at once; 0: 1 */
    unsigned int flush_ms;    /* tick emits batches older than this; 0: never by time */
    size_t max_pending_bytes; /* open bodies together; 0: no bound but max_open bodies */
} tw__batcher_limits;

typedef void (*tw__batch_fn)(void *arg, tw__batch *b);

typedef struct tw__batcher tw__batcher;

/* A batcher over @ops (borrowed, with @ctx) handing each batch to @emit.
 * NULL when out of memory. */
tw__batcher *tw__batcher_new(const tw__batch_ops *ops, void *ctx, const tw__batcher_limits *limits,
                             tw__batch_fn emit, void *emit_arg);
/* Frees the open batches without emitting them (flush first to send
 * them); NULL is a no-op. */
void tw__batcher_free(tw__batcher *b);
/* Frees the open batches without emitting them (a fork child forgets what
 * the parent sends). */
void tw__batcher_discard(tw__batcher *b);

typedef enum tw__batch_result {
    TW__BATCH_OK = 0,
    TW__BATCH_TOO_LARGE, /* the span's body alone is larger than max_body_bytes */
    TW__BATCH_ENCODE,    /* the framing refused the span or its key */
    TW__BATCH_NOMEM
} tw__batch_result;

/* Encodes @span (with @arg, for ops->encode) into the open batch of @key,
 * opening one when needed; may emit batches first (see the top comment).
 * @cookie is kept with the span. @now_ns: the caller's clock, for flush_ms. */
tw__batch_result tw__batcher_add(tw__batcher *b, const void *key, const tw__span_data *span,
                                 const void *arg, void *cookie, int64_t now_ns);
/* Emits the batches whose first span arrived flush_ms or more before
 * @now_ns. */
void tw__batcher_tick(tw__batcher *b, int64_t now_ns);
/* When the oldest open batch is due (INT64_MAX: none open, or no flush_ms). */
int64_t tw__batcher_deadline(const tw__batcher *b);
/* Emits every open batch. */
void tw__batcher_flush(tw__batcher *b);
/* The body size of the span tw__batcher_add last refused as
 * TW__BATCH_TOO_LARGE, alone in a batch (0: none yet). */
size_t tw__batcher_too_large_bytes(const tw__batcher *b);
/* Spans in open batches. */
size_t tw__batcher_spans(const tw__batcher *b);
/* Bytes of the bodies the open batches would make now. */
size_t tw__batcher_pending_bytes(const tw__batcher *b);

#endif /* TW_TRANSPORT_BATCHER_H */
