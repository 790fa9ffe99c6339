/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_proto_read.c: the zipkin-v2-proto decoder of the
 * format registry (`tracewire convert --from zipkin-v2-proto`, the agent's
 * POST /api/v2/spans as application/x-protobuf): a Zipkin proto3
 * ListOfSpans, read span by span (at most 16 MiB each). Each Span message
 * is rewritten by wire/zipkin/zipkin_proto.c into the Zipkin v2 JSON
 * object the zipkin-v2-json decoder reads, and read by that decoder's
 * rules (wire/zipkin/zipkin_v2_json_decode.h): both encodings read alike.
 *
 * Binary input has no lines: rejects and warnings name the byte offset and
 * the span's index. A top level that is not a ListOfSpans is rejected from
 * that byte on and the rest of the input is skipped. Single-threaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <jansson.h>

#include "wire/core/error.h"
#include "wire/core/pb_read.h"
#include "wire/core/pb_stream.h"
#include "wire/core/pb_write.h"
#include "wire/formats.h"
#include "wire/zipkin/zipkin_proto.h"
#include "wire/zipkin/zipkin_v2_json_decode.h"

#define MAX_ZIPKIN_SPAN_BYTES ((uint64_t)16 << 20)

typedef struct zipkin_warn_ctx {
    tw__wire_input *in;
    size_t index;
} zipkin_warn_ctx;

static void zipkin_on_warn(void *arg, const char *why)
{
    zipkin_warn_ctx *z = arg;
    tw__wire_warn(z->in, 0, "spans[%zu]: %s", z->index, why);
}

static tw_status read_zipkin_proto(FILE *f, tw__wire_input *in, tw_error **err)
{
    tw__pb_stream s = {.f = f};
    tw__buf buf;
    tw__buf_init(&buf);
    tw__pb_arena arena;
    tw__pb_arena_init(&arena);
    zipkin_warn_ctx wc = {in, 0};
    tw_status st = TW_OK;
    while (st == TW_OK) {
        uint64_t at = s.offset, tag, len;
        bool is_eof, is_nomem = false;
        if (!tw__pb_stream_varint(&s, &tag, &is_eof)) {
            if (!is_eof && !s.is_io_error &&
                !tw__wire_reject(in, 0, "", 0, "byte %" PRIu64 ": a field tag is cut short", at))
                st = TW_E_STATE;
            break;
        }
        if (tag != TW__PB_TAG(1, TW__PB_LEN)) {
            uint64_t n;
            if (tag >> 3 != 0 && tag >> 3 != 1 &&
                tw__pb_stream_skip_value(&s, (unsigned)(tag & 7), &n))
                continue; /* an unknown field */
            if (!s.is_io_error &&
                !tw__wire_reject(in, 0, "", 0,
                                 "byte %" PRIu64 ": not a ListOfSpans (field %" PRIu64
                                 ", wire type %u); the rest of the input is skipped",
                                 at, tag >> 3, (unsigned)(tag & 7)))
                st = TW_E_STATE;
            break;
        }
        if (!tw__pb_stream_varint(&s, &len, &is_eof)) {
            if (!s.is_io_error &&
                !tw__wire_reject(in, 0, "", 0,
                                 "spans[%zu] (byte %" PRIu64 "): its length is cut short", wc.index,
                                 at))
                st = TW_E_STATE;
            break;
        }
        if (len > MAX_ZIPKIN_SPAN_BYTES) {
            /* Its bytes go on to --rejects as they are skipped (when the
             * input takes them), before the reject that ends the record. */
            bool is_whole = in->reject_part
                                ? tw__pb_stream_skip_parts(&s, len, tw__wire_reject_part, in)
                                : true;
            if (!tw__wire_reject(in, 0, "", 0,
                                 "spans[%zu] (byte %" PRIu64 "): %" PRIu64
                                 " bytes, over the 16 MiB one span may take",
                                 wc.index++, at, len))
                st = TW_E_STATE;
            else if (!(in->reject_part ? is_whole : tw__pb_stream_skip(&s, len)))
                break;
            continue;
        }
        uint64_t payload = s.offset;
        if (!tw__pb_stream_read(&s, len, &buf, &is_nomem)) {
            if (is_nomem)
                st = TW_E_NOMEM;
            else if (!s.is_io_error &&
                     !tw__wire_reject(in, 0, buf.data, buf.len,
                                      "spans[%zu] (byte %" PRIu64 "): the input ends inside it",
                                      wc.index, at))
                st = TW_E_STATE;
            break;
        }
        char why[256];
        tw__pb_arena_reset(&arena);
        json_t *obj = tw__zipkin_proto_span_json(buf.data, buf.len, payload, &arena, zipkin_on_warn,
                                                 &wc, why, sizeof why, &is_nomem);
        bool go_on;
        if (obj)
            go_on = tw__zipkin_v2_emit_object(in, 0, obj, buf.data, buf.len, &is_nomem);
        else
            go_on =
                is_nomem || tw__wire_reject(in, 0, buf.data, buf.len,
                                            "spans[%zu] (byte %" PRIu64 "): %s", wc.index, at, why);
        json_decref(obj);
        wc.index++;
        if (is_nomem)
            st = TW_E_NOMEM;
        else if (!go_on)
            st = TW_E_STATE;
    }
    tw__pb_arena_free(&arena);
    tw__buf_free(&buf);
    if (s.is_io_error) {
        tw__set_error(err, TW_E_IO, "%s: read error: %s", in->name, strerror(errno));
        return TW_E_IO;
    }
    if (st == TW_E_NOMEM)
        tw__set_error(err, TW_E_NOMEM, "%s: out of memory", in->name);
    return st;
}

const tw__wire_decoder tw__zipkin_v2_proto_decoder = {
    .name = "zipkin-v2-proto",
    .summary = "Zipkin v2 proto3: a ListOfSpans (POST /api/v2/spans as application/x-protobuf)",
    .read = read_zipkin_proto,
    .sniff = tw__zipkin_proto_sniff,
};
