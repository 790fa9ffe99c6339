/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_custom.c: libFuzzer target for the `--from custom` reader
 * and its mapping parser (sdk/wire/custom/custom.c). The first input line is
 * a mapping (--map text; when it does not parse, a fixed mapping is used);
 * the rest is read once as JSON lines and once as TSV (header=yes). Bad
 * lines must be rejected with their line number, never crash, leak or hang.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in tests/fuzz/corpus/custom/.
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
    fprintf(stderr, "fuzz_custom: %s\n", what);
    abort();
}

static void read_with(twb_custom_map *m, const uint8_t *body, size_t len)
{
    read_capture c;
    capture_init(&c);
    c.opts.custom = m;
    tw_status st = capture_read_mem(&c, &twb_reader_custom, body, len);
    if (st != TW_OK && st != TW_E_NOMEM && st != TW_E_CONFIG)
        fail("the reader failed on memory input");
    for (size_t i = 0; i < c.n_rejects; i++) {
        if (c.rejects[i].line_no == 0 || !c.rejects[i].reason[0])
            fail("a reject has no line or no reason");
    }
    for (size_t i = 0; i < c.n_spans; i++) {
        const tw__span_data *s = c.spans[i].data;
        if (s->span_id == 0 || (s->trace_id_high | s->trace_id_low) == 0 || s->duration_us < 0)
            fail("an emitted span breaks the model's invariants");
    }
    capture_free(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    size_t spec_len = nl ? (size_t)(nl - data) : size;
    char *spec = malloc(spec_len + 1);
    if (!spec)
        return 0;
    memcpy(spec, data, spec_len);
    spec[spec_len] = '\0';
    twb_custom_map m = {0};
    char why[256];
    if (strlen(spec) != spec_len || !twb_custom_map_parse(&m, spec, false, why, sizeof why)) {
        twb_custom_map_clear(&m);
        if (!twb_custom_map_parse(&m,
                                  "trace_id=t,span_id=s,parent_id=p,start=ts,end=te,duration=d,"
                                  "name=n,service=svc,kind=k,error=e,tags=a|b.c",
                                  false, why, sizeof why))
            fail("the fixed mapping does not parse");
    }
    /* The same text as a mapping file must parse or fail with a reason too. */
    twb_custom_map as_file = {0};
    why[0] = '\0';
    if (!twb_custom_map_parse(&as_file, spec, true, why, sizeof why) && !why[0])
        fail("a mapping failed without a reason");
    twb_custom_map_clear(&as_file);
    free(spec);
    const uint8_t *body = nl ? nl + 1 : data + size;
    size_t len = size - (size_t)(body - data);
    bool was_tsv = m.is_tsv, had_header = m.has_header;
    m.is_tsv = false;
    read_with(&m, body, len);
    m.is_tsv = true;
    m.has_header = true;
    read_with(&m, body, len);
    m.is_tsv = was_tsv;
    m.has_header = had_header;
    twb_custom_map_clear(&m);
    tw__span_data_pool_trim();
    return 0;
}
