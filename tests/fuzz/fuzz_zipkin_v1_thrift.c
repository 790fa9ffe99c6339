/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_zipkin_v1_thrift.c: libFuzzer target for the Zipkin v1
 * Thrift decoder (sdk/wire/zipkin/zipkin_v1_thrift.c), the zipkin-v1-thrift
 * reader over it (sdk/wire/zipkin/zipkin_v1_thrift_read.c: raw list<Span> when
 * the first byte is 12, else Scribe base64 lines) and the V1 -> model
 * conversion (sdk/wire/zipkin/zipkin_v1.c). Any bytes must give spans,
 * rejects and warnings, never a crash, leak, hang or an allocation the
 * input's size does not justify.
 *
 * The decoder is also run directly on the input (as a bare Span struct):
 * measuring and decoding must agree on the outcome and the size, and the
 * decoder's binary fast path must give what the protocol-neutral reader
 * gives (tw__zipkin_thrift_decode_span_slow): result, size, reason, span.
 *
 * Checks per input: the reader returns TW_OK (it reads from memory, so no
 * I/O error can happen); every emitted span has a non-zero trace and span
 * id, a parent different from its id, non-negative times and a process
 * (a `span.kind` tag may hold anything: the input can carry one as a
 * binary annotation); every reject has a non-empty reason; the
 * sniffer's score is within 0..100.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/zipkin_v1_thrift/ (payload_0.thrift, Scribe lines).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"
#include "bridge/zipkin_v1_span_equal.h"
#include "wire/zipkin/zipkin_v1_thrift.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_zipkin_v1_thrift: %s\n", what);
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
    tw__zipkin_v1_span *span = malloc(sizeof *span);
    if (!span)
        return 0;
    tw__zipkin_v1_span_init(span);
    size_t measured = 0, decoded = 0;
    char why[256];
    tw__thrift_result m = tw__zipkin_thrift_measure_span(data, size, &measured, why, sizeof why);
    tw__thrift_result d =
        tw__zipkin_thrift_decode_span(data, size, span, &decoded, why, sizeof why);
    /* They agree, except that decoding also enforces TW__ZIPKIN_MAX_ITEMS. */
    bool is_capped = d == TW__THRIFT_MALFORMED && strstr(why, "annotations in one span");
    if (d != TW__THRIFT_NOMEM && m != d && !(m == TW__THRIFT_OK && is_capped))
        fail("measure and decode disagree");
    if (d == TW__THRIFT_OK && (measured != decoded || decoded > size))
        fail("measure and decode disagree on the size");
    if (d != TW__THRIFT_OK && !why[0])
        fail("a failure without a reason");
    tw__zipkin_v1_span *slow = malloc(sizeof *slow);
    if (slow) {
        tw__zipkin_v1_span_init(slow);
        size_t slow_size = 0;
        char slow_why[256];
        tw__thrift_result s = tw__zipkin_thrift_decode_span_slow(data, size, slow, &slow_size,
                                                                 slow_why, sizeof slow_why);
        if (d != TW__THRIFT_NOMEM && s != TW__THRIFT_NOMEM) {
            if (s != d || strcmp(slow_why, why) != 0)
                fail("the fast path and the general reader disagree on the outcome");
            if (d == TW__THRIFT_OK && (slow_size != decoded || !tw_test_v1_spans_equal(span, slow)))
                fail("the fast path and the general reader decode different spans");
        }
        /* Again, from a copy, into the same span: the fast path now finds
         * the Endpoints it kept from the first decode (by their bytes, not
         * the first buffer's addresses), and must answer the same. */
        uint8_t *copy = malloc(size ? size : 1);
        if (copy && d != TW__THRIFT_NOMEM && s != TW__THRIFT_NOMEM) {
            memcpy(copy, data, size);
            size_t again = 0;
            char again_why[256];
            tw__thrift_result a = tw__zipkin_thrift_decode_span(copy, size, span, &again, again_why,
                                                                sizeof again_why);
            if (a != TW__THRIFT_NOMEM) {
                if (a != d || strcmp(again_why, why) != 0)
                    fail("a second decode with kept Endpoints disagrees on the outcome");
                if (a == TW__THRIFT_OK && (again != decoded || !tw_test_v1_spans_equal(span, slow)))
                    fail("a second decode with kept Endpoints gives a different span");
            }
        }
        free(copy);
        tw__zipkin_v1_span_clear(slow);
        free(slow);
    }
    tw__zipkin_v1_span_clear(span);
    free(span);

    capture_init(&c);
    if (capture_read_mem(&c, &twb_reader_zipkin_v1_thrift, data, size) != TW_OK)
        fail("the reader did not finish with TW_OK");
    tw_fuzz_check_spans(&c);
    capture_free(&c);
    int score = twb_reader_zipkin_v1_thrift.sniff(data, size);
    if (score < 0 || score > 100)
        fail("sniff score out of range");
    tw__span_data_pool_trim();
    return 0;
}
