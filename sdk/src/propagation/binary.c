/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/binary.c: the OpenTracing BINARY format in Jaeger's layout
 * (jaeger-client-go propagation.go, binaryPropagator;
 * docs/wire/propagation.md#jaeger-binary-format). All integers big-endian:
 *
 *   offset  size  field
 *        0     8  trace id, high half (0 for 64-bit ids)
 *        8     8  trace id, low half
 *       16     8  span id
 *       24     8  parent span id (0 for a root)
 *       32     1  Jaeger flags (a deferred context is written not sampled)
 *       33     4  baggage item count (unsigned)
 *       37        per item: key length (4), key, value length (4), value
 *
 * Extract checks every length against the bytes that remain before reading:
 * a header shorter than 37 bytes, a count that cannot fit, or an item that
 * runs past the end is TW_E_MALFORMED (a short read: nothing after it can be
 * trusted). Items that are well-formed but over the baggage limits, have an
 * empty key or hold a NUL byte are dropped with a warning; trailing bytes
 * after the last item are ignored with a warning. Stateless; any thread.
 */
#include "propagation/propagation.h"

#include <inttypes.h>
#include <string.h>

#define HEADER_BYTES 37

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t get_u32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

tw_status tw_binary_inject(const tw_span_context *ctx, uint8_t *buf, size_t size, size_t *len)
{
    TW_CHECK_ARG(ctx && len && (buf || size == 0), TW_E_INVALID_ARG);
    TW_CHECK_ARG(tw__context_has_ids(ctx), TW_E_INVALID_ARG);
    size_t n_items = ctx->baggage ? ctx->baggage->n : 0;
    size_t need = HEADER_BYTES;
    for (size_t i = 0; i < n_items; i++) {
        size_t kl = strlen(ctx->baggage->items[i].key);
        size_t vl = strlen(ctx->baggage->items[i].value);
        if (kl > UINT32_MAX || vl > UINT32_MAX || n_items > UINT32_MAX ||
            need > SIZE_MAX - 8 - kl - vl) {
            tw__log_msg(TW_LOG_ERROR, "tw_binary_inject: baggage too large for the format");
            return TW_E_LIMIT;
        }
        need += 8 + kl + vl;
    }
    *len = need;
    if (need > size)
        return TW_E_LIMIT;
    put_u64(buf, ctx->trace_id_high);
    put_u64(buf + 8, ctx->trace_id_low);
    put_u64(buf + 16, ctx->span_id);
    put_u64(buf + 24, ctx->parent_id);
    buf[32] = (uint8_t)tw__wire_flags(ctx);
    put_u32(buf + 33, (uint32_t)n_items);
    uint8_t *p = buf + HEADER_BYTES;
    for (size_t i = 0; i < n_items; i++) {
        const char *k = ctx->baggage->items[i].key, *v = ctx->baggage->items[i].value;
        size_t kl = strlen(k), vl = strlen(v);
        put_u32(p, (uint32_t)kl);
        memcpy(p + 4, k, kl);
        p += 4 + kl;
        put_u32(p, (uint32_t)vl);
        memcpy(p + 4, v, vl);
        p += 4 + vl;
    }
    return TW_OK;
}

tw_span_context *tw__binary_extract(const uint8_t *buf, size_t len, tw_extract_warning_fn warn,
                                    void *warn_data, size_t *n_warnings, tw_error **err)
{
    if (n_warnings)
        *n_warnings = 0;
    if (!buf && len) {
        tw__set_error(err, TW_E_INVALID_ARG, "tw_binary_extract: buffer is NULL");
        return NULL;
    }
    if (len < HEADER_BYTES) {
        tw__set_error(err, TW_E_MALFORMED, "binary: %zu bytes, shorter than the %d-byte header",
                      len, HEADER_BYTES);
        return NULL;
    }
    tw__context_parts parts = {
        .trace_id_high = get_u64(buf),
        .trace_id_low = get_u64(buf + 8),
        .span_id = get_u64(buf + 16),
        .parent_id = get_u64(buf + 24),
        .flags = buf[32],
    };
    if (parts.trace_id_high == 0 && parts.trace_id_low == 0) {
        tw__set_error(err, TW_E_MALFORMED, "binary: trace id is zero");
        return NULL;
    }
    if (parts.span_id == 0) {
        tw__set_error(err, TW_E_MALFORMED, "binary: span id is zero");
        return NULL;
    }
    uint32_t count = get_u32(buf + 33);
    size_t left = len - HEADER_BYTES;
    if (count > left / 8) { /* each item has two 4-byte lengths at least */
        tw__set_error(err, TW_E_MALFORMED,
                      "binary: %" PRIu32 " baggage items cannot fit in the %zu bytes left", count,
                      left);
        return NULL;
    }
    tw_span_context *ctx = NULL;
    char stack[1024];
    tw__scan scan;
    tw__scan_init(&scan, TW_FORMAT_BINARY, warn, warn_data, stack, sizeof stack);
    const uint8_t *p = buf + HEADER_BYTES;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t lengths[2];
        const uint8_t *bytes[2];
        for (int f = 0; f < 2; f++) {
            if (left < 4) {
                tw__set_error(err, TW_E_MALFORMED,
                              "binary: item %" PRIu32 " of %" PRIu32 ": the %s length runs past "
                              "the end",
                              i + 1, count, f ? "value" : "key");
                goto done;
            }
            lengths[f] = get_u32(p);
            p += 4;
            left -= 4;
            if (lengths[f] > left) {
                tw__set_error(err, TW_E_MALFORMED,
                              "binary: item %" PRIu32 " of %" PRIu32 ": the %s (%" PRIu32
                              " bytes) runs past the end (%zu bytes left)",
                              i + 1, count, f ? "value" : "key", lengths[f], left);
                goto done;
            }
            bytes[f] = p;
            p += lengths[f];
            left -= lengths[f];
        }
        const char *k = (const char *)bytes[0], *v = (const char *)bytes[1];
        if (memchr(k, '\0', lengths[0]) || memchr(v, '\0', lengths[1])) {
            tw__scan_warn(&scan, "binary: baggage item %" PRIu32 " holds a NUL byte; dropped",
                          i + 1);
            continue;
        }
        tw__scan_add_baggage(&scan, TW__SRC_BINARY, "binary", k, lengths[0], v, lengths[1]);
    }
    if (left)
        tw__scan_warn(&scan, "binary: %zu bytes after the last baggage item ignored", left);
    if (scan.failed != TW_OK) {
        tw__set_error(err, TW_E_NOMEM, "binary: out of memory");
        goto done;
    }
    static const tw__source sources[] = {TW__SRC_BINARY};
    bool is_empty = true;
    parts.baggage = tw__scan_build_baggage(&scan, sources, 1, &is_empty);
    if (!parts.baggage && !is_empty) {
        tw__set_error(err, TW_E_NOMEM, "binary: out of memory");
        goto done;
    }
    ctx = tw__span_context_build(&parts);
    tw__baggage_unref(parts.baggage);
    if (!ctx)
        tw__set_error(err, TW_E_NOMEM, "binary: out of memory");
done:
    tw__scan_warn_summary(&scan);
    if (n_warnings)
        *n_warnings = scan.n_warnings;
    tw__scan_free(&scan);
    return ctx;
}

tw_span_context *tw_binary_extract(const uint8_t *buf, size_t len, tw_extract_warning_fn warn,
                                   void *warn_data, tw_error **err)
{
    return tw__binary_extract(buf, len, warn, warn_data, NULL, err);
}
