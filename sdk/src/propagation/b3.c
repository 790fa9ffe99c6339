/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/b3.c: Zipkin's B3 propagation (openzipkin/b3-propagation,
 * docs/wire/propagation.md#zipkin-b3), two codecs that read alike and write differently:
 * TW_CODEC_B3 writes the X-B3-* headers, TW_CODEC_B3_SINGLE the b3 header.
 *
 *   multi:   X-B3-TraceId      16 or 32 lower-hex (32 when the high half is not 0)
 *            X-B3-SpanId       16 lower-hex
 *            X-B3-ParentSpanId 16 lower-hex, only when there is a parent
 *            X-B3-Sampled      1 / 0, absent when the decision is deferred
 *            X-B3-Flags        1 for debug (then no X-B3-Sampled: debug implies accept)
 *   single:  b3: {TraceId}-{SpanId}[-{SamplingState}[-{ParentSpanId}]]
 *            SamplingState 1, 0 or d (debug); absent (and then no parent) when deferred
 *            b3: 0 | 1 | d alone carries only a sampling decision
 *
 * Extract reads both forms; the b3 header, when present, decides alone (as
 * Brave does). Ids of 1..32 / 1..16 hex digits of either case are read
 * (left-padded, the same tolerance as uber-trace-id); empty values, "-",
 * zero ids, an X-B3-SpanId without X-B3-TraceId (or the reverse) and unknown
 * sampling values are TW_E_MALFORMED. X-B3-Sampled also takes true/false in
 * any case. The first occurrence of a header wins. B3 has no baggage, no
 * debug id, and no place for Jaeger's firehose bit. Stateless; any thread.
 */
#include "propagation/propagation.h"

#include <string.h>

enum { SLOT_B3, SLOT_TRACE_ID, SLOT_SPAN_ID, SLOT_PARENT_ID, SLOT_SAMPLED, SLOT_FLAGS, N_SLOTS };

/* Canonical names (HTTP_HEADERS) and lower-case ones (TEXT_MAP: case-preserving carriers such
 * as gRPC metadata, where Brave writes lower case too). */
static const char *const http_names[N_SLOTS] = {
    "b3", "X-B3-TraceId", "X-B3-SpanId", "X-B3-ParentSpanId", "X-B3-Sampled", "X-B3-Flags"};
static const char *const map_names[N_SLOTS] = {
    "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-parentspanid", "x-b3-sampled", "x-b3-flags"};

/* ---- inject ------------------------------------------------------------------------------- */

/* Writes the trace id (16 or 32 digits) at @p; returns the end. */
static char *put_trace_id(char *p, const tw_span_context *ctx)
{
    if (ctx->trace_id_high) {
        tw__hex_u64(p, ctx->trace_id_high);
        p += 16;
    }
    tw__hex_u64(p, ctx->trace_id_low);
    return p + 16;
}

static tw_status b3_multi_inject(const tw_span_context *ctx, tw_format format,
                                 const tw_carrier_writer *carrier)
{
    const char *const *names = format == TW_FORMAT_HTTP_HEADERS ? http_names : map_names;
    char id[33];
    *put_trace_id(id, ctx) = '\0';
    tw_status status = carrier->set(carrier->user_data, names[SLOT_TRACE_ID], id);
    if (status != TW_OK)
        return status;
    tw__hex_u64(id, ctx->span_id);
    id[16] = '\0';
    status = carrier->set(carrier->user_data, names[SLOT_SPAN_ID], id);
    if (status == TW_OK && ctx->parent_id) {
        tw__hex_u64(id, ctx->parent_id);
        status = carrier->set(carrier->user_data, names[SLOT_PARENT_ID], id);
    }
    if (status != TW_OK || (ctx->flags & TW__FLAG_DEFERRED))
        return status;
    if (ctx->flags & TW_FLAG_DEBUG)
        return carrier->set(carrier->user_data, names[SLOT_FLAGS], "1");
    return carrier->set(carrier->user_data, names[SLOT_SAMPLED],
                        (ctx->flags & TW_FLAG_SAMPLED) ? "1" : "0");
}

