/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/context_json.h: a span context as one JSON object, the form
 * `tracewire context extract` prints and `inject` reads (docs/bridge.md
 * has the schema):
 *
 *   {"trace_id": "<32 hex>" | null, "span_id": "<16 hex>" | null,
 *    "parent_id": "<16 hex>" | null, "sampled": true | false | null,
 *    "debug": bool, "firehose": bool, "random_trace_id": bool,
 *    "baggage": {"key": "value", ...},
 *    "tracestate": string | null, "debug_id": string | null}
 *
 * Ownership: returned objects belong to the caller (json_decref,
 * tw_span_context_unref). Thread safety: any thread (no shared state).
 */
#ifndef TW_BRIDGE_CONTEXT_JSON_H
#define TW_BRIDGE_CONTEXT_JSON_H

#include <jansson.h>

#include "tracewire/propagation.h"

/*
 * tw__context_to_json: the JSON object of @ctx, keys in the order above and
 * all of them always present. Strings that are not valid UTF-8 (a baggage
 * value %-decoded to arbitrary bytes, a raw debug id) cannot be JSON
 * strings: each bad byte becomes U+FFFD and @warn (nullable) hears which
 * field was changed.
 * Returns: (transfer full) (nullable) NULL only when out of memory.
 */
json_t *tw__context_to_json(const tw_span_context *ctx, tw_extract_warning_fn warn,
                            void *warn_data);

/*
 * tw__context_from_json: the context an object of that schema describes.
 * Strict, since a person wrote it or a program that should know better:
 * unknown keys, wrong types, ids that are not 1-32 (trace) or 1-16 (span,
 * parent) hex digits or are zero, "debug": true with "sampled": false, an
 * empty baggage key, and a span id without a trace id (or the reverse) are
 * errors. Absent keys mean null/false/empty. Hex digits may be upper case
 * and short ids are left-padded with zeros, as receivers of uber-trace-id
 * do. "sampled": null (or absent) means no decision (deferred); "debug"
 * implies sampled. Without ids the result is a hint context (see
 * tw_span_context_is_valid), which needs at least one of debug_id, a
 * sampling decision or baggage.
 * Returns: (transfer full) (nullable) NULL with @err set (TW_E_MALFORMED
 * naming the key, TW_E_NOMEM).
 */
tw_span_context *tw__context_from_json(const json_t *obj, tw_error **err);

#endif /* TW_BRIDGE_CONTEXT_JSON_H */
