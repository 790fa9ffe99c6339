/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config_env.c: the configuration read from the environment:
 * tw_config_from_env() (tracewire/config.h) and tw_tracer_new_from_env(),
 * which is that reading followed by building the tracer. Three families of
 * variables: Jaeger's client variables (JAEGER_*, Jaeger's meanings), the
 * OpenTelemetry SDK's (OTEL_*, the OpenTelemetry environment variable
 * specification) and tracewire's own (TRACEWIRE_*). docs/CONFIGURATION.md
 * lists every variable and what it maps onto.
 *
 * One rule when families overlap: TRACEWIRE_* wins over JAEGER_*, which
 * wins over OTEL_*. A setting named by two families with different values
 * is a conflict, reported as a warning naming both; within a family the
 * specific form wins silently where the family says so (OTEL's per-signal
 * TRACES variables over the generic ones, OTEL_SERVICE_NAME over
 * service.name in OTEL_RESOURCE_ATTRIBUTES).
 *
 * Parsing is strict: an invalid value is an error naming the variable and
 * the value, never a silent default (also for OTEL_*, where the
 * specification would have us warn and ignore). Reading does not stop at
 * the first error: every problem is collected, so that `tracewire config`
 * shows them all; tw_tracer_new_from_env() fails with the first. No
 * message ever quotes a secret: passwords, tokens and header values are
 * named, not shown, and URLs lose their user:password and query values
 * (wire/core/redact.h).
 *
 * The reporters are constructed while reading (their constructors check
 * URLs and TLS files; no connection, no thread), so tw_config_from_env()
 * validates with the very code that tw_tracer_new_from_env() then uses;
 * the remote sampler, whose constructor polls, is made only by the tracer.
 * Runs once per call; no shared state.
 */
#include "config_env.h"
#include "offline/tag_list.h"

#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "internal.h"
#include "report/http.h"
#include "report/report.h"

/* An endpoint that is not a URL is not shown in part: it cannot be told
 * apart into host and credentials (wire/core/redact.h). */
#define NOT_SHOWN "(the value is not shown: it may hold a secret)"

#define MAX_TRANSPORTS 8
#define CANON 256 /* a canonical value's text */

/* ---- the configuration object -------------------------------------------------------------- */

typedef struct row {
    char *name, *value, *source;
} row;

typedef struct problem {
    tw_log_level level;
    char *text;
} problem;

typedef enum sampler_kind {
    SK_CONST,
    SK_PROBABILISTIC,
    SK_RATELIMITING,
    SK_ADAPTIVE,
    SK_REMOTE
} sampler_kind;

typedef struct transport {
    const char *name;          /* canonical: a tw_reporter_name() */
    tw_reporter_options *opts; /* as read (the probe uses them) */
    tw_reporter *reporter;     /* made from them; NULL after a problem */
} transport;

struct tw_config {
    row *rows;
    size_t n_rows, cap_rows;
    problem *problems;
    size_t n_problems, cap_problems;
    tw_error *first_error; /* the first TW_LOG_ERROR problem, as an error */
    bool is_oom;

    tw_tracer_options *opts; /* service, tags, 128-bit, limits, propagator, parent-based */
    char *service;
    bool is_disabled;

    sampler_kind sampler;
    double sampler_param;
    char *sampling_endpoint; /* remote */
    unsigned int refresh_ms, first_poll_ms;
    size_t max_operations;
    bool has_refresh, has_first_poll, has_max_operations;
    bool is_sampling_from_agent_host; /* the endpoint came from JAEGER_AGENT_HOST */
    char agent_host[256];             /* JAEGER_AGENT_HOST's bare form (agent_host()) */
    bool is_agent_host_read, is_agent_host_bad;

    transport transports[MAX_TRANSPORTS];
    size_t n_transports;
    bool log_spans; /* a logging reporter to stdout (JAEGER_REPORTER_LOG_SPANS, console) */
};

static char *dup_or_flag(tw_config *c, const char *s)
{
    char *d = strdup(s ? s : "");
    if (!d)
        c->is_oom = true;
    return d;
}

static void add_row(tw_config *c, const char *name, const char *source, const char *fmt, ...)
    TW_PRINTF(4, 5);
static void add_row(tw_config *c, const char *name, const char *source, const char *fmt, ...)
{
    char value[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    if (c->n_rows == c->cap_rows) {
        size_t cap = c->cap_rows ? c->cap_rows * 2 : 32;
        row *grown = realloc(c->rows, cap * sizeof *grown);
        if (!grown) {
            c->is_oom = true;
            return;
        }
        c->rows = grown;
        c->cap_rows = cap;
    }
    char clean[1024];
    tw__redact_text(value, clean, sizeof clean);
    row *r = &c->rows[c->n_rows++];
    r->name = dup_or_flag(c, name);
    r->value = dup_or_flag(c, clean);
    r->source = dup_or_flag(c, source);
}

static void add_problem(tw_config *c, tw_log_level level, tw_status status, const char *fmt, ...)
    TW_PRINTF(4, 5);
static void add_problem(tw_config *c, tw_log_level level, tw_status status, const char *fmt, ...)
{
    char text[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (level >= TW_LOG_ERROR && !c->first_error)
        tw__set_error(&c->first_error, status, "%s", text);
    if (c->n_problems == c->cap_problems) {
        size_t cap = c->cap_problems ? c->cap_problems * 2 : 8;
        problem *grown = realloc(c->problems, cap * sizeof *grown);
        if (!grown) {
            c->is_oom = true;
            return;
        }
        c->problems = grown;
        c->cap_problems = cap;
    }
    char clean[1024];
    tw__redact_text(text, clean, sizeof clean);
    problem *p = &c->problems[c->n_problems++];
    p->level = level;
    p->text = dup_or_flag(c, clean);
}

/* Files an error that a parser or constructor set (and frees it). */
static void take_error(tw_config *c, tw_error *e)
{
    if (!e)
        return;
    add_problem(c, TW_LOG_ERROR, tw_error_status(e), "%s", tw_error_message(e));
    tw_error_free(e);
}

static bool has_errors(const tw_config *c)
{
    return c->first_error != NULL || c->is_oom;
}

/* Returns the variable's value, or NULL when unset or empty (Jaeger and the
 * OpenTelemetry specification: an empty value counts as unset). */
static const char *env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

/* The 1-based index of the first empty (or blank) item of the comma list @v
 * ("a,,b", "a,", ","), 0 when there is none. Every list variable refuses
 * one: the W3C baggage grammar the OpenTelemetry lists follow has no empty
 * member, and a name lost by a script must not go unnoticed. */
static size_t empty_item(const char *v)
{
    size_t item = 1;
    for (const char *start = v;; item++) {
        const char *comma = strchr(start, ',');
        const char *end = comma ? comma : start + strlen(start);
        const char *q = start;
        while (q < end && isspace((unsigned char)*q))
            q++;
        if (q == end)
            return item;
        if (!comma)
            return 0;
        start = comma + 1;
    }
}

/*
 * A comma list variable (TRACEWIRE_REPORTER, OTEL_TRACES_EXPORTER,
 * JAEGER_PROPAGATION, OTEL_PROPAGATORS). A value that is empty once its
 * blanks are trimmed is unset, as the OpenTelemetry specification says of
 * an empty value: the default applies. An empty item ("a,,b", "a,", ",")
 * is an error naming the variable, never skipped: the item may have been a
 * name lost by a script, and skipping it could leave a list that turns
 * span export off without a word. *is_bad: the value was refused (the
 * problem is recorded); the value is still returned, so that the caller
 * knows the variable was set.
 */
static const char *env_list(tw_config *c, const char *name, bool *is_bad)
{
    const char *v = env(name);
    *is_bad = false;
    if (!v)
        return NULL;
    const char *p = v;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p)
        return NULL;
    size_t item = empty_item(v);
    if (item) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "%s=\"%s\": item %zu of the list is empty (a comma too many?)", name, v, item);
        *is_bad = true;
    }
    return v;
}

/* JAEGER_AGENT_HOST, checked once (tw__host_check): its bare form ("::1"
 * for "[::1]"), or NULL when unset or refused, the refusal filed once and
 * the value shown masked: "user:password@host" is no host, and its
 * password must not be printed. *is_bad: set but refused. */
static const char *agent_host(tw_config *c, bool *is_bad)
{
    const char *v = env("JAEGER_AGENT_HOST");
    if (v && !c->is_agent_host_read &&
        tw__host_check(v, c->agent_host, sizeof c->agent_host) == TW__HOST_INVALID) {
        char shown[512];
        tw__host_shown(v, shown, sizeof shown);
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "JAEGER_AGENT_HOST=\"%s\": not a host name, IPv4 or IPv6 literal (a port "
                    "goes in JAEGER_AGENT_PORT; no user info, path or space)",
                    shown);
        c->is_agent_host_bad = true;
    }
    c->is_agent_host_read = true;
    *is_bad = v && c->is_agent_host_bad;
    return v && !c->is_agent_host_bad ? c->agent_host : NULL;
}

/* "a variable that has no effect" */
static void warn_unused(tw_config *c, const char *name, const char *why)
{
    if (env(name))
        add_problem(c, TW_LOG_WARN, TW_E_CONFIG, "%s is set but has no effect: %s", name, why);
}

/* ---- value parsers ----------------------------------------------------------------------------
 */

/* JAEGER_*: Go's ParseBool; OTEL_*: "true" or "false", any case (the
 * specification's only true value; we refuse the rest rather than read
 * it as false). */
static bool parse_bool(const char *name, const char *v, bool *out, tw_error **err)
{
    if (strncmp(name, "OTEL_", 5) == 0) {
        if (strcasecmp(v, "true") == 0 || strcasecmp(v, "false") == 0) {
            *out = strcasecmp(v, "true") == 0;
            return true;
        }
        tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": not a boolean (use true or false)", name, v);
        return false;
    }
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

/* One pass over the items of a JAEGER_TAGS list (offline/tag_list.h): checks
 * them all when @fn is NULL, else hands each to @fn. */
static bool tag_list_pass(const char *name, const char *v, tw__tag_list_fn fn, void *arg,
                          tw_error **err)
{
    char *copy = strdup(v);
    if (!copy) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", name);
        return false;
    }
    bool ok = true;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && ok; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '='); /* not empty: empty_item() */
        if (!eq) {
            tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": item \"%s\" has no '='", name, v,
                          trim(item));
            ok = false;
            break;
        }
        *eq = '\0';
        char *key = trim(item);
        char *value = trim(eq + 1);
        if (!*key) {
            tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": item \"=%s\" has an empty key", name, v,
                          value);
            ok = false;
            break;
        }
        if (!fn)
            continue;
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
        ok = fn(arg, key, value);
        if (!ok)
            tw__set_error(err, TW_E_NOMEM, "%s: out of memory", name);
    }
    free(copy);
    return ok;
}

/* offline/tag_list.h: the items are all checked before the first is passed
 * on, so that a refused list passes none. */
bool tw__tag_list_parse(const char *name, const char *v, tw__tag_list_fn fn, void *arg,
                        tw_error **err)
{
    size_t empty = empty_item(v);
    if (empty) {
        tw__set_error(err, TW_E_CONFIG,
                      "%s=\"%s\": item %zu of the list is empty (a comma too many?)", name, v,
                      empty);
        return false;
    }
    return tag_list_pass(name, v, NULL, NULL, err) && tag_list_pass(name, v, fn, arg, err);
}

static bool add_tag(void *arg, const char *key, const char *value)
{
    return tw_tracer_options_add_tag_str(arg, key, value) == TW_OK;
}

/* JAEGER_TAGS (config_env.h). Out of memory midway, the tags added before
 * are taken back by rolling the count back: their bytes stay in the
 * options' arena until tw_tracer_options_free(). */
