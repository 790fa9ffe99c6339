/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_dapper_log.c: libFuzzer target for the Dapper-style span
 * log decoder and line reader (sdk/wire/dapper/dapper_log.h). The bridge reads
 * these files from disks it does not control, so the decoder must never
 * crash, leak or hang on any bytes, and must fail exactly when it sets an
 * error, whose message names the line ("line 1: ...").
 *
 * Input: the whole input is one line for tw__dapper_log_decode, run with and
 * without an error out parameter (the results must agree: control flow
 * never depends on @err). A record that decodes is encoded again with an
 * encoder built from its own process and decoded once more: the model and
 * process must come back equal (the round trip is exact for everything the
 * decoder accepts), and encoding that second model must give the very same
 * bytes (the writer's form is canonical). The input is also read as a
 * stream of lines by the reader, which must report each line as a record,
 * a malformed line, or the end, with increasing line numbers.
 *
 * The process memo (tw__dapper_log_reader_next_shared, dapper_log_direct.c)
 * is checked differentially: the input, then the input again with one
 * byte changed, then the input once more, is read as one stream by the
 * shared reader, and each of its lines must come out exactly as
 * tw__dapper_log_decode (no memo) gives that line alone: status, error,
 * span and process. So the same process bytes are met twice with a change
 * in between, and processes repeated across lines hit the memo. A stamp
 * met again must be the same process at the same address with the same
 * content.
 *
 * Built and run by tests/fuzz/run_fuzz.sh (clang, -fsanitize=fuzzer,address,
 * undefined); seeds in tests/fuzz/corpus/dapper_log/, tokens in
 * tests/fuzz/dapper_log.dict.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_equal.h"
#include "wire/dapper/dapper_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_dapper_log: %s\n", what);
    abort();
}

static bool processes_equal(const tw__process *a, const tw__process *b)
{
    return strcmp(a->service_name, b->service_name) == 0 &&
           tw_test_tags_equal(a->tags, a->n_tags, b->tags, b->n_tags);
}

/* ---- one line ----------------------------------------------------------------------------- */

/* Encodes @span with an encoder of @process into @out; aborts on failure
 * (every decoded model must be encodable; allocation failure aside). */
static void encode(const tw__process *process, const tw__span_data *span, tw__buf *out)
{
    tw__dapper_log_encoder *enc = tw__dapper_log_encoder_new(process);
    if (!enc)
        fail("no encoder for a decoded process");
    tw__buf_reset(out);
    if (!tw__dapper_log_encode_span(enc, span, out))
        fail("a decoded span does not encode");
    tw__dapper_log_encoder_free(enc);
    if (out->len < 2 || out->data[out->len - 1] != '\n' ||
        memchr(out->data, '\n', out->len - 1) != NULL)
        fail("an encoded record is not exactly one line");
}

static void fuzz_line(const char *line, size_t len)
{
    tw__span_data *span = NULL, *quiet_span = NULL;
    tw__process process, quiet_process;
    tw_error *err = NULL;
    tw_status st = tw__dapper_log_decode(line, len, 1, &span, &process, &err);
    tw_status quiet = tw__dapper_log_decode(line, len, 1, &quiet_span, &quiet_process, NULL);
    if (st != quiet)
        fail("the decoder's result depends on whether err is NULL");
    if ((st == TW_OK) != (err == NULL))
        fail("the decoder set an error on success or none on failure");
    if (st != TW_OK) {
        if (st != TW_E_MALFORMED && st != TW_E_NOMEM)
            fail("the decoder failed with a status other than MALFORMED or NOMEM");
        if (strncmp(tw_error_message(err), "line 1: ", 8) != 0)
            fail("the error message does not start with \"line 1: \"");
        tw_error_free(err);
        return;
    }
    if (!tw_test_spans_equal(span, quiet_span) || !processes_equal(&process, &quiet_process))
        fail("two decodings of one line differ");
    tw__span_data_unref(quiet_span);
    tw__process_clear(&quiet_process);

    tw__buf first, second;
    tw__buf_init(&first);
    tw__buf_init(&second);
    encode(&process, span, &first);
    tw__span_data *again = NULL;
    tw__process again_process;
    if (tw__dapper_log_decode((const char *)first.data, first.len, 1, &again, &again_process,
                              NULL) != TW_OK)
        fail("the encoder's output does not decode");
    if (!tw_test_spans_equal(span, again))
        fail("decode(encode(span)) differs from span");
    if (!processes_equal(&process, &again_process))
        fail("decode(encode(process)) differs from process");
    encode(&again_process, again, &second);
    if (first.len != second.len || memcmp(first.data, second.data, first.len) != 0)
        fail("encoding is not canonical: two encodings of one model differ");
    tw__buf_free(&first);
    tw__buf_free(&second);
    tw__span_data_unref(again);
    tw__process_clear(&again_process);
    tw__span_data_unref(span);
    tw__process_clear(&process);
}

/* ---- the input as a stream of lines ------------------------------------------------------ */

