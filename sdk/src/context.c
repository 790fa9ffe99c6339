/* SPDX-License-Identifier: Apache-2.0 */
/*
 * context.c: span contexts and their baggage.
 *
 * A context is either heap-allocated and reference-counted (refcount >= 1)
 * or embedded in a span (refcount 0); tw_span_context_ref() on an embedded
 * one makes an owned heap copy, so a borrowed context can be kept past its
 * span's finish. Baggage is an immutable, reference-counted array in one
 * allocation, shared by a parent and all its children until one of them
 * changes it (copy on write), so starting a child costs one atomic increment
 * when there is baggage and nothing when there is none.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#include "propagation/propagation.h"

/* ---- baggage ---------------------------------------------------------------------------- */

tw__baggage *tw__baggage_ref(tw__baggage *b)
{
    if (b) /* relaxed: the caller holds a reference already */
        atomic_fetch_add_explicit(&b->refcount, 1, memory_order_relaxed);
    return b;
}

void tw__baggage_unref(tw__baggage *b)
{
    if (b && atomic_fetch_sub_explicit(&b->refcount, 1, memory_order_acq_rel) == 1)
        free(b);
}

const char *tw__baggage_refusal(const tw__baggage *b, const char *key, const char *value)
{
    if (!value)
        return NULL; /* a removal is always allowed */
    size_t kl = strlen(key), vl = strlen(value);
    if (kl + vl > TW_BAGGAGE_MAX_ITEM_BYTES)
        return "key and value exceed " TW__STR(TW_BAGGAGE_MAX_ITEM_BYTES) " bytes";
    /* What stays of @b: all of it, less the item @key replaces (one lookup
     * of at most TW_BAGGAGE_MAX_ITEMS keys; sizes are kept, not summed). */
    size_t n = b ? b->n : 0, bytes = b ? b->n_bytes : 0;
    for (size_t i = 0; i < n; i++) {
        if (strcmp(b->items[i].key, key) == 0) {
            n--;
            bytes -= kl + strlen(b->items[i].value);
            break;
        }
    }
    if (n + 1 > TW_BAGGAGE_MAX_ITEMS)
        return "more than " TW__STR(TW_BAGGAGE_MAX_ITEMS) " items";
    if (bytes + kl + vl > TW_BAGGAGE_MAX_TOTAL_BYTES)
        return "the baggage would exceed " TW__STR(TW_BAGGAGE_MAX_TOTAL_BYTES) " bytes";
    return NULL;
}

const char *tw__baggage_get(const tw__baggage *b, const char *key)
{
    if (!b || !key)
        return NULL;
    for (size_t i = 0; i < b->n; i++) {
        if (strcmp(b->items[i].key, key) == 0)
            return b->items[i].value;
    }
    return NULL;
}

tw__baggage *tw__baggage_with(const tw__baggage *b, const char *key, const char *value,
                              bool *is_empty)
{
    size_t old_n = b ? b->n : 0;
    size_t n = 0, bytes = 0;
    /* First pass: which items survive, and how many bytes they need. */
    for (size_t i = 0; i < old_n; i++) {
        if (strcmp(b->items[i].key, key) == 0)
            continue;
        n++;
        bytes += strlen(b->items[i].key) + strlen(b->items[i].value) + 2;
    }
    if (value) {
        n++;
        bytes += strlen(key) + strlen(value) + 2;
    }
    *is_empty = n == 0;
    if (n == 0)
        return NULL;
    size_t head = sizeof(tw__baggage) + n * sizeof(((tw__baggage *)0)->items[0]);
    tw__baggage *nb = malloc(head + bytes);
    if (!nb)
        return NULL;
    atomic_init(&nb->refcount, 1);
    nb->n = 0;
    nb->n_bytes = bytes - 2 * n; /* bytes counted the two NULs of each item */
    char *strings = (char *)nb + head;
    for (size_t i = 0; i <= old_n; i++) {
        const char *k, *v;
        if (i < old_n) {
            if (strcmp(b->items[i].key, key) == 0)
                continue;
            k = b->items[i].key;
            v = b->items[i].value;
        } else {
            if (!value)
                break;
            k = key;
            v = value;
        }
        size_t kl = strlen(k) + 1, vl = strlen(v) + 1;
        memcpy(strings, k, kl);
        nb->items[nb->n].key = strings;
        strings += kl;
        memcpy(strings, v, vl);
        nb->items[nb->n].value = strings;
        strings += vl;
        nb->n++;
    }
    return nb;
}