bool tw__parse_tags(tw_tracer_options *opts, const char *v, tw_error **err)
{
    const size_t n_tags_before = opts->tags.n_tags;
    bool ok = tw__tag_list_parse("JAEGER_TAGS", v, add_tag, opts, err);
    if (!ok)
        opts->tags.n_tags = n_tags_before;
    return ok;
}

/* %-decodes @s in place; false on a '%' not followed by two hex digits or a
 * byte that decodes to NUL. */
static bool pct_decode(char *s)
{
    char *w = s;
    for (const char *r = s; *r; r++) {
        if (*r != '%') {
            *w++ = *r;
            continue;
        }
        if (!isxdigit((unsigned char)r[1]) || !isxdigit((unsigned char)r[2]))
            return false;
        char hex[3] = {r[1], r[2], '\0'};
        char byte = (char)strtol(hex, NULL, 16);
        if (byte == '\0')
            return false;
        *w++ = byte;
        r += 2;
    }
    *w = '\0';
    return true;
}

bool tw__parse_kv_list(const char *name, const char *v, bool is_secret, tw__kv_fn fn, void *arg,
                       tw_error **err)
{
    char *copy = strdup(v);
    if (!copy) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", name);
        return false;
    }
    /* Secret lists (headers) are never quoted: an item is named by its
     * position and, once known, its key. */
    char shown[160];
    if (is_secret)
        snprintf(shown, sizeof shown, "%s", name);
    else
        snprintf(shown, sizeof shown, "%s=\"%.100s%s\"", name, v, strlen(v) > 100 ? "..." : "");
    size_t empty = empty_item(v);
    if (empty) {
        tw__set_error(err, TW_E_CONFIG, "%s: item %zu of the list is empty (a comma too many?)",
                      shown, empty);
        free(copy);
        return false;
    }
    bool ok = true;
    size_t index = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && ok; item = strtok_r(NULL, ",", &save)) {
        index++;
        char *eq = strchr(item, '='); /* not empty: empty_item() */
        if (!eq) {
            if (is_secret)
                tw__set_error(err, TW_E_CONFIG, "%s: item %zu has no '=' (expected key=value)",
                              shown, index);
            else
                tw__set_error(err, TW_E_CONFIG, "%s: item \"%s\" has no '='", shown, trim(item));
            ok = false;
            break;
        }
        *eq = '\0';
        char *key = trim(item), *value = trim(eq + 1);
        if (!*key) {
            tw__set_error(err, TW_E_CONFIG, "%s: item %zu has an empty key", shown, index);
            ok = false;
        } else if (!pct_decode(key)) {
            tw__set_error(err, TW_E_CONFIG, "%s: item %zu: bad percent-encoding in the key", shown,
                          index);
            ok = false;
        } else if (!pct_decode(value)) {
            tw__set_error(err, TW_E_CONFIG,
                          "%s: item %zu (key \"%.64s\"): bad percent-encoding in the value "
                          "(a %% not followed by two hex digits, or %%00)",
                          shown, index, key);
            ok = false;
        } else {
            ok = fn(arg, name, key, value, err);
        }
    }
    free(copy);
    return ok;
}

/* ---- picking a setting among families ------------------------------------------------------ */

/* Turns a variable's raw value into a canonical text (for comparison and
 * display); false with @err set when invalid. */
typedef bool (*canon_fn)(const char *var, const char *raw, const void *arg, char *out, size_t size,
                         tw_error **err);

typedef struct uint_range {
    unsigned long long min, max;
} uint_range;

static bool canon_uint(const char *var, const char *raw, const void *arg, char *out, size_t size,
                       tw_error **err)
{
    const uint_range *r = arg;
    unsigned long long n;
    if (!parse_uint(var, raw, r->min, r->max, &n, err))
        return false;
    snprintf(out, size, "%llu", n);
    return true;
}

/* An interval; @arg (nullable) a const bool: zero allowed. OTEL timeouts use
 * canon_timeout. */
static bool canon_interval(const char *var, const char *raw, const void *arg, char *out,
                           size_t size, tw_error **err)
{
    unsigned int ms;
    if (!tw__parse_interval_ms(var, raw, &ms, err))
        return false;
    if (ms == 0 && !(arg && *(const bool *)arg)) {
        tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": must be > 0", var, raw);
        return false;
    }
    snprintf(out, size, "%u", ms);
    return true;
}

/* An OpenTelemetry Timeout: milliseconds, 0 meaning no limit (taken as one
 * day, the specification's "a very long time"). */
#define TIMEOUT_INDEFINITE_MS 86400000u
static bool canon_timeout(const char *var, const char *raw, const void *arg, char *out, size_t size,
                          tw_error **err)
{
    (void)arg;
    unsigned int ms;
    if (!tw__parse_interval_ms(var, raw, &ms, err))
        return false;
    snprintf(out, size, "%u", ms ? ms : TIMEOUT_INDEFINITE_MS);
    return true;
}

/* The close deadline: an interval from 1 ms to TW__MAX_CLOSE_TIMEOUT_MS (the
 * range tw_reporter_options_set_close_timeout_ms() accepts). */
static bool canon_close_timeout(const char *var, const char *raw, const void *arg, char *out,
                                size_t size, tw_error **err)
{
    (void)arg;
    unsigned int ms;
    if (!tw__parse_interval_ms(var, raw, &ms, err))
        return false;
    if (ms < 1 || ms > TW__MAX_CLOSE_TIMEOUT_MS) {
        tw__set_error(err, TW_E_CONFIG, "%s=\"%s\": must be from 1 ms to 1 h", var, raw);
        return false;
    }
    snprintf(out, size, "%u", ms);
    return true;
}

static bool canon_bool(const char *var, const char *raw, const void *arg, char *out, size_t size,
                       tw_error **err)
{
    (void)arg;
    bool b;
    if (!parse_bool(var, raw, &b, err))
        return false;
    snprintf(out, size, "%s", b ? "true" : "false");
    return true;
}

static bool canon_string(const char *var, const char *raw, const void *arg, char *out, size_t size,
                         tw_error **err)
{
    (void)arg;
    if (strlen(raw) >= size) {
        tw__set_error(err, TW_E_CONFIG, "%s: longer than %zu bytes", var, size - 1);
        return false;
    }
    snprintf(out, size, "%s", raw);
    return true;
}

static bool canon_log_level(const char *var, const char *raw, const void *arg, char *out,
                            size_t size, tw_error **err)
{
    (void)arg;
    static const char *const names[] = {"debug", "info", "warn", "error", "off"};
    tw_log_level level;
    if (!tw__parse_log_level(raw, &level)) {
        tw__set_error(err, TW_E_CONFIG,
                      "%s=\"%s\": not a log level (debug, info, warn, error, off)", var, raw);
        return false;
    }
    snprintf(out, size, "%s", names[level]);
    return true;
}

/*
 * Reads one setting from the variables @vars (NULL-terminated, in
 * precedence order; a name starting with '|' belongs to the same family as
 * the one before it and is read only when that one is unset: the family's
 * own override, never a conflict). Every set value is validated (an invalid
 * one is an error even when another wins); two families with different
 * valid values are a conflict warning. Returns true with *var_out (the
 * winner's name) and @out (its canonical value) when any is set and valid.
 */
static bool pick(tw_config *c, const char *setting, const char *const *vars, canon_fn canon,
                 const void *arg, const char **var_out, char *out, size_t size)
{
    const char *winner = NULL;
    char winner_value[CANON] = "";
    bool family_done = false;
    for (size_t i = 0; vars[i]; i++) {
        bool is_override = vars[i][0] == '|';
        const char *name = vars[i] + (is_override ? 1 : 0);
        if (!is_override)
            family_done = false;
        else if (family_done)
            continue;
        const char *raw = env(name);
        if (!raw)
            continue;
        family_done = true;
        char value[CANON];
        tw_error *e = NULL;
        if (!canon(name, raw, arg, value, sizeof value, &e)) {
            take_error(c, e);
            continue;
        }
        if (!winner) {
            winner = name;
            snprintf(winner_value, sizeof winner_value, "%s", value);
        } else if (strcmp(value, winner_value) != 0) {
            add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                        "%s (%s) conflicts with %s (%s) for %s: %s is used (TRACEWIRE_* wins "
                        "over JAEGER_*, which wins over OTEL_*)",
                        name, value, winner, winner_value, setting, winner);
        }
    }
    if (!winner)
        return false;
    *var_out = winner;
    snprintf(out, size, "%s", winner_value);
    return true;
}

/* pick() for a number; false when unset or invalid. */
static bool pick_uint(tw_config *c, const char *setting, const char *const *vars,
                      unsigned long long min, unsigned long long max, unsigned long long *n,
                      const char **var)
{
    uint_range r = {min, max};
    char value[CANON];
    if (!pick(c, setting, vars, canon_uint, &r, var, value, sizeof value))
        return false;
    *n = strtoull(value, NULL, 10);
    return true;
}

static bool pick_ms(tw_config *c, const char *setting, const char *const *vars, canon_fn canon,
                    bool allow_zero, unsigned int *ms, const char **var)
{
    char value[CANON];
    if (!pick(c, setting, vars, canon, &allow_zero, var, value, sizeof value))
        return false;
    *ms = (unsigned int)strtoul(value, NULL, 10);
    return true;
}

/* ---- service, tags, disabled -------------------------------------------------------------------
 */

typedef struct resource_read {
    tw_config *c;
    char *service; /* service.name, owned */
    const tw__process *jaeger_tags;
    tw__process attrs; /* the other attributes */
} resource_read;

static bool on_resource_attribute(void *arg, const char *name, const char *key, const char *value,
                                  tw_error **err)
{
    resource_read *r = arg;
    (void)name;
    if (strcmp(key, "service.name") == 0) {
        free(r->service);
        if (!(r->service = strdup(value))) {
            tw__set_error(err, TW_E_NOMEM, "OTEL_RESOURCE_ATTRIBUTES: out of memory");
            return false;
        }
        return true;
    }
    tw_value v = {.type = TW_VALUE_STRING, .as.str = value, .len = strlen(value)};
    if (!tw__process_add_tag(&r->attrs, key, &v)) {
        tw__set_error(err, TW_E_NOMEM, "OTEL_RESOURCE_ATTRIBUTES: out of memory");
        return false;
    }
    return true;
}

/* Appends "k=v, " of @p's tags to @buf. */
static void list_tags(const tw__process *p, char *buf, size_t size)
{
    for (size_t i = 0; i < p->n_tags; i++) {
        tw_value v;
        tw__tag_to_value(&p->tags[i], &v);
        size_t len = strlen(buf);
        snprintf(buf + len, size - len, "%s%s=%.*s", len ? ", " : "", p->tags[i].key,
                 (int)(v.type == TW_VALUE_STRING ? v.len : 0),
                 v.type == TW_VALUE_STRING ? v.as.str : "");
    }
}

