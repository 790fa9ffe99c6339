/* SPDX-License-Identifier: Apache-2.0 */
/*
 * contrib/curl.c: CLIENT spans around libcurl easy transfers (tracewire/curl.h).
 *
 * Where it sits: on the application thread, around the transfer: begin starts
 * a span (core), injects its context through the tracer's propagator
 * (propagation/) into a per-transfer header list, end reads CURLINFO_*, tags
 * and finishes the span, which then flows to the reporter as any other.
 *
 * State: one curl_state per instrumented handle, in a process-wide side table
 * (GHashTable keyed by the CURL pointer) guarded by table_lock. The lock
 * guards only the table (lookup, insert, remove), never a transfer: a
 * curl_state itself is touched by the one thread that uses its handle at a
 * time (libcurl's own rule), so its fields need no lock. CURLOPT_PRIVATE is
 * left to the application; the rejected alternative of wrapping it would
 * change what CURLINFO_PRIVATE returns to the application.
 *
 * Spec: OpenTracing semantic conventions (span.kind, http.*, peer.*, error).
 */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <glib.h>

#include "fork.h"
#include "internal.h"
#include "tracewire/curl.h"

typedef struct curl_state {
    tw_tracer *tracer;                  /* borrowed: outlives the instrumentation */
    tw_span_context *parent;            /* owned reference, NULL: the active span */
    struct curl_slist *user_headers;    /* borrowed: the application's list */
    tw_span *span;                      /* the transfer in progress, or NULL */
    struct curl_slist *request_headers; /* ours, set on the handle during a transfer */
} curl_state;

/* The side table: created with the first instrumented handle, destroyed with
 * the last release, so a program that releases its handles ends with nothing
 * allocated here. A static GMutex needs no initialisation. table_lock is
 * taken around fork() by the fork hooks (fork.h), registered on first use. */
static GMutex table_lock;
static GHashTable *table; /* CURL * -> curl_state *, guarded by table_lock */

static void table_fork_prepare(void *arg)
{
    (void)arg;
    g_mutex_lock(&table_lock);
}

static void table_fork_after(void *arg)
{
    (void)arg;
    g_mutex_unlock(&table_lock); /* GLib's mutex may be unlocked by any thread */
}

static tw__fork_entry table_fork_entry = {.level = TW__FORK_LEVEL_CONTRIB,
                                          .prepare = table_fork_prepare,
                                          .parent = table_fork_after,
                                          .child = table_fork_after};
static pthread_once_t table_fork_once = PTHREAD_ONCE_INIT;

static void table_fork_register(void)
{
    if (!tw__fork_register(&table_fork_entry))
        tw__log_msg(TW_LOG_WARN, "tw_curl: pthread_atfork failed: a forked child may hang");
}

static curl_state *lookup(CURL *easy)
{
    g_mutex_lock(&table_lock);
    curl_state *state = table ? g_hash_table_lookup(table, easy) : NULL;
    g_mutex_unlock(&table_lock);
    return state;
}

/* g_hash_table_new and _insert abort on OOM (GLib's rule for small fixed
 * sizes), so inserting cannot fail. */
static void insert(CURL *easy, curl_state *state)
{
    pthread_once(&table_fork_once, table_fork_register); /* before any other thread can use it */
    g_mutex_lock(&table_lock);
    if (!table)
        table = g_hash_table_new(g_direct_hash, g_direct_equal);
    g_hash_table_insert(table, easy, state);
    g_mutex_unlock(&table_lock);
}

static curl_state *steal(CURL *easy)
{
    g_mutex_lock(&table_lock);
    curl_state *state = table ? g_hash_table_lookup(table, easy) : NULL;
    if (state)
        g_hash_table_remove(table, easy);
    if (table && g_hash_table_size(table) == 0) {
        g_hash_table_destroy(table);
        table = NULL;
    }
    g_mutex_unlock(&table_lock);
    return state;
}

