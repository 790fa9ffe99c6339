/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_http_receiver.c: see test_http_receiver.h.
 *
 * MHD calls the access handler once when the headers are in (the request
 * takes its script step then), once per body chunk, and once more when the
 * body is complete, which is when the step is carried out. A close step
 * answers a body chunk with MHD_NO, which makes MHD drop the connection.
 */
#include "test_http_receiver.h"

#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

typedef struct pending {
    http_receiver *receiver;
    http_request *request;
    http_step step;
} pending;

static void request_free(gpointer p)
{
    http_request *q = p;
    g_free(q->method);
    g_free(q->path);
    g_ptr_array_unref(q->headers);
    g_byte_array_unref(q->body);
    g_free(q);
}

static enum MHD_Result record_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    g_ptr_array_add(cls, g_strdup(key));
    g_ptr_array_add(cls, g_strdup(value ? value : ""));
    return MHD_YES;
}

/* Whether the TLS peer sent a certificate that the trust CA verifies. */
static bool has_verified_client_cert(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!info || !info->tls_session)
        return false;
    gnutls_session_t session = (gnutls_session_t)info->tls_session;
    unsigned int n = 0;
    unsigned int status = 0;
    return gnutls_certificate_get_peers(session, &n) != NULL && n > 0 &&
           gnutls_certificate_verify_peers2(session, &status) == 0 && status == 0;
}

/* g_get_monotonic_time() is CLOCK_MONOTONIC in µs. */
static struct timespec monotonic_at(gint64 us)
{
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    return ts;
}

static void record(http_receiver *r, http_request *q)
{
    pthread_mutex_lock(&r->lock);
    g_ptr_array_add(r->requests, q);
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

/* Waits until @deadline_us (monotonic), or until released for a hold
 * (@is_hold), or until the receiver stops. */
static void wait_step(http_receiver *r, bool is_hold, gint64 deadline_us)
{
    pthread_mutex_lock(&r->lock);
    if (is_hold) {
        r->n_holding++;
        pthread_cond_broadcast(&r->changed);
    }
    while (!r->is_stopping && (is_hold ? !r->is_released : g_get_monotonic_time() < deadline_us)) {
        /* A hold is bounded too, so a forgotten release cannot hang a test. */
        gint64 until = is_hold ? g_get_monotonic_time() + 100 * 1000 : deadline_us;
        struct timespec ts = monotonic_at(until);
        pthread_cond_timedwait(&r->changed, &r->lock, &ts);
    }
    if (is_hold)
        r->n_holding--;
    pthread_mutex_unlock(&r->lock);
}

/* A trickle step's body: one byte per call, each after the step's delay
 * (the receiver stopping ends it). */
typedef struct trickle {
    http_receiver *receiver;
    unsigned int every_ms;
} trickle;

static ssize_t trickle_byte(void *cls, uint64_t pos, char *buf, size_t max)
{
    trickle *t = cls;
    (void)pos;
    if (max == 0)
        return 0;
    wait_step(t->receiver, false, g_get_monotonic_time() + (gint64)t->every_ms * 1000);
    pthread_mutex_lock(&t->receiver->lock);
    bool is_stopping = t->receiver->is_stopping;
    pthread_mutex_unlock(&t->receiver->lock);
    if (is_stopping)
        return MHD_CONTENT_READER_END_WITH_ERROR;
    buf[0] = 'x';
    return 1;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    http_receiver *r = cls;
    pending *p = *req_cls;
    if (!p) {
        p = g_new0(pending, 1);
        p->receiver = r;
        p->request = g_new0(http_request, 1);
        p->request->method = g_strdup(method);
        p->request->path = g_strdup(url);
        p->request->headers = g_ptr_array_new_with_free_func(g_free);
        p->request->body = g_byte_array_new();
        p->request->arrival_us = g_get_monotonic_time();
        p->request->has_client_cert = has_verified_client_cert(connection);
        MHD_get_connection_values(connection, MHD_HEADER_KIND, record_header, p->request->headers);
        pthread_mutex_lock(&r->lock);
        r->n_arrived++;
        if (r->next_step < r->n_steps)
            p->step = r->script[r->next_step++];
        pthread_cond_broadcast(&r->changed);
        pthread_mutex_unlock(&r->lock);
        *req_cls = p;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        g_byte_array_append(p->request->body, (const guint8 *)upload_data,
                            (guint)*upload_data_size);
        *upload_data_size = 0;
        if (p->step.is_close) {
            http_request *q = p->request;
            p->request = NULL;
            record(r, q);
            return MHD_NO; /* MHD closes the connection: no answer */
        }
        return MHD_YES;
    }
    if (!p->request)
        return MHD_NO;
    if (p->step.is_close) {
        http_request *q = p->request; /* an empty body: close now */
        p->request = NULL;
        record(r, q);
        return MHD_NO;
    }
    if (p->step.delay_ms)
        wait_step(r, false, g_get_monotonic_time() + (gint64)p->step.delay_ms * 1000);
    if (p->step.is_hold)
        wait_step(r, true, 0);
    http_request *q = p->request;
    p->request = NULL;
    q->is_answered = true;
    record(r, q);

    unsigned int status = p->step.status;
    const char *text = "";
    pthread_mutex_lock(&r->lock);
    http_judge_fn judge = r->judge;
    void *judge_arg = r->judge_arg;
    pthread_mutex_unlock(&r->lock);
    if (!status && judge)
        status = judge(q, judge_arg, &text); /* q is recorded, never changed: no lock */
    if (!status)
        status = r->default_status;
    if (!text)
        text = "";
    struct MHD_Response *response = NULL;
    if (p->step.trickle_ms) {
        trickle *t = g_new0(trickle, 1);
        t->receiver = r;
        t->every_ms = p->step.trickle_ms;
        response = MHD_create_response_from_callback(HTTP_RECEIVER_TRICKLE_BYTES, 1, trickle_byte,
                                                     t, g_free);
    } else {
        response =
            MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
    }
    if (p->step.retry_after)
        MHD_add_response_header(response, "Retry-After", p->step.retry_after);
    enum MHD_Result ret = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return ret;
}

static void completed(void *cls, struct MHD_Connection *connection, void **req_cls,
                      enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)connection;
    (void)toe;
    pending *p = *req_cls;
    if (!p)
        return;
    if (p->request)
        request_free(p->request); /* the client went away before the body ended */
    g_free(p);
    *req_cls = NULL;
}

