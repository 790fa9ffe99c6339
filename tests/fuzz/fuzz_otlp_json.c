/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_otlp_json.c: libFuzzer target for the `--from otlp-json`
 * reader (sdk/wire/otlp/otlp_json_decode.c): any bytes, as one document or NDJSON,
 * must give spans, rejects with a line number and a reason, or warnings;
 * never a crash, leak or hang. Every emitted span keeps the model's
 * invariants (non-zero ids, duration >= 0, no parent equal to the span).
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in tests/fuzz/corpus/otlp_json/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "bridge/read_capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_otlp_json: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_capture c;
    capture_init(&c);
    tw_status st = capture_read_mem(&c, &twb_reader_otlp_json, data, size);
    if (st != TW_OK && st != TW_E_NOMEM)
        fail("the reader failed on memory input");
    for (size_t i = 0; i < c.n_spans; i++) {
        const tw__span_data *s = c.spans[i].data;
        if (s->span_id == 0 || (s->trace_id_high | s->trace_id_low) == 0 || s->duration_us < 0 ||
            s->parent_id == s->span_id || !c.spans[i].process)
            fail("an emitted span breaks the model's invariants");
    }
    for (size_t i = 0; i < c.n_rejects; i++) {
        if (c.rejects[i].line_no == 0 || !c.rejects[i].reason[0])
            fail("a reject has no line or no reason");
    }
    capture_free(&c);
    tw__span_data_pool_trim();
    return 0;
}
