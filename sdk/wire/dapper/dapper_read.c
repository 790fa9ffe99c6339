/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/dapper/dapper_read.c: `--from dapper`, the Dapper-style span log
 * (docs/dapper-log-format.md) that the SDK's file reporter writes. A thin
 * reader: the one decoder of the format is the SDK's (wire/dapper/dapper_log.c,
 * streaming line by line with a bounded line length), so the bridge reads
 * exactly what the SDK writes. Each line is one span with its process;
 * a bad line is rejected with its number and the decoder's reason.
 */
#include "wire/core/error.h"
#include "wire/core/input.h"
#include "wire/core/json_stream.h"
#include "wire/formats.h"

#include <string.h>

#include "wire/dapper/dapper_log.h"

/* Longest line kept: larger lines are rejected (the SDK never writes one
 * near this: its tag and log limits bound a record far below it). */
#define MAX_LINE_BYTES ((size_t)16 * 1024 * 1024)

/* The decoder's messages start with "line N: ": the pipeline names the
 * file and line itself. */
static const char *reason_of(const tw_error *e)
{
    const char *m = tw_error_message(e);
    if (strncmp(m, "line ", 5) == 0) {
        const char *colon = strstr(m, ": ");
        if (colon)
            return colon + 2;
    }
    return m;
}

static tw_status read_dapper(FILE *stream, tw__wire_input *in, tw_error **err)
{
    tw__dapper_log_reader *r = tw__dapper_log_reader_new(stream, MAX_LINE_BYTES);
    if (!r) {
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
        return TW_E_NOMEM;
    }
    if (in->reject_part) /* an oversized line goes whole to the rejects */
        tw__dapper_log_reader_set_spill(r, tw__wire_reject_part, in);
    tw_status rc = TW_OK;
    for (;;) {
        tw__span_data *span = NULL;
        const tw__process *process = NULL;
        uint64_t stamp = 0;
        tw_error *e = NULL;
        /* The reader's process, shared by the lines that repeat it: the
         * stamp lets the caller know it again without comparing it. */
        tw_status st = tw__dapper_log_reader_next_shared(r, &span, &process, &stamp, &e);
        if (st == TW_E_NOT_FOUND)
            break;
        if (st == TW_OK) {
            size_t len;
            const char *raw = tw__dapper_log_reader_raw(r, &len);
            in->process_stamp = stamp;
            bool go_on = tw__wire_emit(in, tw__dapper_log_reader_line(r), span, process, raw, len);
            in->process_stamp = 0;
            if (!go_on) {
                rc = TW_E_STATE;
                break;
            }
            continue;
        }
        if (st == TW_E_MALFORMED) {
            size_t len;
            const char *raw = tw__dapper_log_reader_raw(r, &len);
            bool go_on = in->reject(in, tw__dapper_log_reader_line(r), raw, len, reason_of(e));
            tw_error_free(e);
            if (!go_on) {
                rc = TW_E_STATE;
                break;
            }
            continue;
        }
        tw__set_error(err, st, "%s: %s", in->name, tw_error_message(e));
        tw_error_free(e);
        rc = st;
        break;
    }
    tw__dapper_log_reader_free(r);
    return rc;
}

static size_t skip_blanks(const char *p, size_t len, size_t i)
{
    while (i < len && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    return i;
}

/* A Dapper log line starts with its version member, "v": 1 (the encoder
 * writes v first; other JSON libraries may put blanks anywhere between the
 * tokens: detection must not depend on them). A reader-written or edited
 * file may not start with v, so "trace_id" with "start_us" also counts. */
static int sniff_dapper(const uint8_t *head, size_t len)
{
    const char *p = (const char *)head;
    size_t i = skip_blanks(p, len, 0);
    if (i >= len || p[i] != '{')
        return 0;
    size_t j = skip_blanks(p, len, i + 1);
    if (len - j >= 3 && memcmp(p + j, "\"v\"", 3) == 0) {
        j = skip_blanks(p, len, j + 3);
        if (j < len && p[j] == ':') {
            j = skip_blanks(p, len, j + 1);
            if (j < len && p[j] == '1' && (j + 1 == len || p[j + 1] < '0' || p[j + 1] > '9'))
                return 100;
        }
    }
    if (memmem(p, len, "\"start_us\"", 10) && memmem(p, len, "\"trace_id\"", 10))
        return 60;
    return 0;
}

const tw__wire_decoder tw__dapper_decoder = {
    .name = "dapper",
    .summary = "Dapper-style span log, one JSON object per line (docs/dapper-log-format.md)",
    .read = read_dapper,
    .sniff = sniff_dapper,
};
