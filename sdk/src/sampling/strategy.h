/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampling/strategy.h: a Jaeger sampling strategy turned into a sampler.
 * The strategy and its JSON parser are the wire layer's
 * (wire/jaeger/sampling_strategy.h); used by the remote sampler (remote.c).
 */
#ifndef TW_SAMPLING_STRATEGY_H
#define TW_SAMPLING_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>

#include "internal.h"
#include "wire/jaeger/sampling_strategy.h"

/* A sampler for the strategy; NULL with @err on failure. */
tw_sampler *tw__strategy_sampler(const tw__strategy *s, size_t max_operations, tw_error **err);

#endif /* TW_SAMPLING_STRATEGY_H */
