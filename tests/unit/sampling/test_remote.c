/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/sampling/test_remote.c: suite "sampling/remote": the remote
 * sampler against a real HTTP server on loopback (libmicrohttpd) serving
 * strategies the test changes: the first poll applies at creation, changes
 * are followed, failures and garbage keep the last good strategy, an absent
 * endpoint leaves the initial sampler, and the service name is escaped.
 * Waiting is bounded polling of the sampler's counters, never a fixed sleep.
 */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "report/bounded.h"
#include "tracewire/tracewire.h"

/* ---- a strategy server ------------------------------------------------------------------- */

typedef struct {
    struct MHD_Daemon *daemon;
    unsigned int port;
    pthread_mutex_t lock;
    char body[4096];       /* guarded by lock */
    unsigned int status;   /* guarded by lock */
    char service[128];     /* guarded by lock: the last ?service= value */
    unsigned int requests; /* guarded by lock */
} strategy_server;

static strategy_server server;

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **state)
{
    (void)url;
    (void)method;
    (void)version;
    (void)upload;
    (void)upload_size;
    (void)state;
    strategy_server *s = cls;
    pthread_mutex_lock(&s->lock);
    const char *service = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "service");
    snprintf(s->service, sizeof s->service, "%s", service ? service : "");
    s->requests++;
    struct MHD_Response *r =
        MHD_create_response_from_buffer(strlen(s->body), s->body, MHD_RESPMEM_MUST_COPY);
    unsigned int status = s->status;
    pthread_mutex_unlock(&s->lock);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static void serve(unsigned int status, const char *body)
{
    pthread_mutex_lock(&server.lock);
    server.status = status;
    snprintf(server.body, sizeof server.body, "%s", body);
    pthread_mutex_unlock(&server.lock);
}

static int suite_init(void)
{
    pthread_mutex_init(&server.lock, NULL);
    serve(200, "{}");
    server.daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL, answer,
                                     &server, MHD_OPTION_END);
    if (!server.daemon)
        return 1;
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(server.daemon, MHD_DAEMON_INFO_BIND_PORT);
    server.port = info ? info->port : 0;
    return server.port ? 0 : 1;
}

static int suite_cleanup(void)
{
    MHD_stop_daemon(server.daemon);
    pthread_mutex_destroy(&server.lock);
    return 0;
}

static tw_sampler *remote(const char *service, unsigned int port, tw_sampler *initial,
                          unsigned int refresh_ms)
{
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/sampling", port);
    tw_remote_sampler_options *o = tw_remote_sampler_options_new(service);
    tw_remote_sampler_options_set_endpoint(o, url);
    if (initial)
        tw_remote_sampler_options_set_initial_sampler(o, initial);
    tw_remote_sampler_options_set_refresh_interval_ms(o, refresh_ms);
    tw_remote_sampler_options_set_first_poll_timeout_ms(o, 2000);
    tw_sampler *s = tw_sampler_remote_new(o, NULL);
    tw_remote_sampler_options_free(o);
    return s;
}

