/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/context_json.c: span context <-> JSON object for `tracewire
 * context` (schema in context_json.h and docs/bridge.md). Jansson does all
 * of the JSON text work, escaping included (docs/DEPENDENCIES.md); this file
 * only maps fields.
 *
 * Where it sits: context_cmd.c feeds it the context an SDK propagator
 * extracted, or gives the context built here to a propagator to inject.
 * Hint contexts (no ids: a jaeger-debug-id, a bare B3 sampling decision,
 * baggage) and tracestate have no public constructor, so contexts are built
 * from parts with tw__span_context_build (sdk/src/context_parts.h, the
 * narrow interface the propagation codecs share), as those codecs do. No shared state.
 */
#include "context_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context_parts.h"
#include "wire/core/error.h"
#include "wire/core/hex.h"
#include "wire/core/json_common.h" /* tw__json_text */
#include "wire/core/utf8.h"

/* ---- context -> JSON ---------------------------------------------------------------------- */

/* A JSON string of @s; invalid UTF-8 bytes become U+FFFD and *replaced is
 * set. NULL when out of memory. */
static json_t *json_string_lossy(const char *s, bool *replaced)
{
    size_t len = strlen(s);
    if (tw__utf8_is_valid(s, len))
        return json_stringn(s, len);
    *replaced = true;
    return tw__json_text(s, len);
}

static json_t *json_hex_id(uint64_t high, uint64_t low, bool is_128bit)
{
    char buf[33];
    if (is_128bit)
        snprintf(buf, sizeof buf, "%016" PRIx64 "%016" PRIx64, high, low);
    else
        snprintf(buf, sizeof buf, "%016" PRIx64, low);
    return json_string(buf);
}

/* json_object_set_new that reports a NULL value (allocation failure). */
static bool set_new(json_t *obj, const char *key, json_t *value)
{
    return value && json_object_set_new(obj, key, value) == 0;
}

static json_t *lossy_or_null(const char *s, const char *field, tw_extract_warning_fn warn,
                             void *warn_data)
{
    if (!s)
        return json_null();
    bool replaced = false;
    json_t *j = json_string_lossy(s, &replaced);
    if (replaced && warn) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s is not valid UTF-8; bad bytes shown as U+FFFD", field);
        warn(msg, warn_data);
    }
    return j;
}

json_t *tw__context_to_json(const tw_span_context *ctx, tw_extract_warning_fn warn, void *warn_data)
{
    json_t *obj = json_object();
    json_t *baggage = json_object();
    if (!obj || !baggage)
        goto fail;
    bool has_ids = tw_span_context_is_valid(ctx);
    uint64_t parent = tw_span_context_parent_id(ctx);
    bool ok = true;
    ok = ok && set_new(obj, "trace_id",
                       has_ids ? json_hex_id(tw_span_context_trace_id_high(ctx),
                                             tw_span_context_trace_id_low(ctx), true)
                               : json_null());
    ok = ok && set_new(obj, "span_id",
                       has_ids ? json_hex_id(0, tw_span_context_span_id(ctx), false) : json_null());
    ok = ok &&
         set_new(obj, "parent_id", has_ids && parent ? json_hex_id(0, parent, false) : json_null());
    ok = ok && set_new(obj, "sampled",
                       tw_span_context_is_sampling_deferred(ctx)
                           ? json_null()
                           : json_boolean(tw_span_context_is_sampled(ctx)));
    ok = ok && set_new(obj, "debug", json_boolean(tw_span_context_is_debug(ctx)));
    ok =
        ok && set_new(obj, "firehose", json_boolean(tw_span_context_flags(ctx) & TW_FLAG_FIREHOSE));
    ok = ok &&
         set_new(obj, "random_trace_id", json_boolean(tw_span_context_is_trace_id_random(ctx)));
    const char *key, *value;
    for (size_t i = 0; ok && tw_span_context_baggage_item(ctx, i, &key, &value); i++) {
        bool replaced = false;
        json_t *v = json_string_lossy(value, &replaced);
        /* Keys come from header names (tokens) or W3C baggage keys, but a
         * %-decoded W3C key can hold any byte: same treatment. */
        json_t *k = json_string_lossy(key, &replaced);
        ok = v && k && json_object_set_new(baggage, json_string_value(k), v) == 0;
        if (!ok)
            json_decref(v);
        json_decref(k);
        if (ok && replaced && warn) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "baggage item \"%.60s\" is not valid UTF-8; bad bytes shown as U+FFFD", key);
            warn(msg, warn_data);
        }
    }
    ok = ok && json_object_set(obj, "baggage", baggage) == 0;
    ok = ok &&
         set_new(obj, "tracestate",
                 lossy_or_null(tw_span_context_tracestate(ctx), "tracestate", warn, warn_data));
    ok = ok &&
         set_new(obj, "debug_id",
                 lossy_or_null(tw_span_context_debug_id(ctx), "jaeger-debug-id", warn, warn_data));
    if (!ok)
        goto fail;
    json_decref(baggage);
    return obj;