static tw_status b3_single_inject(const tw_span_context *ctx, tw_format format,
                                  const tw_carrier_writer *carrier)
{
    (void)format;
    char v[72]; /* 32 + 1 + 16 + 1 + 1 + 1 + 16 + NUL */
    char *p = put_trace_id(v, ctx);
    *p++ = '-';
    tw__hex_u64(p, ctx->span_id);
    p += 16;
    if (!(ctx->flags & TW__FLAG_DEFERRED)) {
        *p++ = '-';
        *p++ = (ctx->flags & TW_FLAG_DEBUG) ? 'd' : (ctx->flags & TW_FLAG_SAMPLED) ? '1' : '0';
        if (ctx->parent_id) {
            *p++ = '-';
            tw__hex_u64(p, ctx->parent_id);
            p += 16;
        }
    }
    *p = '\0';
    return carrier->set(carrier->user_data, "b3", v);
}

/* ---- extract ------------------------------------------------------------------------------ */

/* Parses one id field; on error fills @out and returns false. */
static bool parse_id(tw__scan *scan, const tw__slot *slot, const char *header, const char *what,
                     const char *s, size_t n, size_t max_digits, uint64_t *hi, uint64_t *lo,
                     tw__extracted *out)
{
    size_t bad_at = 0;
    tw__hex_error e = tw__parse_hex(s, n, max_digits, false, hi, lo, &bad_at);
    switch (e) {
    case TW__HEX_OK:
        if ((!hi || *hi == 0) && *lo == 0) {
            tw__extracted_malformed(out, header, scan, slot, "%s is zero", what);
            return false;
        }
        return true;
    case TW__HEX_EMPTY:
        tw__extracted_malformed(out, header, scan, slot, "%s is empty", what);
        return false;
    case TW__HEX_TOO_LONG:
        tw__extracted_malformed(out, header, scan, slot, "%s has %zu digits, at most %zu", what, n,
                                max_digits);
        return false;
    case TW__HEX_BAD_DIGIT:
    case TW__HEX_UPPER:
        break;
    }
    tw__extracted_malformed(out, header, scan, slot, "%s has a non-hex character at offset %zu",
                            what, bad_at);
    return false;
}

/* A single-valued B3 header that is present but unusable (too long, empty,
 * "-") fills @out and returns false. */
static bool usable(tw__scan *scan, const tw__slot *slot, const char *header, tw__extracted *out)
{
    if (slot->is_overlong) {
        tw__extracted_malformed(out, header, scan, NULL, "%u bytes, more than %d", slot->len,
                                TW__B3_MULTI_MAX);
        return false;
    }
    if (!slot->is_present)
        return false; /* allocation failure during the scan */
    if (slot->len == 0) {
        tw__extracted_malformed(out, header, scan, slot, "empty value");
        return false;
    }
    if (slot->len == 1 && tw__slot_value(scan, slot)[0] == '-') {
        tw__extracted_malformed(out, header, scan, slot, "\"-\" is not a value");
        return false;
    }
    return true;
}

static uint32_t state_flags(char c)
{
    return c == 'd' ? TW_FLAG_SAMPLED | TW_FLAG_DEBUG : c == '1' ? TW_FLAG_SAMPLED : 0;
}

