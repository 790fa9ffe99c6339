/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_propagation.c: the cost of carrying a span context across
 * a process boundary (run by `make bench` through run_bench.sh; never part of
 * `make check`).
 *
 *   bench_propagation table [PEER_JSON [IR_JSON]]   measure and print one table
 *   bench_propagation ir ROW inject|extract N       N calls, for callgrind
 *
 * For each format (uber-trace-id, B3 multi, B3 single, traceparent, Jaeger
 * binary), without and with 3 baggage items: nanoseconds and heap
 * allocations per inject and per extract through the public propagator API
 * (tw_propagator_inject/extract, tw_binary_inject/extract). Extract includes
 * dropping the returned context, as a server does at the end of a request.
 * The ratio column divides the peer's time by ours: the OpenTelemetry
 * propagators for Node.js, measured in the same run on the same carriers by
 * tests/bench/peer/propagation_bench.js (PEER_JSON is its output).
 *
 * Carriers are the cheapest honest ones, so that the codec is what is
 * measured: inject appends "Name: value\n" to a fixed buffer (what an HTTP
 * client writing a request does), extract walks a fixed list of the request's
 * headers: the format's own plus four ordinary ones (host, user-agent,
 * accept, accept-encoding) that every codec must look at and skip. The
 * context: 128-bit trace id, sampled, with a parent. Timing: best of 7 runs
 * of N operations on one thread (CLOCK_MONOTONIC), after a warm-up. Wall
 * time moves with the machine's load; the instruction counts that
 * run_bench.sh takes with callgrind (`ir` mode, IR_JSON: {"ROW": {"inject":
 * N, "extract": N}}) do not, so they are the figure to compare across runs.
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracewire/tracewire.h"

/* ---- allocation counting (this executable only) ------------------------------------------ */

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
/* Single-threaded benchmark: a plain counter is enough. */
static unsigned long allocations;

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

/* ---- carriers ----------------------------------------------------------------------------- */

/* Inject: header lines appended to a fixed buffer. */
typedef struct {
    char text[4096];
    size_t len;
} line_carrier;

static tw_status line_set(void *user_data, const char *key, const char *value)
{
    line_carrier *c = user_data;
    size_t kl = strlen(key), vl = strlen(value);
    if (c->len + kl + vl + 3 > sizeof c->text)
        return TW_E_LIMIT;
    memcpy(c->text + c->len, key, kl);
    c->len += kl;
    c->text[c->len++] = ':';
    c->text[c->len++] = ' ';
    memcpy(c->text + c->len, value, vl);
    c->len += vl;
    c->text[c->len++] = '\n';
    return TW_OK;
}

/* Extract: a request's headers as a fixed list. */
#define MAX_HEADERS 16
typedef struct {
    size_t n;
    char keys[MAX_HEADERS][64];
    char values[MAX_HEADERS][512];
} header_list;

static tw_status list_foreach(void *user_data, tw_carrier_handler_fn handler, void *handler_data)
{
    const header_list *h = user_data;
    for (size_t i = 0; i < h->n; i++) {
        tw_status st = handler(handler_data, h->keys[i], h->values[i]);
        if (st != TW_OK)
            return st;
    }
    return TW_OK;
}

static tw_status list_add(void *user_data, const char *key, const char *value)
{
    header_list *h = user_data;
    if (h->n == MAX_HEADERS || strlen(key) >= sizeof h->keys[0] ||
        strlen(value) >= sizeof h->values[0])
        return TW_E_LIMIT;
    strcpy(h->keys[h->n], key);
    strcpy(h->values[h->n], value);
    h->n++;
    return TW_OK;
}

/* ---- measuring ---------------------------------------------------------------------------- */

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define RUNS 7
#define OPS 200000

typedef struct {
    const char *key;   /* row id: the peer's JSON key, the `ir` argument */
    const char *name;  /* row label */
    const char *codec; /* tw_propagator_parse name; NULL for binary */
    bool has_baggage;
    bool has_peer;      /* the peer measures this row */
    const char *target; /* "< 300 ns" or "-" */
} row_spec;

static const row_spec rows[] = {
    {"jaeger", "uber-trace-id", "jaeger", false, true, "< 300 ns"},
    {"jaeger_baggage", "uber-trace-id + 3 baggage", "jaeger", true, true, "-"},
    {"b3_multi", "B3 multi", "b3", false, true, "-"},
    {"b3_multi_baggage", "B3 multi + 3 baggage", "b3", true, false, "-"},
    {"b3_single", "B3 single", "b3-single", false, true, "-"},
    {"b3_single_baggage", "B3 single + 3 baggage", "b3-single", true, false, "-"},
    {"w3c", "traceparent", "w3c", false, true, "< 300 ns"},
    {"w3c_baggage", "traceparent + 3 baggage", "w3c", true, true, "-"},
    {"binary", "binary", NULL, false, false, "-"},
    {"binary_baggage", "binary + 3 baggage", NULL, true, false, "-"},
};
#define N_ROWS (sizeof rows / sizeof rows[0])

