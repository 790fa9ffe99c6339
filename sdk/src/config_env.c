/*
 * config_env.c: tw_tracer_new_from_env(), a tracer configured by the Jaeger
 * client environment variables with Jaeger's names and meanings (see
 * docs/CONFIGURATION.md and WIRE-NOTES 4.1). This first version reads the
 * variables the foundation needs; the full set (HTTP collector, remote
 * sampler, propagation, TRACEWIRE_*) comes with issue 4.
 *
 * Parsing is strict: an invalid value is an error naming the variable and
 * the value, never a silent default. Booleans follow Go's ParseBool;
 * intervals accept plain milliseconds (Java/C++) and Go durations ("500ms",
 * "2s", "1m"). Runs once per tracer; no shared state. The value parsers are
 * declared in config_env.h, for the unit tests and the fuzz target.
 */
#include "config_env.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "report/report.h"

/* Returns the variable's value, or NULL when unset or empty (Jaeger: values
 * override only when non-empty). */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

static bool parse_bool(const char *name, const char *v, bool *out, tw_error **err)
{
    static const char *const yes[] = {"1", "t", "T", "TRUE", "true", "True"};
    static const char *const no[] = {"0", "f", "F", "FALSE", "false", "False"};
    for (size_t i = 0; i < 6; i++) {
        if (strcmp(v, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcmp(v, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": not a boolean (use true or false)", name, v);
    return false;
}

static bool parse_uint(const char *name, const char *v, unsigned long long min,
                       unsigned long long max, unsigned long long *out, tw_error **err)
{
    char *end = NULL;
    errno = 0;
    if (!isdigit((unsigned char)v[0])) {
        tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": not a non-negative integer", name, v);
        return false;
    }
    unsigned long long n = strtoull(v, &end, 10);
    if (errno || *end != '\0') {
        tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": not a non-negative integer", name, v);
        return false;
    }
    if (n < min || n > max) {
        tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": out of range [%llu, %llu]", name, v, min, max);
        return false;
    }
    *out = n;
    return true;
}

/* Plain integer milliseconds, or a Go duration: a sequence of decimal numbers
 * with units ns, us, µs, ms, s, m, h ("1m30s", "1.5s"). */
bool tw__parse_interval_ms(const char *name, const char *v, unsigned int *out_ms, tw_error **err)
{
    const char *p = v;
    bool is_plain = true;
    for (const char *q = v; *q; q++)
        is_plain = is_plain && isdigit((unsigned char)*q);
    double total_ms = 0;
    if (is_plain) {
        unsigned long long n;
        if (!parse_uint(name, v, 0, 0xffffffffULL, &n, err))
            return false;
        total_ms = (double)n;
    } else {
        while (*p) {
            char *end = NULL;
            if (!isdigit((unsigned char)*p) && *p != '.')
                goto bad;
            double n = strtod(p, &end);
            if (end == p)
                goto bad;
            p = end;
            double scale;
            if (strncmp(p, "ns", 2) == 0)
                scale = 1e-6, p += 2;
            else if (strncmp(p, "us", 2) == 0)
                scale = 1e-3, p += 2;
            else if (strncmp(p, "\xc2\xb5s", 3) == 0)
                scale = 1e-3, p += 3;
            else if (strncmp(p, "ms", 2) == 0)
                scale = 1, p += 2;
            else if (*p == 's')
                scale = 1e3, p += 1;
            else if (*p == 'm')
                scale = 60e3, p += 1;
            else if (*p == 'h')
                scale = 3600e3, p += 1;
            else
                goto bad;
            total_ms += n * scale;
        }
    }
    if (!(total_ms <= 4294967295.0)) {
        tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": interval too long", name, v);
        return false;
    }
    *out_ms = (unsigned int)llround(total_ms);
    return true;
bad:
    tw__set_error(err, TW_E_CONFIG,
                  "%s=\"%s\": not an interval (milliseconds such as 500, or a duration such as "
                  "500ms, 2s, 1m)",
                  name, v);
    return false;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* JAEGER_TAGS: "k1=v1,k2=${ENV_VAR:default}" (config_env.h). A bad item is
 * found only after the items before it were added, so failure rolls the tag
 * count back rather than parsing twice: the rejected tags' bytes stay in the
 * options' arena until tw_tracer_options_free(), which a failed
 * tw_tracer_new_from_env() calls at once. */
