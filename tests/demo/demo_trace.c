/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/demo/demo_trace.c: runs the three-process demo (examples/demo/) and
 * checks the one trace it produces; `make check` runs it, and
 * scripts/demo.sh runs it to show the trace.
 *
 * It listens on a loopback UDP port as the Jaeger agent (tests/unit/
 * udp_sink.c), starts backend-a and backend-b on ephemeral loopback ports
 * (each prints the port it bound, so there is no race for a "free" port),
 * then the frontend pointed at them, all with JAEGER_AGENT_PORT set to the
 * sink. It sends one request to the frontend through libcurl instrumented by
 * its own tracer (service demo-driver; a memory reporter for the checks and
 * the Dapper-style span log, spans.log), so the trace's root is this
 * program's CLIENT span. Then it stops the processes with SIGTERM (each
 * closes its tracer, which flushes), writes every datagram the agent port
 * received to agent.thrift (the agent's emitBatch messages, as they came),
 * and draws the trace with `tracewire show --trace PREFIX spans.log
 * agent.thrift` (the bridge's view: docs/views.md). It decodes every datagram
 * itself with the c_glib code generated from the Jaeger IDL
 * (tests/unit/jaeger_decode.c) and checks the trace: one trace id, unique
 * span ids, exactly one root (ours), no orphans, kinds and services and
 * parents exactly as the demo's call graph says, the pool's spans children
 * of backend-b's server span while running on other threads, each server
 * span inside its client span, no errors; and that `tracewire show` found
 * that trace with every span. The files stay in TW_DEMO_OUT when it is set
 * (scripts/demo.sh sets it), else in a temporary directory removed at exit.
 *
 * Bounded: every wait has a timeout, a watchdog (alarm, TW_DEMO_TIMEOUT_S,
 * default 60 s) kills the children and fails, and the children get SIGKILL
 * if this process dies (PR_SET_PDEATHSIG).
 *
 * Exit status (automake): 0 pass, 1 the trace is wrong, 77 skipped
 * (configure did not find libmicrohttpd, so the demo is not built), 99 the
 * harness itself failed (a process would not start).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "jaeger_decode.h"
#include "tracewire/curl.h"
#include "tracewire/tracewire.h"
#include "udp_sink.h"

#ifndef TW_TRACEWIRE
#error "TW_TRACEWIRE must name the built tracewire command (examples/Makefile.inc sets it)"
#endif

#define N_POOL_SPANS 3 /* backend-b's fan-out (examples/demo/backend_b.c) */
#define READY_TIMEOUT_MS 15000
#define EXIT_TIMEOUT_MS 15000

extern char **environ;

/* ---- child processes ------------------------------------------------------------------------ */

typedef struct child {
    const char *name;
    pid_t pid;
    int out_fd;    /* the read end of its stdout */
    char url[128]; /* "http://127.0.0.1:PORT", from its ready line */
    int status;    /* from waitpid */
    bool is_reaped;
} child;

enum { BACKEND_A, BACKEND_B, FRONTEND, N_CHILDREN };
static child children[N_CHILDREN] = {
    {.name = "backend-a", .pid = -1, .out_fd = -1},
    {.name = "backend-b", .pid = -1, .out_fd = -1},
    {.name = "frontend", .pid = -1, .out_fd = -1},
};

/* The watchdog: async-signal-safe only. */
static void on_watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL: demo_trace: watchdog expired; killing the demo processes\n";
    for (int i = 0; i < N_CHILDREN; i++) {
        if (children[i].pid > 0 && !children[i].is_reaped)
            kill(children[i].pid, SIGKILL);
    }
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof(msg) - 1);
    (void)ignored;
    _exit(1);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Variables the driver sets for the demo processes; the caller's values of
 * these are dropped (a JAEGER_SERVICE_NAME would name all three services the
 * same). Other JAEGER_* variables pass through (JAEGER_PROPAGATION=b3 runs the
 * demo with B3 headers). */
static const char *const controlled[] = {
    "JAEGER_SERVICE_NAME=", "JAEGER_AGENT_HOST=",    "JAEGER_AGENT_PORT=",
    "JAEGER_SAMPLER_TYPE=", "JAEGER_SAMPLER_PARAM=", "JAEGER_REPORTER_FLUSH_INTERVAL=",
    "JAEGER_ENDPOINT="};

static bool is_controlled(const char *entry)
{
    for (size_t i = 0; i < sizeof(controlled) / sizeof(controlled[0]); i++) {
        if (strncmp(entry, controlled[i], strlen(controlled[i])) == 0)
            return true;
    }
    return false;
}

static char **child_environment(unsigned int agent_port)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 8, sizeof(*env));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_controlled(environ[i]))
            env[k++] = strdup(environ[i]);
    }
    char port[64];
    snprintf(port, sizeof(port), "JAEGER_AGENT_PORT=%u", agent_port);
    env[k++] = strdup(port);
    env[k++] = strdup("JAEGER_AGENT_HOST=127.0.0.1");
    env[k++] = strdup("JAEGER_SAMPLER_TYPE=const");
    env[k++] = strdup("JAEGER_SAMPLER_PARAM=1");
    env[k++] = strdup("JAEGER_REPORTER_FLUSH_INTERVAL=100");
    env[k] = NULL;
    return env;
}

