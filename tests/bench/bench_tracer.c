/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_tracer.c: the foundation's benchmark (run by
 * `make bench` through run_bench.sh; never part of `make check`).
 *
 *   bench_tracer table [PEER_JSON]   measure and print one table
 *   bench_tracer ir MODE N           run N spans of MODE for callgrind
 *                                    (MODE: unsampled | sampled |
 *                                    sampled_handlers | unsampled_handlers |
 *                                    local_metrics)
 *   bench_tracer rss_burst           the queue's byte bound on RSS (below)
 *
 * What is measured, per the issue: the caller's cost of a span (start + 2
 * tags + finish) when the trace is never sampled and when it is sampled
 * with the Jaeger UDP reporter running; heap allocations per never-sampled
 * span (counted by interposing malloc in this executable); the reporter's
 * delivered throughput to a local UDP sink that decodes and counts every
 * span (so loss is visible), at paced offered rates; bytes per span on the
 * wire; and the extra RSS of a tracer with default settings. Instruction
 * counts come from callgrind runs of the `ir` mode (run_bench.sh). The table
 * ends with the caller-thread targets (unsampled <= 150 and sampled <= 1,000
 * instructions per span), each with OK or MISSED and the peer's time ratio.
 *
 * The queue's byte bound (a forked child, so that nothing measured before
 * has warmed or grown its heap): a queue of 2^20 spans, the default byte
 * bound (8 MiB), 2^20 sampled spans finished flat out; the peak RSS
 * (VmHWM, reset before the burst through /proc/self/clear_refs) over the
 * RSS before it must stay within the bound + 16 MiB, and the RSS after
 * the tracer is freed within 16 MiB of it. The UDP rows: the whole
 * process's instructions per sampled span (caller + reporter thread,
 * <= 1,500) and the spans per second the reporter delivers unpaced to the
 * decoding sink with nothing lost silently (sent = received; >= 1M/s).
 * Rows with a numeric target say OK or MISSED.
 *
 * Finished-span handlers (tracewire/handler.h): the caller's cost of a
 * sampled span through the three ready-made handlers (SSN redaction, drop
 * by name, latency metrics; the span is kept). The ir-only modes
 * unsampled_handlers (redaction and drop installed, neither wants unsampled
 * spans: must cost what `unsampled` does) and local_metrics (all three on a
 * never-sampled tracer: the price of metrics at 100% under sample local)
 * are for checking the unsampled path by hand.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracewire/tracewire.h"
#include "udp_sink.h"

/* ---- allocation counting (this executable only) ------------------------------------------ */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
/* Per thread, not atomic: a shared counter would put a contended cache line
 * into every allocation of the reporter and sink threads and distort the
 * timings; only the measuring thread's own allocations matter. */
static _Thread_local unsigned long allocations;

void *malloc(size_t n)
{
    allocations++;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    allocations++;
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    allocations++;
    return __libc_realloc(p, n);
}

/* ---- helpers ------------------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* Which finished-span handlers a bench tracer gets. */
typedef enum { NO_HANDLERS, REDACT_AND_DROP, ALL_THREE_HANDLERS } bench_handlers;

static void add_handlers(tw_tracer_options *o, bench_handlers which)
{
    if (which == NO_HANDLERS)
        return;
    static const char *const dropped[] = {"health"}; /* never the bench's name: kept */
    tw_span_handler *redact =
        tw_handler_redact_new("\\b\\d{3}-\\d{2}-\\d{4}\\b", "***-**-****", NULL);
    tw_span_handler *drop = tw_handler_drop_names_new(dropped, 1);
    if (!redact || !drop || tw_tracer_options_add_handler(o, redact) != TW_OK ||
        tw_tracer_options_add_handler(o, drop) != TW_OK) {
        fprintf(stderr, "bench: cannot add the handlers\n");
        exit(1);
    }
    if (which == ALL_THREE_HANDLERS) {
        tw_latency_metrics *metrics = tw_latency_metrics_new(0);
        tw_span_handler h = tw_latency_metrics_handler(metrics);
        tw_latency_metrics_free(metrics); /* the handler keeps its own reference */
        if (tw_tracer_options_add_handler(o, &h) != TW_OK) {
            fprintf(stderr, "bench: cannot add the metrics handler\n");
            exit(1);
        }
    }
}

