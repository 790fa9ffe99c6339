/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/w3c.c: W3C Trace Context (traceparent, tracestate; W3C
 * "Trace Context" Level 2 and its Level 1 Recommendation) and the W3C baggage
 * header (W3C "Propagation format for distributed context: Baggage").
 *
 *   traceparent: {version}-{trace-id}-{parent-id}-{trace-flags}
 *     written  00-{32 lower hex}-{16 lower hex}-{flags}: sampled 0x01 and random trace
 *              id 0x02 (Level 2), nothing else; Jaeger's debug and firehose bits are
 *              not W3C flags (C++ leaks debug as 0x02, which Level 2 reads as "random
 *              trace id"); deferred is written not sampled
 *     read     lower-case hex only; version ff invalid; version 00 exactly 55 bytes;
 *              a higher version at least 55 bytes with '-' or the end after the flags;
 *              zero ids invalid; a second traceparent header is invalid (the W3C test
 *              suite restarts the trace); 0x01 becomes Jaeger's sampled flag, 0x02 the
 *              context's random-trace-id flag, other bits are dropped
 *   tracestate: read only with a valid traceparent; several headers joined with ',';
 *     members checked against the current grammar (tracestate.c); a list that cannot
 *     be parsed (a bad member, more than 32 members) is discarded whole; a repeated key
 *     keeps its first member; a list longer than 512 bytes loses whole members, those
 *     over 128 bytes first, then from the right. Kept on the context (child spans
 *     inherit it) and written back unchanged.
 *   baggage: key=value[;properties] members, comma-separated, values %-encoded;
 *     properties are not kept. Bad members are dropped with a warning.
 *
 * Header names are matched ignoring ASCII case and written in lower case.
 * Stateless; any thread. docs/PROPAGATION.md has the rules and the spec's sentences.
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
    /* Bits W3C defines only: sampled (0x01) and, Level 2, random trace id (0x02). */
    v[53] = '0';
    v[54] = tw__hex_digits[((tw__wire_flags(ctx) & TW_FLAG_SAMPLED) ? 0x01 : 0) |
                           ((ctx->flags & TW__FLAG_RANDOM) ? 0x02 : 0)];
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
    out->parts.flags =
        ((flags & 0x01) ? TW_FLAG_SAMPLED : 0) | ((flags & 0x02) ? TW__FLAG_RANDOM : 0);
    return true;
}

/* ---- extract: tracestate ------------------------------------------------------------------ */

static void discard_tracestate(tw__scan *scan, const char *why, const char *s, size_t n)
{
    char shown[TW__EXCERPT_SIZE];
    tw__excerpt(shown, s, n);
    tw__scan_warn(scan, TRACESTATE ": %s (\"%s\"); the whole tracestate is discarded", why, shown);
}

static void warn_dropped(void *data, const tw__ts_member *member, const char *why)
{
    char shown[TW__EXCERPT_SIZE];
    tw__excerpt(shown, member->s, member->key_len);
    tw__scan_warn(data, TRACESTATE ": member \"%s\" (%zu bytes) dropped: %s", shown, member->len,
                  why);
}

/* A list that cannot be parsed (a member that is not key=value by the grammar, more than
 * 32 members) is discarded whole: "If the tracestate header cannot be parsed the vendor
 * MAY discard the entire header" (Processing Model, step 3), so a list we could not
 * validate is never forwarded. A repeated key keeps its first (left-most, most recent)
 * member: "vendors MAY also discard duplicate keys that were not generated by them". */
static void parse_tracestate(tw__scan *scan, const tw__slot *slot, tw__extracted *out)
{
    if (!slot->count)
        return;
    if (slot->is_overlong) {
        tw__scan_warn(scan, TRACESTATE ": more than %d bytes in all; discarded",
                      TW__TRACESTATE_MAX_RAW);
        return;
    }
    tw__ts_member m[TW__TRACESTATE_MAX_MEMBERS], repeated[TW__TRACESTATE_MAX_MEMBERS];
    size_t n = 0, n_members = 0, n_repeated = 0;
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
                continue; /* empty members are allowed, and not counted */
            if (n_members == TW__TRACESTATE_MAX_MEMBERS) {
                discard_tracestate(
                    scan, "more than " TW__STR(TW__TRACESTATE_MAX_MEMBERS) " members", s, len);
                return;
            }
            n_members++;
            const char *eq = memchr(s, '=', len);
            if (!eq) {
                discard_tracestate(scan, "a member has no '='", s, len);
                return;
            }
            size_t key_len = (size_t)(eq - s);
            if (!tw__ts_key_is_valid(s, key_len)) {
                discard_tracestate(scan, "a member has an invalid key", s, len);
                return;
            }
            if (!tw__ts_value_is_valid(eq + 1, len - key_len - 1)) {
                discard_tracestate(scan, "a member has an invalid value", s, len);
                return;
            }
            bool is_repeated = false;
            for (size_t i = 0; i < n && !is_repeated; i++)
                is_repeated = m[i].key_len == key_len && memcmp(m[i].s, s, key_len) == 0;
            if (is_repeated)
                repeated[n_repeated++] = (tw__ts_member){s, len, key_len};
            else
                m[n++] = (tw__ts_member){s, len, key_len};
        }
    }
    /* Reported only now: a list discarded later on would make them noise. */
    for (size_t i = 0; i < n_repeated; i++)
        warn_dropped(scan, &repeated[i], "its key occurs earlier in the list");
    /* Over the size we propagate: drop whole members (W3C "tracestate Limits"). */
    tw__ts_fit(m, &n, 0, warn_dropped, scan);
    tw__ts_join(m, n, out->tracestate);
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