bool tw__parse_tags(tw_tracer_options *opts, const char *v, tw_error **err)
{
    const size_t n_tags_before = opts->tags.n_tags;
    char *copy = strdup(v);
    if (!copy) {
        tw__set_error(err, TW_E_NOMEM, "JAEGER_TAGS: out of memory");
        return false;
    }
    bool ok = true;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && ok; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            tw__set_error(err, TW_E_CONFIG, "JAEGER_TAGS=\"%s\": item \"%s\" has no '='", v,
                          trim(item));
            ok = false;
            break;
        }
        *eq = '\0';
        char *key = trim(item);
        char *value = trim(eq + 1);
        if (!*key) {
            tw__set_error(err, TW_E_CONFIG, "JAEGER_TAGS=\"%s\": an item has an empty key", v);
            ok = false;
            break;
        }
        size_t vlen = strlen(value);
        if (vlen >= 3 && value[0] == '$' && value[1] == '{' && value[vlen - 1] == '}') {
            value[vlen - 1] = '\0';
            char *ref = value + 2;
            char *colon = strchr(ref, ':');
            const char *fallback = "";
            if (colon) {
                *colon = '\0';
                fallback = colon + 1;
            }
            const char *from_env = getenv(trim(ref));
            value = (char *)(from_env && *from_env ? from_env : fallback);
        }
        ok = tw_tracer_options_add_tag_str(opts, key, value) == TW_OK;
        if (!ok)
            tw__set_error(err, TW_E_NOMEM, "JAEGER_TAGS: out of memory");
    }
    free(copy);
    if (!ok)
        opts->tags.n_tags = n_tags_before;
    return ok;
}

static tw_sampler *sampler_from_env(tw_error **err)
{
    const char *type = env("JAEGER_SAMPLER_TYPE");
    const char *param_s = env("JAEGER_SAMPLER_PARAM");
    double param = 0;
    bool has_param = false;
    if (param_s) {
        char *end = NULL;
        param = strtod(param_s, &end);
        if (end == param_s || *end != '\0' || isnan(param)) {
            tw__set_error(err, TW_E_CONFIG, "JAEGER_SAMPLER_PARAM=\"%s\": not a number", param_s);
            return NULL;
        }
        has_param = true;
    }
    char lower[32] = "";
    if (type) {
        size_t i = 0;
        for (; type[i] && i < sizeof lower - 1; i++)
            lower[i] = (char)tolower((unsigned char)type[i]);
        lower[i] = '\0';
    }
    if (type && strcmp(lower, "const") == 0) {
        if (has_param && param != 0 && param != 1) {
            tw__set_error(err, TW_E_CONFIG,
                          "JAEGER_SAMPLER_PARAM=\"%s\": the const sampler takes 0 or 1", param_s);
            return NULL;
        }
        return tw_sampler_const_new(has_param && param == 1);
    }
    bool is_remote = !type || strcmp(lower, "remote") == 0;
    if (is_remote) {
        /* Jaeger's default is the remote sampler, which starts from a
         * probabilistic sampler (param, else 0.001). Polling the agent comes
         * with issue 4; until then that initial sampler is what runs. */
        tw__log_msg(TW_LOG_WARN,
                    "JAEGER_SAMPLER_TYPE=%s: remote sampling is not available yet; "
                    "using probabilistic %g",
                    type ? type : "(unset, Jaeger default remote)", has_param ? param : 0.001);
    }
    if (is_remote || strcmp(lower, "probabilistic") == 0) {
        tw_error *local = NULL;
        tw_sampler *s = tw_sampler_probabilistic_new(has_param ? param : 0.001, &local);
        if (!s) {
            tw__set_error(err, TW_E_CONFIG, "JAEGER_SAMPLER_PARAM=\"%s\": %s",
                          param_s ? param_s : "", tw_error_message(local));
            tw_error_free(local);
        }
        return s;
    }
    tw__set_error(err, TW_E_CONFIG,
                  "JAEGER_SAMPLER_TYPE=\"%s\": unknown sampler (const, probabilistic, remote)",
                  type);
    return NULL;
}