static void read_identity(tw_config *c, const char *default_service)
{
    tw_error *e = NULL;
    /* Tags: JAEGER_TAGS, then the other OTEL_RESOURCE_ATTRIBUTES (a key
     * both set: JAEGER_TAGS wins, a different value is a conflict). */
    const char *v = env("JAEGER_TAGS");
    if (v && !tw__parse_tags(c->opts, v, &e))
        take_error(c, e);
    resource_read rr = {.c = c};
    tw__process_init(&rr.attrs);
    e = NULL;
    if ((v = env("OTEL_RESOURCE_ATTRIBUTES")) &&
        !tw__parse_kv_list("OTEL_RESOURCE_ATTRIBUTES", v, false, on_resource_attribute, &rr, &e))
        take_error(c, e);
    for (size_t i = 0; i < rr.attrs.n_tags; i++) {
        const tw__tag *t = &rr.attrs.tags[i];
        const tw__tag *mine = tw__process_find_tag(&c->opts->tags, t->key);
        tw_value tv;
        tw__tag_to_value(t, &tv);
        if (mine) {
            tw_value mv;
            tw__tag_to_value(mine, &mv);
            if (mv.len != tv.len || memcmp(mv.as.str, tv.as.str, tv.len) != 0)
                add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                            "OTEL_RESOURCE_ATTRIBUTES (%s=%.*s) conflicts with JAEGER_TAGS "
                            "(%s=%.*s): JAEGER_TAGS is used",
                            t->key, (int)tv.len, tv.as.str, t->key, (int)mv.len, mv.as.str);
            continue;
        }
        if (tw_tracer_options_add_tag_str(c->opts, t->key, tv.as.str) != TW_OK)
            c->is_oom = true;
    }
    tw__process_clear(&rr.attrs);

    /* Service: JAEGER_SERVICE_NAME, else OTEL_SERVICE_NAME, else service.name
     * of OTEL_RESOURCE_ATTRIBUTES (the specification's own order), else the
     * argument. */
    const char *jaeger = env("JAEGER_SERVICE_NAME"), *otel = env("OTEL_SERVICE_NAME");
    const char *otel_var = otel ? "OTEL_SERVICE_NAME" : "OTEL_RESOURCE_ATTRIBUTES";
    if (!otel)
        otel = rr.service;
    const char *service = jaeger ? jaeger : otel ? otel : default_service;
    const char *source = jaeger ? "JAEGER_SERVICE_NAME" : otel ? otel_var : "argument";
    if (jaeger && otel && strcmp(jaeger, otel) != 0)
        add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                    "%s (%s) conflicts with JAEGER_SERVICE_NAME (%s) for service.name: "
                    "JAEGER_SERVICE_NAME is used (TRACEWIRE_* wins over JAEGER_*, which wins "
                    "over OTEL_*)",
                    otel_var, otel, jaeger);
    if (!service || !*service) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "JAEGER_SERVICE_NAME (or OTEL_SERVICE_NAME) is not set and no default "
                    "service name was given");
        add_row(c, "service.name", "none", "(not set)");
    } else {
        c->service = dup_or_flag(c, service);
        tw_tracer_options_set_service(c->opts, service);
        add_row(c, "service.name", source, "%s", service);
    }
    free(rr.service);
    char tags[512] = "";
    list_tags(&c->opts->tags, tags, sizeof tags);
    const bool has_jt = env("JAEGER_TAGS"), has_ra = env("OTEL_RESOURCE_ATTRIBUTES");
    add_row(c, "tags",
            has_jt && has_ra ? "JAEGER_TAGS, OTEL_RESOURCE_ATTRIBUTES"
            : has_jt         ? "JAEGER_TAGS"
            : has_ra         ? "OTEL_RESOURCE_ATTRIBUTES"
                             : "default",
            "%s", *tags ? tags : "(none; hostname, ip, versions and client-uuid are added)");

    static const char *const disabled_vars[] = {"JAEGER_DISABLED", "OTEL_SDK_DISABLED", NULL};
    char value[CANON];
    const char *var = NULL;
    if (pick(c, "disabled", disabled_vars, canon_bool, NULL, &var, value, sizeof value))
        c->is_disabled = strcmp(value, "true") == 0;
    add_row(c, "disabled", var ? var : "default", "%s", c->is_disabled ? "true" : "false");

    static const char *const id_vars[] = {"JAEGER_TRACEID_128BIT", NULL};
    bool is_128 = false; /* Jaeger's default for JAEGER_TRACEID_128BIT */
    var = NULL;
    if (pick(c, "trace_id.128bit", id_vars, canon_bool, NULL, &var, value, sizeof value))
        is_128 = strcmp(value, "true") == 0;
    tw_tracer_options_set_trace_id_128bit(c->opts, is_128);
    add_row(c, "trace_id.128bit", var ? var : "default", "%s", is_128 ? "true" : "false");
}

/* ---- sampler -----------------------------------------------------------------------------------
 */

static const char *sampler_kind_name(sampler_kind k)
{
    static const char *const names[] = {"const", "probabilistic", "ratelimiting", "adaptive",
                                        "remote"};
    return names[k];
}

typedef struct sampler_choice {
    bool is_set;
    sampler_kind kind;
    double param;
    bool has_param;
    bool is_parent_based;
    const char *source;
    /* jaeger_remote's argument */
    char endpoint[512];
    unsigned int polling_ms;
    bool has_polling;
} sampler_choice;

static bool parse_number(const char *name, const char *v, double *out, tw_error **err)
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

static bool jaeger_sampler(tw_config *c, sampler_choice *s)
{
    const char *type = env("JAEGER_SAMPLER_TYPE"), *param_s = env("JAEGER_SAMPLER_PARAM");
    if (!type && !param_s)
        return false;
    s->is_set = true;
    s->is_parent_based = true;
    s->source = type && param_s ? "JAEGER_SAMPLER_TYPE, JAEGER_SAMPLER_PARAM"
                : type          ? "JAEGER_SAMPLER_TYPE"
                                : "JAEGER_SAMPLER_PARAM";
    tw_error *e = NULL;
    if (param_s && !parse_number("JAEGER_SAMPLER_PARAM", param_s, &s->param, &e)) {
        take_error(c, e);
        return false;
    }
    s->has_param = param_s != NULL;
    if (!type || strcasecmp(type, "remote") == 0)
        s->kind = SK_REMOTE;
    else if (strcasecmp(type, "const") == 0)
        s->kind = SK_CONST;
    else if (strcasecmp(type, "probabilistic") == 0)
        s->kind = SK_PROBABILISTIC;
    else if (strcasecmp(type, "ratelimiting") == 0 || strcasecmp(type, "rate_limiting") == 0)
        s->kind = SK_RATELIMITING;
    else if (strcasecmp(type, "adaptive") == 0) /* tracewire: target traces per second */
        s->kind = SK_ADAPTIVE;
    else {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "JAEGER_SAMPLER_TYPE=\"%s\": unknown sampler (const, probabilistic, "
                    "ratelimiting, remote, adaptive)",
                    type);
        return false;
    }
    if (s->kind == SK_CONST && s->has_param && s->param != 0 && s->param != 1) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "JAEGER_SAMPLER_PARAM=\"%s\": the const sampler takes 0 or 1", param_s);
        return false;
    }
    if (!s->has_param)
        s->param = s->kind == SK_CONST                                   ? 0
                   : s->kind == SK_PROBABILISTIC || s->kind == SK_REMOTE ? 0.001
                                                                         : 1.0;
    return true;
}

typedef struct remote_arg {
    sampler_choice *s;
    tw_config *c;
} remote_arg;

/* One item of jaeger_remote's OTEL_TRACES_SAMPLER_ARG. */
static bool on_remote_arg(void *arg, const char *name, const char *key, const char *value,
                          tw_error **err)
{
    sampler_choice *s = ((remote_arg *)arg)->s;
    if (strcmp(key, "endpoint") == 0) {
        snprintf(s->endpoint, sizeof s->endpoint, "%s", value);
        return true;
    }
    if (strcmp(key, "pollingIntervalMs") == 0 || strcmp(key, "poolingIntervalMs") == 0) {
        unsigned long long n;
        if (!parse_uint(name, value, 1, 0xffffffffULL, &n, err))
            return false;
        s->polling_ms = (unsigned int)n;
        s->has_polling = true;
        return true;
    }
    if (strcmp(key, "initialSamplingRate") == 0) {
        if (!parse_number(name, value, &s->param, err))
            return false;
        if (!(s->param >= 0 && s->param <= 1)) {
            tw__set_error(err, TW_E_CONFIG, "%s: initialSamplingRate=%s is outside [0, 1]", name,
                          value);
            return false;
        }
        s->has_param = true;
        return true;
    }
    tw__set_error(err, TW_E_CONFIG,
                  "%s: unknown jaeger_remote argument \"%s\" (endpoint, pollingIntervalMs, "
                  "initialSamplingRate)",
                  name, key);
    return false;
}

static bool otel_sampler(tw_config *c, sampler_choice *s)
{
    const char *name = env("OTEL_TRACES_SAMPLER"), *arg = env("OTEL_TRACES_SAMPLER_ARG");
    if (!name) {
        if (arg)
            warn_unused(c, "OTEL_TRACES_SAMPLER_ARG", "OTEL_TRACES_SAMPLER is not set");
        return false;
    }
    static const struct {
        const char *name;
        sampler_kind kind;
        bool is_parent_based;
        double param;
    } table[] = {
        {"always_on", SK_CONST, false, 1},
        {"always_off", SK_CONST, false, 0},
        {"traceidratio", SK_PROBABILISTIC, false, 1.0},
        {"parentbased_always_on", SK_CONST, true, 1},
        {"parentbased_always_off", SK_CONST, true, 0},
        {"parentbased_traceidratio", SK_PROBABILISTIC, true, 1.0},
        {"jaeger_remote", SK_REMOTE, false, 0.001},
        {"parentbased_jaeger_remote", SK_REMOTE, true, 0.001},
    };
    size_t i = 0;
    while (i < sizeof table / sizeof table[0] && strcasecmp(name, table[i].name) != 0)
        i++;
    if (i == sizeof table / sizeof table[0]) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "OTEL_TRACES_SAMPLER=\"%s\": unknown or unsupported sampler (always_on, "
                    "always_off, traceidratio, parentbased_always_on, parentbased_always_off, "
                    "parentbased_traceidratio, jaeger_remote, parentbased_jaeger_remote)",
                    name);
        return false;
    }
    s->is_set = true;
    s->kind = table[i].kind;
    s->is_parent_based = table[i].is_parent_based;
    s->param = table[i].param;
    s->source = arg ? "OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG" : "OTEL_TRACES_SAMPLER";
    if (!arg)
        return true;
    tw_error *e = NULL;
    if (s->kind == SK_PROBABILISTIC) {
        double p;
        if (!parse_number("OTEL_TRACES_SAMPLER_ARG", arg, &p, &e)) {
            take_error(c, e);
            return false;
        }
        if (!(p >= 0 && p <= 1)) {
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "OTEL_TRACES_SAMPLER_ARG=\"%s\": a ratio in [0, 1] for %s", arg, name);
            return false;
        }
        s->param = p;
        s->has_param = true;
    } else if (s->kind == SK_REMOTE) {
        remote_arg ra = {s, c};
        if (!tw__parse_kv_list("OTEL_TRACES_SAMPLER_ARG", arg, false, on_remote_arg, &ra, &e)) {
            take_error(c, e);
            return false;
        }
    } else {
        warn_unused(c, "OTEL_TRACES_SAMPLER_ARG", "the always_on/always_off samplers take none");
    }
    return true;
}

/* "const 1", "probabilistic 0.5 (parent-based)": what a sampler choice
 * means, for rows and for comparing two families' choices. */
static void describe_sampler(const sampler_choice *s, char *out, size_t size)
{
    if (s->kind == SK_REMOTE)
        snprintf(out, size, "remote, initial probabilistic %g%s", s->param,
                 s->is_parent_based ? "" : ", decides every span");
    else
        snprintf(out, size, "%s %g%s", sampler_kind_name(s->kind), s->param,
                 s->is_parent_based ? "" : ", decides every span");
}

/* The remote sampler's endpoint: JAEGER_SAMPLING_ENDPOINT, else the
 * deprecated JAEGER_SAMPLER_MANAGER_HOST_PORT, else jaeger_remote's
 * endpoint=, else http://JAEGER_AGENT_HOST:5778/sampling, else Jaeger's
 * default. */
