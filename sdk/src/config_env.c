/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config_env.c: tw_tracer_new_from_env(), a tracer configured by the Jaeger
 * client environment variables with Jaeger's names and meanings (see
 * docs/CONFIGURATION.md and WIRE-NOTES 4.1). This first version reads the
 * variables the foundation needs, and JAEGER_PROPAGATION; the full set (HTTP
 * collector, remote sampler, TRACEWIRE_*) comes with issue 4.
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

/* Reads an optional double; false with the error named when malformed. */
static bool parse_double(const char *name, const char *v, double *out, tw_error **err)
{
    char *end = NULL;
    double d = strtod(v, &end);
    if (end == v || *end != '\0' || isnan(d) || isinf(d)) {
        tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": not a number", name, v);
        return false;
    }
    *out = d;
    return true;
}

/* Wraps a sampler constructor's own error into one naming the variable.
 * @local is read here, after the constructor (an argument of this call)
 * has run: passing the pointer, not its value, keeps that order. */
static tw_sampler *named(tw_sampler *s, tw_error **local, const char *param_s, tw_error **err)
{
    if (!s) {
        tw__set_error(err, TW_E_CONFIG, "JAEGER_SAMPLER_PARAM=\"%s\": %s",
                      param_s ? param_s : "(unset)", tw_error_message(*local));
    }
    tw_error_free(*local);
    *local = NULL;
    return s;
}

/* The remote sampler's URL: JAEGER_SAMPLING_ENDPOINT, else the deprecated
 * JAEGER_SAMPLER_MANAGER_HOST_PORT (host:port of the agent), else
 * http://JAEGER_AGENT_HOST:5778/sampling, else Jaeger's default. */
static char *sampling_endpoint(void)
{
    const char *v = env("JAEGER_SAMPLING_ENDPOINT");
    if (v)
        return strdup(v);
    char buf[512];
    if ((v = env("JAEGER_SAMPLER_MANAGER_HOST_PORT")))
        snprintf(buf, sizeof buf, "%s%s/sampling", strstr(v, "://") ? "" : "http://", v);
    else if ((v = env("JAEGER_AGENT_HOST")))
        snprintf(buf, sizeof buf, "http://%s:5778/sampling", v);
    else
        snprintf(buf, sizeof buf, "http://127.0.0.1:5778/sampling");
    return strdup(buf);
}

static tw_sampler *remote_from_env(const char *service, tw_sampler *initial, tw_error **err)
{
    tw_remote_sampler_options *ro = tw_remote_sampler_options_new(service);
    char *endpoint = sampling_endpoint();
    tw_sampler *result = NULL;
    const char *v;
    unsigned long long n;
    unsigned int ms;
    if (!ro || !endpoint) {
        tw__set_error(err, TW_E_NOMEM, "remote sampler options: out of memory");
        tw_sampler_free(initial);
        goto done;
    }
    tw_remote_sampler_options_set_initial_sampler(ro, initial);
    tw_remote_sampler_options_set_endpoint(ro, endpoint);
    if ((v = env("JAEGER_SAMPLER_MAX_OPERATIONS"))) {
        if (!parse_uint("JAEGER_SAMPLER_MAX_OPERATIONS", v, 1, 1000000, &n, err))
            goto done;
        tw_remote_sampler_options_set_max_operations(ro, (size_t)n);
    }
    if ((v = env("JAEGER_SAMPLER_REFRESH_INTERVAL"))) {
        if (!tw__parse_interval_ms("JAEGER_SAMPLER_REFRESH_INTERVAL", v, &ms, err))
            goto done;
        if (ms == 0) {
            tw__set_error(err, TW_E_CONFIG, "JAEGER_SAMPLER_REFRESH_INTERVAL=\"%s\": must be > 0",
                          v);
            goto done;
        }
        tw_remote_sampler_options_set_refresh_interval_ms(ro, ms);
    }
    if ((v = env("TRACEWIRE_SAMPLER_FIRST_POLL_TIMEOUT"))) {
        if (!tw__parse_interval_ms("TRACEWIRE_SAMPLER_FIRST_POLL_TIMEOUT", v, &ms, err))
            goto done;
        tw_remote_sampler_options_set_first_poll_timeout_ms(ro, ms);
    }
    result = tw_sampler_remote_new(ro, err);
done:
    free(endpoint);
    tw_remote_sampler_options_free(ro);
    return result;
}

