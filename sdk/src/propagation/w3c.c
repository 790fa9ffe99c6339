/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/w3c.c: W3C Trace Context (traceparent, tracestate; W3C
 * Recommendation "Trace Context" Level 1, WIRE-NOTES 5.6) and the W3C
 * baggage header (W3C "Propagation format for distributed context: Baggage").
 *
 *   traceparent: {version}-{trace-id}-{parent-id}-{trace-flags}
 *     written  00-{32 lower hex}-{16 lower hex}-{01|00}: only the sampled bit; Jaeger's
 *              debug and firehose bits are not W3C flags (C++ leaks debug as 0x02,
 *              which Level 2 reads as "random trace id"); deferred is written 00
 *     read     lower-case hex only; version ff invalid; version 00 exactly 55 bytes;
 *              a higher version at least 55 bytes with '-' or the end after the flags;
 *              zero ids invalid; a second traceparent header is invalid (the W3C test
 *              suite restarts the trace); bit 0x01 becomes Jaeger's sampled flag
 *   tracestate: read only with a valid traceparent; several headers joined with ',';
 *     members checked against the Level 1 grammar (keys, multi-tenant keys, values);
 *     an invalid member, a duplicate key or more than 32 members discard the whole
 *     tracestate (the W3C test suite's reading); a valid one longer than 512 bytes
 *     loses whole members, those over 128 bytes first, then from the right. Kept on
 *     the context (child spans inherit it) and written back unchanged.
 *   baggage: key=value[;properties] members, comma-separated, values %-encoded;
 *     properties are not kept. Bad members are dropped with a warning.
 *
 * Header names are matched ignoring ASCII case and written in lower case.
 * Stateless; any thread.
 */
#include "propagation/propagation.h"

#include <string.h>

#define TRACEPARENT "traceparent"
#define TRACESTATE "tracestate"
#define BAGGAGE "baggage"

enum { SLOT_TRACEPARENT, SLOT_TRACESTATE, SLOT_BAGGAGE };

/* baggage-octet (W3C baggage) less '%', which must be encoded. */
/* clang-format off */
static const uint8_t baggage_keep[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,
    /* 0x80 and up: 0 */
};
/* clang-format on */

/* ---- inject ------------------------------------------------------------------------------- */

static tw_status inject_baggage(const tw_span_context *ctx, const tw_carrier_writer *carrier)
{
    char stack[1024], item_stack[256];
    tw__sbuf out, item;
    tw__sbuf_init(&out, stack, sizeof stack);
    tw__sbuf_init(&item, item_stack, sizeof item_stack);
    size_t n_items = 0;
    for (size_t i = 0; i < ctx->baggage->n; i++) {
        const char *k = ctx->baggage->items[i].key, *v = ctx->baggage->items[i].value;
        size_t kl = strlen(k);
        const char *why = NULL;
        item.len = 0;
        tw__sbuf_append(&item, k, kl);
        tw__sbuf_append(&item, "=", 1);
        tw__sbuf_append_pct(&item, v, strlen(v), baggage_keep);
        if (!tw__is_token(k, kl))
            why = "the key is not a token";
        else if (item.len > TW_BAGGAGE_MAX_ITEM_BYTES)
            why = "the member exceeds " TW__STR(TW_BAGGAGE_MAX_ITEM_BYTES) " bytes";
        else if (n_items == TW_BAGGAGE_MAX_ITEMS)
            why = "more than " TW__STR(TW_BAGGAGE_MAX_ITEMS) " members";
        else if (out.len + (n_items ? 1 : 0) + item.len > TW_BAGGAGE_MAX_TOTAL_BYTES)
            why = "the header would exceed " TW__STR(TW_BAGGAGE_MAX_TOTAL_BYTES) " bytes";
        if (why) {
            tw__log_msg(TW_LOG_WARN, "inject: baggage item \"%.64s\" not sent in " BAGGAGE ": %s",
                        k, why);
            continue;
        }
        if (n_items > 0)
            tw__sbuf_append(&out, ",", 1);
        tw__sbuf_append(&out, item.data, item.len);
        n_items++;
    }
    tw_status status = TW_OK;
    const char *value = tw__sbuf_cstr(&out);
    if (!value || item.has_failed)
        status = TW_E_NOMEM;
    else if (n_items)
        status = carrier->set(carrier->user_data, BAGGAGE, value);
    tw__sbuf_free(&out);
    tw__sbuf_free(&item);
    return status;
}

/* The traceparent value of @ctx (tw_span_context_traceparent shares it, so
 * a log line shows exactly what inject sends). */
void tw__w3c_traceparent(const tw_span_context *ctx, char v[56])
{
    memcpy(v, "00-", 3);
    tw__hex_u64(v + 3, ctx->trace_id_high);
    tw__hex_u64(v + 19, ctx->trace_id_low);
    v[35] = '-';
    tw__hex_u64(v + 36, ctx->span_id);
    v[52] = '-';
    v[53] = '0';
    v[54] = (tw__wire_flags(ctx) & TW_FLAG_SAMPLED) ? '1' : '0';
    v[55] = '\0';
}

static tw_status w3c_inject(const tw_span_context *ctx, tw_format format,
                            const tw_carrier_writer *carrier)
{
    (void)format;
    char v[56];
    tw__w3c_traceparent(ctx, v);
    tw_status status = carrier->set(carrier->user_data, TRACEPARENT, v);
    const char *tracestate = ctx->extra ? ctx->extra->tracestate : NULL;
    if (status == TW_OK && tracestate && *tracestate)
        status = carrier->set(carrier->user_data, TRACESTATE, tracestate);
    if (status == TW_OK && ctx->baggage)
        status = inject_baggage(ctx, carrier);
    return status;
}

/* ---- extract: scan callbacks -------------------------------------------------------------- */

static void on_tracestate(tw__scan *scan, tw__slot *slot, const char *key, size_t key_len,
                          const char *value, size_t value_len)
{
    (void)key;
    (void)key_len;
    slot->count++;
    if (slot->is_overlong)
        return;
    if (scan->lists[TW__SRC_TRACESTATE].n_bytes + value_len > TW__TRACESTATE_MAX_RAW) {
        slot->is_overlong = true; /* parsed (and reported) only with a valid traceparent */
        return;
    }
    tw__scan_push(scan, TW__SRC_TRACESTATE, "", 0, value, value_len);
}

static void on_baggage(tw__scan *scan, tw__slot *slot, const char *key, size_t key_len,
                       const char *value, size_t value_len)
{
    (void)key;
    (void)key_len;
    slot->count++;
    char stack[512];
    tw__sbuf decoded;
    tw__sbuf_init(&decoded, stack, sizeof stack);
    char shown[TW__EXCERPT_SIZE];
    const char *end = value + value_len;
    for (const char *member = value; member < end;) {
        const char *comma = memchr(member, ',', (size_t)(end - member));
        size_t n = (size_t)((comma ? comma : end) - member);
        const char *m = tw__trim_ows(member, &n);
        member = comma ? comma + 1 : end;
        if (n == 0)
            continue;
        const char *semi = memchr(m, ';', n);
        size_t kv = semi ? (size_t)(semi - m) : n; /* properties are not kept */
        const char *eq = memchr(m, '=', kv);
        if (!eq) {
            tw__excerpt(shown, m, n);
            tw__scan_warn(scan, BAGGAGE ": member \"%s\" has no '='; dropped", shown);
            continue;
        }
        size_t kl = (size_t)(eq - m), vl = kv - kl - 1;
        const char *k = tw__trim_ows(m, &kl);
        const char *v = tw__trim_ows(eq + 1, &vl);
        if (!tw__is_token(k, kl)) {
            tw__excerpt(shown, k, kl);
            tw__scan_warn(scan, BAGGAGE ": key \"%s\" is not a token; member dropped", shown);
            continue;
        }
        if (kl + vl / 3 > TW_BAGGAGE_MAX_ITEM_BYTES) {
            tw__excerpt(shown, k, kl);
            tw__scan_warn(scan, BAGGAGE ": baggage item \"%s\" dropped: %s", shown,
                          "key and value exceed " TW__STR(TW_BAGGAGE_MAX_ITEM_BYTES) " bytes");
            continue;
        }
        decoded.len = 0;
        size_t at = tw__sbuf_append(&decoded, v, vl);
        if (at == SIZE_MAX || !tw__sbuf_cstr(&decoded)) {
            scan->failed = TW_E_NOMEM;
            break;
        }
        size_t dl = tw__pct_decode(v, vl, decoded.data, false);
        if (dl == SIZE_MAX) {
            memcpy(decoded.data, v, vl);
            dl = vl;
            tw__excerpt(shown, k, kl);
            tw__scan_warn(scan,
                          BAGGAGE ": bad percent-encoding in the value of \"%s\"; kept as received",
                          shown);
        }
        tw__scan_add_baggage(scan, TW__SRC_W3C_BAGGAGE, BAGGAGE, k, kl, decoded.data, dl);
    }
    tw__sbuf_free(&decoded);
}

/* ---- extract: traceparent ----------------------------------------------------------------- */

static bool parse_field(tw__scan *scan, const tw__slot *slot, const char *what, const char *s,
                        size_t n, uint64_t *hi, uint64_t *lo, tw__extracted *out)
{
    size_t bad_at = 0;
    tw__hex_error e = tw__parse_hex(s, n, n, true, hi, lo, &bad_at);
    if (e == TW__HEX_UPPER) {
        tw__extracted_malformed(out, TRACEPARENT, scan, slot,
                                "%s has an upper-case hex digit (lower case is required)", what);
        return false;
    }
    if (e != TW__HEX_OK) {
        tw__extracted_malformed(out, TRACEPARENT, scan, slot, "%s is not %zu hex digits", what, n);
        return false;
    }
    return true;
}

static bool parse_traceparent(tw__scan *scan, const tw__slot *slot, tw__extracted *out)
{
    if (slot->count > 1) {
        tw__extracted_malformed(out, TRACEPARENT, scan, NULL,
                                "%u traceparent headers; exactly one is allowed", slot->count);
        return false;
    }
    if (slot->is_overlong) {
        tw__extracted_malformed(out, TRACEPARENT, scan, NULL, "%u bytes, more than %d", slot->len,
                                TW__TRACEPARENT_MAX);
        return false;
    }
    const char *v = tw__slot_value(scan, slot);
    if (!v)
        return false; /* allocation failure during the scan */
    size_t n = slot->len;
    uint64_t version = 0, hi = 0, lo = 0, span = 0, flags = 0;
    if (n < 3 || v[2] != '-' || tw__parse_hex(v, 2, 2, true, NULL, &version, NULL) != TW__HEX_OK) {
        tw__extracted_malformed(out, TRACEPARENT, scan, slot,
                                "the version is not 2 lower-case hex digits and '-'");
        return false;
    }
    if (version == 0xff) {
        tw__extracted_malformed(out, TRACEPARENT, scan, slot, "version ff is invalid");
        return false;
    }
    if (version == 0 && n != 55) {
        tw__extracted_malformed(out, TRACEPARENT, scan, slot,
                                "%zu bytes; version 00 has exactly 55", n);
        return false;
    }
    if (n < 55) {
        tw__extracted_malformed(out, TRACEPARENT, scan, slot, "%zu bytes; at least 55 expected", n);
        return false;
    }
    if (v[35] != '-' || v[52] != '-' || (n > 55 && v[55] != '-')) {
        tw__extracted_malformed(out, TRACEPARENT, scan, slot,
                                "fields are not 32, 16 and 2 hex digits separated by '-'");
        return false;
    }
    if (!parse_field(scan, slot, "trace id", v + 3, 32, &hi, &lo, out) ||
        !parse_field(scan, slot, "parent id", v + 36, 16, NULL, &span, out) ||
        !parse_field(scan, slot, "trace flags", v + 53, 2, NULL, &flags, out))
        return false;
    if (hi == 0 && lo == 0) {
        tw__extracted_malformed(out, TRACEPARENT, scan, slot, "trace id is all zeros");
        return false;
    }
    if (span == 0) {
        tw__extracted_malformed(out, TRACEPARENT, scan, slot, "parent id is all zeros");
        return false;
    }
    out->found = TW__FOUND_CONTEXT;
    out->parts.trace_id_high = hi;
    out->parts.trace_id_low = lo;
    out->parts.span_id = span; /* the caller's span: our parent */
    out->parts.parent_id = 0;  /* W3C does not carry the grandparent */
    out->parts.flags = (flags & 0x01) ? TW_FLAG_SAMPLED : 0;
    return true;
}

/* ---- extract: tracestate ------------------------------------------------------------------ */

static bool is_keychar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '*' ||
           c == '/';
}