tw_status tw_curl_instrument(tw_tracer *tracer, CURL *easy, const tw_span_context *parent,
                             struct curl_slist *user_headers)
{
    TW_CHECK_ARG(tracer != NULL, TW_E_INVALID_ARG);
    TW_CHECK_ARG(easy != NULL, TW_E_INVALID_ARG);
    curl_state *state = lookup(easy);
    if (state && state->span) {
        tw__log_msg(TW_LOG_ERROR, "tw_curl_instrument: a transfer of this handle is in progress");
        return TW_E_STATE;
    }
    tw_span_context *parent_ref = NULL;
    if (parent) {
        parent_ref = tw_span_context_ref(parent);
        if (!parent_ref)
            goto fail_parent;
    }
    curl_state *fresh = NULL;
    if (!state) {
        fresh = calloc(1, sizeof(*fresh));
        if (!fresh)
            goto fail_state;
    }
    /* Setting a list pointer cannot fail in libcurl; checked all the same. */
    if (curl_easy_setopt(easy, CURLOPT_HTTPHEADER, user_headers) != CURLE_OK)
        goto fail_setopt;
    if (fresh) {
        state = fresh;
        insert(easy, state);
    } else {
        tw_span_context_unref(state->parent);
    }
    state->tracer = tracer;
    state->parent = parent_ref;
    state->user_headers = user_headers;
    return TW_OK;

fail_setopt:
    free(fresh);
    tw_span_context_unref(parent_ref);
    return TW_E_INVALID_ARG;
fail_state:
    tw_span_context_unref(parent_ref);
fail_parent:
    return TW_E_NOMEM;
}

/* ---- the request header list ------------------------------------------------------------ */

/* The header name of a curl_slist entry: "Name: value", "Name;" (send
 * empty) and "Name:" (remove) all name "Name". */
static size_t header_name_len(const char *entry)
{
    return strcspn(entry, ":;");
}

static bool is_injected_name(const tw_headers *injected, const char *entry)
{
    size_t len = header_name_len(entry);
    const char *key = NULL, *value = NULL;
    for (size_t i = 0; tw_headers_item(injected, i, &key, &value); i++) {
        if (strlen(key) == len && strncasecmp(key, entry, len) == 0)
            return true;
    }
    return false;
}

/* A header value from a codec must not split the request: CR and LF are
 * refused (the codecs never produce them; this is the last line of defence). */
static bool is_header_safe(const char *text)
{
    return strpbrk(text, "\r\n") == NULL;
}

/* The list for one transfer: the application's entries minus the names the
 * propagator writes, then the injected headers. NULL on failure (the
 * caller then keeps the application's list). */
static struct curl_slist *build_request_headers(const struct curl_slist *user_headers,
                                                const tw_headers *injected)
{
    struct curl_slist *list = NULL;
    for (const struct curl_slist *it = user_headers; it; it = it->next) {
        if (!it->data || is_injected_name(injected, it->data))
            continue;
        struct curl_slist *grown = curl_slist_append(list, it->data);
        if (!grown)
            goto fail_append;
        list = grown;
    }
    const char *key = NULL, *value = NULL;
    for (size_t i = 0; tw_headers_item(injected, i, &key, &value); i++) {
        if (!is_header_safe(key) || !is_header_safe(value)) {
            tw__log_msg(TW_LOG_WARN, "tw_curl: header %s not sent: it contains CR or LF", key);
            continue;
        }
        char *line = g_strdup_printf("%s: %s", key, value);
        struct curl_slist *grown = curl_slist_append(list, line);
        g_free(line);
        if (!grown)
            goto fail_append;
        list = grown;
    }
    return list;

fail_append:
    curl_slist_free_all(list);
    return NULL;
}

/* ---- begin / end -------------------------------------------------------------------------- */

/* Starts the span of @state's transfer on @easy and injects its context
 * into a new header list set on the handle. Tracing problems are logged;
 * the transfer runs whatever happens here. */
