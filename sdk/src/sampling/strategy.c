/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampling/strategy.c: the sampler matching a Jaeger sampling strategy
 * (strategy.h); the strategy's JSON is parsed by the wire layer
 * (wire/jaeger/sampling_strategy.c).
 */
#include "sampling/strategy.h"

#include "sampling/sampling.h"

tw_sampler *tw__strategy_sampler(const tw__strategy *s, size_t max_operations, tw_error **err)
{
    switch (s->kind) {
    case TW__STRATEGY_PROBABILISTIC:
        return tw_sampler_probabilistic_new(s->probability, err);
    case TW__STRATEGY_RATE_LIMITING:
        /* A server may send 0 to stop sampling: nothing passes. */
        return s->max_traces_per_second > 0
                   ? tw_sampler_rate_limiting_new(s->max_traces_per_second, err)
                   : tw_sampler_probabilistic_new(0.0, err);
    case TW__STRATEGY_PER_OPERATION: {
        tw_sampler *p = tw_sampler_per_operation_new(s->default_probability, s->default_lower_bound,
                                                     max_operations, err);
        for (size_t i = 0; p && i < s->n_operations; i++) {
            /* Beyond max_operations the default applies: not an error. */
            if (tw_sampler_per_operation_set(p, s->operations[i].operation,
                                             s->operations[i].probability) == TW_E_NOMEM) {
                tw_sampler_free(p);
                tw__set_error(err, TW_E_NOMEM, "sampling strategy: out of memory");
                return NULL;
            }
        }
        return p;
    }
    }
    tw__set_error(err, TW_E_INVALID_ARG, "sampling strategy: unknown kind");
    return NULL;
}