/* The client's port of a connection, or 0. */
static unsigned int client_port(struct MHD_Connection *connection)
{
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr || info->client_addr->sa_family != AF_INET)
        return 0;
    return ntohs(((const struct sockaddr_in *)info->client_addr)->sin_port);
}

/* MHD calls this on its accepting thread, before the connection's own
 * thread starts, in the order the connections are accepted. */
static void on_connection(void *cls, struct MHD_Connection *connection, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    (void)socket_context;
    http_receiver *r = cls;
    if (code != MHD_CONNECTION_NOTIFY_STARTED)
        return;
    unsigned int port = client_port(connection);
    pthread_mutex_lock(&r->lock);
    if (r->sentinel_port && port == r->sentinel_port) {
        r->connections_before_sentinel = r->n_connections;
        r->is_sentinel_seen = true;
        pthread_cond_broadcast(&r->changed);
    } else {
        r->n_connections++;
    }
    pthread_mutex_unlock(&r->lock);
}

bool http_receiver_start(http_receiver *r, unsigned int default_status, const http_tls *tls)
{
    memset(r, 0, sizeof(*r));
    pthread_mutex_init(&r->lock, NULL);
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&r->changed, &attr);
    pthread_condattr_destroy(&attr);
    r->default_status = default_status;
    r->requests = g_ptr_array_new_with_free_func(request_free);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION;
    if (tls) {
        flags |= MHD_USE_TLS;
        if (tls->trust_pem) {
            r->daemon = MHD_start_daemon(
                flags, 0, NULL, NULL, answer, r, MHD_OPTION_SOCK_ADDR, &addr,
                MHD_OPTION_NOTIFY_COMPLETED, completed, r, MHD_OPTION_NOTIFY_CONNECTION,
                on_connection, r, MHD_OPTION_HTTPS_MEM_CERT, tls->cert_pem,
                MHD_OPTION_HTTPS_MEM_KEY, tls->key_pem, MHD_OPTION_HTTPS_MEM_TRUST, tls->trust_pem,
                MHD_OPTION_END);
        } else {
            r->daemon = MHD_start_daemon(flags, 0, NULL, NULL, answer, r, MHD_OPTION_SOCK_ADDR,
                                         &addr, MHD_OPTION_NOTIFY_COMPLETED, completed, r,
                                         MHD_OPTION_NOTIFY_CONNECTION, on_connection, r,
                                         MHD_OPTION_HTTPS_MEM_CERT, tls->cert_pem,
                                         MHD_OPTION_HTTPS_MEM_KEY, tls->key_pem, MHD_OPTION_END);
        }
    } else {
        r->daemon =
            MHD_start_daemon(flags, 0, NULL, NULL, answer, r, MHD_OPTION_SOCK_ADDR, &addr,
                             MHD_OPTION_NOTIFY_COMPLETED, completed, r,
                             MHD_OPTION_NOTIFY_CONNECTION, on_connection, r, MHD_OPTION_END);
    }
    if (!r->daemon) {
        g_ptr_array_unref(r->requests);
        pthread_cond_destroy(&r->changed);
        pthread_mutex_destroy(&r->lock);
        return false;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(r->daemon, MHD_DAEMON_INFO_BIND_PORT);
    r->port = info ? info->port : 0;
    snprintf(r->base_url, sizeof r->base_url, "%s://127.0.0.1:%u", tls ? "https" : "http", r->port);
    return r->port != 0;
}