/* Waits (bounded, 5 s) until the counter reaches @at_least. */
static bool wait_counter(tw_sampler *s, tw_remote_counter c, uint64_t at_least)
{
    for (int i = 0; i < 5000; i++) {
        if (tw_sampler_remote_counter(s, c) >= at_least)
            return true;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return false;
}

static const char ALL[] =
    "{\"strategyType\":\"PROBABILISTIC\",\"probabilisticSampling\":{\"samplingRate\":1}}";
static const char NONE[] = "{\"strategyType\":0,\"probabilisticSampling\":{\"samplingRate\":0}}";

static void test_first_poll_applies_at_creation(void)
{
    serve(200, ALL);
    tw_sampler *s = remote("checkout service", server.port, tw_sampler_const_new(false), 60000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_STRING_EQUAL(tw_sampler_type(s), "remote");
    /* No wait: the served strategy is in force as soon as the sampler exists. */
    CU_ASSERT(tw_sampler_is_sampled(s, 0, 0x7ffffffffffffff0ULL, "op"));
    CU_ASSERT_EQUAL(tw_sampler_remote_counter(s, TW_REMOTE_UPDATES_OK), 1);
    pthread_mutex_lock(&server.lock);
    CU_ASSERT_STRING_EQUAL(server.service, "checkout service"); /* escaped and decoded */
    pthread_mutex_unlock(&server.lock);
    tw_sampler_free(s);
}

static void test_changes_are_followed(void)
{
    serve(200, NONE);
    tw_sampler *s = remote("svc", server.port, NULL, 5);
    CU_ASSERT_FALSE(tw_sampler_is_sampled(s, 0, 1, "op"));
    serve(200, "{\"strategyType\":\"RATE_LIMITING\","
               "\"rateLimitingSampling\":{\"maxTracesPerSecond\":100}}");
    CU_ASSERT(wait_counter(s, TW_REMOTE_UPDATES_OK, 2));
    CU_ASSERT(tw_sampler_is_sampled(s, 0, 1, "op")); /* the bucket starts full */
    serve(200, "{\"operationSampling\":{\"defaultSamplingProbability\":0,"
               "\"perOperationStrategies\":[{\"operation\":\"hot\","
               "\"probabilisticSampling\":{\"samplingRate\":1}}]}}");
    CU_ASSERT(wait_counter(s, TW_REMOTE_UPDATES_OK, 3));
    CU_ASSERT(tw_sampler_is_sampled(s, 0, 0x7fffffffffffffffULL, "hot"));
    CU_ASSERT_FALSE(tw_sampler_is_sampled(s, 0, 0x7fffffffffffffffULL, "cold"));
    tw_sampler_free(s);
}

static void test_failures_keep_the_last_good_strategy(void)
{
    serve(200, ALL);
    tw_sampler *s = remote("svc", server.port, tw_sampler_const_new(false), 5);
    CU_ASSERT(tw_sampler_is_sampled(s, 0, 1, "op"));
    serve(200, "{\"strategyType\":\"PROBABILISTIC\",\"probabilisticSampling\":");
    CU_ASSERT(wait_counter(s, TW_REMOTE_UPDATES_FAILED, 1));
    CU_ASSERT(tw_sampler_is_sampled(s, 0, 1, "op"));
    serve(500, "oops");
    uint64_t failed = tw_sampler_remote_counter(s, TW_REMOTE_QUERIES_FAILED);
    CU_ASSERT(wait_counter(s, TW_REMOTE_QUERIES_FAILED, failed + 1));
    CU_ASSERT(tw_sampler_is_sampled(s, 0, 1, "op"));
    CU_ASSERT_EQUAL(tw_sampler_remote_counter(s, TW_REMOTE_UPDATES_OK), 1);
    tw_sampler_free(s);
}

static void test_absent_endpoint_leaves_initial_sampler(void)
{
    /* Port 9 (discard) on loopback: nothing listens, the connection is refused. */
    tw_sampler *s = remote("svc", 9, tw_sampler_const_new(true), 60000);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT(tw_sampler_is_sampled(s, 0, 1, "op"));
    CU_ASSERT_EQUAL(tw_sampler_remote_counter(s, TW_REMOTE_QUERIES_FAILED), 1);
    tw_sampler_free(s);
    tw_remote_sampler_options *o = tw_remote_sampler_options_new("svc");
    tw_sampler *defaulted = tw_sampler_remote_new(o, NULL); /* default endpoint: 5778 */
    CU_ASSERT_PTR_NOT_NULL(defaulted);
    tw_sampler_free(defaulted);
    tw_remote_sampler_options_free(o);
    CU_ASSERT_PTR_NULL(tw_remote_sampler_options_new(""));
    CU_ASSERT_PTR_NULL(tw_sampler_remote_new(NULL, NULL));
}

static void test_tracer_tags_follow_the_served_strategy(void)
{
    serve(200, ALL);
    tw_tracer_options *opts = tw_tracer_options_new();
    tw_tracer_options_set_service(opts, "svc");
    tw_tracer_options_set_sampler(opts, remote("svc", server.port, NULL, 60000));
    tw_reporter *memory = tw_reporter_memory_new(0);
    tw_tracer_options_set_reporter(opts, memory);
    tw_tracer *t = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    tw_span_finish(tw_span_start(t, "root", NULL));
    tw_value v;
    const tw_finished_span *f = tw_memory_reporter_span(memory, 0);
    CU_ASSERT(tw_finished_span_find_tag(f, "sampler.type", &v) &&
              strcmp(v.as.str, "probabilistic") == 0);
    CU_ASSERT(tw_finished_span_find_tag(f, "sampler.param", &v) && v.as.dbl == 1.0);
    tw_tracer_free(t);
}

/* A forked child has no poller thread of its own until the sampler starts
 * one: the child still follows the served strategy, decides, and frees the
 * sampler (which must not wait for the parent's thread). */
static void test_forked_child_polls_on_its_own_thread(void)
{
    serve(200, ALL);
    tw_sampler *s = remote("forked", server.port, NULL, 20);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT(wait_counter(s, TW_REMOTE_QUERIES_OK, 2));
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        alarm(20);
        if (!CHILD_CAN_START_THREADS) { /* report/bounded.h: not under TSan */
            tw_sampler_free(s);         /* still: free does not wait for the parent's poller */
            _exit(0);
        }
        uint64_t at_fork = tw_sampler_remote_counter(s, TW_REMOTE_QUERIES_OK);
        bool sampled = tw_sampler_is_sampled(s, 0, 12345, "op");
        bool polled = wait_counter(s, TW_REMOTE_QUERIES_OK, at_fork + 2);
        tw_sampler_free(s);
        _exit(sampled && polled ? 0 : 1);
    }
    CU_ASSERT_EQUAL(wait_child_bounded(pid, 30000), 0);
    CU_ASSERT(tw_sampler_is_sampled(s, 0, 12345, "op"));
    tw_sampler_free(s);
}

/* An endpoint that takes the connection and never answers (a listening
 * socket nobody accepts on): freeing the sampler while its query waits ends
 * the query at once, not at its timeout (here 3 s, up to 10 s). */
static void test_free_does_not_wait_for_a_query_in_flight(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    socklen_t len = sizeof addr;
    CU_ASSERT_FATAL(fd >= 0 && bind(fd, (struct sockaddr *)&addr, sizeof addr) == 0 &&
                    listen(fd, 8) == 0 && getsockname(fd, (struct sockaddr *)&addr, &len) == 0);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/sampling", ntohs(addr.sin_port));
    tw_remote_sampler_options *o = tw_remote_sampler_options_new("stuck");
    tw_remote_sampler_options_set_endpoint(o, url);
    tw_remote_sampler_options_set_refresh_interval_ms(o, 3000);
    tw_remote_sampler_options_set_first_poll_timeout_ms(o, 0);
    tw_sampler *s = tw_sampler_remote_new(o, NULL);
    tw_remote_sampler_options_free(o);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    /* The poller's query is in flight once its connection waits to be
     * accepted (after one refresh interval). */
    struct pollfd p = {.fd = fd, .events = POLLIN};
    CU_ASSERT_FATAL(poll(&p, 1, 10000) == 1);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    tw_sampler_free(s);
    clock_gettime(CLOCK_MONOTONIC, &b);
    long elapsed_ms = (long)(b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
    CU_ASSERT(elapsed_ms < 1500);
    if (elapsed_ms >= 1500)
        fprintf(stderr, "free took %ld ms\n", elapsed_ms);
    close(fd);
}

void tw_test_register(void)
{
    CU_pSuite suite = CU_add_suite("sampling/remote", suite_init, suite_cleanup);
    CU_add_test(suite, "first_poll_applies_at_creation", test_first_poll_applies_at_creation);
    CU_add_test(suite, "changes_are_followed", test_changes_are_followed);
    CU_add_test(suite, "failures_keep_the_last_good_strategy",
                test_failures_keep_the_last_good_strategy);
    CU_add_test(suite, "absent_endpoint_leaves_initial_sampler",
                test_absent_endpoint_leaves_initial_sampler);
    CU_add_test(suite, "tracer_tags_follow_the_served_strategy",
                test_tracer_tags_follow_the_served_strategy);
    CU_add_test(suite, "forked_child_polls_on_its_own_thread",
                test_forked_child_polls_on_its_own_thread);
    CU_add_test(suite, "free_does_not_wait_for_a_query_in_flight",
                test_free_does_not_wait_for_a_query_in_flight);
}