fail:
    json_decref(baggage);
    json_decref(obj);
    return NULL;
}

/* ---- JSON -> context ---------------------------------------------------------------------- */

static const char *const known_keys[] = {"trace_id",   "span_id",  "parent_id",       "sampled",
                                         "debug",      "firehose", "random_trace_id", "baggage",
                                         "tracestate", "debug_id"};

/* Reads an optional id: absent or null leaves *present false. */
static bool get_id(const json_t *obj, const char *key, size_t max_digits, bool *present,
                   uint64_t *high, uint64_t *low, tw_error **err)
{
    const json_t *v = json_object_get(obj, key);
    *present = false;
    *high = 0;
    *low = 0;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_string(v)) {
        tw__set_error(err, TW_E_MALFORMED, "\"%s\" must be a string of hex digits or null", key);
        return false;
    }
    if (tw__parse_hex(json_string_value(v), json_string_length(v), max_digits, false, high, low,
                      NULL) != TW__HEX_OK) {
        tw__set_error(err, TW_E_MALFORMED, "\"%s\": \"%.40s\" is not 1-%zu hex digits", key,
                      json_string_value(v), max_digits);
        return false;
    }
    *present = true;
    return true;
}

/* A boolean key; @allow_null maps null and absence to *is_null. */
static bool get_bool(const json_t *obj, const char *key, bool allow_null, bool *value,
                     bool *is_null, tw_error **err)
{
    const json_t *v = json_object_get(obj, key);
    *value = false;
    if (is_null)
        *is_null = !v || json_is_null(v);
    if (!v || (allow_null && json_is_null(v)))
        return true;
    if (!json_is_boolean(v)) {
        tw__set_error(err, TW_E_MALFORMED, "\"%s\" must be true or false%s", key,
                      allow_null ? " or null" : "");
        return false;
    }
    *value = json_is_true(v);
    return true;
}

static bool get_string(const json_t *obj, const char *key, const char **value, tw_error **err)
{
    const json_t *v = json_object_get(obj, key);
    *value = NULL;
    if (!v || json_is_null(v))
        return true;
    if (!json_is_string(v)) {
        tw__set_error(err, TW_E_MALFORMED, "\"%s\" must be a string or null", key);
        return false;
    }
    /* Jansson refuses \u0000 unless asked (JSON_ALLOW_NUL is not used), so
     * the C string is the whole value. */
    *value = json_string_value(v);
    return true;
}

static void keep_first_warning(const char *message, void *user_data)
{
    char *first = user_data;
    if (!first[0])
        snprintf(first, 200, "%s", message);
}

/* A tracestate is written as received, so it must be one a receiver accepts: it is run
 * through the SDK's own W3C extract (docs/PROPAGATION.md's rules, no second grammar here)
 * and must come out unchanged. Control bytes are refused first: a line break would smuggle
 * a header of its own into inject's output. */
static bool check_tracestate(const char *tracestate, tw_error **err)
{
    for (const unsigned char *c = (const unsigned char *)tracestate; *c; c++) {
        if (*c < 0x20 || *c > 0x7e) {
            tw__set_error(err, TW_E_MALFORMED, "\"tracestate\": byte 0x%02x is not printable ASCII",
                          *c);
            return false;
        }
    }
    tw_propagator *w3c = tw_propagator_parse("w3c", NULL);
    tw_headers *headers = tw_headers_new();
    bool ok = false;
    char first_warning[200] = "";
    if (w3c && headers &&
        tw_headers_add(headers, "traceparent",
                       "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01") == TW_OK &&
        tw_headers_add(headers, "tracestate", tracestate) == TW_OK) {
        tw_carrier_reader reader = tw_headers_reader(headers);
        tw_span_context *ctx = tw_propagator_extract(w3c, TW_FORMAT_HTTP_HEADERS, &reader,
                                                     keep_first_warning, first_warning, NULL);
        const char *kept = tw_span_context_tracestate(ctx);
        ok = kept && strcmp(kept, tracestate) == 0;
        if (!ok)
            tw__set_error(err, TW_E_MALFORMED,
                          "\"tracestate\" is not a W3C list as it would be sent%s%s%s",
                          first_warning[0] ? " (" : "", first_warning, first_warning[0] ? ")" : "");
        tw_span_context_unref(ctx);
    } else {
        tw__set_error(err, TW_E_NOMEM, "out of memory");
    }
    tw_headers_free(headers);
    tw_propagator_free(w3c);
    return ok;
}

/* Builds the baggage list from the "baggage" object; *out stays NULL when
 * it is absent, null or empty. */