static tw_sampler *sampler_from_env(const char *service, tw_error **err)
{
    const char *type = env("JAEGER_SAMPLER_TYPE");
    const char *param_s = env("JAEGER_SAMPLER_PARAM");
    double param = 0;
    bool has_param = param_s != NULL;
    if (has_param && !parse_double("JAEGER_SAMPLER_PARAM", param_s, &param, err))
        return NULL;
    char lower[32] = "";
    if (type) {
        size_t i = 0;
        for (; type[i] && i < sizeof lower - 1; i++)
            lower[i] = (char)tolower((unsigned char)type[i]);
        lower[i] = '\0';
    }
    tw_error *local = NULL;
    if (type && strcmp(lower, "const") == 0) {
        if (has_param && param != 0 && param != 1) {
            tw__set_error(err, TW_E_CONFIG,
                          "JAEGER_SAMPLER_PARAM=\"%s\": the const sampler takes 0 or 1", param_s);
            return NULL;
        }
        return tw_sampler_const_new(has_param && param == 1);
    }
    if (type && strcmp(lower, "probabilistic") == 0)
        return named(tw_sampler_probabilistic_new(has_param ? param : 0.001, &local), &local,
                     param_s, err);
    if (type && (strcmp(lower, "ratelimiting") == 0 || strcmp(lower, "rate_limiting") == 0))
        return named(tw_sampler_rate_limiting_new(has_param ? param : 1.0, &local), &local, param_s,
                     err);
    if (type && strcmp(lower, "adaptive") == 0) /* tracewire: target traces per second */
        return named(tw_sampler_adaptive_new(has_param ? param : 1.0, 0, &local), &local, param_s,
                     err);
    if (!type || strcmp(lower, "remote") == 0) {
        /* Jaeger's default. Its initial sampler is probabilistic(param, else
         * 0.001); the first poll happens now, bounded, so even a short-lived
         * program samples by the served strategy. */
        tw_sampler *initial = named(tw_sampler_probabilistic_new(has_param ? param : 0.001, &local),
                                    &local, param_s, err);
        return initial ? remote_from_env(service, initial, err) : NULL;
    }
    tw__set_error(err, TW_E_CONFIG,
                  "JAEGER_SAMPLER_TYPE=\"%s\": unknown sampler (const, probabilistic, "
                  "ratelimiting, remote, adaptive)",
                  type);
    return NULL;
}

/* ---- reporters ------------------------------------------------------------------------------ */

/* Options every transport shares: queue, flush interval, TLS files. */
static bool common_reporter_options(tw_reporter_options *ro, tw_error **err)
{
    const char *v;
    unsigned long long n;
    unsigned int ms;
    if ((v = env("JAEGER_REPORTER_MAX_QUEUE_SIZE"))) {
        if (!parse_uint("JAEGER_REPORTER_MAX_QUEUE_SIZE", v, 1, (size_t)1 << 28, &n, err))
            return false;
        tw_reporter_options_set_max_queue_size(ro, (size_t)n);
    }
    if ((v = env("JAEGER_REPORTER_FLUSH_INTERVAL"))) {
        if (!tw__parse_interval_ms("JAEGER_REPORTER_FLUSH_INTERVAL", v, &ms, err))
            return false;
        if (ms == 0) {
            tw__set_error(err, TW_E_CONFIG, "JAEGER_REPORTER_FLUSH_INTERVAL=\"%s\": must be > 0",
                          v);
            return false;
        }
        tw_reporter_options_set_flush_interval_ms(ro, ms);
    }
    if ((v = env("TRACEWIRE_TLS_CA_FILE")) && tw_reporter_options_set_ca_file(ro, v) != TW_OK) {
        tw__set_error(err, TW_E_CONFIG, "TRACEWIRE_TLS_CA_FILE=\"%s\": not accepted", v);
        return false;
    }
    const char *cert = env("TRACEWIRE_TLS_CERT_FILE"), *key = env("TRACEWIRE_TLS_KEY_FILE");
    if ((cert || key) && (!cert || !key)) {
        tw__set_error(err, TW_E_CONFIG,
                      "TRACEWIRE_TLS_CERT_FILE and TRACEWIRE_TLS_KEY_FILE must be set together");
        return false;
    }
    if (cert && tw_reporter_options_set_client_cert(ro, cert, key) != TW_OK) {
        tw__set_error(err, TW_E_CONFIG, "TRACEWIRE_TLS_CERT_FILE=\"%s\": not accepted", cert);
        return false;
    }
    return true;
}

