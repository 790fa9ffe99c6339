/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/jaeger.c: the Jaeger text codec (TW_CODEC_JAEGER): the
 * uber-trace-id header, baggage as uberctx-{key} headers and the
 * jaeger-baggage header, and jaeger-debug-id (docs/wire/propagation.md; Jaeger's
 * "client libraries" documentation).
 *
 *   uber-trace-id: {trace-id}:{span-id}:{parent-span-id}:{flags}
 *     trace-id   16 or 32 lower-case hex digits written (32 when the high half is not 0);
 *                1..32 digits of either case read, left-padded; never zero
 *     span-id    16 digits written; 1..16 read; never zero
 *     parent-id  16 digits written (16 zeros for a root, as Go and C++ do); 1..16 read
 *     flags      1 or 2 hex digits, written without a leading zero (0x01 sampled,
 *                0x02 debug, 0x08 firehose; a deferred context is written not sampled)
 *
 * Extract accepts the value %-encoded (%3A for ':', as Go/Java/C++ decode it
 * on the HTTP path) in both formats, since '%' cannot occur in a valid
 * value. Everything that is not exactly four well-formed fields is
 * TW_E_MALFORMED: the trace context is never guessed. Baggage is lenient
 * (support.c applies the limits). Header names are matched ignoring ASCII
 * case; the first occurrence of a header wins. jaeger-debug-id is read,
 * never written. Stateless; any thread.
 */
#include "propagation/propagation.h"

#include <stdlib.h>
#include <string.h>

#define UBER_TRACE_ID "uber-trace-id"
#define DEBUG_ID "jaeger-debug-id"
#define JAEGER_BAGGAGE "jaeger-baggage"
#define UBERCTX "uberctx-"

enum { SLOT_TRACE_ID, SLOT_DEBUG_ID, SLOT_BAGGAGE, SLOT_UBERCTX };

/* RFC 3986 unreserved characters: what baggage values keep unencoded. */
#define K(c) [c] = 1
static const uint8_t unreserved[256] = {
    K('-'), K('.'), K('_'), K('~'), K('0'), K('1'), K('2'), K('3'), K('4'), K('5'), K('6'),
    K('7'), K('8'), K('9'), K('a'), K('b'), K('c'), K('d'), K('e'), K('f'), K('g'), K('h'),
    K('i'), K('j'), K('k'), K('l'), K('m'), K('n'), K('o'), K('p'), K('q'), K('r'), K('s'),
    K('t'), K('u'), K('v'), K('w'), K('x'), K('y'), K('z'), K('A'), K('B'), K('C'), K('D'),
    K('E'), K('F'), K('G'), K('H'), K('I'), K('J'), K('K'), K('L'), K('M'), K('N'), K('O'),
    K('P'), K('Q'), K('R'), K('S'), K('T'), K('U'), K('V'), K('W'), K('X'), K('Y'), K('Z'),
};
#undef K

/* ---- inject ------------------------------------------------------------------------------- */

static tw_status inject_baggage(const tw_span_context *ctx, tw_format format,
                                const tw_carrier_writer *carrier)
{
    tw_status status = TW_OK;
    char key_stack[128], value_stack[512];
    tw__sbuf key, value;
    tw__sbuf_init(&key, key_stack, sizeof key_stack);
    tw__sbuf_init(&value, value_stack, sizeof value_stack);
    for (size_t i = 0; i < ctx->baggage->n && status == TW_OK; i++) {
        const char *k = ctx->baggage->items[i].key, *v = ctx->baggage->items[i].value;
        size_t kl = strlen(k);
        if (format == TW_FORMAT_HTTP_HEADERS && !tw__is_token(k, kl)) {
            /* A header name cannot carry it; W3C baggage could (encoded). */
            tw__log_msg(TW_LOG_WARN,
                        "inject: baggage key \"%.64s\" is not a valid header name; "
                        "not sent as " UBERCTX "*",
                        k);
            continue;
        }
        key.len = 0;
        value.len = 0;
        tw__sbuf_append(&key, UBERCTX, sizeof UBERCTX - 1);
        tw__sbuf_append(&key, k, kl);
        if (format == TW_FORMAT_HTTP_HEADERS)
            tw__sbuf_append_pct(&value, v, strlen(v), unreserved);
        else
            tw__sbuf_append_str(&value, v);
        const char *ks = tw__sbuf_cstr(&key), *vs = tw__sbuf_cstr(&value);
        if (!ks || !vs) {
            status = TW_E_NOMEM;
            break;
        }
        status = carrier->set(carrier->user_data, ks, vs);
    }
    tw__sbuf_free(&key);
    tw__sbuf_free(&value);
    return status;
}

