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
 * Thread safety: samplers are immutable once built and are consulted from
 * any thread.
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

/** tw_sampler_type: "const", "probabilistic", ...; "" for NULL. Since: 0.1 */
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
