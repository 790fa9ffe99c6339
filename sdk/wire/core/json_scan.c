/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_scan.c: the strict one-pass JSON scanner of json_scan.h. It
 * sits in front of Jansson on the bridge's hot input path (a Dapper log
 * line is scanned here; only a line the scanner refuses goes to Jansson).
 * Every rule below is Jansson 2.x's (load.c, utf.c), restated so that a
 * text accepted here is one Jansson accepts with the same values; escapes
 * and numbers are read by the code the direct decoders use too
 * (json_unescape.h, tw__jd_scan_number in json_direct.h). The differential
 * tests (tests/unit/wire/test_json_scan.c, test_dapper_fast.c) and the
 * fuzz targets fuzz_dapper_fast.c and fuzz_zipkin_v2_json.c hold it to that.
 *
 * Memory: the scanner's inline arrays, or heap arrays it grows (see
 * json_scan.h). No recursion: an explicit stack bounded by
 * the scanner's max_depth. Locking: none.
 */
#include "wire/core/json_scan.h"

#include <stdlib.h>
#include <string.h>

#include "wire/core/json_direct.h" /* tw__jd_scan_number, tw__jd_same */
#include "wire/core/json_unescape.h"
#include "wire/core/json_write.h" /* tw__json_special_mask, TW__JSON_SWAR */
#include "wire/core/utf8.h"

/* The eight-bytes-at-a-time string copy below is the scanner's speed: make
 * sure a change of includes never compiles it out silently. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(TW__JSON_SWAR)
#error "TW__JSON_SWAR (wire/core/json_write.h) is not defined"
#endif

/* Objects up to this many members are checked for a repeated key as each
 * key comes (a short linear search); larger ones once, when they close. */
#define SMALL_OBJECT 16

void tw__json_scan_init(tw__json_scan *s)
{
    s->tok = s->tok_inline;
    s->cap_tok = sizeof s->tok_inline / sizeof s->tok_inline[0];
    s->n_tok = 0;
    s->max_depth = TW__JSON_SCAN_MAX_DEPTH;
    s->scratch = s->scratch_inline;
    s->cap_scratch = sizeof s->scratch_inline;
}

void tw__json_scan_free(tw__json_scan *s)
{
    if (s->tok != s->tok_inline)
        free(s->tok);
    if (s->scratch != s->scratch_inline)
        free(s->scratch);
    tw__json_scan_init(s);
}

/* A new token at the end; its index in *idx. False when out of memory. */
static bool grow(tw__json_scan *s)
{
    size_t cap = s->cap_tok * 2;
    tw__jtok *t;
    if (s->tok == s->tok_inline) {
        t = malloc(cap * sizeof *t);
        if (t)
            memcpy(t, s->tok, s->n_tok * sizeof *t);
    } else {
        t = realloc(s->tok, cap * sizeof *t);
    }
    if (!t)
        return false;
    s->tok = t;
    s->cap_tok = cap;
    return true;
}

static inline bool push(tw__json_scan *s, tw__jtype type, size_t *idx)
{
    if (s->n_tok == s->cap_tok && !grow(s))
        return false;
    *idx = s->n_tok++;
    tw__jtok *t = &s->tok[*idx];
    t->type = (uint8_t)type;
    t->n = 0;
    t->has_nul = 0;
    t->end = (uint32_t)s->n_tok;
    t->len = 0;
    return true;
}

static inline bool is_ws(unsigned char c)
{
    return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == '\r');
}

/* Skips blanks; compact JSON has none, so the first test usually ends it. */
#define SKIP_WS(p, e)                                                                              \
    do {                                                                                           \
        while ((p) < (e) && *(p) <= ' ' && is_ws(*(p)))                                            \
            (p)++;                                                                                 \
    } while (0)

static inline bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* The string whose opening quote is at *pp, unescaped into *op with a NUL
 * after it. Jansson's rules: no raw byte below 0x20, valid UTF-8 (utf.c),
 * the eight short escapes, \uXXXX in either case with surrogates only as a
 * high-low pair. Advances *pp past the closing quote. */
