/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/demo/demo.c: see demo.h.
 */
#include "demo.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static sigset_t stop_signals;

static void usage(const char *program, bool needs_backends)
{
    fprintf(stderr, "usage: %s [--port N]%s\n", program,
            needs_backends ? " --backend-a URL --backend-b URL" : "");
    fprintf(stderr, "  (or DEMO_PORT%s; tracing from the JAEGER_* variables)\n",
            needs_backends ? ", DEMO_BACKEND_A_URL, DEMO_BACKEND_B_URL" : "");
}

static bool parse_port(const char *text, unsigned int *port)
{
    char *end = NULL;
    unsigned long value = strtoul(text, &end, 10);
    if (!*text || *end || value > 65535)
        return false;
    *port = (unsigned int)value;
    return true;
}

bool demo_config_parse(int argc, char **argv, bool needs_backends, demo_config *config)
{
    memset(config, 0, sizeof(*config));
    const char *port = getenv("DEMO_PORT");
    config->backend_a = getenv("DEMO_BACKEND_A_URL");
    config->backend_b = getenv("DEMO_BACKEND_B_URL");
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--port") == 0 && value)
            port = value;
        else if (needs_backends && strcmp(argv[i], "--backend-a") == 0 && value)
            config->backend_a = value;
        else if (needs_backends && strcmp(argv[i], "--backend-b") == 0 && value)
            config->backend_b = value;
        else {
            usage(argv[0], needs_backends);
            return false;
        }
        i++;
    }
    if (port && !parse_port(port, &config->port)) {
        fprintf(stderr, "%s: bad port: %s\n", argv[0], port);
        return false;
    }
    if (needs_backends && (!config->backend_a || !config->backend_b)) {
        usage(argv[0], needs_backends);
        return false;
    }
    return true;
}

void demo_block_stop_signals(void)
{
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, NULL);
}

int demo_wait_for_stop(void)
{
    int sig = 0;
    while (sigwait(&stop_signals, &sig) != 0) {
    }
    return sig;
}

tw_tracer *demo_tracer_from_env(const char *service)
{
    tw_error *err = NULL;
    tw_tracer *tracer = tw_tracer_new_from_env(service, &err);
    if (!tracer) {
        fprintf(stderr, "%s: %s\n", service, tw_error_message(err));
        tw_error_free(err);
    }
    return tracer;
}

struct MHD_Daemon *demo_serve(const char *service, unsigned int port,
                              MHD_AccessHandlerCallback handler, void *handler_data)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG,
        (uint16_t)port, NULL, NULL, handler, handler_data, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&addr, MHD_OPTION_END);
    if (!daemon) {
        fprintf(stderr, "%s: cannot listen on 127.0.0.1:%u\n", service, port);
        return NULL;
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    printf("%s listening on http://127.0.0.1:%u\n", service, info ? info->port : port);
    fflush(stdout);
    return daemon;
}

enum MHD_Result demo_respond(struct MHD_Connection *connection, unsigned int status,
                             const char *body)
{
    struct MHD_Response *response =
        MHD_create_response_from_buffer(strlen(body), (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!response)
        return MHD_NO;
    MHD_add_response_header(response, "Content-Type", "text/plain");
    enum MHD_Result ret = MHD_queue_response(connection, status, response);
    MHD_destroy_response(response);
    return ret;
}

int64_t demo_thread_id(void)
{
    return (int64_t)syscall(SYS_gettid);
}