static void free_environment(char **env)
{
    for (size_t i = 0; env && env[i]; i++)
        free(env[i]);
    free(env);
}

static bool spawn(child *c, const char *path, char *const argv[], char *const envp[])
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        perror("demo_trace: pipe2");
        return false;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        perror("demo_trace: fork");
        close(fds[0]);
        close(fds[1]);
        return false;
    }
    if (pid == 0) {
        /* Only async-signal-safe calls until exec. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            _exit(127);
        dup2(fds[1], STDOUT_FILENO);
        execve(path, argv, envp);
        _exit(127);
    }
    close(fds[1]);
    c->pid = pid;
    c->out_fd = fds[0];
    return true;
}

/* Reads the ready line "<name> listening on http://127.0.0.1:PORT". */
static bool await_ready(child *c)
{
    char line[256];
    size_t len = 0;
    int64_t deadline = now_ms() + READY_TIMEOUT_MS;
    while (len < sizeof(line) - 1) {
        int64_t left = deadline - now_ms();
        struct pollfd p = {.fd = c->out_fd, .events = POLLIN};
        if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
            fprintf(stderr, "demo_trace: %s did not report its port within %d ms\n", c->name,
                    READY_TIMEOUT_MS);
            return false;
        }
        ssize_t got = read(c->out_fd, line + len, 1);
        if (got <= 0) {
            fprintf(stderr, "demo_trace: %s exited before reporting its port\n", c->name);
            return false;
        }
        if (line[len] == '\n')
            break;
        len++;
    }
    line[len] = '\0';
    const char *at = strstr(line, "listening on ");
    if (!at || strlen(at + 13) >= sizeof(c->url)) {
        fprintf(stderr, "demo_trace: unexpected ready line from %s: %s\n", c->name, line);
        return false;
    }
    strcpy(c->url, at + 13);
    fcntl(c->out_fd, F_SETFL, fcntl(c->out_fd, F_GETFL) | O_NONBLOCK);
    printf("demo: %-9s  pid %-7d %s\n", c->name, (int)c->pid, c->url);
    return true;
}

/* Forwards what a process wrote to stdout after its ready line (its logs,
 * JAEGER_REPORTER_LOG_SPANS lines), so its pipe never fills up and blocks it.
 * Non-blocking reads; called while waiting and once more after it exited. */
static void drain(child *c)
{
    char buf[4096];
    while (c->out_fd >= 0) {
        ssize_t got = read(c->out_fd, buf, sizeof(buf));
        if (got <= 0)
            break;
        printf("[%s] %.*s", c->name, (int)got, buf);
        if (buf[got - 1] != '\n')
            printf("\n");
    }
}