/* key = simple-key / multi-tenant-key (Level 1):
 *   simple-key       = lcalpha 0*255( lcalpha / DIGIT / "_" / "-"/ "*" / "/" )
 *   multi-tenant-key = tenant-id "@" system-id
 *   tenant-id        = ( lcalpha / DIGIT ) 0*240( ... )
 *   system-id        = lcalpha 0*13( ... ) */
static bool is_ts_key(const char *k, size_t n)
{
    const char *at = memchr(k, '@', n);
    size_t first = at ? (size_t)(at - k) : n;
    size_t first_max = at ? 241 : 256;
    if (first == 0 || first > first_max)
        return false;
    unsigned char c0 = (unsigned char)k[0];
    if (!((c0 >= 'a' && c0 <= 'z') || (at && c0 >= '0' && c0 <= '9')))
        return false;
    for (size_t i = 1; i < first; i++) {
        if (!is_keychar((unsigned char)k[i]))
            return false;
    }
    if (!at)
        return true;
    const char *sys = at + 1;
    size_t sn = n - first - 1;
    if (sn == 0 || sn > 14 || !(sys[0] >= 'a' && sys[0] <= 'z'))
        return false;
    for (size_t i = 1; i < sn; i++) {
        if (!is_keychar((unsigned char)sys[i]))
            return false;
    }
    return true;
}