/* ---- extras ----------------------------------------------------------------------------- */

tw__ctx_extra *tw__ctx_extra_new(const char *tracestate, const char *debug_id)
{
    if (!tracestate && !debug_id)
        return NULL;
    size_t ts_len = tracestate ? strlen(tracestate) + 1 : 0;
    size_t id_len = debug_id ? strlen(debug_id) + 1 : 0;
    tw__ctx_extra *x = malloc(sizeof(*x) + ts_len + id_len);
    if (!x)
        return NULL;
    atomic_init(&x->refcount, 1);
    x->tracestate = tracestate ? memcpy(x->data, tracestate, ts_len) : NULL;
    x->debug_id = debug_id ? memcpy(x->data + ts_len, debug_id, id_len) : NULL;
    return x;
}

tw__ctx_extra *tw__ctx_extra_ref(tw__ctx_extra *x)
{
    if (x) /* relaxed: the caller holds a reference already */
        atomic_fetch_add_explicit(&x->refcount, 1, memory_order_relaxed);
    return x;
}

void tw__ctx_extra_unref(tw__ctx_extra *x)
{
    if (x && atomic_fetch_sub_explicit(&x->refcount, 1, memory_order_acq_rel) == 1)
        free(x);
}

/* ---- contexts --------------------------------------------------------------------------- */

bool tw__context_is_usable(const tw_span_context *c, const char *caller)
{
    tw_span *s = tw__context_span(c);
    if (!s || s->state == TW__SPAN_OPEN)
        return true;
    tw__log_msg(TW_LOG_ERROR,
                "%s: the context of a finished span was used (keep it with "
                "tw_span_context_ref() before tw_span_finish()); ignored",
                caller);
    return false;
}

void tw__context_lend_baggage(const tw_span_context *c)
{
    tw_span *s = tw__context_span(c);
    if (s && c->baggage)
        atomic_store_explicit(&s->is_baggage_lent, true, memory_order_relaxed);
}

tw_span_context *tw__span_context_build(const tw__context_parts *parts)
{
    tw_span_context *c = malloc(sizeof(*c));
    if (!c)
        return NULL;
    c->extra = NULL;
    if ((parts->tracestate || parts->debug_id) &&
        !(c->extra = tw__ctx_extra_new(parts->tracestate, parts->debug_id))) {
        free(c);
        return NULL;
    }
    atomic_init(&c->refcount, 1);
    c->trace_id_high = parts->trace_id_high;
    c->trace_id_low = parts->trace_id_low;
    c->span_id = parts->span_id;
    c->parent_id = parts->parent_id;
    c->flags = parts->flags & (TW__FLAGS_WIRE | TW__FLAG_DEFERRED | TW__FLAG_RANDOM);
    c->baggage = tw__baggage_ref(parts->baggage);
    return c;
}

tw_span_context *tw_span_context_new(uint64_t trace_id_high, uint64_t trace_id_low,
                                     uint64_t span_id, uint64_t parent_id, unsigned int flags,
                                     tw_error **err)
{
    if (trace_id_high == 0 && trace_id_low == 0) {
        tw__set_error(err, TW_E_INVALID_ARG, "span context: trace id is zero");
        return NULL;
    }
    if (span_id == 0) {
        tw__set_error(err, TW_E_INVALID_ARG, "span context: span id is zero");
        return NULL;
    }
    tw_span_context *c = malloc(sizeof(*c));
    if (!c) {
        tw__set_error(err, TW_E_NOMEM, "span context: out of memory");
        return NULL;
    }
    atomic_init(&c->refcount, 1);
    c->trace_id_high = trace_id_high;
    c->trace_id_low = trace_id_low;
    c->span_id = span_id;
    c->parent_id = parent_id;
    c->flags = flags & TW__FLAGS_WIRE;
    c->baggage = NULL;
    c->extra = NULL;
    return c;
}

