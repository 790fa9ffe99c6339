/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/sampling_strategies.c: the strategies file of
 * sampling_strategies.h, with
 * Jansson (the project's JSON library). Each service's answer is built once,
 * at parse time, in both dialects, and checked with tw__strategy_parse.
 */
#include "wire/jaeger/sampling_strategies.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/error.h"
#include "wire/core/json_error.h"
#include "wire/jaeger/sampling_strategy.h"

#define DEFAULT_PROBABILITY 0.001

typedef struct answer {
    char *service; /* NULL: the default */
    char *proto_json, *thrift_json;
} answer;

struct tw__strategies {
    answer *answers; /* [0] is the default */
    size_t n;
};

/* A strategy object: type and param. */
static bool read_strategy(json_t *obj, const char *where, bool *is_rate, double *param,
                          tw_error **err)
{
    json_t *type = json_object_get(obj, "type");
    json_t *p = json_object_get(obj, "param");
    const char *t = json_is_string(type) ? json_string_value(type) : NULL;
    if (!t || (strcmp(t, "probabilistic") != 0 && strcmp(t, "ratelimiting") != 0)) {
        tw__set_error(err, TW_E_MALFORMED,
                      "strategies file: %s.type must be \"probabilistic\" or \"ratelimiting\"",
                      where);
        return false;
    }
    *is_rate = strcmp(t, "ratelimiting") == 0;
    if (!json_is_number(p)) {
        tw__set_error(err, TW_E_MALFORMED, "strategies file: %s.param must be a number", where);
        return false;
    }
    *param = json_number_value(p);
    double max = *is_rate ? 32767 : 1; /* Thrift's maxTracesPerSecond is an i16 */
    if (isnan(*param) || *param < 0 || *param > max) {
        tw__set_error(err, TW_E_MALFORMED, "strategies file: %s.param = %g is outside [0, %g]",
                      where, *param, max);
        return false;
    }
    return true;
}

/* Adds @ops' operation strategies (probabilistic only) to @list, skipping
 * operations already in it. */
static bool add_operations(json_t *ops, const char *where, json_t *list, tw_error **err)
{
    if (!ops || json_is_null(ops))
        return true;
    if (!json_is_array(ops)) {
        tw__set_error(err, TW_E_MALFORMED, "strategies file: %s.operation_strategies is not a list",
                      where);
        return false;
    }
    size_t i;
    json_t *op;
    json_array_foreach(ops, i, op)
    {
        char at[160];
        snprintf(at, sizeof at, "%s.operation_strategies[%zu]", where, i);
        json_t *name = json_object_get(op, "operation");
        if (!json_is_string(name)) {
            tw__set_error(err, TW_E_MALFORMED, "strategies file: %s.operation must be a string",
                          at);
            return false;
        }
        bool is_rate;
        double param;
        if (!read_strategy(op, at, &is_rate, &param, err))
            return false;
        if (is_rate) {
            tw__set_error(err, TW_E_MALFORMED,
                          "strategies file: %s: operation strategies are probabilistic only", at);
            return false;
        }
        bool seen = false;
        size_t k;
        json_t *have;
        json_array_foreach(list, k, have)
        {
            if (strcmp(json_string_value(json_object_get(have, "operation")),
                       json_string_value(name)) == 0)
                seen = true;
        }
        if (!seen)
            json_array_append_new(list, json_pack("{s:O, s:{s:f}}", "operation", name,
                                                  "probabilisticSampling", "samplingRate", param));
    }
    return true;
}

/* The answer for one strategy (and its operations) in both dialects. */
static bool build(answer *a, bool is_rate, double param, json_t *ops, tw_error **err)
{
    for (int numeric = 0; numeric < 2; numeric++) {
        json_t *root = json_object();
        if (numeric)
            json_object_set_new(root, "strategyType", json_integer(is_rate ? 1 : 0));
        else
            json_object_set_new(root, "strategyType",
                                json_string(is_rate ? "RATE_LIMITING" : "PROBABILISTIC"));
        if (is_rate)
            json_object_set_new(root, "rateLimitingSampling",
                                json_pack("{s:I}", "maxTracesPerSecond", (json_int_t)param));
        else
            json_object_set_new(root, "probabilisticSampling",
                                json_pack("{s:f}", "samplingRate", param));
        if (json_array_size(ops) > 0)
            json_object_set_new(root, "operationSampling",
                                json_pack("{s:f, s:f, s:O}", "defaultSamplingProbability",
                                          is_rate ? DEFAULT_PROBABILITY : param,
                                          "defaultLowerBoundTracesPerSecond", 0.0,
                                          "perOperationStrategies", ops));
        char *text = json_dumps(root, JSON_COMPACT);
        json_decref(root);
        if (!text) {
            tw__set_error(err, TW_E_NOMEM, "strategies file: out of memory");
            return false;
        }
        tw__strategy check;
        if (!tw__strategy_parse(text, strlen(text), &check, err)) {
            free(text);
            return false;
        }
        tw__strategy_clear(&check);
        if (numeric)
            a->thrift_json = text;
        else
            a->proto_json = text;
    }
    return true;
}

void tw__strategies_free(tw__strategies *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free(s->answers[i].service);
        free(s->answers[i].proto_json);
        free(s->answers[i].thrift_json);
    }
    free(s->answers);
    free(s);
}

