/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offline/tag_list.h: the one parser of a JAEGER_TAGS list
 * ("k1=v1,k2=${ENV_VAR:default}"), shared by the tracer's reading of the
 * environment (sdk/src/config_env.c, where it is implemented, part of
 * libtracewire-core) and `tracewire agent` (JAEGER_TAGS and --tag,
 * bridge/agent/agent_cmd.c), so that both accept and refuse exactly the same
 * values with the same messages. A narrow, documented entry point
 * (docs/architecture.md): the command never includes the SDK's private
 * headers. Not exported by libtracewire.so.
 *
 * The rules: items are split at ','; an empty or blank item is an error
 * naming its position; each item is KEY=VALUE split at the first '=' (a
 * value may hold more), key and value trimmed of blanks; an item without
 * '=' or with an empty key is an error naming the item; a value
 * "${VAR:default}" (after trimming) is VAR from the environment (getenv),
 * or the default (or "") when VAR is unset or empty.
 *
 * Errors follow docs/API.md: the call fails exactly when it sets @err (which
 * may be NULL), with TW_E_CONFIG and a message that starts with @name and the
 * quoted value ("JAEGER_TAGS=\"a=1,b\": item \"b\" has no '='"), or
 * TW_E_NOMEM. Ownership: @key and @value passed to @fn are valid during the
 * call only. Thread safety: no shared state; reads the environment.
 */
#ifndef TW_OFFLINE_TAG_LIST_H
#define TW_OFFLINE_TAG_LIST_H

#include <stdbool.h>

#include "tracewire/tracewire.h"

/* One parsed tag. Returns false when it cannot take it (out of memory). */
typedef bool (*tw__tag_list_fn)(void *arg, const char *key, const char *value);

/* Parses @v (read up to its NUL) as the list named @name ("JAEGER_TAGS",
 * "--tag") and calls @fn once per item, in order. Every item is checked
 * before the first call: on a refused list @fn is never called. */
bool tw__tag_list_parse(const char *name, const char *v, tw__tag_list_fn fn, void *arg,
                        tw_error **err);

#endif /* TW_OFFLINE_TAG_LIST_H */