static bool udp_options(tw_reporter_options *ro, unsigned int default_port, tw_error **err)
{
    const char *host = env("JAEGER_AGENT_HOST");
    const char *v = env("JAEGER_AGENT_PORT");
    unsigned long long n = default_port;
    unsigned int ms;
    bool is_disabled = false;
    if (v && !parse_uint("JAEGER_AGENT_PORT", v, 1, 65535, &n, err))
        return false;
    if (tw_reporter_options_set_agent(ro, host ? host : "localhost", (unsigned int)n) != TW_OK) {
        tw__set_error(err, TW_E_NOMEM, "reporter options: out of memory");
        return false;
    }
    if ((v = env("JAEGER_REPORTER_MAX_PACKET_SIZE"))) {
        if (!parse_uint("JAEGER_REPORTER_MAX_PACKET_SIZE", v, 512, 65507, &n, err))
            return false;
        tw_reporter_options_set_max_packet_size(ro, (size_t)n);
    }
    if ((v = env("JAEGER_REPORTER_ATTEMPT_RECONNECTING_DISABLED")) &&
        !parse_bool("JAEGER_REPORTER_ATTEMPT_RECONNECTING_DISABLED", v, &is_disabled, err))
        return false;
    if ((v = env("JAEGER_REPORTER_ATTEMPT_RECONNECT_INTERVAL"))) {
        if (!tw__parse_interval_ms("JAEGER_REPORTER_ATTEMPT_RECONNECT_INTERVAL", v, &ms, err))
            return false;
        tw_reporter_options_set_resolve_interval_ms(ro, ms);
    }
    if (is_disabled)
        tw_reporter_options_set_resolve_interval_ms(ro, 0);
    return true;
}

/* JAEGER_ENDPOINT with JAEGER_USER/JAEGER_PASSWORD (together) or
 * JAEGER_AUTH_TOKEN; basic auth wins when both are set (Java's rule). */
static bool jaeger_http_options(tw_reporter_options *ro, tw_error **err)
{
    const char *url = env("JAEGER_ENDPOINT");
    const char *user = env("JAEGER_USER"), *password = env("JAEGER_PASSWORD");
    const char *token = env("JAEGER_AUTH_TOKEN");
    if (url && tw_reporter_options_set_endpoint(ro, url) != TW_OK) {
        tw__set_error(err, TW_E_CONFIG, "JAEGER_ENDPOINT=\"%s\": not a URL", url);
        return false;
    }
    if ((user != NULL) != (password != NULL)) {
        tw__set_error(err, TW_E_CONFIG, "JAEGER_USER and JAEGER_PASSWORD must be set together");
        return false;
    }
    if (user)
        return tw_reporter_options_set_basic_auth(ro, user, password) == TW_OK;
    if (token)
        return tw_reporter_options_set_bearer_token(ro, token) == TW_OK;
    return true;
}

/* OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as is; OTEL_EXPORTER_OTLP_ENDPOINT
 * is a base to which /v1/traces is appended (the OpenTelemetry spec). Headers:
 * "k=v,k2=v2" with %-encoded values. */