tw__strategies *tw__strategies_parse(const char *json, size_t len, tw_error **err)
{
    json_error_t jerr;
    char jtext[JSON_ERROR_TEXT_LENGTH + 64];
    json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!json_is_object(root)) {
        tw__set_error(err, TW_E_MALFORMED, "strategies file: not a JSON object (%s, line %d)",
                      root ? "another JSON value" : tw__json_error_text(&jerr, jtext, sizeof jtext),
                      root ? 1 : jerr.line);
        json_decref(root);
        return NULL;
    }
    json_t *services = json_object_get(root, "service_strategies");
    json_t *def = json_object_get(root, "default_strategy");
    if (services && !json_is_array(services)) {
        tw__set_error(err, TW_E_MALFORMED, "strategies file: service_strategies is not a list");
        json_decref(root);
        return NULL;
    }
    size_t n = 1 + json_array_size(services);
    tw__strategies *s = calloc(1, sizeof *s);
    if (s)
        s->answers = calloc(n, sizeof *s->answers);
    if (!s || !s->answers) {
        free(s);
        json_decref(root);
        tw__set_error(err, TW_E_NOMEM, "strategies file: out of memory");
        return NULL;
    }
    bool ok = true, def_rate = false;
    double def_param = DEFAULT_PROBABILITY;
    json_t *def_ops = json_array();
    if (def && !json_is_null(def)) {
        /* (The error of a default that is not an object used to be set
         * only when parsing had succeeded: never. The fuzz target checks
         * that every failure carries one.) */
        if (!json_is_object(def)) {
            tw__set_error(err, TW_E_MALFORMED,
                          "strategies file: default_strategy is not an object");
            ok = false;
        } else {
            ok = read_strategy(def, "default_strategy", &def_rate, &def_param, err) &&
                 add_operations(json_object_get(def, "operation_strategies"), "default_strategy",
                                def_ops, err);
        }
    }
    ok = ok && build(&s->answers[0], def_rate, def_param, def_ops, err);
    s->n = 1;
    size_t i;
    json_t *svc;
    json_array_foreach(services, i, svc)
    {
        if (!ok)
            break;
        char where[64];
        snprintf(where, sizeof where, "service_strategies[%zu]", i);
        json_t *name = json_object_get(svc, "service");
        bool is_rate;
        double param;
        if (!json_is_object(svc) || !json_is_string(name)) {
            tw__set_error(err, TW_E_MALFORMED, "strategies file: %s.service must be a string",
                          where);
            ok = false;
            break;
        }
        for (size_t k = 1; k < s->n; k++) {
            if (strcmp(s->answers[k].service, json_string_value(name)) == 0) {
                tw__set_error(err, TW_E_MALFORMED, "strategies file: %s: service \"%s\" twice",
                              where, json_string_value(name));
                ok = false;
            }
        }
        json_t *ops = json_array();
        ok = ok && read_strategy(svc, where, &is_rate, &param, err) &&
             add_operations(json_object_get(svc, "operation_strategies"), where, ops, err) &&
             add_operations(json_object_get(def, "operation_strategies"), "default_strategy", ops,
                            err);
        answer *a = &s->answers[s->n];
        ok = ok && (a->service = strdup(json_string_value(name))) != NULL &&
             build(a, is_rate, param, ops, err);
        json_decref(ops);
        if (ok)
            s->n++;
        else if (a->service) {
            free(a->service);
            a->service = NULL;
        }
    }
    json_decref(def_ops);
    json_decref(root);
    if (!ok) {
        tw__strategies_free(s);
        return NULL;
    }
    return s;
}

size_t tw__strategies_count(const tw__strategies *s)
{
    return s ? s->n - 1 : 0;
}

char *tw__strategies_answer(const tw__strategies *s, const char *service, bool numeric_type,
                            size_t *len)
{
    const answer *a = &s->answers[0];
    for (size_t i = 1; service && i < s->n; i++) {
        if (strcmp(s->answers[i].service, service) == 0)
            a = &s->answers[i];
    }
    const char *text = numeric_type ? a->thrift_json : a->proto_json;
    char *copy = strdup(text);
    if (copy)
        *len = strlen(copy);
    return copy;
}

bool tw__strategy_answer_check(const char *json, size_t len, tw_error **err)
{
    tw__strategy check;
    if (!tw__strategy_parse(json, len, &check, err))
        return false;
    tw__strategy_clear(&check);
    return true;
}
