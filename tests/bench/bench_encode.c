/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/bench/bench_encode.c: the cost of each wire encoder per span, on the
 * reporter thread's own terms (make bench; never make check).
 *
 * The span is the benchmark's standard one as the SDK records it at finish
 * (start, 2 tags, finish, plus the sampler tags a root span carries) with
 * the SDK's usual process (service, hostname, ip, version). Each encoder
 * writes batches of BATCH spans into a reused buffer, as the senders do:
 *
 *   bench_encode ir FORMAT N   encode N spans (callgrind counts; the
 *                              difference between N and 0 is the cost of N)
 *   bench_encode table [N]     spans/s of each encoder (wall clock)
 *
 * FORMAT: jaeger-compact, jaeger-binary (one Span struct each), zipkin-json,
 * otlp-json and otlp-proto (a whole request body per batch), dapper (a log
 * line each).
 *
 * The table holds the wire layer's target for the HTTP senders' encoders:
 * Zipkin JSON, OTLP JSON and OTLP protobuf >= 500,000 spans/s each on the
 * reporter thread; its last column says whether this run met it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wire/dapper/dapper_log.h"
#include "wire/jaeger/jaeger_thrift.h"
#include "wire/otlp/otlp_json.h"
#include "wire/otlp/otlp_proto.h"
#include "wire/zipkin/zipkin_v2_json.h"

#define BATCH 100

static tw__span_data *standard_span(int64_t i)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_low = 0x1234567890abcdefu + (uint64_t)i;
    s->span_id = 0x1122334455667788u ^ (uint64_t)i;
    s->flags = TW__FLAG_SAMPLED;
    s->start_us = INT64_C(1764000000000000) + i;
    s->duration_us = 12;
    tw_value v;
    bool cut;
    tw__tag *t;
    bool ok = tw__span_data_set_operation(s, "bench-op", 8);
    v = (tw_value){.type = TW_VALUE_STRING, .as.str = "const", .len = 5};
    ok = ok && (t = tw__span_data_push_tag(s)) &&
         tw__tag_set(&s->arena, t, "sampler.type", &v, SIZE_MAX, &cut) && ++s->n_tags;
    v = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = true};
    ok = ok && (t = tw__span_data_push_tag(s)) &&
         tw__tag_set(&s->arena, t, "sampler.param", &v, SIZE_MAX, &cut) && ++s->n_tags;
    v = (tw_value){.type = TW_VALUE_STRING, .as.str = "bench", .len = 5};
    ok = ok && (t = tw__span_data_push_tag(s)) &&
         tw__tag_set(&s->arena, t, "component", &v, SIZE_MAX, &cut) && ++s->n_tags;
    v = (tw_value){.type = TW_VALUE_INT64, .as.i64 = i};
    ok = ok && (t = tw__span_data_push_tag(s)) &&
         tw__tag_set(&s->arena, t, "i", &v, SIZE_MAX, &cut) && ++s->n_tags;
    if (!ok) {
        tw__span_data_unref(s);
        return NULL;
    }
    return s;
}

static bool standard_process(tw__process *p)
{
    tw__process_init(p);
    tw_value host = {.type = TW_VALUE_STRING, .as.str = "bench-host", .len = 10};
    tw_value ip = {.type = TW_VALUE_STRING, .as.str = "10.0.0.1", .len = 8};
    tw_value ver = {.type = TW_VALUE_STRING, .as.str = "0.1.0", .len = 5};
    return tw__process_set_service(p, "bench") && tw__process_add_tag(p, "hostname", &host) &&
           tw__process_add_tag(p, "ip", &ip) && tw__process_add_tag(p, "tracewire.version", &ver);
}

typedef enum { F_COMPACT, F_BINARY, F_ZIPKIN, F_OTLP, F_OTLP_PROTO, F_DAPPER, N_FORMATS } format;
static const char *const format_names[N_FORMATS] = {
    "jaeger-compact", "jaeger-binary", "zipkin-json", "otlp-json", "otlp-proto", "dapper"};
/* The target in spans/s of each encoder (0: none set). */
static const double format_target[N_FORMATS] = {
    [F_ZIPKIN] = 500000, [F_OTLP] = 500000, [F_OTLP_PROTO] = 500000};

