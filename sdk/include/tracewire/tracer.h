/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/tracer.h: the tracer: service identity, sampler, reporter and
 * limits, shared by every thread of the process.
 *
 * Lifecycle: tw_tracer_new() / tw_tracer_new_from_env() -> spans ->
 * tw_tracer_close() (drains the queue, flushes, stops the reporter's
 * thread, all within the reporter's close deadline) -> tw_tracer_free()
 * (frees the sampler, reporter, handlers and the handle).
 * Between close and free the handle stays valid so that a late call is a
 * clear TW_E_CLOSED error, never a crash: tw_span_start on a closed tracer
 * returns NULL, a span finished after close is dropped and counted.
 * tw_tracer_free() closes first if needed. Free the tracer only after the
 * last span is finished: a span holds the tracer's memory alive, but not
 * its sampler or reporter.
 *
 * Thread safety: the tracer is shared by all threads; every tw_tracer_*
 * call below may be made from any thread, except tw_tracer_free(), which no
 * other thread may race with.
 */
#ifndef TRACEWIRE_TRACER_H
#define TRACEWIRE_TRACER_H

#include "tracewire/common.h"
#include "tracewire/propagation.h"
#include "tracewire/reporter.h"
#include "tracewire/sampler.h"
#include "tracewire/span.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options ---------------------------------------------------------------------------- */

typedef struct tw_tracer_options tw_tracer_options;

/** tw_tracer_options_new: defaults: 128-bit trace ids, const sampler (all),
 * Jaeger agent UDP reporter on 127.0.0.1:6831, limits as in
 * docs/CONFIGURATION.md. Thread safety: one thread per options. Since: 0.1 */
TW_EXTERN tw_tracer_options *tw_tracer_options_new(void);
TW_EXTERN void tw_tracer_options_free(tw_tracer_options *opts);

/** Service name (required, non-empty). Since: 0.1 */
TW_EXTERN tw_status tw_tracer_options_set_service(tw_tracer_options *opts, const char *service);
/** Tracer (process) tags, sent in Jaeger's Batch.process; a user "hostname"
 * or "ip" tag replaces the detected one. Since: 0.1 */
TW_EXTERN tw_status tw_tracer_options_add_tag_str(tw_tracer_options *opts, const char *key,
                                                  const char *value);
TW_EXTERN tw_status tw_tracer_options_add_tag_bool(tw_tracer_options *opts, const char *key,
                                                   bool value);
TW_EXTERN tw_status tw_tracer_options_add_tag_int64(tw_tracer_options *opts, const char *key,
                                                    int64_t value);
TW_EXTERN tw_status tw_tracer_options_add_tag_double(tw_tracer_options *opts, const char *key,
                                                     double value);
/** 128-bit (default) or 64-bit trace ids for new traces. Since: 0.1 */
TW_EXTERN tw_status tw_tracer_options_set_trace_id_128bit(tw_tracer_options *opts, bool is_128bit);
/** The sampler; the options take ownership (the previous one is freed). Since: 0.1 */
TW_EXTERN tw_status tw_tracer_options_set_sampler(tw_tracer_options *opts, tw_sampler *sampler);
/** The reporter; the options take ownership (the previous one is freed). Since: 0.1 */
TW_EXTERN tw_status tw_tracer_options_set_reporter(tw_tracer_options *opts, tw_reporter *reporter);
/** The propagator used by tw_tracer_inject/extract (default: Jaeger only);
 * the options take ownership (the previous one is freed), the tracer then
 * takes it from them as it does the sampler. Returns: TW_OK, TW_E_INVALID_ARG.
 * Thread safety: one thread per options. Since: 0.1 */
TW_EXTERN tw_status tw_tracer_options_set_propagator(tw_tracer_options *opts,
                                                     tw_propagator *propagator);
/** Per-span limits: tags (default 256), logs (256), fields per log (64), bytes
 * per string or binary value (4096). 0 is refused. Since: 0.1 */
TW_EXTERN tw_status tw_tracer_options_set_max_tags(tw_tracer_options *opts, size_t max_tags);
TW_EXTERN tw_status tw_tracer_options_set_max_logs(tw_tracer_options *opts, size_t max_logs);
TW_EXTERN tw_status tw_tracer_options_set_max_log_fields(tw_tracer_options *opts,
                                                         size_t max_fields);
TW_EXTERN tw_status tw_tracer_options_set_max_value_bytes(tw_tracer_options *opts,
                                                          size_t max_bytes);
/**
 * tw_tracer_options_set_use_active_span: whether a span started without an
 * explicit parent becomes a child of the calling thread's active context
 * (tracewire/scope.h). Default true. With false, such spans are roots, and
 * scopes, tw_tracer_active_*() and captures still work.
 * Returns: TW_OK, TW_E_INVALID_ARG. Thread safety: one thread per options.
 * Since: 0.1
 */
TW_EXTERN tw_status tw_tracer_options_set_use_active_span(tw_tracer_options *opts,
                                                          bool use_active_span);

/**
 * tw_tracer_options_set_parent_based: who decides whether a span is
 * sampled. true (the default): the sampler decides once per trace, where it
 * starts in this process; a span with a parent (local or extracted) follows
 * the parent's decision (Jaeger's rule, OpenTelemetry's ParentBased
 * samplers). false: the sampler decides for every span started, parent or
 * not (OpenTelemetry's always_on, always_off and traceidratio without the
 * parentbased_ prefix): a child of an unsampled remote parent can then be
 * sampled, and a trace can have sampled and unsampled parts unless the
 * sampler decides by trace id alone. A jaeger-debug-id still forces
 * sampling.
 * Returns: TW_OK, TW_E_INVALID_ARG. Thread safety: one thread per options.
 * Since: 0.1
 */
TW_EXTERN tw_status tw_tracer_options_set_parent_based(tw_tracer_options *opts,
                                                       bool is_parent_based);

/* ---- tracer ----------------------------------------------------------------------------- */

typedef struct tw_tracer tw_tracer;

/**
 * tw_tracer_new: creates a tracer and starts its reporter. The sampler,
 * reporter, propagator and handlers (tracewire/handler.h) in @opts move to
 * the tracer (the options no longer hold them; on failure the tracer frees
 * them); the rest is copied, so @opts may be freed or reused. Without a
 * reporter in @opts the default Jaeger agent UDP reporter is made here.
 * Returns: (transfer full) (nullable) the tracer, or NULL with @err set to
 * the real cause (also passed to the logger: at info level when @err is
 * given, as a warning when it is NULL):
 * TW_E_INVALID_ARG: @opts is NULL;
 * TW_E_CONFIG: the service name is missing or empty, or the reporter
 * refuses its configuration as it starts (a process too large for one
 * UDP datagram);
 * TW_E_IO: the default reporter cannot open its UDP socket;
 * TW_E_ENCODE: the reporter cannot encode the process (service and tags);
 * TW_E_STATE: the reporter's thread cannot be started, or libcurl cannot
 * be initialised;
 * TW_E_NOMEM: out of memory.
 * Thread safety: any thread; @opts belongs to the calling thread.
 * Since: 0.1
 */
TW_EXTERN tw_tracer *tw_tracer_new(tw_tracer_options *opts, tw_error **err);

/**
 * tw_tracer_new_from_env: a tracer configured by the environment: the
 * Jaeger client variables (JAEGER_*) with Jaeger's meanings, the
 * OpenTelemetry SDK variables (OTEL_*: service and resource, sampler,
 * propagators, exporter, OTLP and Zipkin exporter settings, batch
 * processor, limits) and tracewire's own (TRACEWIRE_*). Each variable,
 * its default and what it maps onto: docs/CONFIGURATION.md. When several
 * name one setting, TRACEWIRE_* wins over JAEGER_*, which wins over OTEL_*;
 * a conflict (two families set one setting to different values) and a
 * variable that has no effect in the configuration chosen are logged as
 * warnings (and listed by `tracewire config`). tw_config_from_env()
 * (tracewire/config.h) reads the same variables with the same code
 * without making a tracer.
 * @default_service: (nullable) used when no variable names the service.
 * Returns: (transfer full) (nullable) NULL with @err set: TW_E_CONFIG naming
 * the variable and value at fault (the first problem found; the others go
 * to the logger as warnings; secrets are never quoted), or any status of
 * tw_tracer_new(). Every failure sets an error.
 * Thread safety: any thread, but it reads the environment: no other thread
 * may call setenv() meanwhile. Since: 0.1
 */
TW_EXTERN tw_tracer *tw_tracer_new_from_env(const char *default_service, tw_error **err);

/** tw_tracer_service_name: Returns: (transfer none) borrowed until free; "" for NULL. */
TW_EXTERN const char *tw_tracer_service_name(const tw_tracer *tracer);

/**
 * tw_tracer_flush: waits until every span finished before the call has been
 * handed to the transport, at most @timeout_ms (0 = 5000) milliseconds in
 * all: the reporters of a composite flush at the same time, against the
 * one timeout. "Handed to the transport" means the batch was sent (or
 * failed and was counted), so a slow collector can take the whole timeout;
 * the spans stay queued for the background thread after a TW_E_TIMEOUT.
 * This is the one call that blocks on the reporter, on purpose.
 * Returns: TW_OK, TW_E_TIMEOUT, TW_E_CLOSED; TW_E_INVALID_ARG for NULL.
 * Since: 0.1
 */
TW_EXTERN tw_status tw_tracer_flush(tw_tracer *tracer, unsigned int timeout_ms);

/**
 * tw_tracer_close: drains and flushes the reporter and stops its thread;
 * the sampler and reporter objects stay allocated (counters stay readable)
 * until tw_tracer_free(). Bounded: it returns by the reporter's close
 * deadline (default 5 s; tw_reporter_options_set_close_timeout_ms(),
 * TRACEWIRE_REPORTER_CLOSE_TIMEOUT), whatever the collector does; a
 * request still in flight then is abandoned and every span not sent is
 * counted as failed to emit. A composite's reporters close at the same
 * time (the longest deadline, not the sum). Returns: TW_OK; TW_E_CLOSED
 * when already closed (nothing else happens); TW_E_INVALID_ARG for NULL and
 * for the no-op global tracer, which is never closed. Since: 0.1
 */
TW_EXTERN tw_status tw_tracer_close(tw_tracer *tracer);

/** tw_tracer_free: closes the calling thread's scopes of the tracer that are
 * still open (logged; scopes open on other threads close at their exit),
 * closes the tracer if needed and releases the handle; NULL is a no-op.
 * Since: 0.1 */
TW_EXTERN void tw_tracer_free(tw_tracer *tracer);

/** tw_tracer_is_closed. Since: 0.1 */
TW_EXTERN bool tw_tracer_is_closed(const tw_tracer *tracer);

/**
 * tw_tracer_set_global: makes @tracer the process-wide tracer that
 * tw_tracer_global() returns, so that a library can instrument itself
 * without taking a tracer parameter (OpenTracing's GlobalTracer).
 * @tracer: (transfer none) (nullable) borrowed: the caller still owns it
 * and frees it; tw_tracer_free() of the global tracer resets the global to
 * the no-op tracer. NULL resets it now.
 * Thread safety: any thread; a thread that obtained the previous tracer
 * from tw_tracer_global() may still be using it, so free a tracer only
 * when no thread uses it (tw_tracer_free's own rule). Since: 0.1
 */
TW_EXTERN void tw_tracer_set_global(tw_tracer *tracer);

/**
 * tw_tracer_global: the tracer set with tw_tracer_set_global(), or else a
 * no-op tracer: spans start (tw_span_* calls work, contexts have ids), are
 * never sampled, are reported nowhere, and inject writes nothing and
 * extract finds nothing, so an application that set no tracer sends no
 * trace headers. The no-op tracer is made once and lives until the process
 * ends: tw_tracer_close() and tw_tracer_free() refuse it (logged).
 * Returns: (transfer none) never NULL, except when the no-op tracer cannot
 * be allocated (then NULL, which every tw_span_start accepts).
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_tracer *tw_tracer_global(void);

/**
 * tw_tracer_is_noop: whether @tracer is the no-op tracer of
 * tw_tracer_global() (so a library can skip costly instrumentation when no
 * tracer is set). Returns: false for NULL and every other tracer.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN bool tw_tracer_is_noop(const tw_tracer *tracer);

/**
 * tw_tracer_reporter: the tracer's reporter, to read counters or the memory
 * reporter's spans. Returns: (transfer none) (nullable) borrowed until
 * tw_tracer_free(); after close only the counters and memory-reporter spans
 * may still be read. Since: 0.1
 */
TW_EXTERN tw_reporter *tw_tracer_reporter(const tw_tracer *tracer);

/**
 * tw_tracer_process_tag: a process tag of the tracer (hostname, ip,
 * client-uuid, jaeger.version, tracewire.version, user tags).
 * Returns: true and sets the borrowed *value (valid until tw_tracer_free). */
TW_EXTERN bool tw_tracer_process_tag(const tw_tracer *tracer, const char *key, tw_value *value);

/**
 * tw_tracer_inject: writes @ctx into @carrier with the tracer's propagator
 * (tw_propagator_inject()). Works until tw_tracer_free(), also after close.
 * A tracer that propagates nothing (OTEL_PROPAGATORS=none, the no-op
 * global tracer) writes nothing and returns TW_OK; its extract finds
 * nothing (TW_E_NOT_FOUND).
 * Returns: TW_OK; TW_E_INVALID_ARG for NULL arguments, TW_FORMAT_BINARY
 * (use tw_binary_inject) or a context without ids; TW_E_NOMEM; the carrier's
 * error. Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_status tw_tracer_inject(tw_tracer *tracer, const tw_span_context *ctx,
                                     tw_format format, const tw_carrier_writer *carrier);

/**
 * tw_tracer_extract: reads a context from @carrier with the tracer's
 * propagator (tw_propagator_extract()). Baggage problems go to the logger
 * and are counted in TW_TRACER_EXTRACT_WARNINGS.
 * Returns: (transfer full) (nullable) the context (maybe a hint without ids;
 * pass it as the parent of the next span either way), or NULL with @err set:
 * TW_E_NOT_FOUND, TW_E_MALFORMED (naming the header and the reason),
 * TW_E_INVALID_ARG, TW_E_NOMEM. Thread safety: any thread. Since: 0.1
 */
TW_EXTERN tw_span_context *tw_tracer_extract(tw_tracer *tracer, tw_format format,
                                             const tw_carrier_reader *carrier, tw_error **err);

/** Tracer-level counters (see tw_tracer_counter_id); any thread. Since: 0.1 */
typedef enum tw_tracer_counter_id {
    TW_TRACER_SPANS_STARTED_SAMPLED = 0,
    TW_TRACER_SPANS_FINISHED_SAMPLED = 1,
    TW_TRACER_SPANS_FINISHED_AFTER_CLOSE = 2,
    TW_TRACER_TRACES_STARTED_SAMPLED = 3,
    TW_TRACER_EXTRACT_WARNINGS = 4, /* baggage/tracestate problems extract reported */
    /* Sampled spans that a finished-span handler dropped (tracewire/handler.h): counted in
     * SPANS_FINISHED_SAMPLED too, never handed to the reporter. */
    TW_TRACER_SPANS_DROPPED_BY_HANDLER = 5,
    /* Spans of unsampled traces recorded only for handlers that want them ("sample
     * local"), discarded after the chain. Since: 0.1 */
    TW_TRACER_SPANS_RECORDED_LOCALLY = 6,
    /* Baggage items tw_span_set_baggage refused (over the baggage limits). Since: 0.1 */
    TW_TRACER_BAGGAGE_DROPPED = 7
} tw_tracer_counter_id;
TW_EXTERN uint64_t tw_tracer_counter(const tw_tracer *tracer, tw_tracer_counter_id id);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_TRACER_H */
