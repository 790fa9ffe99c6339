/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/handler.h: finished-span handlers (Brave's SpanHandler, formerly
 * FinishedSpanHandler): a chain of callbacks that sees each span as it
 * finishes and may rename it, add, change or remove tags, rewrite string
 * values, or drop it before it reaches the reporter; and three ready-made
 * handlers: redaction by regular expression, dropping by operation name, and
 * per-operation latency metrics.
 *
 * Where it sits: tw_span_finish -> handler chain -> reporter.
 * Handlers run in the order they were added, on the thread that finishes the
 * span, after the limit marks (tracewire.dropped_tags, ...) are set and
 * before the span is handed to the reporter. A handler returning
 * TW_HANDLER_DROP ends the chain: later handlers do not see the span, and a
 * sampled span is not reported (counted in TW_TRACER_SPANS_DROPPED_BY_HANDLER).
 * Nothing runs for spans finished after tw_tracer_close().
 *
 * Sample local (Brave's alwaysSampleLocal): a handler with wants_unsampled
 * also sees the spans of traces the sampler did not sample. When at least one
 * handler of a tracer wants them, such spans record (a record is allocated;
 * tags, logs and times are kept, under the same limits) but are never
 * reported: after the chain they are discarded and counted in
 * TW_TRACER_SPANS_RECORDED_LOCALLY. Handlers without wants_unsampled are
 * skipped for them. Recording locally changes nothing that propagates: the
 * context's sampled flag, tw_span_is_sampled() and what inject writes stay as
 * the sampler decided. Without such a handler the unsampled path costs what
 * it did (one more flag test, about 2 instructions).
 *
 * Ownership: tw_tracer_options_add_handler() copies the vtable and takes over
 * its user_data: destroy(user_data) runs exactly once, at tw_tracer_free(),
 * or at tw_tracer_options_free() when no tracer was made from the options,
 * or when tw_tracer_new() fails. A tw_mutable_span and every pointer read
 * from it are borrowed for the duration of the on_finish call.
 *
 * Thread safety: on_finish runs on whichever thread finishes a span, on
 * several threads at once: it must be thread-safe and fast (it is on the
 * application's path: no I/O, no blocking). It must not keep the
 * tw_mutable_span, and must not start or finish spans of the same tracer
 * (their own finish would run the chain again, from inside itself). The
 * tw_mutable_span_* functions may be called only from inside on_finish, on
 * the span it was given. The other functions say what they allow.
 */
#ifndef TRACEWIRE_HANDLER_H
#define TRACEWIRE_HANDLER_H

#include "tracewire/common.h"
#include "tracewire/tracer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the handler vtable ------------------------------------------------------------------- */

/* The finishing span as a handler sees it: its record, editable. */
typedef struct tw_mutable_span tw_mutable_span;

/* What a handler decides. Any value other than TW_HANDLER_DROP keeps the span. */
typedef enum tw_handler_result { TW_HANDLER_KEEP = 0, TW_HANDLER_DROP = 1 } tw_handler_result;

/*
 * A handler. An extension vtable: set @size to sizeof(tw_span_handler) as
 * your header declares it; members are only ever appended, and a member this
 * library does not know (a larger @size) is ignored, so a new member will be
 * one whose absence is safe.
 *
 *   tw_span_handler h = {.size = sizeof h, .on_finish = my_fn, .user_data = state};
 *
 * @wants_unsampled: see the spans of unsampled traces too (sample local).
 * @on_finish: (required) called once per finished span it sees; returns
 *   TW_HANDLER_KEEP or TW_HANDLER_DROP. What it may assume: the span is
 *   finished (duration set), single-threaded for the call, and still holds
 *   what earlier handlers wrote.
 * @destroy: (nullable) releases @user_data; called once (see Ownership).
 * @user_data: passed to both.
 * Since: 0.1
 */
typedef struct tw_span_handler {
    size_t size;
    bool wants_unsampled;
    tw_handler_result (*on_finish)(void *user_data, tw_mutable_span *span);
    void (*destroy)(void *user_data);
    void *user_data;
} tw_span_handler;

/**
 * tw_tracer_options_add_handler: appends @handler to the chain of the tracer
 * that @opts will create. The vtable is copied (@handler itself may be
 * reused or freed) and its user_data now belongs to the options, then to the
 * tracer, which calls destroy(user_data) at tw_tracer_free(). The handlers
 * of the tw_handler_*_new() constructors live in their user_data: after a
 * successful add, do not use or free them any more.
 * @opts: the options. @handler: the vtable; @size must cover the members of
 * version 0.1 and on_finish must be set.
 * Returns: TW_OK; TW_E_INVALID_ARG (NULL, a short @size, no on_finish) or
 * TW_E_NOMEM: then nothing changed, destroy was not called and @user_data is
 * still the caller's (tw_span_handler_free() releases it).
 * Thread safety: one thread at a time per options. Since: 0.1
 */
TW_EXTERN tw_status tw_tracer_options_add_handler(tw_tracer_options *opts,
                                                  const tw_span_handler *handler);

/**
 * tw_span_handler_free: releases a handler that no options object took:
 * calls its destroy on its user_data, if both are set. For the handlers of
 * the tw_handler_*_new() constructors, this frees @handler itself; for a
 * tw_latency_metrics_handler() value, it drops its reference on the metrics.
 * NULL is a no-op.
 * Thread safety: one thread, and no other use of the handler. Since: 0.1
 */
TW_EXTERN void tw_span_handler_free(tw_span_handler *handler);

/* ---- the mutable span ----------------------------------------------------------------------
 *
 * Readers return 0, "", false or NULL for a NULL span or an index out of
 * range. Writers return TW_OK, TW_E_INVALID_ARG (NULL arguments, an index
 * out of range), TW_E_LIMIT (a new tag beyond the tracer's max_tags) or
 * TW_E_NOMEM; on error the span is unchanged. String values are copied and
 * cut to the tracer's max_value_bytes at a UTF-8 character boundary (not
 * counted: the tracewire.* limit marks were set before the chain ran).
 * Writes only change what the span reports; they cannot change its sampling
 * (a "sampling.priority" tag written here is just a tag). Tags are kept in
 * order; a span may hold several tags with one key.
 */

/** Ids and flags (TW_FLAG_* of tracewire/context.h) of the span. Since: 0.1 */
TW_EXTERN uint64_t tw_mutable_span_trace_id_high(const tw_mutable_span *span);
TW_EXTERN uint64_t tw_mutable_span_trace_id_low(const tw_mutable_span *span);
TW_EXTERN uint64_t tw_mutable_span_span_id(const tw_mutable_span *span);
TW_EXTERN uint64_t tw_mutable_span_parent_id(const tw_mutable_span *span);
TW_EXTERN unsigned int tw_mutable_span_flags(const tw_mutable_span *span);
/** tw_mutable_span_is_sampled: true when the span will be reported unless a
 * handler drops it; false for a span recorded locally (sample local).
 * Since: 0.1 */
TW_EXTERN bool tw_mutable_span_is_sampled(const tw_mutable_span *span);

/** tw_mutable_span_operation: Returns: (transfer none) the operation name,
 * borrowed until on_finish returns. Since: 0.1 */
TW_EXTERN const char *tw_mutable_span_operation(const tw_mutable_span *span);
/** tw_mutable_span_set_operation: renames the span (copied). Since: 0.1 */
TW_EXTERN tw_status tw_mutable_span_set_operation(tw_mutable_span *span, const char *operation);

/** Start (µs since the epoch) and duration (µs, >= 0). Since: 0.1 */
TW_EXTERN int64_t tw_mutable_span_start_us(const tw_mutable_span *span);
TW_EXTERN int64_t tw_mutable_span_duration_us(const tw_mutable_span *span);

/** tw_mutable_span_tag_count: the number of tags. Since: 0.1 */
TW_EXTERN size_t tw_mutable_span_tag_count(const tw_mutable_span *span);
/** tw_mutable_span_tag: the @index-th tag: sets *@key and *@value (each
 * nullable), borrowed until on_finish returns. Returns: false when out of
 * range. Since: 0.1 */
TW_EXTERN bool tw_mutable_span_tag(const tw_mutable_span *span, size_t index, const char **key,
                                   tw_value *value);
/** tw_mutable_span_find_tag: the last tag named @key (the one that wins, as
 * for tw_finished_span_find_tag). Returns: false when absent. Since: 0.1 */
TW_EXTERN bool tw_mutable_span_find_tag(const tw_mutable_span *span, const char *key,
                                        tw_value *value);

/**
 * tw_mutable_span_set_tag_*: sets @key to a typed value: the first tag named
 * @key keeps its position and takes the value (and type), later tags with the
 * key are removed; without one, the tag is appended (TW_E_LIMIT when the span
 * already has max_tags tags besides its tracewire.* and sampler.* tags).
 * Keys and values are copied. Since: 0.1
 */
TW_EXTERN tw_status tw_mutable_span_set_tag_str(tw_mutable_span *span, const char *key,
                                                const char *value);
TW_EXTERN tw_status tw_mutable_span_set_tag_bool(tw_mutable_span *span, const char *key,
                                                 bool value);
TW_EXTERN tw_status tw_mutable_span_set_tag_int64(tw_mutable_span *span, const char *key,
                                                  int64_t value);
TW_EXTERN tw_status tw_mutable_span_set_tag_double(tw_mutable_span *span, const char *key,
                                                   double value);
/** tw_mutable_span_set_tag_str_at: replaces the value of the @index-th tag
 * with the string @value, keeping its key and position (what redaction
 * needs when a key appears more than once). Since: 0.1 */
TW_EXTERN tw_status tw_mutable_span_set_tag_str_at(tw_mutable_span *span, size_t index,
                                                   const char *value);
/** tw_mutable_span_remove_tag: removes every tag named @key; the others keep
 * their order. Returns: the number removed (0 also for NULL). Since: 0.1 */
TW_EXTERN size_t tw_mutable_span_remove_tag(tw_mutable_span *span, const char *key);

/** Logs: count, timestamp (µs since the epoch) and fields of the @log-th
 * log. tw_mutable_span_log_field sets the borrowed *@key and *@value (each
 * nullable); false when out of range. Since: 0.1 */
TW_EXTERN size_t tw_mutable_span_log_count(const tw_mutable_span *span);
TW_EXTERN int64_t tw_mutable_span_log_timestamp_us(const tw_mutable_span *span, size_t log);
TW_EXTERN size_t tw_mutable_span_log_field_count(const tw_mutable_span *span, size_t log);
TW_EXTERN bool tw_mutable_span_log_field(const tw_mutable_span *span, size_t log, size_t field,
                                         const char **key, tw_value *value);
/** tw_mutable_span_set_log_field_str: replaces the value of field @field of
 * log @log with the string @value (copied), keeping its key. Since: 0.1 */
TW_EXTERN tw_status tw_mutable_span_set_log_field_str(tw_mutable_span *span, size_t log,
                                                      size_t field, const char *value);

/* ---- ready-made handlers ------------------------------------------------------------------
 *
 * None of them asks for unsampled spans except the latency metrics, so alone
 * they cost nothing on unsampled traces. When a later handler does see
 * unsampled spans (the latency metrics, or your own), set wants_unsampled on
 * the redaction or drop handler before adding it, so that the later handler
 * sees the same spans, redacted or dropped alike, whatever the sampler said.
 */

/**
 * tw_handler_redact_new: a handler that replaces every substring matching
 * @value_regex in string tag values and string log field values with
 * @replacement, e.g. US social security numbers:
 *   tw_handler_redact_new("\\b\\d{3}-\\d{2}-\\d{4}\\b", "***-**-****", &err).
 * Keys, operation names and non-string values are not searched. The syntax is
 * PCRE's (GLib's GRegex), UTF-8 mode; the replacement is literal (no
 * back-references). It fails closed: a value that is not valid UTF-8 (or
 * holds a NUL byte), or whose match fails (PCRE's backtracking limit), is
 * replaced whole by @replacement. A pattern that matches the empty string
 * inserts @replacement between characters: anchor or bound your patterns.
 * Cost: one regular-expression search per string value, on the finishing
 * thread: about 2,100 instructions each (callgrind), most of it GLib's
 * per-search allocations.
 * @value_regex: the pattern (copied). @replacement: the literal text (copied;
 * "" removes the matches).
 * Returns: (transfer full) (nullable) the handler (wants_unsampled false),
 * for tw_tracer_options_add_handler() or tw_span_handler_free(); NULL with
 * @err set: TW_E_CONFIG naming the pattern and GLib's reason when it does not
 * compile; TW_E_INVALID_ARG for NULL arguments; TW_E_NOMEM.
 * Thread safety: any thread; the handler runs on any number of threads at
 * once. Since: 0.1
 */
TW_EXTERN tw_span_handler *tw_handler_redact_new(const char *value_regex, const char *replacement,
                                                 tw_error **err);

/**
 * tw_handler_drop_names_new: a handler that drops spans whose operation name
 * (as earlier handlers left it) equals one of @names exactly (bytes, case
 * matters), such as health checks. A binary search per span.
 * @names: @n names (copied; duplicates are harmless). @n may be 0 (drops
 * nothing).
 * Returns: (transfer full) (nullable) the handler (wants_unsampled false);
 * NULL for a NULL @names with @n > 0 or a NULL name (logged), or when out of
 * memory.
 * Thread safety: any thread; the handler runs on any number of threads at
 * once. Since: 0.1
 */
TW_EXTERN tw_span_handler *tw_handler_drop_names_new(const char *const *names, size_t n);

/*
 * Latency metrics per operation: count, sum and a histogram of durations,
 * from which percentiles are read. The handler wants unsampled spans, so it
 * counts 100% of the spans even when the sampler reports 1%.
 *
 * Histogram: log-linear (HDR-style) over microseconds: exact below 64 µs,
 * then 32 buckets per power of two up to 2^36 µs (19 hours; longer spans
 * land in the top bucket): 1024 buckets. A percentile read is within 1/64
 * (1.6%) of the true nearest-rank value for durations below 2^36 µs, and
 * never outside the minimum and maximum seen. Memory: about 8.3 KiB per
 * operation seen, allocated at its first span, for at most max_operations
 * operations plus one overflow entry that counts the spans of every later
 * operation (read it by passing a NULL operation). Nothing is ever removed.
 *
 * Updates are lock-free (relaxed atomic increments; a new operation takes a
 * mutex once), so several threads may finish spans of one operation at
 * once. Readers see each number as of some moment; count, sum and the
 * histogram of one operation may be a few spans apart while spans finish.
 */
typedef struct tw_latency_metrics tw_latency_metrics;

/**
 * tw_latency_metrics_new: empty metrics for at most @max_operations distinct
 * operation names (0 = 256).
 * Returns: (transfer full) (nullable) NULL only when out of memory; free with
 * tw_latency_metrics_free(). Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_latency_metrics *tw_latency_metrics_new(size_t max_operations);

/**
 * tw_latency_metrics_free: drops the caller's reference; the memory goes when
 * the handlers made from @metrics are gone too (their destroy), so the order
 * of tw_latency_metrics_free() and tw_tracer_free() does not matter. Names
 * borrowed from @metrics die here. NULL is a no-op.
 * Thread safety: any thread; no reader of @metrics may race with it. Since: 0.1
 */
TW_EXTERN void tw_latency_metrics_free(tw_latency_metrics *metrics);

/**
 * tw_latency_metrics_handler: a handler feeding @metrics (wants_unsampled
 * true; never drops). It holds a reference on @metrics, released by its
 * destroy: pass it to tw_tracer_options_add_handler(), or release it with
 * tw_span_handler_free(). Several tracers may feed one @metrics.
 * Returns: the handler by value; for a NULL @metrics one without on_finish,
 * which tw_tracer_options_add_handler() refuses.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_span_handler tw_latency_metrics_handler(tw_latency_metrics *metrics);

/**
 * Readers of one operation (NULL: the overflow entry). For an unknown
 * operation, the count and sum are 0 and the others -1.
 * tw_latency_metrics_percentile_us: the duration at quantile @q (0..1; 0.5
 * is the median, 0 the minimum, 1 the maximum), within the error above;
 * -1 also for @q outside [0, 1] or NaN.
 * Thread safety: any thread, while spans finish. Since: 0.1
 */
TW_EXTERN uint64_t tw_latency_metrics_count(const tw_latency_metrics *metrics,
                                            const char *operation);
TW_EXTERN uint64_t tw_latency_metrics_sum_us(const tw_latency_metrics *metrics,
                                             const char *operation);
TW_EXTERN int64_t tw_latency_metrics_max_us(const tw_latency_metrics *metrics,
                                            const char *operation);
TW_EXTERN int64_t tw_latency_metrics_percentile_us(const tw_latency_metrics *metrics,
                                                   const char *operation, double q);

/**
 * Iteration: the operations known now, in the order they were first seen
 * (the overflow entry is not listed). tw_latency_metrics_operation returns
 * (transfer none) (nullable) the @index-th name, borrowed until
 * tw_latency_metrics_free(), or NULL when @index >= the count.
 *   for (size_t i = 0; (op = tw_latency_metrics_operation(m, i)); i++)
 *       printf("%s %" PRIu64 "\n", op, tw_latency_metrics_count(m, op));
 * Thread safety: any thread, while spans finish (new operations only ever
 * append). Since: 0.1
 */
TW_EXTERN size_t tw_latency_metrics_operation_count(const tw_latency_metrics *metrics);
TW_EXTERN const char *tw_latency_metrics_operation(const tw_latency_metrics *metrics, size_t index);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_HANDLER_H */
