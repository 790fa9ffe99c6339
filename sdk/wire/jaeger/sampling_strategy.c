/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/sampling_strategy.c: parses Jaeger's sampling strategy JSON
 * (with Jansson, the project's JSON library): the answer of the agent's or
 * collector's sampling endpoint, read by the SDK's remote sampler and
 * checked by `tracewire agent` (sampling_strategies.c).
 *
 * Shape (camelCase, docs/wire/jaeger-sampling.md): strategyType ("PROBABILISTIC" |
 * "RATE_LIMITING", or 0 | 1 from legacy servers: both accepted),
 * probabilisticSampling.samplingRate, rateLimitingSampling.maxTracesPerSecond,
 * operationSampling { defaultSamplingProbability,
 * defaultLowerBoundTracesPerSecond, perOperationStrategies: [{operation,
 * probabilisticSampling: {samplingRate}}], defaultUpperBoundTracesPerSecond }.
 * operationSampling wins whenever present, as in Jaeger's Go client (and as
 * users expect: opentelemetry-go-contrib#2135). Unknown fields are ignored;
 * a present field of the wrong type or out of range rejects the whole
 * document (the remote sampler then keeps its last good strategy), with an
 * error naming the field. defaultUpperBoundTracesPerSecond is read by the
 * server's adaptive sampling, not by clients: it is ignored here.
 */
#include "wire/jaeger/sampling_strategy.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/error.h"
#include "wire/core/json_error.h"

/* Reads an optional number field; false (with the error set) when present
 * but not a number in [min, max]. *is_present tells whether it was there. */
static bool number_field(json_t *obj, const char *path, const char *key, double min, double max,
                         double *out, bool *is_present, tw_error **err)
{
    json_t *v = json_object_get(obj, key);
    *is_present = v != NULL && !json_is_null(v);
    if (!*is_present)
        return true;
    if (!json_is_number(v)) {
        tw__set_error(err, TW_E_MALFORMED, "sampling strategy: %s%s is not a number", path, key);
        return false;
    }
    double d = json_number_value(v);
    if (isnan(d) || d < min || d > max) {
        tw__set_error(err, TW_E_MALFORMED, "sampling strategy: %s%s = %g is outside [%g, %g]", path,
                      key, d, min, max);
        return false;
    }
    *out = d;
    return true;
}

static bool parse_per_operation(json_t *os, tw__strategy *out, tw_error **err)
{
    bool present;
    out->kind = TW__STRATEGY_PER_OPERATION;
    out->default_probability = 0.001; /* Jaeger's default when the server omits it */
    out->default_lower_bound = 0.0;
    if (!number_field(os, "operationSampling.", "defaultSamplingProbability", 0, 1,
                      &out->default_probability, &present, err) ||
        !number_field(os, "operationSampling.", "defaultLowerBoundTracesPerSecond", 0, 1e9,
                      &out->default_lower_bound, &present, err))
        return false;
    json_t *list = json_object_get(os, "perOperationStrategies");
    if (!list || json_is_null(list))
        return true;
    if (!json_is_array(list)) {
        tw__set_error(err, TW_E_MALFORMED,
                      "sampling strategy: operationSampling.perOperationStrategies is not a list");
        return false;
    }
    size_t n = json_array_size(list);
    out->operations = n ? calloc(n, sizeof(*out->operations)) : NULL;
    if (n && !out->operations) {
        tw__set_error(err, TW_E_NOMEM, "sampling strategy: out of memory");
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *item = json_array_get(list, i);
        json_t *name = json_is_object(item) ? json_object_get(item, "operation") : NULL;
        json_t *ps = json_is_object(item) ? json_object_get(item, "probabilisticSampling") : NULL;
        char path[96];
        snprintf(path, sizeof path, "perOperationStrategies[%zu].probabilisticSampling.", i);
        double rate = 0;
        if (!json_is_string(name) || !json_is_object(ps)) {
            tw__set_error(err, TW_E_MALFORMED,
                          "sampling strategy: perOperationStrategies[%zu] needs an operation "
                          "name and probabilisticSampling",
                          i);
            return false;
        }
        if (!number_field(ps, path, "samplingRate", 0, 1, &rate, &present, err))
            return false;
        out->operations[i].operation = strdup(json_string_value(name));
        out->operations[i].probability = present ? rate : out->default_probability;
        out->n_operations = i + 1;
        if (!out->operations[i].operation) {
            tw__set_error(err, TW_E_NOMEM, "sampling strategy: out of memory");
            return false;
        }
    }
    return true;
}

/* strategyType as a number (0, 1) or a name; -1 when absent or unknown. */
static int strategy_type(json_t *root, tw_error **err, bool *is_bad)
{
    json_t *t = json_object_get(root, "strategyType");
    *is_bad = false;
    if (!t || json_is_null(t))
        return -1;
    if (json_is_integer(t) && (json_integer_value(t) == 0 || json_integer_value(t) == 1))
        return (int)json_integer_value(t);
    if (json_is_string(t)) {
        if (strcmp(json_string_value(t), "PROBABILISTIC") == 0)
            return 0;
        if (strcmp(json_string_value(t), "RATE_LIMITING") == 0)
            return 1;
    }
    *is_bad = true;
    tw__set_error(err, TW_E_MALFORMED,
                  "sampling strategy: strategyType is not PROBABILISTIC, RATE_LIMITING, 0 or 1");
    return -1;
}

bool tw__strategy_parse(const char *json, size_t len, tw__strategy *out, tw_error **err)
{
    memset(out, 0, sizeof(*out));
    if (len > TW__STRATEGY_MAX_BYTES) {
        tw__set_error(err, TW_E_LIMIT, "sampling strategy: response of %zu bytes is too large",
                      len);
        return false;
    }
    json_error_t jerr;
    char jtext[JSON_ERROR_TEXT_LENGTH + 64];
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!root || !json_is_object(root)) {
        tw__set_error(err, TW_E_MALFORMED, "sampling strategy: not a JSON object (%s, line %d)",
                      root ? "another JSON value" : tw__json_error_text(&jerr, jtext, sizeof jtext),
                      root ? 1 : jerr.line);
        json_decref(root);
        return false;
    }
    bool ok = false, present = false, is_bad = false;
    json_t *os = json_object_get(root, "operationSampling");
    int type = strategy_type(root, err, &is_bad);
    if (is_bad)
        goto done;
    if (os && json_is_object(os)) {
        ok = parse_per_operation(os, out, err);
        goto done;
    }
    if (os && !json_is_null(os)) {
        tw__set_error(err, TW_E_MALFORMED, "sampling strategy: operationSampling is not an object");
        goto done;
    }
    json_t *ps = json_object_get(root, "probabilisticSampling");
    json_t *rs = json_object_get(root, "rateLimitingSampling");
    if (type == 1 || (type < 0 && json_is_object(rs))) {
        out->kind = TW__STRATEGY_RATE_LIMITING;
        ok = json_is_object(rs) &&
             number_field(rs, "rateLimitingSampling.", "maxTracesPerSecond", 0, 1e9,
                          &out->max_traces_per_second, &present, err) &&
             present;
    } else if (type == 0 || (type < 0 && json_is_object(ps))) {
        out->kind = TW__STRATEGY_PROBABILISTIC;
        ok = json_is_object(ps) &&
             number_field(ps, "probabilisticSampling.", "samplingRate", 0, 1, &out->probability,
                          &present, err) &&
             present;
    } else {
        tw__set_error(err, TW_E_MALFORMED, "sampling strategy: no strategy in the document");
        goto done;
    }
    if (!ok)
        tw__set_error(err, TW_E_MALFORMED, "sampling strategy: %s is missing its parameters",
                      out->kind == TW__STRATEGY_RATE_LIMITING ? "RATE_LIMITING" : "PROBABILISTIC");
done:
    json_decref(root);
    if (!ok)
        tw__strategy_clear(out);
    return ok;
}

void tw__strategy_clear(tw__strategy *s)
{
    for (size_t i = 0; i < s->n_operations; i++)
        free(s->operations[i].operation);
    free(s->operations);
    memset(s, 0, sizeof(*s));
}

bool tw__strategy_equal(const tw__strategy *a, const tw__strategy *b)
{
    if (a->kind != b->kind || a->probability != b->probability ||
        a->max_traces_per_second != b->max_traces_per_second ||
        a->default_probability != b->default_probability ||
        a->default_lower_bound != b->default_lower_bound || a->n_operations != b->n_operations)
        return false;
    for (size_t i = 0; i < a->n_operations; i++) {
        if (a->operations[i].probability != b->operations[i].probability ||
            strcmp(a->operations[i].operation, b->operations[i].operation) != 0)
            return false;
    }
    return true;
}
