/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/batch.h: the agent's per-format body framing and its use of
 * the SDK's one batcher (transport/batcher.h, shared with the reporters and
 * `convert --send`) (docs/agent.md, "Design"):
 *
 *   twa_framing  one wire format's body: open(process) once per batch,
 *                encode(span) -> an opaque item of known size, body_size(n,
 *                items) exact (or an upper bound for files), build(items) ->
 *                bytes. The HTTP bodies are the one framing of
 *                transport/framing.h (the same bodies as convert --send),
 *                the Jaeger agent datagram wraps wire/jaeger/jaeger_thrift.h, a file
 *                wraps a convert writer (twb_writer_vtable, one document per
 *                batch).
 *   twa_batcher  transport/batcher.h over a framing: groups spans per
 *                process (a Jaeger Batch and an OTLP resource
 *                carry one process), cuts a batch when the next span would make
 *                the body larger than max_body_bytes, when it is flush_ms old,
 *                when more than max_open batches are open (the least recently
 *                used goes), or on flush; hands each finished batch to a
 *                callback and frees it after the callback returns.
 *
 * A batch keeps each span's encoded item and its ids and follow-mode chunk,
 * never the span record (files excepted: their writer needs the record), so
 * memory is the encoded size. Locking: none; one destination thread owns a
 * batcher and its framing.
 */
#ifndef TW_BRIDGE_AGENT_BATCH_H
#define TW_BRIDGE_AGENT_BATCH_H

#include "agent/agent.h"
#include "transport/batcher.h"
#include "wire/core/buf.h"

typedef struct twa_framing twa_framing;

typedef enum twa_framing_kind {
    TWA_FRAME_ZIPKIN = 0,  /* Zipkin v2 JSON list (application/json) */
    TWA_FRAME_JAEGER_HTTP, /* Thrift binary Batch (application/x-thrift) */
    TWA_FRAME_OTLP_JSON,   /* ExportTraceServiceRequest (application/json) */
    TWA_FRAME_OTLP_PROTO,  /* ExportTraceServiceRequest (application/x-protobuf) */
    TWA_FRAME_UDP_COMPACT, /* Agent.emitBatch, compact */
    TWA_FRAME_UDP_BINARY,  /* Agent.emitBatch, binary */
    TWA_FRAME_FILE         /* a convert writer's document */
} twa_framing_kind;

/* A framing for @kind (@writer for TWA_FRAME_FILE). NULL with @why when the
 * format has no encoder. */
twa_framing *twa_framing_new(twa_framing_kind kind, const twb_writer_vtable *writer, char *why,
                             size_t why_size);
void twa_framing_free(twa_framing *f);
const char *twa_framing_content_type(const twa_framing *f);
/* Whether the Jaeger rules (wire/jaeger/jaeger_view.h) apply. */
bool twa_framing_is_jaeger(const twa_framing *f);

/*
 * Early encoding: a span encoded on the thread that queues it (a receiver)
 * into the very item the destination thread's batcher would make, so that
 * the destination thread only batches and sends. Only for framings whose
 * item depends on the span and its process alone (OTLP JSON and protobuf,
 * Zipkin v2 JSON); the others encode on the destination thread. A
 * twa_early holds one thread's encoder for one framing (the last process
 * it was opened for); it reads the framing but never writes it, so any
 * number of threads encode at once, each with its own twa_early.
 */
bool twa_framing_encodes_early(const twa_framing *f);
/* The item of @it for @f (*early created on first use); NULL when the
 * framing does not encode early or on failure (the destination thread then
 * encodes it and counts a failure). */
void *twa_early_encode(const twa_framing *f, twa_early **early, const twa_item *it, size_t *size);
void twa_early_free(twa_early *e);
/* The bytes an early item of @size body bytes holds (its header and
 * padding too): what a queue counts for it. */
size_t twa_early_item_bytes(size_t size);
/* Frees an item twa_early_encode made that no batch took. */
void twa_framing_free_item(const twa_framing *f, void *item);

/* A batch: the spans of one process (transport/batcher.h); meta[i].cookie
 * is span i's follow-mode chunk (twa_batch_chunk). */
typedef tw__batch twa_batch;

static inline twa_chunk *twa_batch_chunk(const twa_batch *b, size_t i)
{
    return (twa_chunk *)b->meta[i].cookie;
}

/* The body of items [lo, lo + n) into @out (replaced). False on failure. */
bool twa_batch_body(const twa_framing *f, twa_batch *b, size_t lo, size_t n, tw__buf *out);

typedef void (*twa_batch_fn)(void *arg, twa_batch *b);

/* The SDK's batcher (transport/batcher.h) over a twa_framing. */
typedef tw__batcher twa_batcher;

twa_batcher *twa_batcher_new(twa_framing *f, size_t max_body_bytes, size_t max_open,
                             unsigned int flush_ms, twa_batch_fn emit, void *arg);
void twa_batcher_free(twa_batcher *b); /* emits nothing: flush first */

typedef enum twa_add_result {
    TWA_ADD_OK = 0,
    TWA_ADD_TOO_LARGE, /* the span alone is larger than a body */
    TWA_ADD_ENCODE,    /* the encoder refused it */
    TWA_ADD_NOMEM
} twa_add_result;

/* Encodes the item's span into its process's batch (the item stays the
 * caller's). May emit batches. Inline: once per span. */
static inline twa_add_result twa_batcher_add(twa_batcher *b, const twa_item *it, int64_t now_ns)
{
    switch (tw__batcher_add(b, it->proc, it->data, it, it->chunk, now_ns)) {
    case TW__BATCH_OK:
        return TWA_ADD_OK;
    case TW__BATCH_TOO_LARGE:
        return TWA_ADD_TOO_LARGE;
    case TW__BATCH_NOMEM:
        return TWA_ADD_NOMEM;
    default:
        return TWA_ADD_ENCODE;
    }
}
/* Emits the batches opened before @now_ns - flush_ms. */
void twa_batcher_tick(twa_batcher *b, int64_t now_ns);
/* When the oldest open batch is due (INT64_MAX: none open). */
int64_t twa_batcher_deadline(const twa_batcher *b);
/* Emits every open batch. */
void twa_batcher_flush(twa_batcher *b);
/* Spans in open batches. */
size_t twa_batcher_spans(const twa_batcher *b);

#endif /* TW_BRIDGE_AGENT_BATCH_H */