/* Everything one row's operations touch, set up once. */
typedef struct {
    const row_spec *spec;
    tw_propagator *propagator; /* NULL for binary */
    tw_span_context *ctx;
    line_carrier lines;  /* inject's target, emptied before each call */
    header_list request; /* extract's source: ordinary headers + the format's */
    tw_carrier_writer writer;
    tw_carrier_reader reader;
    uint8_t binary[1024];
    size_t binary_len;
    size_t wire_bytes; /* of the format's headers ("Name: value") or the binary blob */
} workload;

static tw_span_context *make_context(bool has_baggage)
{
    tw_span_context *base =
        tw_span_context_new(0x0af7651916cd43ddULL, 0x8448eb211c80319cULL, 0x00f067aa0ba902b7ULL,
                            0x0020000000000001ULL, TW_FLAG_SAMPLED, NULL);
    if (!base || !has_baggage)
        return base;
    static const char *const items[3][2] = {
        {"user-id", "alice"}, {"tenant", "acme corp"}, {"request-class", "interactive"}};
    for (size_t i = 0; i < 3; i++) {
        tw_span_context *next = tw_span_context_with_baggage(base, items[i][0], items[i][1]);
        tw_span_context_unref(base);
        base = next;
        if (!base)
            return NULL;
    }
    return base;
}

static void workload_free(workload *w)
{
    tw_propagator_free(w->propagator);
    tw_span_context_unref(w->ctx);
}

static bool workload_init(workload *w, const row_spec *spec)
{
    memset(w, 0, sizeof *w);
    w->spec = spec;
    w->ctx = make_context(spec->has_baggage);
    if (!w->ctx)
        goto fail;
    if (!spec->codec) {
        if (tw_binary_inject(w->ctx, w->binary, sizeof w->binary, &w->binary_len) != TW_OK)
            goto fail;
        w->wire_bytes = w->binary_len;
        return true;
    }
    w->propagator = tw_propagator_parse(spec->codec, NULL);
    if (!w->propagator)
        goto fail;
    w->writer = (tw_carrier_writer){line_set, &w->lines};
    w->reader = (tw_carrier_reader){list_foreach, &w->request};
    list_add(&w->request, "host", "api.example.com");
    list_add(&w->request, "user-agent", "curl/7.88.1");
    list_add(&w->request, "accept", "*/*");
    list_add(&w->request, "accept-encoding", "gzip, deflate");
    size_t ordinary = w->request.n;
    tw_carrier_writer to_request = {list_add, &w->request};
    if (tw_propagator_inject(w->propagator, w->ctx, TW_FORMAT_HTTP_HEADERS, &to_request) != TW_OK)
        goto fail;
    for (size_t i = ordinary; i < w->request.n; i++)
        w->wire_bytes += strlen(w->request.keys[i]) + 2 + strlen(w->request.values[i]);
    return true;
fail:
    fprintf(stderr, "bench: %s: setting up the workload failed\n", spec->name);
    workload_free(w);
    return false;
}

/* A volatile sink keeps the compiler from dropping the measured work. */
static volatile uint64_t sink;

static void run_inject(workload *w, long n)
{
    for (long i = 0; i < n; i++) {
        if (w->propagator) {
            w->lines.len = 0;
            tw_propagator_inject(w->propagator, w->ctx, TW_FORMAT_HTTP_HEADERS, &w->writer);
            sink += w->lines.len;
        } else {
            size_t len = 0;
            tw_binary_inject(w->ctx, w->binary, sizeof w->binary, &len);
            sink += len;
        }
    }
}

static void run_extract(workload *w, long n)
{
    for (long i = 0; i < n; i++) {
        tw_span_context *got = w->propagator
                                   ? tw_propagator_extract(w->propagator, TW_FORMAT_HTTP_HEADERS,
                                                           &w->reader, NULL, NULL, NULL)
                                   : tw_binary_extract(w->binary, w->binary_len, NULL, NULL, NULL);
        sink += tw_span_context_span_id(got);
        tw_span_context_unref(got);
    }
}

typedef struct {
    double ns, allocs;
} op_result;

/* Best of RUNS timed runs of OPS calls, after one warm-up run. */
static op_result measure(workload *w, void (*op)(workload *, long))
{
    op_result r = {1e300, 0};
    for (int run = 0; run <= RUNS; run++) {
        unsigned long a0 = allocations;
        double t0 = now_ns();
        op(w, OPS);
        double ns = (now_ns() - t0) / OPS;
        r.allocs = (double)(allocations - a0) / OPS;
        if (run > 0 && ns < r.ns)
            r.ns = ns;
    }
    return r;
}

/* ---- the table ---------------------------------------------------------------------------- */