static void read_remote(tw_config *c, const sampler_choice *s)
{
    char url[600];
    const char *source = "default";
    const char *v;
    bool is_host_bad = false;
    if ((v = env("JAEGER_SAMPLING_ENDPOINT"))) {
        snprintf(url, sizeof url, "%s", v);
        source = "JAEGER_SAMPLING_ENDPOINT";
    } else if ((v = env("JAEGER_SAMPLER_MANAGER_HOST_PORT"))) {
        snprintf(url, sizeof url, "%s%s/sampling", strstr(v, "://") ? "" : "http://", v);
        source = "JAEGER_SAMPLER_MANAGER_HOST_PORT";
    } else if (s->endpoint[0]) {
        /* The specification's form is scheme://host:port of Jaeger's gRPC
         * sampling service; tracewire polls the HTTP one: an endpoint
         * without a path gets the agent's /sampling. */
        snprintf(url, sizeof url, "%s", s->endpoint);
        size_t len = strlen(url);
        while (len > 0 && url[len - 1] == '/')
            url[--len] = '\0';
        const char *auth = strstr(url, "://");
        if (!strchr(auth ? auth + 3 : url, '/'))
            snprintf(url + len, sizeof url - len, "/sampling");
        source = "OTEL_TRACES_SAMPLER_ARG";
        const char *port = strrchr(auth ? auth + 3 : url, ':');
        if (port && strncmp(port, ":14250", 6) == 0 && (port[6] == '\0' || port[6] == '/')) {
            char shown[600];
            tw__show_url(s->endpoint, shown, sizeof shown);
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "OTEL_TRACES_SAMPLER_ARG: endpoint=%s is Jaeger's gRPC sampling port "
                        "(14250), which tracewire does not speak: use the agent's "
                        "http://HOST:5778/sampling or the collector's "
                        "http://HOST:14268/api/sampling",
                        shown);
        }
    } else if (env("JAEGER_AGENT_HOST")) {
        const char *host = agent_host(c, &is_host_bad);
        /* Refused (an error already): the default stands in, never shown. */
        tw__host_url(host ? host : "127.0.0.1", 5778, "/sampling", url, sizeof url);
        source = "JAEGER_AGENT_HOST";
        c->is_sampling_from_agent_host = true;
    } else {
        snprintf(url, sizeof url, "http://127.0.0.1:5778/sampling");
    }
    if (s->endpoint[0] && strcmp(source, "OTEL_TRACES_SAMPLER_ARG") != 0 &&
        strcmp(s->endpoint, url) != 0) {
        char mine[600], theirs[600];
        tw__show_url(url, mine, sizeof mine);
        tw__show_url(s->endpoint, theirs, sizeof theirs);
        add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                    "OTEL_TRACES_SAMPLER_ARG (endpoint=%s) conflicts with %s (%s) for "
                    "sampler.endpoint: %s is used (TRACEWIRE_* wins over JAEGER_*, which wins "
                    "over OTEL_*)",
                    theirs, source, mine, source);
    }
    c->sampling_endpoint = dup_or_flag(c, url);
    char shown[600];
    tw__show_url(url, shown, sizeof shown);
    add_row(c, "sampler.endpoint", source, "%s", is_host_bad ? "(refused: see the errors)" : shown);

    static const char *const refresh_vars[] = {"JAEGER_SAMPLER_REFRESH_INTERVAL", NULL};
    const char *var = NULL;
    c->refresh_ms = 60000;
    if (pick_ms(c, "sampler.refresh_interval_ms", refresh_vars, canon_interval, false,
                &c->refresh_ms, &var)) {
        c->has_refresh = true;
        if (s->has_polling && s->polling_ms != c->refresh_ms)
            add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                        "OTEL_TRACES_SAMPLER_ARG (pollingIntervalMs=%u) conflicts with "
                        "JAEGER_SAMPLER_REFRESH_INTERVAL (%u ms): JAEGER_SAMPLER_REFRESH_INTERVAL "
                        "is used",
                        s->polling_ms, c->refresh_ms);
    } else if (s->has_polling) {
        c->refresh_ms = s->polling_ms;
        c->has_refresh = true;
        var = "OTEL_TRACES_SAMPLER_ARG";
    }
    add_row(c, "sampler.refresh_interval_ms", var ? var : "default", "%u", c->refresh_ms);

    static const char *const ops_vars[] = {"JAEGER_SAMPLER_MAX_OPERATIONS", NULL};
    unsigned long long n = 2000;
    var = NULL;
    if (pick_uint(c, "sampler.max_operations", ops_vars, 1, 1000000, &n, &var))
        c->has_max_operations = true;
    c->max_operations = (size_t)n;
    add_row(c, "sampler.max_operations", var ? var : "default", "%llu", n);

    static const char *const poll_vars[] = {"TRACEWIRE_SAMPLER_FIRST_POLL_TIMEOUT", NULL};
    var = NULL;
    c->first_poll_ms = 1000;
    if (pick_ms(c, "sampler.first_poll_timeout_ms", poll_vars, canon_interval, true,
                &c->first_poll_ms, &var))
        c->has_first_poll = true;
    add_row(c, "sampler.first_poll_timeout_ms", var ? var : "default", "%u", c->first_poll_ms);
}

static void read_sampler(tw_config *c)
{
    sampler_choice jaeger = {0}, otel = {0};
    bool has_jaeger = jaeger_sampler(c, &jaeger);
    bool has_otel = otel_sampler(c, &otel);
    sampler_choice *s = has_jaeger ? &jaeger : has_otel ? &otel : NULL;
    sampler_choice fallback = {.is_set = true,
                               .kind = SK_REMOTE,
                               .param = 0.001,
                               .is_parent_based = true,
                               .source = "default"};
    if (!s && (jaeger.is_set || otel.is_set))
        return; /* the variables were invalid: reported */
    if (!s)
        s = &fallback;
    char described[160], other[160];
    describe_sampler(s, described, sizeof described);
    if (has_jaeger && has_otel) {
        describe_sampler(&otel, other, sizeof other);
        if (strcmp(described, other) != 0)
            add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                        "%s (%s) conflicts with %s (%s) for sampler: the JAEGER_* sampler is "
                        "used (TRACEWIRE_* wins over JAEGER_*, which wins over OTEL_*)",
                        otel.source, other, jaeger.source, described);
    }
    c->sampler = s->kind;
    c->sampler_param = s->param;
    tw_tracer_options_set_parent_based(c->opts, s->is_parent_based);
    add_row(c, "sampler", s->source, "%s", described);
    /* The remote sampler's own settings: jaeger_remote's argument counts
     * even when the JAEGER_* variables chose the sampler. */
    if (s->kind == SK_REMOTE && !c->is_disabled)
        read_remote(c, has_otel && otel.kind == SK_REMOTE ? &otel : s);
}

/* Makes the sampler the configuration names (the remote one polls now). */
static tw_sampler *build_sampler(tw_config *c, tw_error **err)
{
    tw_error *local = NULL;
    tw_sampler *s = NULL;
    switch (c->sampler) {
    case SK_CONST:
        s = tw_sampler_const_new(c->sampler_param == 1);
        break;
    case SK_PROBABILISTIC:
        s = tw_sampler_probabilistic_new(c->sampler_param, &local);
        break;
    case SK_RATELIMITING:
        s = tw_sampler_rate_limiting_new(c->sampler_param, &local);
        break;
    case SK_ADAPTIVE:
        s = tw_sampler_adaptive_new(c->sampler_param, 0, &local);
        break;
    case SK_REMOTE: {
        tw_sampler *initial = tw_sampler_probabilistic_new(c->sampler_param, &local);
        if (!initial)
            break;
        tw_remote_sampler_options *ro = tw_remote_sampler_options_new(c->service);
        if (!ro) {
            tw_sampler_free(initial);
            tw__set_error(err, TW_E_NOMEM, "remote sampler options: out of memory");
            return NULL;
        }
        tw_remote_sampler_options_set_initial_sampler(ro, initial);
        tw_remote_sampler_options_set_endpoint(ro, c->sampling_endpoint);
        if (c->has_max_operations)
            tw_remote_sampler_options_set_max_operations(ro, c->max_operations);
        if (c->has_refresh)
            tw_remote_sampler_options_set_refresh_interval_ms(ro, c->refresh_ms);
        if (c->has_first_poll)
            tw_remote_sampler_options_set_first_poll_timeout_ms(ro, c->first_poll_ms);
        s = tw_sampler_remote_new(ro, err);
        tw_remote_sampler_options_free(ro);
        return s;
    }
    }
    if (!s && local) {
        tw__set_error(err, TW_E_CONFIG, "sampler parameter %g: %s", c->sampler_param,
                      tw_error_message(local));
    } else if (!s) {
        tw__set_error(err, TW_E_NOMEM, "sampler: out of memory");
    }
    tw_error_free(local);
    return s;
}

/* The parameter must make a sampler (checked while reading, without the
 * remote one's poll). */
static void check_sampler_param(tw_config *c)
{
    tw_error *e = NULL;
    tw_sampler *s = NULL;
    const char *var = "JAEGER_SAMPLER_PARAM";
    switch (c->sampler) {
    case SK_CONST:
        return;
    case SK_PROBABILISTIC:
    case SK_REMOTE:
        s = tw_sampler_probabilistic_new(c->sampler_param, &e);
        break;
    case SK_RATELIMITING:
        s = tw_sampler_rate_limiting_new(c->sampler_param, &e);
        break;
    case SK_ADAPTIVE:
        s = tw_sampler_adaptive_new(c->sampler_param, 0, &e);
        break;
    }
    if (!s && e)
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG, "%s=\"%s\": %s",
                    env(var) ? var : "sampler parameter", env(var) ? env(var) : "(default)",
                    tw_error_message(e));
    tw_error_free(e);
    tw_sampler_free(s);
}

/* ---- propagation -------------------------------------------------------------------------------
 */

/* OTEL_PROPAGATORS names as JAEGER_PROPAGATION names: tracecontext and
 * baggage are both tracewire's w3c codec (traceparent, tracestate and
 * baggage together); b3 is B3's single header, b3multi its X-B3-* headers. */
static bool otel_propagators(tw_config *c, const char *v, char *out, size_t size, bool *is_none)
{
    char *copy = strdup(v), *save = NULL;
    if (!copy) {
        c->is_oom = true;
        return false;
    }
    out[0] = '\0';
    bool ok = true;
    *is_none = false;
    for (char *item = strtok_r(copy, ",", &save); item && ok; item = strtok_r(NULL, ",", &save)) {
        const char *name = trim(item), *mapped = NULL; /* not empty: env_list() */
        if (strcasecmp(name, "tracecontext") == 0 || strcasecmp(name, "baggage") == 0)
            mapped = "w3c";
        else if (strcasecmp(name, "b3") == 0)
            mapped = "b3-single";
        else if (strcasecmp(name, "b3multi") == 0)
            mapped = "b3";
        else if (strcasecmp(name, "jaeger") == 0)
            mapped = "jaeger";
        else if (strcasecmp(name, "none") == 0)
            *is_none = true;
        else {
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "OTEL_PROPAGATORS=\"%s\": unknown or unsupported propagator \"%s\" "
                        "(tracecontext, baggage, b3, b3multi, jaeger, none)",
                        v, name);
            ok = false;
        }
        /* The specification asks for de-duplication. */
        if (mapped && !strstr(out, mapped)) {
            size_t len = strlen(out);
            snprintf(out + len, size - len, "%s%s", len ? "," : "", mapped);
        } else if (mapped && strcmp(mapped, "b3") == 0) {
            /* "b3" is a prefix of "b3-single": look for the exact entry. */
            bool found = false;
            char list[128];
            snprintf(list, sizeof list, "%s", out);
            char *save2 = NULL;
            for (char *e = strtok_r(list, ",", &save2); e; e = strtok_r(NULL, ",", &save2))
                found = found || strcmp(e, "b3") == 0;
            if (!found) {
                size_t len = strlen(out);
                snprintf(out + len, size - len, "%sb3", len ? "," : "");
            }
        }
    }
    free(copy);
    if (ok && *is_none && out[0]) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "OTEL_PROPAGATORS=\"%s\": \"none\" cannot be combined with propagators", v);
        ok = false;
    }
    return ok;
}