static inline __attribute__((always_inline)) bool
scan_string(const unsigned char **pp, const unsigned char *e, char **op, tw__jtok *t)
{
    const unsigned char *p = *pp + 1;
    char *o = *op;
    char *start = o;
    for (;;) {
        /* The common run: printable ASCII without quote or backslash,
         * copied eight bytes at a time. Writing all eight is safe: inside
         * a string the output lags the input (its opening quote was not
         * copied), so o + 8 stays below scratch + len (see parse). */
#ifdef TW__JSON_SWAR
        bool is_at_special = false;
        while (e - p >= 8) {
            uint64_t x;
            memcpy(&x, p, 8);
            memcpy(o, &x, 8);
            uint64_t m = tw__json_special_mask(x);
            if (m) {
                size_t k = (size_t)__builtin_ctzll(m) >> 3;
                p += k;
                o += k;
                is_at_special = true; /* *p needs a look: no byte loop */
                break;
            }
            p += 8;
            o += 8;
        }
        if (!is_at_special)
#endif
            while (p < e && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\')
                *o++ = (char)*p++;
        if (p == e)
            return false;
        unsigned char c = *p;
        if (c == '"') {
            p++;
            break;
        }
        if (c < 0x20)
            return false;
        if (c >= 0x80) {
            size_t n = tw__utf8_sequence(p, (size_t)(e - p));
            if (n == 0)
                return false;
            memcpy(o, p, n);
            o += n;
            p += n;
            continue;
        }
        /* A backslash. */
        int32_t cp = tw__json_unescape(&p, e, &o);
        if (cp < 0)
            return false;
        if (cp == 0)
            t->has_nul = 1;
    }
    t->len = (uint32_t)(o - start);
    *o++ = '\0';
    *op = o;
    *pp = p;
    return true;
}

/* A number at *pp, by Jansson's grammar and values: json_direct.h's
 * reader, the one the direct decoders use. */
static inline bool scan_number(const unsigned char **pp, const unsigned char *e, tw__jtok *t)
{
    tw__jd c = {(const char *)*pp, (const char *)e};
    bool is_real;
    if (!tw__jd_scan_number(&c, &is_real, &t->v.i, &t->v.d))
        return false;
    t->type = is_real ? TW__J_REAL : TW__J_INTEGER;
    *pp = (const unsigned char *)c.p;
    return true;
}

/* Whether the key token @k repeats a key of the object @obj (its earlier
 * members are complete, so their value tokens' `end` is set). Used while an
 * object is small; a larger one is checked once, when it closes. */
static bool is_duplicate(const tw__json_scan *s, size_t obj, size_t k)
{
    const tw__jtok *key = &s->tok[k];
    for (size_t j = obj + 1; j < k; j = s->tok[j + 1].end) {
        const tw__jtok *other = &s->tok[j];
        if (other->n == key->n && memcmp(other->v.str, key->v.str, key->len) == 0)
            return true;
    }
    return false;
}

/* Whether the closed object @obj, with more than SMALL_OBJECT members, has
 * a key twice: one pass with an open-addressing table of member indexes, so
 * that a record of a million members costs a million probes, not a million
 * squared. False also when the table cannot be allocated (*is_nomem). */
static bool has_duplicate_keys(const tw__json_scan *s, size_t obj, bool *is_nomem)
{
    size_t n = s->tok[obj].n;
    size_t cap = 64;
    while (cap < n * 2)
        cap *= 2;
    uint32_t *slot = calloc(cap, sizeof *slot); /* member key index + 1; 0: empty */
    if (!slot) {
        *is_nomem = true;
        return true;
    }
    bool is_dup = false;
    for (size_t j = obj + 1; j < s->tok[obj].end && !is_dup; j = s->tok[j + 1].end) {
        const tw__jtok *key = &s->tok[j];
        uint64_t h = UINT64_C(0xcbf29ce484222325);
        for (size_t i = 0; i < key->len; i++)
            h = (h ^ (unsigned char)key->v.str[i]) * UINT64_C(0x100000001b3);
        for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1)) {
            if (slot[i] == 0) {
                slot[i] = (uint32_t)j + 1;
                break;
            }
            const tw__jtok *other = &s->tok[slot[i] - 1];
            if (other->n == key->n && memcmp(other->v.str, key->v.str, key->len) == 0) {
                is_dup = true;
                break;
            }
        }
    }
    free(slot);
    return is_dup;
}

