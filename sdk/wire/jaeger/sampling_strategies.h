/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/sampling_strategies.h: Jaeger's sampling strategies file (the
 * format of jaeger's --sampling.strategies-file, a wire format of its own)
 * turned into the answers of the agent's sampling endpoint, one per
 * service. Used by the `tracewire agent` sampling server (bridge/agent/);
 * the parser reads files users write and has a fuzz target
 * (tests/fuzz/fuzz_sampling_strategies.c).
 *
 * File shape (docs/agent.md, "Sampling"):
 *   { "default_strategy": {"type": "probabilistic"|"ratelimiting", "param": N,
 *                          "operation_strategies": [{"operation": NAME,
 *                              "type": "probabilistic", "param": P}, ...]},
 *     "service_strategies": [{"service": NAME, "type": ..., "param": ...,
 *                             "operation_strategies": [...]}, ...] }
 * Rules (as Jaeger's static strategy store): a missing default is
 * probabilistic 0.001; a service's operation strategies, plus the default's
 * for operations it does not name, become operationSampling with
 * defaultSamplingProbability = the service's probabilistic rate (0.001 when
 * it rate-limits) and defaultLowerBoundTracesPerSecond 0; only probabilistic
 * operation strategies exist (others are refused); an unknown service gets
 * the default. Every answer is checked with the SDK's own strategy parser
 * (wire/jaeger/sampling_strategy.c, the one the remote sampler uses) before it is kept.
 *
 * Answers are JSON in two dialects: the agent's /sampling endpoint (proto
 * JSON: strategyType "PROBABILISTIC" / "RATE_LIMITING") and its legacy "/"
 * endpoint (Thrift JSON: strategyType 0 / 1), as jaeger-agent serves them.
 *
 * Ownership: a table owns its strings; answers are malloc'd for the caller.
 * Locking: none; a table is immutable after parsing (share it read-only).
 */
#ifndef TW_WIRE_JAEGER_SAMPLING_STRATEGIES_H
#define TW_WIRE_JAEGER_SAMPLING_STRATEGIES_H

#include <stdbool.h>
#include <stddef.h>

#include "tracewire/common.h"

typedef struct tw__strategies tw__strategies;

/* Parses a strategies file's text. NULL with @err naming the field at fault. */
tw__strategies *tw__strategies_parse(const char *json, size_t len, tw_error **err);
void tw__strategies_free(tw__strategies *s);
size_t tw__strategies_count(const tw__strategies *s); /* services named */

/* The answer for @service (NULL or unknown: the default), NUL-terminated,
 * malloc'd; *len its length. @numeric_type: the legacy dialect. NULL only on
 * allocation failure. */
char *tw__strategies_answer(const tw__strategies *s, const char *service, bool numeric_type,
                            size_t *len);

/* Whether @json is a strategy answer the SDK's remote sampler accepts (the
 * proxy mode checks what the collector sent). False with @err. */
bool tw__strategy_answer_check(const char *json, size_t len, tw_error **err);

#endif /* TW_WIRE_JAEGER_SAMPLING_STRATEGIES_H */