/* Lower-cased, space-free form of a JAEGER_PROPAGATION list, for comparing. */
static void normalize_list(const char *v, char *out, size_t size)
{
    size_t w = 0;
    for (const char *p = v; *p && w + 1 < size; p++) {
        if (!isspace((unsigned char)*p))
            out[w++] = (char)tolower((unsigned char)*p);
    }
    out[w] = '\0';
}

static void read_propagation(tw_config *c)
{
    bool jaeger_bad, otel_bad;
    const char *jaeger = env_list(c, "JAEGER_PROPAGATION", &jaeger_bad);
    const char *otel = env_list(c, "OTEL_PROPAGATORS", &otel_bad);
    if (jaeger_bad)
        return; /* reported */
    char from_otel[128] = "", normalized[256] = "";
    bool is_none = false;
    bool has_otel =
        otel && !otel_bad && otel_propagators(c, otel, from_otel, sizeof from_otel, &is_none);
    if (jaeger)
        normalize_list(jaeger, normalized, sizeof normalized);
    if (jaeger && has_otel && strcmp(normalized, is_none ? "none" : from_otel) != 0)
        add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                    "OTEL_PROPAGATORS (%s) conflicts with JAEGER_PROPAGATION (%s) for "
                    "propagation: JAEGER_PROPAGATION is used (TRACEWIRE_* wins over JAEGER_*, "
                    "which wins over OTEL_*)",
                    is_none ? "none" : from_otel, normalized);
    const char *list = jaeger ? jaeger : has_otel && !is_none ? from_otel : NULL;
    const char *source = jaeger ? "JAEGER_PROPAGATION" : has_otel ? "OTEL_PROPAGATORS" : "default";
    if (!jaeger && has_otel && is_none) {
        c->opts->no_propagation = true;
        add_row(c, "propagation", source, "none (inject writes nothing, extract finds nothing)");
        return;
    }
    if (!list) {
        add_row(c, "propagation", source, "jaeger");
        return;
    }
    tw_error *local = NULL;
    tw_propagator *p = tw_propagator_parse(list, &local);
    if (!p) {
        add_problem(c, TW_LOG_ERROR,
                    tw_error_status(local) == TW_E_NOMEM ? TW_E_NOMEM : TW_E_CONFIG,
                    "%s=\"%s\": %s", source, jaeger ? jaeger : otel, tw_error_message(local));
        tw_error_free(local);
        return;
    }
    tw_tracer_options_set_propagator(c->opts, p);
    add_row(c, "propagation", source, "%s", jaeger ? normalized : from_otel);
}

/* ---- limits ------------------------------------------------------------------------------------
 */

static void read_limits(tw_config *c)
{
    static const char *const tags[] = {"TRACEWIRE_MAX_TAGS", "OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT",
                                       "|OTEL_ATTRIBUTE_COUNT_LIMIT", NULL};
    static const char *const logs[] = {"TRACEWIRE_MAX_LOGS", "OTEL_SPAN_EVENT_COUNT_LIMIT", NULL};
    static const char *const fields[] = {"TRACEWIRE_MAX_LOG_FIELDS",
                                         "OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT", NULL};
    static const char *const bytes[] = {"TRACEWIRE_MAX_VALUE_BYTES",
                                        "OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT",
                                        "|OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", NULL};
    static const struct {
        const char *setting;
        const char *const *vars;
        tw_status (*set)(tw_tracer_options *, size_t);
        unsigned long long dflt;
    } limits[] = {
        {"limits.max_tags", tags, tw_tracer_options_set_max_tags, 256},
        {"limits.max_logs", logs, tw_tracer_options_set_max_logs, 256},
        {"limits.max_log_fields", fields, tw_tracer_options_set_max_log_fields, 64},
        {"limits.max_value_bytes", bytes, tw_tracer_options_set_max_value_bytes, 4096},
    };
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        unsigned long long n = limits[i].dflt;
        const char *var = NULL;
        if (pick_uint(c, limits[i].setting, limits[i].vars, 1, 1ULL << 32, &n, &var))
            limits[i].set(c->opts, (size_t)n);
        add_row(c, limits[i].setting, var ? var : "default", "%llu", n);
    }
    /* Validated, but nothing in tracewire's model takes them. */
    static const char *const no_effect[] = {"OTEL_SPAN_LINK_COUNT_LIMIT",
                                            "OTEL_LINK_ATTRIBUTE_COUNT_LIMIT"};
    for (size_t i = 0; i < 2; i++) {
        const char *v = env(no_effect[i]);
        unsigned long long n;
        tw_error *e = NULL;
        if (v && !parse_uint(no_effect[i], v, 0, 0xffffffffULL, &n, &e))
            take_error(c, e);
        else
            warn_unused(c, no_effect[i],
                        "span references (links) are set at start and are not limited");
    }
}

/* ---- reporters ------------------------------------------------------------------------------- */

/* Options every transport shares: queue, flush interval, close deadline. */
static bool common_options(tw_config *c, tw_reporter_options *ro, bool is_first)
{
    static const char *const queue_vars[] = {"JAEGER_REPORTER_MAX_QUEUE_SIZE",
                                             "OTEL_BSP_MAX_QUEUE_SIZE", NULL};
    static const char *const flush_vars[] = {"JAEGER_REPORTER_FLUSH_INTERVAL",
                                             "OTEL_BSP_SCHEDULE_DELAY", NULL};
    static const char *const close_vars[] = {"TRACEWIRE_REPORTER_CLOSE_TIMEOUT", NULL};
    static const char *const bytes_vars[] = {"TRACEWIRE_REPORTER_MAX_QUEUE_BYTES", NULL};
    unsigned long long n = TW__DEFAULT_QUEUE_SIZE, queue_bytes = TW__DEFAULT_QUEUE_BYTES;
    unsigned int ms = TW__DEFAULT_FLUSH_INTERVAL_MS, close_ms = TW__DEFAULT_CLOSE_TIMEOUT_MS;
    const char *qvar = NULL, *fvar = NULL, *cvar = NULL, *bvar = NULL;
    char value[CANON];
    /* Read (and reported) once, applied to every transport. */
    size_t before = c->n_problems;
    if (pick_uint(c, "reporter.queue_spans", queue_vars, 1, (size_t)1 << 28, &n, &qvar))
        tw_reporter_options_set_max_queue_size(ro, (size_t)n);
    if (pick_uint(c, "reporter.queue_bytes", bytes_vars, TW__MIN_QUEUE_BYTES, TW__MAX_QUEUE_BYTES,
                  &queue_bytes, &bvar))
        tw_reporter_options_set_max_queue_bytes(ro, (size_t)queue_bytes);
    if (pick_ms(c, "reporter.flush_interval_ms", flush_vars, canon_interval, false, &ms, &fvar))
        tw_reporter_options_set_flush_interval_ms(ro, ms);
    if (pick(c, "reporter.close_timeout_ms", close_vars, canon_close_timeout, NULL, &cvar, value,
             sizeof value)) {
        close_ms = (unsigned int)strtoul(value, NULL, 10);
        tw_reporter_options_set_close_timeout_ms(ro, close_ms);
    }
    if (!is_first) {
        /* The same problems again: drop the copies. */
        for (size_t i = before; i < c->n_problems; i++)
            free(c->problems[i].text);
        c->n_problems = before;
    } else {
        add_row(c, "reporter.queue_spans", qvar ? qvar : "default", "%llu", n);
        add_row(c, "reporter.queue_bytes", bvar ? bvar : "default", "%llu", queue_bytes);
        add_row(c, "reporter.flush_interval_ms", fvar ? fvar : "default", "%u", ms);
        add_row(c, "reporter.close_timeout_ms", cvar ? cvar : "default", "%u", close_ms);
    }
    return true;
}

static void udp_options(tw_config *c, tw_reporter_options *ro, const char *name,
                        unsigned int default_port)
{
    bool is_bad;
    const char *host = agent_host(c, &is_bad);
    static const char *const port_vars[] = {"JAEGER_AGENT_PORT", NULL};
    static const char *const packet_vars[] = {"JAEGER_REPORTER_MAX_PACKET_SIZE", NULL};
    static const char *const disabled_vars[] = {"JAEGER_REPORTER_ATTEMPT_RECONNECTING_DISABLED",
                                                NULL};
    static const char *const interval_vars[] = {"JAEGER_REPORTER_ATTEMPT_RECONNECT_INTERVAL", NULL};
    unsigned long long port = default_port, packet = TW__DEFAULT_MAX_PACKET;
    const char *pvar = NULL, *svar = NULL, *dvar = NULL, *ivar = NULL;
    char setting[64], value[CANON];
    snprintf(setting, sizeof setting, "%s.agent", name);
    pick_uint(c, setting, port_vars, 1, 65535, &port, &pvar);
    if (!is_bad &&
        tw_reporter_options_set_agent(ro, host ? host : "localhost", (unsigned int)port) != TW_OK)
        c->is_oom = true;
    char source[96];
    snprintf(source, sizeof source, "%s%s%s", host || is_bad ? "JAEGER_AGENT_HOST" : "",
             (host || is_bad) && pvar ? ", " : "", pvar ? pvar : "");
    char at[300];
    tw__host_port_text(host ? host : "localhost", (unsigned int)port, at, sizeof at);
    if (is_bad)
        add_row(c, setting, source, "(refused: see the errors)");
    else
        add_row(c, setting, *source ? source : "default", "%s", at);
    snprintf(setting, sizeof setting, "%s.max_packet_bytes", name);
    if (pick_uint(c, setting, packet_vars, 512, 65507, &packet, &svar))
        tw_reporter_options_set_max_packet_size(ro, (size_t)packet);
    add_row(c, setting, svar ? svar : "default", "%llu", packet);
    bool is_disabled = false;
    snprintf(setting, sizeof setting, "%s.resolve_interval_ms", name);
    if (pick(c, setting, disabled_vars, canon_bool, NULL, &dvar, value, sizeof value))
        is_disabled = strcmp(value, "true") == 0;
    unsigned int ms = TW__DEFAULT_RESOLVE_INTERVAL_MS;
    bool allow_zero = true;
    if (pick_ms(c, setting, interval_vars, canon_interval, allow_zero, &ms, &ivar))
        tw_reporter_options_set_resolve_interval_ms(ro, ms);
    if (is_disabled) {
        ms = 0;
        tw_reporter_options_set_resolve_interval_ms(ro, 0);
    }
    add_row(c, setting,
            is_disabled ? dvar
            : ivar      ? ivar
                        : "default",
            "%u%s", ms, ms ? "" : " (never re-resolved)");
}

/* TLS files and the export budget of an HTTP transport; @otlp adds the
 * OTEL_EXPORTER_OTLP_* forms (TRACEWIRE_TLS_* wins over them). */