static tw_tracer *make_tracer_with(bool sampled, unsigned int port, size_t queue_size,
                                   bench_handlers handlers)
{
    tw_reporter_options *ro = tw_reporter_options_new();
    tw_reporter_options_set_agent(ro, "127.0.0.1", port);
    if (queue_size)
        tw_reporter_options_set_max_queue_size(ro, queue_size);
    tw_tracer_options *o = tw_tracer_options_new();
    tw_tracer_options_set_service(o, "bench");
    tw_tracer_options_set_sampler(o, tw_sampler_const_new(sampled));
    tw_tracer_options_set_reporter(o, tw_reporter_jaeger_udp_new(ro, NULL));
    tw_reporter_options_free(ro);
    add_handlers(o, handlers);
    tw_error *err = NULL;
    tw_tracer *t = tw_tracer_new(o, &err);
    tw_tracer_options_free(o);
    if (!t) {
        fprintf(stderr, "bench: tracer: %s\n", tw_error_message(err));
        exit(1);
    }
    return t;
}

static tw_tracer *make_tracer(bool sampled, unsigned int port, size_t queue_size)
{
    return make_tracer_with(sampled, port, queue_size, NO_HANDLERS);
}

/* The measured unit of work: start + 2 tags + finish. */
static inline void one_span(tw_tracer *t, int64_t i)
{
    tw_span *s = tw_span_start(t, "bench-op", NULL);
    tw_span_set_tag_str(s, "component", "bench");
    tw_span_set_tag_int64(s, "i", i);
    tw_span_finish(s);
}

/* ---- the counting sink ------------------------------------------------------------------- */

typedef struct {
    udp_sink sink;
    atomic_bool stop;
    uint64_t datagrams, bytes, spans, undecodable;
    pthread_t thread;
} counting_sink;

static void *sink_thread(void *arg)
{
    counting_sink *c = arg;
    while (!atomic_load(&c->stop)) {
        size_t before = c->sink.n;
        udp_sink_collect(&c->sink, before + 1, 50);
        /* Decode and free as we go so memory stays flat. */
        for (size_t i = 0; i < c->sink.n; i++) {
            long n = udp_sink_count_spans(c->sink.data[i], c->sink.len[i]);
            if (n >= 0)
                c->spans += (uint64_t)n;
            else
                c->undecodable++;
            c->datagrams++;
            c->bytes += c->sink.len[i];
            free(c->sink.data[i]);
        }
        c->sink.n = 0;
    }
    return NULL;
}

static void sink_start(counting_sink *c)
{
    memset(c, 0, sizeof(*c));
    if (!udp_sink_open(&c->sink, "127.0.0.1")) {
        fprintf(stderr, "bench: cannot open the UDP sink\n");
        exit(1);
    }
    pthread_create(&c->thread, NULL, sink_thread, c);
}

static void sink_stop(counting_sink *c)
{
    usleep(200000); /* let the last datagrams arrive */
    atomic_store(&c->stop, true);
    pthread_join(c->thread, NULL);
    udp_sink_close(&c->sink);
}

/* ---- measurements ------------------------------------------------------------------------- */

typedef struct {
    double unsampled_ns, sampled_ns, sampled_handlers_ns, unsampled_allocs;
    double burst_peak_kb, burst_bound_kb, burst_after_flush_kb, burst_after_close_kb;
    double burst_dropped_pct;
    uint64_t max_rate_lost;
    double rss_kb, rss_idle_kb;
    double bytes_per_span;
    double max_rate, max_dropped_pct;
    double sustainable_rate;
    double ir_unsampled, ir_sampled_caller, ir_sampled_process; /* from run_bench.sh */
    double ir_sampled_handlers_caller;                          /* from run_bench.sh */
} results;

