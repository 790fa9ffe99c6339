/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tracewire/config.h: the configuration tw_tracer_new_from_env() would
 * build from the current environment, read and checked by the same code,
 * without making a tracer: what `tracewire config` prints, and what a
 * daemon can log at start-up.
 *
 * A tw_config holds three lists: the effective settings (each with its
 * value and where it came from: a variable, "default", or "argument" for
 * the default service name), the problems found (errors that would make
 * tw_tracer_new_from_env() fail, warnings for conflicts between variable
 * families and for variables that have no effect), and the endpoints
 * tw_config_probe() can check. Secrets (passwords, tokens, header values,
 * URL credentials) never appear in any of them.
 *
 * Ownership: a tw_config is the caller's, freed with tw_config_free();
 * strings it returns are borrowed until then.
 * Thread safety: tw_config_from_env reads the environment (no setenv() in
 * another thread meanwhile); a tw_config is immutable afterwards: any number
 * of threads may read it, and tw_config_probe may run on any thread.
 */
#ifndef TRACEWIRE_CONFIG_H
#define TRACEWIRE_CONFIG_H

#include "tracewire/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tw_config tw_config;

/**
 * tw_config_from_env: reads and checks the environment exactly as
 * tw_tracer_new_from_env() does (same parsers, same precedence rule, same
 * reporter constructors, which are made and freed again), but starts no
 * thread and makes no network request: the remote sampler's first poll is
 * not made (tw_config_probe() does the equivalent).
 * @default_service: (nullable) as for tw_tracer_new_from_env().
 * Returns: (transfer full) (nullable) the configuration, also when it has
 * errors (see tw_config_problem); NULL only when out of memory.
 * Thread safety: any thread, no concurrent setenv(). Since: 0.1
 */
TW_EXTERN tw_config *tw_config_from_env(const char *default_service);

/** tw_config_free: NULL is a no-op. Thread safety: when no other thread
 * reads @config. Since: 0.1 */
TW_EXTERN void tw_config_free(tw_config *config);

/** tw_config_setting_count: Returns: the number of effective settings (0
 * for NULL). Thread safety: any thread. Since: 0.1 */
TW_EXTERN size_t tw_config_setting_count(const tw_config *config);

/**
 * tw_config_setting: the @index-th effective setting, in a stable order
 * (service, sampling, propagation, reporting, limits, logging).
 * @name: (out) (nullable) a dotted name: "service.name", "sampler",
 *   "otlp-http.endpoint", ... (docs/CONFIGURATION.md lists them).
 * @value: (out) (nullable) the value as text, secrets replaced by "***".
 * @source: (out) (nullable) the variable it came from (several, comma
 *   separated, when they combine), "default", or "argument".
 * Returns: false when @index is out of range (outputs untouched).
 * Ownership: the strings are borrowed until tw_config_free().
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN bool tw_config_setting(const tw_config *config, size_t index, const char **name,
                                 const char **value, const char **source);

/** tw_config_problem_count: Returns: the number of problems (errors and
 * warnings) found (0 for NULL). Thread safety: any thread. Since: 0.1 */
TW_EXTERN size_t tw_config_problem_count(const tw_config *config);

/**
 * tw_config_problem: the @index-th problem, in the order found: one line
 * naming the variable(s) and, unless it is a secret, the value.
 * @level: (out) (nullable) TW_LOG_ERROR: tw_tracer_new_from_env() would
 *   fail (with the first such error); TW_LOG_WARN: a conflict resolved by
 *   the precedence rule (TRACEWIRE_* over JAEGER_* over OTEL_*), or a
 *   variable that has no effect.
 * Returns: (transfer none) (nullable) the text, borrowed until
 * tw_config_free(); NULL when @index is out of range.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN const char *tw_config_problem(const tw_config *config, size_t index, tw_log_level *level);

/**
 * tw_config_probe_fn: one result of tw_config_probe().
 * @what: the endpoint checked ("jaeger-udp agent localhost:6831", ...).
 * @is_ok: whether it answered as it should.
 * @message: what was seen ("answered HTTP 202", "connection refused: ...");
 *   for UDP, which cannot confirm a listener, says what could be checked.
 */
typedef void (*tw_config_probe_fn)(void *user_data, const char *what, bool is_ok,
                                   const char *message);

/**
 * tw_config_probe: checks that each endpoint the configuration would use
 * answers, each within the timeout: HTTP transports get an empty batch in
 * their format (POST, with the configured credentials, headers and TLS
 * files), which a collector accepts and stores nothing for; the remote
 * sampler's endpoint gets its GET ?service=NAME and the strategy is parsed;
 * a UDP agent gets an empty emitBatch datagram on a connected socket, which
 * reveals a closed port when the host answers with ICMP port unreachable
 * (loopback always does; a firewall may swallow it, so silence is reported
 * as "sent, no error seen", never as proof); the span log's directory is
 * checked for writing. Blocks for the network: meant for tools.
 * @config: a configuration without errors (with errors nothing is probed).
 * @timeout_ms: per endpoint; 0 means 2000.
 * @fn: called once per endpoint, on the calling thread.
 * Returns: the number of endpoints that failed.
 * Thread safety: any thread. Since: 0.1
 */
TW_EXTERN size_t tw_config_probe(const tw_config *config, unsigned int timeout_ms,
                                 tw_config_probe_fn fn, void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* TRACEWIRE_CONFIG_H */
