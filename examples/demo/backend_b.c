/* SPDX-License-Identifier: Apache-2.0 */
/*
 * examples/demo/backend_b.c: the "backend-b" service of the demo (demo.h):
 * GET /stock asks three warehouses at once, on a GLib thread pool. The pool
 * is tracewire's GThreadPool wrapper (tracewire/glib.h): each pushed item
 * carries the context active where it was pushed (the request's SERVER
 * span), so the spans the workers start with no explicit parent are that
 * span's children although they run on other threads.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <tracewire/glib.h>
#include <tracewire/microhttpd.h>
#include <tracewire/scope.h>

#include "demo.h"

#define N_WAREHOUSES 3 /* tests/demo/demo_trace.c checks this many pool spans */

/* One request's fan-out: the workers count down, the handler waits. The lock
 * is a pthread mutex rather than a GMutex on purpose: GLib's futex-based
 * GMutex, and so the pool's own queue, are invisible to ThreadSanitizer,
 * which would report the hand-off of a job to a worker as a data race. */
static pthread_mutex_t fan_out_lock = PTHREAD_MUTEX_INITIALIZER; /* guards fan_outs and jobs */

typedef struct fan_out {
    pthread_cond_t done;
    int remaining;
    int in_stock;
} fan_out;

typedef struct warehouse_job {
    fan_out *request;
    int index;
} warehouse_job;

static tw_tracer *tracer;

/* Runs on a pool thread, under the context captured at push time. */
static void check_warehouse(gpointer data, gpointer user_data)
{
    (void)user_data;
    pthread_mutex_lock(&fan_out_lock);
    warehouse_job job = *(warehouse_job *)data;
    pthread_mutex_unlock(&fan_out_lock);

    char name[32];
    snprintf(name, sizeof(name), "check warehouse %d", job.index + 1);
    tw_span *span = tw_span_start(tracer, name, NULL); /* child of the captured context */
    tw_span_set_tag_int64(span, "warehouse", job.index + 1);
    tw_span_set_tag_int64(span, "demo.thread", demo_thread_id());
    g_usleep((gulong)(1000 * (job.index + 1)));
    int count = 10 * (job.index + 1);
    tw_span_set_tag_int64(span, "items", count);
    tw_span_finish(span);

    pthread_mutex_lock(&fan_out_lock);
    job.request->in_stock += count;
    if (--job.request->remaining == 0)
        pthread_cond_signal(&job.request->done);
    pthread_mutex_unlock(&fan_out_lock);
}

static int count_stock(tw_glib_thread_pool *pool)
{
    fan_out request = {.remaining = N_WAREHOUSES};
    pthread_cond_init(&request.done, NULL);
    warehouse_job jobs[N_WAREHOUSES];
    pthread_mutex_lock(&fan_out_lock);
    for (int i = 0; i < N_WAREHOUSES; i++)
        jobs[i] = (warehouse_job){&request, i};
    pthread_mutex_unlock(&fan_out_lock);
    for (int i = 0; i < N_WAREHOUSES; i++) {
        if (!tw_glib_thread_pool_push(pool, &jobs[i], NULL)) {
            /* Not queued (out of memory): do the work here, still traced. */
            check_warehouse(&jobs[i], NULL);
        }
    }
    pthread_mutex_lock(&fan_out_lock);
    while (request.remaining > 0)
        pthread_cond_wait(&request.done, &fan_out_lock);
    int in_stock = request.in_stock;
    pthread_mutex_unlock(&fan_out_lock);
    pthread_cond_destroy(&request.done);
    return in_stock;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *connection, const char *url,
                              const char *method, const char *version, const char *upload_data,
                              size_t *upload_data_size, void **req_cls)
{
    (void)version;
    (void)upload_data;
    (void)upload_data_size;
    (void)req_cls;
    tw_glib_thread_pool *pool = cls;
    tw_span *span = tw_mhd_start_span(tracer, connection, method, url);
    tw_span_set_tag_int64(span, "demo.thread", demo_thread_id());
    tw_scope *scope = tw_scope_activate(span, false);

    unsigned int status = 200;
    char body[64];
    if (strcmp(method, "GET") == 0 && strcmp(url, "/stock") == 0) {
        snprintf(body, sizeof(body), "stock=%d\n", count_stock(pool));
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
    tracer = demo_tracer_from_env("backend-b");
    if (!tracer)
        return 1;
    GError *error = NULL;
    tw_glib_thread_pool *pool =
        tw_glib_thread_pool_new(tracer, check_warehouse, NULL, N_WAREHOUSES, FALSE, &error);
    if (!pool) {
        fprintf(stderr, "backend-b: no thread pool: %s\n", error ? error->message : "?");
        g_clear_error(&error);
        tw_tracer_free(tracer);
        return 1;
    }
    struct MHD_Daemon *daemon = demo_serve("backend-b", config.port, handle, pool);
    int rc = 1;
    if (daemon) {
        demo_wait_for_stop();
        MHD_stop_daemon(daemon); /* waits for the handlers, which wait for their jobs */
        rc = 0;
    }
    tw_glib_thread_pool_free(pool, FALSE, TRUE);
    tw_tracer_free(tracer); /* closes: drains the queue and flushes to the agent */
    return rc;
}
