/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/span.h: spans (OpenTracing Span): start, tag, log, baggage,
 * finish.
 *
 * A span handle lives from tw_span_start*() to tw_span_finish*(): the handle
 * dies at finish (as in Jaeger's clients) and must not be used afterwards.
 * Spans of unsampled traces record nothing: tags and logs on them cost a
 * flag test and are discarded, so instrumentation can stay on everywhere.
 *
 * Limits (Dapper's safeguard, set on the tracer): at most N tags, N logs and
 * N fields per log per span, values cut to a byte cap. What a limit cut is
 * counted and marked on the finished span with the tags
 * tracewire.dropped_tags, tracewire.dropped_logs and
 * tracewire.truncated_values. Ids, name, times and references are never
 * displaced.
 *
 * Timestamps are microseconds since the Unix epoch. A span's duration is
 * measured with a monotonic clock unless an explicit start or finish time is
 * given.
 *
 * NULL: every tw_span_* call accepts a NULL span and does nothing, silently
 * (tw_span_set_baggage returns TW_E_INVALID_ARG): tw_span_start() returns
 * NULL only after logging why (closed tracer, no memory), so the caller's
 * path can stay the same without one log line per call. Other bad
 * arguments on a real span (a NULL key, a finished handle) are logged as
 * errors.
 *
 * Thread safety: a span is written by one thread at a time (the caller
 * synchronises if several threads touch one span); it may be finished on a
 * different thread from the one that started it.
 */
#ifndef TRACEWIRE_SPAN_H
#define TRACEWIRE_SPAN_H

#include "tracewire/common.h"
#include "tracewire/context.h"
#include "tracewire/tags.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_tracer tw_tracer;
typedef struct tw_span tw_span;
typedef struct tw_span_options tw_span_options;

typedef enum tw_reference_type { TW_REF_CHILD_OF = 0, TW_REF_FOLLOWS_FROM = 1 } tw_reference_type;

/* ---- start options ------------------------------------------------------------------------ */

/**
 * tw_span_options_new: options for tw_span_start(): references, an explicit
 * start time and initial tags. Reusable for any number of starts.
 * Returns: (transfer full) (nullable) NULL on allocation failure.
 * Thread safety: one thread at a time per options object. Since: 0.1
 */
TW_EXTERN tw_span_options *tw_span_options_new(void);
/** tw_span_options_free: NULL is a no-op. Since: 0.1 */
TW_EXTERN void tw_span_options_free(tw_span_options *opts);
/** tw_span_options_reset: forget references, start time and tags. Since: 0.1 */
TW_EXTERN void tw_span_options_reset(tw_span_options *opts);

/** Explicit start time in µs since the epoch (default: now). Since: 0.1 */
TW_EXTERN tw_status tw_span_options_set_start_time_us(tw_span_options *opts, int64_t start_us);

/**
 * tw_span_options_add_reference: adds a ChildOf or FollowsFrom reference. The
 * first ChildOf reference is the parent (if there is none, the first
 * FollowsFrom is); every reference is recorded on the span. The options take
 * their own reference on @ctx. A NULL @ctx is ignored (TW_OK), so the result of
 * a failed extract can be passed straight in.
 * Returns: TW_OK, TW_E_INVALID_ARG, TW_E_NOMEM. Since: 0.1
 */
TW_EXTERN tw_status tw_span_options_add_reference(tw_span_options *opts, tw_reference_type type,
                                                  const tw_span_context *ctx);

/** Initial tags, applied before the sampling decision is final (so
 * "sampling.priority" here forces sampling). Since: 0.1 */
TW_EXTERN tw_status tw_span_options_add_tag_str(tw_span_options *opts, const char *key,
                                                const char *value);
TW_EXTERN tw_status tw_span_options_add_tag_bool(tw_span_options *opts, const char *key,
                                                 bool value);
TW_EXTERN tw_status tw_span_options_add_tag_int64(tw_span_options *opts, const char *key,
                                                  int64_t value);
TW_EXTERN tw_status tw_span_options_add_tag_double(tw_span_options *opts, const char *key,
                                                   double value);

/* ---- start and finish --------------------------------------------------------------------- */

/**
 * tw_span_start: starts a span.
 * @tracer: the tracer. @operation: the operation name (copied).
 * @opts: (nullable) references, start time, tags. Without a reference the
 * parent is the calling thread's active context of @tracer
 * (tracewire/scope.h), unless the tracer's use_active_span option is off or
 * the span's ignore_active_span option is on; else the span is a root.
 * Returns: (transfer full) (nullable) the span, ended by tw_span_finish*().
 * NULL only for NULL arguments, a closed tracer, or allocation failure (all
 * reported through the logger); the tw_span_* functions accept NULL, so the
 * caller's code path stays the same.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_span *tw_span_start(tw_tracer *tracer, const char *operation,
                                 const tw_span_options *opts);

/**
 * tw_span_start_child: shorthand for a span whose parent (ChildOf) is
 * @parent, without an options object. A NULL @parent is no explicit parent:
 * the active context as for tw_span_start(), else a root span.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_span *tw_span_start_child(tw_tracer *tracer, const char *operation,
                                       const tw_span_context *parent);

/**
 * tw_span_finish: ends the span now and hands a sampled span to the reporter
 * (never blocking on I/O). The handle is invalid afterwards. NULL is a no-op.
 * Since: 0.1
 */
TW_EXTERN void tw_span_finish(tw_span *span);

/** tw_span_finish_at: like tw_span_finish with an explicit end time (µs
 * since the epoch); an end before the start gives duration 0. Since: 0.1 */
TW_EXTERN void tw_span_finish_at(tw_span *span, int64_t end_us);

/* ---- reading ---------------------------------------------------------------------------- */

/**
 * tw_span_get_context: the span's context.
 * Returns: (transfer none) (nullable) borrowed for the span's whole life:
 * the pointer, and every value read through it (baggage values included),
 * stay valid until tw_span_finish*(), whatever the span does meanwhile (a
 * baggage or sampling change is seen through the same pointer). Take
 * tw_span_context_ref() to keep it longer. Using it after the finish is a
 * bug that the library detects, while the handle is pooled, and logs (the
 * context is then ignored, as if NULL). NULL for a NULL or finished span.
 * Borrowed rather than owned so that it cannot leak:
 * tw_span_start_child(t, op, tw_span_get_context(parent)) is the idiom.
 * Thread safety: any thread that may read the span. Since: 0.1
 */
TW_EXTERN const tw_span_context *tw_span_get_context(const tw_span *span);

/** tw_span_is_sampled: whether the span records and will be reported. Since: 0.1 */
TW_EXTERN bool tw_span_is_sampled(const tw_span *span);

/* ---- writing ---------------------------------------------------------------------------- */

/**
 * tw_span_set_firehose: sets the firehose flag (0x08) on the span's context:
 * Jaeger stores spans of such a trace without indexing them (they are found
 * by trace id only). Children started from now on inherit it. NULL is a
 * no-op. Since: 0.1
 */
TW_EXTERN void tw_span_set_firehose(tw_span *span);

/**
 * tw_span_set_operation_name: renames the span (copied). The name is kept
 * even on a span that does not record, so a span of an unsampled trace
 * forced later by sampling.priority is reported under its last name.
 * Since: 0.1
 */
TW_EXTERN void tw_span_set_operation_name(tw_span *span, const char *operation);

/* A span's role in an exchange (OpenTracing's span.kind values;
 * OpenTelemetry's SpanKind). */
typedef enum tw_span_kind {
    TW_SPAN_KIND_INTERNAL = 0, /* no span.kind tag (the default) */
    TW_SPAN_KIND_SERVER = 1,
    TW_SPAN_KIND_CLIENT = 2,
    TW_SPAN_KIND_PRODUCER = 3,
    TW_SPAN_KIND_CONSUMER = 4
} tw_span_kind;

/**
 * tw_span_set_kind: sets the span's kind: the tag span.kind
 * (TW_TAG_SPAN_KIND) to "server", "client", "producer" or "consumer",
 * replacing a kind set before (by this call or as a tag);
 * TW_SPAN_KIND_INTERNAL removes it. The Zipkin and OTLP writers map it onto
 * their own kind fields.
 * @span: (nullable) the span; NULL is a no-op.
 * @kind: a tw_span_kind; other values are logged and ignored.
 * Thread safety: one thread at a time per span. Since: 0.1
 */
TW_EXTERN void tw_span_set_kind(tw_span *span, tw_span_kind kind);

/**
 * Typed tags. Keys and values are copied. Setting "sampling.priority" to a
 * number > 0 (or true) forces the trace to be sampled with the debug flag;
 * 0 (or false) unsamples it; only spans started from now on and this span
 * (from this call) follow the new decision.
 * Since: 0.1
 */
TW_EXTERN void tw_span_set_tag_str(tw_span *span, const char *key, const char *value);
TW_EXTERN void tw_span_set_tag_bool(tw_span *span, const char *key, bool value);
TW_EXTERN void tw_span_set_tag_int64(tw_span *span, const char *key, int64_t value);
TW_EXTERN void tw_span_set_tag_double(tw_span *span, const char *key, double value);
TW_EXTERN void tw_span_set_tag_binary(tw_span *span, const char *key, const void *data, size_t len);

/* One log field: a key and a typed value. */
typedef struct tw_log_field {
    const char *key;
    tw_value value;
} tw_log_field;

/**
 * tw_span_log_fields: appends a log with typed fields.
 * @timestamp_us: µs since the epoch, or 0 for now.
 * Since: 0.1
 */
TW_EXTERN void tw_span_log_fields(tw_span *span, int64_t timestamp_us, const tw_log_field *fields,
                                  size_t n_fields);

/**
 * tw_span_log_kv: appends a log of string fields given as NULL-terminated
 * key, value pairs: tw_span_log_kv(s, "event", "cache miss", "key", k, NULL).
 * A key without a value is an error reported through the logger; the log
 * is then dropped. Since: 0.1
 */
TW_EXTERN void tw_span_log_kv(tw_span *span, const char *key, ...);

/** tw_span_log_event: shorthand for a log with one field event=@event. Since: 0.1 */
TW_EXTERN void tw_span_log_event(tw_span *span, const char *event);

/**
 * tw_span_set_error: marks the span failed: tag error=true and a log with
 * event=error, error.kind=@kind and message=@message (either may be NULL and is
 * then left out). Since: 0.1
 */
TW_EXTERN void tw_span_set_error(tw_span *span, const char *kind, const char *message);

/**
 * tw_span_set_baggage: sets a baggage item that travels with this span's
 * context to every child and across process boundaries (a NULL @value
 * removes it). Baggage is recorded even on unsampled spans. The limits
 * that inject and extract apply hold here too: at most TW_BAGGAGE_MAX_ITEMS
 * items, TW_BAGGAGE_MAX_ITEM_BYTES per key + value, and
 * TW_BAGGAGE_MAX_TOTAL_BYTES in all (tracewire/propagation.h). An item over
 * them is refused, logged and counted (TW_TRACER_BAGGAGE_DROPPED); so is a
 * change after the span has lent values and been changed
 * 32 times (lent values stay valid until finish, so memory would grow).
 * Returns: TW_OK; TW_E_LIMIT (refused, nothing changed); TW_E_INVALID_ARG
 * (NULL span, silently; a NULL or empty key or a finished span, logged);
 * TW_E_NOMEM. Since: 0.1
 */
TW_EXTERN tw_status tw_span_set_baggage(tw_span *span, const char *key, const char *value);

/**
 * tw_span_get_baggage: Returns: (transfer none) (nullable) the value, borrowed
 * until the span finishes (also when its baggage changes meanwhile).
 * Since: 0.1
 */
TW_EXTERN const char *tw_span_get_baggage(const tw_span *span, const char *key);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_SPAN_H */