static void extract_single(tw__scan *scan, const tw__slot *slot, tw__extracted *out)
{
    static const char header[] = "b3";
    if (slot->is_overlong) {
        tw__extracted_malformed(out, header, scan, NULL, "%u bytes, more than %d", slot->len,
                                TW__B3_SINGLE_MAX);
        return;
    }
    if (!usable(scan, slot, header, out))
        return;
    const char *v = tw__slot_value(scan, slot);
    size_t n = slot->len;
    if (n == 1) {
        if (v[0] != '0' && v[0] != '1' && v[0] != 'd') {
            tw__extracted_malformed(out, header, scan, slot,
                                    "a lone sampling state must be 0, 1 or d");
            return;
        }
        out->found = TW__FOUND_HINT;
        out->parts.flags = state_flags(v[0]);
        return;
    }
    const char *field[4];
    size_t len[4];
    size_t n_fields = 0;
    const char *start = v, *end = v + n;
    for (const char *p = v; p <= end; p++) {
        if (p == end || *p == '-') {
            if (n_fields < 4) {
                field[n_fields] = start;
                len[n_fields] = (size_t)(p - start);
            }
            n_fields++;
            start = p + 1;
        }
    }
    if (n_fields < 2 || n_fields > 4) {
        tw__extracted_malformed(out, header, scan, slot,
                                "%zu fields, expected 2 to 4 "
                                "(TraceId-SpanId[-SamplingState[-ParentSpanId]])",
                                n_fields);
        return;
    }
    uint64_t hi = 0, lo = 0, span = 0, parent = 0;
    if (!parse_id(scan, slot, header, "trace id", field[0], len[0], 32, &hi, &lo, out) ||
        !parse_id(scan, slot, header, "span id", field[1], len[1], 16, NULL, &span, out))
        return;
    uint32_t flags = TW__FLAG_DEFERRED;
    if (n_fields >= 3) {
        if (len[2] != 1 || (field[2][0] != '0' && field[2][0] != '1' && field[2][0] != 'd')) {
            tw__extracted_malformed(out, header, scan, slot, "sampling state must be 0, 1 or d");
            return;
        }
        flags = state_flags(field[2][0]);
    }
    if (n_fields == 4 &&
        !parse_id(scan, slot, header, "parent span id", field[3], len[3], 16, NULL, &parent, out))
        return;
    out->found = TW__FOUND_CONTEXT;
    out->parts.trace_id_high = hi;
    out->parts.trace_id_low = lo;
    out->parts.span_id = span;
    out->parts.parent_id = parent;
    out->parts.flags = flags;
}

static bool equals_ci(const char *s, size_t n, const char *lower)
{
    return strlen(lower) == n && tw__equals_lower(s, lower, n);
}

