/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/tracestate.c: the W3C tracestate list (Trace Context, "Tracestate
 * Header" and "Mutating the tracestate Field"): the grammar of a member's key and
 * value, truncation of a list to the size tracewire propagates, and
 * tw_span_context_with_tracestate(), which adds or updates a member the way a
 * vendor must: at the left of the list, never twice, at most 32 members.
 *
 * Where it sits: w3c.c parses received lists with these checks; the public call
 * builds a new context from an existing one (the core's contexts are immutable).
 * The rules are listed in docs/PROPAGATION.md ("W3C Trace Context"); keep the two in
 * step. No shared state; any thread.
 */
#include "propagation/propagation.h"

#include <stdlib.h>
#include <string.h>

/* keychar = lcalpha / DIGIT / "_" / "-" / "*" / "/" / "@"; 2 marks the characters a
 * key may also start with (lcalpha / DIGIT). */
#define K1(c) [c] = 1
#define K2(c) [c] = 2
/* clang-format off */
static const uint8_t key_char[256] = {
    K2('a'), K2('b'), K2('c'), K2('d'), K2('e'), K2('f'), K2('g'), K2('h'), K2('i'), K2('j'),
    K2('k'), K2('l'), K2('m'), K2('n'), K2('o'), K2('p'), K2('q'), K2('r'), K2('s'), K2('t'),
    K2('u'), K2('v'), K2('w'), K2('x'), K2('y'), K2('z'), K2('0'), K2('1'), K2('2'), K2('3'),
    K2('4'), K2('5'), K2('6'), K2('7'), K2('8'), K2('9'), K1('_'), K1('-'), K1('*'), K1('/'),
    K1('@'),
};
/* clang-format on */
#undef K1
#undef K2

bool tw__ts_key_is_valid(const char *k, size_t n)
{
    /* key = ( lcalpha / DIGIT ) 0*255 ( keychar ) */
    if (n == 0 || n > TW__TRACESTATE_KEY_MAX || key_char[(unsigned char)k[0]] != 2)
        return false;
    for (size_t i = 1; i < n; i++) {
        if (!key_char[(unsigned char)k[i]])
            return false;
    }
    return true;
}

bool tw__ts_value_is_valid(const char *v, size_t n)
{
    /* value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr;
     * nblk-chr = %x21-2B / %x2D-3C / %x3E-7E */
    if (n == 0 || n > TW__TRACESTATE_VALUE_MAX || v[n - 1] == ' ')
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)v[i];
        if (c < 0x20 || c > 0x7e || c == ',' || c == '=')
            return false;
    }
    return true;
}

/* The joined length of @m[0..n): members and the commas between them. */
static size_t joined_len(const tw__ts_member *m, size_t n)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += m[i].len + (i ? 1 : 0);
    return total;
}

void tw__ts_fit(tw__ts_member *m, size_t *n, size_t pinned,
                void (*dropped)(void *data, const tw__ts_member *member, const char *why),
                void *data)
{
    /* "Entries larger than 128 characters long SHOULD be removed first. Then entries
     * SHOULD be removed starting from the end of tracestate." */
    size_t total = joined_len(m, *n);
    for (int pass = 0; pass < 2 && total > TW__TRACESTATE_MAX_BYTES; pass++) {
        for (size_t i = *n; i-- > pinned && total > TW__TRACESTATE_MAX_BYTES;) {
            if (pass == 0 && m[i].len <= TW__TRACESTATE_LONG_MEMBER)
                continue;
            if (dropped)
                dropped(data, &m[i],
                        "the list exceeds " TW__STR(TW__TRACESTATE_MAX_BYTES) " bytes");
            total -= m[i].len + (*n > 1 ? 1 : 0);
            memmove(&m[i], &m[i + 1], (*n - i - 1) * sizeof m[0]);
            (*n)--;
        }
    }
}

size_t tw__ts_join(const tw__ts_member *m, size_t n, char *out)
{
    size_t pos = 0;
    for (size_t i = 0; i < n; i++) {
        if (i)
            out[pos++] = ',';
        memcpy(out + pos, m[i].s, m[i].len);
        pos += m[i].len;
    }
    out[pos] = '\0';
    return pos;
}

/* ---- adding or updating a member ---------------------------------------------------------- */

static void log_dropped(void *data, const tw__ts_member *member, const char *why)
{
    (void)data;
    char shown[TW__EXCERPT_SIZE];
    tw__excerpt(shown, member->s, member->key_len);
    tw__log_msg(TW_LOG_WARN, "tracestate: member \"%s\" (%zu bytes) dropped: %s", shown,
                member->len, why);
}