/* SIGTERM to all, then wait for each (SIGKILL after EXIT_TIMEOUT_MS). */
static bool stop_all(void)
{
    for (int i = 0; i < N_CHILDREN; i++) {
        if (children[i].pid > 0 && !children[i].is_reaped)
            kill(children[i].pid, SIGTERM);
    }
    bool is_clean = true;
    int64_t deadline = now_ms() + EXIT_TIMEOUT_MS;
    for (int i = 0; i < N_CHILDREN; i++) {
        child *c = &children[i];
        if (c->pid <= 0 || c->is_reaped)
            continue;
        while (!c->is_reaped) {
            pid_t got = waitpid(c->pid, &c->status, WNOHANG);
            if (got == c->pid) {
                c->is_reaped = true;
            } else if (got < 0 && errno != EINTR) {
                c->is_reaped = true;
                c->status = -1;
            } else if (now_ms() > deadline) {
                fprintf(stderr, "FAIL: %s did not exit within %d ms of SIGTERM: killed\n", c->name,
                        EXIT_TIMEOUT_MS);
                kill(c->pid, SIGKILL);
                waitpid(c->pid, &c->status, 0);
                c->is_reaped = true;
                is_clean = false;
            } else {
                for (int j = 0; j < N_CHILDREN; j++)
                    drain(&children[j]);
                struct timespec pause = {0, 10 * 1000 * 1000};
                nanosleep(&pause, NULL);
            }
        }
        drain(c);
        if (c->out_fd >= 0)
            close(c->out_fd);
        c->out_fd = -1;
        if (!WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0) {
            fprintf(stderr, "FAIL: %s did not exit cleanly (status 0x%x)\n", c->name, c->status);
            is_clean = false;
        }
    }
    return is_clean;
}

/* ---- the collected spans -------------------------------------------------------------------- */

typedef struct demo_span {
    char *service;
    char *operation;
    uint64_t trace_hi, trace_lo, span_id, parent_id;
    int64_t start_us, duration_us;
    char *kind;          /* span.kind, NULL for internal */
    char *component;     /* NULL if none */
    char *http_url;      /* NULL if none */
    int64_t status_code; /* -1 if none */
    int64_t thread_id;   /* demo.thread tag, -1 if none */
    bool is_error;
} demo_span;

typedef struct span_set {
    demo_span *spans;
    size_t n;
} span_set;

static demo_span *add_span(span_set *set)
{
    set->spans = realloc(set->spans, (set->n + 1) * sizeof(*set->spans));
    demo_span *s = &set->spans[set->n++];
    memset(s, 0, sizeof(*s));
    s->status_code = -1;
    s->thread_id = -1;
    return s;
}

static void span_set_free(span_set *set)
{
    for (size_t i = 0; i < set->n; i++) {
        free(set->spans[i].service);
        free(set->spans[i].operation);
        free(set->spans[i].kind);
        free(set->spans[i].component);
        free(set->spans[i].http_url);
    }
    free(set->spans);
}

static void take_tag(demo_span *s, const char *key, bool is_str, const char *str, int64_t i64,
                     bool is_bool, bool boolean)
{
    if (is_str && strcmp(key, "span.kind") == 0)
        s->kind = strdup(str);
    else if (is_str && strcmp(key, "component") == 0)
        s->component = strdup(str);
    else if (is_str && strcmp(key, "http.url") == 0)
        s->http_url = strdup(str);
    else if (!is_str && !is_bool && strcmp(key, "http.status_code") == 0)
        s->status_code = i64;
    else if (!is_str && !is_bool && strcmp(key, "demo.thread") == 0)
        s->thread_id = i64;
    else if (is_bool && strcmp(key, "error") == 0)
        s->is_error = boolean;
}