static void measure_unsampled(results *r)
{
    tw_tracer *t = make_tracer(false, 9, 0);
    const int n = 20000000;
    for (int i = 0; i < 100000; i++)
        one_span(t, i);
    unsigned long a0 = allocations;
    double t0 = now_s();
    for (int i = 0; i < n; i++)
        one_span(t, i);
    double t1 = now_s();
    r->unsampled_allocs = (double)(allocations - a0) / n;
    r->unsampled_ns = (t1 - t0) * 1e9 / n;
    tw_tracer_free(t);
}

/* Caller cost of sampled spans with the UDP reporter running: bursts that
 * fit the default queue, each followed by an untimed flush, so the timed
 * path is the real enqueue path, never the drop path. Then the same with the
 * three ready-made handlers installed. */
static double sampled_caller_ns(tw_tracer *t)
{
    const int burst = 4096, bursts = 100;
    double timed = 0;
    for (int b = 0; b < bursts + 5; b++) {
        double t0 = now_s();
        for (int i = 0; i < burst; i++)
            one_span(t, i);
        double t1 = now_s();
        if (b >= 5)
            timed += t1 - t0;
        tw_tracer_flush(t, 10000);
    }
    uint64_t dropped = tw_reporter_counter(tw_tracer_reporter(t), TW_COUNTER_DROPPED_QUEUE_FULL);
    if (dropped)
        fprintf(stderr, "bench: warning: %" PRIu64 " spans dropped in the caller-cost run\n",
                dropped);
    return timed * 1e9 / ((double)burst * bursts);
}

static void measure_sampled(results *r)
{
    counting_sink c;
    sink_start(&c);
    tw_tracer *t = make_tracer(true, c.sink.port, 0);
    r->sampled_ns = sampled_caller_ns(t);
    tw_reporter *rep = tw_tracer_reporter(t);
    uint64_t sent = tw_reporter_counter(rep, TW_COUNTER_SPANS_SENT);
    uint64_t bytes = tw_reporter_counter(rep, TW_COUNTER_BYTES_SENT);
    r->bytes_per_span = sent ? (double)bytes / (double)sent : 0;
    tw_tracer_free(t);
    t = make_tracer_with(true, c.sink.port, 0, ALL_THREE_HANDLERS);
    r->sampled_handlers_ns = sampled_caller_ns(t);
    tw_tracer_free(t);
    sink_stop(&c);
}

/* Offers spans at @rate per second (0 = as fast as possible) for @seconds and
 * reports what the sink received. */
static void throughput_run(double rate, double seconds, double *delivered_per_s,
                           uint64_t *offered_out, uint64_t *dropped_out, uint64_t *lost_out)
{
    counting_sink c;
    sink_start(&c);
    tw_tracer *t = make_tracer(true, c.sink.port, 0);
    double t0 = now_s(), end = t0 + seconds;
    uint64_t offered = 0;
    /* Pacing: each millisecond's share of spans, then sleep to the next
     * millisecond, so the producer leaves the CPU to the reporter and the
     * sink (this machine has two cores for three busy threads). */
    struct timespec tick;
    clock_gettime(CLOCK_MONOTONIC, &tick);
    for (;;) {
        double now = now_s();
        if (now >= end)
            break;
        if (rate > 0) {
            uint64_t due = (uint64_t)((now - t0) * rate);
            while (offered < due)
                one_span(t, (int64_t)offered++);
            tick.tv_nsec += 1000000;
            if (tick.tv_nsec >= 1000000000L) {
                tick.tv_nsec -= 1000000000L;
                tick.tv_sec++;
            }
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &tick, NULL);
        } else {
            for (int i = 0; i < 256; i++)
                one_span(t, (int64_t)offered++);
        }
    }
    tw_tracer_flush(t, 30000);
    double t1 = now_s();
    tw_reporter *rep = tw_tracer_reporter(t);
    uint64_t dropped = tw_reporter_counter(rep, TW_COUNTER_DROPPED_QUEUE_FULL);
    uint64_t sent = tw_reporter_counter(rep, TW_COUNTER_SPANS_SENT);
    tw_tracer_free(t);
    sink_stop(&c);
    *delivered_per_s = (double)c.spans / (t1 - t0);
    *offered_out = offered;
    *dropped_out = dropped;
    *lost_out = sent > c.spans ? sent - c.spans : 0;
}