static void http_common(tw_config *c, tw_reporter_options *ro, const char *name, bool otlp)
{
    static const char *const ca_plain[] = {"TRACEWIRE_TLS_CA_FILE", NULL};
    static const char *const ca_otlp[] = {"TRACEWIRE_TLS_CA_FILE",
                                          "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
                                          "|OTEL_EXPORTER_OTLP_CERTIFICATE", NULL};
    static const char *const cert_plain[] = {"TRACEWIRE_TLS_CERT_FILE", NULL};
    static const char *const cert_otlp[] = {"TRACEWIRE_TLS_CERT_FILE",
                                            "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
                                            "|OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", NULL};
    static const char *const key_plain[] = {"TRACEWIRE_TLS_KEY_FILE", NULL};
    static const char *const key_otlp[] = {"TRACEWIRE_TLS_KEY_FILE",
                                           "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
                                           "|OTEL_EXPORTER_OTLP_CLIENT_KEY", NULL};
    static const char *const budget_vars[] = {"OTEL_BSP_EXPORT_TIMEOUT", NULL};
    char setting[64], ca[CANON], cert[CANON], key[CANON];
    const char *cavar = NULL, *certvar = NULL, *keyvar = NULL;
    snprintf(setting, sizeof setting, "%s.ca_file", name);
    if (pick(c, setting, otlp ? ca_otlp : ca_plain, canon_string, NULL, &cavar, ca, sizeof ca)) {
        tw_reporter_options_set_ca_file(ro, ca);
        add_row(c, setting, cavar, "%s", ca);
    }
    snprintf(setting, sizeof setting, "%s.client_certificate", name);
    bool has_cert = pick(c, setting, otlp ? cert_otlp : cert_plain, canon_string, NULL, &certvar,
                         cert, sizeof cert);
    bool has_key =
        pick(c, setting, otlp ? key_otlp : key_plain, canon_string, NULL, &keyvar, key, sizeof key);
    if (has_cert != has_key) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "%s is set without %s: a client certificate and its key are set together",
                    has_cert ? certvar : keyvar,
                    has_cert ? (otlp ? "TRACEWIRE_TLS_KEY_FILE or OTEL_EXPORTER_OTLP_CLIENT_KEY"
                                     : "TRACEWIRE_TLS_KEY_FILE")
                             : (otlp ? "TRACEWIRE_TLS_CERT_FILE or "
                                       "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"
                                     : "TRACEWIRE_TLS_CERT_FILE"));
    } else if (has_cert) {
        tw_reporter_options_set_client_cert(ro, cert, key);
        char source[160];
        snprintf(source, sizeof source, "%s, %s", certvar, keyvar);
        add_row(c, setting, source, "%s (key %s)", cert, key);
    }
    unsigned int budget;
    const char *bvar = NULL;
    snprintf(setting, sizeof setting, "%s.export_timeout_ms", name);
    if (pick_ms(c, setting, budget_vars, canon_timeout, true, &budget, &bvar)) {
        tw_reporter_options_set_retry_backoff_ms(ro, TW__HTTP_DEFAULT_INITIAL_BACKOFF_MS, budget);
        add_row(c, setting, bvar, "%u (retries stop after it)", budget);
    }
}

static void http_timeout(tw_reporter_options *ro, unsigned int ms)
{
    unsigned int connect =
        ms < TW__HTTP_DEFAULT_CONNECT_TIMEOUT_MS ? ms : TW__HTTP_DEFAULT_CONNECT_TIMEOUT_MS;
    tw_reporter_options_set_http_timeouts_ms(ro, connect ? connect : 1, ms ? ms : 1);
}

static void jaeger_http_options(tw_config *c, tw_reporter_options *ro)
{
    const char *url = env("JAEGER_ENDPOINT");
    const char *user = env("JAEGER_USER"), *password = env("JAEGER_PASSWORD");
    const char *token = env("JAEGER_AUTH_TOKEN");
    char shown[600];
    if (url) {
        tw__show_url(url, shown, sizeof shown);
        if (tw_reporter_options_set_endpoint(ro, url) != TW_OK) {
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG, "JAEGER_ENDPOINT: not a URL " NOT_SHOWN);
            snprintf(shown, sizeof shown, "(refused: see the errors)");
        }
    }
    add_row(c, "jaeger-http.endpoint", url ? "JAEGER_ENDPOINT" : "default", "%s",
            url ? shown : "http://localhost:14268/api/traces");
    if ((user != NULL) != (password != NULL)) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "JAEGER_USER and JAEGER_PASSWORD must be set together (%s is not set)",
                    user ? "JAEGER_PASSWORD" : "JAEGER_USER");
        return;
    }
    /* Basic auth wins when both are set (Java's rule). Neither value is
     * ever quoted: a refusal names the variable and the reason. */
    if (user) {
        if (strchr(user, ':'))
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "JAEGER_USER: contains ':', which basic authentication cannot carry");
        else if (tw_reporter_options_set_basic_auth(ro, user, password) != TW_OK)
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "JAEGER_USER / JAEGER_PASSWORD: not accepted (out of memory)");
        else
            add_row(c, "jaeger-http.auth", "JAEGER_USER, JAEGER_PASSWORD",
                    "basic, user \"%s\", password ***", user);
        if (token)
            add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                        "JAEGER_AUTH_TOKEN is set but has no effect: JAEGER_USER and "
                        "JAEGER_PASSWORD win (basic authentication)");
    } else if (token) {
        if (strpbrk(token, "\r\n"))
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "JAEGER_AUTH_TOKEN: contains a line break (CR or LF), which an HTTP "
                        "header cannot carry; the token is not shown");
        else if (tw_reporter_options_set_bearer_token(ro, token) != TW_OK)
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "JAEGER_AUTH_TOKEN: not accepted as a bearer token (the token is not "
                        "shown)");
        else
            add_row(c, "jaeger-http.auth", "JAEGER_AUTH_TOKEN", "bearer ***");
    } else {
        add_row(c, "jaeger-http.auth", "default", "none");
    }
}

static void zipkin_options(tw_config *c, tw_reporter_options *ro)
{
    static const char *const url_vars[] = {"TRACEWIRE_ZIPKIN_ENDPOINT",
                                           "OTEL_EXPORTER_ZIPKIN_ENDPOINT", NULL};
    static const char *const timeout_vars[] = {"OTEL_EXPORTER_ZIPKIN_TIMEOUT", NULL};
    char url[CANON * 2], shown[CANON * 2];
    const char *var = NULL;
    if (pick(c, "zipkin.endpoint", url_vars, canon_string, NULL, &var, url, CANON)) {
        tw__show_url(url, shown, sizeof shown);
        if (tw_reporter_options_set_endpoint(ro, url) != TW_OK) {
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG, "%s: not a URL " NOT_SHOWN, var);
            snprintf(shown, sizeof shown, "(refused: see the errors)");
        }
        add_row(c, "zipkin.endpoint", var, "%s", shown);
    } else {
        add_row(c, "zipkin.endpoint", "default", "http://localhost:9411/api/v2/spans");
    }
    unsigned int ms;
    var = NULL;
    if (pick_ms(c, "zipkin.timeout_ms", timeout_vars, canon_timeout, true, &ms, &var)) {
        http_timeout(ro, ms);
        add_row(c, "zipkin.timeout_ms", var, "%u", ms);
    }
    http_common(c, ro, "zipkin", false);
}

typedef struct header_read {
    tw_reporter_options *ro;
    char names[512];
} header_read;

static bool on_header(void *arg, const char *name, const char *key, const char *value,
                      tw_error **err)
{
    header_read *h = arg;
    tw_status st = tw_reporter_options_add_header(h->ro, key, value);
    if (st != TW_OK) {
        /* The name is shown (it is what is wrong, or what to look for); the
         * value never is. */
        tw__set_error(err, st == TW_E_NOMEM ? TW_E_NOMEM : TW_E_CONFIG,
                      "%s: header \"%.64s\" is not accepted (%s; the value is not shown)", name,
                      key,
                      st == TW_E_LIMIT ? "more than 64 headers"
                      : st == TW_E_NOMEM
                          ? "out of memory"
                          : "a name must be an HTTP token other than Content-Type, "
                            "Content-Length, Host, Transfer-Encoding, Expect or Connection, and "
                            "a value one line");
        return false;
    }
    size_t len = strlen(h->names);
    snprintf(h->names + len, sizeof h->names - len, "%s%s=***", len ? ", " : "", key);
    return true;
}

/* OTEL_EXPORTER_OTLP_PROTOCOL values: what each means here (gRPC is the one
 * transport of the specification that tracewire does not speak). */
static const struct {
    const char *name;
    const char *refusal; /* NULL: supported */
} otlp_protocols[] = {
    {"http/json", NULL},
    {"http/protobuf", NULL},
    {"grpc", "not supported: tracewire sends OTLP over HTTP (use http/protobuf or http/json)"},
};

static void otlp_options(tw_config *c, tw_reporter_options *ro)
{
    char url[CANON * 2], shown[CANON * 2];
    const char *source = "default";
    const char *v = env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
    if (v) {
        /* Used as is (the specification). */
        snprintf(url, sizeof url, "%s", v);
        source = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
    } else if ((v = env("OTEL_EXPORTER_OTLP_ENDPOINT"))) {
        /* A base: /v1/traces is appended, without a double slash. */
        size_t len = strlen(v);
        snprintf(url, sizeof url, "%.*s/v1/traces", (int)(len && v[len - 1] == '/' ? len - 1 : len),
                 v);
        source = "OTEL_EXPORTER_OTLP_ENDPOINT";
    } else {
        snprintf(url, sizeof url, "http://localhost:4318/v1/traces");
    }
    tw__show_url(url, shown, sizeof shown);
    if (strcmp(source, "default") != 0 && tw_reporter_options_set_endpoint(ro, url) != TW_OK) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG, "%s: not a URL " NOT_SHOWN, source);
        snprintf(shown, sizeof shown, "(refused: see the errors)");
    }
    add_row(c, "otlp-http.endpoint", source, "%s", shown);

    static const char *const protocol_vars[] = {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
                                                "|OTEL_EXPORTER_OTLP_PROTOCOL", NULL};
    char protocol[CANON];
    const char *var = NULL;
    if (pick(c, "otlp-http.protocol", protocol_vars, canon_string, NULL, &var, protocol,
             sizeof protocol)) {
        size_t i = 0, n = sizeof otlp_protocols / sizeof otlp_protocols[0];
        while (i < n && strcmp(protocol, otlp_protocols[i].name) != 0)
            i++;
        if (i == n)
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "%s=\"%s\": unknown protocol (http/json, http/protobuf, grpc)", var,
                        protocol);
        else if (otlp_protocols[i].refusal)
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG, "%s=\"%s\": %s", var, protocol,
                        otlp_protocols[i].refusal);
    }
    /* Unset: http/protobuf, the specification's default for SDKs (and the content
     * type an OpenTelemetry Collector's OTLP/HTTP receiver expects first). */
    bool is_protobuf = !var || strcmp(protocol, "http/protobuf") == 0;
    if (is_protobuf && tw_reporter_options_set_otlp_protocol(ro, TW_OTLP_HTTP_PROTOBUF) != TW_OK)
        add_problem(c, TW_LOG_ERROR, TW_E_NOMEM, "reporter options: out of memory");
    add_row(c, "otlp-http.protocol", var ? var : "default", "%s", var ? protocol : "http/protobuf");

    const char *name = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
    const char *headers = env(name);
    if (!headers)
        headers = env(name = "OTEL_EXPORTER_OTLP_HEADERS");
    if (headers) {
        header_read h = {.ro = ro};
        tw_error *e = NULL;
        if (!tw__parse_kv_list(name, headers, true, on_header, &h, &e))
            take_error(c, e);
        else
            add_row(c, "otlp-http.headers", name, "%s", h.names);
    }

    static const char *const timeout_vars[] = {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                                               "|OTEL_EXPORTER_OTLP_TIMEOUT", NULL};
    unsigned int ms;
    var = NULL;
    if (pick_ms(c, "otlp-http.timeout_ms", timeout_vars, canon_timeout, true, &ms, &var)) {
        http_timeout(ro, ms);
        add_row(c, "otlp-http.timeout_ms", var, "%u", ms);
    }

    static const char *const compression_vars[] = {"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
                                                   "|OTEL_EXPORTER_OTLP_COMPRESSION", NULL};
    char compression[CANON];
    var = NULL;
    if (pick(c, "otlp-http.compression", compression_vars, canon_string, NULL, &var, compression,
             sizeof compression)) {
        if (strcmp(compression, "gzip") == 0)
            tw_reporter_options_set_gzip(ro, true);
        else if (strcmp(compression, "none") != 0)
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "%s=\"%s\": unknown compression (gzip or none)", var, compression);
        add_row(c, "otlp-http.compression", var, "%s", compression);
    }
    warn_unused(c, "OTEL_EXPORTER_OTLP_TRACES_INSECURE",
                "it applies to OTLP/gRPC only; OTLP/HTTP follows the endpoint's scheme");
    warn_unused(c, "OTEL_EXPORTER_OTLP_INSECURE",
                "it applies to OTLP/gRPC only; OTLP/HTTP follows the endpoint's scheme");
    http_common(c, ro, "otlp-http", true);
}