/* value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E */
static bool is_ts_value(const char *v, size_t n)
{
    if (n == 0 || n > 256 || v[n - 1] == ' ')
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c > 0x7e || c == ',' || c == '=')
            return false;
    }
    return true;
}

typedef struct {
    const char *s;
    size_t len, key_len;
} ts_member;

static void discard_tracestate(tw__scan *scan, const char *why, const char *s, size_t n)
{
    char shown[TW__EXCERPT_SIZE];
    tw__excerpt(shown, s, n);
    tw__scan_warn(scan, TRACESTATE ": %s (\"%s\"); the whole tracestate is discarded", why, shown);
}

static void parse_tracestate(tw__scan *scan, const tw__slot *slot, tw__extracted *out)
{
    if (!slot->count)
        return;
    if (slot->is_overlong) {
        tw__scan_warn(scan, TRACESTATE ": more than %d bytes in all; discarded",
                      TW__TRACESTATE_MAX_RAW);
        return;
    }
    ts_member m[TW__TRACESTATE_MAX_MEMBERS];
    size_t n = 0;
    for (uint32_t pos = scan->lists[TW__SRC_TRACESTATE].head; pos;) {
        const char *k, *value;
        size_t kl, value_len;
        pos = tw__scan_record(scan, pos, &k, &kl, &value, &value_len);
        const char *end = value + value_len;
        for (const char *member = value; member < end;) {
            const char *comma = memchr(member, ',', (size_t)(end - member));
            size_t len = (size_t)((comma ? comma : end) - member);
            const char *s = tw__trim_ows(member, &len);
            member = comma ? comma + 1 : end;
            if (len == 0)
                continue; /* empty members are allowed */
            if (n == TW__TRACESTATE_MAX_MEMBERS) {
                discard_tracestate(
                    scan, "more than " TW__STR(TW__TRACESTATE_MAX_MEMBERS) " members", s, len);
                return;
            }
            const char *eq = memchr(s, '=', len);
            if (!eq) {
                discard_tracestate(scan, "a member has no '='", s, len);
                return;
            }
            size_t key_len = (size_t)(eq - s);
            if (!is_ts_key(s, key_len)) {
                discard_tracestate(scan, "a member has an invalid key", s, len);
                return;
            }
            if (!is_ts_value(eq + 1, len - key_len - 1)) {
                discard_tracestate(scan, "a member has an invalid value", s, len);
                return;
            }
            for (size_t i = 0; i < n; i++) {
                if (m[i].key_len == key_len && memcmp(m[i].s, s, key_len) == 0) {
                    discard_tracestate(scan, "a key occurs twice", s, len);
                    return;
                }
            }
            m[n++] = (ts_member){s, len, key_len};
        }
    }
    /* Over the size we propagate: drop whole members, those over 128 bytes
     * first (from the right), then from the right (W3C "tracestate Limits"). */
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += m[i].len + (i ? 1 : 0);
    for (int pass = 0; pass < 2 && total > TW__TRACESTATE_MAX_BYTES; pass++) {
        for (size_t i = n; i-- > 0 && total > TW__TRACESTATE_MAX_BYTES;) {
            if (pass == 0 && m[i].len <= 128)
                continue;
            char shown[TW__EXCERPT_SIZE];
            tw__excerpt(shown, m[i].s, m[i].key_len);
            tw__scan_warn(scan, TRACESTATE ": member \"%s\" (%zu bytes) dropped: %s", shown,
                          m[i].len, "the list exceeds " TW__STR(TW__TRACESTATE_MAX_BYTES) " bytes");
            total -= m[i].len + (n > 1 ? 1 : 0);
            memmove(&m[i], &m[i + 1], (n - i - 1) * sizeof m[0]);
            n--;
        }
    }
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (i)
            out->tracestate[pos++] = ',';
        memcpy(out->tracestate + pos, m[i].s, m[i].len);
        pos += m[i].len;
    }
    out->tracestate[pos] = '\0';
    out->parts.tracestate = n ? out->tracestate : NULL;
}

