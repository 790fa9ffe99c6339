/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v2_json_direct.c: the direct reader of Zipkin v2 JSON
 * span objects, the first one the decoder (zipkin_v2_json_decode.c) tries
 * on each record. It reads a span object of the common shape
 * (zipkin_v2_json_int.h) straight from the read buffer with
 * wire/core/json_direct.h: each key is matched as a literal after a switch
 * on its first byte, in any order (writers other than Zipkin order members
 * differently), integers are read in place and plain strings handed out
 * where they stand. The token scanner (json_scan.c) first wrote every
 * value into tokens and unescaped every string into its scratch, and the
 * decoder then looked each member up again: about 11,000 instructions for
 * a 550-byte span, twice this reader's.
 *
 * Contract: it takes a text only when it is one JSON object that Jansson
 * reads (json_direct.h's rules for strings and numbers, no duplicate key
 * at any level, blanks only where JSON allows them), so that its end is the
 * one the record splitter finds, and only of the shape it knows; anything
 * else (an unknown member, a value of another type, more tags or
 * annotations than it keeps, a \u0000, a real number) is declined with
 * nothing kept, and the decoder reads the record the general way, which
 * also gives every warning and error message. tests/unit/wire/
 * test_zipkin_v2_direct.c and tests/fuzz/fuzz_zipkin_v2_json.c hold the two
 * ways to the same spans, rejects and messages.
 *
 * Memory: none of its own (the caller's scratch for escaped strings, the
 * caller's endpoint memo).
 * Locking: none.
 */
#include "wire/zipkin/zipkin_v2_json_int.h"

#include <string.h>

#include "wire/core/json_direct.h"

#define LIT(c, lit) TW__JD_LIT((c), lit)

static inline bool is_blank(char b)
{
    return b == ' ' || b == '\n' || b == '\r' || b == '\t';
}

/* Consumes @b, after blanks: compact JSON has none, so the byte is
 * tested first and blanks are skipped only when it is not there. */
static inline __attribute__((always_inline)) bool next_is(tw__jd *c, char b)
{
    if (c->p < c->e && *c->p == b) {
        c->p++;
        return true;
    }
    while (c->p < c->e && is_blank(*c->p))
        c->p++;
    return tw__jd_byte(c, b);
}

/* The blanks before a value. */
static inline void blanks(tw__jd *c)
{
    while (c->p < c->e && (unsigned char)*c->p <= ' ' && is_blank(*c->p))
        c->p++;
}

/* Whether the next byte is @b (no blanks skipped; not consumed). */
static inline __attribute__((always_inline)) bool at(const tw__jd *c, char b)
{
    return c->p < c->e && *c->p == b;
}

/* Consumes the two bytes @a @b when they are next (one compare: the
 * common `,"` and `:"` between tokens of compact JSON). */
static inline __attribute__((always_inline)) bool two(tw__jd *c, char a, char b)
{
    const char pair[2] = {a, b};
    uint16_t x, y;
    if (c->e - c->p < 2)
        return false;
    memcpy(&x, c->p, 2);
    memcpy(&y, pair, 2);
    if (x != y)
        return false;
    c->p += 2;
    return true;
}

/* A JSON string value (blanks before it allowed). */
static inline __attribute__((always_inline)) bool string(tw__jd *c, tw__jd_scratch *sc,
                                                         tw__z2d_str *out)
{
    return next_is(c, '"') && tw__jd_string(c, sc, &out->s, &out->len);
}

/* A string or null (out->s NULL): the string, the common case, first. */
static inline __attribute__((always_inline)) bool string_or_null(tw__jd *c, tw__jd_scratch *sc,
                                                                 tw__z2d_str *out)
{
    if (at(c, '"')) {
        c->p++;
        return tw__jd_string(c, sc, &out->s, &out->len);
    }
    blanks(c);
    if (LIT(c, "null")) {
        out->s = NULL;
        out->len = 0;
        return true;
    }
    return string(c, sc, out);
}

/* An integer or null (*has false). */
static inline __attribute__((always_inline)) bool int_or_null(tw__jd *c, bool *has, int64_t *out)
{
    *has = true;
    if (c->p < c->e && (unsigned char)(*c->p - '0') < 10)
        return tw__jd_int64(c, out);
    blanks(c);
    if (LIT(c, "null")) {
        *has = false;
        return true;
    }
    return tw__jd_int64(c, out);
}

/* true, false or null (false). */
static bool boolean_or_null(tw__jd *c, bool *out)
{
    blanks(c);
    *out = LIT(c, "true");
    return *out || LIT(c, "false") || LIT(c, "null");
}

/* The rest of a member name matched as @lit (its bytes after the first,
 * with the closing quote), then the ':' . */
#define KEY(c, lit) (LIT((c), lit "\":") || (LIT((c), lit "\"") && next_is((c), ':')))

/* Each member at most once: Jansson keeps the last of repeated ones where
 * the scanner refuses them, so a repeat is declined. */
#define ONCE(seen, bit) ((seen & (bit)) == 0 && (seen |= (bit), true))

static bool endpoint_value(tw__jd *c, tw__jd_scratch *sc, bool *has, tw__z2d_endpoint *ep);

/* Which memo set an endpoint's text at @p (MEMO_KEY bytes there) goes to:
 * a hash of its bytes 16 to 47, past `{"serviceName":"`, where the service
 * and the address are. Only a guess (texts are compared in full), and
 * cheap: a hit costs this, a comparison and the copy of the slot. */
#define MEMO_KEY 48
static inline uint64_t memo_hash(const char *p)
{
    uint64_t w[4];
    memcpy(w, p + 16, sizeof w);
    uint64_t h = (w[0] ^ (w[1] << 17 | w[1] >> 47)) * UINT64_C(0x9e3779b97f4a7c15);
    h ^= (w[2] ^ (w[3] << 31 | w[3] >> 33)) * UINT64_C(0xc2b2ae3d27d4eb4f);
    return h ^ (h >> 29);
}

/* A string the reader took of an endpoint's text at @start (@len bytes) as
 * a place in it; false when it is not there (unescaped into the scratch). */
static bool memo_str(const tw__z2d_str *s, const char *start, size_t len, tw__z2d_memo_str *out)
{
    out->is_set = s->s != NULL;
    if (!s->s)
        return true;
    if (s->s < start || s->s > start + len || s->len > len - (size_t)(s->s - start))
        return false;
    out->off = (uint8_t)(s->s - start);
    out->len = (uint8_t)s->len;
    return true;
}

static void memo_unstr(const tw__z2d_memo_str *m, const char *start, tw__z2d_str *out)
{
    out->s = m->is_set ? start + m->off : NULL;
    out->len = m->is_set ? m->len : 0;
}

/* {"serviceName":S,"ipv4":S,"ipv6":S,"port":N} in any order, or null;
 * *text its bytes, *slot the memo slot that holds them (-1: none). An
 * object whose text is one the memo holds is taken from there: equal bytes
 * read the same way, and the object ends at the same byte. */
static bool endpoint(tw__jd *c, tw__jd_scratch *sc, tw__z2d_memo *memo, bool *has,
                     tw__z2d_endpoint *ep, tw__z2d_str *text, int *slot, uint64_t *gen)
{
    blanks(c);
    const char *start = c->p;
    size_t avail = (size_t)(c->e - start);
    *slot = -1;
    uint64_t hash = 0;
    tw__z2d_memo_slot *set = NULL;
    if (memo && avail >= MEMO_KEY && *start == '{') {
        /* Keyed by bytes that may lie past a short text's end: a text and
         * its copy followed by other bytes go to two slots, no harm. */
        hash = memo_hash(start);
        size_t set_no = (size_t)hash & (TW__Z2D_MEMO_SETS - 1);
        set = &memo->slots[set_no * TW__Z2D_MEMO_WAYS];
        for (int w = 0; w < TW__Z2D_MEMO_WAYS; w++) {
            const tw__z2d_memo_slot *m = &set[w];
            if (m->gen && m->hash == hash && m->len <= avail &&
                memcmp(m->text, start, m->len) == 0) {
                *has = true;
                memo_unstr(&m->service, start, &ep->service);
                memo_unstr(&m->ipv4, start, &ep->ipv4);
                memo_unstr(&m->ipv6, start, &ep->ipv6);
                ep->has_port = m->has_port;
                ep->port = m->port;
                c->p = start + m->len;
                text->s = start;
                text->len = m->len;
                *slot = (int)(set_no * TW__Z2D_MEMO_WAYS) + w;
                *gen = m->gen;
                return true;
            }
        }
    }
    if (!endpoint_value(c, sc, has, ep))
        return false;
    text->s = start;
    text->len = (size_t)(c->p - start);
    tw__z2d_memo_slot m;
    if (set && *has && text->len <= TW__Z2D_MEMO_TEXT &&
        memo_str(&ep->service, start, text->len, &m.service) &&
        memo_str(&ep->ipv4, start, text->len, &m.ipv4) &&
        memo_str(&ep->ipv6, start, text->len, &m.ipv6)) {
        size_t set_no = (size_t)(set - memo->slots) / TW__Z2D_MEMO_WAYS;
        int w = memo->victim[set_no];
        memo->victim[set_no] = (uint8_t)((w + 1) % TW__Z2D_MEMO_WAYS);
        tw__z2d_memo_slot *to = &set[w];
        to->gen = ++memo->last_gen;
        to->hash = hash;
        to->len = text->len;
        to->service = m.service;
        to->ipv4 = m.ipv4;
        to->ipv6 = m.ipv6;
        to->has_port = ep->has_port;
        to->port = ep->port;
        memcpy(to->text, start, text->len);
        *slot = (int)(set - memo->slots) + w;
        *gen = to->gen;
    }
    return true;
}

static bool endpoint_value(tw__jd *c, tw__jd_scratch *sc, bool *has, tw__z2d_endpoint *ep)
{
    memset(ep, 0, sizeof *ep);
    if (LIT(c, "null")) {
        *has = false;
        return true;
    }
    *has = true;
    if (!tw__jd_byte(c, '{'))
        return false;
    if (next_is(c, '}'))
        return true;
    unsigned seen = 0;
    bool is_quoted = false;
    do {
        if (!(is_quoted || next_is(c, '"')) || c->p == c->e)
            return false;
        bool ok;
        switch (*c->p) {
        case 's':
            ok = KEY(c, "serviceName") && ONCE(seen, 1) && string_or_null(c, sc, &ep->service);
            break;
        case 'i':
            if (KEY(c, "ipv4")) {
                ok = ONCE(seen, 2) && string_or_null(c, sc, &ep->ipv4);
            } else {
                ok = KEY(c, "ipv6") && ONCE(seen, 4) && string_or_null(c, sc, &ep->ipv6);
            }
            break;
        case 'p':
            ok = KEY(c, "port") && ONCE(seen, 8) && int_or_null(c, &ep->has_port, &ep->port);
            break;
        default:
            ok = false;
        }
        if (!ok)
            return false;
        is_quoted = two(c, ',', '"');
    } while (is_quoted || next_is(c, ','));
    return next_is(c, '}');
}

/* [{"timestamp":N,"value":S},...] (members in either order), or null. */
static bool annotations(tw__jd *c, tw__jd_scratch *sc, tw__z2d_span *out)
{
    blanks(c);
    if (LIT(c, "null"))
        return true;
    if (!tw__jd_byte(c, '['))
        return false;
    if (next_is(c, ']'))
        return true;
    do {
        if (out->n_annotations == TW__Z2D_MAX_ANNOTATIONS || !next_is(c, '{'))
            return false;
        tw__z2d_annotation *a = &out->annotations[out->n_annotations++];
        unsigned seen = 0;
        do {
            if (!next_is(c, '"') || c->p == c->e)
                return false;
            bool ok;
            if (*c->p == 't')
                ok = KEY(c, "timestamp") && ONCE(seen, 1) && (blanks(c), true) &&
                     tw__jd_int64(c, &a->timestamp);
            else
                ok = KEY(c, "value") && ONCE(seen, 2) && string(c, sc, &a->value);
            if (!ok)
                return false;
        } while (next_is(c, ','));
        /* Both needed: the token path warns about a partial one. */
        if (seen != 3 || !next_is(c, '}'))
            return false;
    } while (next_is(c, ','));
    return next_is(c, ']');
}

/* Which two of 64 bits stand for the key @k (its length and two bytes): a
 * key whose bits are both set already is compared with the earlier ones.
 * Two bits, not one: a span's dozen keys set a quarter of the word, and
 * one bit sent a key in eight to the comparisons for nothing. */
static inline uint64_t key_bits(const tw__z2d_str *k)
{
    if (k->len == 0)
        return 1;
    uint32_t f = (uint32_t)k->len << 16 | (uint32_t)(unsigned char)k->s[0] << 8 |
                 (unsigned char)k->s[k->len - 1];
    uint64_t h = f * UINT64_C(0x9e3779b97f4a7c15); /* a 32-bit product spread them worse */
    return UINT64_C(1) << (h >> 58) | UINT64_C(1) << (h >> 52 & 63);
}

/* {"key":"value",...} of strings, or null. */
static bool tags(tw__jd *c, tw__jd_scratch *sc, tw__z2d_span *out)
{
    blanks(c);
    if (LIT(c, "null"))
        return true;
    if (!tw__jd_byte(c, '{'))
        return false;
    if (next_is(c, '}'))
        return true;
    uint64_t seen = 0;
    /* `"key":"value"` pairs, `,"` between them; blanks anywhere on the
     * slower way. */
    bool is_quoted = at(c, '"') && (c->p++, true);
    do {
        if (out->n_tags == TW__Z2D_MAX_TAGS)
            return false;
        tw__z2d_pair *t = &out->tags[out->n_tags];
        if (!(is_quoted || next_is(c, '"')) || !tw__jd_string(c, sc, &t->key.s, &t->key.len) ||
            !(two(c, ':', '"') || (next_is(c, ':') && next_is(c, '"'))) ||
            !tw__jd_string(c, sc, &t->value.s, &t->value.len))
            return false;
        uint64_t bits = key_bits(&t->key);
        if ((seen & bits) == bits) {
            for (size_t i = 0; i < out->n_tags; i++) {
                const tw__z2d_str *k = &out->tags[i].key;
                if (k->len == t->key.len && memcmp(k->s, t->key.s, k->len) == 0)
                    return false;
            }
        }
        seen |= bits;
        out->n_tags++;
        is_quoted = two(c, ',', '"');
    } while (is_quoted || next_is(c, ','));
    return next_is(c, '}');
}

enum {
    S_TRACE_ID = 1 << 0,
    S_PARENT_ID = 1 << 1,
    S_ID = 1 << 2,
    S_KIND = 1 << 3,
    S_NAME = 1 << 4,
    S_TIMESTAMP = 1 << 5,
    S_DURATION = 1 << 6,
    S_DEBUG = 1 << 7,
    S_SHARED = 1 << 8,
    S_LOCAL = 1 << 9,
    S_REMOTE = 1 << 10,
    S_ANNOTATIONS = 1 << 11,
    S_TAGS = 1 << 12
};

/* One member of the span object, c->p at the first byte of its name. */
static inline __attribute__((always_inline)) bool
member(tw__jd *c, tw__jd_scratch *sc, tw__z2d_memo *memo, tw__z2d_span *out, unsigned *seen_p)
{
    unsigned seen = *seen_p;
    bool ok;
    switch (*c->p) {
    case 't':
        if (KEY(c, "traceId"))
            ok = ONCE(seen, S_TRACE_ID) && string(c, sc, &out->trace_id);
        else if (KEY(c, "timestamp"))
            ok = ONCE(seen, S_TIMESTAMP) && int_or_null(c, &out->has_timestamp, &out->timestamp);
        else
            ok = KEY(c, "tags") && ONCE(seen, S_TAGS) && tags(c, sc, out);
        break;
    case 'p':
        ok =
            KEY(c, "parentId") && ONCE(seen, S_PARENT_ID) && string_or_null(c, sc, &out->parent_id);
        break;
    case 'i':
        ok = KEY(c, "id") && ONCE(seen, S_ID) && string(c, sc, &out->id);
        break;
    case 'k':
        ok = KEY(c, "kind") && ONCE(seen, S_KIND) && string_or_null(c, sc, &out->kind);
        break;
    case 'n':
        ok = KEY(c, "name") && ONCE(seen, S_NAME) && string_or_null(c, sc, &out->name);
        break;
    case 'd':
        if (KEY(c, "duration"))
            ok = ONCE(seen, S_DURATION) && int_or_null(c, &out->has_duration, &out->duration);
        else
            ok = KEY(c, "debug") && ONCE(seen, S_DEBUG) && boolean_or_null(c, &out->debug);
        break;
    case 's':
        ok = KEY(c, "shared") && ONCE(seen, S_SHARED) && boolean_or_null(c, &out->shared);
        break;
    case 'l':
        ok = KEY(c, "localEndpoint") && ONCE(seen, S_LOCAL) &&
             endpoint(c, sc, memo, &out->has_local, &out->local, &out->local_text, &out->local_slot,
                      &out->local_gen);
        break;
    case 'r':
        ok = KEY(c, "remoteEndpoint") && ONCE(seen, S_REMOTE) &&
             endpoint(c, sc, memo, &out->has_remote, &out->remote, &out->remote_text,
                      &out->remote_slot, &out->remote_gen);
        break;
    case 'a':
        ok = KEY(c, "annotations") && ONCE(seen, S_ANNOTATIONS) && annotations(c, sc, out);
        break;
    default:
        ok = false;
    }
    *seen_p = seen;
    return ok;
}

bool tw__zipkin_v2_direct_parse(const char *text, size_t len, tw__jd_scratch *sc,
                                tw__z2d_memo *memo, tw__z2d_span *out, size_t *used)
{
    tw__jd c = {text, text + len};
    /* Only what is read is set: the arrays stay as they are. */
    out->trace_id.s = out->id.s = out->parent_id.s = out->name.s = out->kind.s = NULL;
    out->trace_id.len = out->id.len = out->parent_id.len = out->name.len = out->kind.len = 0;
    out->has_timestamp = out->has_duration = false;
    out->debug = out->shared = false;
    out->has_local = out->has_remote = false;
    out->local_text.s = out->remote_text.s = NULL;
    out->local_text.len = out->remote_text.len = 0;
    out->local_slot = out->remote_slot = -1;
    memset(&out->local, 0, sizeof out->local);
    memset(&out->remote, 0, sizeof out->remote);
    out->n_tags = out->n_annotations = 0;
    if (!tw__jd_byte(&c, '{'))
        return false;
    unsigned seen = 0;
    bool is_quoted = at(&c, '"') && (c.p++, true);
    do {
        if (!(is_quoted || next_is(&c, '"')) || c.p == c.e || !member(&c, sc, memo, out, &seen))
            return false;
        is_quoted = two(&c, ',', '"');
    } while (is_quoted || next_is(&c, ','));
    /* No traceId or id: the token path rejects the record with its reason. */
    if (!next_is(&c, '}') || (seen & (S_TRACE_ID | S_ID)) != (S_TRACE_ID | S_ID))
        return false;
    *used = (size_t)(c.p - text);
    return true;
}