static void fuzz_reader(const uint8_t *data, size_t size)
{
    if (size == 0)
        return; /* fmemopen refuses an empty buffer */
    FILE *f = fmemopen((void *)data, size, "r");
    if (!f)
        return;
    /* A small limit, so that the oversized-line path runs too. */
    tw__dapper_log_reader *r = tw__dapper_log_reader_new(f, 256);
    if (!r)
        abort();
    size_t last_line = 0;
    for (size_t calls = 0; calls <= size + 1; calls++) {
        tw__span_data *span = NULL;
        tw__process process;
        tw_error *err = NULL;
        tw_status st = tw__dapper_log_reader_next(r, &span, &process, &err);
        if (st == TW_E_NOT_FOUND) {
            if (err)
                fail("the reader set an error at the end");
            break;
        }
        size_t line = tw__dapper_log_reader_line(r);
        if (line <= last_line)
            fail("the reader's line numbers do not increase");
        last_line = line;
        if ((st == TW_OK) != (err == NULL))
            fail("the reader set an error on success or none on failure");
        if (st == TW_OK) {
            tw__span_data_unref(span);
            tw__process_clear(&process);
        } else {
            char prefix[32];
            snprintf(prefix, sizeof prefix, "line %zu: ", line);
            if (st != TW_E_MALFORMED && st != TW_E_NOMEM)
                fail("the reader failed with a status other than MALFORMED or NOMEM");
            if (strncmp(tw_error_message(err), prefix, strlen(prefix)) != 0)
                fail("a reader error does not name its line");
            tw_error_free(err);
        }
        if (calls == size + 1)
            fail("the reader does not reach the end");
    }
    tw__dapper_log_reader_free(r);
    fclose(f);
}

/* ---- the shared reader against the line decoder ----------------------------------------- */

#define N_STAMPS 64

typedef struct {
    uint64_t stamp;
    const tw__process *at;
    tw__process copy; /* the process as the line decoder gave it */
} seen_stamp;

static void fuzz_shared(const uint8_t *data, size_t size)
{
    if (size == 0)
        return;
    /* data, data with one byte changed, data: what follows the changed
     * byte on its line meets the memo's entries for the first copy. */
    size_t total = 3 * size + 2;
    uint8_t *stream = malloc(total);
    if (!stream)
        return;
    memcpy(stream, data, size);
    stream[size] = '\n';
    memcpy(stream + size + 1, data, size);
    stream[size + 1 + size / 2] ^= 0x01;
    stream[2 * size + 1] = '\n';
    memcpy(stream + 2 * size + 2, data, size);
    FILE *f = fmemopen(stream, total, "r");
    if (!f) {
        free(stream);
        return;
    }
    tw__dapper_log_reader *r = tw__dapper_log_reader_new(f, 0);
    if (!r)
        abort();
    seen_stamp seen[N_STAMPS];
    size_t n_seen = 0;
    for (size_t calls = 0; calls <= total + 1; calls++) {
        tw__span_data *span = NULL;
        const tw__process *process = NULL;
        uint64_t stamp = 0;
        tw_error *err = NULL;
        tw_status st = tw__dapper_log_reader_next_shared(r, &span, &process, &stamp, &err);
        if (st == TW_E_NOT_FOUND)
            break;
        if (calls == total + 1)
            fail("the shared reader does not reach the end");
        size_t raw_len;
        const char *raw = tw__dapper_log_reader_raw(r, &raw_len);
        tw__span_data *want = NULL;
        tw__process want_process;
        tw_error *want_err = NULL;
        tw_status want_st = tw__dapper_log_decode(raw, raw_len, tw__dapper_log_reader_line(r),
                                                  &want, &want_process, &want_err);
        if (st != want_st)
            fail("the shared reader and the line decoder disagree on a line's status");
        if (st != TW_OK) {
            if (!err || !want_err || strcmp(tw_error_message(err), tw_error_message(want_err)))
                fail("the shared reader and the line decoder give different errors");
            tw_error_free(err);
            tw_error_free(want_err);
            continue;
        }
        if (!tw_test_spans_equal(span, want) || !processes_equal(process, &want_process))
            fail("the shared reader and the line decoder give different records");
        tw__span_data_unref(span);
        size_t i = 0;
        while (stamp && i < n_seen && seen[i].stamp != stamp)
            i++;
        if (stamp && i < n_seen) {
            if (seen[i].at != process || !processes_equal(&seen[i].copy, process))
                fail("a stamp met again is another process");
        }
        if (stamp && i == n_seen && n_seen < N_STAMPS) {
            seen[n_seen] = (seen_stamp){.stamp = stamp, .at = process};
            seen[n_seen].copy = want_process; /* owned by the table now */
            n_seen++;
            tw__span_data_unref(want);
            continue;
        }
        tw__span_data_unref(want);
        tw__process_clear(&want_process);
    }
    for (size_t i = 0; i < n_seen; i++)
        tw__process_clear(&seen[i].copy);
    tw__dapper_log_reader_free(r);
    fclose(f);
    free(stream);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* An allocation of exactly the input's size, so that ASan catches a
     * read past its end (the decoder is given a length, not a string). */
    char *line = malloc(size ? size : 1);
    if (!line)
        return 0;
    if (size)
        memcpy(line, data, size);
    fuzz_line(line, size);
    free(line);
    fuzz_reader(data, size);
    fuzz_shared(data, size);
    return 0;
}
