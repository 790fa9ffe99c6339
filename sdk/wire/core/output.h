/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/output.h: how a format's encoder writes a whole document (a
 * file's content, a request body) from groups of spans, for writers that
 * own the file handling (`tracewire convert --to`, tests).
 *
 * A writer creates a document encoder, calls encode once per group of spans
 * (a trace, or what one input record produced) and finish once at the end;
 * each call appends bytes to a buffer the writer then writes out. The
 * encoder owns what must span groups (the document's framing, batches it
 * gathers per process), and nothing else: memory stays bounded by a group
 * plus the encoder's documented batch limits.
 *
 * A span the format cannot hold (a value out of its range) is left out and
 * reported through the reject callback with a reason naming the span; the
 * document goes on. encode and finish return false only when memory runs
 * out (the document is then broken).
 *
 * Ownership: spans stay the caller's. Locking: none; one thread.
 */
#ifndef TW_WIRE_CORE_OUTPUT_H
#define TW_WIRE_CORE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/core/buf.h"
#include "wire/core/input.h"
#include "wire/model/span_data.h"

/* A span with the process that recorded it (the pair every encoder takes). */
typedef struct tw__wire_span {
    tw__span_data *data;        /* one reference, owned by whoever holds the pair */
    const tw__process *process; /* borrowed; pointer-equal processes are one process */
} tw__wire_span;

/* A span left out of the document: @reason says why (tw__wire_options
 * span_rejected has this type). */
typedef void (*tw__span_reject_fn)(void *user_data, const tw__wire_span *span, const char *reason);

typedef struct tw__doc_encoder tw__doc_encoder;

/* Encoders that gather spans per process (jaeger-thrift, otlp-proto) write
 * every process's spans once this many wait in all, checked after a whole
 * group, so the spans of one trace stay within a few thousand spans of each
 * other and a reader's assembly window (10,000 spans by default) finds them
 * together. Writing a process's spans only when they filled a batch put one
 * trace's spans tens of thousands of spans apart: otlp-proto output of 1M
 * spans read back with 99,964 of 100,000 traces split, jaeger-thrift with
 * 61. The cost is one process head per process per flush. */
#define TW__DOC_PENDING_SPANS 4096u

/* What an encoder needs of the spans it is given, and what it writes. */
enum {
    /* Jaeger wants unique span ids: shared server halves get their own
     * (the assembler of `tracewire convert` does it). */
    TW__ENCODER_JAEGER_IDS = 1 << 0,
    /* The document is binary, not text: `tracewire convert` does not write
     * it to a terminal. */
    TW__ENCODER_BINARY = 1 << 1
};

typedef struct tw__wire_encoder {
    const char *name;    /* the format's name (--to) */
    const char *summary; /* one line for --help */
    unsigned int flags;  /* TW__ENCODER_* */
    /* NULL on allocation failure. @reject (nullable) gets the spans left out. */
    tw__doc_encoder *(*create)(const tw__wire_options *opts, tw__span_reject_fn reject,
                               void *reject_data);
    /* Appends the encoding of @n spans (document framing included). */
    bool (*encode)(tw__doc_encoder *e, const tw__wire_span *spans, size_t n, tw__buf *out);
    /* Appends what ends the document (closing brackets, batches still held). */
    bool (*finish)(tw__doc_encoder *e, tw__buf *out);
    void (*destroy)(tw__doc_encoder *e); /* NULL is a no-op */
} tw__wire_encoder;

#endif /* TW_WIRE_CORE_OUTPUT_H */
