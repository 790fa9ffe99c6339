/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/sampler.h: sampling decisions, made once per trace at its root
 * span and propagated to every child through the context's sampled flag.
 *
 * A root span of a sampled trace carries the tags sampler.type and
 * sampler.param, as Jaeger clients add them.
 *
 * Ownership: a sampler given to tw_tracer_options_set_sampler() belongs to
 * the options (and then to the tracer); otherwise free it with
 * tw_sampler_free().
 *
 * Thread safety: every sampler is consulted from any thread, and every
 * function here may be called from any thread. Samplers are not all
 * immutable: const and probabilistic never change; rate limiting spends
 * tokens, per-operation learns operations and takes
 * tw_sampler_per_operation_set(), adaptive re-balances every second, and
 * remote swaps its strategy when the endpoint serves a new one. Those keep
 * their state behind their own locks or atomics, so no caller locks.
 */
#ifndef TRACEWIRE_SAMPLER_H
#define TRACEWIRE_SAMPLER_H

#include "tracewire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_sampler tw_sampler;

/**
 * tw_sampler_const_new: samples every trace (@decision true) or none.
 * Tags: sampler.type=const, sampler.param=true|false.
 * Returns: (transfer full) (nullable) NULL only on allocation failure. Since: 0.1
 */
TW_EXTERN tw_sampler *tw_sampler_const_new(bool decision);

/**
 * tw_sampler_probabilistic_new: samples a trace when its trace id falls under
 * @rate (0..1), the same rule as Jaeger's clients, so every service that sees
 * the trace id decides the same way.
 * Tags: sampler.type=probabilistic, sampler.param=@rate.
 * Returns: (transfer full) (nullable) NULL with @err set (TW_E_INVALID_ARG)
 * when @rate is outside [0, 1] or not a number. Since: 0.1
 */
TW_EXTERN tw_sampler *tw_sampler_probabilistic_new(double rate, tw_error **err);

/**
 * tw_sampler_rate_limiting_new: samples at most @traces_per_second new
 * traces per second (a token bucket as in Jaeger's clients: the balance is
 * capped at max(rate, 1) and starts full, so fractional rates such as 0.1,
 * one trace every ten seconds, work). Tags: sampler.type=ratelimiting,
 * sampler.param=@traces_per_second.
 * Returns: (transfer full) (nullable) NULL with @err set (TW_E_INVALID_ARG)
 * unless the rate is a positive finite number. Since: 0.1
 */
TW_EXTERN tw_sampler *tw_sampler_rate_limiting_new(double traces_per_second, tw_error **err);

/**
 * tw_sampler_per_operation_new: Jaeger's guaranteed-throughput per-operation
 * sampler: each operation has a probability (default @default_probability)
 * and a lower bound of @lower_bound_per_second traces per second, so a rare
 * operation is still seen. At most @max_operations (0 = 2000) operations
 * are tracked; further ones use the default probability alone. An
 * operation is its name as spans carry it: cut at 1024 bytes (on a UTF-8
 * character boundary), so names that differ only past that are one
 * operation, here and in tw_sampler_adaptive_new. A bound of 0 means none
 * (Jaeger's Go client would still let one trace of each operation through
 * its full token bucket). Tags:
 * probabilistic/RATE or lowerbound/RATE, whichever decided.
 * Returns: (transfer full) (nullable) NULL with @err set for a probability
 * outside [0, 1] or a negative bound. Since: 0.1
 */
TW_EXTERN tw_sampler *tw_sampler_per_operation_new(double default_probability,
                                                   double lower_bound_per_second,
                                                   size_t max_operations, tw_error **err);

/**
 * tw_sampler_per_operation_set: sets one operation's probability.
 * Returns: TW_OK; TW_E_LIMIT when the operation is new and max_operations
 * are known; TW_E_INVALID_ARG for another kind of sampler or a probability
 * outside [0, 1]. Thread safety: any thread, also while sampling. Since: 0.1
 */
TW_EXTERN tw_status tw_sampler_per_operation_set(tw_sampler *sampler, const char *operation,
                                                 double probability);

/**
 * tw_sampler_adaptive_new: Dapper's adaptive sampling: aims at
 * @target_traces_per_second sampled traces per second for the whole process,
 * raising the probability of quiet operations and lowering that of busy
 * ones (re-balanced every second from each operation's measured rate; new
 * operations start at 0.001). Tags: probabilistic/CURRENT_PROBABILITY.
 * At most @max_operations (0 = 2000) operations are tracked separately.
 * Returns: (transfer full) (nullable) NULL with @err set unless the target
 * is a positive finite number. Since: 0.1
 */