tw_span_context *tw_span_context_ref(const tw_span_context *ctx)
{
    if (!ctx || !tw__context_is_usable(ctx, "tw_span_context_ref"))
        return NULL;
    tw_span_context *c = (tw_span_context *)ctx;
    if (atomic_load_explicit(&c->refcount, memory_order_relaxed) != 0) {
        atomic_fetch_add_explicit(&c->refcount, 1, memory_order_relaxed);
        return c;
    }
    /* Embedded in a span: copy, so the reference outlives the span. */
    tw_span_context *copy = malloc(sizeof(*copy));
    if (!copy) {
        tw__log_msg(TW_LOG_ERROR, "tw_span_context_ref: out of memory");
        return NULL;
    }
    *copy = *ctx;
    atomic_init(&copy->refcount, 1);
    copy->flags &= ~TW__FLAG_IN_SPAN;
    copy->baggage = tw__baggage_ref(ctx->baggage);
    copy->extra = tw__ctx_extra_ref(ctx->extra);
    return copy;
}

void tw_span_context_unref(tw_span_context *ctx)
{
    if (!ctx)
        return;
    unsigned int rc = atomic_load_explicit(&ctx->refcount, memory_order_relaxed);
    if (rc == 0) {
        tw__log_msg(TW_LOG_ERROR,
                    "tw_span_context_unref: context is borrowed from a span, not owned");
        return;
    }
    if (atomic_fetch_sub_explicit(&ctx->refcount, 1, memory_order_acq_rel) == 1) {
        tw__baggage_unref(ctx->baggage);
        tw__ctx_extra_unref(ctx->extra);
        free(ctx);
    }
}

uint64_t tw_span_context_trace_id_high(const tw_span_context *ctx)
{
    return ctx ? ctx->trace_id_high : 0;
}

uint64_t tw_span_context_trace_id_low(const tw_span_context *ctx)
{
    return ctx ? ctx->trace_id_low : 0;
}

uint64_t tw_span_context_span_id(const tw_span_context *ctx)
{
    return ctx ? ctx->span_id : 0;
}

uint64_t tw_span_context_parent_id(const tw_span_context *ctx)
{
    return ctx ? ctx->parent_id : 0;
}

unsigned int tw_span_context_flags(const tw_span_context *ctx)
{
    return ctx ? ctx->flags & TW__FLAGS_WIRE : 0;
}

bool tw_span_context_is_valid(const tw_span_context *ctx)
{
    return ctx && tw__context_has_ids(ctx);
}

bool tw_span_context_is_sampling_deferred(const tw_span_context *ctx)
{
    return ctx && (ctx->flags & TW__FLAG_DEFERRED);
}

const char *tw_span_context_debug_id(const tw_span_context *ctx)
{
    return ctx && ctx->extra ? ctx->extra->debug_id : NULL;
}

const char *tw_span_context_tracestate(const tw_span_context *ctx)
{
    return ctx && ctx->extra ? ctx->extra->tracestate : NULL;
}

bool tw_span_context_is_sampled(const tw_span_context *ctx)
{
    return ctx && (ctx->flags & TW_FLAG_SAMPLED);
}

bool tw_span_context_is_debug(const tw_span_context *ctx)
{
    return ctx && (ctx->flags & TW_FLAG_DEBUG);
}

bool tw_span_context_is_trace_id_random(const tw_span_context *ctx)
{
    return ctx && (ctx->flags & TW__FLAG_RANDOM);
}

static void hex_u64(char *out, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--, v >>= 4)
        out[i] = hex[v & 0xf];
}

