/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_proto.c: the cost of the OTLP encodings per span (make
 * bench; never make check), on the standard span of the benchmarks (a
 * sampled root span with two tags, so with the const sampler's two tags as
 * well, and a process with three tags, as bench_tracer's tracer makes it):
 *
 *   encode-direct     the OTLP protobuf writer of the otlp-http-proto reporter
 *                     (wire/otlp/otlp_proto.c), span by span into a reused
 *                     buffer, a body assembled every 512 spans
 *   encode-protobuf-c the same bytes through protobuf-c: structs allocated
 *                     per span from the same plan, protobuf_c_message_pack()
 *                     (the alternative the direct writer was measured against)
 *   encode-json       the OTLP/JSON encoder of the otlp-http reporter (Jansson)
 *   decode            a request of 512 spans decoded by the `--from otlp-proto`
 *                     decoder (checks, protobuf-c unpack, the model)
 *
 * `bench_proto table [N]` prints spans/s and ns/span per mode (best of 3);
 * `bench_proto ir MODE N` runs MODE over N spans once, for callgrind: the
 * instruction difference between N and 0 spans, over N, is the cost per span
 * (tests/bench/run_proto_bench.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opentelemetry/proto/collector/trace/v1/trace_service.pb-c.h"
#include "wire/jaeger/jaeger_thrift.h"
#include "wire/core/json_common.h"
#include "wire/otlp/otlp_map.h"
#include "wire/otlp/otlp_proto.h"
#include "wire/otlp/otlp_json.h"
#include "wire/otlp_proto_ref.h"

#define BATCH 512

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static tw__process process;
static tw__span_data *spans[BATCH];

static void add_tag(tw__span_data *s, const char *key, tw_value v)
{
    tw__tag *t = tw__span_data_push_tag(s);
    bool cut;
    if (!t || !tw__tag_set(&s->arena, t, key, &v, SIZE_MAX, &cut))
        abort();
    s->n_tags++;
}

static void make_spans(void)
{
    tw__process_init(&process);
    tw_value host = {.type = TW_VALUE_STRING, .as.str = "bench-host", .len = 10};
    tw_value ip = {.type = TW_VALUE_STRING, .as.str = "10.0.0.7", .len = 8};
    tw_value version = {.type = TW_VALUE_STRING, .as.str = "C-0.1.0", .len = 7};
    if (!tw__process_set_service(&process, "bench") ||
        !tw__process_add_tag(&process, "hostname", &host) ||
        !tw__process_add_tag(&process, "ip", &ip) ||
        !tw__process_add_tag(&process, "tracewire.version", &version))
        abort();
    for (size_t i = 0; i < BATCH; i++) {
        tw__span_data *s = tw__span_data_new();
        if (!s || !tw__span_data_set_operation(s, "bench-op", 8))
            abort();
        s->trace_id_high = 0x0af7651916cd43ddu + i;
        s->trace_id_low = 0x8448eb211c80319cu * (i + 1);
        s->span_id = 0x00f067aa0ba902b7u + i;
        s->flags = TW__FLAG_SAMPLED;
        s->start_us = 1700000000000000 + (int64_t)i;
        s->duration_us = 12;
        add_tag(s, "sampler.type",
                (tw_value){.type = TW_VALUE_STRING, .as.str = "const", .len = 5});
        add_tag(s, "sampler.param", (tw_value){.type = TW_VALUE_BOOL, .as.boolean = true});
        add_tag(s, "component", (tw_value){.type = TW_VALUE_STRING, .as.str = "bench", .len = 5});
        add_tag(s, "i", (tw_value){.type = TW_VALUE_INT64, .as.i64 = (int64_t)i});
        spans[i] = s;
    }
}

/* ---- the modes: each handles @n spans (cycling over the batch) ------------------------------ */

static size_t sink_bytes;

static void encode_direct(size_t n)
{
    static tw__buf items, body;
    static tw__otlp_proto_envelope env;
    static bool is_ready;
    if (!is_ready) {
        if (!tw__otlp_proto_envelope_init(&env, &process))
            abort();
        is_ready = true;
    }
    for (size_t done = 0; done < n;) {
        size_t k = n - done < BATCH ? n - done : BATCH;
        tw__buf_reset(&items);
        for (size_t i = 0; i < k; i++) {
            if (!tw__otlp_proto_encode_span(spans[i], &items))
                abort();
        }
        tw__buf_reset(&body);
        if (!tw__otlp_proto_put_resource_spans_head(&env, items.len, &body) ||
            !tw__buf_append(&body, items.data, items.len))
            abort();
        sink_bytes += body.len;
        done += k;
    }
}

static void encode_protobuf_c(size_t n)
{
    static tw__buf body;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < BATCH ? n - done : BATCH;
        ref r = {0};
        ref_request(&r, spans, k, &process, &body);
        ref_free(&r);
        sink_bytes += body.len;
        done += k;
    }
}

static void encode_json(size_t n)
{
    static tw__buf body;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < BATCH ? n - done : BATCH;
        if (!tw__otlp_encode_request(spans, k, &process, &body))
            abort();
        sink_bytes += body.len;
        done += k;
    }
}

static bool count_span(void *arg, tw__span_data *span, const tw__process *p, const uint8_t *raw,
                       size_t raw_len)
{
    (void)raw;
    (void)raw_len;
    (void)p;
    ++*(size_t *)arg;
    tw__span_data_unref(span);
    return true;
}

static void decode(size_t n)
{
    static tw__buf request;
    if (request.len == 0 && !tw__otlp_proto_encode_request(spans, BATCH, &process, &request))
        abort();
    size_t got = 0;
    const tw__otlp_proto_sink sink = {count_span, NULL, NULL, &got};
    for (size_t done = 0; done < n; done += BATCH) {
        if (tw__otlp_proto_decode_request(request.data, request.len, &sink) != TW__OTLP_PROTO_OK)
            abort();
    }
    sink_bytes += got;
}

static const struct {
    const char *name;
    void (*run)(size_t n);
} modes[] = {{"encode-direct", encode_direct},
             {"encode-protobuf-c", encode_protobuf_c},
             {"encode-json", encode_json},
             {"decode", decode}};
#define N_MODES (sizeof modes / sizeof modes[0])

int main(int argc, char **argv)
{
    make_spans();
    if (argc == 4 && strcmp(argv[1], "ir") == 0) {
        size_t n = strtoul(argv[3], NULL, 10);
        for (size_t m = 0; m < N_MODES; m++) {
            if (strcmp(modes[m].name, argv[2]) == 0) {
                modes[m].run(n ? BATCH : 0); /* the first batch's allocations, in both runs */
                modes[m].run(n);
                return sink_bytes == 0 && n ? 1 : 0;
            }
        }
        fprintf(stderr, "bench_proto: unknown mode %s\n", argv[2]);
        return 2;
    }
    size_t n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
    printf("\nOTLP encodings: %zu standard spans per run (best of 3), bodies of %d spans\n", n,
           BATCH);
    printf("| %-18s | %12s | %10s |\n", "mode", "spans/s", "ns/span");
    printf("|--------------------|--------------|------------|\n");
    for (size_t m = 0; m < N_MODES; m++) {
        modes[m].run(BATCH); /* warm up */
        double best = 1e9;
        for (int rep = 0; rep < 3; rep++) {
            double t0 = now_s();
            modes[m].run(n);
            double dt = now_s() - t0;
            best = dt < best ? dt : best;
        }
        printf("| %-18s | %12.0f | %10.1f |\n", modes[m].name, (double)n / best,
               best * 1e9 / (double)n);
    }
    return 0;
}