static void measure_throughput(results *r)
{
    static const double rates[] = {250e3, 500e3, 1e6, 1.5e6, 2e6, 3e6};
    printf("\nReporter throughput (Jaeger UDP to a local decoding sink, default queue of 8192):\n");
    printf("  %-12s %12s %12s %14s %12s %12s\n", "offered/s", "offered", "delivered/s",
           "queue drops", "drop %", "net lost");
    r->sustainable_rate = 0;
    for (size_t i = 0; i <= sizeof rates / sizeof rates[0]; i++) {
        double rate = i < sizeof rates / sizeof rates[0] ? rates[i] : 0;
        double delivered;
        uint64_t offered, dropped, lost;
        throughput_run(rate, 1.0, &delivered, &offered, &dropped, &lost);
        double pct = offered ? 100.0 * (double)dropped / (double)offered : 0;
        char label[32];
        if (rate > 0)
            snprintf(label, sizeof label, "%.0fk", rate / 1e3);
        else
            snprintf(label, sizeof label, "max");
        printf("  %-12s %12" PRIu64 " %12.0f %14" PRIu64 " %11.2f%% %12" PRIu64 "\n", label,
               offered, delivered, dropped, pct, lost);
        if (rate > 0 && dropped == 0 && lost == 0 && delivered >= 0.95 * rate)
            r->sustainable_rate = rate;
        if (rate == 0) {
            r->max_rate = delivered;
            r->max_dropped_pct = pct;
            r->max_rate_lost = lost;
        }
    }
}

/* Extra RSS of a running tracer with default settings, measured first in
 * the process (so no earlier measurement has warmed the allocator): once
 * idle (created, a few spans sent) and once after bursts of 1,000 spans,
 * whose records then stay in the record pool for reuse. */
static void measure_rss(results *r)
{
    counting_sink c;
    sink_start(&c);
    long with_sink = rss_kb();
    tw_tracer *t = make_tracer(true, c.sink.port, 0);
    for (int i = 0; i < 10; i++)
        one_span(t, i);
    tw_tracer_flush(t, 10000);
    r->rss_idle_kb = (double)(rss_kb() - with_sink);
    for (int round = 0; round < 20; round++) {
        for (int i = 0; i < 1000; i++)
            one_span(t, i);
        tw_tracer_flush(t, 10000);
    }
    r->rss_kb = (double)(rss_kb() - with_sink);
    tw_tracer_free(t);
    sink_stop(&c);
}

/* ---- the queue's byte bound on RSS --------------------------------------------------------- */

static long status_kb(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            kb = strtol(line + n + 1, NULL, 10);
            break;
        }
    }
    if (f)
        fclose(f);
    return kb;
}

/* Prints "peak_kb after_flush_kb after_close_kb bound_kb dropped_pct" (all
 * over the RSS before the burst). */
static int rss_burst(void)
{
    const size_t queue = (size_t)1 << 20, burst = (size_t)1 << 20;
    const size_t max_bytes = (size_t)8 << 20; /* the documented default */
    tw_set_log_level(TW_LOG_ERROR);           /* the drops are expected */
    udp_sink sink;
    if (!udp_sink_open(&sink, "127.0.0.1"))
        return 1;
    tw_tracer *t = make_tracer(true, sink.port, queue);
    for (int i = 0; i < 20000; i++)
        one_span(t, i);
    tw_tracer_flush(t, 60000);
    long before = status_kb("VmRSS");
    FILE *f = fopen("/proc/self/clear_refs", "w"); /* VmHWM := VmRSS (Linux 4.0+) */
    if (f) {
        fputs("5", f);
        fclose(f);
    }
    for (size_t i = 0; i < burst; i++)
        one_span(t, (int64_t)i);
    long peak = status_kb("VmHWM");
    tw_tracer_flush(t, 60000);
    long after_flush = status_kb("VmRSS");
    uint64_t dropped = tw_reporter_counter(tw_tracer_reporter(t), TW_COUNTER_DROPPED_QUEUE_FULL);
    tw_tracer_free(t);
    long after_close = status_kb("VmRSS");
    udp_sink_close(&sink);
    printf("%ld %ld %ld %ld %.2f\n", peak - before, after_flush - before, after_close - before,
           (long)(max_bytes / 1024), 100.0 * (double)dropped / (double)burst);
    return 0;
}

