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
 * span's bytes lie inside the record. Differential: each decode is made
 * again by tw__jaeger_decode_general (every tag read field by field, without
 * the fast path for the common Tag layout, and a compact span's i64 fields
 * read byte by byte instead of eight bytes a step), and both must give the same
 * result, offsets, reasons, process and spans. Then the whole input goes
 * through the reader, whose rejects all name a byte offset.
 *
 * Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/jaeger_thrift/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model_equal.h"
#include "bridge/read_capture.h"
#include "wire/jaeger/jaeger_thrift_decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_jaeger_thrift: %s\n", what);
    abort();
}

/* What one decode gave, for the comparison of the two decoders. */
typedef struct outcome {
    size_t size;
    size_t good, bad;
    tw__span_data *spans[64]; /* the first 64 good spans, with their process's */
    char service[2][64];      /* the process's service of the first and the last span */
    char events[2048];        /* the bad spans and warnings, in order, as text */
    size_t events_len;
} outcome;

/* Appends one line about a bad span or a warning. */
static void event(outcome *o, const char *kind, size_t index, size_t offset, size_t len,
                  const char *why)
{
    /* snprintf returns what it would have written: a cut line counts only
     * what fits (the comparison reads events_len bytes). */
    size_t room = sizeof o->events - o->events_len;
    int n = snprintf(o->events + o->events_len, room, "%s %zu %zu %zu %s\n", kind, index, offset,
                     len, why);
    if (n > 0)
        o->events_len += (size_t)n < room ? (size_t)n : room - 1;
}

static bool on_span(void *user_data, tw__span_data *span, const tw__process *process)
{
    outcome *o = user_data;
    if (!span || !process || !process->service_name || span->span_id == 0 ||
        (span->trace_id_high | span->trace_id_low) == 0 || span->duration_us < 0)
        fail("a decoded span breaks the model's invariants");
    snprintf(o->service[o->good ? 1 : 0], sizeof o->service[0], "%s", process->service_name);
    if (o->good < sizeof o->spans / sizeof o->spans[0])
        o->spans[o->good] = span;
    else
        tw__span_data_unref(span);
    o->good++;
    return true;
}

static bool on_bad(void *user_data, size_t index, size_t offset, size_t len, const char *why)
{
    outcome *o = user_data;
    if (offset > o->size || len > o->size - offset || len == 0 || !why || !why[0])
        fail("a bad span's bytes are outside the input or it has no reason");
    event(o, "bad", index, offset, len, why);
    o->bad++;
    return true;
}

static void on_warn(void *user_data, size_t index, const char *why)
{
    event(user_data, "warn", index, 0, 0, why);
}

static void outcome_free(outcome *o)
{
    size_t n = o->good < 64 ? o->good : 64;
    for (size_t i = 0; i < n; i++)
        tw__span_data_unref(o->spans[i]);
}

typedef tw__thrift_result (*decode_fn)(const uint8_t *, size_t, tw__thrift_protocol, bool,
                                       const tw__jaeger_sink *, tw__jaeger_record *, size_t *,
                                       size_t *, char *, size_t);