/* A cheap fingerprint of the key token @t for the duplicate check (bytes
 * of the key only: the scratch past it holds leftovers of the eight-byte
 * copy). Kept in the key's `n`. */
static inline uint32_t key_fingerprint(const tw__jtok *t)
{
    const unsigned char *k = (const unsigned char *)t->v.str;
    return t->len ? (uint32_t)t->len << 16 | (uint32_t)k[0] << 8 | k[t->len - 1] : 0;
}

/* The parser of both entry points: @used NULL, the whole text is one value;
 * else the text starts with one, *used set to its length. */
static bool parse(tw__json_scan *s, const char *text, size_t len, size_t *used)
{
    s->n_tok = 0;
    if (len >= UINT32_MAX)
        return false; /* token indexes and string lengths are 32-bit */
    if (len + 1 > s->cap_scratch) {
        /* Unescaped strings plus one NUL each never exceed the text: each
         * string loses at least its two quotes. */
        char *b = malloc(len + 1);
        if (!b)
            return false;
        if (s->scratch != s->scratch_inline)
            free(s->scratch);
        s->scratch = b;
        s->cap_scratch = len + 1;
    }
    char *o = s->scratch;
    const unsigned char *p = (const unsigned char *)text;
    const unsigned char *e = p + len;
    /* The open containers: the innermost one's token, member count and
     * key set in locals (cur, cur_n, cur_seen), the enclosing ones' saved
     * here while it is open. cur_seen: a 64-bit set of an object's keys'
     * fingerprints (hashed), so that the linear duplicate check runs only
     * for a key whose bit is already set; arrays leave it unused. */
    uint32_t stack[TW__JSON_SCAN_DEEPEST];
    uint32_t saved_n[TW__JSON_SCAN_DEEPEST];
    uint64_t saved_seen[TW__JSON_SCAN_DEEPEST];
    size_t max_depth = s->max_depth < TW__JSON_SCAN_DEEPEST ? s->max_depth : TW__JSON_SCAN_DEEPEST;
    size_t depth = 0;
    size_t idx;
    size_t cur = 0;
    uint32_t cur_n = 0;
    uint64_t cur_seen = 0;
    bool cur_is_object = false;

    SKIP_WS(p, e);
    if (p == e || (*p != '{' && *p != '[') || max_depth == 0)
        return false; /* Jansson's default: an object or an array at the top */

value:
    /* Compact JSON has no blanks: each step below tests the byte it
     * expects first and skips blanks only when that fails. The depth was
     * checked when the container holding this value opened. */
    if (p < e && *p <= ' ')
        SKIP_WS(p, e);
    if (p == e)
        return false;
    switch (*p) {
    case '{':
    case '[': {
        bool is_object = *p == '{';
        if (!push(s, is_object ? TW__J_OBJECT : TW__J_ARRAY, &idx))
            return false;
        p++;
        SKIP_WS(p, e);
        if (p < e && *p == (is_object ? '}' : ']')) {
            p++;
            goto after_value; /* empty: n 0 and end set by push */
        }
        /* Jansson counts every value, a scalar too, against its depth:
         * the members of a container at the deepest level are too deep. */
        if (depth + 1 >= max_depth)
            return false;
        if (depth > 0) {
            saved_n[depth - 1] = cur_n;
            saved_seen[depth - 1] = cur_seen;
        }
        stack[depth++] = (uint32_t)idx;
        cur = idx;
        cur_n = 0;
        cur_seen = 0;
        cur_is_object = is_object;
        if (is_object)
            goto key;
        goto value;
    }
    case '"': {
        if (!push(s, TW__J_STRING, &idx))
            return false;
        tw__jtok *t = &s->tok[idx];
        t->v.str = o;
        if (!scan_string(&p, e, &o, t))
            return false;
        goto after_value;
    }
    case 't':
    case 'f':
    case 'n': {
        static const struct {
            const char *text;
            size_t len;
            tw__jtype type;
        } literals[] = {
            {"true", 4, TW__J_TRUE}, {"false", 5, TW__J_FALSE}, {"null", 4, TW__J_NULL}};
        size_t k = *p == 't' ? 0 : *p == 'f' ? 1 : 2;
        if ((size_t)(e - p) < literals[k].len ||
            memcmp(p, literals[k].text, literals[k].len) != 0 || !push(s, literals[k].type, &idx))
            return false;
        p += literals[k].len;
        goto after_value;
    }
    default: {
        if (*p != '-' && !is_digit(*p))
            return false;
        if (!push(s, TW__J_INTEGER, &idx) || !scan_number(&p, e, &s->tok[idx]))
            return false;
        goto after_value;
    }
    }

key : {
    if (p < e && *p <= ' ')
        SKIP_WS(p, e);
    if (p == e || *p != '"' || !push(s, TW__J_STRING, &idx))
        return false;
    tw__jtok *t = &s->tok[idx];
    t->v.str = o;
    /* Jansson refuses a NUL in a key and duplicate keys (the flag). */
    if (!scan_string(&p, e, &o, t) || t->has_nul)
        return false;
    t->n = key_fingerprint(t);
    if (cur_n < SMALL_OBJECT) {
        uint64_t bit = UINT64_C(1) << ((t->n * UINT32_C(0x9e3779b1)) >> 26);
        if ((cur_seen & bit) && is_duplicate(s, cur, idx))
            return false;
        cur_seen |= bit;
    }
    if (p < e && *p == ':') {
        p++;
        goto value;
    }
    SKIP_WS(p, e);
    if (p == e || *p != ':')
        return false;
    p++;
    goto value;
}

after_value:
    if (depth == 0) {
        if (used) {
            *used = (size_t)(p - (const unsigned char *)text);
            return true;
        }
        SKIP_WS(p, e);
        return p == e;
    }
    if (p < e && *p <= ' ')
        SKIP_WS(p, e);
    cur_n++;
    if (p == e)
        return false;
    if (*p == ',') {
        p++;
        if (cur_is_object)
            goto key;
        goto value;
    }
    if (*p != (cur_is_object ? '}' : ']'))
        return false;
    p++;
    {
        tw__jtok *closed = &s->tok[cur];
        closed->n = cur_n;
        closed->end = (uint32_t)s->n_tok;
        if (cur_is_object && cur_n > SMALL_OBJECT) {
            bool is_nomem = false;
            if (has_duplicate_keys(s, cur, &is_nomem))
                return false;
        }
    }
    depth--;
    if (depth > 0) {
        cur = stack[depth - 1];
        cur_n = saved_n[depth - 1];
        cur_seen = saved_seen[depth - 1];
        cur_is_object = s->tok[cur].type == TW__J_OBJECT;
    }
    goto after_value;
}