char *tw_span_context_trace_id_hex(const tw_span_context *ctx, char *buf, size_t size)
{
    TW_CHECK_ARG(ctx && buf && size >= 33, NULL);
    size_t pos = 0;
    if (ctx->trace_id_high) {
        hex_u64(buf, ctx->trace_id_high);
        pos = 16;
    }
    hex_u64(buf + pos, ctx->trace_id_low);
    buf[pos + 16] = '\0';
    return buf;
}

char *tw_span_context_trace_id_hex32(const tw_span_context *ctx, char *buf, size_t size)
{
    TW_CHECK_ARG(ctx && buf && size >= TW_TRACE_ID_HEX_SIZE, NULL);
    hex_u64(buf, ctx->trace_id_high);
    hex_u64(buf + 16, ctx->trace_id_low);
    buf[32] = '\0';
    return buf;
}

char *tw_span_context_span_id_hex(const tw_span_context *ctx, char *buf, size_t size)
{
    TW_CHECK_ARG(ctx && buf && size >= TW_SPAN_ID_HEX_SIZE, NULL);
    hex_u64(buf, ctx->span_id);
    buf[16] = '\0';
    return buf;
}

char *tw_span_context_traceparent(const tw_span_context *ctx, char *buf, size_t size)
{
    if (!buf || size < TW_TRACEPARENT_SIZE) {
        tw__log_msg(TW_LOG_ERROR,
                    "tw_span_context_traceparent: invalid argument: buffer of %zu "
                    "bytes (TW_TRACEPARENT_SIZE needed)",
                    buf ? size : (size_t)0);
        return NULL;
    }
    if (!ctx || !tw__context_has_ids(ctx)) {
        buf[0] = '\0'; /* no context: an empty field in the log line */
        return NULL;
    }
    tw__w3c_traceparent(ctx, buf);
    return buf;
}

const char *tw_span_context_baggage_get(const tw_span_context *ctx, const char *key)
{
    if (!ctx)
        return NULL;
    const char *v = tw__baggage_get(ctx->baggage, key);
    if (v)
        tw__context_lend_baggage(ctx);
    return v;
}

size_t tw_span_context_baggage_count(const tw_span_context *ctx)
{
    return ctx && ctx->baggage ? ctx->baggage->n : 0;
}

bool tw_span_context_baggage_item(const tw_span_context *ctx, size_t index, const char **key,
                                  const char **value)
{
    if (!ctx || !ctx->baggage || index >= ctx->baggage->n)
        return false;
    tw__context_lend_baggage(ctx);
    if (key)
        *key = ctx->baggage->items[index].key;
    if (value)
        *value = ctx->baggage->items[index].value;
    return true;
}

tw_span_context *tw_span_context_with_baggage(const tw_span_context *ctx, const char *key,
                                              const char *value)
{
    TW_CHECK_ARG(ctx && key && *key, NULL);
    if (!tw__context_is_usable(ctx, "tw_span_context_with_baggage"))
        return NULL;
    const char *why = tw__baggage_refusal(ctx->baggage, key, value);
    if (why) {
        tw__log_msg(TW_LOG_WARN, "tw_span_context_with_baggage: baggage item \"%.64s\" refused: %s",
                    key, why);
        return NULL;
    }
    bool is_empty = false;
    tw__baggage *nb = tw__baggage_with(ctx->baggage, key, value, &is_empty);
    if (!nb && !is_empty) {
        tw__log_msg(TW_LOG_ERROR, "tw_span_context_with_baggage: out of memory");
        return NULL;
    }
    tw_span_context *c = malloc(sizeof(*c));
    if (!c) {
        tw__baggage_unref(nb);
        tw__log_msg(TW_LOG_ERROR, "tw_span_context_with_baggage: out of memory");
        return NULL;
    }
    *c = *ctx;
    atomic_init(&c->refcount, 1);
    c->flags &= ~TW__FLAG_IN_SPAN;
    c->baggage = nb;
    c->extra = tw__ctx_extra_ref(ctx->extra);
    return c;
}