static bool otlp_options(tw_reporter_options *ro, tw_error **err)
{
    const char *v = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    char buf[1024];
    if (!v && (v = env("OTEL_EXPORTER_OTLP_ENDPOINT"))) {
        size_t len = strlen(v);
        snprintf(buf, sizeof buf, "%.*s/v1/traces", (int)(len && v[len - 1] == '/' ? len - 1 : len),
                 v);
        v = buf;
    }
    if (v && tw_reporter_options_set_endpoint(ro, v) != TW_OK) {
        tw__set_error(err, TW_E_CONFIG, "OTEL_EXPORTER_OTLP endpoint \"%s\": not a URL", v);
        return false;
    }
    /* The encoding: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL
     * (the OpenTelemetry names); unset keeps the default (http/json). */
    const char *pname = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
    const char *protocol = env(pname);
    if (!protocol)
        protocol = env(pname = "OTEL_EXPORTER_OTLP_PROTOCOL");
    if (protocol) {
        tw_otlp_protocol p = TW_OTLP_HTTP_JSON;
        if (strcmp(protocol, "http/protobuf") == 0) {
            p = TW_OTLP_HTTP_PROTOBUF;
        } else if (strcmp(protocol, "http/json") != 0) {
            tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": %s", pname, protocol,
                          strcmp(protocol, "grpc") == 0
                              ? "OTLP over gRPC is not supported; use http/protobuf or http/json"
                              : "unknown protocol (http/protobuf, http/json)");
            return false;
        }
        if (tw_reporter_options_set_otlp_protocol(ro, p) != TW_OK) {
            tw__set_error(err, TW_E_NOMEM, "reporter options: out of memory");
            return false;
        }
    }
    const char *name = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
    const char *headers = env(name);
    if (!headers)
        headers = env(name = "OTEL_EXPORTER_OTLP_HEADERS");
    if (!headers)
        return true;
    char *copy = strdup(headers), *save = NULL;
    bool ok = copy != NULL;
    for (char *item = copy ? strtok_r(copy, ",", &save) : NULL; ok && item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": item \"%s\" has no '='", name, headers,
                          trim(item));
            ok = false;
            break;
        }
        *eq = '\0';
        char *key = trim(item), *value = trim(eq + 1);
        /* %-decode the value in place (the spec's W3C-baggage-like format). */
        char *w = value;
        for (const char *r = value; *r; r++) {
            if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
                char hex[3] = {r[1], r[2], '\0'};
                *w++ = (char)strtol(hex, NULL, 16);
                r += 2;
            } else {
                *w++ = *r;
            }
        }
        *w = '\0';
        if (tw_reporter_options_add_header(ro, key, value) != TW_OK) {
            tw__set_error(err, TW_E_CONFIG, "%s: header \"%s\" is not accepted", name, key);
            ok = false;
        }
    }
    free(copy);
    return ok;
}

static bool file_options(tw_reporter_options *ro, tw_error **err)
{
    const char *v = env("TRACEWIRE_LOG_FILE");
    unsigned long long n;
    if (!v) {
        tw__set_error(err, TW_E_CONFIG,
                      "TRACEWIRE_REPORTER names \"file\" but TRACEWIRE_LOG_FILE "
                      "is not set");
        return false;
    }
    if (tw_reporter_options_set_file_path(ro, v) != TW_OK) {
        tw__set_error(err, TW_E_CONFIG, "TRACEWIRE_LOG_FILE=\"%s\": not accepted", v);
        return false;
    }
    if ((v = env("TRACEWIRE_LOG_FILE_MAX_BYTES"))) {
        if (!parse_uint("TRACEWIRE_LOG_FILE_MAX_BYTES", v, 1024, (unsigned long long)SIZE_MAX, &n,
                        err))
            return false;
        tw_reporter_options_set_max_file_bytes(ro, (size_t)n);
    }
    if ((v = env("TRACEWIRE_LOG_FILE_MAX_FILES"))) {
        if (!parse_uint("TRACEWIRE_LOG_FILE_MAX_FILES", v, 0, 1000, &n, err))
            return false;
        tw_reporter_options_set_max_files(ro, (size_t)n);
    }
    return true;
}