static tw_status jaeger_inject(const tw_span_context *ctx, tw_format format,
                               const tw_carrier_writer *carrier)
{
    /* 32 + 1 + 16 + 1 + 16 + 1 + 2 + NUL */
    char v[72];
    char *p = v;
    if (ctx->trace_id_high) {
        tw__hex_u64(p, ctx->trace_id_high);
        p += 16;
    }
    tw__hex_u64(p, ctx->trace_id_low);
    p += 16;
    *p++ = ':';
    tw__hex_u64(p, ctx->span_id);
    p += 16;
    *p++ = ':';
    tw__hex_u64(p, ctx->parent_id);
    p += 16;
    *p++ = ':';
    unsigned int flags = tw__wire_flags(ctx);
    if (flags > 0xf)
        *p++ = tw__hex_digits[flags >> 4];
    *p++ = tw__hex_digits[flags & 0xf];
    *p = '\0';
    tw_status status = carrier->set(carrier->user_data, UBER_TRACE_ID, v);
    if (status == TW_OK && ctx->baggage)
        status = inject_baggage(ctx, format, carrier);
    return status;
}

/* ---- extract: the scan callbacks ----------------------------------------------------------- */

/* Decodes a baggage value as the format says (HTTP_HEADERS: %XX and '+' as
 * space; TEXT_MAP: raw) into @out; a bad encoding keeps the raw value. */
static void decode_value(tw__scan *scan, const char *what, const char *key, size_t key_len,
                         const char *value, size_t value_len, tw__sbuf *out)
{
    if (scan->format != TW_FORMAT_HTTP_HEADERS || !memchr(value, '%', value_len)) {
        if (scan->format == TW_FORMAT_HTTP_HEADERS && memchr(value, '+', value_len)) {
            size_t at = tw__sbuf_append(out, value, value_len);
            for (size_t i = 0; at != SIZE_MAX && i < value_len; i++) {
                if (out->data[at + i] == '+')
                    out->data[at + i] = ' ';
            }
        } else {
            tw__sbuf_append(out, value, value_len);
        }
        return;
    }
    size_t at = tw__sbuf_append(out, value, value_len);
    if (at == SIZE_MAX || !tw__sbuf_cstr(out))
        return;
    size_t n = tw__pct_decode(value, value_len, out->data + at, true);
    if (n == SIZE_MAX) {
        memcpy(out->data + at, value, value_len); /* keep it as received */
        char shown[TW__EXCERPT_SIZE];
        tw__excerpt(shown, key, key_len);
        tw__scan_warn(scan, "%s: bad percent-encoding in the value of \"%s\"; kept as received",
                      what, shown);
        return;
    }
    out->len = at + n;
}

static void on_debug_id(tw__scan *scan, tw__slot *slot, const char *key, size_t key_len,
                        const char *value, size_t value_len)
{
    (void)key;
    (void)key_len;
    slot->count++;
    if (slot->count > 1)
        return; /* the first value wins */
    value = tw__trim_ows(value, &value_len);
    if (value_len == 0) {
        tw__scan_warn(scan, DEBUG_ID ": empty value ignored");
        return;
    }
    if (value_len > TW__DEBUG_ID_MAX) {
        tw__scan_warn(scan, DEBUG_ID ": %zu bytes, more than %d; ignored", value_len,
                      TW__DEBUG_ID_MAX);
        return;
    }
    char stack[TW__DEBUG_ID_MAX + 1];
    tw__sbuf decoded;
    tw__sbuf_init(&decoded, stack, sizeof stack);
    decode_value(scan, DEBUG_ID, DEBUG_ID, sizeof DEBUG_ID - 1, value, value_len, &decoded);
    size_t at = tw__sbuf_append(&scan->buf, decoded.data, decoded.len);
    if (at == SIZE_MAX || tw__sbuf_append(&scan->buf, "", 1) == SIZE_MAX) {
        scan->failed = TW_E_NOMEM;
    } else if (decoded.len > 0) {
        slot->offset = (uint32_t)at;
        slot->len = (uint32_t)decoded.len;
        slot->is_present = true;
    }
    tw__sbuf_free(&decoded);
}

