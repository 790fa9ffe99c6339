/*
 * tracewire/reporter.h: where finished sampled spans go.
 *
 * Reporters: the Jaeger agent UDP reporter (Thrift compact emitBatch, a
 * bounded queue and a background thread: the application thread only
 * enqueues, never sends), an in-memory reporter (for tests, including the
 * users' own), a logging reporter (one line per span to a tw_log_fn), and a
 * composite that fans out to several.
 *
 * Ownership: a reporter given to tw_tracer_options_set_reporter() belongs to
 * the options and then to the tracer, which closes and frees it; the caller
 * may keep the pointer to read counters or memory-reporter spans until
 * tw_tracer_free(). A reporter never given to a tracer is freed with
 * tw_reporter_free().
 *
 * Accounting: every span handed to a reporter ends in exactly one counter:
 * sent, dropped because the queue was full, dropped because it was too large
 * for one packet, or failed to emit (a send error). So
 * reported = sent + queue_full + too_large + failed once the reporter has
 * flushed.
 *
 * Thread safety: reporter functions may be called from any thread.
 */
#ifndef TRACEWIRE_REPORTER_H
#define TRACEWIRE_REPORTER_H

#include "tracewire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_reporter tw_reporter;
typedef struct tw_reporter_options tw_reporter_options;
typedef struct tw_finished_span tw_finished_span;

/* ---- options of the asynchronous (network) reporters -------------------------------------- */

/** tw_reporter_options_new: defaults as in docs/CONFIGURATION.md. Since: 0.1 */
TW_EXTERN tw_reporter_options *tw_reporter_options_new(void);
TW_EXTERN void tw_reporter_options_free(tw_reporter_options *opts);

/** Agent host (name, IPv4 or IPv6 literal; default "127.0.0.1") and UDP port
 * (default 6831). Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_agent(tw_reporter_options *opts, const char *host,
                                                  unsigned int port);
/** Queue capacity in spans (default 8192; at least 1). Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_max_queue_size(tw_reporter_options *opts,
                                                           size_t max_spans);
/** Flush interval in milliseconds (default 1000; at least 1). Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_flush_interval_ms(tw_reporter_options *opts,
                                                              unsigned int interval_ms);
/** Largest UDP datagram in bytes, whole serialized message (default 65000;
 * 512..65507). Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_max_packet_size(tw_reporter_options *opts,
                                                            size_t bytes);
/** How often the agent host name is resolved again (default 30000 ms; 0
 * turns re-resolution off). Since: 0.1 */
TW_EXTERN tw_status tw_reporter_options_set_resolve_interval_ms(tw_reporter_options *opts,
                                                                unsigned int interval_ms);

/* ---- reporters ---------------------------------------------------------------------------- */

/**
 * tw_reporter_jaeger_udp_new: the Jaeger agent UDP reporter (Thrift compact
 * Agent.emitBatch). The socket is opened here; a host name that does not
 * resolve yet is not an error (sends fail and are counted until it does).
 * @opts: (nullable) NULL for defaults.
 * Returns: (transfer full) (nullable) NULL with @err set on invalid options or
 * when no socket can be opened. Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_jaeger_udp_new(const tw_reporter_options *opts, tw_error **err);

/**
 * tw_reporter_memory_new: keeps finished spans in memory, in finish order, up
 * to @max_spans (0 = 1,000,000); later spans are dropped and counted as
 * queue_full. Synchronous: a span is visible as soon as tw_span_finish returns.
 * Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_memory_new(size_t max_spans);

/**
 * tw_reporter_logging_new: writes one line per finished span to @fn at
 * TW_LOG_INFO, on the finishing thread. @fn NULL writes to stderr.
 * Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_logging_new(tw_log_fn fn, void *user_data);

/**
 * tw_reporter_composite_new: reports every span to each of @reporters, which
 * it takes ownership of (also on failure). Since: 0.1
 */
TW_EXTERN tw_reporter *tw_reporter_composite_new(tw_reporter *const *reporters, size_t n);

/** tw_reporter_composite_count: number of children of a composite; 0 for any
 * other reporter. Since: 0.1 */
TW_EXTERN size_t tw_reporter_composite_count(const tw_reporter *reporter);
/** tw_reporter_composite_get: the @index-th child. Returns: (transfer none)
 * (nullable) borrowed as long as the composite lives. Since: 0.1 */
TW_EXTERN tw_reporter *tw_reporter_composite_get(const tw_reporter *reporter, size_t index);