static void begin_transfer(curl_state *state, CURL *easy)
{
    tw_span_options *opts = tw_span_options_new();
    if (!opts) {
        tw__log_msg(TW_LOG_WARN, "tw_curl: out of memory: transfer not traced");
        return;
    }
    /* Without a parent of its own, tw_span_start takes the calling thread's
     * active context of the tracer (scope.h), or starts a new trace. */
    tw_span_options_add_reference(opts, TW_REF_CHILD_OF, state->parent);
    tw_span_options_add_tag_str(opts, "span.kind", "client");
    tw_span_options_add_tag_str(opts, "component", "libcurl");
    state->span = tw_span_start(state->tracer, "HTTP", opts);
    tw_span_options_free(opts);
    if (!state->span)
        return; /* closed tracer or no memory: reported by tw_span_start */

    tw_headers *injected = tw_headers_new();
    if (!injected) {
        tw__log_msg(TW_LOG_WARN, "tw_curl: out of memory: trace context not sent");
        return;
    }
    tw_carrier_writer writer = tw_headers_writer(injected);
    tw_status status = tw_tracer_inject(state->tracer, tw_span_get_context(state->span),
                                        TW_FORMAT_HTTP_HEADERS, &writer);
    if (status != TW_OK) {
        tw__log_msg(TW_LOG_WARN, "tw_curl: inject failed (%s): trace context not sent",
                    tw_status_str(status));
    } else {
        struct curl_slist *list = build_request_headers(state->user_headers, injected);
        if (!list && tw_headers_count(injected) > 0) {
            tw__log_msg(TW_LOG_WARN, "tw_curl: out of memory: trace context not sent");
        } else if (curl_easy_setopt(easy, CURLOPT_HTTPHEADER, list) == CURLE_OK) {
            state->request_headers = list;
        } else {
            curl_slist_free_all(list);
        }
    }
    tw_headers_free(injected);
}

tw_status tw_curl_transfer_begin(CURL *easy)
{
    TW_CHECK_ARG(easy != NULL, TW_E_INVALID_ARG);
    curl_state *state = lookup(easy);
    if (!state)
        return TW_E_NOT_FOUND;
    if (state->span) {
        tw__log_msg(TW_LOG_ERROR, "tw_curl_transfer_begin: a transfer is already in progress");
        return TW_E_STATE;
    }
    begin_transfer(state, easy);
    return TW_OK;
}

/* http.url without credentials: libcurl's URL parser drops user and
 * password; a URL it cannot parse is left out rather than risk a secret. */