/* Runs rss_burst in a forked child (a fresh heap) and reads its line. */
static void measure_queue_bytes_rss(results *r)
{
    fflush(stdout);
    int fds[2];
    if (pipe(fds) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDOUT_FILENO);
        int rc = rss_burst();
        fflush(stdout);
        _exit(rc);
    }
    close(fds[1]);
    char line[256] = "";
    FILE *f = fdopen(fds[0], "r");
    if (f && !fgets(line, sizeof line, f))
        line[0] = '\0';
    if (f)
        fclose(f);
    int status = 0;
    if (pid > 0)
        waitpid(pid, &status, 0);
    if (sscanf(line, "%lf %lf %lf %lf %lf", &r->burst_peak_kb, &r->burst_after_flush_kb,
               &r->burst_after_close_kb, &r->burst_bound_kb, &r->burst_dropped_pct) != 5)
        r->burst_peak_kb = r->burst_after_flush_kb = r->burst_after_close_kb = -1;
}

/* Reads a number from the peer's JSON ("key": value); NAN when absent. */
static double json_number(const char *json, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *p = json ? strstr(json, pattern) : NULL;
    return p ? strtod(p + strlen(pattern), NULL) : -1;
}

static char *read_file(const char *path)
{
    FILE *f = path ? fopen(path, "r") : NULL;
    if (!f)
        return NULL;
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n ? buf : NULL;
}

/* @verdict: "OK", "MISSED", or NULL when the row has no numeric target. */
static void print_row_verdict(const char *what, double ours, double peer, const char *unit,
                              const char *target, bool lower_is_better, const char *verdict)
{
    char peer_s[32] = "n/a", ratio_s[32] = "n/a";
    if (peer > 0) {
        snprintf(peer_s, sizeof peer_s, "%.1f", peer);
        snprintf(ratio_s, sizeof ratio_s, "%.1fx %s", lower_is_better ? peer / ours : ours / peer,
                 "better");
        if ((lower_is_better && ours > peer) || (!lower_is_better && ours < peer))
            snprintf(ratio_s, sizeof ratio_s, "%.2fx worse",
                     lower_is_better ? ours / peer : peer / ours);
    }
    printf("| %-46s | %12.1f | %-6s | %12s | %-13s | %-18s | %-7s |\n", what, ours, unit, peer_s,
           ratio_s, target, verdict ? verdict : "-");
}

/* A row whose target is a bound on the measured value (@limit; a
 * measurement that failed, negative, is MISSED). */
static void print_row(const char *what, double ours, double peer, const char *unit,
                      const char *target, bool lower_is_better)
{
    print_row_verdict(what, ours, peer, unit, target, lower_is_better, NULL);
}

static const char *verdict(double ours, double limit, bool lower_is_better)
{
    if (ours < 0)
        return "n/a";
    return (lower_is_better ? ours <= limit : ours >= limit) ? "OK" : "MISSED";
}

/* One caller-thread target: callgrind instructions per span against the
 * target, and the peer's time per span against ours (the peer, a JIT-run
 * client, has no comparable instruction count; both times are from this
 * run). */
static void print_target(const char *what, double instr, double target, const char *target_label,
                         double ours_ns, double peer_ns)
{
    char measured[32] = "n/a", verdict[16] = "n/a", ratio[96] = "peer: not measured in this run";
    if (instr > 0) {
        snprintf(measured, sizeof measured, "%.1f instr", instr);
        snprintf(verdict, sizeof verdict, "%s", instr <= target ? "OK" : "MISSED");
    }
    if (peer_ns > 0 && ours_ns > 0)
        snprintf(ratio, sizeof ratio, "peer %.1f ns, here %.1f ns: %.1fx %s", peer_ns, ours_ns,
                 peer_ns >= ours_ns ? peer_ns / ours_ns : ours_ns / peer_ns,
                 peer_ns >= ours_ns ? "faster" : "slower");
    printf("  %-22s %12s  target <= %-6s %-7s %s\n", what, measured, target_label, verdict, ratio);
}