static void file_options(tw_config *c, tw_reporter_options *ro)
{
    const char *v = env("TRACEWIRE_LOG_FILE");
    if (!v) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "the dapper-file transport is named but TRACEWIRE_LOG_FILE is not set");
        return;
    }
    if (tw_reporter_options_set_file_path(ro, v) != TW_OK)
        c->is_oom = true;
    add_row(c, "dapper-file.path", "TRACEWIRE_LOG_FILE", "%s", v);
    static const char *const bytes_vars[] = {"TRACEWIRE_LOG_FILE_MAX_BYTES", NULL};
    static const char *const files_vars[] = {"TRACEWIRE_LOG_FILE_MAX_FILES", NULL};
    unsigned long long n = 64ULL << 20;
    const char *var = NULL;
    if (pick_uint(c, "dapper-file.max_bytes", bytes_vars, 1024, (unsigned long long)SIZE_MAX, &n,
                  &var))
        tw_reporter_options_set_max_file_bytes(ro, (size_t)n);
    add_row(c, "dapper-file.max_bytes", var ? var : "default", "%llu", n);
    n = 5;
    var = NULL;
    if (pick_uint(c, "dapper-file.max_files", files_vars, 0, 1000, &n, &var))
        tw_reporter_options_set_max_files(ro, (size_t)n);
    add_row(c, "dapper-file.max_files", var ? var : "default", "%llu", n);
}

/* The variables that configure a transport's endpoint and TLS files, for
 * naming them when its constructor refuses them. */
static const char *transport_vars(const char *name)
{
    if (strcmp(name, "jaeger-http") == 0)
        return env("JAEGER_ENDPOINT") ? "JAEGER_ENDPOINT (or TRACEWIRE_TLS_*)" : "TRACEWIRE_TLS_*";
    if (strcmp(name, "zipkin") == 0)
        return "TRACEWIRE_ZIPKIN_ENDPOINT / OTEL_EXPORTER_ZIPKIN_ENDPOINT (or TRACEWIRE_TLS_*)";
    if (strcmp(name, "otlp-http") == 0)
        return env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                   ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (or the TLS variables)"
               : env("OTEL_EXPORTER_OTLP_ENDPOINT")
                   ? "OTEL_EXPORTER_OTLP_ENDPOINT (or the TLS variables)"
                   : "the TLS variables (TRACEWIRE_TLS_*, OTEL_EXPORTER_OTLP_*CERTIFICATE, "
                     "OTEL_EXPORTER_OTLP_*CLIENT_KEY)";
    if (strcmp(name, "dapper-file") == 0)
        return "TRACEWIRE_LOG_FILE";
    return "JAEGER_AGENT_HOST / JAEGER_AGENT_PORT";
}

/* One transport: its options from the environment, then its constructor
 * (which checks what it checks: URL, TLS files; no connection, no thread). */
static void make_transport(tw_config *c, transport *t, bool is_first)
{
    const char *name = t->name;
    tw_reporter_options *ro = t->opts = tw_reporter_options_new();
    if (!ro) {
        c->is_oom = true;
        return;
    }
    size_t errors_before = c->first_error ? 1 : 0;
    common_options(c, ro, is_first);
    tw_reporter *(*make)(const tw_reporter_options *, tw_error **) = NULL;
    if (strcmp(name, "jaeger-udp") == 0) {
        udp_options(c, ro, name, 6831);
        make = tw_reporter_jaeger_udp_new;
    } else if (strcmp(name, "jaeger-udp-binary") == 0) {
        udp_options(c, ro, name, 6832);
        make = tw_reporter_jaeger_udp_binary_new;
    } else if (strcmp(name, "jaeger-http") == 0) {
        jaeger_http_options(c, ro);
        http_common(c, ro, name, false);
        make = tw_reporter_jaeger_http_new;
    } else if (strcmp(name, "zipkin") == 0) {
        zipkin_options(c, ro);
        make = tw_reporter_zipkin_new;
    } else if (strcmp(name, "otlp-http") == 0) {
        otlp_options(c, ro);
        make = tw_reporter_otlp_http_new;
    } else if (strcmp(name, "dapper-file") == 0) {
        file_options(c, ro);
        make = tw_reporter_file_new;
    }
    /* Constructors refuse what a problem above already named; only a
     * configuration read cleanly so far is handed to them. What they refuse
     * (the URL, a TLS file) was set by the variables named here. */
    if (make && !c->is_oom && (c->first_error ? 1 : 0) == errors_before) {
        tw_error *e = NULL;
        t->reporter = make(ro, &e);
        if (e) {
            add_problem(c, TW_LOG_ERROR, tw_error_status(e), "%s: %s", transport_vars(name),
                        tw_error_message(e));
            tw_error_free(e);
        }
    }
}

/* Canonical transport names; the older spellings of TRACEWIRE_REPORTER
 * ("otlp", "file") are accepted as aliases. */
static const char *canonical_transport(const char *name)
{
    static const char *const names[] = {"jaeger-udp", "jaeger-udp-binary", "jaeger-http",
                                        "zipkin",     "otlp-http",         "dapper-file"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i]) == 0)
            return names[i];
    }
    if (strcmp(name, "otlp") == 0)
        return "otlp-http";
    if (strcmp(name, "file") == 0)
        return "dapper-file";
    return NULL;
}

/* Parses a transport list into @names (canonical); false with a problem. */
static bool parse_transports(tw_config *c, const char *var, const char *v, const char **names,
                             size_t *n, bool *log_spans, bool *is_none)
{
    bool is_otel = strcmp(var, "OTEL_TRACES_EXPORTER") == 0;
    char *copy = strdup(v), *save = NULL;
    if (!copy) {
        c->is_oom = true;
        return false;
    }
    bool ok = true;
    *n = 0;
    for (char *item = strtok_r(copy, ",", &save); ok && item; item = strtok_r(NULL, ",", &save)) {
        char *name = trim(item);
        for (char *p = name; *p; p++)
            *p = (char)tolower((unsigned char)*p); /* not empty: env_list() */
        const char *canon = NULL;
        if (is_otel) {
            if (strcmp(name, "otlp") == 0)
                canon = "otlp-http";
            else if (strcmp(name, "zipkin") == 0)
                canon = "zipkin";
            else if (strcmp(name, "console") == 0) {
                *log_spans = true;
                continue;
            } else if (strcmp(name, "none") == 0) {
                *is_none = true;
                continue;
            } else {
                add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                            "OTEL_TRACES_EXPORTER=\"%s\": unknown or unsupported exporter \"%s\" "
                            "(otlp, zipkin, console, none)",
                            v, name);
                ok = false;
                break;
            }
        } else if (!(canon = canonical_transport(name))) {
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                        "%s: unknown transport \"%s\" (jaeger-udp, jaeger-udp-binary, "
                        "jaeger-http, zipkin, otlp-http, dapper-file)",
                        var, name);
            ok = false;
            break;
        }
        for (size_t i = 0; i < *n; i++) {
            if (strcmp(names[i], canon) == 0) {
                add_problem(c, TW_LOG_ERROR, TW_E_CONFIG, "%s=\"%s\": \"%s\" twice", var, v, name);
                ok = false;
            }
        }
        if (ok && *n == MAX_TRANSPORTS) {
            add_problem(c, TW_LOG_ERROR, TW_E_CONFIG, "%s=\"%s\": too many transports", var, v);
            ok = false;
        }
        if (ok)
            names[(*n)++] = canon;
    }
    free(copy);
    if (ok && *is_none && (*n || *log_spans)) {
        add_problem(c, TW_LOG_ERROR, TW_E_CONFIG,
                    "OTEL_TRACES_EXPORTER=\"%s\": \"none\" cannot be combined with exporters", v);
        ok = false;
    }
    return ok;
}

static void join_names(const char *const *names, size_t n, bool log_spans, char *out, size_t size)
{
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%s%s", i ? "," : "", names[i]);
    }
    if (log_spans) {
        size_t len = strlen(out);
        snprintf(out + len, size - len, "%slogging (stdout)", n ? "," : "");
    }
    if (!out[0])
        snprintf(out, size, "none");
}

static bool has_transport(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(names[i], name) == 0)
            return true;
    }
    return false;
}