/* Encodes @n spans in batches; returns the bytes written (0 on failure). */
static uint64_t run(format f, long n, tw__span_data **spans, const tw__process *p)
{
    tw__buf out;
    tw__buf_init(&out);
    tw__jaeger_encoder *jenc = NULL;
    tw__dapper_log_encoder *denc = NULL;
    if (f == F_COMPACT || f == F_BINARY)
        jenc = tw__jaeger_encoder_new(f == F_COMPACT ? TW__THRIFT_COMPACT : TW__THRIFT_BINARY);
    if (f == F_DAPPER)
        denc = tw__dapper_log_encoder_new(p);
    uint64_t bytes = 0;
    bool ok = true;
    for (long done = 0; ok && done < n; done += BATCH) {
        size_t k = n - done < BATCH ? (size_t)(n - done) : BATCH;
        tw__buf_reset(&out);
        switch (f) {
        case F_COMPACT:
        case F_BINARY:
            for (size_t i = 0; ok && i < k; i++)
                ok = tw__jaeger_encode_span(jenc, spans[i], &out);
            break;
        case F_ZIPKIN:
            ok = tw__zipkin_encode_spans(spans, k, p, &out);
            break;
        case F_OTLP:
            ok = tw__otlp_encode_request(spans, k, p, &out);
            break;
        case F_OTLP_PROTO:
            ok = tw__otlp_proto_encode_request(spans, k, p, &out);
            break;
        case F_DAPPER:
            for (size_t i = 0; ok && i < k; i++)
                ok = tw__dapper_log_encode_span(denc, spans[i], &out);
            break;
        default:
            ok = false;
        }
        bytes += out.len;
    }
    tw__jaeger_encoder_free(jenc);
    tw__dapper_log_encoder_free(denc);
    tw__buf_free(&out);
    return ok ? bytes : 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    tw__span_data *spans[BATCH];
    for (int i = 0; i < BATCH; i++) {
        if (!(spans[i] = standard_span(i)))
            return 1;
    }
    tw__process p;
    if (!standard_process(&p))
        return 1;
    int rc = 0;
    if (argc == 4 && strcmp(argv[1], "ir") == 0) {
        format f = 0;
        while (f < N_FORMATS && strcmp(argv[2], format_names[f]) != 0)
            f++;
        long n = atol(argv[3]);
        if (f == N_FORMATS || n < 0) {
            fprintf(stderr, "bench_encode: unknown format %s\n", argv[2]);
            rc = 2;
        } else if (n > 0 && run(f, n, spans, &p) == 0) {
            fprintf(stderr, "bench_encode: %s failed\n", argv[2]);
            rc = 1;
        }
    } else if (argc >= 2 && strcmp(argv[1], "table") == 0) {
        long n = argc >= 3 ? atol(argv[2]) : 1000000;
        printf("Encoders on the reporter thread's terms: %ld standard spans, batches of %d\n", n,
               BATCH);
        printf("| %-14s | %12s | %10s | %-18s | %-7s |\n", "encoder", "spans/s", "bytes/span",
               "target", "verdict");
        printf("|----------------|--------------|------------|--------------------|---------|\n");
        for (format f = 0; f < N_FORMATS; f++) {
            double t0 = now_s();
            uint64_t bytes = run(f, n, spans, &p);
            double t1 = now_s();
            if (bytes == 0) {
                fprintf(stderr, "bench_encode: %s failed\n", format_names[f]);
                rc = 1;
                continue;
            }
            double rate = (double)n / (t1 - t0);
            const char *verdict = format_target[f] == 0      ? "-"
                                  : rate >= format_target[f] ? "OK"
                                                             : "MISSED";
            printf("| %-14s | %12.0f | %10.1f | %-18s | %-7s |\n", format_names[f], rate,
                   (double)bytes / (double)n, format_target[f] == 0 ? "-" : ">= 500,000 span/s",
                   verdict);
        }
    } else {
        fprintf(stderr, "usage: bench_encode ir jaeger-compact|jaeger-binary|zipkin-json|"
                        "otlp-json|otlp-proto|dapper N\n       bench_encode table [N]\n");
        rc = 2;
    }
    for (int i = 0; i < BATCH; i++)
        tw__span_data_unref(spans[i]);
    tw__process_clear(&p);
    return rc;
}
