/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_otlp_proto.c: libFuzzer target for OTLP protobuf
 * (sdk/wire/otlp/otlp_proto_decode.c behind wire/core/pb_read.c, and the
 * `--from otlp-proto` decoder, sdk/wire/otlp/otlp_proto_read.c), with a
 * differential check of the encoder:
 *
 * - any bytes, as an in-memory request and through the command's reader
 *   (bare and, when the first byte is 0, framed), give spans or rejects
 *   with a reason; never a crash, a leak, a hang or memory beyond the
 *   budget; every span keeps the model's invariants;
 * - the one-step KeyValue reading (otlp_proto_int.h) off and on: the same
 *   spans, processes and rejects with the same reasons (differential);
 * - every span decoded is encoded again by the direct writer and by
 *   protobuf-c's packer from the same plan (tests/unit/wire/otlp_proto_ref.h):
 *   the bytes must be identical (when its text holds no NUL byte); the
 *   re-encoded request must decode again to one span, and protobuf-c's
 *   unpack with the same reading rules must read it as our reader does.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in tests/fuzz/corpus/otlp_proto/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bridge/read_capture.h"
#include "internal.h"
#include "wire/otlp_proto_ref.h"
#include "wire/core/pb_write.h"
#include "wire/otlp/otlp_proto.h"
#include "wire/otlp/otlp_proto_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_otlp_proto: %s\n", what);
    abort();
}

static void check_span(const tw__span_data *s, const tw__process *p)
{
    if (s->span_id == 0 || (s->trace_id_high | s->trace_id_low) == 0 || s->duration_us < 0 ||
        s->parent_id == s->span_id || !p || s->start_us <= 0)
        fail("a decoded span breaks the model's invariants");
}

static bool on_span(void *arg, tw__span_data *span, const tw__process *process, const uint8_t *raw,
                    size_t raw_len)
{
    read_capture *c = arg;
    if (!raw || raw_len == 0)
        fail("a decoded span comes without its Span message's bytes");
    check_span(span, process);
    return c->in.emit(&c->in, span, process);
}

static bool on_reject(void *arg, const char *where, const char *why, const uint8_t *raw,
                      size_t raw_len)
{
    read_capture *c = arg;
    if (!where[0] || !why[0])
        fail("a reject has no place or no reason");
    return twb_reject(&c->in, 0, raw, raw_len, "%s: %s", where, why);
}

static void on_warn(void *arg, const char *where, const char *why)
{
    (void)arg;
    (void)where;
    (void)why;
}

static ref_decoded *decoded;

/* Reads data[0..size) with the one-step KeyValue off, then on (@c, kept):
 * aborts unless both read the same spans, processes and rejects. */
