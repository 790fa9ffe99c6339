/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/context.h: span contexts, the part of a span that crosses
 * threads and processes (OpenTracing SpanContext).
 *
 * A context holds a 128-bit trace id (high/low halves; high is 0 for 64-bit
 * ids), a 64-bit span id, the parent's span id (0 for a root), Jaeger flags
 * and baggage. Contexts are immutable and reference-counted: any number of
 * threads may read one and take references concurrently.
 *
 * Ownership: tw_span_context_new / tw_span_context_ref / *_with_baggage
 * return a reference the caller owns and drops with tw_span_context_unref.
 * A context obtained from tw_span_get_context() is borrowed from the span
 * for the span's whole life (until tw_span_finish), and so is everything
 * read through it, baggage values included, whatever the span does in the
 * meantime; tw_span_context_ref() on it returns an owned copy that outlives
 * the span.
 *
 * Thread safety: every function here may be called from any thread.
 */
#ifndef TRACEWIRE_CONTEXT_H
#define TRACEWIRE_CONTEXT_H

#include "tracewire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Jaeger flag bits (uber-trace-id, jaeger.thrift Span.flags). */
#define TW_FLAG_SAMPLED 0x01u
#define TW_FLAG_DEBUG 0x02u
#define TW_FLAG_FIREHOSE 0x08u

typedef struct tw_span_context tw_span_context;

/**
 * tw_span_context_new: builds a context from its parts (for propagation codecs
 * and tests). Zero trace or span ids are rejected.
 * Returns: (transfer full) (nullable) a new context, or NULL with @err set
 * (TW_E_INVALID_ARG naming the zero id; TW_E_NOMEM).
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_span_context *tw_span_context_new(uint64_t trace_id_high, uint64_t trace_id_low,
                                               uint64_t span_id, uint64_t parent_id,
                                               unsigned int flags, tw_error **err);

/**
 * tw_span_context_ref: takes a reference. For a context borrowed from an open
 * span this returns an owned copy (the span's own context dies at finish).
 * Returns: (transfer full) (nullable) NULL only for a NULL argument or when a
 * copy could not be allocated. Since: 0.1
 */
TW_EXTERN tw_span_context *tw_span_context_ref(const tw_span_context *ctx);

/** tw_span_context_unref: drops a reference; NULL is a no-op. Since: 0.1 */
TW_EXTERN void tw_span_context_unref(tw_span_context *ctx);

/** Accessors; all return 0/false for NULL. Since: 0.1 */
TW_EXTERN uint64_t tw_span_context_trace_id_high(const tw_span_context *ctx);
TW_EXTERN uint64_t tw_span_context_trace_id_low(const tw_span_context *ctx);
TW_EXTERN uint64_t tw_span_context_span_id(const tw_span_context *ctx);
TW_EXTERN uint64_t tw_span_context_parent_id(const tw_span_context *ctx);
TW_EXTERN unsigned int tw_span_context_flags(const tw_span_context *ctx);
TW_EXTERN bool tw_span_context_is_sampled(const tw_span_context *ctx);
TW_EXTERN bool tw_span_context_is_debug(const tw_span_context *ctx);

/**
 * tw_span_context_is_valid: whether the context has a trace id and a span id.
 * An extracted context may lack them and still carry a jaeger-debug-id, a
 * sampling decision or baggage (a "hint"): a span started from it begins a
 * new trace that keeps the debug id (tag jaeger-debug-id, sampled + debug),
 * the decision and the baggage. Since: 0.1
 */
TW_EXTERN bool tw_span_context_is_valid(const tw_span_context *ctx);

/** tw_span_context_is_sampling_deferred: the upstream made no sampling
 * decision (B3 "defer"); the next span decides with its tracer's sampler.
 * Since: 0.1 */
TW_EXTERN bool tw_span_context_is_sampling_deferred(const tw_span_context *ctx);

/** tw_span_context_debug_id: the jaeger-debug-id the context was extracted
 * with, or NULL. Borrowed as long as the caller holds @ctx. Since: 0.1 */
TW_EXTERN const char *tw_span_context_debug_id(const tw_span_context *ctx);

/** tw_span_context_tracestate: the W3C tracestate received (inherited by
 * child spans and re-emitted as held; tw_span_context_with_tracestate() in
 * tracewire/propagation.h sets a member), or NULL. Borrowed as long as the
 * caller holds @ctx. Since: 0.1 */
TW_EXTERN const char *tw_span_context_tracestate(const tw_span_context *ctx);

/* Buffer sizes (with the NUL) of the hex and traceparent forms below. */
#define TW_TRACE_ID_HEX_SIZE 33
#define TW_SPAN_ID_HEX_SIZE 17
#define TW_TRACEPARENT_SIZE 56

