/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/convert/gen_spans.c: writes the inputs of the conversion
 * benchmark (`make bench`, run_convert_bench.sh; CONTRIBUTING.md,
 * "Benchmark"): a Dapper-style span log (docs/dapper-log-format.md, one JSON
 * record per line, as sdk/wire/dapper/dapper_log.c writes it) and a Zipkin v1
 * Thrift file (a raw TBinaryProtocol list<Span>, the body Zipkin's
 * /api/v1/spans takes; thrift/zipkincore.thrift, docs/wire/zipkin-v1.md).
 *
 *   gen_spans dapper N FILE
 *   gen_spans zipkin-v1-thrift N FILE
 *
 * Both files hold N spans in traces of 10 spans over 5 services (frontend ->
 * cart -> catalog/pricing -> inventory, 4 hosts each), with 128-bit trace
 * ids, RPC halves with their annotations, mixed typed tags and a log on some
 * spans. The output depends on N only (a fixed-seed splitmix64), so runs are
 * comparable. Written in C, not Python, so that a million spans take about
 * a second. Single-threaded; not part of the library.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPANS_PER_TRACE 10
#define N_SERVICES 5
#define HOSTS_PER_SERVICE 4
#define BASE_TIME_US INT64_C(1700000000000000)

static const char *const service_names[N_SERVICES] = {"frontend", "cart", "catalog", "pricing",
                                                      "inventory"};
static const int service_ports[N_SERVICES] = {8080, 9001, 9002, 9003, 9004};

enum { SVC_FRONTEND, SVC_CART, SVC_CATALOG, SVC_PRICING, SVC_INVENTORY };
enum { KIND_NONE, KIND_CLIENT, KIND_SERVER };

static uint64_t rng_state = UINT64_C(0x5eed0f7e1e5c0ffe);

