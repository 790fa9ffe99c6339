/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/contrib/http_server.c: see http_server.h.
 */
#include "http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static enum MHD_Result record_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                     const char *value)
{
    (void)kind;
    GPtrArray *headers = cls;
    g_ptr_array_add(headers, g_strdup(key));
    g_ptr_array_add(headers, g_strdup(value ? value : ""));
    return MHD_YES;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)req_cls;
    http_server *server = cls;
    /* The tests send no request bodies, so the first call of each request
     * (headers complete) answers it. */
    GPtrArray *headers = g_ptr_array_new_with_free_func(g_free);
    MHD_get_connection_values(connection, MHD_HEADER_KIND, record_header, headers);
    g_mutex_lock(&server->lock);
    if (server->headers)
        g_ptr_array_unref(server->headers);
    server->headers = headers;
    server->n_requests++;
    g_mutex_unlock(&server->lock);

    unsigned int status = server->handler
                              ? server->handler(server->handler_data, connection, method, url)
                              : server->status;
    struct MHD_Response *response =
        MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return ret;
}

bool http_server_start(http_server *server, const char *host, unsigned int status,
                       http_server_handler_fn handler, void *handler_data)
{
    memset(server, 0, sizeof(*server));
    g_mutex_init(&server->lock);
    server->status = status;
    server->handler = handler;
    server->handler_data = handler_data;
    bool is_v6 = strchr(host, ':') != NULL;
    struct sockaddr_in in4 = {.sin_family = AF_INET};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
    const struct sockaddr *addr;
    if (is_v6) {
        if (inet_pton(AF_INET6, host, &in6.sin6_addr) != 1)
            return false;
        addr = (const struct sockaddr *)&in6;
    } else {
        if (inet_pton(AF_INET, host, &in4.sin_addr) != 1)
            return false;
        addr = (const struct sockaddr *)&in4;
    }
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | (is_v6 ? MHD_USE_IPv6 : 0);
    server->daemon = MHD_start_daemon(flags, 0, NULL, NULL, answer, server, MHD_OPTION_SOCK_ADDR,
                                      addr, MHD_OPTION_END);
    if (!server->daemon) {
        g_mutex_clear(&server->lock);
        return false;
    }
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(server->daemon, MHD_DAEMON_INFO_BIND_PORT);
    server->port = info ? info->port : 0;
    snprintf(server->base_url, sizeof(server->base_url), is_v6 ? "http://[%s]:%u" : "http://%s:%u",
             host, server->port);
    return server->port != 0;
}

void http_server_stop(http_server *server)
{
    if (server->daemon)
        MHD_stop_daemon(server->daemon);
    server->daemon = NULL;
    if (server->headers)
        g_ptr_array_unref(server->headers);
    server->headers = NULL;
    g_mutex_clear(&server->lock);
}

const char *http_server_header(http_server *server, const char *key)
{
    const char *value = NULL;
    g_mutex_lock(&server->lock);
    for (guint i = 0; server->headers && i + 1 < server->headers->len && !value; i += 2) {
        if (strcasecmp(g_ptr_array_index(server->headers, i), key) == 0)
            value = g_ptr_array_index(server->headers, i + 1);
    }
    g_mutex_unlock(&server->lock);
    return value; /* stays valid until the next request or stop */
}

size_t http_server_header_count(http_server *server, const char *key)
{
    size_t n = 0;
    g_mutex_lock(&server->lock);
    for (guint i = 0; server->headers && i + 1 < server->headers->len; i += 2) {
        if (strcasecmp(g_ptr_array_index(server->headers, i), key) == 0)
            n++;
    }
    g_mutex_unlock(&server->lock);
    return n;
}

size_t http_server_requests(http_server *server)
{
    g_mutex_lock(&server->lock);
    size_t n = server->n_requests;
    g_mutex_unlock(&server->lock);
    return n;
}
