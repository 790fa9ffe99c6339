/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_dapper_fast.c: libFuzzer target for the fast Dapper log
 * decoders: the direct one (sdk/wire/dapper/dapper_log_direct.c on
 * wire/core/json_direct.h) and the scanner one (dapper_log_fast.c on
 * wire/core/json_scan.c). Their one promise: for any line, when one
 * accepts, the Jansson decoder (tw__dapper_log_decode_jansson) accepts too
 * and gives an equal record (every model field, shared,
 * is_duration_unknown) and an equal process; when it declines, nothing is
 * set and nothing leaks (ASan's leak check), and the public decoder gives
 * exactly the Jansson decoder's result.
 *
 * Input: the whole input is one line, prepared as tw__dapper_log_decode
 * prepares it (a final "\n" or "\r\n" dropped; a line with a NUL byte is
 * refused by the public decoder after the direct decoder declined it: only
 * that decline is checked here). The public
 * decoder gets the raw input and prepares it itself.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/dapper_fast/, tokens in tests/fuzz/dapper_fast.dict.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_equal.h"
#include "wire/dapper/dapper_log.h"
#include "wire/dapper/dapper_log_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_dapper_fast: %s\n", what);
    abort();
}

static bool processes_equal(const tw__process *a, const tw__process *b)
{
    return strcmp(a->service_name, b->service_name) == 0 &&
           tw_test_tags_equal(a->tags, a->n_tags, b->tags, b->n_tags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *line = (const char *)data;
    size_t len = size;
    if (len && line[len - 1] == '\n')
        len--;
    if (len && line[len - 1] == '\r')
        len--;
    if (memchr(line, '\0', len)) {
        /* The public decoder gives the direct decoder such lines: it must
         * decline them. */
        tw__span_data *ds = NULL;
        tw__process dp;
        if (tw__dapper_log_decode_direct(line, len, &ds, &dp) || ds)
            fail("the direct decoder accepted a line with a NUL byte");
        return 0;
    }
    tw__span_data *fs = NULL, *js = NULL, *ds = NULL;
    tw__process fp, jp, dp;
    tw_error *je = NULL;
    bool direct_ok = tw__dapper_log_decode_direct(line, len, &ds, &dp);
    bool fast_ok = tw__dapper_log_decode_fast(line, len, &fs, &fp);
    tw_status jst = tw__dapper_log_decode_jansson(line, len, 1, &js, &jp, &je);
    if (direct_ok) {
        if (jst != TW_OK)
            fail("the direct decoder accepted a line the Jansson decoder rejects");
        if (!tw_test_spans_equal(ds, js) || ds->shared != js->shared ||
            ds->is_duration_unknown != js->is_duration_unknown)
            fail("the direct and Jansson decoders give different records");
        if (!processes_equal(&dp, &jp))
            fail("the direct and Jansson decoders give different processes");
        tw__span_data_unref(ds);
        tw__process_clear(&dp);
    } else if (ds) {
        fail("the direct decoder declined a line and set its output");
    }
    if (fast_ok) {
        if (jst != TW_OK)
            fail("the fast decoder accepted a line the Jansson decoder rejects");
        if (!tw_test_spans_equal(fs, js) || fs->shared != js->shared ||
            fs->is_duration_unknown != js->is_duration_unknown)
            fail("the decoders give different records");
        if (!processes_equal(&fp, &jp))
            fail("the decoders give different processes");
        tw__span_data_unref(fs);
        tw__process_clear(&fp);
    } else {
        if (fs)
            fail("a declined line set its output");
        /* The public decoder then is the Jansson decoder. */
        tw__span_data *ps = NULL;
        tw__process pp;
        tw_error *pe = NULL;
        tw_status pst = tw__dapper_log_decode((const char *)data, size, 1, &ps, &pp, &pe);
        if (pst != jst)
            fail("the public decoder's status differs from the Jansson decoder's");
        if (pst == TW_OK) {
            if (!tw_test_spans_equal(ps, js) || !processes_equal(&pp, &jp))
                fail("the public decoder's record differs from the Jansson decoder's");
            tw__span_data_unref(ps);
            tw__process_clear(&pp);
        } else if (strcmp(tw_error_message(pe), tw_error_message(je)) != 0) {
            fail("the public decoder's message differs from the Jansson decoder's");
        }
        tw_error_free(pe);
    }
    if (jst == TW_OK) {
        tw__span_data_unref(js);
        tw__process_clear(&jp);
    }
    tw_error_free(je);
    return 0;
}