/** tw_reporter_free: for a reporter that no tracer owns; NULL is a no-op. Since: 0.1 */
TW_EXTERN void tw_reporter_free(tw_reporter *reporter);

/** tw_reporter_name: "jaeger-udp", "memory", "logging", "composite". Since: 0.1 */
TW_EXTERN const char *tw_reporter_name(const tw_reporter *reporter);

/* ---- counters ----------------------------------------------------------------------------- */

typedef enum tw_counter {
    TW_COUNTER_SPANS_REPORTED = 0, /* handed to the reporter */
    TW_COUNTER_SPANS_SENT = 1,     /* written to the transport (UDP: datagram accepted) */
    TW_COUNTER_DROPPED_QUEUE_FULL = 2,
    TW_COUNTER_DROPPED_TOO_LARGE = 3,
    TW_COUNTER_FAILED_TO_EMIT = 4,
    TW_COUNTER_BATCHES_SENT = 5,
    TW_COUNTER_BYTES_SENT = 6,
    TW_COUNTER_QUEUE_LENGTH = 7, /* gauge: spans waiting now */
    TW_COUNTER_RESOLVE_FAILURES = 8
} tw_counter;

/**
 * tw_reporter_counter: reads a counter (cumulative since the reporter was
 * created). A composite sums its children. Unknown counters read 0.
 * Since: 0.1
 */
TW_EXTERN uint64_t tw_reporter_counter(const tw_reporter *reporter, tw_counter counter);

/* ---- finished spans (memory reporter) --------------------------------------------------- */

/** Number of spans the memory reporter holds; 0 for other reporters. Since: 0.1 */
TW_EXTERN size_t tw_memory_reporter_count(const tw_reporter *reporter);
/**
 * tw_memory_reporter_span: the @index-th span (finish order).
 * Returns: (transfer none) (nullable) borrowed until tw_memory_reporter_clear()
 * or the reporter is freed. Since: 0.1
 */
TW_EXTERN const tw_finished_span *tw_memory_reporter_span(const tw_reporter *reporter,
                                                          size_t index);
/** Forgets every held span. Since: 0.1 */
TW_EXTERN void tw_memory_reporter_clear(tw_reporter *reporter);

/* Read accessors of a finished span; NULL reads as 0 / "". Since: 0.1 */
TW_EXTERN const char *tw_finished_span_operation(const tw_finished_span *span);
TW_EXTERN uint64_t tw_finished_span_trace_id_high(const tw_finished_span *span);
TW_EXTERN uint64_t tw_finished_span_trace_id_low(const tw_finished_span *span);
TW_EXTERN uint64_t tw_finished_span_span_id(const tw_finished_span *span);
TW_EXTERN uint64_t tw_finished_span_parent_id(const tw_finished_span *span);
TW_EXTERN unsigned int tw_finished_span_flags(const tw_finished_span *span);
TW_EXTERN int64_t tw_finished_span_start_us(const tw_finished_span *span);
TW_EXTERN int64_t tw_finished_span_duration_us(const tw_finished_span *span);
TW_EXTERN size_t tw_finished_span_tag_count(const tw_finished_span *span);
/** The @index-th tag: sets the borrowed *key and *value; false when out of range. */
TW_EXTERN bool tw_finished_span_tag(const tw_finished_span *span, size_t index, const char **key,
                                    tw_value *value);
/** The last tag named @key; false when absent. */
TW_EXTERN bool tw_finished_span_find_tag(const tw_finished_span *span, const char *key,
                                         tw_value *value);
TW_EXTERN size_t tw_finished_span_log_count(const tw_finished_span *span);
TW_EXTERN int64_t tw_finished_span_log_timestamp_us(const tw_finished_span *span, size_t log);
TW_EXTERN size_t tw_finished_span_log_field_count(const tw_finished_span *span, size_t log);
TW_EXTERN bool tw_finished_span_log_field(const tw_finished_span *span, size_t log, size_t field,
                                          const char **key, tw_value *value);
TW_EXTERN size_t tw_finished_span_reference_count(const tw_finished_span *span);
/** The @index-th reference: type (tw_reference_type values), trace id and span id. */
TW_EXTERN bool tw_finished_span_reference(const tw_finished_span *span, size_t index, int *type,
                                          uint64_t *trace_id_high, uint64_t *trace_id_low,
                                          uint64_t *span_id);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_REPORTER_H */