/* Splits a list the library holds (valid by construction: extracted, or built here)
 * into its members, leaving out @key. Returns the number of members. */
static size_t split_except(const char *list, const char *key, size_t key_len, tw__ts_member *m,
                           size_t max)
{
    size_t n = 0;
    for (const char *p = list; p && *p && n < max;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        size_t kl = eq ? (size_t)(eq - p) : len;
        if (len && !(kl == key_len && memcmp(p, key, key_len) == 0))
            m[n++] = (tw__ts_member){p, len, kl};
        p = comma ? comma + 1 : NULL;
    }
    return n;
}

tw_span_context *tw_span_context_with_tracestate(const tw_span_context *ctx, const char *key,
                                                 const char *value, tw_error **err)
{
    if (!ctx || !key) {
        tw__set_error(err, TW_E_INVALID_ARG, "tracestate: %s is NULL", ctx ? "the key" : "ctx");
        return NULL;
    }
    char shown[TW__EXCERPT_SIZE];
    size_t kl = strlen(key), vl = value ? strlen(value) : 0;
    if (!tw__context_has_ids(ctx)) {
        tw__set_error(err, TW_E_INVALID_ARG,
                      "tracestate: the context has no trace id (an extracted hint): start a "
                      "span from it and use the span's context");
        return NULL;
    }
    if (!tw__ts_key_is_valid(key, kl)) {
        tw__excerpt(shown, key, kl);
        tw__set_error(err, TW_E_INVALID_ARG,
                      "tracestate: key \"%s\" is not 1-256 characters of a-z 0-9 _ - * / @ "
                      "starting with a-z or 0-9",
                      shown);
        return NULL;
    }
    if (value && !tw__ts_value_is_valid(value, vl)) {
        tw__excerpt(shown, value, vl);
        tw__set_error(err, TW_E_INVALID_ARG,
                      "tracestate: value \"%s\" is not 1-256 printable ASCII characters "
                      "other than ',' and '=' ending in a non-space",
                      shown);
        return NULL;
    }
    if (value && kl + 1 + vl > TW__TRACESTATE_MAX_BYTES) {
        tw__excerpt(shown, key, kl);
        tw__set_error(err, TW_E_LIMIT,
                      "tracestate: member \"%s\" has %zu bytes, more than the " TW__STR(
                          TW__TRACESTATE_MAX_BYTES) " bytes propagated",
                      shown, kl + 1 + vl);
        return NULL;
    }

    /* The new member, then the others in their order ("Modified keys MUST be moved to
     * the beginning (left) of the list"), at most 32 ("the right-most list-member
     * should be removed"), then the size limit, never dropping the new member. */
    char member[TW__TRACESTATE_MAX_BYTES + 1];
    tw__ts_member m[TW__TRACESTATE_MAX_MEMBERS + 1];
    size_t n = 0;
    if (value) {
        memcpy(member, key, kl);
        member[kl] = '=';
        memcpy(member + kl + 1, value, vl);
        m[n++] = (tw__ts_member){member, kl + 1 + vl, kl};
    }
    n += split_except(ctx->extra ? ctx->extra->tracestate : NULL, key, kl, m + n,
                      TW__TRACESTATE_MAX_MEMBERS + 1 - n);
    while (n > TW__TRACESTATE_MAX_MEMBERS) {
        log_dropped(NULL, &m[n - 1], "more than " TW__STR(TW__TRACESTATE_MAX_MEMBERS) " members");
        n--;
    }
    tw__ts_fit(m, &n, value ? 1 : 0, log_dropped, NULL);
    char list[TW__TRACESTATE_MAX_BYTES + 1];
    tw__ts_join(m, n, list);

    tw_span_context *c = malloc(sizeof(*c));
    const char *debug_id = ctx->extra ? ctx->extra->debug_id : NULL;
    tw__ctx_extra *extra = n || debug_id ? tw__ctx_extra_new(n ? list : NULL, debug_id) : NULL;
    if (!c || ((n || debug_id) && !extra)) {
        free(c);
        tw__ctx_extra_unref(extra);
        tw__set_error(err, TW_E_NOMEM, "tracestate: out of memory");
        return NULL;
    }
    *c = *ctx;
    atomic_init(&c->refcount, 1);
    c->baggage = tw__baggage_ref(ctx->baggage);
    c->extra = extra;
    return c;
}
