/* SPDX-License-Identifier: Apache-2.0 */
/*
 * context_parts.h: building a span context from its parts, the narrow
 * interface that the propagation codecs and `tracewire context`
 * (bridge/context_json.c) share. Hint contexts (no ids: a jaeger-debug-id,
 * a bare B3 sampling decision, baggage alone) and tracestate have no public
 * constructor; this is the one way to make them, and the only SDK header the
 * command's context subcommand includes.
 *
 * Ownership and locking: contexts and baggage are immutable and
 * reference-counted (any thread).
 */
#ifndef TW_CONTEXT_PARTS_H
#define TW_CONTEXT_PARTS_H

#include <stdbool.h>
#include <stdint.h>

#include "tracewire/context.h"

/* Internal flag above Jaeger's byte: the upstream made no sampling decision
 * (B3 "defer"); the first span started from the context decides. */
#define TW__FLAG_DEFERRED 0x100u
/* W3C Trace Context Level 2 "random-trace-id" (traceparent flag 0x02): at least
 * the right-most 7 bytes of the trace id are random. Kept above Jaeger's byte,
 * where 0x02 is debug, so that each codec writes its own bit: W3C writes it,
 * Jaeger, B3 and binary have no such bit. Set on every trace tracewire starts
 * (span.c: ids.c draws the trace id's low half, in 64-bit mode the whole id,
 * uniformly), inherited by children, read from traceparent. */
#define TW__FLAG_RANDOM 0x200u
#define TW__FLAGS_WIRE 0xffu

/* Immutable, reference-counted list of key/value pairs (context.c). */
typedef struct tw__baggage tw__baggage;

tw__baggage *tw__baggage_ref(tw__baggage *b);
void tw__baggage_unref(tw__baggage *b);
/* A new baggage equal to @b with @key set (NULL value removes); NULL on
 * allocation failure. @b may be NULL (empty). Returns NULL, with *is_empty
 * true, when the result is empty. */
tw__baggage *tw__baggage_with(const tw__baggage *b, const char *key, const char *value,
                              bool *is_empty);

/* Parts of a context for the propagation codecs. */
typedef struct tw__context_parts {
    uint64_t trace_id_high, trace_id_low, span_id, parent_id;
    uint32_t flags;         /* Jaeger flags, plus TW__FLAG_DEFERRED, TW__FLAG_RANDOM */
    tw__baggage *baggage;   /* borrowed; the context takes its own reference */
    const char *tracestate; /* copied; NULL for none */
    const char *debug_id;   /* copied; NULL for none */
} tw__context_parts;

/* A heap context from parts (ids may be zero for a hint); NULL on OOM. */
tw_span_context *tw__span_context_build(const tw__context_parts *parts);

#endif /* TW_CONTEXT_PARTS_H */