static void decode_as(const uint8_t *data, size_t size, tw__thrift_protocol proto, bool message)
{
    /* No input: only the model's time range is checked where spans enter it
     * (the reader below goes through the input's admission). */
    static outcome o[2];
    static const decode_fn decoders[2] = {tw__jaeger_decode, tw__jaeger_decode_general};
    tw__thrift_result r[2];
    tw__jaeger_record info[2];
    size_t need[2], at[2];
    char why[2][256];
    for (int k = 0; k < 2; k++) {
        memset(&o[k], 0, sizeof o[k]);
        o[k].size = size;
        tw__jaeger_sink sink = {on_span, on_bad, on_warn, &o[k], NULL};
        memset(&info[k], 0, sizeof info[k]);
        need[k] = 0, at[k] = SIZE_MAX, why[k][0] = '\0';
        r[k] = decoders[k](data, size, proto, message, &sink, &info[k], &need[k], &at[k], why[k],
                           sizeof why[k]);
    }
    outcome *c = &o[0];
    switch (r[0]) {
    case TW__THRIFT_OK:
        if (info[0].size == 0 || info[0].size > size || info[0].n_spans != c->good + c->bad)
            fail("OK with a wrong size or span count");
        break;
    case TW__THRIFT_SHORT:
        if (need[0] <= size || c->good + c->bad)
            fail("TRUNCATED without asking for more, or after emitting spans");
        break;
    case TW__THRIFT_MALFORMED:
        if (at[0] > size || !why[0][0])
            fail("MALFORMED without an offset in the input or a reason");
        break;
    case TW__THRIFT_NOMEM:
        break;
    default:
        fail("an unexpected result");
    }
    /* The fast path for tags must change nothing but the cost. */
    if (r[0] != r[1] || strcmp(why[0], why[1]) != 0 ||
        (r[0] == TW__THRIFT_SHORT && need[0] != need[1]) ||
        (r[0] == TW__THRIFT_MALFORMED && at[0] != at[1]))
        fail("the decoder and the general decoder end differently");
    if (r[0] == TW__THRIFT_OK &&
        (info[0].size != info[1].size || info[0].n_spans != info[1].n_spans))
        fail("the decoder and the general decoder see different records");
    if (o[0].good != o[1].good || o[0].bad != o[1].bad || o[0].events_len != o[1].events_len ||
        memcmp(o[0].events, o[1].events, o[0].events_len) != 0 ||
        strcmp(o[0].service[0], o[1].service[0]) != 0 ||
        strcmp(o[0].service[1], o[1].service[1]) != 0)
        fail("the decoder and the general decoder emit different spans or reasons");
    for (size_t i = 0; i < o[0].good && i < 64; i++) {
        if (!tw_test_spans_equal(o[0].spans[i], o[1].spans[i]))
            fail("the decoder and the general decoder decode a span differently");
    }
    outcome_free(&o[0]);
    outcome_free(&o[1]);
}

/* The process's tags go through the same tag reader: compare them by
 * decoding the record with a sink that keeps the process. */
typedef struct process_copy {
    bool seen;
    char service[64];
    size_t n_tags;
    tw__tag tags[8];
    tw__arena arena;
} process_copy;

static bool keep_process(void *user_data, tw__span_data *span, const tw__process *process)
{
    process_copy *p = user_data;
    if (!p->seen) {
        p->seen = true;
        snprintf(p->service, sizeof p->service, "%s", process->service_name);
        for (size_t i = 0; i < process->n_tags && p->n_tags < 8; i++) {
            const tw__tag *t = &process->tags[i];
            tw_value v = {.type = t->type, .len = t->len};
            memcpy(&v.as, &t->v, sizeof t->v);
            bool cut = false;
            if (tw__tag_set_n(&p->arena, &p->tags[p->n_tags], t->key, t->key_len, &v, SIZE_MAX,
                              &cut))
                p->n_tags++;
        }
    }
    tw__span_data_unref(span);
    return true;
}

static void compare_processes(const uint8_t *data, size_t size, tw__thrift_protocol proto,
                              bool message)
{
    process_copy p[2];
    static const decode_fn decoders[2] = {tw__jaeger_decode, tw__jaeger_decode_general};
    for (int k = 0; k < 2; k++) {
        memset(&p[k], 0, sizeof p[k]);
        tw__arena_init(&p[k].arena);
        tw__jaeger_sink sink = {keep_process, NULL, NULL, &p[k], NULL};
        decoders[k](data, size, proto, message, &sink, NULL, NULL, NULL, NULL, 0);
    }
    if (p[0].seen != p[1].seen || strcmp(p[0].service, p[1].service) != 0 ||
        !tw_test_tags_equal(p[0].tags, p[0].n_tags, p[1].tags, p[1].n_tags))
        fail("the decoder and the general decoder decode a process differently");
    tw__arena_release(&p[0].arena);
    tw__arena_release(&p[1].arena);
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
        for (int message = 0; message < 2; message++) {
            decode_as(copy, size, (tw__thrift_protocol)proto, message);
            compare_processes(copy, size, (tw__thrift_protocol)proto, message);
        }
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
