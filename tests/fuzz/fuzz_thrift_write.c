/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_thrift_write.c: libFuzzer target, differential: the
 * direct Thrift writer (wire/core/thrift.h) against Apache Thrift c_glib,
 * in both protocols. The input is either
 *   - a writer program (first byte even): run on both writers
 *     (tests/unit/thrift_reference.c), the bytes must be equal; or
 *   - a span (first byte odd): ids, times, flags, a name, tags of every type
 *     (texts of any bytes), logs and references taken from the input, then
 *     encoded by tw__jaeger_encode_span and by c_glib's generated
 *     TwireJaegerSpan writer: equal bytes (when c_glib can carry the span:
 *     no NUL inside its texts); and the one Thrift reader must read the
 *     batch back whole.
 * A difference aborts (a finding). Run by tests/fuzz/run_fuzz.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "thrift_reference.h"
#include "wire/jaeger/jaeger_thrift.h"
#include "wire/jaeger/jaeger_thrift_decode.h"

typedef struct {
    const uint8_t *p;
    size_t len, pos;
} input;

static uint64_t take(input *in, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v = v << 8 | (in->pos < in->len ? in->p[in->pos++] : 0);
    return v;
}

/* A text of up to 31 bytes from the input (any bytes). */
static size_t take_text(input *in, char *buf)
{
    size_t n = (size_t)take(in, 1) % 32;
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)take(in, 1);
    buf[n] = '\0';
    return n;
}

static bool add_tag(input *in, tw__arena *arena, tw__tag *slot)
{
    char key[32], text[32];
    size_t key_len = take_text(in, key);
    (void)key_len; /* keys are C strings in the model: cut at a NUL */
    tw_value v;
    switch (take(in, 1) % 5) {
    case 0:
        v = (tw_value){.type = TW_VALUE_STRING, .as.str = text};
        v.len = take_text(in, text);
        break;
    case 1: {
        uint64_t bits = take(in, 8);
        v = (tw_value){.type = TW_VALUE_DOUBLE};
        memcpy(&v.as.dbl, &bits, sizeof bits);
        break;
    }
    case 2:
        v = (tw_value){.type = TW_VALUE_BOOL, .as.boolean = take(in, 1) & 1};
        break;
    case 3:
        v = (tw_value){.type = TW_VALUE_INT64, .as.i64 = (int64_t)take(in, 8)};
        break;
    default:
        v = (tw_value){.type = TW_VALUE_BINARY, .as.bin = (const uint8_t *)text};
        v.len = take_text(in, text);
        break;
    }
    bool cut;
    return tw__tag_set(arena, slot, key, &v, SIZE_MAX, &cut);
}

static tw__span_data *span_from(input *in)
{
    tw__span_data *s = tw__span_data_new();
    if (!s)
        return NULL;
    s->trace_id_low = take(in, 8);
    s->trace_id_high = take(in, 8);
    s->span_id = take(in, 8);
    s->parent_id = take(in, 8);
    s->flags = (uint32_t)take(in, 4);
    s->start_us = (int64_t)take(in, 8);
    s->duration_us = (int64_t)take(in, 8);
    char name[32];
    size_t name_len = take_text(in, name);
    bool ok = tw__span_data_set_operation(s, name, strnlen(name, name_len));
    size_t n_refs = (size_t)take(in, 1) % 4;
    for (size_t i = 0; ok && i < n_refs; i++)
        ok = tw__span_data_add_ref(s, take(in, 1) & 1 ? TW__REF_FOLLOWS_FROM : TW__REF_CHILD_OF,
                                   take(in, 8), take(in, 8), take(in, 8));
    size_t n_tags = (size_t)take(in, 1) % 24;
    for (size_t i = 0; ok && i < n_tags; i++) {
        tw__tag *slot = tw__span_data_push_tag(s);
        ok = slot && add_tag(in, &s->arena, slot);
        if (ok)
            s->n_tags++;
    }
    size_t n_logs = (size_t)take(in, 1) % 4;
    for (size_t i = 0; ok && i < n_logs; i++) {
        size_t n_fields = (size_t)take(in, 1) % 4;
        tw__log *log = tw__span_data_push_log(s, n_fields);
        ok = log != NULL;
        if (!ok)
            break;
        log->timestamp_us = (int64_t)take(in, 8);
        for (size_t f = 0; ok && f < n_fields; f++) {
            ok = add_tag(in, &s->arena, &log->fields[f]);
            if (ok)
                log->n_fields++;
        }
        s->n_logs++;
    }
    if (!ok) {
        tw__span_data_unref(s);
        return NULL;
    }
    return s;
}

