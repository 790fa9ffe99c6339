/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_jaeger_thrift.c: libFuzzer target for the Jaeger Thrift
 * decoder (sdk/wire/jaeger/jaeger_thrift_decode.c) and the `--from
 * jaeger-thrift` reader (sdk/wire/jaeger/jaeger_thrift_read.c). Both read files
 * from disks we do not control: no crash, leak, hang or allocation beyond
 * what the bytes justify.
 *
 * Checks: the input decoded as a Batch struct and as an emitBatch message
 * in both protocols; OK means a size within the input and as many spans
 * (good + bad) as the list claimed; TRUNCATED asks for more bytes than were
 * given; MALFORMED names an offset inside the input and a reason; a bad
 * span's bytes lie inside the record. Then the whole input goes through the
 * reader, whose rejects all name a byte offset.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/jaeger_thrift/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "bridge/read_capture.h"
#include "wire/jaeger/jaeger_thrift_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_jaeger_thrift: %s\n", what);
    abort();
}

typedef struct counts {
    size_t size;
    size_t good, bad;
} counts;

static bool on_span(void *user_data, tw__span_data *span, const tw__process *process)
{
    counts *c = user_data;
    if (!span || !process || !process->service_name || span->span_id == 0 ||
        (span->trace_id_high | span->trace_id_low) == 0 || span->duration_us < 0)
        fail("a decoded span breaks the model's invariants");
    tw__span_data_unref(span);
    c->good++;
    return true;
}

static bool on_bad(void *user_data, size_t index, size_t offset, size_t len, const char *why)
{
    counts *c = user_data;
    (void)index;
    if (offset > c->size || len > c->size - offset || len == 0 || !why || !why[0])
        fail("a bad span's bytes are outside the input or it has no reason");
    c->bad++;
    return true;
}

static void decode_as(const uint8_t *data, size_t size, tw__thrift_protocol proto, bool message)
{
    counts c = {size, 0, 0};
    /* No input: only the model's time range is checked where spans enter it
     * (the reader below goes through the input's admission). */
    tw__jaeger_sink sink = {on_span, on_bad, NULL, &c, NULL};
    tw__jaeger_record info;
    size_t need = 0, at = SIZE_MAX;
    char why[256] = "";
    tw__thrift_result r =
        tw__jaeger_decode(data, size, proto, message, &sink, &info, &need, &at, why, sizeof why);
    switch (r) {
    case TW__THRIFT_OK:
        if (info.size == 0 || info.size > size || info.n_spans != c.good + c.bad)
            fail("OK with a wrong size or span count");
        break;
    case TW__THRIFT_SHORT:
        if (need <= size || c.good + c.bad)
            fail("TRUNCATED without asking for more, or after emitting spans");
        break;
    case TW__THRIFT_MALFORMED:
        if (at > size || !why[0])
            fail("MALFORMED without an offset in the input or a reason");
        break;
    case TW__THRIFT_NOMEM:
        break;
    default:
        fail("an unexpected result");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Exactly the input's size, so that ASan sees any read past its end. */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    if (size)
        memcpy(copy, data, size);
    for (int proto = 0; proto < 2; proto++) {
        decode_as(copy, size, (tw__thrift_protocol)proto, false);
        decode_as(copy, size, (tw__thrift_protocol)proto, true);
    }
    tw__thrift_protocol p;
    bool is_message;
    (void)tw__jaeger_detect(copy, size, &p, &is_message);
    free(copy);

    read_capture c;
    capture_init(&c);
    tw_status st = capture_read_mem(&c, &twb_reader_jaeger_thrift, data, size);
    if (st != TW_OK && st != TW_E_NOMEM)
        fail("the reader failed on memory input");
    for (size_t i = 0; i < c.n_rejects; i++) {
        if (strncmp(c.rejects[i].reason, "byte offset ", 12) != 0 || c.rejects[i].line_no != 0)
            fail("a reject does not name its byte offset");
    }
    capture_free(&c);
    tw__span_data_pool_trim();
    return 0;
}