static void print_targets(const results *r, double peer_unsampled_ns, double peer_sampled_ns)
{
    printf("\nCaller-thread targets (callgrind instructions per span of start + 2 tags + finish;\n"
           "sampled: until the span is in the reporter's queue; peer: jaeger-client, Node.js):\n");
    print_target("unsampled span", r->ir_unsampled, 150, "150", r->unsampled_ns, peer_unsampled_ns);
    print_target("sampled span, caller", r->ir_sampled_caller, 1000, "1,000", r->sampled_ns,
                 peer_sampled_ns);
}

static int table(const char *peer_path, const char *ir_path)
{
    results r;
    memset(&r, 0, sizeof r);
    char *peer = read_file(peer_path);
    double peer_unsampled = json_number(peer, "unsampled_ns");
    double peer_sampled = json_number(peer, "sampled_ns");
    double peer_delivered = json_number(peer, "delivered_spans_per_s");
    char *irs = read_file(ir_path);
    r.ir_unsampled = json_number(irs, "unsampled");
    r.ir_sampled_caller = json_number(irs, "sampled_caller");
    r.ir_sampled_process = json_number(irs, "sampled_process");
    r.ir_sampled_handlers_caller = json_number(irs, "sampled_handlers_caller");

    measure_queue_bytes_rss(&r); /* a forked child: before any thread starts here */
    measure_rss(&r);
    measure_unsampled(&r);
    measure_sampled(&r);
    measure_throughput(&r);

    printf("\ntracewire %s benchmark (span = start + 2 tags + finish); peer: %s\n", tw_version(),
           peer ? "jaeger-client (Node.js), measured in this run" : "not available in this run");
    printf("| %-46s | %12s | %-6s | %12s | %-13s | %-18s | %-7s |\n", "metric", "tracewire", "unit",
           "peer", "ratio", "target", "verdict");
    printf("|%s|\n", "------------------------------------------------|--------------|--------|"
                     "--------------|---------------|--------------------|---------");
    print_row("never-sampled span, caller", r.unsampled_ns, peer_unsampled, "ns", "<= 25 ns", true);
    print_row("never-sampled span, instructions (callgrind)", r.ir_unsampled, -1, "instr", "<= 150",
              true);
    print_row("never-sampled span, heap allocations", r.unsampled_allocs, -1, "allocs", "0", true);
    print_row("sampled span + UDP reporter, caller", r.sampled_ns, peer_sampled, "ns", "<= 250 ns",
              true);
    print_row("sampled span, caller instructions (callgrind)", r.ir_sampled_caller, -1, "instr",
              "<= 1,000", true);
    print_row_verdict("sampled span, UDP, whole-process instructions", r.ir_sampled_process, -1,
                      "instr", "<= 1,500", true, verdict(r.ir_sampled_process, 1500, true));
    print_row("sampled span, UDP, reporter thread instr",
              r.ir_sampled_process > 0 && r.ir_sampled_caller > 0
                  ? r.ir_sampled_process - r.ir_sampled_caller
                  : -1,
              -1, "instr", "-", true);
    print_row("sampled span + 3 handlers, caller", r.sampled_handlers_ns, -1, "ns", "-", true);
    print_row("sampled span + 3 handlers, caller instructions", r.ir_sampled_handlers_caller, -1,
              "instr", "-", true);
    print_row("reporter throughput, unpaced (delivered)", r.max_rate, peer_delivered, "span/s",
              ">= 1M span/s", false);
    print_row_verdict("UDP spans/s delivered, none lost silently", r.max_rate, -1, "span/s",
                      ">= 1M, 0 lost", false,
                      r.max_rate_lost ? "MISSED" : verdict(r.max_rate, 1e6, false));
    print_row("reporter: highest paced rate with no loss", r.sustainable_rate, -1, "span/s",
              ">= 1M span/s", false);
    print_row("bytes per span on the wire (compact)", r.bytes_per_span, -1, "B", "-", true);
    print_row("extra RSS, default tracer, idle", r.rss_idle_kb, -1, "KiB", "<= 512 KiB", true);
    print_row("extra RSS, after 1,000-span bursts", r.rss_kb, -1, "KiB", "-", true);
    char bound[32];
    snprintf(bound, sizeof bound, "<= %.0f KiB", r.burst_bound_kb + 16384);
    print_row_verdict("queue bytes: peak RSS, 2^20 spans, 2^20 queue", r.burst_peak_kb, -1, "KiB",
                      bound, true, verdict(r.burst_peak_kb, r.burst_bound_kb + 16384, true));
    print_row_verdict("queue bytes: RSS after the burst's flush", r.burst_after_flush_kb, -1, "KiB",
                      "<= 16384 KiB", true, verdict(r.burst_after_flush_kb, 16384, true));
    print_row_verdict("queue bytes: RSS after close", r.burst_after_close_kb, -1, "KiB",
                      "<= 16384 KiB", true, verdict(r.burst_after_close_kb, 16384, true));
    print_row("queue bytes: burst spans dropped (counted)", r.burst_dropped_pct, -1, "%", "-",
              true);
    print_targets(&r, peer_unsampled, peer_sampled);
    printf("\nFor scale (quoted in the issue, not measured here): the C++ Jaeger client costs\n"
           "~740 ns / 2,800 instructions per never-sampled span, ~7 us per sampled span, and\n"
           "delivers ~115k spans/s.\n");
    return 0;
}