static tw_reporter *reporter_from_env(tw_error **err)
{
    tw_reporter *result = NULL;
    tw_reporter_options *ro = tw_reporter_options_new();
    if (!ro) {
        tw__set_error(err, TW_E_NOMEM, "reporter options: out of memory");
        return NULL;
    }
    const char *host = env("JAEGER_AGENT_HOST");
    const char *port_s = env("JAEGER_AGENT_PORT");
    const char *v;
    unsigned long long n;
    unsigned int ms;
    bool log_spans = false;
    if (port_s) {
        if (!parse_uint("JAEGER_AGENT_PORT", port_s, 1, 65535, &n, err))
            goto done;
    } else {
        n = 6831;
    }
    if (tw_reporter_options_set_agent(ro, host ? host : "localhost", (unsigned int)n) != TW_OK) {
        tw__set_error(err, TW_E_NOMEM, "reporter options: out of memory");
        goto done;
    }
    if ((v = env("JAEGER_REPORTER_MAX_QUEUE_SIZE"))) {
        if (!parse_uint("JAEGER_REPORTER_MAX_QUEUE_SIZE", v, 1, (size_t)1 << 28, &n, err))
            goto done;
        tw_reporter_options_set_max_queue_size(ro, (size_t)n);
    }
    if ((v = env("JAEGER_REPORTER_FLUSH_INTERVAL"))) {
        if (!tw__parse_interval_ms("JAEGER_REPORTER_FLUSH_INTERVAL", v, &ms, err))
            goto done;
        if (ms == 0) {
            tw__set_error(err, TW_E_CONFIG, "JAEGER_REPORTER_FLUSH_INTERVAL=\"%s\": must be > 0",
                          v);
            goto done;
        }
        tw_reporter_options_set_flush_interval_ms(ro, ms);
    }
    if ((v = env("JAEGER_REPORTER_MAX_PACKET_SIZE"))) {
        if (!parse_uint("JAEGER_REPORTER_MAX_PACKET_SIZE", v, 512, 65507, &n, err))
            goto done;
        tw_reporter_options_set_max_packet_size(ro, (size_t)n);
    }
    if ((v = env("JAEGER_REPORTER_LOG_SPANS")) &&
        !parse_bool("JAEGER_REPORTER_LOG_SPANS", v, &log_spans, err))
        goto done;

    result = tw_reporter_jaeger_udp_new(ro, err);
    if (result && log_spans) {
        /* Jaeger adds a logging reporter next to the remote one. */
        tw_reporter *logging = tw_reporter_logging_new(tw_log_to_stdout, NULL);
        tw_reporter *both[2] = {result, logging};
        result = logging ? tw_reporter_composite_new(both, 2) : NULL;
        if (!logging)
            tw_reporter_free(both[0]);
        if (!result)
            tw__set_error(err, TW_E_NOMEM, "logging reporter: out of memory");
    }
done:
    tw_reporter_options_free(ro);
    return result;
}

tw_tracer *tw_tracer_new_from_env(const char *default_service, tw_error **err)
{
    tw_tracer *t = NULL;
    tw_tracer_options *opts = tw_tracer_options_new();
    if (!opts) {
        tw__set_error(err, TW_E_NOMEM, "tracer options: out of memory");
        return NULL;
    }
    const char *service = env("JAEGER_SERVICE_NAME");
    if (!service)
        service = default_service;
    if (!service || !*service) {
        tw__set_error(err, TW_E_CONFIG,
                      "JAEGER_SERVICE_NAME is not set and no default service name was given");
        goto done;
    }
    tw_tracer_options_set_service(opts, service);
    const char *v;
    bool is_128 = false; /* Jaeger's default for JAEGER_TRACEID_128BIT */
    if ((v = env("JAEGER_TRACEID_128BIT")) && !parse_bool("JAEGER_TRACEID_128BIT", v, &is_128, err))
        goto done;
    tw_tracer_options_set_trace_id_128bit(opts, is_128);
    if ((v = env("JAEGER_TAGS")) && !tw__parse_tags(opts, v, err))
        goto done;
    tw_sampler *sampler = sampler_from_env(err);
    if (!sampler)
        goto done;
    tw_tracer_options_set_sampler(opts, sampler);
    tw_reporter *reporter = reporter_from_env(err);
    if (!reporter)
        goto done;
    tw_tracer_options_set_reporter(opts, reporter);
    t = tw_tracer_new(opts, err);
done:
    tw_tracer_options_free(opts);
    return t;
}
