/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_transports.c: spans per second delivered by each
 * transport to a receiver on loopback (make bench; never make check).
 *
 * Each transport runs behind the same bounded async reporter: the program
 * offers N sampled spans in bursts that fit the queue (so nothing is dropped
 * and the figure is the transport's own throughput), flushes, and divides by
 * the wall time. Receivers are real: a UDP socket counting datagram bytes, a
 * libmicrohttpd server accepting POST bodies and counting bytes, and a file.
 * Bytes received must equal the reporter's bytes sent, so loss shows.
 */
#include <inttypes.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracewire/tracewire.h"
#include "udp_sink.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- receivers --------------------------------------------------------------------------- */

static atomic_uint_fast64_t http_bytes;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
    (void)cls;
    (void)url;
    (void)method;
    (void)version;
    (void)data;
    static int marker;
    if (*state == NULL) { /* headers only: ask for the body */
        *state = &marker;
        return MHD_YES;
    }
    if (*size) {
        atomic_fetch_add(&http_bytes, *size);
        *size = 0;
        return MHD_YES;
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret = MHD_queue_response(c, 202, r);
    MHD_destroy_response(r);
    return ret;
}

typedef struct {
    udp_sink sink;
    atomic_bool stop;
    atomic_uint_fast64_t bytes;
    pthread_t thread;
} udp_counter;

static void *udp_thread(void *arg)
{
    udp_counter *u = arg;
    static uint8_t buf[70000];
    while (!atomic_load(&u->stop)) {
        struct pollfd p = {.fd = u->sink.fd, .events = POLLIN};
        if (poll(&p, 1, 50) <= 0)
            continue;
        ssize_t n = recv(u->sink.fd, buf, sizeof buf, 0);
        if (n > 0)
            atomic_fetch_add(&u->bytes, (uint64_t)n);
    }
    return NULL;
}

/* ---- one run ---------------------------------------------------------------------------- */

typedef tw_reporter *(*reporter_ctor)(const tw_reporter_options *, tw_error **);

static void run(const char *name, reporter_ctor ctor, tw_reporter_options *ro,
                atomic_uint_fast64_t *received, const char *file, int n)
{
    tw_tracer_options *o = tw_tracer_options_new();
    tw_tracer_options_set_service(o, "bench");
    tw_error *err = NULL;
    tw_reporter *r = ctor(ro, &err);
    if (!r) {
        printf("| %-18s | %12s | %s |\n", name, "n/a", tw_error_message(err));
        tw_error_free(err);
        tw_tracer_options_free(o);
        return;
    }
    tw_tracer_options_set_reporter(o, r);
    tw_tracer *t = tw_tracer_new(o, NULL);
    tw_tracer_options_free(o);
    const int burst = 4096;
    double t0 = now_s();
    for (int done = 0; done < n; done += burst) {
        for (int i = 0; i < burst; i++) {
            tw_span *s = tw_span_start(t, "bench-op", NULL);
            tw_span_set_tag_str(s, "component", "bench");
            tw_span_set_tag_int64(s, "i", i);
            tw_span_finish(s);
        }
        tw_tracer_flush(t, 60000);
    }
    double elapsed = now_s() - t0;
    uint64_t sent = tw_reporter_counter(r, TW_COUNTER_SPANS_SENT);
    uint64_t bytes = tw_reporter_counter(r, TW_COUNTER_BYTES_SENT);
    uint64_t lost = tw_reporter_counter(r, TW_COUNTER_DROPPED_QUEUE_FULL) +
                    tw_reporter_counter(r, TW_COUNTER_FAILED_TO_EMIT) +
                    tw_reporter_counter(r, TW_COUNTER_DROPPED_TOO_LARGE);
    tw_tracer_free(t);
    struct timespec settle = {0, 100000000};
    nanosleep(&settle, NULL); /* the receiver reads the last bytes */
    uint64_t got = 0;
    if (received) {
        got = atomic_load(received);
    } else if (file) {
        struct stat st;
        got = stat(file, &st) == 0 ? (uint64_t)st.st_size : 0;
    }
    printf("| %-18s | %12.0f | %10.1f | %10" PRIu64 " | %14s |\n", name, (double)sent / elapsed,
           sent ? (double)bytes / (double)sent : 0.0, lost, got >= bytes ? "all arrived" : "LOSS");
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 200000;
    udp_counter u;
    memset(&u, 0, sizeof u);
    if (!udp_sink_open(&u.sink, "127.0.0.1"))
        return 1;
    pthread_create(&u.thread, NULL, udp_thread, &u);
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
                                            on_request, NULL, MHD_OPTION_END);
    const union MHD_DaemonInfo *info = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
    unsigned int http_port = info ? info->port : 0;
    char file[] = "/tmp/tracewire-bench-XXXXXX";
    int fd = mkstemp(file);
    if (fd >= 0)
        close(fd);

    printf("\nTransports: %d sampled spans each (start + 2 tags + finish), in bursts that fit the "
           "queue, to receivers on loopback\n",
           n);
    printf("| %-18s | %12s | %10s | %10s | %14s |\n", "transport", "spans/s", "bytes/span",
           "not sent", "receiver");
    printf("|--------------------|--------------|------------|------------|----------------|\n");
    char url[128];
    struct {
        const char *name;
        reporter_ctor ctor;
        const char *path;
        tw_otlp_protocol protocol;
    } http[] = {
        {"jaeger-http", tw_reporter_jaeger_http_new, "/api/traces", TW_OTLP_HTTP_JSON},
        {"zipkin", tw_reporter_zipkin_new, "/api/v2/spans", TW_OTLP_HTTP_JSON},
        {"otlp-http", tw_reporter_otlp_http_new, "/v1/traces", TW_OTLP_HTTP_JSON},
        {"otlp-http-proto", tw_reporter_otlp_http_new, "/v1/traces", TW_OTLP_HTTP_PROTOBUF}};
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_agent(ro, "127.0.0.1", u.sink.port);
    run("jaeger-udp", tw_reporter_jaeger_udp_new, ro, &u.bytes, NULL, n);
    tw_reporter_options_free(ro);
    for (size_t i = 0; http_port && i < sizeof http / sizeof http[0]; i++) {
        atomic_store(&http_bytes, 0);
        ro = tw_reporter_options_new();
        snprintf(url, sizeof url, "http://127.0.0.1:%u%s", http_port, http[i].path);
        tw_reporter_options_set_endpoint(ro, url);
        tw_reporter_options_set_otlp_protocol(ro, http[i].protocol);
        run(http[i].name, http[i].ctor, ro, &http_bytes, NULL, n);
        tw_reporter_options_free(ro);
    }
    ro = tw_reporter_options_new();
    tw_reporter_options_set_file_path(ro, file);
    tw_reporter_options_set_max_file_bytes(ro, (size_t)1 << 40);
    run("file (span log)", tw_reporter_file_new, ro, NULL, file, n);
    tw_reporter_options_free(ro);
    unlink(file);

    atomic_store(&u.stop, true);
    pthread_join(u.thread, NULL);
    udp_sink_close(&u.sink);
    if (d)
        MHD_stop_daemon(d);
    return 0;
}