static void tag_url_and_host(tw_span *span, const char *url)
{
    CURLU *parsed = curl_url();
    if (!parsed)
        return;
    if (curl_url_set(parsed, CURLUPART_URL, url, 0) == CURLUE_OK) {
        curl_url_set(parsed, CURLUPART_USER, NULL, 0);
        curl_url_set(parsed, CURLUPART_PASSWORD, NULL, 0);
        char *clean = NULL;
        if (curl_url_get(parsed, CURLUPART_URL, &clean, 0) == CURLUE_OK) {
            tw_span_set_tag_str(span, "http.url", clean);
            curl_free(clean);
        }
        char *host = NULL;
        if (curl_url_get(parsed, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
            /* An IPv6 literal comes back in brackets; the tag holds the name. */
            size_t len = strlen(host);
            if (len >= 2 && host[0] == '[' && host[len - 1] == ']') {
                host[len - 1] = '\0';
                tw_span_set_tag_str(span, "peer.hostname", host + 1);
            } else {
                tw_span_set_tag_str(span, "peer.hostname", host);
            }
            curl_free(host);
        }
    }
    curl_url_cleanup(parsed);
}

/* Tags the span from the transfer's information; returns whether the span
 * was marked failed (a CURLcode other than CURLE_OK, or a 5xx status), with
 * a description of the failure in @why. */
static bool tag_transfer(tw_span *span, CURL *easy, CURLcode result, char *why, size_t why_size)
{
    char *method = NULL;
#if LIBCURL_VERSION_NUM >= 0x074800 /* 7.72: CURLINFO_EFFECTIVE_METHOD */
    if (curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_METHOD, &method) != CURLE_OK)
        method = NULL;
#endif
    if (method && *method) {
        char *name = g_strdup_printf("HTTP %s", method);
        tw_span_set_operation_name(span, name);
        g_free(name);
        tw_span_set_tag_str(span, "http.method", method);
    }

    char *url = NULL;
    if (curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK && url && *url)
        tag_url_and_host(span, url);

    long status_code = 0;
    if (curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status_code) == CURLE_OK &&
        status_code > 0) {
        tw_span_set_tag_int64(span, "http.status_code", status_code);
    }

    char *ip = NULL;
    if (curl_easy_getinfo(easy, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip && *ip) {
        struct in6_addr probe;
        bool is_v6 = inet_pton(AF_INET6, ip, &probe) == 1;
        tw_span_set_tag_str(span, is_v6 ? "peer.ipv6" : "peer.ipv4", ip);
        long port = 0;
        if (curl_easy_getinfo(easy, CURLINFO_PRIMARY_PORT, &port) == CURLE_OK && port > 0)
            tw_span_set_tag_int64(span, "peer.port", port);
    }

    if (result != CURLE_OK) {
        tw_span_set_tag_int64(span, "curl.error_code", (int64_t)result);
        tw_span_set_error(span, "curl", curl_easy_strerror(result));
        snprintf(why, why_size, "%s", curl_easy_strerror(result));
        return true;
    }
    if (status_code >= 500) {
        tw_span_set_tag_bool(span, "error", true);
        snprintf(why, why_size, "HTTP status %ld", status_code);
        return true;
    }
    return false;
}

/* Ends the transfer in progress: the handle gets the application's list back
 * before ours is freed, so libcurl never holds a dangling list. Returns
 * whether the client span was marked failed (*why says how). */
static bool end_transfer(curl_state *state, CURL *easy, CURLcode result, bool is_abandoned,
                         char *why, size_t why_size)
{
    if (state->request_headers) {
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, state->user_headers);
        curl_slist_free_all(state->request_headers);
        state->request_headers = NULL;
    }
    if (!state->span)
        return false;
    bool has_failed = true;
    if (is_abandoned)
        tw_span_set_error(state->span, "tracewire", "transfer abandoned: released before it ended");
    else
        has_failed = tag_transfer(state->span, easy, result, why, why_size);
    tw_span_finish(state->span);
    state->span = NULL;
    return has_failed;
}

void tw_curl_transfer_end(CURL *easy, CURLcode result)
{
    TW_CHECK_ARG_VOID(easy != NULL);
    curl_state *state = lookup(easy);
    char why[256];
    if (state)
        end_transfer(state, easy, result, false, why, sizeof why);
}

CURLcode tw_curl_easy_perform(CURL *easy)
{
    curl_state *state = easy ? lookup(easy) : NULL;
    if (!state)
        return curl_easy_perform(easy);
    tw_curl_transfer_begin(easy);
    CURLcode result = curl_easy_perform(easy);
    char why[256];
    end_transfer(state, easy, result, false, why, sizeof why);
    return result;
}

