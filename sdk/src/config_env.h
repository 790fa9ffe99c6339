/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config_env.h: the value parsers of config_env.c, shared with the unit tests
 * (tests/unit/core/test_config_env.c) and the fuzz target
 * (tests/fuzz/fuzz_config_env.c). Environment variables are external input,
 * so these are reachable without tw_tracer_new_from_env(), which would also
 * open a reporter socket and start its thread for every input.
 *
 * Both parsers follow the error rules of docs/API.md: they fail exactly when
 * they set @err (which may be NULL), with TW_E_CONFIG and a message that
 * starts with the variable's name and quotes the value, or TW_E_NOMEM. They
 * read @v up to its NUL only. No shared state; any thread.
 */
#ifndef TW_CONFIG_ENV_H
#define TW_CONFIG_ENV_H

#include <stdbool.h>

#include "tracewire/config.h"
#include "tracewire/tracewire.h"
#include "offline/kv_list.h"

/* An interval in milliseconds for the variable @name: plain digits (Java and
 * C++ clients) or a Go duration ("500ms", "1m30s", "1.5s"; units ns, us, µs,
 * ms, s, m, h). Fails on anything else and on more than 2^32-1 ms. Sets
 * *out_ms only on success. */
bool tw__parse_interval_ms(const char *name, const char *v, unsigned int *out_ms, tw_error **err);

/* JAEGER_TAGS: "k1=v1,k2=${ENV_VAR:default}". Adds one string process tag per
 * comma-separated item to @opts, by the rules of tw__tag_list_parse
 * (offline/tag_list.h, the parser `tracewire agent` shares). On failure @opts
 * has exactly the tags it had before (the bytes of tags added before an out
 * of memory stay in its arena until it is freed). */
bool tw__parse_tags(tw_tracer_options *opts, const char *v, tw_error **err);

/* tw__parse_kv_list and tw__kv_fn, the "k1=v1,k2=v2" list parser
 * (OTEL_RESOURCE_ATTRIBUTES, the OTLP headers variables, jaeger_remote's
 * OTEL_TRACES_SAMPLER_ARG), are declared in offline/kv_list.h: `tracewire
 * agent` shares it. */

/* What config_probe.c reads of a tw_config (config_env.c). */
const char *tw__config_service(const tw_config *c);
/* The remote sampler's URL, or NULL when the sampler is not remote. */
const char *tw__config_sampling_endpoint(const tw_config *c);
size_t tw__config_transport_count(const tw_config *c);
/* The @i-th transport's options as read, and its name; NULL past the end. */
const tw_reporter_options *tw__config_transport(const tw_config *c, size_t i, const char **name);
bool tw__config_has_errors(const tw_config *c);

#endif /* TW_CONFIG_ENV_H */