static bool get_baggage(const json_t *obj, tw__baggage **out, tw_error **err)
{
    const json_t *b = json_object_get(obj, "baggage");
    *out = NULL;
    if (!b || json_is_null(b))
        return true;
    if (!json_is_object(b)) {
        tw__set_error(err, TW_E_MALFORMED, "\"baggage\" must be an object of strings");
        return false;
    }
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)b, key, value)
    {
        if (!*key) {
            tw__set_error(err, TW_E_MALFORMED, "\"baggage\": empty key");
            goto fail;
        }
        if (!json_is_string(value)) {
            tw__set_error(err, TW_E_MALFORMED, "\"baggage\": value of \"%.60s\" is not a string",
                          key);
            goto fail;
        }
        bool is_empty = false;
        tw__baggage *next = tw__baggage_with(*out, key, json_string_value(value), &is_empty);
        if (!next) {
            tw__set_error(err, TW_E_NOMEM, "out of memory");
            goto fail;
        }
        tw__baggage_unref(*out);
        *out = next;
    }
    return true;
fail:
    tw__baggage_unref(*out);
    *out = NULL;
    return false;
}

tw_span_context *tw__context_from_json(const json_t *obj, tw_error **err)
{
    if (!json_is_object(obj)) {
        tw__set_error(err, TW_E_MALFORMED, "the input is not a JSON object");
        return NULL;
    }
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)obj, key, value)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++)
            known = known || strcmp(key, known_keys[i]) == 0;
        if (!known) {
            tw__set_error(err, TW_E_MALFORMED, "unknown key \"%.60s\"", key);
            return NULL;
        }
    }
    (void)value;

    tw__context_parts parts = {0};
    bool has_trace, has_span, has_parent;
    uint64_t ignored_high;
    bool sampled, sampled_is_null, debug, firehose, random_trace_id;
    if (!get_id(obj, "trace_id", 32, &has_trace, &parts.trace_id_high, &parts.trace_id_low, err) ||
        !get_id(obj, "span_id", 16, &has_span, &ignored_high, &parts.span_id, err) ||
        !get_id(obj, "parent_id", 16, &has_parent, &ignored_high, &parts.parent_id, err) ||
        !get_bool(obj, "sampled", true, &sampled, &sampled_is_null, err) ||
        !get_bool(obj, "debug", false, &debug, NULL, err) ||
        !get_bool(obj, "firehose", false, &firehose, NULL, err) ||
        !get_bool(obj, "random_trace_id", false, &random_trace_id, NULL, err) ||
        !get_string(obj, "tracestate", &parts.tracestate, err) ||
        !get_string(obj, "debug_id", &parts.debug_id, err))
        return NULL;

    if (has_trace != has_span) {
        tw__set_error(err, TW_E_MALFORMED, "\"%s\" is set but \"%s\" is not: give both or neither",
                      has_trace ? "trace_id" : "span_id", has_trace ? "span_id" : "trace_id");
        return NULL;
    }
    if (has_trace && parts.trace_id_high == 0 && parts.trace_id_low == 0) {
        tw__set_error(err, TW_E_MALFORMED, "\"trace_id\" is zero");
        return NULL;
    }
    if (has_span && parts.span_id == 0) {
        tw__set_error(err, TW_E_MALFORMED, "\"span_id\" is zero");
        return NULL;
    }
    if (!has_trace && (has_parent || parts.tracestate || random_trace_id)) {
        tw__set_error(err, TW_E_MALFORMED, "\"%s\" needs \"trace_id\" and \"span_id\"",
                      has_parent         ? "parent_id"
                      : parts.tracestate ? "tracestate"
                                         : "random_trace_id");
        return NULL;
    }
    if (parts.tracestate && !check_tracestate(parts.tracestate, err))
        return NULL;
    if (debug && !sampled_is_null && !sampled) {
        tw__set_error(err, TW_E_MALFORMED,
                      "\"debug\": true contradicts \"sampled\": false (debug implies sampled)");
        return NULL;
    }
    if (debug) {
        sampled = true;
        sampled_is_null = false;
    }
    parts.flags = (sampled ? TW_FLAG_SAMPLED : 0u) | (debug ? TW_FLAG_DEBUG : 0u) |
                  (firehose ? TW_FLAG_FIREHOSE : 0u) | (sampled_is_null ? TW__FLAG_DEFERRED : 0u) |
                  (random_trace_id ? TW__FLAG_RANDOM : 0u);

    if (!get_baggage(obj, &parts.baggage, err))
        return NULL;
    if (!has_trace && !parts.debug_id && sampled_is_null && !parts.baggage) {
        tw__set_error(err, TW_E_MALFORMED,
                      "no ids, and no debug_id, sampling decision or baggage: nothing to inject");
        return NULL;
    }
    tw_span_context *ctx = tw__span_context_build(&parts);
    tw__baggage_unref(parts.baggage); /* the context holds its own reference */
    if (!ctx)
        tw__set_error(err, TW_E_NOMEM, "out of memory");
    return ctx;
}
