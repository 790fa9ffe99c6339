/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_zipkin_proto.c: libFuzzer target for the
 * `--from zipkin-v2-proto` decoder (sdk/wire/zipkin/zipkin_proto_read.c, over
 * sdk/wire/zipkin/zipkin_proto.c and the zipkin-v2-json reader's rules):
 * any bytes give spans, rejects with a reason, or warnings; never a crash,
 * leak or hang. Every span decoded is written again as proto3 and read back:
 * it must give one span again.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in tests/fuzz/corpus/zipkin_proto/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"
#include "internal.h"
#include "wire/zipkin/zipkin_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_zipkin_proto: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_capture c;
    capture_init(&c);
    tw_status st = capture_read_mem(&c, &twb_reader_zipkin_v2_proto, data, size);
    if (st != TW_OK && st != TW_E_NOMEM)
        fail("the reader failed on memory input");
    for (size_t i = 0; i < c.n_rejects; i++) {
        if (!c.rejects[i].reason[0])
            fail("a reject has no reason");
    }
    for (size_t i = 0; i < c.n_spans; i++) {
        const tw__span_data *s = c.spans[i].data;
        if (s->span_id == 0 || (s->trace_id_high | s->trace_id_low) == 0 || s->duration_us < 0 ||
            s->parent_id == s->span_id || !c.spans[i].process)
            fail("an emitted span breaks the model's invariants");
        tw__buf b;
        tw__buf_init(&b);
        if (!tw__zipkin_proto_encode_span(s, c.spans[i].process, &b))
            fail("a decoded span cannot be encoded");
        read_capture again;
        capture_init(&again);
        capture_read_mem(&again, &twb_reader_zipkin_v2_proto, b.data, b.len);
        if (again.n_spans != 1 || again.n_rejects != 0)
            fail("a re-encoded span does not read back as one span");
        capture_free(&again);
        tw__buf_free(&b);
    }
    capture_free(&c);
    tw__span_data_pool_trim();
    return 0;
}
