/* SPDX-License-Identifier: Apache-2.0 */
/*
 * report/http_reporter.c: the public side of the HTTP reporters (Jaeger
 * collector, Zipkin, OTLP/HTTP JSON or protobuf): their tw_reporter_options setters and
 * constructors. Each constructor pairs a body format (http_formats.c) with
 * the HTTP sender (http_sender.c) behind the bounded async reporter
 * (async.c), so report() only enqueues.
 *
 * The HTTP options live in their own struct (report/http.h), made by the
 * first HTTP setter: the UDP and file reporters never pay for them.
 *
 * Locking: options are used by one thread at a time (as every options
 * object); the constructors may run on any thread.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report/http.h"

void tw__http_options_init(tw__http_options *h)
{
    memset(h, 0, sizeof(*h));
    h->connect_timeout_ms = TW__HTTP_DEFAULT_CONNECT_TIMEOUT_MS;
    h->timeout_ms = TW__HTTP_DEFAULT_TIMEOUT_MS;
    h->max_body_bytes = TW__HTTP_DEFAULT_MAX_BODY_BYTES;
    h->max_retries = TW__HTTP_DEFAULT_MAX_RETRIES;
    h->initial_backoff_ms = TW__HTTP_DEFAULT_INITIAL_BACKOFF_MS;
    h->max_retry_time_ms = TW__HTTP_DEFAULT_MAX_RETRY_TIME_MS;
    h->max_split_requests = TW__HTTP_DEFAULT_MAX_SPLIT_REQUESTS;
}

void tw__http_options_free(tw__http_options *h)
{
    if (!h)
        return;
    free(h->endpoint);
    free(h->user);
    free(h->password);
    free(h->bearer_token);
    free(h->ca_file);
    free(h->cert_file);
    free(h->key_file);
    for (size_t i = 0; i < h->n_headers; i++)
        free(h->headers[i]);
    free(h->headers);
    free(h);
}

/* The HTTP part of @opts, made with defaults on first use; NULL on OOM. */
static tw__http_options *http_part(tw_reporter_options *opts)
{
    if (!opts->http) {
        opts->http = malloc(sizeof(*opts->http));
        if (opts->http)
            tw__http_options_init(opts->http);
    }
    return opts->http;
}

/* Replaces *slot with a copy of @value (NULL clears). False on OOM, *slot
 * unchanged. */
static bool replace(char **slot, const char *value)
{
    char *copy = NULL;
    if (value) {
        copy = strdup(value);
        if (!copy)
            return false;
    }
    free(*slot);
    *slot = copy;
    return true;
}

tw_status tw_reporter_options_set_endpoint(tw_reporter_options *opts, const char *url)
{
    TW_CHECK_ARG(opts && (!url || *url), TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h || !replace(&h->endpoint, url))
        return TW_E_NOMEM;
    return TW_OK;
}

tw_status tw_reporter_options_set_basic_auth(tw_reporter_options *opts, const char *user,
                                             const char *password)
{
    /* RFC 7617: the user id cannot contain ':'. */
    TW_CHECK_ARG(opts && (user || !password) && (!user || !strchr(user, ':')), TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h)
        return TW_E_NOMEM;
    char *u = user ? strdup(user) : NULL;
    char *p = password ? strdup(password) : NULL;
    if ((user && !u) || (password && !p)) {
        free(u);
        free(p);
        return TW_E_NOMEM;
    }
    free(h->user);
    free(h->password);
    h->user = u;
    h->password = p;
    if (user) {
        free(h->bearer_token);
        h->bearer_token = NULL;
    }
    return TW_OK;
}

/* A header value goes on one line: no CR, LF or NUL. */
static bool is_header_value(const char *value)
{
    return strpbrk(value, "\r\n") == NULL;
}

tw_status tw_reporter_options_set_bearer_token(tw_reporter_options *opts, const char *token)
{
    TW_CHECK_ARG(opts, TW_E_INVALID_ARG);
    if (token && (!*token || !is_header_value(token)))
        return TW_E_INVALID_ARG; /* refused input: the caller says so, without the token */
    tw__http_options *h = http_part(opts);
    if (!h || !replace(&h->bearer_token, token))
        return TW_E_NOMEM;
    if (token) {
        free(h->user);
        free(h->password);
        h->user = NULL;
        h->password = NULL;
    }
    return TW_OK;
}

tw_status tw_reporter_options_set_ca_file(tw_reporter_options *opts, const char *path)
{
    TW_CHECK_ARG(opts && (!path || *path), TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h || !replace(&h->ca_file, path))
        return TW_E_NOMEM;
    return TW_OK;
}

tw_status tw_reporter_options_set_client_cert(tw_reporter_options *opts, const char *cert_path,
                                              const char *key_path)
{
    TW_CHECK_ARG(opts && (!cert_path || *cert_path) && (!key_path || (*key_path && cert_path)),
                 TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h)
        return TW_E_NOMEM;
    char *cert = cert_path ? strdup(cert_path) : NULL;
    char *key = key_path ? strdup(key_path) : NULL;
    if ((cert_path && !cert) || (key_path && !key)) {
        free(cert);
        free(key);
        return TW_E_NOMEM;
    }
    free(h->cert_file);
    free(h->key_file);
    h->cert_file = cert;
    h->key_file = key;
    return TW_OK;
}

/* RFC 9110 token characters. */
static bool is_token(const char *name)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    if (!*name)
        return false;
    for (const char *p = name; *p; p++) {
        bool ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || strchr(extra, *p);
        if (!ok)
            return false;
    }
    return true;
}