/**
 * tw_span_context_is_trace_id_random: whether at least the right-most 7 bytes
 * of the trace id are known to be random (W3C Trace Context Level 2
 * "random-trace-id", traceparent flag 0x02). True for every trace tracewire
 * starts and for contexts extracted from a traceparent with the flag; child
 * spans keep their parent's value. Jaeger, B3 and the binary format have no
 * such bit: contexts they extract say false, and they never write it (Jaeger's
 * debug flag, also 0x02 in its own byte, is a different thing).
 * Since: 0.1
 */
TW_EXTERN bool tw_span_context_is_trace_id_random(const tw_span_context *ctx);

/**
 * tw_span_context_trace_id_hex: writes the trace id as lower-case hex: 32
 * digits for a 128-bit id, 16 when the high half is 0 (Jaeger's and
 * Zipkin's form of a 64-bit id), plus a NUL.
 * @buf must hold at least TW_TRACE_ID_HEX_SIZE (33) bytes.
 * Returns: @buf, or NULL for NULL args or a short buffer (logged).
 * Since: 0.1
 */
TW_EXTERN char *tw_span_context_trace_id_hex(const tw_span_context *ctx, char *buf, size_t size);

/**
 * tw_span_context_trace_id_hex32: writes the trace id as exactly 32
 * lower-case hex digits plus a NUL, a 64-bit id left-padded with zeros: the
 * W3C and OpenTelemetry form, the same in every log line whatever
 * JAEGER_TRACEID_128BIT says (log correlation).
 * @ctx: the context. @buf: at least @size bytes. @size: at least
 * TW_TRACE_ID_HEX_SIZE (33).
 * Returns: @buf, or NULL for NULL args or a short buffer (logged).
 * Ownership: writes into the caller's buffer; keeps nothing.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN char *tw_span_context_trace_id_hex32(const tw_span_context *ctx, char *buf, size_t size);

/**
 * tw_span_context_span_id_hex: writes the span id as exactly 16 lower-case
 * hex digits plus a NUL.
 * @ctx: the context. @buf: at least @size bytes. @size: at least
 * TW_SPAN_ID_HEX_SIZE (17).
 * Returns: @buf, or NULL for NULL args or a short buffer (logged).
 * Ownership: writes into the caller's buffer; keeps nothing.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN char *tw_span_context_span_id_hex(const tw_span_context *ctx, char *buf, size_t size);

/**
 * tw_span_context_traceparent: writes the W3C traceparent of @ctx,
 * "00-<32 hex trace id>-<16 hex span id>-<flags>", exactly what a w3c
 * propagator injects, plus a NUL. For log lines, typically of the active
 * context: tw_span_context_traceparent(tw_tracer_active_context(t), buf,
 * sizeof buf).
 * @ctx: (nullable) the context; NULL or a context without ids writes "" and
 * returns NULL (no message: "nothing active" is normal).
 * @buf: at least @size bytes. @size: at least TW_TRACEPARENT_SIZE (56).
 * Returns: @buf, or NULL (then @buf holds "" when it is large enough).
 * Ownership: writes into the caller's buffer; keeps nothing.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN char *tw_span_context_traceparent(const tw_span_context *ctx, char *buf, size_t size);

/**
 * tw_span_context_baggage_get: looks up a baggage item.
 * Returns: (transfer none) (nullable) the value, valid as long as the caller
 * holds @ctx (for a span's borrowed context: until the span finishes, also
 * when its baggage changes meanwhile), or NULL when absent. Since: 0.1
 */
TW_EXTERN const char *tw_span_context_baggage_get(const tw_span_context *ctx, const char *key);

/** tw_span_context_baggage_count: number of baggage items. Since: 0.1 */
TW_EXTERN size_t tw_span_context_baggage_count(const tw_span_context *ctx);

/**
 * tw_span_context_baggage_item: the @index-th item (insertion order).
 * Returns: true and sets the borrowed *key and *value, false when out of range.
 * Since: 0.1
 */
TW_EXTERN bool tw_span_context_baggage_item(const tw_span_context *ctx, size_t index,
                                            const char **key, const char **value);

/**
 * tw_span_context_with_baggage: a new context equal to @ctx with one baggage
 * item set (replacing an existing key; a NULL @value removes it). The
 * baggage limits of inject and extract apply (TW_BAGGAGE_MAX_ITEMS,
 * TW_BAGGAGE_MAX_ITEM_BYTES, TW_BAGGAGE_MAX_TOTAL_BYTES).
 * Returns: (transfer full) (nullable) NULL on bad arguments, an item over
 * the limits (logged) or allocation failure. Since: 0.1
 */
TW_EXTERN tw_span_context *tw_span_context_with_baggage(const tw_span_context *ctx, const char *key,
                                                        const char *value);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_CONTEXT_H */