/* One transport of TRACEWIRE_REPORTER (or the one the Jaeger variables imply). */
static tw_reporter *transport_from_env(const char *name, tw_error **err)
{
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter *r = NULL;
    if (!ro) {
        tw__set_error(err, TW_E_NOMEM, "reporter options: out of memory");
        return NULL;
    }
    if (!common_reporter_options(ro, err))
        goto done;
    if (strcmp(name, "jaeger-udp") == 0) {
        if (udp_options(ro, 6831, err))
            r = tw_reporter_jaeger_udp_new(ro, err);
    } else if (strcmp(name, "jaeger-udp-binary") == 0) {
        if (udp_options(ro, 6832, err))
            r = tw_reporter_jaeger_udp_binary_new(ro, err);
    } else if (strcmp(name, "jaeger-http") == 0) {
        if (jaeger_http_options(ro, err))
            r = tw_reporter_jaeger_http_new(ro, err);
    } else if (strcmp(name, "zipkin") == 0) {
        const char *url = env("TRACEWIRE_ZIPKIN_ENDPOINT");
        if (url && tw_reporter_options_set_endpoint(ro, url) != TW_OK)
            tw__set_error(err, TW_E_CONFIG, "TRACEWIRE_ZIPKIN_ENDPOINT=\"%s\": not a URL", url);
        else
            r = tw_reporter_zipkin_new(ro, err);
    } else if (strcmp(name, "otlp") == 0) {
        if (otlp_options(ro, err))
            r = tw_reporter_otlp_http_new(ro, err);
    } else if (strcmp(name, "file") == 0) {
        if (file_options(ro, err))
            r = tw_reporter_file_new(ro, err);
    } else {
        tw__set_error(err, TW_E_CONFIG,
                      "TRACEWIRE_REPORTER: unknown transport \"%s\" (jaeger-udp, "
                      "jaeger-udp-binary, jaeger-http, zipkin, otlp, file)",
                      name);
    }
done:
    tw_reporter_options_free(ro);
    return r;
}

#define MAX_TRANSPORTS 8

static tw_reporter *reporter_from_env(tw_error **err)
{
    tw_reporter *parts[MAX_TRANSPORTS + 1];
    size_t n = 0;
    bool log_spans = false;
    const char *v = env("JAEGER_REPORTER_LOG_SPANS");
    if (v && !parse_bool("JAEGER_REPORTER_LOG_SPANS", v, &log_spans, err))
        return NULL;
    /* An explicit TRACEWIRE_REPORTER list replaces what the Jaeger variables
     * imply (JAEGER_ENDPOINT: the collector, else the agent over UDP). */
    const char *list = env("TRACEWIRE_REPORTER");
    char *copy = strdup(list ? list : env("JAEGER_ENDPOINT") ? "jaeger-http" : "jaeger-udp");
    if (!copy) {
        tw__set_error(err, TW_E_NOMEM, "reporter: out of memory");
        return NULL;
    }
    bool ok = true;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); ok && item; item = strtok_r(NULL, ",", &save)) {
        char *name = trim(item);
        for (char *c = name; *c; c++)
            *c = (char)tolower((unsigned char)*c);
        if (!*name)
            continue;
        for (size_t i = 0; i < n && ok; i++) {
            if (strcmp(tw_reporter_name(parts[i]), name) == 0 ||
                (strcmp(name, "otlp") == 0 &&
                 strncmp(tw_reporter_name(parts[i]), "otlp-http", 9) == 0) ||
                (strcmp(name, "file") == 0 &&
                 strcmp(tw_reporter_name(parts[i]), "dapper-file") == 0)) {
                tw__set_error(err, TW_E_CONFIG, "TRACEWIRE_REPORTER=\"%s\": \"%s\" twice", list,
                              name);
                ok = false;
            }
        }
        if (ok && n == MAX_TRANSPORTS) {
            tw__set_error(err, TW_E_CONFIG, "TRACEWIRE_REPORTER=\"%s\": too many transports", list);
            ok = false;
        }
        if (ok)
            ok = (parts[n] = transport_from_env(name, err)) != NULL && ++n;
    }
    free(copy);
    if (ok && n == 0) {
        tw__set_error(err, TW_E_CONFIG, "TRACEWIRE_REPORTER=\"%s\": no transport named", list);
        ok = false;
    }
    if (ok && log_spans) {
        /* Jaeger adds a logging reporter next to the remote one. */
        ok = (parts[n] = tw_reporter_logging_new(tw_log_to_stdout, NULL)) != NULL && ++n;
        if (!ok)
            tw__set_error(err, TW_E_NOMEM, "logging reporter: out of memory");
    }
    if (!ok) {
        for (size_t i = 0; i < n; i++)
            tw_reporter_free(parts[i]);
        return NULL;
    }
    if (n == 1)
        return parts[0];
    tw_reporter *all = tw_reporter_composite_new(parts, n);
    if (!all)
        tw__set_error(err, TW_E_NOMEM, "composite reporter: out of memory");
    return all;
}

