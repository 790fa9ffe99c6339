/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/demo/backend_a.c: the "backend-a" service of the demo (demo.h):
 * GET /price answers a price. Its SERVER span continues the caller's trace
 * (tw_mhd_start_span reads the propagated headers); the lookup is an
 * internal child span, started with no explicit parent: the server span is
 * the active span (tw_scope_activate).
 */
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <tracewire/microhttpd.h>
#include <tracewire/scope.h>

#include "demo.h"

static double look_up_price(tw_tracer *tracer)
{
    tw_span *lookup = tw_span_start(tracer, "price lookup", NULL); /* child of the active span */
    tw_span_set_tag_str(lookup, "db.type", "memory");
    tw_span_set_tag_int64(lookup, "demo.thread", demo_thread_id());
    g_usleep(2000); /* the "database" */
    tw_span_finish(lookup);
    return 42.5;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)req_cls;
    tw_tracer *tracer = cls;
    tw_span *span = tw_mhd_start_span(tracer, connection, method, url);
    tw_span_set_tag_int64(span, "demo.thread", demo_thread_id());
    tw_scope *scope = tw_scope_activate(span, false);

    unsigned int status = 200;
    char body[64];
    if (strcmp(method, "GET") == 0 && strcmp(url, "/price") == 0) {
        snprintf(body, sizeof(body), "price=%.2f\n", look_up_price(tracer));
    } else {
        status = 404;
        snprintf(body, sizeof(body), "no such resource\n");
    }

    tw_scope_close(scope);
    enum MHD_Result ret = demo_respond(connection, status, body);
    tw_mhd_finish_span(span, status);
    return ret;
}

int main(int argc, char **argv)
{
    demo_block_stop_signals();
    demo_config config;
    if (!demo_config_parse(argc, argv, false, &config))
        return 2;
    tw_tracer *tracer = demo_tracer_from_env("backend-a");
    if (!tracer)
        return 1;
    struct MHD_Daemon *daemon = demo_serve("backend-a", config.port, handle, tracer);
    if (!daemon) {
        tw_tracer_free(tracer);
        return 1;
    }
    demo_wait_for_stop();
    MHD_stop_daemon(daemon); /* waits for the handlers: every span is finished */
    tw_tracer_free(tracer);  /* closes: drains the queue and flushes to the agent */
    return 0;
}