static void w3c_extract(tw__scan *scan, const tw__slot *slots, tw__extracted *out)
{
    if (!slots[SLOT_TRACEPARENT].count)
        return; /* tracestate alone is not parsed; baggage alone is the propagator's */
    if (parse_traceparent(scan, &slots[SLOT_TRACEPARENT], out))
        parse_tracestate(scan, &slots[SLOT_TRACESTATE], out);
}

static const tw__header_spec w3c_headers[] = {
    [SLOT_TRACEPARENT] = {TRACEPARENT, sizeof TRACEPARENT - 1, false, TW__TRACEPARENT_MAX, NULL},
    [SLOT_TRACESTATE] = {TRACESTATE, sizeof TRACESTATE - 1, false, 0, on_tracestate},
    [SLOT_BAGGAGE] = {BAGGAGE, sizeof BAGGAGE - 1, false, 0, on_baggage},
};

static const tw__source w3c_sources[] = {TW__SRC_W3C_BAGGAGE};

const tw__codec_vtable tw__codec_w3c = {
    .size = sizeof(tw__codec_vtable),
    .id = TW_CODEC_W3C,
    .name = "w3c",
    .headers = w3c_headers,
    .n_headers = sizeof w3c_headers / sizeof w3c_headers[0],
    .sources = w3c_sources,
    .n_sources = sizeof w3c_sources / sizeof w3c_sources[0],
    .inject = w3c_inject,
    .extract = w3c_extract,
};