static uint64_t next_random(void)
{
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t random_below(uint64_t n)
{
    return next_random() % n;
}

static uint64_t random_id(void)
{
    uint64_t id;
    do {
        id = next_random();
    } while (id == 0);
    return id;
}

typedef struct host {
    char name[48];
    char ip[16];
    uint32_t ipv4;
    char uuid[37];
} host;

static host hosts[N_SERVICES][HOSTS_PER_SERVICE];

static void init_hosts(void)
{
    for (int s = 0; s < N_SERVICES; s++) {
        for (int h = 0; h < HOSTS_PER_SERVICE; h++) {
            host *x = &hosts[s][h];
            snprintf(x->name, sizeof x->name, "%s-%d.prod.example", service_names[s], h + 1);
            snprintf(x->ip, sizeof x->ip, "10.%d.0.%d", s + 1, h + 11);
            x->ipv4 = (10u << 24) | ((uint32_t)(s + 1) << 16) | (uint32_t)(h + 11);
            uint64_t a = next_random(), b = next_random();
            snprintf(x->uuid, sizeof x->uuid, "%08" PRIx32 "-%04x-4%03x-%04x-%012" PRIx64,
                     (uint32_t)(a >> 32), (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff,
                     0x8000u | ((unsigned)(b >> 48) & 0x3fff), b & UINT64_C(0xffffffffffff));
        }
    }
}

/* ---- one trace: shared by both formats ------------------------------------------------------ */

/* One span of the trace: in the Dapper log one half of an RPC (or a local
 * span); in the Zipkin v1 file one span that holds both halves. */
typedef struct plan {
    int parent;     /* index in the trace, -1 for the root */
    int service;    /* who records it (the caller for an RPC) */
    int peer;       /* the callee of an RPC, -1 for a local or root span */
    const char *op; /* name */
    const char *method;
    const char *component;
} plan;

/* Dapper layout: the client and server halves are separate records (the
 * SDK gives the server half its own span id, its parent the client's). */
typedef struct dapper_plan {
    int parent;
    int service;
    int kind;
    int peer; /* client spans: the callee */
    const char *op;
    const char *method;
    const char *component;
} dapper_plan;

static const dapper_plan dapper_trace[SPANS_PER_TRACE] = {
    {-1, SVC_FRONTEND, KIND_SERVER, -1, "GET /cart", "GET", "http"},
    {0, SVC_FRONTEND, KIND_CLIENT, SVC_CART, "GET /api/cart", "GET", "http"},
    {1, SVC_CART, KIND_SERVER, -1, "GET /api/cart", "GET", "http"},
    {2, SVC_CART, KIND_CLIENT, SVC_CATALOG, "/catalog.Items/Get", "POST", "grpc"},
    {3, SVC_CATALOG, KIND_SERVER, -1, "/catalog.Items/Get", "POST", "grpc"},
    {4, SVC_CATALOG, KIND_NONE, -1, "cache.lookup", NULL, "cache"},
    {2, SVC_CART, KIND_CLIENT, SVC_PRICING, "/pricing.Quote/Compute", "POST", "grpc"},
    {6, SVC_PRICING, KIND_SERVER, -1, "/pricing.Quote/Compute", "POST", "grpc"},
    {7, SVC_PRICING, KIND_CLIENT, SVC_INVENTORY, "GET /inventory/stock", "GET", "http"},
    {8, SVC_INVENTORY, KIND_SERVER, -1, "GET /inventory/stock", "GET", "http"},
};
/* Records are written in the order the spans finish: children first. */
static const int dapper_order[SPANS_PER_TRACE] = {5, 4, 3, 9, 8, 7, 6, 2, 1, 0};

/* Zipkin v1 layout: an RPC is one span with cs/cr on the caller's host and
 * sr/ss on the callee's (Zipkin v1 storage after it joined the halves). */
static const plan v1_trace[SPANS_PER_TRACE] = {
    {-1, SVC_FRONTEND, -1, "get /cart", "GET", NULL},
    {0, SVC_FRONTEND, SVC_CART, "get /api/cart", "GET", NULL},
    {1, SVC_CART, SVC_CATALOG, "post /catalog.items/get", "POST", NULL},
    {2, SVC_CATALOG, -1, "cache.lookup", NULL, "cache"},
    {1, SVC_CART, SVC_PRICING, "post /pricing.quote/compute", "POST", NULL},
    {4, SVC_PRICING, SVC_INVENTORY, "get /inventory/stock", "GET", NULL},
    {1, SVC_CART, -1, "serialize", NULL, "json"},
    {0, SVC_FRONTEND, SVC_CATALOG, "get /api/recommendations", "GET", NULL},
    {7, SVC_CATALOG, SVC_PRICING, "post /pricing.quote/batch", "POST", NULL},
    {0, SVC_FRONTEND, -1, "render", NULL, "template"},
};

typedef struct span_times {
    int64_t start_us, end_us;
} span_times;

/* Nests each span inside its parent: a child takes a random slice of the
 * middle of its parent's time, so a server fits in its client and a child
 * in its parent. */
static void plan_times(const int *parents, span_times *t, int64_t trace_start)
{
    for (int i = 0; i < SPANS_PER_TRACE; i++) {
        if (parents[i] < 0) {
            t[i].start_us = trace_start;
            t[i].end_us = trace_start + 20000 + (int64_t)random_below(60000);
            continue;
        }
        span_times p = t[parents[i]];
        int64_t len = p.end_us - p.start_us;
        /* At least 600 us each side: more than the RPC latency of the v1 file's
         * server halves (100-499 us), so a child also fits in its server half. */
        int64_t head = 600 + (int64_t)random_below((uint64_t)(len / 8 + 1));
        int64_t tail = 600 + (int64_t)random_below((uint64_t)(len / 8 + 1));
        t[i].start_us = p.start_us + head;
        t[i].end_us = p.end_us - tail;
        if (t[i].end_us <= t[i].start_us)
            t[i].end_us = t[i].start_us + 1;
    }
}

/* ---- Dapper-style log ------------------------------------------------------------------------ */

static void put_tag_str(FILE *f, bool *is_first, const char *key, const char *value)
{
    fprintf(f, "%s{\"key\":\"%s\",\"type\":\"string\",\"value\":\"%s\"}", *is_first ? "" : ",", key,
            value);
    *is_first = false;
}

static void put_tag_int(FILE *f, bool *is_first, const char *key, int64_t value)
{
    fprintf(f, "%s{\"key\":\"%s\",\"type\":\"int64\",\"value\":%" PRId64 "}", *is_first ? "" : ",",
            key, value);
    *is_first = false;
}

static void put_tag_bool(FILE *f, bool *is_first, const char *key, bool value)
{
    fprintf(f, "%s{\"key\":\"%s\",\"type\":\"bool\",\"value\":%s}", *is_first ? "" : ",", key,
            value ? "true" : "false");
    *is_first = false;
}

static void put_tag_double(FILE *f, bool *is_first, const char *key, double value)
{
    fprintf(f, "%s{\"key\":\"%s\",\"type\":\"float64\",\"value\":%.17g}", *is_first ? "" : ",", key,
            value);
    *is_first = false;
}

static void put_process(FILE *f, const host *h, const char *service)
{
    fprintf(f,
            "\"process\":{\"service\":\"%s\",\"host\":\"%s\",\"ip\":\"%s\",\"tags\":["
            "{\"key\":\"hostname\",\"type\":\"string\",\"value\":\"%s\"},"
            "{\"key\":\"ip\",\"type\":\"string\",\"value\":\"%s\"},"
            "{\"key\":\"tracewire.version\",\"type\":\"string\",\"value\":\"0.4.0\"},"
            "{\"key\":\"client-uuid\",\"type\":\"string\",\"value\":\"%s\"},"
            "{\"key\":\"region\",\"type\":\"string\",\"value\":\"eu-west-1\"}]}",
            service, h->name, h->ip, h->name, h->ip, h->uuid);
}

static void write_dapper(FILE *f, uint64_t n_spans)
{
    static const double load_factors[4] = {0.25, 0.5, 0.75, 0.875};
    uint64_t written = 0;
    for (uint64_t trace = 0; written < n_spans; trace++) {
        uint64_t trace_hi = random_id(), trace_lo = random_id();
        bool is_debug = random_below(1000) == 0;
        uint64_t ids[SPANS_PER_TRACE];
        int parents[SPANS_PER_TRACE];
        const host *span_hosts[SPANS_PER_TRACE];
        const host *service_host[N_SERVICES];
        for (int s = 0; s < N_SERVICES; s++)
            service_host[s] = &hosts[s][random_below(HOSTS_PER_SERVICE)];
        for (int i = 0; i < SPANS_PER_TRACE; i++) {
            ids[i] = random_id();
            parents[i] = dapper_trace[i].parent;
            span_hosts[i] = service_host[dapper_trace[i].service];
        }
        span_times t[SPANS_PER_TRACE];
        plan_times(parents, t, BASE_TIME_US + (int64_t)trace * 1500);
        bool is_failed = random_below(100) == 0; /* the inventory call fails */

        for (int k = 0; k < SPANS_PER_TRACE && written < n_spans; k++, written++) {
            int i = dapper_order[k];
            const dapper_plan *p = &dapper_trace[i];
            fprintf(f,
                    "{\"v\":1,\"trace_id\":\"%016" PRIx64 "%016" PRIx64
                    "\",\"span_id\":\"%016" PRIx64 "\"",
                    trace_hi, trace_lo, ids[i]);
            if (p->parent >= 0)
                fprintf(f, ",\"parent_id\":\"%016" PRIx64 "\"", ids[p->parent]);
            fprintf(f, ",\"name\":\"%s\"", p->op);
            if (p->kind != KIND_NONE)
                fprintf(f, ",\"kind\":\"%s\"", p->kind == KIND_CLIENT ? "client" : "server");
            fprintf(f, ",\"start_us\":%" PRId64 ",\"end_us\":%" PRId64 ",\"flags\":%d",
                    t[i].start_us, t[i].end_us, is_debug ? 3 : 1);
            if (p->kind != KIND_NONE)
                fprintf(f,
                        ",\"annotations\":[{\"ts_us\":%" PRId64
                        ",\"value\":\"%s\"},{\"ts_us\":%" PRId64 ",\"value\":\"%s\"}]",
                        t[i].start_us, p->kind == KIND_CLIENT ? "cs" : "sr", t[i].end_us,
                        p->kind == KIND_CLIENT ? "cr" : "ss");

            bool is_error = is_failed && (i == 8 || i == 9);
            bool first = true;
            fputs(",\"tags\":[", f);
            if (p->kind == KIND_CLIENT) {
                const host *peer = service_host[p->peer];
                put_tag_str(f, &first, "span.kind", "client");
                put_tag_str(f, &first, "component", p->component);
                put_tag_str(f, &first, "http.method", p->method);
                put_tag_int(f, &first, "http.status_code", is_error ? 503 : 200);
                put_tag_str(f, &first, "peer.service", service_names[p->peer]);
                put_tag_str(f, &first, "peer.ipv4", peer->ip);
                put_tag_int(f, &first, "peer.port", service_ports[p->peer]);
                put_tag_double(f, &first, "retry.budget", 0.2);
            } else if (p->kind == KIND_SERVER) {
                put_tag_str(f, &first, "span.kind", "server");
                put_tag_str(f, &first, "component", p->component);
                put_tag_str(f, &first, "http.method", p->method);
                put_tag_str(f, &first, "http.route", p->op);
                put_tag_int(f, &first, "http.status_code", is_error ? 503 : 200);
                put_tag_int(f, &first, "response.bytes", 200 + (int64_t)random_below(40000));
                if (i == 0)
                    put_tag_double(f, &first, "sampler.param", 0.001);
                if (is_error)
                    put_tag_bool(f, &first, "error", true);
            } else {
                bool is_hit = random_below(4) != 0;
                char key[40];
                snprintf(key, sizeof key, "item:%" PRIu64, random_below(100000));
                put_tag_str(f, &first, "component", p->component);
                put_tag_bool(f, &first, "cache.hit", is_hit);
                put_tag_str(f, &first, "cache.key", key);
                put_tag_int(f, &first, "item.count", 1 + (int64_t)random_below(20));
                put_tag_double(f, &first, "load.factor", load_factors[random_below(4)]);
            }
            fputc(']', f);

            /* A log on about a third of the spans: retries on clients, a cache
             * miss on the local span, an error event on the failed server. */
            int64_t mid = t[i].start_us + (t[i].end_us - t[i].start_us) / 2;
            if (p->kind == KIND_CLIENT && random_below(4) == 0)
                fprintf(f,
                        ",\"logs\":[{\"ts_us\":%" PRId64 ",\"fields\":[{\"key\":\"event\","
                        "\"type\":\"string\",\"value\":\"retry\"},{\"key\":\"attempt\","
                        "\"type\":\"int64\",\"value\":2}]}]",
                        mid);
            else if (p->kind == KIND_NONE || (p->kind == KIND_SERVER && i != 9 && i % 3 == 0))
                fprintf(f,
                        ",\"logs\":[{\"ts_us\":%" PRId64 ",\"fields\":[{\"key\":\"event\","
                        "\"type\":\"string\",\"value\":\"%s\"}]}]",
                        mid, p->kind == KIND_NONE ? "cache miss" : "request.parsed");
            else if (is_error && i == 9)
                fprintf(f,
                        ",\"logs\":[{\"ts_us\":%" PRId64 ",\"fields\":[{\"key\":\"event\","
                        "\"type\":\"string\",\"value\":\"error\"},{\"key\":\"message\","
                        "\"type\":\"string\",\"value\":\"stock service unavailable\"}]}]",
                        mid);
            fputc(',', f);
            put_process(f, span_hosts[i], service_names[p->service]);
            fputs("}\n", f);
        }
    }
}

/* ---- Zipkin v1 Thrift (TBinaryProtocol) ------------------------------------------------------ */

enum {
    T_STOP = 0,
    T_BOOL = 2,
    T_I16 = 6,
    T_I32 = 8,
    T_I64 = 10,
    T_STRING = 11,
    T_STRUCT = 12,
    T_LIST = 15
};
enum { ANN_BOOL = 0, ANN_STRING = 6 };

static void put_u8(FILE *f, unsigned v)
{
    fputc((int)(v & 0xff), f);
}

static void put_i16(FILE *f, uint16_t v)
{
    put_u8(f, v >> 8);
    put_u8(f, v);
}

static void put_i32(FILE *f, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    fwrite(b, 1, 4, f);
}

static void put_i64(FILE *f, uint64_t v)
{
    put_i32(f, (uint32_t)(v >> 32));
    put_i32(f, (uint32_t)v);
}

static void field(FILE *f, int type, int id)
{
    put_u8(f, (unsigned)type);
    put_i16(f, (uint16_t)id);
}

static void put_string(FILE *f, const char *s, size_t len)
{
    put_i32(f, (uint32_t)len);
    fwrite(s, 1, len, f);
}

static void put_cstring(FILE *f, const char *s)
{
    put_string(f, s, strlen(s));
}

/* Endpoint{1: ipv4, 2: port, 3: service_name} */
static void put_endpoint(FILE *f, int field_id, int service, const host *h)
{
    field(f, T_STRUCT, field_id);
    field(f, T_I32, 1);
    put_i32(f, h->ipv4);
    field(f, T_I16, 2);
    put_i16(f, (uint16_t)service_ports[service]);
    field(f, T_STRING, 3);
    put_cstring(f, service_names[service]);
    put_u8(f, T_STOP);
}

/* An element of list<Annotation>: {1: timestamp, 2: value, 3: host} */
static void put_annotation(FILE *f, int64_t ts_us, const char *value, int service, const host *h)
{
    field(f, T_I64, 1);
    put_i64(f, (uint64_t)ts_us);
    field(f, T_STRING, 2);
    put_cstring(f, value);
    put_endpoint(f, 3, service, h);
    put_u8(f, T_STOP);
}

/* An element of list<BinaryAnnotation>: {1: key, 2: value, 3: type, 4: host} */
static void put_binary(FILE *f, const char *key, const char *value, size_t value_len, int type,
                       int service, const host *h)
{
    field(f, T_STRING, 1);
    put_cstring(f, key);
    field(f, T_STRING, 2);
    put_string(f, value, value_len);
    field(f, T_I32, 3);
    put_i32(f, (uint32_t)type);
    put_endpoint(f, 4, service, h);
    put_u8(f, T_STOP);
}

static void put_binary_str(FILE *f, const char *key, const char *value, int service, const host *h)
{
    put_binary(f, key, value, strlen(value), ANN_STRING, service, h);
}

static void write_zipkin_v1_thrift(FILE *f, uint64_t n_spans)
{
    put_u8(f, T_STRUCT);
    put_i32(f, (uint32_t)n_spans);
    uint64_t written = 0;
    for (uint64_t trace = 0; written < n_spans; trace++) {
        uint64_t trace_hi = random_id(), trace_lo = random_id();
        bool is_debug = random_below(1000) == 0;
        bool is_failed = random_below(100) == 0;
        uint64_t ids[SPANS_PER_TRACE];
        int parents[SPANS_PER_TRACE];
        const host *service_host[N_SERVICES];
        for (int s = 0; s < N_SERVICES; s++)
            service_host[s] = &hosts[s][random_below(HOSTS_PER_SERVICE)];
        for (int i = 0; i < SPANS_PER_TRACE; i++) {
            ids[i] = random_id();
            parents[i] = v1_trace[i].parent;
        }
        span_times t[SPANS_PER_TRACE];
        plan_times(parents, t, BASE_TIME_US + (int64_t)trace * 1500);

        for (int i = 0; i < SPANS_PER_TRACE && written < n_spans; i++, written++) {
            const plan *p = &v1_trace[i];
            const host *me = service_host[p->service];
            int64_t start = t[i].start_us, end = t[i].end_us;
            field(f, T_I64, 1);
            put_i64(f, trace_lo);
            field(f, T_STRING, 3);
            put_cstring(f, p->op);
            field(f, T_I64, 4);
            put_i64(f, ids[i]);
            if (p->parent >= 0) {
                field(f, T_I64, 5);
                put_i64(f, ids[p->parent]);
            }

            /* annotations */
            field(f, T_LIST, 6);
            put_u8(f, T_STRUCT);
            bool has_log = p->component && random_below(3) == 0;
            if (p->parent < 0) { /* the root: the frontend's server side only */
                put_i32(f, 2);
                put_annotation(f, start, "sr", p->service, me);
                put_annotation(f, end, "ss", p->service, me);
            } else if (p->peer >= 0) { /* an RPC: both halves */
                const host *callee = service_host[p->peer];
                int64_t latency = 100 + (int64_t)random_below(400);
                int64_t sr = start + latency, ss = end - latency;
                if (ss <= sr)
                    ss = sr + 1;
                put_i32(f, 4);
                put_annotation(f, start, "cs", p->service, me);
                put_annotation(f, sr, "sr", p->peer, callee);
                put_annotation(f, ss, "ss", p->peer, callee);
                put_annotation(f, end, "cr", p->service, me);
            } else { /* a local span: an event on some */
                put_i32(f, has_log ? 1 : 0);
                if (has_log)
                    put_annotation(f, start + (end - start) / 2, i == 3 ? "cache miss" : "flushed",
                                   p->service, me);
            }

            /* binary annotations */
            field(f, T_LIST, 8);
            put_u8(f, T_STRUCT);
            bool is_error = is_failed && i == 5;
            if (p->parent < 0) {
                static const char client_addr = 1;
                host client = {.ipv4 = 0xcb007100u | (uint32_t)random_below(200)};
                put_i32(f, 4);
                put_binary_str(f, "http.method", p->method, p->service, me);
                put_binary_str(f, "http.path", p->op + 4, p->service, me);
                put_binary_str(f, "http.status_code", "200", p->service, me);
                /* ca: the browser's address, no service name */
                field(f, T_STRING, 1);
                put_cstring(f, "ca");
                field(f, T_STRING, 2);
                put_string(f, &client_addr, 1);
                field(f, T_I32, 3);
                put_i32(f, ANN_BOOL);
                field(f, T_STRUCT, 4);
                field(f, T_I32, 1);
                put_i32(f, client.ipv4);
                field(f, T_I16, 2);
                put_i16(f, (uint16_t)(40000 + random_below(20000)));
                field(f, T_STRING, 3);
                put_cstring(f, "");
                put_u8(f, T_STOP);
                put_u8(f, T_STOP);
            } else if (p->peer >= 0) {
                static const char server_addr = 1;
                const host *callee = service_host[p->peer];
                char request_id[24];
                snprintf(request_id, sizeof request_id, "req-%016" PRIx64, next_random());
                put_i32(f, is_error ? 6 : 5);
                put_binary_str(f, "http.method", p->method, p->service, me);
                put_binary_str(f, "http.path", strchr(p->op, '/'), p->service, me);
                put_binary_str(f, "request.id", request_id, p->service, me);
                put_binary_str(f, "http.status_code", is_error ? "503" : "200", p->peer, callee);
                put_binary(f, "sa", &server_addr, 1, ANN_BOOL, p->peer, callee);
                if (is_error)
                    put_binary_str(f, "error", "stock service unavailable", p->peer, callee);
            } else {
                char key[40];
                snprintf(key, sizeof key, "item:%" PRIu64, random_below(100000));
                put_i32(f, 3);
                put_binary_str(f, "lc", p->component, p->service, me);
                put_binary_str(f, "cache.key", key, p->service, me);
                put_binary_str(f, "thread", "worker-3", p->service, me);
            }
            if (is_debug) {
                field(f, T_BOOL, 9);
                put_u8(f, 1);
            }
            field(f, T_I64, 10);
            put_i64(f, (uint64_t)start);
            field(f, T_I64, 11);
            put_i64(f, (uint64_t)(end - start));
            field(f, T_I64, 12);
            put_i64(f, trace_hi);
            put_u8(f, T_STOP);
        }
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s dapper|zipkin-v1-thrift N_SPANS FILE\n", argv[0]);
        return 2;
    }
    char *end = NULL;
    unsigned long long n = strtoull(argv[2], &end, 10);
    if (!end || *end || n == 0 || n > UINT32_MAX) {
        fprintf(stderr, "%s: N_SPANS must be 1..%" PRIu32 "\n", argv[0], UINT32_MAX);
        return 2;
    }
    bool is_dapper = strcmp(argv[1], "dapper") == 0;
    if (!is_dapper && strcmp(argv[1], "zipkin-v1-thrift") != 0) {
        fprintf(stderr, "%s: unknown format %s\n", argv[0], argv[1]);
        return 2;
    }
    FILE *f = fopen(argv[3], "wb");
    if (!f) {
        perror(argv[3]);
        return 1;
    }
    static char buffer[1 << 20];
    setvbuf(f, buffer, _IOFBF, sizeof buffer);
    init_hosts();
    if (is_dapper)
        write_dapper(f, n);
    else
        write_zipkin_v1_thrift(f, n);
    if (ferror(f) || fclose(f) != 0) {
        perror(argv[3]);
        return 1;
    }
    return 0;
}