static void extract_multi(tw__scan *scan, const tw__slot *slots, tw__extracted *out)
{
    const tw__slot *trace = &slots[SLOT_TRACE_ID], *span = &slots[SLOT_SPAN_ID];
    const tw__slot *parent = &slots[SLOT_PARENT_ID], *sampled = &slots[SLOT_SAMPLED];
    const tw__slot *flags_slot = &slots[SLOT_FLAGS];
    bool has_ids = trace->count || span->count;
    if (!has_ids && !parent->count && !sampled->count && !flags_slot->count)
        return; /* no B3 at all */
    /* The sampling state first: it is all a decision-only request carries. */
    uint32_t flags = TW__FLAG_DEFERRED;
    if (sampled->count) {
        if (!usable(scan, sampled, http_names[SLOT_SAMPLED], out))
            return;
        const char *v = tw__slot_value(scan, sampled);
        if (equals_ci(v, sampled->len, "1") || equals_ci(v, sampled->len, "true")) {
            flags = TW_FLAG_SAMPLED;
        } else if (equals_ci(v, sampled->len, "0") || equals_ci(v, sampled->len, "false")) {
            flags = 0;
        } else {
            tw__extracted_malformed(out, http_names[SLOT_SAMPLED], scan, sampled,
                                    "must be 1 or 0 (or true or false)");
            return;
        }
    }
    if (flags_slot->count) {
        if (!usable(scan, flags_slot, http_names[SLOT_FLAGS], out))
            return;
        const char *v = tw__slot_value(scan, flags_slot);
        if (equals_ci(v, flags_slot->len, "1")) {
            flags = TW_FLAG_SAMPLED | TW_FLAG_DEBUG; /* debug implies accept */
        } else if (!equals_ci(v, flags_slot->len, "0")) {
            tw__extracted_malformed(out, http_names[SLOT_FLAGS], scan, flags_slot,
                                    "must be 1 (debug) or 0");
            return;
        }
    }
    if (!has_ids) {
        if (parent->count) {
            tw__extracted_malformed(out, http_names[SLOT_PARENT_ID], scan, parent,
                                    "present without X-B3-TraceId and X-B3-SpanId");
            return;
        }
        if (flags & TW__FLAG_DEFERRED)
            return; /* "X-B3-Flags: 0" alone says nothing */
        out->found = TW__FOUND_HINT;
        out->parts.flags = flags;
        return;
    }
    if (!trace->count || !span->count) {
        const tw__slot *present = trace->count ? trace : span;
        tw__extracted_malformed(out, http_names[trace->count ? SLOT_SPAN_ID : SLOT_TRACE_ID], scan,
                                present, "missing (%s is present)",
                                http_names[trace->count ? SLOT_TRACE_ID : SLOT_SPAN_ID]);
        return;
    }
    uint64_t hi = 0, lo = 0, span_id = 0, parent_id = 0;
    if (!usable(scan, trace, http_names[SLOT_TRACE_ID], out) ||
        !parse_id(scan, trace, http_names[SLOT_TRACE_ID], "trace id", tw__slot_value(scan, trace),
                  trace->len, 32, &hi, &lo, out) ||
        !usable(scan, span, http_names[SLOT_SPAN_ID], out) ||
        !parse_id(scan, span, http_names[SLOT_SPAN_ID], "span id", tw__slot_value(scan, span),
                  span->len, 16, NULL, &span_id, out))
        return;
    if (parent->count) {
        if (!usable(scan, parent, http_names[SLOT_PARENT_ID], out))
            return;
        /* A zero parent is read as "root", as some clients write it. */
        if (tw__parse_hex(tw__slot_value(scan, parent), parent->len, 16, false, NULL, &parent_id,
                          NULL) != TW__HEX_OK) {
            parse_id(scan, parent, http_names[SLOT_PARENT_ID], "parent span id",
                     tw__slot_value(scan, parent), parent->len, 16, NULL, &parent_id, out);
            return;
        }
    }
    out->found = TW__FOUND_CONTEXT;
    out->parts.trace_id_high = hi;
    out->parts.trace_id_low = lo;
    out->parts.span_id = span_id;
    out->parts.parent_id = parent_id;
    out->parts.flags = flags;
}

static void b3_extract(tw__scan *scan, const tw__slot *slots, tw__extracted *out)
{
    if (slots[SLOT_B3].count)
        extract_single(scan, &slots[SLOT_B3], out);
    else
        extract_multi(scan, slots, out);
}

static const tw__header_spec b3_headers[N_SLOTS] = {
    [SLOT_B3] = {"b3", 2, false, TW__B3_SINGLE_MAX, NULL},
    [SLOT_TRACE_ID] = {"x-b3-traceid", 12, false, TW__B3_MULTI_MAX, NULL},
    [SLOT_SPAN_ID] = {"x-b3-spanid", 11, false, TW__B3_MULTI_MAX, NULL},
    [SLOT_PARENT_ID] = {"x-b3-parentspanid", 17, false, TW__B3_MULTI_MAX, NULL},
    [SLOT_SAMPLED] = {"x-b3-sampled", 12, false, TW__B3_MULTI_MAX, NULL},
    [SLOT_FLAGS] = {"x-b3-flags", 10, false, TW__B3_MULTI_MAX, NULL},
};

const tw__codec_vtable tw__codec_b3 = {
    .size = sizeof(tw__codec_vtable),
    .id = TW_CODEC_B3,
    .name = "b3",
    .headers = b3_headers,
    .n_headers = N_SLOTS,
    .inject = b3_multi_inject,
    .extract = b3_extract,
};

const tw__codec_vtable tw__codec_b3_single = {
    .size = sizeof(tw__codec_vtable),
    .id = TW_CODEC_B3_SINGLE,
    .name = "b3-single",
    .headers = b3_headers,
    .n_headers = N_SLOTS,
    .inject = b3_single_inject,
    .extract = b3_extract,
};
