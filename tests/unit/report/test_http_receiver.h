/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/report/test_http_receiver.h: a scriptable HTTP(S) receiver on a
 * loopback ephemeral port (libmicrohttpd, one thread per connection) for
 * the HTTP reporter tests and the HTTP interop driver. It records every
 * request (method, path, headers, body, whether a verified client
 * certificate came with it) and answers each arriving request with the next
 * step of a script: a status, after a delay, optionally with Retry-After;
 * or it drops the connection after reading the body (no answer); or it
 * holds the request until released (a stuck collector). Delays and holds
 * end at once when the receiver stops, so a test never waits on them.
 */
#ifndef TW_TESTS_HTTP_RECEIVER_H
#define TW_TESTS_HTTP_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>
#include <pthread.h>

typedef struct http_step {
    unsigned int status;     /* 0: the receiver's default status */
    unsigned int delay_ms;   /* before answering */
    bool is_close;           /* close the connection without an answer */
    bool is_hold;            /* wait for http_receiver_release() (or stop) */
    const char *retry_after; /* Retry-After header value, or NULL */
    /* > 0: the answer's headers go out at once, then its body of
     * HTTP_RECEIVER_TRICKLE_BYTES, one byte every trickle_ms (a backend
     * that accepts and then streams slowly) */
    unsigned int trickle_ms;
} http_step;

#define HTTP_RECEIVER_TRICKLE_BYTES 4096u

typedef struct http_request {
    char *method;
    char *path;
    GPtrArray *headers; /* key, value, key, value, ... */
    GByteArray *body;
    bool is_answered;     /* false: closed by a close step */
    bool has_client_cert; /* TLS: a client certificate that the trust CA verified */
    gint64 arrival_us;    /* g_get_monotonic_time() when the headers arrived */
} http_request;

/* TLS material for an https receiver (PEM text). */
typedef struct http_tls {
    const char *cert_pem;
    const char *key_pem;
    const char *trust_pem; /* CA for client certificates; NULL: none asked */
} http_tls;

#define HTTP_RECEIVER_MAX_STEPS 32

/* Decides the answer to a complete request whose script step names no
 * status (a receiver that judges the body, e.g. refuses a marker span):
 * returns the status (0: the default) and may point *answer at a static
 * text sent as the answer's body. Runs on the receiver's threads. */
typedef unsigned int (*http_judge_fn)(const http_request *q, void *arg, const char **answer);

typedef struct http_receiver {
    struct MHD_Daemon *daemon;
    unsigned int port;
    char base_url[64]; /* "http://127.0.0.1:PORT" (https for TLS) */

    /* pthread, not GMutex: GLib's futex-based locks are invisible to TSan. */
    pthread_mutex_t lock;   /* guards everything below */
    pthread_cond_t changed; /* on CLOCK_MONOTONIC */
    unsigned int default_status;
    http_judge_fn judge; /* NULL: none */
    void *judge_arg;
    http_step script[HTTP_RECEIVER_MAX_STEPS];
    size_t n_steps, next_step;
    GPtrArray *requests;  /* http_request *, in completion order */
    size_t n_arrived;     /* requests whose headers arrived */
    size_t n_connections; /* TCP connections accepted (TLS: before the handshake) */
    /* http_receiver_connections_settled: its own connection's client port,
     * whether it was accepted, and the connections accepted before it */
    unsigned int sentinel_port;
    bool is_sentinel_seen;
    size_t connections_before_sentinel;
    size_t n_holding; /* requests waiting in a hold step now */
    bool is_released;
    bool is_stopping;
} http_receiver;

/* Starts on 127.0.0.1 with @default_status; @tls NULL for plain HTTP.
 * False when it cannot start. */
bool http_receiver_start(http_receiver *r, unsigned int default_status, const http_tls *tls);
/* Ends holds and delays, stops the daemon and frees the records. */
void http_receiver_stop(http_receiver *r);

/* Replaces the script; each request arriving from now on takes the next step. */
void http_receiver_script(http_receiver *r, const http_step *steps, size_t n);
/* Sets the judge (NULL: none). */
void http_receiver_set_judge(http_receiver *r, http_judge_fn fn, void *arg);
/* Lets held requests (and later hold steps) answer. */
void http_receiver_release(http_receiver *r);

/* Waits until @n requests are recorded (answered or closed); false on
 * timeout. */
bool http_receiver_wait(http_receiver *r, size_t n, unsigned int timeout_ms);
/* Waits until @n requests are held at once. */
bool http_receiver_wait_holding(http_receiver *r, size_t n, unsigned int timeout_ms);

size_t http_receiver_count(http_receiver *r);       /* recorded requests */
size_t http_receiver_arrived(http_receiver *r);     /* requests whose headers arrived */
size_t http_receiver_connections(http_receiver *r); /* connections accepted */
/* The connections made to the receiver before the call, all of them
 * accepted: connections already made but still in the listen queue are
 * waited for (a connection of the receiver's own, made now, is accepted
 * after them; it is not counted). SIZE_MAX when that does not happen within
 * 10 s. */
size_t http_receiver_connections_settled(http_receiver *r);
/* The @i-th recorded request; borrowed until stop. */
const http_request *http_receiver_request(http_receiver *r, size_t i);
/* A header of a request (case-insensitive), or NULL. */
const char *http_request_header(const http_request *q, const char *key);

#endif /* TW_TESTS_HTTP_RECEIVER_H */
