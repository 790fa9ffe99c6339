/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_agent_receive.c: libFuzzer target for every receiver of
 * `tracewire agent` (bridge/agent/decode.h): the first byte picks the path
 * (Jaeger emitBatch compact or binary datagram, Zipkin emitZipkinBatch
 * compact datagram, or one row of the HTTP body table, optionally through
 * the bounded gzip inflater), the rest is the datagram or body. Any input
 * must give spans, counted rejects or a refusal with a reason; never a
 * crash, leak or hang; and an inflated body never exceeds its bound.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in tests/fuzz/corpus/agent_receive/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const routes[][2] = {
    {"/v1/traces", "application/json"},        {"/v1/traces", "application/x-protobuf"},
    {"/api/v2/spans", "application/json"},     {"/api/v1/spans", "application/json"},
    {"/api/v1/spans", "application/x-thrift"}, {"/api/traces", "application/x-thrift"},
};
#define N_ROUTES (sizeof routes / sizeof routes[0])
#define MAX_INFLATED ((size_t)1 << 20)

static twa_pipeline *pipeline(void)
{
    static twa_pipeline *p;
    if (!p) {
        twa_pipeline_options o = {0};
        char why[256];
        p = twa_pipeline_new(&o, NULL, 0, why, sizeof why); /* no destinations: spans dropped */
        if (!p)
            abort();
    }
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned int which = data[0];
    data++;
    size--;
    twa_spanbuf sb;
    twa_recv_stats stats = {.name = "fuzz"};
    twa_spanbuf_init(&sb, pipeline(), &stats);
    char why[512] = "";
    twa_decode_result r;
    tw__buf inflated;
    tw__buf_init(&inflated);
    switch (which % 8) {
    case 0:
        r = twa_decode_jaeger_compact(data, size, &sb, why, sizeof why);
        break;
    case 1:
        r = twa_decode_jaeger_binary(data, size, &sb, why, sizeof why);
        break;
    case 2:
        r = twa_decode_zipkin_compact(data, size, &sb, why, sizeof why);
        break;
    default: {
        const char *const *row = routes[(which >> 3) % N_ROUTES];
        bool known;
        const twa_body_format *f = twa_body_format_find(row[0], row[1], &known);
        if (!f || !known)
            abort();
        if (which % 8 == 7) { /* gzip first */
            r = twa_inflate(data, size, MAX_INFLATED, &inflated, why, sizeof why);
            if (inflated.len > MAX_INFLATED)
                abort();
            if (r != TWA_DECODE_OK)
                break;
            data = inflated.data;
            size = inflated.len;
        }
        if (f->decode) {
            r = f->decode(data, size, &sb, why, sizeof why);
        } else {
            r = TWA_DECODE_UNSUPPORTED;
            snprintf(why, sizeof why, "%s", f->missing);
        }
        break;
    }
    }
    if (r != TWA_DECODE_OK && r != TWA_DECODE_NOMEM && !why[0])
        abort(); /* a refusal always says why */
    for (size_t i = 0; i < sb.n; i++) {
        const tw__span_data *s = sb.items[i].data;
        if (s->span_id == 0 || (s->trace_id_high | s->trace_id_low) == 0 || !sb.items[i].proc)
            abort();
    }
    twa_spanbuf_flush(&sb);
    twa_spanbuf_clear(&sb);
    tw__buf_free(&inflated);
    tw__span_data_pool_trim();
    return 0;
}