/* @json.@key.@field as a number, or -1. */
static double json_get(json_t *json, const char *key, const char *field)
{
    json_t *v = json_object_get(json_object_get(json, key), field);
    return json_is_number(v) ? json_number_value(v) : -1;
}

static json_t *load_json(const char *path, const char *what)
{
    if (!path)
        return NULL;
    json_error_t jerr;
    json_t *j = json_load_file(path, 0, &jerr);
    if (!j)
        fprintf(stderr, "bench: %s %s unreadable (%s); shown as n/a\n", what, path, jerr.text);
    return j;
}

static void print_row(const char *format, const char *op, size_t bytes, op_result ours,
                      double instr, double peer, const char *target)
{
    char instr_s[16] = "-", peer_s[24] = "n/a", ratio_s[24] = "n/a";
    if (instr > 0)
        snprintf(instr_s, sizeof instr_s, "%.0f", instr);
    if (peer > 0) {
        snprintf(peer_s, sizeof peer_s, "%.0f", peer);
        if (peer >= ours.ns)
            snprintf(ratio_s, sizeof ratio_s, "%.1fx faster", peer / ours.ns);
        else
            snprintf(ratio_s, sizeof ratio_s, "%.2fx slower", ours.ns / peer);
    }
    printf("| %-26s | %-7s | %5zu | %9.0f | %6s | %6.2f | %7s | %-13s | %-8s |\n", format, op,
           bytes, ours.ns, instr_s, ours.allocs, peer_s, ratio_s, target);
}

static int table(const char *peer_path, const char *ir_path)
{
    json_t *peer = load_json(peer_path, "peer results");
    json_t *ir = load_json(ir_path, "instruction counts");
    const char *peer_name = json_string_value(json_object_get(peer, "peer"));
    printf("\ntracewire %s propagation benchmark: per operation, best of %d x %d; 128-bit trace "
           "id, sampled, with parent\npeer: %s\n",
           tw_version(), RUNS, OPS, peer_name ? peer_name : "not available in this run");
    printf("| %-26s | %-7s | %5s | %9s | %6s | %6s | %7s | %-13s | %-8s |\n", "format", "op",
           "bytes", "ns", "instr", "allocs", "peer ns", "tracewire is", "target");
    printf(
        "|----------------------------|---------|-------|-----------|--------|--------|---------|"
        "---------------|----------|\n");
    int failures = 0;
    for (size_t i = 0; i < N_ROWS; i++) {
        static workload w;
        if (!workload_init(&w, &rows[i])) {
            failures++;
            continue;
        }
        op_result inject = measure(&w, run_inject);
        op_result extract = measure(&w, run_extract);
        const char *peer_key = rows[i].has_peer ? rows[i].key : "";
        print_row(rows[i].name, "inject", w.wire_bytes, inject, json_get(ir, rows[i].key, "inject"),
                  json_get(peer, peer_key, "inject_ns"), rows[i].target);
        print_row(rows[i].name, "extract", w.wire_bytes, extract,
                  json_get(ir, rows[i].key, "extract"), json_get(peer, peer_key, "extract_ns"),
                  rows[i].target);
        workload_free(&w);
    }
    printf("\nbytes: the format's headers as \"Name: value\" (or the binary blob). instr: "
           "instructions per call (callgrind, exact), where run_bench.sh measured them.\n"
           "B3 carries no baggage: its \"+ 3 baggage\" rows show what the items cost a codec that "
           "skips them.\nThe peer has no binary format (jaeger-client's binary codec is a "
           "no-op).\n");
    json_decref(peer);
    json_decref(ir);
    return failures ? 1 : 0;
}

/* `ir KEY OP N`: N calls of one operation, for callgrind (run_bench.sh subtracts N = 0). */
static int ir_mode(const char *key, const char *op, long n)
{
    for (size_t i = 0; i < N_ROWS; i++) {
        if (strcmp(rows[i].key, key) != 0)
            continue;
        static workload w;
        if (!workload_init(&w, &rows[i]))
            return 1;
        if (strcmp(op, "inject") == 0)
            run_inject(&w, n);
        else if (strcmp(op, "extract") == 0)
            run_extract(&w, n);
        else
            n = -1;
        workload_free(&w);
        if (n >= 0)
            return 0;
        break;
    }
    fprintf(stderr, "bench: ir: unknown row %s or operation %s\n", key, op);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "table") == 0)
        return table(argc >= 3 && *argv[2] ? argv[2] : NULL,
                     argc >= 4 && *argv[3] ? argv[3] : NULL);
    if (argc == 5 && strcmp(argv[1], "ir") == 0)
        return ir_mode(argv[2], argv[3], atol(argv[4]));
    fprintf(stderr, "usage: %s table [PEER_JSON [IR_JSON]]\n       %s ir ROW inject|extract N\n",
            argv[0], argv[0]);
    return 2;
}