static bool add_datagram(span_set *set, const uint8_t *data, size_t len)
{
    TwireJaegerBatch *batch = tw_test_decode_emit_batch(data, len);
    if (!batch)
        return false;
    for (guint i = 0; batch->spans && i < batch->spans->len; i++) {
        const TwireJaegerSpan *js = g_ptr_array_index(batch->spans, i);
        demo_span *s = add_span(set);
        s->service = strdup(batch->process->serviceName);
        s->operation = strdup(js->operationName);
        s->trace_hi = (uint64_t)js->traceIdHigh;
        s->trace_lo = (uint64_t)js->traceIdLow;
        s->span_id = (uint64_t)js->spanId;
        s->parent_id = (uint64_t)js->parentSpanId;
        s->start_us = js->startTime;
        s->duration_us = js->duration;
        for (guint t = 0; js->tags && t < js->tags->len; t++) {
            const TwireJaegerTag *tag = g_ptr_array_index(js->tags, t);
            take_tag(s, tag->key, tag->vType == TWIRE_JAEGER_TAG_TYPE_STRING, tag->vStr, tag->vLong,
                     tag->vType == TWIRE_JAEGER_TAG_TYPE_BOOL, tag->vBool);
        }
    }
    g_object_unref(batch);
    return true;
}

static void add_finished(span_set *set, const char *service, const tw_finished_span *f)
{
    demo_span *s = add_span(set);
    s->service = strdup(service);
    s->operation = strdup(tw_finished_span_operation(f));
    s->trace_hi = tw_finished_span_trace_id_high(f);
    s->trace_lo = tw_finished_span_trace_id_low(f);
    s->span_id = tw_finished_span_span_id(f);
    s->parent_id = tw_finished_span_parent_id(f);
    s->start_us = tw_finished_span_start_us(f);
    s->duration_us = tw_finished_span_duration_us(f);
    for (size_t t = 0; t < tw_finished_span_tag_count(f); t++) {
        const char *key = NULL;
        tw_value v;
        if (!tw_finished_span_tag(f, t, &key, &v))
            continue;
        /* Read only the union member the type names. */
        bool is_str = v.type == TW_VALUE_STRING, is_bool = v.type == TW_VALUE_BOOL;
        take_tag(s, key, is_str, is_str ? v.as.str : NULL, v.type == TW_VALUE_INT64 ? v.as.i64 : 0,
                 is_bool, is_bool && v.as.boolean);
    }
}

/* ---- the span files and `tracewire show` -------------------------------------------------- */

static char out_dir[480];
static bool is_out_temporary;

/* TW_DEMO_OUT, else a new temporary directory. */
static bool make_out_dir(void)
{
    const char *dir = getenv("TW_DEMO_OUT");
    if (dir && *dir) {
        snprintf(out_dir, sizeof(out_dir), "%s", dir);
        if (mkdir(out_dir, 0755) != 0 && errno != EEXIST) {
            fprintf(stderr, "demo_trace: cannot create %s: %s\n", out_dir, strerror(errno));
            return false;
        }
        /* a run appends to spans.log: start from an empty one */
        char path[512];
        snprintf(path, sizeof(path), "%s/spans.log", out_dir);
        unlink(path);
        return true;
    }
    snprintf(out_dir, sizeof(out_dir), "%s/tracewire-demo.XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(out_dir)) {
        perror("demo_trace: mkdtemp");
        return false;
    }
    is_out_temporary = true;
    return true;
}

static void remove_out_dir(void)
{
    if (!is_out_temporary)
        return;
    const char *files[] = {"spans.log", "agent.thrift"};
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", out_dir, files[i]);
        unlink(path);
    }
    rmdir(out_dir);
}

/* The datagrams the agent port received, one after the other: a stream of
 * emitBatch messages that `tracewire` reads as jaeger-thrift. */
static bool save_datagrams(const udp_sink *sink)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/agent.thrift", out_dir);
    FILE *f = fopen(path, "wb");
    if (!f) {
        fprintf(stderr, "demo_trace: cannot write %s: %s\n", path, strerror(errno));
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < sink->n; i++)
        ok &= fwrite(sink->data[i], 1, sink->len[i], f) == sink->len[i];
    ok &= fclose(f) == 0;
    return ok;
}

/* Runs the tracewire command with @args (NULL-terminated, after the
 * program); its stdout goes to ours, or into @captured (size @size) when
 * that is not NULL. Returns its exit status, or -1 when it did not run. */