TW_EXTERN tw_sampler *tw_sampler_adaptive_new(double target_traces_per_second,
                                              size_t max_operations, tw_error **err);

/** tw_sampler_adaptive_probability: an operation's current probability, or
 * -1 when unknown (or not an adaptive sampler). Since: 0.1 */
TW_EXTERN double tw_sampler_adaptive_probability(const tw_sampler *sampler, const char *operation);

/*
 * The remote sampler: follows the strategy the Jaeger agent or collector
 * serves at GET <endpoint>?service=NAME (probabilistic, rate limiting or
 * per-operation), polled with libcurl on a background thread; the first
 * poll happens in tw_sampler_remote_new, bounded by a short timeout, so a
 * short-lived program samples by the served strategy too. A failed or
 * garbled answer keeps the last good strategy.
 */
typedef struct tw_remote_sampler_options tw_remote_sampler_options;

/** tw_remote_sampler_options_new: defaults: endpoint
 * http://127.0.0.1:5778/sampling, initial sampler probabilistic 0.001,
 * refresh every 60000 ms, first poll bounded by 1000 ms, 2000 operations.
 * Returns: (transfer full) (nullable) NULL for an empty @service. Since: 0.1 */
TW_EXTERN tw_remote_sampler_options *tw_remote_sampler_options_new(const char *service);
TW_EXTERN void tw_remote_sampler_options_free(tw_remote_sampler_options *opts);
/** The sampling URL; "?service=NAME" (or "&service=" when it has a query) is
 * appended. Since: 0.1 */
TW_EXTERN tw_status tw_remote_sampler_options_set_endpoint(tw_remote_sampler_options *opts,
                                                           const char *url);
/** The sampler used until a strategy arrives (ownership moves). Since: 0.1 */
TW_EXTERN tw_status tw_remote_sampler_options_set_initial_sampler(tw_remote_sampler_options *opts,
                                                                  tw_sampler *initial);
TW_EXTERN tw_status tw_remote_sampler_options_set_refresh_interval_ms(
    tw_remote_sampler_options *opts, unsigned int interval_ms);
/** 0 skips the poll at creation. Since: 0.1 */
TW_EXTERN tw_status tw_remote_sampler_options_set_first_poll_timeout_ms(
    tw_remote_sampler_options *opts, unsigned int timeout_ms);
TW_EXTERN tw_status tw_remote_sampler_options_set_max_operations(tw_remote_sampler_options *opts,
                                                                 size_t max_operations);

/**
 * tw_sampler_remote_new: creates the sampler, polls once (bounded by the
 * first-poll timeout; this is the one call here that waits on the network)
 * and starts the poller thread. The initial sampler moves out of @opts.
 * Returns: (transfer full) (nullable) NULL with @err set on allocation or
 * thread failure (an unreachable endpoint is not an error). Since: 0.1
 */
TW_EXTERN tw_sampler *tw_sampler_remote_new(tw_remote_sampler_options *opts, tw_error **err);

typedef enum tw_remote_counter {
    TW_REMOTE_QUERIES_OK = 0,     /* HTTP 200 answers */
    TW_REMOTE_QUERIES_FAILED = 1, /* unreachable, timed out, or not 200 */
    TW_REMOTE_UPDATES_OK = 2,     /* new strategies applied */
    TW_REMOTE_UPDATES_FAILED = 3  /* answers that did not parse or build */
} tw_remote_counter;

/** tw_sampler_remote_counter: Returns: the counter, 0 for other samplers. Since: 0.1 */
TW_EXTERN uint64_t tw_sampler_remote_counter(const tw_sampler *sampler, tw_remote_counter counter);

/** tw_sampler_type: "const", "probabilistic", "ratelimiting", "remote",
 * "per-operation", "adaptive"; "" for NULL. Thread safety: any thread.
 * Since: 0.1 */
TW_EXTERN const char *tw_sampler_type(const tw_sampler *sampler);

/**
 * tw_sampler_is_sampled: the decision this sampler makes for a new trace.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN bool tw_sampler_is_sampled(const tw_sampler *sampler, uint64_t trace_id_high,
                                     uint64_t trace_id_low, const char *operation);

/** tw_sampler_free: frees a sampler that no tracer owns; NULL is a no-op. Since: 0.1 */
TW_EXTERN void tw_sampler_free(tw_sampler *sampler);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_SAMPLER_H */