void http_receiver_stop(http_receiver *r)
{
    pthread_mutex_lock(&r->lock);
    r->is_stopping = true;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    if (r->daemon)
        MHD_stop_daemon(r->daemon);
    r->daemon = NULL;
    g_ptr_array_unref(r->requests);
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
}

void http_receiver_script(http_receiver *r, const http_step *steps, size_t n)
{
    pthread_mutex_lock(&r->lock);
    r->n_steps = n < HTTP_RECEIVER_MAX_STEPS ? n : HTTP_RECEIVER_MAX_STEPS;
    memcpy(r->script, steps, r->n_steps * sizeof(*steps));
    r->next_step = 0;
    r->is_released = false;
    pthread_mutex_unlock(&r->lock);
}

void http_receiver_set_judge(http_receiver *r, http_judge_fn fn, void *arg)
{
    pthread_mutex_lock(&r->lock);
    r->judge = fn;
    r->judge_arg = arg;
    pthread_mutex_unlock(&r->lock);
}

void http_receiver_release(http_receiver *r)
{
    pthread_mutex_lock(&r->lock);
    r->is_released = true;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
}

static bool wait_for(http_receiver *r, size_t n, unsigned int timeout_ms, bool is_holding)
{
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    pthread_mutex_lock(&r->lock);
    bool ok = true;
    struct timespec ts = monotonic_at(deadline);
    while ((is_holding ? r->n_holding : r->requests->len) < n && ok)
        ok = pthread_cond_timedwait(&r->changed, &r->lock, &ts) == 0;
    ok = (is_holding ? r->n_holding : r->requests->len) >= n;
    pthread_mutex_unlock(&r->lock);
    return ok;
}

bool http_receiver_wait(http_receiver *r, size_t n, unsigned int timeout_ms)
{
    return wait_for(r, n, timeout_ms, false);
}

bool http_receiver_wait_holding(http_receiver *r, size_t n, unsigned int timeout_ms)
{
    return wait_for(r, n, timeout_ms, true);
}

size_t http_receiver_count(http_receiver *r)
{
    pthread_mutex_lock(&r->lock);
    size_t n = r->requests->len;
    pthread_mutex_unlock(&r->lock);
    return n;
}

size_t http_receiver_connections(http_receiver *r)
{
    pthread_mutex_lock(&r->lock);
    size_t n = r->n_connections;
    pthread_mutex_unlock(&r->lock);
    return n;
}

size_t http_receiver_connections_settled(http_receiver *r)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)r->port)};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    struct sockaddr_in local;
    socklen_t len = sizeof local;
    bool ok = fd >= 0 &&
              bind(fd, (struct sockaddr *)&(struct sockaddr_in){.sin_family = AF_INET},
                   sizeof(struct sockaddr_in)) == 0 &&
              getsockname(fd, (struct sockaddr *)&local, &len) == 0;
    pthread_mutex_lock(&r->lock);
    r->sentinel_port = ok ? ntohs(local.sin_port) : 0;
    r->is_sentinel_seen = false;
    pthread_mutex_unlock(&r->lock);
    ok = ok && connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
    struct timespec ts = monotonic_at(g_get_monotonic_time() + 10 * G_USEC_PER_SEC);
    pthread_mutex_lock(&r->lock);
    int rc = 0;
    while (ok && !r->is_sentinel_seen && rc == 0)
        rc = pthread_cond_timedwait(&r->changed, &r->lock, &ts);
    size_t n = r->is_sentinel_seen ? r->connections_before_sentinel : SIZE_MAX;
    r->sentinel_port = 0;
    pthread_mutex_unlock(&r->lock);
    if (fd >= 0)
        close(fd);
    return n;
}

size_t http_receiver_arrived(http_receiver *r)
{
    pthread_mutex_lock(&r->lock);
    size_t n = r->n_arrived;
    pthread_mutex_unlock(&r->lock);
    return n;
}

const http_request *http_receiver_request(http_receiver *r, size_t i)
{
    pthread_mutex_lock(&r->lock);
    const http_request *q = i < r->requests->len ? g_ptr_array_index(r->requests, i) : NULL;
    pthread_mutex_unlock(&r->lock);
    return q;
}

const char *http_request_header(const http_request *q, const char *key)
{
    for (guint i = 0; q && i + 1 < q->headers->len; i += 2) {
        if (strcasecmp(g_ptr_array_index(q->headers, i), key) == 0)
            return g_ptr_array_index(q->headers, i + 1);
    }
    return NULL;
}