/* TRACEWIRE_MAX_TAGS and friends: the per-span limits. */
static bool limits_from_env(tw_tracer_options *opts, tw_error **err)
{
    static const struct {
        const char *name;
        tw_status (*set)(tw_tracer_options *, size_t);
    } limits[] = {
        {"TRACEWIRE_MAX_TAGS", tw_tracer_options_set_max_tags},
        {"TRACEWIRE_MAX_LOGS", tw_tracer_options_set_max_logs},
        {"TRACEWIRE_MAX_LOG_FIELDS", tw_tracer_options_set_max_log_fields},
        {"TRACEWIRE_MAX_VALUE_BYTES", tw_tracer_options_set_max_value_bytes},
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        const char *v = env(limits[i].name);
        unsigned long long n;
        if (!v)
            continue;
        if (!parse_uint(limits[i].name, v, 1, 1ULL << 32, &n, err))
            return false;
        limits[i].set(opts, (size_t)n);
    }
    return true;
}

/* JAEGER_PROPAGATION: "jaeger,b3,w3c" (and b3-single), in extract priority
 * order; unset or empty leaves the tracer's default (Jaeger only). */
static bool propagator_from_env(tw_tracer_options *opts, tw_error **err)
{
    const char *v = env("JAEGER_PROPAGATION");
    if (!v)
        return true;
    tw_error *local = NULL;
    tw_propagator *p = tw_propagator_parse(v, &local);
    if (!p) {
        tw__set_error(err, tw_error_status(local) == TW_E_NOMEM ? TW_E_NOMEM : TW_E_CONFIG,
                      "JAEGER_PROPAGATION=\"%s\": %s", v, tw_error_message(local));
        tw_error_free(local);
        return false;
    }
    tw_tracer_options_set_propagator(opts, p);
    return true;
}

tw_tracer *tw_tracer_new_from_env(const char *default_service, tw_error **err)
{
    tw_tracer *t = NULL;
    tw_tracer_options *opts = tw_tracer_options_new();
    if (!opts) {
        tw__set_error(err, TW_E_NOMEM, "tracer options: out of memory");
        return NULL;
    }
    /* OTEL_SERVICE_NAME is honoured when JAEGER_SERVICE_NAME is unset. */
    const char *service = env("JAEGER_SERVICE_NAME");
    if (!service)
        service = env("OTEL_SERVICE_NAME");
    if (!service)
        service = default_service;
    if (!service || !*service) {
        tw__set_error(err, TW_E_CONFIG,
                      "JAEGER_SERVICE_NAME (or OTEL_SERVICE_NAME) is not set and no default "
                      "service name was given");
        goto done;
    }
    tw_tracer_options_set_service(opts, service);
    const char *v;
    bool is_disabled = false;
    if ((v = env("JAEGER_DISABLED")) && !parse_bool("JAEGER_DISABLED", v, &is_disabled, err))
        goto done;
    bool is_128 = false; /* Jaeger's default for JAEGER_TRACEID_128BIT */
    if ((v = env("JAEGER_TRACEID_128BIT")) && !parse_bool("JAEGER_TRACEID_128BIT", v, &is_128, err))
        goto done;
    tw_tracer_options_set_trace_id_128bit(opts, is_128);
    if ((v = env("JAEGER_TAGS")) && !tw__parse_tags(opts, v, err))
        goto done;
    if (!limits_from_env(opts, err) || !propagator_from_env(opts, err))
        goto done;
    if (is_disabled) {
        /* Jaeger's no-op tracer: nothing is sampled and nothing is sent (a
         * span forced by sampling.priority ends in the null reporter). The
         * context still propagates, so traces pass through this service. */
        tw_tracer_options_set_sampler(opts, tw_sampler_const_new(false));
        tw_tracer_options_set_reporter(opts, tw_reporter_null_new());
    } else {
        tw_sampler *sampler = sampler_from_env(service, err);
        if (!sampler)
            goto done;
        tw_tracer_options_set_sampler(opts, sampler);
        tw_reporter *reporter = reporter_from_env(err);
        if (!reporter)
            goto done;
        tw_tracer_options_set_reporter(opts, reporter);
    }
    t = tw_tracer_new(opts, err);
done:
    tw_tracer_options_free(opts);
    return t;
}
