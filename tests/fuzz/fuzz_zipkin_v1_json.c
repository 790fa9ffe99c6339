/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_zipkin_v1_json.c: libFuzzer target for the zipkin-v1-json
 * reader (sdk/wire/zipkin/zipkin_v1_json_decode.c) and the V1 -> model conversion
 * it feeds (sdk/wire/zipkin/zipkin_v1.c). Real v1 files come from disks the
 * bridge does not control: any bytes must give spans, rejects and
 * warnings, never a crash, leak or hang.
 *
 * Checks per input: the reader returns TW_OK (it reads from memory, so no
 * I/O error can happen); every emitted span has a non-zero trace and span
 * id, a parent different from its id, non-negative times and a process
 * (a `span.kind` tag may hold anything: the input can carry one as a
 * binary annotation); every reject has a non-empty reason; the
 * sniffer's score is within 0..100.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/zipkin_v1_json/ (small real-shaped v1 spans).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_zipkin_v1_json: %s\n", what);
    abort();
}

void tw_fuzz_check_spans(const read_capture *c);
void tw_fuzz_check_spans(const read_capture *c)
{
    for (size_t i = 0; i < c->n_spans; i++) {
        const tw__span_data *s = c->spans[i].data;
        if ((s->trace_id_low == 0 && s->trace_id_high == 0) || s->span_id == 0)
            fail("a span with a zero id was emitted");
        if (s->parent_id == s->span_id)
            fail("a span is its own parent");
        if (s->duration_us < 0 || s->start_us < 0)
            fail("a negative time was emitted");
        if (!c->spans[i].process || !c->spans[i].process->service_name)
            fail("a span without a process");
    }
    for (size_t i = 0; i < c->n_rejects; i++) {
        if (!c->rejects[i].reason[0])
            fail("a reject without a reason");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_capture c;
    capture_init(&c);
    if (capture_read_mem(&c, &twb_reader_zipkin_v1_json, data, size) != TW_OK)
        fail("the reader did not finish with TW_OK");
    tw_fuzz_check_spans(&c);
    capture_free(&c);
    int score = twb_reader_zipkin_v1_json.sniff(data, size);
    if (score < 0 || score > 100)
        fail("sniff score out of range");
    tw__span_data_pool_trim();
    return 0;
}