CURLcode tw_curl_perform(tw_tracer *tracer, CURL *easy, tw_span *parent, struct curl_slist *headers,
                         unsigned int flags)
{
    if (!easy)
        return curl_easy_perform(easy); /* libcurl's own answer to a NULL handle */
    if (!tracer) {
        tw__log_msg(TW_LOG_ERROR, "tw_curl_perform: invalid argument: NULL tracer: not traced");
        return curl_easy_perform(easy);
    }
    /* The state of this one transfer lives here: nothing is left behind in
     * the side table, so there is nothing to release afterwards. */
    curl_state state = {.tracer = tracer, .user_headers = headers};
    const tw_span_context *parent_ctx = parent ? tw_span_get_context(parent) : NULL;
    state.parent = (tw_span_context *)parent_ctx; /* borrowed for the call: not unreferenced */
    tw_span *to_mark = parent ? parent : tw_tracer_active_span(tracer);
    begin_transfer(&state, easy);
    CURLcode result = curl_easy_perform(easy);
    char why[256] = "";
    bool has_failed = end_transfer(&state, easy, result, false, why, sizeof why);
    if (has_failed && (flags & TW_CURL_MARK_PARENT_ERROR) && to_mark) {
        char *url = NULL, message[512];
        if (curl_easy_getinfo(easy, CURLINFO_EFFECTIVE_URL, &url) != CURLE_OK || !url)
            url = "";
        /* The URL as the client span's tag has it: without credentials. */
        CURLU *u = curl_url();
        char *clean = NULL;
        if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK) {
            curl_url_set(u, CURLUPART_USER, NULL, 0);
            curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
            curl_url_get(u, CURLUPART_URL, &clean, 0);
        }
        snprintf(message, sizeof message, "HTTP request to %s failed: %s", clean ? clean : "?",
                 why);
        curl_free(clean);
        curl_url_cleanup(u);
        tw_span_set_error(to_mark, "http", message);
    }
    return result;
}

void tw_curl_release(CURL *easy)
{
    if (!easy)
        return;
    curl_state *state = steal(easy);
    if (!state)
        return;
    char why[64];
    end_transfer(state, easy, CURLE_OK, true, why, sizeof why);
    tw_span_context_unref(state->parent);
    free(state);
}

void tw_curl_easy_cleanup(CURL *easy)
{
    if (!easy)
        return;
    tw_curl_release(easy);
    curl_easy_cleanup(easy);
}

/* ---- curl_slist carriers --------------------------------------------------------------------- */

static tw_status slist_set(void *user_data, const char *key, const char *value)
{
    struct curl_slist **list = user_data;
    size_t key_len = strlen(key), value_len = strlen(value);
    size_t len = key_len + value_len + 3; /* ": " and the NUL */
    char stack[512];
    char *line = len <= sizeof stack ? stack : malloc(len);
    if (!line)
        return TW_E_NOMEM;
    memcpy(line, key, key_len);
    memcpy(line + key_len, ": ", 2);
    memcpy(line + key_len + 2, value, value_len + 1);
    struct curl_slist *grown = curl_slist_append(*list, line);
    if (line != stack)
        free(line);
    if (!grown)
        return TW_E_NOMEM;
    *list = grown;
    return TW_OK;
}

tw_carrier_writer tw_curl_slist_writer(struct curl_slist **list)
{
    return (tw_carrier_writer){list ? slist_set : NULL, list};
}

static tw_status slist_foreach(void *user_data, tw_carrier_handler_fn handler, void *handler_data)
{
    char stack[1024];
    for (const struct curl_slist *l = user_data; l; l = l->next) {
        const char *colon = l->data ? strchr(l->data, ':') : NULL;
        if (!colon)
            continue;
        size_t len = strlen(l->data);
        char *copy = len < sizeof stack ? stack : malloc(len + 1);
        if (!copy)
            return TW_E_NOMEM;
        memcpy(copy, l->data, len + 1);
        char *name = copy, *value = copy + (colon - l->data) + 1;
        value[-1] = '\0';
        while (*name == ' ' || *name == '\t')
            name++;
        for (char *e = value - 2; e >= name && (*e == ' ' || *e == '\t'); e--)
            *e = '\0';
        while (*value == ' ' || *value == '\t')
            value++;
        for (char *e = value + strlen(value); e > value && strchr(" \t\r\n", e[-1]); e--)
            e[-1] = '\0';
        tw_status st = handler(handler_data, name, value);
        if (copy != stack)
            free(copy);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

tw_carrier_reader tw_curl_slist_reader(const struct curl_slist *list)
{
    return (tw_carrier_reader){slist_foreach, (void *)list};
}