static void on_uberctx(tw__scan *scan, tw__slot *slot, const char *key, size_t key_len,
                       const char *value, size_t value_len)
{
    (void)slot;
    /* Keys come back lower-cased, as Go's and Java's extract return them:
     * HTTP does not keep the case of header names. */
    const char *k = key + (sizeof UBERCTX - 1);
    size_t kl = key_len - (sizeof UBERCTX - 1);
    /* An item that cannot fit even after decoding (%XX is 3 bytes for 1) is
     * dropped before anything is copied. */
    if (kl + value_len / 3 > TW_BAGGAGE_MAX_ITEM_BYTES) {
        char shown[TW__EXCERPT_SIZE];
        tw__excerpt(shown, k, kl);
        tw__scan_warn(scan, UBERCTX "*: baggage item \"%s\" dropped: key and value exceed %d bytes",
                      shown, TW_BAGGAGE_MAX_ITEM_BYTES);
        return;
    }
    char key_stack[128], value_stack[512];
    tw__sbuf lower, decoded;
    tw__sbuf_init(&lower, key_stack, sizeof key_stack);
    tw__sbuf_init(&decoded, value_stack, sizeof value_stack);
    size_t at = tw__sbuf_append(&lower, k, kl);
    for (size_t i = 0; at != SIZE_MAX && i < kl; i++) {
        char c = lower.data[i];
        if (c >= 'A' && c <= 'Z')
            lower.data[i] = (char)(c + ('a' - 'A'));
    }
    decode_value(scan, UBERCTX "*", k, kl, value, value_len, &decoded);
    if (lower.has_failed || decoded.has_failed)
        scan->failed = TW_E_NOMEM;
    else
        tw__scan_add_baggage(scan, TW__SRC_UBERCTX, UBERCTX "*", lower.data, lower.len,
                             decoded.data, decoded.len);
    tw__sbuf_free(&lower);
    tw__sbuf_free(&decoded);
}

/* jaeger-baggage: "k1=v1, k2=v2": items split at ',', then at the first
 * '=' (so base64 values ending in '=' survive, unlike in Go and Java), key
 * and value trimmed. Every occurrence of the header counts. */
static void on_jaeger_baggage(tw__scan *scan, tw__slot *slot, const char *key, size_t key_len,
                              const char *value, size_t value_len)
{
    (void)key;
    (void)key_len;
    slot->count++;
    char value_stack[512];
    tw__sbuf decoded;
    tw__sbuf_init(&decoded, value_stack, sizeof value_stack);
    const char *end = value + value_len;
    for (const char *item = value; item < end;) {
        const char *comma = memchr(item, ',', (size_t)(end - item));
        size_t n = (size_t)((comma ? comma : end) - item);
        const char *it = tw__trim_ows(item, &n);
        item = comma ? comma + 1 : end;
        if (n == 0)
            continue; /* "a=1,,b=2" or a trailing comma */
        const char *eq = memchr(it, '=', n);
        if (!eq) {
            char shown[TW__EXCERPT_SIZE];
            tw__excerpt(shown, it, n);
            tw__scan_warn(scan, JAEGER_BAGGAGE ": item \"%s\" has no '='; dropped", shown);
            continue;
        }
        size_t kl = (size_t)(eq - it), vl = n - kl - 1;
        const char *k = tw__trim_ows(it, &kl);
        const char *v = tw__trim_ows(eq + 1, &vl);
        if (kl + vl / 3 > TW_BAGGAGE_MAX_ITEM_BYTES) {
            char shown[TW__EXCERPT_SIZE];
            tw__excerpt(shown, k, kl);
            tw__scan_warn(scan, JAEGER_BAGGAGE ": baggage item \"%s\" dropped: %s", shown,
                          "key and value exceed " TW__STR(TW_BAGGAGE_MAX_ITEM_BYTES) " bytes");
            continue;
        }
        decoded.len = 0;
        decode_value(scan, JAEGER_BAGGAGE, k, kl, v, vl, &decoded);
        if (decoded.has_failed) {
            scan->failed = TW_E_NOMEM;
            break;
        }
        tw__scan_add_baggage(scan, TW__SRC_JAEGER_BAGGAGE, JAEGER_BAGGAGE, k, kl, decoded.data,
                             decoded.len);
    }
    tw__sbuf_free(&decoded);
}

/* ---- extract: the trace context ------------------------------------------------------------ */

static const char *hex_problem(tw__hex_error e)
{
    switch (e) {
    case TW__HEX_EMPTY:
        return "is empty";
    case TW__HEX_TOO_LONG:
        return "has too many digits";
    case TW__HEX_BAD_DIGIT:
    case TW__HEX_UPPER:
        return "is not hex";
    case TW__HEX_OK:
        break;
    }
    return "is bad";
}