static int run_tracewire(char *const args[], char *captured, size_t size)
{
    const char *program = getenv("TW_TRACEWIRE") ? getenv("TW_TRACEWIRE") : TW_TRACEWIRE;
    char *argv[16];
    size_t n = 0;
    argv[n++] = (char *)program;
    for (size_t i = 0; args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    int fds[2] = {-1, -1};
    if (captured && pipe2(fds, O_CLOEXEC) != 0)
        return -1;
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("demo_trace: fork");
        return -1;
    }
    if (pid == 0) {
        if (captured)
            dup2(fds[1], STDOUT_FILENO);
        execv(program, argv);
        _exit(127);
    }
    size_t len = 0;
    if (captured) {
        close(fds[1]);
        ssize_t got;
        while ((got = read(fds[0], captured + len, size - 1 - len)) > 0)
            len += (size_t)got;
        close(fds[0]);
        captured[len] = '\0';
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- the checks ------------------------------------------------------------------------------ */

static int n_failed;

static void check(bool is_ok, const char *what)
{
    printf("%s: %s\n", is_ok ? "ok" : "FAIL", what);
    if (!is_ok)
        n_failed++;
}

static const demo_span *find_one(const span_set *set, const char *service, const char *kind,
                                 const char *op_prefix, uint64_t parent_id, size_t *n_out)
{
    const demo_span *found = NULL;
    size_t n = 0;
    for (size_t i = 0; i < set->n; i++) {
        const demo_span *s = &set->spans[i];
        bool is_kind = kind ? (s->kind && strcmp(s->kind, kind) == 0) : s->kind == NULL;
        if (strcmp(s->service, service) == 0 && is_kind &&
            strncmp(s->operation, op_prefix, strlen(op_prefix)) == 0 &&
            (parent_id == UINT64_MAX || s->parent_id == parent_id)) {
            found = s;
            n++;
        }
    }
    if (n_out)
        *n_out = n;
    return n == 1 || n_out ? found : NULL;
}

static bool starts_with(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A server span lies inside its client span (one host, one clock; 2 ms of
 * slack for the wall-clock start against the monotonic duration). */
static bool is_inside(const demo_span *inner, const demo_span *outer)
{
    const int64_t slack_us = 2000;
    return inner->start_us + slack_us >= outer->start_us &&
           inner->start_us + inner->duration_us <= outer->start_us + outer->duration_us + slack_us;
}

static void check_trace(const span_set *set)
{
    const size_t want = 1 + 3 + 2 + (1 + N_POOL_SPANS);
    char what[256];
    snprintf(what, sizeof(what), "%zu spans collected (want %zu)", set->n, want);
    check(set->n == want, what);

    bool is_one_trace = set->n > 0, is_unique = true, has_no_orphans = true, has_no_error = true;
    size_t n_roots = 0;
    for (size_t i = 0; i < set->n; i++) {
        const demo_span *s = &set->spans[i];
        is_one_trace &=
            s->trace_hi == set->spans[0].trace_hi && s->trace_lo == set->spans[0].trace_lo;
        has_no_error &= !s->is_error;
        if (s->parent_id == 0)
            n_roots++;
        bool has_parent = s->parent_id == 0;
        for (size_t j = 0; j < set->n; j++) {
            if (j != i && set->spans[j].span_id == s->span_id)
                is_unique = false;
            if (set->spans[j].span_id == s->parent_id)
                has_parent = true;
        }
        has_no_orphans &= has_parent;
    }
    check(is_one_trace, "one trace id across the four processes");
    check(is_unique, "span ids are unique");
    check(n_roots == 1, "exactly one root span");
    check(has_no_orphans, "no orphans: every parent id is a reported span");
    check(has_no_error, "no span is marked error");

    const demo_span *root = find_one(set, "demo-driver", "client", "HTTP GET", 0, NULL);
    check(root != NULL, "the root is demo-driver's client span (HTTP GET)");
    if (!root)
        return;
    const demo_span *front =
        find_one(set, "frontend", "server", "GET /checkout", root->span_id, NULL);
    check(front != NULL && starts_with(front->component, "libmicrohttpd") &&
              front->status_code == 200,
          "frontend server span (GET /checkout, 200) is a child of the driver's client span");
    if (!front)
        return;
    check(is_inside(front, root), "frontend server span lies inside the driver's client span");

    size_t n_clients = 0;
    find_one(set, "frontend", "client", "HTTP GET", front->span_id, &n_clients);
    check(n_clients == 2, "frontend has two client spans, children of its server span");

    const char *backends[2] = {"backend-a", "backend-b"};
    const char *paths[2] = {"GET /price", "GET /stock"};
    const child *procs[2] = {&children[BACKEND_A], &children[BACKEND_B]};
    const demo_span *servers[2] = {NULL, NULL};
    for (int b = 0; b < 2; b++) {
        const demo_span *client = NULL;
        for (size_t i = 0; i < set->n; i++) {
            const demo_span *s = &set->spans[i];
            if (strcmp(s->service, "frontend") == 0 && s->kind && strcmp(s->kind, "client") == 0 &&
                s->parent_id == front->span_id && starts_with(s->http_url, procs[b]->url))
                client = s;
        }
        snprintf(what, sizeof(what), "frontend client span to %s (%s, libcurl, 200)", backends[b],
                 procs[b]->url);
        check(client && starts_with(client->component, "libcurl") && client->status_code == 200,
              what);
        if (!client)
            continue;
        servers[b] = find_one(set, backends[b], "server", paths[b], client->span_id, NULL);
        snprintf(what, sizeof(what), "%s server span (%s) is a child of that client span",
                 backends[b], paths[b]);
        check(servers[b] != NULL, what);
        if (servers[b]) {
            snprintf(what, sizeof(what), "%s server span lies inside its client span", backends[b]);
            check(is_inside(servers[b], client), what);
        }
    }
    if (servers[0]) {
        size_t n = 0;
        find_one(set, "backend-a", NULL, "price lookup", servers[0]->span_id, &n);
        check(n == 1, "backend-a has one internal span (price lookup) under its server span");
    }
    if (servers[1]) {
        size_t n = 0, n_other_thread = 0;
        for (size_t i = 0; i < set->n; i++) {
            const demo_span *s = &set->spans[i];
            if (strcmp(s->service, "backend-b") == 0 && !s->kind &&
                s->parent_id == servers[1]->span_id &&
                starts_with(s->operation, "check warehouse")) {
                n++;
                n_other_thread += s->thread_id >= 0 && s->thread_id != servers[1]->thread_id;
            }
        }
        snprintf(what, sizeof(what),
                 "backend-b's %d pool spans (check warehouse) are children of its server span",
                 N_POOL_SPANS);
        check(n == N_POOL_SPANS, what);
        check(n_other_thread == N_POOL_SPANS && servers[1]->thread_id >= 0,
              "...and ran on pool threads, not on the server span's thread");
    }
}

/* ---- main ------------------------------------------------------------------------------------ */

static size_t discard_body(char *data, size_t size, size_t n, void *user_data)
{
    GString *body = user_data;
    g_string_append_len(body, data, (gssize)(size * n));
    return size * n;
}

/* The request to the frontend, in a client span of the driver's own tracer. */
static bool send_request(tw_tracer *tracer, const char *base_url)
{
    char url[192];
    snprintf(url, sizeof(url), "%s/checkout", base_url);
    GString *body = g_string_new(NULL);
    CURL *easy = curl_easy_init();
    curl_easy_setopt(easy, CURLOPT_URL, url);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, discard_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 20000L);
    tw_curl_instrument(tracer, easy, NULL, NULL);
    CURLcode rc = tw_curl_easy_perform(easy);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    tw_curl_easy_cleanup(easy);
    printf("demo: GET %s -> %s, status %ld: %s", url, curl_easy_strerror(rc), status, body->str);
    if (body->len == 0 || body->str[body->len - 1] != '\n')
        printf("\n");
    g_string_free(body, TRUE);
    return rc == CURLE_OK && status == 200;
}

/* The driver's tracer: everything sampled into a memory reporter (for the
 * checks) and into the span log spans.log (for `tracewire show`), and the
 * propagation formats the demo processes use (JAEGER_PROPAGATION passes
 * through to them), so the frontend can read what the driver sends. */
static tw_tracer *driver_tracer(tw_reporter **memory)
{
    tw_tracer_options *opts = tw_tracer_options_new();
    const char *formats = getenv("JAEGER_PROPAGATION");
    if (formats && *formats) {
        tw_error *err = NULL;
        tw_propagator *propagator = tw_propagator_parse(formats, &err);
        if (!propagator) {
            fprintf(stderr, "demo_trace: JAEGER_PROPAGATION: %s\n", tw_error_message(err));
            tw_error_free(err);
            tw_tracer_options_free(opts);
            return NULL;
        }
        tw_tracer_options_set_propagator(opts, propagator);
    }
    tw_tracer_options_set_service(opts, "demo-driver");
    tw_tracer_options_set_sampler(opts, tw_sampler_const_new(true));
    char path[512];
    snprintf(path, sizeof(path), "%s/spans.log", out_dir);
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_file_path(ro, path);
    tw_error *err = NULL;
    tw_reporter *file = tw_reporter_file_new(ro, &err);
    tw_reporter_options_free(ro);
    if (!file) {
        fprintf(stderr, "demo_trace: span log %s: %s\n", path, tw_error_message(err));
        tw_error_free(err);
        tw_tracer_options_free(opts);
        return NULL;
    }
    *memory = tw_reporter_memory_new(0);
    tw_reporter *both[2] = {*memory, file};
    tw_tracer_options_set_reporter(opts, tw_reporter_composite_new(both, 2));
    tw_tracer *tracer = tw_tracer_new(opts, NULL);
    tw_tracer_options_free(opts);
    return tracer;
}

/* TW_DEMO_BUILT is 1 when configure found libmicrohttpd (the Makefile sets it
 * either way); a run-time test keeps every function above compiled and used. */
#ifndef TW_DEMO_BUILT
#error "TW_DEMO_BUILT must be defined to 0 or 1"
#endif

int main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (!TW_DEMO_BUILT) {
        printf("SKIP: configure did not find libmicrohttpd, so examples/demo is not built\n");
        return 77;
    }
    const char *dir = getenv("TW_DEMO_DIR") ? getenv("TW_DEMO_DIR") : TW_DEMO_DIR;
    const char *timeout_env = getenv("TW_DEMO_TIMEOUT_S");
    unsigned int timeout_s = timeout_env ? (unsigned int)strtoul(timeout_env, NULL, 10) : 60;
    signal(SIGALRM, on_watchdog);
    alarm(timeout_s ? timeout_s : 60);
    signal(SIGPIPE, SIG_IGN);

    if (!make_out_dir())
        return 99;
    udp_sink sink;
    if (!udp_sink_open(&sink, "127.0.0.1")) {
        perror("demo_trace: cannot open the UDP sink");
        remove_out_dir();
        return 99;
    }
    fcntl(sink.fd, F_SETFD, FD_CLOEXEC);
    printf("demo: Jaeger agent (UDP sink) on 127.0.0.1:%u\n", sink.port);
    curl_global_init(CURL_GLOBAL_DEFAULT);

    int rc = 99;
    char **env = child_environment(sink.port);
    char paths[N_CHILDREN][512];
    const char *programs[N_CHILDREN] = {"backend-a", "backend-b", "frontend"};
    for (int i = 0; i < N_CHILDREN; i++)
        snprintf(paths[i], sizeof(paths[i]), "%s/%s", dir, programs[i]);
    char *backend_argv[2][4] = {{paths[BACKEND_A], "--port", "0", NULL},
                                {paths[BACKEND_B], "--port", "0", NULL}};
    for (int b = 0; b < 2; b++) {
        if (!spawn(&children[b], paths[b], backend_argv[b], env) || !await_ready(&children[b]))
            goto out_stop;
    }
    char *frontend_argv[] = {paths[FRONTEND],
                             "--port",
                             "0",
                             "--backend-a",
                             children[BACKEND_A].url,
                             "--backend-b",
                             children[BACKEND_B].url,
                             NULL};
    if (!spawn(&children[FRONTEND], paths[FRONTEND], frontend_argv, env) ||
        !await_ready(&children[FRONTEND]))
        goto out_stop;

    tw_reporter *memory = NULL;
    tw_tracer *tracer = driver_tracer(&memory);
    bool is_answered = tracer && send_request(tracer, children[FRONTEND].url);
    bool is_clean = stop_all();

    /* Every process flushed at close, before it exited: the datagrams are in
     * the socket's buffer already; wait a little for stragglers. */
    udp_sink_collect(&sink, SIZE_MAX, 1000);
    span_set set = {0};
    size_t n_bad = 0;
    for (size_t i = 0; i < sink.n; i++)
        n_bad += !add_datagram(&set, sink.data[i], sink.len[i]);
    for (size_t i = 0; tracer && i < tw_memory_reporter_count(memory); i++)
        add_finished(&set, "demo-driver", tw_memory_reporter_span(memory, i));
    printf("demo: %zu datagrams from the three processes, %zu spans in all\n", sink.n, set.n);
    /* The span log is complete once the driver's tracer is closed. */
    if (tracer)
        tw_tracer_close(tracer);
    bool is_saved = save_datagrams(&sink);

    /* Draw the trace with the bridge, from the two span files. */
    const demo_span *root = NULL;
    for (size_t i = 0; i < set.n; i++) {
        if (set.spans[i].parent_id == 0 && strcmp(set.spans[i].service, "demo-driver") == 0)
            root = &set.spans[i];
    }
    int show_rc = -1, list_rc = -1;
    char listing[4096] = "";
    char spans_log[512], agent_file[512], prefix[9] = "";
    snprintf(spans_log, sizeof(spans_log), "%s/spans.log", out_dir);
    snprintf(agent_file, sizeof(agent_file), "%s/agent.thrift", out_dir);
    if (root && is_saved) {
        char id[33];
        if (root->trace_hi)
            snprintf(id, sizeof(id), "%016" PRIx64 "%016" PRIx64, root->trace_hi, root->trace_lo);
        else
            snprintf(id, sizeof(id), "%016" PRIx64, root->trace_lo);
        memcpy(prefix, id, 8); /* a prefix is enough */
        printf("demo: span files in %s\n", out_dir);
        printf("\n$ tracewire show --trace %s spans.log agent.thrift\n\n", prefix);
        char *show_args[] = {"show", "--trace", prefix, spans_log, agent_file, NULL};
        show_rc = run_tracewire(show_args, NULL, 0);
        /* A fixed width: an exported COLUMNS would cut the ROOT column the check reads. */
        char *list_args[] = {"show", "--list",  "--width",  "200", "--trace",
                             prefix, spans_log, agent_file, NULL};
        list_rc = run_tracewire(list_args, listing, sizeof(listing));
        printf("\n");
    }
    check(is_answered, "the frontend answered 200");
    check(is_clean, "the three processes exited cleanly on SIGTERM (tracers closed and flushed)");
    check(n_bad == 0, "every datagram decodes as a Jaeger emitBatch");
    check(is_saved, "the agent's datagrams were saved for tracewire");
    check(show_rc == 0, "tracewire show drew the trace from spans.log and agent.thrift");
    {
        /* --list: one trace, every span (the "SPANS" column), no error */
        char want[64];
        snprintf(want, sizeof(want), " %6zu       0  demo-driver: HTTP GET", set.n);
        size_t lines = 0;
        for (const char *p = listing; *p; p++)
            lines += *p == '\n';
        check(list_rc == 0 && lines == 2 && strstr(listing, want) != NULL,
              "tracewire show --list finds that one trace with every span and no error");
    }
    check_trace(&set);
    printf("\n%s: %d check(s) failed\n", n_failed ? "FAIL" : "PASS", n_failed);
    rc = n_failed ? 1 : 0;
    span_set_free(&set);
    tw_tracer_free(tracer);
    goto out;

out_stop:
    stop_all();
out:
    alarm(0);
    remove_out_dir();
    free_environment(env);
    udp_sink_close(&sink);
    curl_global_cleanup();
    return rc;
}
