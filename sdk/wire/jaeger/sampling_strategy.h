/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/sampling_strategy.h: a Jaeger sampling strategy as served by
 * the agent's or collector's HTTP sampling endpoint (GET
 * .../sampling?service=NAME), parsed from its JSON
 * (docs/wire/jaeger-sampling.md). Used by the SDK's remote sampler
 * (sdk/src/sampling/remote.c, which turns it into a sampler) and by
 * `tracewire agent`; the parser takes untrusted input and has a fuzz target
 * (tests/fuzz/fuzz_sampling_strategy.c).
 *
 * Ownership: a parsed strategy owns its strings (tw__strategy_clear).
 * Locking: none; the functions keep no state.
 */
#ifndef TW_WIRE_JAEGER_SAMPLING_STRATEGY_H
#define TW_WIRE_JAEGER_SAMPLING_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>

#include "tracewire/common.h"

typedef enum tw__strategy_kind {
    TW__STRATEGY_PROBABILISTIC = 0,
    TW__STRATEGY_RATE_LIMITING = 1,
    TW__STRATEGY_PER_OPERATION = 2
} tw__strategy_kind;

typedef struct tw__operation_strategy {
    char *operation;
    double probability;
} tw__operation_strategy;

typedef struct tw__strategy {
    tw__strategy_kind kind;
    double probability;           /* PROBABILISTIC */
    double max_traces_per_second; /* RATE_LIMITING */
    double default_probability;   /* PER_OPERATION */
    double default_lower_bound;   /* PER_OPERATION, traces per second */
    tw__operation_strategy *operations;
    size_t n_operations;
} tw__strategy;

/* Largest response body accepted (a strategy for thousands of operations
 * fits in well under this). */
#define TW__STRATEGY_MAX_BYTES (1024 * 1024)

/* Parses a strategy document. On failure returns false with @err naming the
 * field at fault, and leaves @out empty. */
bool tw__strategy_parse(const char *json, size_t len, tw__strategy *out, tw_error **err);
void tw__strategy_clear(tw__strategy *s);
bool tw__strategy_equal(const tw__strategy *a, const tw__strategy *b);
#endif /* TW_WIRE_JAEGER_SAMPLING_STRATEGY_H */
