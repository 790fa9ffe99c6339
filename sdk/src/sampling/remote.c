/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sampling/remote.c: the remote sampler: the strategy is served by the
 * Jaeger agent or collector (GET <endpoint>?service=NAME)
 * and followed as it changes, so operators steer sampling centrally.
 *
 * It starts from an initial sampler (by default probabilistic 0.001, as in
 * Jaeger) and polls once while it is created, bounded by a short timeout, so
 * even a short-lived program samples by the served strategy and not only
 * after the first interval (Jaeger's Go client waits a full minute). A
 * background thread then polls every refresh interval with libcurl. A
 * strategy that differs from the current one is turned into a new sampler
 * and swapped in; an unreachable endpoint, an HTTP error or a document that
 * does not parse keeps the last good strategy, counted and logged.
 *
 * Locking: `lock` (a rwlock) guards `current`: decisions read it, a swap
 * writes it and frees the old sampler only after the write lock is held, so
 * no decision is still using it. `wait_lock`/`wake` pace the poller and let
 * free() stop it at once. Counters are relaxed atomics (statistics).
 *
 * Queries run on a multi handle, so that free() ends one in flight at once
 * (is_quitting, curl_multi_wakeup) instead of waiting for its timeout.
 *
 * fork() (fork.h): the hooks take `lock` and `wait_lock`. The poller does
 * not exist in a forked child: the child's first decision starts a new one
 * (needs_restart, one relaxed load per decision). A poll that was running
 * at the fork (is_polling) left its handle, body and strategy half-written:
 * the child abandons them (a one-time leak) and polls with new ones. An
 * idle handle's kept-alive connection is the parent's: the child closes its
 * copy of the socket and abandons the handle too (cleaning it up could talk
 * on the parent's connection).
 */
#include "sampling/sampling.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fork.h"
#include "sampling/strategy.h"
#include "wire/core/buf.h"

struct tw_remote_sampler_options {
    char *service;
    char *endpoint;
    tw_sampler *initial;
    unsigned int refresh_interval_ms;
    unsigned int first_poll_timeout_ms;
    size_t max_operations;
};

typedef struct {
    tw_sampler base;
    pthread_rwlock_t lock;
    tw_sampler *current;   /* guarded by lock */
    tw__strategy strategy; /* the strategy behind current (poller thread only) */
    bool has_strategy;     /* poller thread only */

    char *url;
    unsigned int refresh_interval_ms;
    size_t max_operations;
    CURL *curl;                /* poller thread only (and the first poll, before it starts) */
    CURLM *multi;              /* runs curl's query, so that free() can end a wait at once */
    _Atomic(CURLM *) wakeable; /* multi, published for free() */
    atomic_bool is_quitting;   /* free() started: a query in flight is abandoned */
    bool is_attached;          /* curl is added to multi (kept between queries, so a
                                * forked child can find the connection's socket) */
    tw__buf body;              /* poller thread only */

    pthread_mutex_t wait_lock;
    pthread_cond_t wake;
    bool is_stopping; /* guarded by wait_lock */
    bool is_polling;  /* guarded by wait_lock: the poller is in poll_once */
    bool has_thread;  /* guarded by wait_lock */
    pthread_t thread;
    atomic_bool needs_restart; /* a forked child: the next decision starts the poller */
    CURL *abandoned_curl;      /* a forked child's copy of the parent's handle (not freed) */

    atomic_uint_fast64_t counters[4]; /* indexed by tw_remote_counter */
    tw__fork_entry fork_entry;
} remote_sampler;

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
    /* Once per process, never cleaned up: other users of libcurl in the
     * same process may still need it at exit. */
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* ---- options ----------------------------------------------------------------------------- */

tw_remote_sampler_options *tw_remote_sampler_options_new(const char *service)
{
    TW_CHECK_ARG(service && *service, NULL);
    tw_remote_sampler_options *o = calloc(1, sizeof(*o));
    if (!o)
        return NULL;
    o->service = strdup(service);
    o->endpoint = strdup("http://127.0.0.1:5778/sampling");
    o->refresh_interval_ms = 60000;
    o->first_poll_timeout_ms = 1000;
    o->max_operations = 2000;
    if (!o->service || !o->endpoint) {
        tw_remote_sampler_options_free(o);
        return NULL;
    }
    return o;
}

void tw_remote_sampler_options_free(tw_remote_sampler_options *opts)
{
    if (!opts)
        return;
    free(opts->service);
    free(opts->endpoint);
    tw_sampler_free(opts->initial);
    free(opts);
}

tw_status tw_remote_sampler_options_set_endpoint(tw_remote_sampler_options *opts, const char *url)
{
    TW_CHECK_ARG(opts && url && *url, TW_E_INVALID_ARG);
    char *copy = strdup(url);
    if (!copy)
        return TW_E_NOMEM;
    free(opts->endpoint);
    opts->endpoint = copy;
    return TW_OK;
}

tw_status tw_remote_sampler_options_set_initial_sampler(tw_remote_sampler_options *opts,
                                                        tw_sampler *initial)
{
    TW_CHECK_ARG(opts && initial, TW_E_INVALID_ARG);
    if (opts->initial != initial)
        tw_sampler_free(opts->initial);
    opts->initial = initial;
    return TW_OK;
}

tw_status tw_remote_sampler_options_set_refresh_interval_ms(tw_remote_sampler_options *opts,
                                                            unsigned int interval_ms)
{
    TW_CHECK_ARG(opts && interval_ms >= 1, TW_E_INVALID_ARG);
    opts->refresh_interval_ms = interval_ms;
    return TW_OK;
}

tw_status tw_remote_sampler_options_set_first_poll_timeout_ms(tw_remote_sampler_options *opts,
                                                              unsigned int timeout_ms)
{
    TW_CHECK_ARG(opts, TW_E_INVALID_ARG);
    opts->first_poll_timeout_ms = timeout_ms;
    return TW_OK;
}

tw_status tw_remote_sampler_options_set_max_operations(tw_remote_sampler_options *opts,
                                                       size_t max_operations)
{
    TW_CHECK_ARG(opts && max_operations >= 1, TW_E_INVALID_ARG);
    opts->max_operations = max_operations;
    return TW_OK;
}

/* ---- polling ----------------------------------------------------------------------------- */

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
    tw__buf *body = user;
    size_t len = size * n;
    if (body->len + len > TW__STRATEGY_MAX_BYTES || !tw__buf_append(body, data, len))
        return 0; /* aborts the transfer: counted as a failed query */
    return len;
}

static void count(remote_sampler *r, tw_remote_counter c)
{
    atomic_fetch_add_explicit(&r->counters[c], 1, memory_order_relaxed);
}

/* The easy handle with its fixed options; false when libcurl cannot make
 * one (logged). The constructor's thread, or the poller's. */
static bool make_handle(remote_sampler *r)
{
    r->curl = curl_easy_init();
    if (!r->curl) {
        tw__log_msg(TW_LOG_WARN, "remote sampler: cannot create a libcurl handle");
        return false;
    }
    curl_easy_setopt(r->curl, CURLOPT_URL, r->url);
    curl_easy_setopt(r->curl, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(r->curl, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(r->curl, CURLOPT_WRITEDATA, &r->body);
    curl_easy_setopt(r->curl, CURLOPT_USERAGENT, "tracewire/" TW_VERSION_STRING);
    if (!r->multi) {
        r->multi = curl_multi_init();
        if (!r->multi) {
            tw__log_msg(TW_LOG_WARN, "remote sampler: cannot create a libcurl multi handle");
            curl_easy_cleanup(r->curl);
            r->curl = NULL;
            return false;
        }
        /* Before is_quitting is read by the first wait: free() either sees
         * it and wakes the wait, or the wait sees is_quitting. */
        atomic_store(&r->wakeable, r->multi);
    }
    return true;
}

/* curl_easy_perform, on the multi handle so that free() can end the wait
 * at once (curl_multi_wakeup) instead of after the query's timeout. */
static CURLcode perform(remote_sampler *r)
{
    if (r->is_attached)
        curl_multi_remove_handle(r->multi, r->curl); /* the last query's; keeps the connection */
    r->is_attached = curl_multi_add_handle(r->multi, r->curl) == CURLM_OK;
    if (!r->is_attached)
        return CURLE_OUT_OF_MEMORY;
    CURLcode rc = CURLE_OK;
    for (;;) {
        int running = 0;
        if (curl_multi_perform(r->multi, &running) != CURLM_OK) {
            rc = CURLE_OUT_OF_MEMORY;
            break;
        }
        if (running == 0) {
            int queued = 0;
            CURLMsg *m;
            while ((m = curl_multi_info_read(r->multi, &queued)) != NULL) {
                if (m->msg == CURLMSG_DONE)
                    rc = m->data.result;
            }
            break;
        }
        if (atomic_load(&r->is_quitting)) {
            rc = CURLE_ABORTED_BY_CALLBACK;
            break;
        }
        curl_multi_poll(r->multi, NULL, 0, 1000, NULL);
    }
    return rc;
}

/* The sampling in force, for the log line that says the endpoint failed:
 * the strategy last served, else the initial sampler (its rate, for the
 * kinds whose decision has no side effect). Poller thread. */
static void describe_in_force(remote_sampler *r, char *out, size_t size)
{
    if (r->has_strategy) {
        const tw__strategy *s = &r->strategy;
        if (s->kind == TW__STRATEGY_PROBABILISTIC)
            snprintf(out, size, "probabilistic %g (the last strategy served)", s->probability);
        else if (s->kind == TW__STRATEGY_RATE_LIMITING)
            snprintf(out, size, "rate limiting %g traces/s (the last strategy served)",
                     s->max_traces_per_second);
        else
            snprintf(out, size, "per-operation, default %g (the last strategy served)",
                     s->default_probability);
        return;
    }
    pthread_rwlock_rdlock(&r->lock);
    const char *type = r->current->vtable->type;
    if (strcmp(type, "probabilistic") == 0 || strcmp(type, "const") == 0) {
        tw__sampling_decision d;
        tw__sampler_decide(r->current, 0, 1, "", &d);
        if (d.param.type == TW_VALUE_DOUBLE)
            snprintf(out, size, "%s %g (the initial sampler)", type, d.param.as.dbl);
        else
            snprintf(out, size, "%s %s (the initial sampler)", type,
                     d.param.as.boolean ? "1" : "0");
    } else {
        snprintf(out, size, "%s (the initial sampler)", type);
    }
    pthread_rwlock_unlock(&r->lock);
}

/* One query; applies a new strategy when it differs. Poller thread (or the
 * constructor, before the thread exists). */
static void poll_once(remote_sampler *r, long timeout_ms)
{
    tw__buf_reset(&r->body);
    curl_easy_setopt(r->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    CURLcode rc = perform(r);
    if (rc == CURLE_ABORTED_BY_CALLBACK)
        return; /* free() is waiting */
    long status = 0;
    curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || status != 200) {
        count(r, TW_REMOTE_QUERIES_FAILED);
        char in_force[128], why[64];
        describe_in_force(r, in_force, sizeof in_force);
        if (rc == CURLE_OK)
            snprintf(why, sizeof why, "HTTP status %ld", status);
        char shown[1024]; /* one URL: masked (tw__show_url) before the message */
        tw__show_url(r->url, shown, sizeof shown);
        tw__log_msg(TW_LOG_WARN,
                    "remote sampler: GET %s failed: %s; sampling stays at %s until it answers "
                    "(set JAEGER_SAMPLER_TYPE, or JAEGER_SAMPLING_ENDPOINT to a Jaeger agent's "
                    "or collector's sampling endpoint)",
                    shown, rc != CURLE_OK ? curl_easy_strerror(rc) : why, in_force);
        return;
    }
    count(r, TW_REMOTE_QUERIES_OK);
    tw__strategy fresh;
    tw_error *err = NULL;
    if (!tw__strategy_parse((const char *)r->body.data, r->body.len, &fresh, &err)) {
        count(r, TW_REMOTE_UPDATES_FAILED);
        char shown[1024];
        tw__show_url(r->url, shown, sizeof shown);
        tw__log_msg(TW_LOG_WARN, "remote sampler: %s: %s (keeping the last good strategy)", shown,
                    tw_error_message(err));
        tw_error_free(err);
        return;
    }
    if (r->has_strategy && tw__strategy_equal(&fresh, &r->strategy)) {
        tw__strategy_clear(&fresh); /* unchanged: keep the sampler and its state */
        return;
    }
    tw_sampler *next = tw__strategy_sampler(&fresh, r->max_operations, &err);
    if (!next) {
        count(r, TW_REMOTE_UPDATES_FAILED);
        tw__log_msg(TW_LOG_WARN, "remote sampler: %s", tw_error_message(err));
        tw_error_free(err);
        tw__strategy_clear(&fresh);
        return;
    }
    pthread_rwlock_wrlock(&r->lock);
    tw_sampler *old = r->current;
    r->current = next;
    pthread_rwlock_unlock(&r->lock);
    tw_sampler_free(old); /* no decision holds it: we had the write lock */
    if (r->has_strategy)
        tw__strategy_clear(&r->strategy);
    r->strategy = fresh;
    r->has_strategy = true;
    count(r, TW_REMOTE_UPDATES_OK);
}

static void *poller(void *arg)
{
    remote_sampler *r = arg;
    /* Each query may take at most the interval (and 10 s, Jaeger's Go
     * timeout), so stopping never waits longer than that. */
    long timeout = r->refresh_interval_ms < 10000 ? (long)r->refresh_interval_ms : 10000;
    pthread_mutex_lock(&r->wait_lock);
    while (!r->is_stopping) {
        struct timespec deadline;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += r->refresh_interval_ms / 1000;
        deadline.tv_nsec += (long)(r->refresh_interval_ms % 1000) * 1000000L;
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        int rc = 0;
        while (!r->is_stopping && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&r->wake, &r->wait_lock, &deadline);
        if (r->is_stopping)
            break;
        r->is_polling = true;
        pthread_mutex_unlock(&r->wait_lock);
        if (r->curl || make_handle(r))
            poll_once(r, timeout);
        pthread_mutex_lock(&r->wait_lock);
        r->is_polling = false;
    }
    pthread_mutex_unlock(&r->wait_lock);
    return NULL;
}

/* ---- the sampler -------------------------------------------------------------------------- */

/* In a forked child, on its first decision: a poller of its own. A failure
 * is logged and tried again at the next decision. */
static void restart_poller(remote_sampler *r)
{
    pthread_mutex_lock(&r->wait_lock);
    if (atomic_load_explicit(&r->needs_restart, memory_order_relaxed) && !r->is_stopping) {
        int rc = pthread_create(&r->thread, NULL, poller, r);
        if (rc == 0) {
            r->has_thread = true;
            atomic_store_explicit(&r->needs_restart, false, memory_order_relaxed);
        } else {
            tw__log_msg(TW_LOG_WARN, "remote sampler: cannot restart its thread after fork: %s",
                        strerror(rc));
        }
    }
    pthread_mutex_unlock(&r->wait_lock);
}

static void remote_decide(tw_sampler *s, tw__trace_id *id, const char *op,
                          tw__sampling_decision *out)
{
    remote_sampler *r = (remote_sampler *)s;
    if (atomic_load_explicit(&r->needs_restart, memory_order_relaxed))
        restart_poller(r);
    pthread_rwlock_rdlock(&r->lock);
    tw__sampler_decide_lazy(r->current, id, op, out);
    pthread_rwlock_unlock(&r->lock);
}

static void remote_free(tw_sampler *s)
{
    remote_sampler *r = (remote_sampler *)s;
    tw__fork_unregister(&r->fork_entry);
    pthread_mutex_lock(&r->wait_lock);
    r->is_stopping = true;
    bool should_join = r->has_thread;
    pthread_cond_signal(&r->wake);
    pthread_mutex_unlock(&r->wait_lock);
    /* A query in flight ends now, not at its timeout (up to 10 s). */
    atomic_store(&r->is_quitting, true);
    CURLM *m = atomic_load(&r->wakeable);
    if (m)
        curl_multi_wakeup(m);
    if (should_join)
        pthread_join(r->thread, NULL);
    if (r->curl && r->is_attached)
        curl_multi_remove_handle(r->multi, r->curl);
    if (r->curl)
        curl_easy_cleanup(r->curl);
    if (r->multi)
        curl_multi_cleanup(r->multi);
    tw_sampler_free(r->current);
    if (r->has_strategy)
        tw__strategy_clear(&r->strategy);
    tw__buf_free(&r->body);
    free(r->url);
    pthread_cond_destroy(&r->wake);
    pthread_mutex_destroy(&r->wait_lock);
    pthread_rwlock_destroy(&r->lock);
    free(r);
}

static const tw__sampler_vtable remote_vtable = {sizeof(tw__sampler_vtable), "remote",
                                                 remote_decide, remote_free};

static void init_wake(remote_sampler *r)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&r->wake, &attr);
    pthread_condattr_destroy(&attr);
}

static void remote_fork_prepare(void *arg)
{
    remote_sampler *r = arg;
    pthread_rwlock_wrlock(&r->lock);
    pthread_mutex_lock(&r->wait_lock);
}

static void remote_fork_parent(void *arg)
{
    remote_sampler *r = arg;
    pthread_mutex_unlock(&r->wait_lock);
    pthread_rwlock_unlock(&r->lock);
}

static void remote_fork_child(void *arg)
{
    remote_sampler *r = arg;
    tw__sampling_rwlock_reset_in_child(&r->lock);
    pthread_mutex_unlock(&r->wait_lock);
    init_wake(r); /* the parent's poller may be counted as its waiter */
    if (r->is_polling) {
        /* Mid-poll: the handle, the body and the strategy are the
         * parent's thread's, in whatever state it left them. */
        r->abandoned_curl = r->curl;
        tw__buf_init(&r->body);
        r->has_strategy = false;
        memset(&r->strategy, 0, sizeof r->strategy);
    } else if (r->curl) {
        curl_socket_t fd = CURL_SOCKET_BAD;
        if (r->is_attached && curl_easy_getinfo(r->curl, CURLINFO_ACTIVESOCKET, &fd) == CURLE_OK &&
            fd != CURL_SOCKET_BAD)
            close(fd);
        r->abandoned_curl = r->curl;
    }
    /* The multi handle (its connection cache, its wakeup socket pair) is
     * the parent's too: abandoned with the easy handle. */
    r->curl = NULL;
    r->multi = NULL;
    atomic_store(&r->wakeable, NULL);
    r->is_attached = false;
    r->is_polling = false;
    if (r->has_thread) {
        r->has_thread = false;
        atomic_store_explicit(&r->needs_restart, !r->is_stopping, memory_order_relaxed);
    }
}

/* endpoint + "?service=" (or "&service=" when it has a query) + escaped name */
static char *query_url(CURL *curl, const char *endpoint, const char *service)
{
    char *escaped = curl_easy_escape(curl, service, 0);
    if (!escaped)
        return NULL;
    size_t len = strlen(endpoint) + strlen(escaped) + 10;
    char *url = malloc(len);
    if (url)
        snprintf(url, len, "%s%cservice=%s", endpoint, strchr(endpoint, '?') ? '&' : '?', escaped);
    curl_free(escaped);
    return url;
}

tw_sampler *tw_sampler_remote_new(tw_remote_sampler_options *opts, tw_error **err)
{
    if (!opts) {
        tw__set_error(err, TW_E_INVALID_ARG, "remote sampler: options are NULL");
        return NULL;
    }
    tw_sampler *initial = opts->initial;
    opts->initial = NULL; /* moves to the sampler, or dies here */
    if (!initial && !(initial = tw_sampler_probabilistic_new(0.001, err)))
        return NULL;
    pthread_once(&curl_once, curl_init_once);
    remote_sampler *r = calloc(1, sizeof(*r));
    if (!r) {
        tw_sampler_free(initial);
        tw__set_error(err, TW_E_NOMEM, "remote sampler: out of memory");
        return NULL;
    }
    r->base.vtable = &remote_vtable;
    tw__sampling_rwlock_init(&r->lock);
    pthread_mutex_init(&r->wait_lock, NULL);
    init_wake(r);
    atomic_init(&r->needs_restart, false);
    r->current = initial;
    r->refresh_interval_ms = opts->refresh_interval_ms;
    r->max_operations = opts->max_operations;
    tw__buf_init(&r->body);
    r->fork_entry = (tw__fork_entry){.level = TW__FORK_LEVEL_SAMPLER_OUTER,
                                     .prepare = remote_fork_prepare,
                                     .parent = remote_fork_parent,
                                     .child = remote_fork_child,
                                     .arg = r};
    CURL *escaper = curl_easy_init();
    r->url = escaper ? query_url(escaper, opts->endpoint, opts->service) : NULL;
    if (escaper)
        curl_easy_cleanup(escaper);
    if (!r->url || !make_handle(r)) {
        tw__set_error(err, TW_E_NOMEM, "remote sampler: cannot set up libcurl");
        remote_free(&r->base);
        return NULL;
    }
    if (!tw__fork_register(&r->fork_entry))
        tw__log_msg(TW_LOG_WARN,
                    "remote sampler: pthread_atfork failed: a forked child may hang on its lock");
    /* The first poll runs on the caller's thread, marked as a poll so that
     * a fork by another thread meanwhile abandons the handle in the child. */
    pthread_mutex_lock(&r->wait_lock);
    r->is_polling = true;
    pthread_mutex_unlock(&r->wait_lock);
    if (opts->first_poll_timeout_ms > 0)
        poll_once(r, (long)opts->first_poll_timeout_ms);
    pthread_mutex_lock(&r->wait_lock);
    r->is_polling = false;
    int rc = pthread_create(&r->thread, NULL, poller, r);
    r->has_thread = rc == 0;
    pthread_mutex_unlock(&r->wait_lock);
    if (rc != 0) {
        tw__set_error(err, TW_E_STATE, "remote sampler: cannot start its thread: %s", strerror(rc));
        remote_free(&r->base);
        return NULL;
    }
    return &r->base;
}

uint64_t tw_sampler_remote_counter(const tw_sampler *sampler, tw_remote_counter counter)
{
    if (!sampler || sampler->vtable != &remote_vtable || (unsigned)counter > 3)
        return 0;
    const remote_sampler *r = (const remote_sampler *)sampler;
    return atomic_load_explicit(&r->counters[counter], memory_order_relaxed);
}
