/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/contrib/http_server.h: a libmicrohttpd server on a loopback
 * ephemeral port (127.0.0.1 or ::1) for the contrib tests. By default it
 * answers every request with a fixed status and records the last request's
 * headers, so the curl tests see what really went over the socket; a
 * handler replaces the default answer (the microhttpd helper's tests start
 * their spans in it, on the server's own thread).
 */
#ifndef TW_TESTS_HTTP_SERVER_H
#define TW_TESTS_HTTP_SERVER_H

#include <stdbool.h>
#include <stddef.h>

#include <glib.h>
#include <microhttpd.h>

/* Runs on the server thread for each request; returns the status to answer
 * with an empty body. */
typedef unsigned int (*http_server_handler_fn)(void *data, struct MHD_Connection *connection,
                                               const char *method, const char *url);

typedef struct http_server {
    struct MHD_Daemon *daemon;
    unsigned int port;
    char base_url[64]; /* "http://127.0.0.1:PORT" or "http://[::1]:PORT" */
    unsigned int status;
    http_server_handler_fn handler; /* NULL: answer status */
    void *handler_data;

    GMutex lock; /* guards the fields below (written by the server thread) */
    size_t n_requests;
    GPtrArray *headers; /* the last request's headers: key, value, key, value, ... */
} http_server;

/* Starts the server on @host ("127.0.0.1" or "::1"); false if it cannot bind. */
bool http_server_start(http_server *server, const char *host, unsigned int status,
                       http_server_handler_fn handler, void *handler_data);
void http_server_stop(http_server *server);

/* The last request's value of header @key (case-insensitive), or NULL; the
 * number of headers named @key; the number of requests served. */
const char *http_server_header(http_server *server, const char *key);
size_t http_server_header_count(http_server *server, const char *key);
size_t http_server_requests(http_server *server);

#endif
