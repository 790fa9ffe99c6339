/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/demo/demo.h: what the three demo services share: command line and
 * environment, the tracer from the Jaeger variables, a libmicrohttpd server
 * on loopback that reports the port it bound, and a clean stop on SIGTERM or
 * SIGINT that closes the tracer (which flushes every span).
 *
 * The demo: `frontend` serves GET /checkout by calling `backend-a` (GET
 * /price) and `backend-b` (GET /stock) over HTTP with libcurl; backend-b fans
 * its work out on a GLib thread pool. Every process reports to the Jaeger
 * agent named by JAEGER_AGENT_HOST/JAEGER_AGENT_PORT, and together their
 * spans form one trace. tests/demo/demo_trace.c runs it; scripts/demo.sh
 * shows the trace.
 */
#ifndef TW_EXAMPLES_DEMO_H
#define TW_EXAMPLES_DEMO_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include <microhttpd.h>
#include <tracewire/tracewire.h>

typedef struct demo_config {
    unsigned int port;     /* --port N or DEMO_PORT; 0: any free port */
    const char *backend_a; /* --backend-a URL or DEMO_BACKEND_A_URL (frontend only) */
    const char *backend_b; /* --backend-b URL or DEMO_BACKEND_B_URL (frontend only) */
} demo_config;

/* Parses the command line over the environment; prints usage and returns
 * false on a bad argument or a missing backend URL (when @needs_backends). */
bool demo_config_parse(int argc, char **argv, bool needs_backends, demo_config *config);

/* Blocks SIGTERM and SIGINT in the calling thread and in every thread it
 * starts from now on (call first in main), so that demo_wait_for_stop() is
 * the one place that receives them. */
void demo_block_stop_signals(void);

/* A tracer from the JAEGER_* variables; prints the error and returns NULL. */
tw_tracer *demo_tracer_from_env(const char *service);

/* Starts a server on 127.0.0.1:@port (one thread per connection, so each
 * handler may block on its own calls) and prints
 * "<service> listening on http://127.0.0.1:PORT" to stdout. NULL on failure. */
struct MHD_Daemon *demo_serve(const char *service, unsigned int port,
                              MHD_AccessHandlerCallback handler, void *handler_data);

/* Waits for SIGTERM or SIGINT; returns the signal. */
int demo_wait_for_stop(void);

/* Queues a text response; returns what MHD_queue_response returned. */
enum MHD_Result demo_respond(struct MHD_Connection *connection, unsigned int status,
                             const char *body);

/* The calling thread's id (tag demo.thread, so the trace shows where
 * each span ran). */
int64_t demo_thread_id(void);

#endif