bool tw__json_scan_parse(tw__json_scan *s, const char *text, size_t len)
{
    return parse(s, text, len, NULL);
}

bool tw__json_scan_parse_prefix(tw__json_scan *s, const char *text, size_t len, size_t *used)
{
    return parse(s, text, len, used);
}

bool tw__json_scan_pick(const tw__json_scan *s, size_t obj, const tw__json_key *keys, size_t n,
                        size_t *out)
{
    const tw__jtok *o = &s->tok[obj];
    for (size_t k = 0; k < n; k++)
        out[k] = 0;
    if (o->type != TW__J_OBJECT)
        return false;
    /* Members usually come in the order of @keys (the writer's order), some
     * left out: the keys from the one after the last found are tried
     * first, then those before it. */
    size_t next = 0;
    for (size_t j = obj + 1; j < o->end; j = s->tok[j + 1].end) {
        const tw__jtok *key = &s->tok[j];
        size_t k = next;
        while (k < n &&
               (keys[k].len != key->len || !tw__jd_same(key->v.str, keys[k].name, key->len)))
            k++;
        if (k == n) {
            for (k = 0; k < next; k++) {
                if (keys[k].len == key->len && tw__jd_same(key->v.str, keys[k].name, key->len))
                    break;
            }
            if (k == next)
                continue; /* a member not asked for */
        }
        out[k] = j + 1;
        next = k + 1;
    }
    return true;
}
