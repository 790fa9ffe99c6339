/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offline/kv_list.h: the one parser of a "k1=v1,k2=v2" list in the
 * OpenTelemetry form (OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_HEADERS,
 * OTEL_EXPORTER_OTLP_TRACES_HEADERS, jaeger_remote's OTEL_TRACES_SAMPLER_ARG),
 * shared by the tracer's reading of the environment (sdk/src/config_env.c,
 * where it is implemented, part of libtracewire-core) and `tracewire agent`
 * (the OTLP headers variables, bridge/agent/agent_cmd.c), so that both accept
 * and refuse exactly the same values with the same messages. A narrow,
 * documented entry point (docs/architecture.md): the command never includes
 * the SDK's private headers. Not exported by libtracewire.so.
 *
 * The rules: items are split at ','; an empty (or blank) item is an error
 * naming its position (the W3C baggage grammar has none); each item is
 * KEY=VALUE split at the first '=', key and value trimmed of blanks and then
 * %-decoded (the baggage form, as the OpenTelemetry specification says); an
 * item without '=', an empty key, bad %-encoding or %00 is an error.
 *
 * Errors follow docs/API.md: TW_E_CONFIG with a message that starts with
 * @name; with @is_secret (headers) no message quotes the list or a value:
 * items are named by their position and, once known, their key. @fn may
 * refuse an item by returning false, with @err set, or unset when the caller
 * keeps its own reason (the call then fails without an error).
 * Ownership: @key and @value passed to @fn are valid during the call only.
 * Thread safety: no shared state.
 */
#ifndef TW_OFFLINE_KV_LIST_H
#define TW_OFFLINE_KV_LIST_H

#include <stdbool.h>

#include "tracewire/tracewire.h"

/* One key=value item of the list named @name. Returns false to stop. */
typedef bool (*tw__kv_fn)(void *arg, const char *name, const char *key, const char *value,
                          tw_error **err);

/* Parses @v as the list named @name and calls @fn once per item, in order;
 * items after a refused one are not looked at. */
bool tw__parse_kv_list(const char *name, const char *v, bool is_secret, tw__kv_fn fn, void *arg,
                       tw_error **err);

#endif
