/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/jaeger/api_v2_json_read.c: the jaeger-api-v2-json decoder of the
 * format registry (`tracewire convert --from jaeger-api-v2-json`): Jaeger
 * api_v2 protobuf-JSON documents (PostSpansRequest, Batch), one per line or
 * concatenated, one at a time (at most 32 MiB). Each document is rewritten
 * by wire/jaeger/api_v2_json.c into the query-API form and read by the
 * jaeger-json decoder's rules (tw__jaeger_json_read_document), so both
 * forms read alike. Single-threaded.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "wire/core/error.h"
#include "wire/core/json_stream.h"
#include "wire/formats.h"
#include "wire/jaeger/api_v2_json.h"
#include "wire/jaeger/jaeger_json.h"

#define MAX_API_V2_DOCUMENT_BYTES ((size_t)32 << 20)

typedef struct api_v2_reader {
    tw__wire_input *in;
    size_t line_no;
} api_v2_reader;

static void api_v2_on_warn(void *arg, const char *where, const char *why)
{
    api_v2_reader *r = arg;
    tw__wire_warn(r->in, r->line_no, "%s: %s", where, why);
}

static bool api_v2_on_reject(void *arg, const json_t *span, const char *where, const char *why)
{
    api_v2_reader *r = arg;
    char *raw = json_dumps(span, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    bool go_on = tw__wire_reject(r->in, r->line_no, raw ? raw : "", raw ? strlen(raw) : 0, "%s: %s",
                                 where, why);
    free(raw);
    return go_on;
}

static tw_status api_v2_record(void *arg, json_t *doc, const char *rec, size_t len, size_t line_no,
                               const json_error_t *parse_error, tw_error **err)
{
    api_v2_reader *r = arg;
    r->line_no = line_no;
    if (!doc)
        return tw__wire_reject(r->in, line_no, rec, len, "not valid JSON: %s", parse_error->text)
                   ? TW_OK
                   : TW_E_STATE;
    const tw__api_v2_sink sink = {api_v2_on_warn, api_v2_on_reject, r};
    json_t *query = NULL;
    char why[160];
    tw_status st = TW_OK;
    switch (tw__jaeger_api_v2_to_query_json(doc, &sink, &query, why, sizeof why)) {
    case TW__API_V2_OK:
        st = tw__jaeger_json_read_document(r->in, line_no, query, rec, len);
        break;
    case TW__API_V2_NOT_API_V2:
        st = tw__wire_reject(r->in, line_no, rec, len, "%s", why) ? TW_OK : TW_E_STATE;
        break;
    case TW__API_V2_STOPPED:
        st = TW_E_STATE;
        break;
    case TW__API_V2_NOMEM:
        st = TW_E_NOMEM;
        break;
    }
    json_decref(query);
    if (st == TW_E_NOMEM)
        tw__set_error(err, TW_E_NOMEM, "%s:%zu: out of memory", r->in->name, line_no);
    return st;
}

static tw_status read_api_v2(FILE *f, tw__wire_input *in, tw_error **err)
{
    api_v2_reader r = {.in = in};
    return tw__json_read_records(f, in, MAX_API_V2_DOCUMENT_BYTES, JSON_ALLOW_NUL, api_v2_record,
                                 &r, err);
}

const tw__wire_decoder tw__jaeger_api_v2_json_decoder = {
    .name = "jaeger-api-v2-json",
    .summary = "Jaeger api_v2 protobuf-JSON (PostSpansRequest {batch}, Batch; base64 ids, "
               "RFC 3339 times)",
    .read = read_api_v2,
    .sniff = tw__jaeger_api_v2_sniff,
};