static void jaeger_extract(tw__scan *scan, const tw__slot *slots, tw__extracted *out)
{
    const tw__slot *slot = &slots[SLOT_TRACE_ID];
    const char *debug_id = tw__slot_value(scan, &slots[SLOT_DEBUG_ID]);
    out->parts.debug_id = debug_id;
    if (slot->count == 0) {
        if (debug_id) {
            /* A debug id alone: the next span starts a debug trace (span.c). */
            out->found = TW__FOUND_HINT;
            out->parts.flags = TW_FLAG_SAMPLED | TW_FLAG_DEBUG;
        }
        return;
    }
    if (slot->is_overlong) {
        tw__extracted_malformed(out, UBER_TRACE_ID, scan, NULL, "%u bytes, more than %d", slot->len,
                                TW__UBER_TRACE_ID_MAX);
        return;
    }
    const char *raw = tw__slot_value(scan, slot);
    if (!raw)
        return; /* allocation failed during the scan; the propagator reports it */
    /* %-decoding only when there is a '%': the common value is plain. */
    char decoded[TW__UBER_TRACE_ID_MAX + 1];
    const char *v = raw;
    size_t n = slot->len;
    if (memchr(raw, '%', n)) {
        n = tw__pct_decode(raw, slot->len, decoded, false);
        v = decoded;
    }
    if (n == SIZE_MAX) {
        tw__extracted_malformed(out, UBER_TRACE_ID, scan, slot, "bad percent-encoding");
        return;
    }
    if (n == 0) {
        tw__extracted_malformed(out, UBER_TRACE_ID, scan, slot, "empty value");
        return;
    }
    /* Exactly four fields. */
    const char *field[4];
    size_t len[4];
    size_t n_fields = 0;
    const char *end = v + n;
    for (const char *start = v;;) {
        const char *colon = memchr(start, ':', (size_t)(end - start));
        const char *stop = colon ? colon : end;
        if (n_fields < 4) {
            field[n_fields] = start;
            len[n_fields] = (size_t)(stop - start);
        }
        n_fields++;
        if (!colon)
            break;
        start = colon + 1;
    }
    if (n_fields != 4) {
        tw__extracted_malformed(out, UBER_TRACE_ID, scan, slot,
                                "%zu fields, expected 4 (trace-id:span-id:parent-id:flags)",
                                n_fields);
        return;
    }
    static const char *const names[4] = {"trace id", "span id", "parent id", "flags"};
    static const size_t max_digits[4] = {32, 16, 16, 2};
    uint64_t hi = 0, lo[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < 4; i++) {
        tw__hex_error e = tw__parse_hex(field[i], len[i], max_digits[i], false, i == 0 ? &hi : NULL,
                                        &lo[i], NULL);
        if (e != TW__HEX_OK) {
            tw__extracted_malformed(out, UBER_TRACE_ID, scan, slot,
                                    "%s %s (%zu characters, 1 to %zu hex digits expected)",
                                    names[i], hex_problem(e), len[i], max_digits[i]);
            return;
        }
    }
    if (hi == 0 && lo[0] == 0) {
        tw__extracted_malformed(out, UBER_TRACE_ID, scan, slot, "trace id is zero");
        return;
    }
    if (lo[1] == 0) {
        tw__extracted_malformed(out, UBER_TRACE_ID, scan, slot, "span id is zero");
        return;
    }
    out->found = TW__FOUND_CONTEXT;
    out->parts.trace_id_high = hi;
    out->parts.trace_id_low = lo[0];
    out->parts.span_id = lo[1];
    out->parts.parent_id = lo[2];
    out->parts.flags = (uint32_t)lo[3];
}

static const tw__header_spec jaeger_headers[] = {
    [SLOT_TRACE_ID] = {UBER_TRACE_ID, sizeof UBER_TRACE_ID - 1, false, TW__UBER_TRACE_ID_MAX, NULL},
    [SLOT_DEBUG_ID] = {DEBUG_ID, sizeof DEBUG_ID - 1, false, TW__DEBUG_ID_MAX, on_debug_id},
    [SLOT_BAGGAGE] = {JAEGER_BAGGAGE, sizeof JAEGER_BAGGAGE - 1, false, 0, on_jaeger_baggage},
    [SLOT_UBERCTX] = {UBERCTX, sizeof UBERCTX - 1, true, 0, on_uberctx},
};

/* uberctx- items win over jaeger-baggage items with the same key: they are
 * what a Jaeger client injects; jaeger-baggage is for hand-made requests. */
static const tw__source jaeger_sources[] = {TW__SRC_UBERCTX, TW__SRC_JAEGER_BAGGAGE};

const tw__codec_vtable tw__codec_jaeger = {
    .size = sizeof(tw__codec_vtable),
    .id = TW_CODEC_JAEGER,
    .name = "jaeger",
    .headers = jaeger_headers,
    .n_headers = sizeof jaeger_headers / sizeof jaeger_headers[0],
    .sources = jaeger_sources,
    .n_sources = sizeof jaeger_sources / sizeof jaeger_sources[0],
    .inject = jaeger_inject,
    .extract = jaeger_extract,
};