/* Headers the transport owns: a second copy would break the request. */
static bool is_reserved(const char *name)
{
    static const char *const reserved[] = {"Content-Type",      "Content-Length", "Host",
                                           "Transfer-Encoding", "Expect",         "Connection"};
    for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
        if (strcasecmp(name, reserved[i]) == 0)
            return true;
    }
    return false;
}

tw_status tw_reporter_options_add_header(tw_reporter_options *opts, const char *name,
                                         const char *value)
{
    TW_CHECK_ARG(opts && name && value, TW_E_INVALID_ARG);
    /* Refused input, not a programmer error: no log line (the caller names
     * the variable; a value may be a secret). */
    if (!is_token(name) || is_reserved(name) || !is_header_value(value))
        return TW_E_INVALID_ARG;
    tw__http_options *h = http_part(opts);
    if (!h)
        return TW_E_NOMEM;
    if (h->n_headers == TW__HTTP_MAX_HEADERS)
        return TW_E_LIMIT;
    /* curl drops "Name:" (an empty value means "remove"); "Name;" sends it empty. */
    size_t len = strlen(name) + strlen(value) + 3;
    char *line = malloc(len);
    char **grown = realloc(h->headers, (h->n_headers + 1) * sizeof(*grown));
    if (grown)
        h->headers = grown;
    if (!line || !grown) {
        free(line);
        return TW_E_NOMEM;
    }
    if (*value)
        snprintf(line, len, "%s: %s", name, value);
    else
        snprintf(line, len, "%s;", name);
    h->headers[h->n_headers++] = line;
    return TW_OK;
}

tw_status tw_reporter_options_set_http_timeouts_ms(tw_reporter_options *opts,
                                                   unsigned int connect_timeout_ms,
                                                   unsigned int timeout_ms)
{
    TW_CHECK_ARG(opts && connect_timeout_ms >= 1 && timeout_ms >= 1, TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h)
        return TW_E_NOMEM;
    h->connect_timeout_ms = connect_timeout_ms;
    h->timeout_ms = timeout_ms;
    return TW_OK;
}

tw_status tw_reporter_options_set_max_body_size(tw_reporter_options *opts, size_t bytes)
{
    TW_CHECK_ARG(opts && bytes >= TW__HTTP_MIN_BODY_BYTES && bytes <= TW__HTTP_MAX_BODY_BYTES,
                 TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h)
        return TW_E_NOMEM;
    h->max_body_bytes = bytes;
    return TW_OK;
}

tw_status tw_reporter_options_set_max_retries(tw_reporter_options *opts, unsigned int max_retries)
{
    TW_CHECK_ARG(opts && max_retries <= 100, TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h)
        return TW_E_NOMEM;
    h->max_retries = max_retries;
    return TW_OK;
}

tw_status tw_reporter_options_set_retry_backoff_ms(tw_reporter_options *opts,
                                                   unsigned int initial_ms,
                                                   unsigned int max_retry_time_ms)
{
    TW_CHECK_ARG(opts && initial_ms >= 1 && max_retry_time_ms >= 1, TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h)
        return TW_E_NOMEM;
    h->initial_backoff_ms = initial_ms;
    h->max_retry_time_ms = max_retry_time_ms;
    return TW_OK;
}

tw_status tw_reporter_options_set_gzip(tw_reporter_options *opts, bool is_gzip)
{
    TW_CHECK_ARG(opts, TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h)
        return TW_E_NOMEM;
    h->is_gzip = is_gzip;
    return TW_OK;
}

tw_status tw_reporter_options_set_otlp_protocol(tw_reporter_options *opts,
                                                tw_otlp_protocol protocol)
{
    TW_CHECK_ARG(opts && (protocol == TW_OTLP_HTTP_JSON || protocol == TW_OTLP_HTTP_PROTOBUF),
                 TW_E_INVALID_ARG);
    tw__http_options *h = http_part(opts);
    if (!h)
        return TW_E_NOMEM;
    h->otlp_protocol = (int)protocol;
    return TW_OK;
}

/* ---- reporters ---------------------------------------------------------------------------- */

static tw_reporter *http_reporter_new(const tw__http_format_vtable *format,
                                      const tw_reporter_options *opts, tw_error **err)
{
    tw_reporter_options *defaults = NULL;
    if (!opts) {
        defaults = tw_reporter_options_new();
        if (!defaults) {
            tw__set_error(err, TW_E_NOMEM, "%s reporter: out of memory", format->name);
            return NULL;
        }
        opts = defaults;
    }
    tw_reporter *r = NULL;
    tw__sender *sender = tw__http_sender_new(format, opts, err);
    if (sender) {
        tw__async_options ao = tw__async_options_from(opts);
        r = tw__async_reporter_new(format->name, sender, &ao, err);
    }
    tw_reporter_options_free(defaults);
    return r;
}

tw_reporter *tw_reporter_jaeger_http_new(const tw_reporter_options *opts, tw_error **err)
{
    return http_reporter_new(&tw__http_jaeger_format, opts, err);
}

tw_reporter *tw_reporter_zipkin_new(const tw_reporter_options *opts, tw_error **err)
{
    return http_reporter_new(&tw__http_zipkin_format, opts, err);
}

tw_reporter *tw_reporter_otlp_http_new(const tw_reporter_options *opts, tw_error **err)
{
    bool is_protobuf = opts && opts->http && opts->http->otlp_protocol == TW_OTLP_HTTP_PROTOBUF;
    return http_reporter_new(is_protobuf ? &tw__http_otlp_proto_format : &tw__http_otlp_format,
                             opts, err);
}
