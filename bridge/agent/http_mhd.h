/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/http_mhd.h: the agent's HTTP servers on libmicrohttpd
 * (docs/agent.md):
 *
 *   receivers  POST bodies of the formats in decode.c's table (OTLP/HTTP on
 *              /v1/traces, Zipkin on /api/v2/spans and /api/v1/spans, the
 *              Jaeger collector's /api/traces). Bodies over --max-request-bytes
 *              get 413 (also when they inflate past it), malformed ones 400
 *              with the reason, content types without a decoder 415; while a
 *              destination queue is full, 503 with Retry-After: 1 (OTLP
 *              clients and Zipkin's retry). OTLP answers as the OTLP/HTTP
 *              specification says: 200 with an ExportTraceServiceResponse
 *              (partialSuccess when some spans were rejected), 400 with a
 *              google.rpc.Status for a wholly bad request.
 *   sampling   GET /sampling?service=NAME and /?service=NAME (jaeger-agent's
 *              two endpoints) from a strategies file or a collector's
 *              sampling URL (proxied, the last good answer per service kept)
 *   metrics    GET /metrics (Prometheus text) and /healthz
 *
 * Each server listens on a socket this file binds (so `[v6]:port` and port 0
 * work), and runs libmicrohttpd's internal threads. Locking: the handlers
 * use only thread-safe parts (pipeline, counters); the sampling table is
 * swapped under a mutex on SIGHUP.
 */
#ifndef TW_BRIDGE_AGENT_HTTP_MHD_H
#define TW_BRIDGE_AGENT_HTTP_MHD_H

#include "agent/net.h"

typedef struct twa_http twa_http;

typedef enum twa_http_kind { TWA_HTTP_RECEIVER, TWA_HTTP_SAMPLING, TWA_HTTP_METRICS } twa_http_kind;

typedef struct twa_http_options {
    twa_http_kind kind;
    const char
        *name; /* receiver label ("otlp", "zipkin", "jaeger-http"), or "sampling", "metrics" */
    const char *const *routes; /* receivers: the routes served; NULL-terminated */
    size_t max_request_bytes;
    unsigned int max_connections; /* open at once; more wait in the listen backlog */
    /* A request (headers and body) not received whole within this many ms of
     * its start (the connection's, or the end of the previous request on it)
     * has its connection closed and counted (request_timeouts); 0: no limit. */
    unsigned int request_timeout_ms;
    twa_pipeline *pipeline;
    twa_dest *const *dests; /* metrics and health */
    size_t n_dests;
    const char *strategies_file; /* sampling */
    const char *proxy_url;       /* sampling */
} twa_http_options;

twa_http *twa_http_start(const twa_http_options *o, const struct sockaddr_storage *addr,
                         socklen_t len, char *why, size_t why_size);
void twa_http_address(const twa_http *h, char *out, size_t size);
/* SIGHUP: re-reads the strategies file (the old table stays on error). */
bool twa_http_reload(twa_http *h, char *why, size_t why_size);
/* Stops accepting; waits for the requests being handled. */
void twa_http_stop(twa_http *h);

/* Whether the agent is draining (health answers 503). */
extern atomic_bool twa_draining;

#endif /* TW_BRIDGE_AGENT_HTTP_MHD_H */