static void differ(const char *what, tw__thrift_protocol p, const tw__buf *a, const tw__buf *b)
{
    fprintf(stderr, "fuzz_thrift_write: %s (%s): %zu vs %zu bytes\n", what,
            p == TW__THRIFT_COMPACT ? "compact" : "binary", a->len, b->len);
    abort();
}

static bool count_span(void *user_data, tw__span_data *span, const tw__process *process)
{
    (void)process;
    (*(size_t *)user_data)++;
    tw__span_data_unref(span);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    static const tw__thrift_protocol protocols[2] = {TW__THRIFT_COMPACT, TW__THRIFT_BINARY};
    if (!(data[0] & 1)) {
        for (size_t p = 0; p < 2; p++) {
            tw__buf ours = {0}, theirs = {0};
            if (!tw_test_run_thrift_program(protocols[p], data + 1, size - 1, &ours, &theirs))
                differ("a writer failed", protocols[p], &ours, &theirs);
            if (ours.len != theirs.len || memcmp(ours.data, theirs.data, ours.len) != 0)
                differ("program bytes differ", protocols[p], &ours, &theirs);
            tw__buf_free(&ours);
            tw__buf_free(&theirs);
        }
        return 0;
    }
    input in = {data + 1, size - 1, 0};
    tw__span_data *s = span_from(&in);
    if (!s)
        return 0;
    tw__process process;
    tw__process_init(&process);
    tw__process_set_service(&process, "svc");
    for (size_t p = 0; p < 2; p++) {
        tw__jaeger_encoder *enc = tw__jaeger_encoder_new(protocols[p]);
        tw__buf ours = {0}, theirs = {0}, proc = {0}, batch = {0};
        if (!enc || !tw__jaeger_encode_span(enc, s, &ours))
            abort(); /* every span the model can hold is encodable */
        if (tw_test_reference_can_carry(s)) {
            if (!tw_test_reference_span(protocols[p], s, &theirs))
                differ("c_glib failed", protocols[p], &ours, &theirs);
            if (ours.len != theirs.len || memcmp(ours.data, theirs.data, ours.len) != 0)
                differ("span bytes differ", protocols[p], &ours, &theirs);
        }
        size_t n = 0;
        tw__jaeger_sink sink = {.span = count_span, .user_data = &n};
        if (!tw__jaeger_encode_process(enc, &process, &proc) ||
            !tw__jaeger_batch_struct(enc, proc.data, proc.len, ours.data, ours.len, 1, -1, NULL,
                                     &batch) ||
            tw__jaeger_decode(batch.data, batch.len, protocols[p], false, &sink, NULL, NULL, NULL,
                              NULL, 0) != TW__THRIFT_OK)
            differ("the reader does not read the batch back", protocols[p], &ours, &batch);
        /* Read back unless its ids are zero or its times lie beyond the
         * model's range (the reader rejects those spans alone). */
        char why[320];
        if (n != 1 && (s->trace_id_low | s->trace_id_high) != 0 && s->span_id != 0 &&
            tw__span_data_check_times(s, why, sizeof why))
            differ("the span was not read back", protocols[p], &ours, &batch);
        tw__buf_free(&ours);
        tw__buf_free(&theirs);
        tw__buf_free(&proc);
        tw__buf_free(&batch);
        tw__jaeger_encoder_free(enc);
    }
    tw__process_clear(&process);
    tw__span_data_unref(s);
    return 0;
}