static int ir_mode(const char *mode, long n)
{
    static const struct {
        const char *name;
        bool sampled;
        bench_handlers handlers;
    } modes[] = {{"unsampled", false, NO_HANDLERS},
                 {"sampled", true, NO_HANDLERS},
                 {"sampled_handlers", true, ALL_THREE_HANDLERS},
                 {"unsampled_handlers", false, REDACT_AND_DROP},
                 {"local_metrics", false, ALL_THREE_HANDLERS}};
    size_t m = 0;
    while (m < sizeof modes / sizeof modes[0] && strcmp(mode, modes[m].name) != 0)
        m++;
    if (m == sizeof modes / sizeof modes[0]) {
        fprintf(stderr, "bench ir: unknown mode \"%s\"\n", mode);
        return 2;
    }
    bool sampled = modes[m].sampled;
    counting_sink c;
    unsigned int port = 9;
    if (sampled) {
        if (!udp_sink_open(&c.sink, "127.0.0.1"))
            return 1;
        port = c.sink.port;
    }
    /* Bursts of 1024 with a flush between them: the steady state, where
     * records are recycled, rather than n spans all in flight at once. */
    tw_tracer *t = make_tracer_with(sampled, port, 0, modes[m].handlers);
    for (long i = 0; i < n; i++) {
        one_span(t, i);
        if (i % 1024 == 1023)
            tw_tracer_flush(t, 600000);
    }
    tw_tracer_flush(t, 600000);
    uint64_t dropped = tw_reporter_counter(tw_tracer_reporter(t), TW_COUNTER_DROPPED_QUEUE_FULL);
    tw_tracer_free(t);
    if (sampled)
        udp_sink_close(&c.sink);
    if (dropped) {
        fprintf(stderr, "bench ir: %" PRIu64 " spans dropped; the count is invalid\n", dropped);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "table") == 0)
        return table(argc >= 3 ? argv[2] : NULL, argc >= 4 ? argv[3] : NULL);
    if (argc == 4 && strcmp(argv[1], "ir") == 0)
        return ir_mode(argv[2], atol(argv[3]));
    if (argc == 2 && strcmp(argv[1], "rss_burst") == 0)
        return rss_burst();
    fprintf(stderr, "usage: bench_tracer table [PEER_JSON [IR_JSON]]\n"
                    "       bench_tracer ir unsampled|sampled|sampled_handlers|"
                    "unsampled_handlers|local_metrics N\n"
                    "       bench_tracer rss_burst\n");
    return 2;
}
