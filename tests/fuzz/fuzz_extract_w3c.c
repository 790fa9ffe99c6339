/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/fuzz/fuzz_extract_w3c.c: libFuzzer target for extract with the
 * W3C codec (traceparent, tracestate, baggage). Input format and the invariants checked:
 * fuzz_extract_common.h. Built and run by tests/fuzz/run_fuzz.sh; seeds in
 * tests/fuzz/corpus/extract_w3c/, tokens in tests/fuzz/extract_w3c.dict.
 *
 * Beyond the common invariants (the random-trace-id flag is among the flags a round trip
 * must keep), the tracestate rules of docs/PROPAGATION.md:
 *   - a kept tracestate is a list the grammar accepts: 1-32 members, each key and value
 *     valid, no key twice, no empty member, no white space around members, at most 512
 *     bytes;
 *   - tw_span_context_with_tracestate(ctx, K, V), with K and V taken from the input's
 *     "fuzz-ts-key" and "fuzz-ts-value" lines (headers the codec ignores; no value line
 *     deletes K), succeeds exactly when K and V are valid and K=V fits in 512 bytes; its
 *     list is valid as above, starts with K=V (or lacks K, for a delete), and keeps the
 *     other members in their order.
 */
#include "fuzz_extract_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const headers[] = {"traceparent", NULL};

#define MAX_MEMBERS (TW__TRACESTATE_MAX_MEMBERS + 1)

/* Splits @list at ',' into members; aborts on anything the rules forbid. Returns the
 * number of members. */
static size_t check_list(const char *list, tw__ts_member *m, const tw_span_context *c)
{
    if (!list)
        return 0;
    size_t len = strlen(list), n = 0;
    if (len == 0 || len > TW__TRACESTATE_MAX_BYTES)
        fuzz_fail("a tracestate is empty or longer than 512 bytes", c);
    for (const char *p = list; p;) {
        const char *comma = strchr(p, ',');
        size_t ml = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', ml);
        if (!eq || n == TW__TRACESTATE_MAX_MEMBERS)
            fuzz_fail("a tracestate member without '=', or more than 32", c);
        size_t kl = (size_t)(eq - p);
        if (!tw__ts_key_is_valid(p, kl) || !tw__ts_value_is_valid(eq + 1, ml - kl - 1))
            fuzz_fail("a tracestate member outside the grammar was kept", c);
        for (size_t i = 0; i < n; i++) {
            if (m[i].key_len == kl && memcmp(m[i].s, p, kl) == 0)
                fuzz_fail("a tracestate key occurs twice", c);
        }
        m[n++] = (tw__ts_member){p, ml, kl};
        p = comma ? comma + 1 : NULL;
    }
    return n;
}

/* The first value of @key in the carrier, or NULL. */
static const char *carrier_value(const fuzz_carrier *fc, const char *key)
{
    for (size_t i = 0; i < fc->n; i++) {
        if (strcmp(fc->keys[i], key) == 0)
            return fc->values[i];
    }
    return NULL;
}

static void check_with_tracestate(const fuzz_carrier *fc, const tw_span_context *c)
{
    tw__ts_member before[MAX_MEMBERS], after[MAX_MEMBERS];
    size_t n_before = check_list(tw_span_context_tracestate(c), before, c);
    const char *key = carrier_value(fc, "fuzz-ts-key");
    const char *value = carrier_value(fc, "fuzz-ts-value");
    if (!key)
        key = "tw";
    size_t kl = strlen(key), vl = value ? strlen(value) : 0;
    bool should_work =
        tw__ts_key_is_valid(key, kl) &&
        (!value || (tw__ts_value_is_valid(value, vl) && kl + 1 + vl <= TW__TRACESTATE_MAX_BYTES));
    tw_error *err = NULL;
    tw_span_context *d = tw_span_context_with_tracestate(c, key, value, &err);
    if (!d) {
        if (should_work && tw_error_status(err) != TW_E_NOMEM)
            fuzz_fail("with_tracestate refused a valid member", c);
        tw_error_free(err);
        return;
    }
    if (!should_work || err)
        fuzz_fail("with_tracestate accepted an invalid member", c);
    if (d->trace_id_low != c->trace_id_low || d->span_id != c->span_id || d->flags != c->flags ||
        tw_span_context_baggage_count(d) != tw_span_context_baggage_count(c))
        fuzz_fail("with_tracestate changed more than the tracestate", c);
    size_t n_after = check_list(tw_span_context_tracestate(d), after, d);
    size_t from = 0;
    if (value) {
        if (n_after == 0 || after[0].key_len != kl || memcmp(after[0].s, key, kl) != 0 ||
            after[0].len != kl + 1 + vl || memcmp(after[0].s + kl + 1, value, vl) != 0)
            fuzz_fail("with_tracestate did not put the member first", d);
        from = 1;
    }
    /* The others: a subsequence of the old list, without the key, in order. */
    size_t j = 0;
    for (size_t i = from; i < n_after; i++) {
        if (after[i].key_len == kl && memcmp(after[i].s, key, kl) == 0)
            fuzz_fail("with_tracestate left the key twice", d);
        while (j < n_before && !(before[j].len == after[i].len &&
                                 memcmp(before[j].s, after[i].s, after[i].len) == 0))
            j++;
        if (j == n_before)
            fuzz_fail("with_tracestate reordered or changed other members", d);
        j++;
    }
    tw_span_context_unref(d);
}

static void check_tracestate(const uint8_t *data, size_t size)
{
    if (size < 1)
        return;
    tw_format format = (data[0] & 1) ? TW_FORMAT_HTTP_HEADERS : TW_FORMAT_TEXT_MAP;
    fuzz_carrier fc;
    fuzz_carrier_parse(&fc, data + 1, size - 1);
    tw_carrier_reader reader = {fuzz_foreach, &fc};
    tw_codec codec = TW_CODEC_W3C;
    tw_propagator *p = tw_propagator_new(&codec, 1, NULL);
    if (!p)
        abort();
    tw_span_context *c = tw_propagator_extract(p, format, &reader, NULL, NULL, NULL);
    if (c && tw_span_context_is_valid(c))
        check_with_tracestate(&fc, c);
    else if (c && tw_span_context_tracestate(c))
        fuzz_fail("a hint carries a tracestate", c);
    tw_span_context_unref(c);
    tw_propagator_free(p);
    fuzz_carrier_free(&fc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_extract_text(data, size, TW_CODEC_W3C, headers);
    check_tracestate(data, size);
    return 0;
}