/* Variables that only a transport not chosen reads. */
static void warn_unused_transport_vars(tw_config *c, const char *const *names, size_t n)
{
    bool udp =
        has_transport(names, n, "jaeger-udp") || has_transport(names, n, "jaeger-udp-binary");
    bool jhttp = has_transport(names, n, "jaeger-http");
    bool zipkin = has_transport(names, n, "zipkin");
    bool otlp = has_transport(names, n, "otlp-http");
    bool file = has_transport(names, n, "dapper-file");
    if (!udp) {
        static const char *const vars[] = {"JAEGER_AGENT_PORT", "JAEGER_REPORTER_MAX_PACKET_SIZE",
                                           "JAEGER_REPORTER_ATTEMPT_RECONNECTING_DISABLED",
                                           "JAEGER_REPORTER_ATTEMPT_RECONNECT_INTERVAL"};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            warn_unused(c, vars[i], "no jaeger-udp transport is configured");
        if (!c->is_sampling_from_agent_host)
            warn_unused(c, "JAEGER_AGENT_HOST",
                        "no jaeger-udp transport is configured and the sampling endpoint does "
                        "not come from it");
    }
    if (!jhttp) {
        static const char *const vars[] = {"JAEGER_ENDPOINT", "JAEGER_USER", "JAEGER_PASSWORD",
                                           "JAEGER_AUTH_TOKEN"};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            warn_unused(c, vars[i], "no jaeger-http transport is configured");
    }
    if (!zipkin) {
        static const char *const vars[] = {"TRACEWIRE_ZIPKIN_ENDPOINT",
                                           "OTEL_EXPORTER_ZIPKIN_ENDPOINT",
                                           "OTEL_EXPORTER_ZIPKIN_TIMEOUT"};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            warn_unused(c, vars[i], "no zipkin transport is configured");
    }
    if (!otlp) {
        static const char *const vars[] = {"OTEL_EXPORTER_OTLP_ENDPOINT",
                                           "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                                           "OTEL_EXPORTER_OTLP_HEADERS",
                                           "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                                           "OTEL_EXPORTER_OTLP_TIMEOUT",
                                           "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                                           "OTEL_EXPORTER_OTLP_COMPRESSION",
                                           "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
                                           "OTEL_EXPORTER_OTLP_CERTIFICATE",
                                           "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
                                           "OTEL_EXPORTER_OTLP_CLIENT_KEY",
                                           "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
                                           "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
                                           "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE",
                                           "OTEL_EXPORTER_OTLP_PROTOCOL",
                                           "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            warn_unused(c, vars[i], "no otlp-http transport is configured");
    }
    if (!file) {
        static const char *const vars[] = {"TRACEWIRE_LOG_FILE", "TRACEWIRE_LOG_FILE_MAX_BYTES",
                                           "TRACEWIRE_LOG_FILE_MAX_FILES"};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            warn_unused(c, vars[i], "no dapper-file transport is configured");
    }
    if (!jhttp && !zipkin && !otlp) {
        static const char *const vars[] = {"TRACEWIRE_TLS_CA_FILE", "TRACEWIRE_TLS_CERT_FILE",
                                           "TRACEWIRE_TLS_KEY_FILE", "OTEL_BSP_EXPORT_TIMEOUT"};
        for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
            warn_unused(c, vars[i], "no HTTP transport is configured");
    }
}

/*
 * The transports: TRACEWIRE_REPORTER, else JAEGER_ENDPOINT (the Jaeger
 * collector), else OTEL_TRACES_EXPORTER, else the Jaeger agent over UDP.
 * JAEGER_REPORTER_LOG_SPANS and OTEL_TRACES_EXPORTER's "console" add a
 * logging reporter to stdout.
 */
static void read_reporter(tw_config *c)
{
    const char *names[MAX_TRANSPORTS];
    size_t n = 0;
    bool log_spans = false, is_none = false;
    bool list_bad, otel_bad;
    const char *list = env_list(c, "TRACEWIRE_REPORTER", &list_bad);
    const char *otel = env_list(c, "OTEL_TRACES_EXPORTER", &otel_bad);
    const char *jaeger_url = env("JAEGER_ENDPOINT");
    const char *source;
    /* The OTEL choice, read (and checked) whether it wins or not. */
    const char *otel_names[MAX_TRANSPORTS];
    size_t n_otel = 0;
    bool otel_log = false, otel_none = false;
    bool has_otel = otel && !otel_bad &&
                    parse_transports(c, "OTEL_TRACES_EXPORTER", otel, otel_names, &n_otel,
                                     &otel_log, &otel_none);
    if (list_bad) {
        return; /* reported */
    } else if (list) {
        source = "TRACEWIRE_REPORTER";
        if (!parse_transports(c, source, list, names, &n, &log_spans, &is_none))
            return;
    } else if (jaeger_url) {
        source = "JAEGER_ENDPOINT";
        names[n++] = "jaeger-http";
    } else if (has_otel) {
        source = "OTEL_TRACES_EXPORTER";
        memcpy(names, otel_names, n_otel * sizeof *names);
        n = n_otel;
        log_spans = otel_log;
        is_none = otel_none;
    } else if (otel) {
        return; /* invalid: reported */
    } else {
        source = "default";
        names[n++] = "jaeger-udp";
    }
    if (has_otel && strcmp(source, "OTEL_TRACES_EXPORTER") != 0) {
        char mine[256], theirs[256];
        join_names(names, n, false, mine, sizeof mine);
        join_names(otel_names, n_otel, false, theirs, sizeof theirs);
        if (strcmp(mine, theirs) != 0 || otel_none)
            add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                        "OTEL_TRACES_EXPORTER (%s) conflicts with %s (%s) for reporter: %s is "
                        "used (TRACEWIRE_* wins over JAEGER_*, which wins over OTEL_*)",
                        otel_none ? "none" : theirs, source, mine, source);
    }

    static const char *const log_vars[] = {"JAEGER_REPORTER_LOG_SPANS", NULL};
    char value[CANON];
    const char *lvar = NULL;
    if (pick(c, "reporter.log_spans", log_vars, canon_bool, NULL, &lvar, value, sizeof value))
        log_spans = log_spans || strcmp(value, "true") == 0;
    c->log_spans = log_spans;

    char joined[256];
    join_names(names, n, log_spans, joined, sizeof joined);
    add_row(c, "reporter", source, "%s", joined);
    for (size_t i = 0; i < n && !c->is_oom; i++) {
        c->transports[c->n_transports].name = names[i];
        make_transport(c, &c->transports[c->n_transports], i == 0);
        c->n_transports++;
    }
    warn_unused_transport_vars(c, names, n);
}

/* ---- logging ------------------------------------------------------------------------------------
 */

static void read_log_level(tw_config *c)
{
    static const char *const vars[] = {"TRACEWIRE_LOG_LEVEL", "OTEL_LOG_LEVEL", NULL};
    char value[CANON];
    const char *var = NULL;
    if (!pick(c, "log.level", vars, canon_log_level, NULL, &var, value, sizeof value))
        snprintf(value, sizeof value, "warn");
    add_row(c, "log.level", var ? var : "default", "%s (the default logger writes to stderr)",
            value);
}

/* ---- reading ------------------------------------------------------------------------------------
 */

static void read_all(tw_config *c, const char *default_service)
{
    read_identity(c, default_service);
    if (c->is_disabled) {
        add_row(c, "sampler", "JAEGER_DISABLED or OTEL_SDK_DISABLED", "const 0 (disabled)");
        add_row(c, "reporter", "JAEGER_DISABLED or OTEL_SDK_DISABLED", "null (disabled)");
    } else {
        read_sampler(c);
        check_sampler_param(c);
    }
    read_propagation(c);
    if (!c->is_disabled) {
        read_reporter(c);
        static const char *const batch_vars[] = {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", NULL};
        unsigned long long n;
        const char *var;
        if (pick_uint(c, "reporter.batch_spans", batch_vars, 1, 0xffffffffULL, &n, &var))
            add_problem(c, TW_LOG_WARN, TW_E_CONFIG,
                        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE is set but has no effect: tracewire cuts "
                        "batches by their encoded size (max packet or body size)");
        static const char *const ignored[] = {
            "JAEGER_SAMPLING_ENDPOINT", "JAEGER_SAMPLER_MANAGER_HOST_PORT",
            "JAEGER_SAMPLER_REFRESH_INTERVAL", "JAEGER_SAMPLER_MAX_OPERATIONS",
            "TRACEWIRE_SAMPLER_FIRST_POLL_TIMEOUT"};
        if (c->sampler != SK_REMOTE)
            for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
                warn_unused(c, ignored[i], "the sampler is not remote");
    }
    read_limits(c);
    read_log_level(c);
}

tw_config *tw_config_from_env(const char *default_service)
{
    tw_config *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (!(c->opts = tw_tracer_options_new())) {
        free(c);
        return NULL;
    }
    read_all(c, default_service);
    if (c->is_oom) {
        tw_config_free(c);
        return NULL;
    }
    return c;
}

void tw_config_free(tw_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n_rows; i++) {
        free(c->rows[i].name);
        free(c->rows[i].value);
        free(c->rows[i].source);
    }
    free(c->rows);
    for (size_t i = 0; i < c->n_problems; i++)
        free(c->problems[i].text);
    free(c->problems);
    tw_error_free(c->first_error);
    for (size_t i = 0; i < c->n_transports; i++) {
        tw_reporter_free(c->transports[i].reporter);
        tw_reporter_options_free(c->transports[i].opts);
    }
    tw_tracer_options_free(c->opts);
    free(c->service);
    free(c->sampling_endpoint);
    free(c);
}

size_t tw_config_setting_count(const tw_config *c)
{
    return c ? c->n_rows : 0;
}

bool tw_config_setting(const tw_config *c, size_t index, const char **name, const char **value,
                       const char **source)
{
    if (!c || index >= c->n_rows)
        return false;
    if (name)
        *name = c->rows[index].name;
    if (value)
        *value = c->rows[index].value;
    if (source)
        *source = c->rows[index].source;
    return true;
}

size_t tw_config_problem_count(const tw_config *c)
{
    return c ? c->n_problems : 0;
}

const char *tw_config_problem(const tw_config *c, size_t index, tw_log_level *level)
{
    if (!c || index >= c->n_problems)
        return NULL;
    if (level)
        *level = c->problems[index].level;
    return c->problems[index].text;
}

/* ---- what the probe needs (config_probe.c) ------------------------------------------------------
 */

const char *tw__config_service(const tw_config *c)
{
    return c->service;
}

const char *tw__config_sampling_endpoint(const tw_config *c)
{
    return !c->is_disabled && c->sampler == SK_REMOTE ? c->sampling_endpoint : NULL;
}

size_t tw__config_transport_count(const tw_config *c)
{
    return c->n_transports;
}

const tw_reporter_options *tw__config_transport(const tw_config *c, size_t i, const char **name)
{
    if (i >= c->n_transports)
        return NULL;
    *name = c->transports[i].name;
    return c->transports[i].opts;
}

bool tw__config_has_errors(const tw_config *c)
{
    return has_errors(c);
}

/* ---- the tracer
 * ---------------------------------------------------------------------------------- */

tw_tracer *tw_tracer_new_from_env(const char *default_service, tw_error **err)
{
    tw_config *c = calloc(1, sizeof *c);
    if (!c || !(c->opts = tw_tracer_options_new())) {
        free(c);
        tw__set_error(err, TW_E_NOMEM, "tracer options: out of memory");
        return NULL;
    }
    read_all(c, default_service);
    /* Every problem reaches the logger as a warning (a conflict is never
     * silent), but the first error, which the caller receives. */
    bool is_first_error = true;
    for (size_t i = 0; i < c->n_problems; i++) {
        if (c->problems[i].level == TW_LOG_ERROR && is_first_error) {
            is_first_error = false;
            continue;
        }
        tw__log_raw(TW_LOG_WARN, c->problems[i].text);
    }
    tw_tracer *t = NULL;
    if (c->is_oom) {
        tw__set_error(err, TW_E_NOMEM, "configuration: out of memory");
        goto done;
    }
    if (c->first_error) {
        tw__set_error(err, tw_error_status(c->first_error), "%s", tw_error_message(c->first_error));
        goto done;
    }
    if (c->is_disabled) {
        /* Jaeger's no-op tracer: nothing is sampled and nothing is sent (a
         * span forced by sampling.priority ends in the null reporter). The
         * context still propagates, so traces pass through this service. */
        tw_sampler *never = tw_sampler_const_new(false);
        tw_reporter *nowhere = tw_reporter_null_new();
        if (!never || !nowhere) {
            tw_sampler_free(never);
            tw_reporter_free(nowhere);
            tw__set_error(err, TW_E_NOMEM, "disabled tracer: out of memory");
            goto done;
        }
        tw_tracer_options_set_sampler(c->opts, never);
        tw_tracer_options_set_reporter(c->opts, nowhere);
    } else {
        tw_sampler *sampler = build_sampler(c, err);
        if (!sampler)
            goto done;
        tw_tracer_options_set_sampler(c->opts, sampler);
        tw_reporter *parts[MAX_TRANSPORTS + 1];
        size_t n = 0;
        for (size_t i = 0; i < c->n_transports; i++) {
            parts[n++] = c->transports[i].reporter;
            c->transports[i].reporter = NULL; /* moves to the tracer */
        }
        if (c->log_spans) {
            /* Jaeger adds a logging reporter next to the remote one. */
            if (!(parts[n] = tw_reporter_logging_new(tw_log_to_stdout, NULL))) {
                for (size_t i = 0; i < n; i++)
                    tw_reporter_free(parts[i]);
                tw__set_error(err, TW_E_NOMEM, "logging reporter: out of memory");
                goto done;
            }
            n++;
        }
        tw_reporter *reporter = n == 0   ? tw_reporter_null_new()
                                : n == 1 ? parts[0]
                                         : tw_reporter_composite_new(parts, n);
        if (!reporter) {
            tw__set_error(err, TW_E_NOMEM, "reporter: out of memory");
            goto done;
        }
        tw_tracer_options_set_reporter(c->opts, reporter);
    }
    t = tw_tracer_new(c->opts, err);
done:
    tw_config_free(c);
    return t;
}