static void decode_both_ways(const uint8_t *data, size_t size, read_capture *c)
{
    read_capture slow;
    capture_init(&slow);
    const tw__otlp_proto_sink slow_sink = {on_span, on_reject, on_warn, &slow};
    const tw__otlp_proto_sink sink = {on_span, on_reject, on_warn, c};
    tw__otlp_proto_set_common_kv(false);
    tw__otlp_proto_status a = tw__otlp_proto_decode_request(data, size, &slow_sink);
    tw__otlp_proto_set_common_kv(true);
    tw__otlp_proto_status b = tw__otlp_proto_decode_request(data, size, &sink);
    if (a != TW__OTLP_PROTO_OK || b != TW__OTLP_PROTO_OK)
        fail("decoding from memory did not finish");
    bool same = slow.n_spans == c->n_spans && slow.n_rejects == c->n_rejects;
    for (size_t i = 0; same && i < slow.n_spans; i++)
        same = tw_test_spans_equal(slow.spans[i].data, c->spans[i].data) &&
               capture_processes_equal(slow.spans[i].process, c->spans[i].process);
    for (size_t i = 0; same && i < slow.n_rejects; i++)
        same = strcmp(slow.rejects[i].reason, c->rejects[i].reason) == 0;
    capture_free(&slow);
    if (!same)
        fail("the one-step KeyValue and the general reading read differently");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!decoded && !(decoded = malloc(sizeof *decoded)))
        fail("out of memory");
    read_capture c;
    /* The input as a span's attribute (a KeyValue), an event's and the
     * resource's: most inputs are not requests, and this reaches the
     * KeyValue readers with every byte the fuzzer tries. */
    if (size < 4096) {
        tw__buf span, event, body;
        tw__buf_init(&span);
        tw__buf_init(&event);
        tw__buf_init(&body);
        tw__pb_id_field(&span, 1, 0x0102030405060708u, 0x1112131415161718u, true);
        tw__pb_id_field(&span, 2, 0, 0x2122232425262728u, false);
        tw__pb_fixed64_field(&span, 7, 1700000000000000000u);
        tw__pb_bytes_field(&span, 9, data, size);
        tw__pb_fixed64_field(&event, 1, 1700000000000000000u);
        tw__pb_bytes_field(&event, 3, data, size);
        tw__pb_bytes_field(&span, 11, event.data, event.len);
        size_t rs = tw__pb_begin(&body, 1);
        size_t res = tw__pb_begin(&body, 1);
        tw__pb_bytes_field(&body, 1, data, size);
        tw__pb_end(&body, res);
        size_t ss = tw__pb_begin(&body, 2);
        tw__pb_bytes_field(&body, 2, span.data, span.len);
        tw__pb_end(&body, ss);
        tw__pb_end(&body, rs);
        capture_init(&c);
        decode_both_ways(body.data, body.len, &c);
        capture_free(&c);
        tw__buf_free(&span);
        tw__buf_free(&event);
        tw__buf_free(&body);
    }
    capture_init(&c);
    decode_both_ways(data, size, &c);
    for (size_t i = 0; i < c.n_spans; i++) {
        tw__span_data *s = c.spans[i].data;
        const tw__process *p = c.spans[i].process;
        ref r = {0};
        tw__buf want, got;
        tw__buf_init(&want);
        tw__buf_init(&got);
        ref_request(&r, &s, 1, p, &want);
        if (!tw__otlp_proto_encode_request(&s, 1, p, &got))
            fail("a decoded span cannot be encoded");
        if (!r.has_nul && (got.len != want.len || memcmp(got.data, want.data, got.len) != 0))
            fail("the direct writer and protobuf-c's packer differ");
        read_capture again;
        capture_init(&again);
        const tw__otlp_proto_sink sink2 = {on_span, on_reject, on_warn, &again};
        if (tw__otlp_proto_decode_request(got.data, got.len, &sink2) != TW__OTLP_PROTO_OK ||
            again.n_spans + again.n_rejects != 1)
            fail("a re-encoded span does not decode again");
        /* ...and protobuf-c's unpack with the same rules reads it as our reader does. */
        if (!r.has_nul) {
            if (!ref_decode_request(got.data, got.len, decoded))
                fail("protobuf-c refuses a re-encoded span");
            bool same = decoded->n_spans == 1 &&
                        (decoded->spans[0] != NULL) == (again.n_spans == 1) &&
                        (!decoded->spans[0] ||
                         (tw_test_spans_equal(decoded->spans[0], again.spans[0].data) &&
                          capture_processes_equal(&decoded->procs[0], again.spans[0].process)));
            ref_decoded_free(decoded);
            if (!same)
                fail("our reader and protobuf-c's unpack read a span differently");
        }
        capture_free(&again);
        ref_free(&r);
        tw__buf_free(&want);
        tw__buf_free(&got);
    }
    capture_free(&c);
    /* The command's reader: the stream framing (bare, or 4-byte lengths). */
    capture_init(&c);
    tw_status st = capture_read_mem(&c, &twb_reader_otlp_proto, data, size);
    if (st != TW_OK && st != TW_E_NOMEM)
        fail("the reader failed on memory input");
    for (size_t i = 0; i < c.n_spans; i++)
        check_span(c.spans[i].data, c.spans[i].process);
    capture_free(&c);
    tw__span_data_pool_trim();
    return 0;
}
