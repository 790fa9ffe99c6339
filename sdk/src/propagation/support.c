/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/support.c: what the codecs share: percent coding (hex is
 * wire/core/hex.c's), the stack-first scratch buffer, safe excerpts of untrusted
 * input for messages, and the scan's bookkeeping (slots, record lists,
 * baggage limits, warnings, the final baggage object).
 *
 * Everything here works on one extract or inject call's own memory; no
 * shared state, no locks. The limits enforced here are listed in
 * docs/PROPAGATION.md ("Limits", "Baggage").
 */
#include "propagation/propagation.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- scratch buffer ----------------------------------------------------------------------- */

void tw__sbuf_init(tw__sbuf *b, char *stack, size_t size)
{
    b->data = stack;
    b->stack = stack;
    b->cap = size;
    b->len = 0;
    b->has_failed = false;
}

void tw__sbuf_free(tw__sbuf *b)
{
    if (b->data != b->stack)
        free(b->data);
    b->data = b->stack;
    b->len = 0;
}

/* Makes room for @n more bytes plus a NUL. Doubling keeps appends amortised
 * O(1); the size comes from outside, so malloc, not g_malloc (which aborts on failure). */
static bool reserve(tw__sbuf *b, size_t n)
{
    if (b->has_failed)
        return false;
    if (n < b->cap && b->len < b->cap - n) /* len + n + 1 <= cap without overflow */
        return true;
    if (n >= UINT32_MAX || b->len >= UINT32_MAX - n) {
        b->has_failed = true; /* offsets are 32-bit */
        return false;
    }
    size_t want = b->len + n + 1;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < want)
        cap *= 2;
    char *grown = b->data == b->stack ? malloc(cap) : realloc(b->data, cap);
    if (!grown) {
        b->has_failed = true;
        return false;
    }
    if (b->data == b->stack && b->len)
        memcpy(grown, b->stack, b->len);
    b->data = grown;
    b->cap = cap;
    return true;
}

size_t tw__sbuf_append(tw__sbuf *b, const void *src, size_t n)
{
    if (!reserve(b, n))
        return SIZE_MAX;
    size_t at = b->len;
    if (n)
        memcpy(b->data + at, src, n);
    b->len += n;
    return at;
}

bool tw__sbuf_append_pct(tw__sbuf *b, const char *src, size_t n, const uint8_t keep[256])
{
    size_t extra = 0;
    for (size_t i = 0; i < n; i++)
        extra += keep[(unsigned char)src[i]] ? 0 : 2;
    if (!reserve(b, n + extra))
        return false;
    char *out = b->data + b->len;
    static const char upper[16] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)src[i];
        if (keep[c]) {
            *out++ = (char)c;
        } else {
            *out++ = '%';
            *out++ = upper[c >> 4];
            *out++ = upper[c & 0xf];
        }
    }
    b->len += n + extra;
    return true;
}

const char *tw__sbuf_cstr(tw__sbuf *b)
{
    if (!reserve(b, 0))
        return NULL;
    b->data[b->len] = '\0';
    return b->data;
}

/* ---- text helpers ------------------------------------------------------------------------- */

const char *tw__trim_ows(const char *s, size_t *n)
{
    size_t len = *n;
    while (len && tw__is_ows(*s)) {
        s++;
        len--;
    }
    while (len && tw__is_ows(s[len - 1]))
        len--;
    *n = len;
    return s;
}

bool tw__equals_lower(const char *s, const char *lower, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + ('a' - 'A'));
        if (c != (unsigned char)lower[i])
            return false;
    }
    return true;
}

/* tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|"
 *       / "~" / DIGIT / ALPHA (RFC 7230 3.2.6) */
#define T1(c) [c] = 1
const uint8_t tw__is_tchar[256] = {
    T1('!'), T1('#'), T1('$'), T1('%'), T1('&'), T1('\''), T1('*'), T1('+'), T1('-'), T1('.'),
    T1('^'), T1('_'), T1('`'), T1('|'), T1('~'), T1('0'),  T1('1'), T1('2'), T1('3'), T1('4'),
    T1('5'), T1('6'), T1('7'), T1('8'), T1('9'), T1('a'),  T1('b'), T1('c'), T1('d'), T1('e'),
    T1('f'), T1('g'), T1('h'), T1('i'), T1('j'), T1('k'),  T1('l'), T1('m'), T1('n'), T1('o'),
    T1('p'), T1('q'), T1('r'), T1('s'), T1('t'), T1('u'),  T1('v'), T1('w'), T1('x'), T1('y'),
    T1('z'), T1('A'), T1('B'), T1('C'), T1('D'), T1('E'),  T1('F'), T1('G'), T1('H'), T1('I'),
    T1('J'), T1('K'), T1('L'), T1('M'), T1('N'), T1('O'),  T1('P'), T1('Q'), T1('R'), T1('S'),
    T1('T'), T1('U'), T1('V'), T1('W'), T1('X'), T1('Y'),  T1('Z'),
};
#undef T1

bool tw__is_token(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!tw__is_tchar[(unsigned char)s[i]])
            return false;
    }
    return true;
}

size_t tw__pct_decode(const char *src, size_t n, char *dst, bool plus_is_space)
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        char c = src[i];
        if (c == '%') {
            if (n - i < 3)
                return SIZE_MAX;
            int hi = tw__hex_value[(unsigned char)src[i + 1]];
            int lo = tw__hex_value[(unsigned char)src[i + 2]];
            if (hi < 0 || lo < 0)
                return SIZE_MAX;
            c = (char)(((hi & 0xf) << 4) | (lo & 0xf));
            if (c == '\0')
                return SIZE_MAX;
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        dst[out++] = c;
    }
    dst[out] = '\0';
    return out;
}

void tw__excerpt(char out[TW__EXCERPT_SIZE], const char *s, size_t n)
{
    /* 48 source bytes, each at most 4 output bytes, plus "..." and NUL. */
    size_t shown = n > 48 ? 48 : n, pos = 0;
    for (size_t i = 0; i < shown; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            out[pos++] = (char)c;
        } else {
            out[pos++] = '\\';
            out[pos++] = 'x';
            out[pos++] = tw__hex_digits[c >> 4];
            out[pos++] = tw__hex_digits[c & 0xf];
        }
    }
    if (shown < n) {
        memcpy(out + pos, "...", 3);
        pos += 3;
    }
    out[pos] = '\0';
}

/* ---- scan --------------------------------------------------------------------------------- */

void tw__scan_init(tw__scan *scan, tw_format format, tw_extract_warning_fn warn, void *warn_data,
                   char *stack, size_t stack_size)
{
    scan->format = format;
    tw__sbuf_init(&scan->buf, stack, stack_size);
    memset(scan->slots, 0, sizeof scan->slots);
    memset(scan->lists, 0, sizeof scan->lists);
    scan->warn = warn;
    scan->warn_data = warn_data;
    scan->n_warnings = 0;
    scan->failed = TW_OK;
}

void tw__scan_free(tw__scan *scan)
{
    tw__sbuf_free(&scan->buf);
}

static void deliver(tw__scan *scan, const void *cause, const char *message)
{
    if (scan->warn)
        scan->warn(message, scan->warn_data);
    /* Keyed by call site: a caller sending bad headers on every request
     * costs the default logger one line a minute per kind of problem. */
    tw__log_cause(TW_LOG_WARN, cause, message);
}

void tw__scan_warn(tw__scan *scan, const char *fmt, ...)
{
    scan->n_warnings++;
    if (scan->n_warnings > TW__WARNINGS_SHOWN || (!scan->warn && !tw__log_enabled(TW_LOG_WARN)))
        return;
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    deliver(scan, fmt, message);
}

static const char summary_cause; /* its address names the summary line's cause */

void tw__scan_warn_summary(tw__scan *scan)
{
    if (scan->n_warnings <= TW__WARNINGS_SHOWN || (!scan->warn && !tw__log_enabled(TW_LOG_WARN)))
        return;
    char message[128];
    snprintf(message, sizeof message, "extract: %zu more baggage/tracestate problems not shown",
             scan->n_warnings - TW__WARNINGS_SHOWN);
    deliver(scan, &summary_cause, message);
}

static void set_failed(tw__scan *scan)
{
    scan->failed = TW_E_NOMEM;
}

void tw__scan_keep_first(tw__scan *scan, tw__slot *slot, const tw__header_spec *spec,
                         const char *value, size_t value_len)
{
    slot->count++;
    if (slot->count > 1)
        return; /* the first value wins */
    value = tw__trim_ows(value, &value_len);
    slot->len = value_len > UINT32_MAX ? UINT32_MAX : (uint32_t)value_len;
    if (value_len > spec->max_len) {
        slot->is_overlong = true;
        return;
    }
    size_t at = tw__sbuf_append(&scan->buf, value, value_len);
    if (at == SIZE_MAX || tw__sbuf_append(&scan->buf, "", 1) == SIZE_MAX) {
        set_failed(scan);
        return;
    }
    slot->offset = (uint32_t)at;
    slot->is_present = true;
}

bool tw__scan_push(tw__scan *scan, tw__source list, const char *key, size_t key_len,
                   const char *value, size_t value_len)
{
    tw__list *l = &scan->lists[list];
    tw__record rec = {0, (uint32_t)key_len, (uint32_t)value_len};
    size_t at = tw__sbuf_append(&scan->buf, &rec, sizeof rec);
    if (at == SIZE_MAX || tw__sbuf_append(&scan->buf, key, key_len) == SIZE_MAX ||
        tw__sbuf_append(&scan->buf, "", 1) == SIZE_MAX ||
        tw__sbuf_append(&scan->buf, value, value_len) == SIZE_MAX ||
        tw__sbuf_append(&scan->buf, "", 1) == SIZE_MAX) {
        set_failed(scan);
        return false;
    }
    uint32_t pos = (uint32_t)at + 1;
    if (l->tail) {
        tw__record prev;
        memcpy(&prev, scan->buf.data + l->tail - 1, sizeof prev);
        prev.next = pos;
        memcpy(scan->buf.data + l->tail - 1, &prev, sizeof prev);
    } else {
        l->head = pos;
    }
    l->tail = pos;
    l->n_items++;
    l->n_bytes += key_len + value_len;
    return true;
}

uint32_t tw__scan_record(const tw__scan *scan, uint32_t pos, const char **key, size_t *key_len,
                         const char **value, size_t *value_len)
{
    tw__record rec;
    const char *at = scan->buf.data + pos - 1;
    memcpy(&rec, at, sizeof rec);
    *key = at + sizeof rec;
    *key_len = rec.key_len;
    *value = *key + rec.key_len + 1;
    *value_len = rec.value_len;
    return rec.next;
}

/* Whether @list already has @key. Lists hold at most TW_BAGGAGE_MAX_ITEMS
 * records, so a linear search (at most 180 compares per item) is cheaper
 * than building a hash table for every extract. */
static bool list_has_key(const tw__scan *scan, tw__source list, const char *key, size_t key_len)
{
    for (uint32_t pos = scan->lists[list].head; pos;) {
        const char *k, *v;
        size_t kl, vl;
        pos = tw__scan_record(scan, pos, &k, &kl, &v, &vl);
        if (kl == key_len && memcmp(k, key, key_len) == 0)
            return true;
    }
    return false;
}

void tw__scan_add_baggage(tw__scan *scan, tw__source source, const char *what, const char *key,
                          size_t key_len, const char *value, size_t value_len)
{
    char shown[TW__EXCERPT_SIZE];
    const tw__list *l = &scan->lists[source];
    if (key_len == 0) {
        tw__scan_warn(scan, "%s: baggage item with an empty key dropped", what);
        return;
    }
    if (list_has_key(scan, source, key, key_len)) {
        tw__excerpt(shown, key, key_len);
        tw__scan_warn(scan, "%s: baggage key \"%s\" repeated; the first value is kept", what,
                      shown);
        return;
    }
    const char *why = NULL;
    if (key_len + value_len > TW_BAGGAGE_MAX_ITEM_BYTES)
        why = "key and value exceed " TW__STR(TW_BAGGAGE_MAX_ITEM_BYTES) " bytes";
    else if (l->n_items >= TW_BAGGAGE_MAX_ITEMS)
        why = "more than " TW__STR(TW_BAGGAGE_MAX_ITEMS) " items";
    else if (l->n_bytes + key_len + value_len > TW_BAGGAGE_MAX_TOTAL_BYTES)
        why = "baggage exceeds " TW__STR(TW_BAGGAGE_MAX_TOTAL_BYTES) " bytes";
    if (why) {
        tw__excerpt(shown, key, key_len);
        tw__scan_warn(scan, "%s: baggage item \"%s\" dropped: %s", what, shown, why);
        return;
    }
    tw__scan_push(scan, source, key, key_len, value, value_len);
}

tw__baggage *tw__scan_build_baggage(tw__scan *scan, const tw__source *sources, size_t n_sources,
                                    bool *is_empty)
{
    /* Pick the items (positions of their records), first value of a key
     * winning across sources, within the global limits. */
    uint32_t picked[TW_BAGGAGE_MAX_ITEMS];
    size_t n = 0, bytes = 0;
    for (size_t s = 0; s < n_sources; s++) {
        for (uint32_t pos = scan->lists[sources[s]].head; pos;) {
            const char *k, *v;
            size_t kl, vl;
            uint32_t here = pos;
            pos = tw__scan_record(scan, pos, &k, &kl, &v, &vl);
            bool is_dup = false;
            for (size_t i = 0; i < n && !is_dup; i++) {
                const char *pk, *pv;
                size_t pkl, pvl;
                tw__scan_record(scan, picked[i], &pk, &pkl, &pv, &pvl);
                is_dup = pkl == kl && memcmp(pk, k, kl) == 0;
            }
            if (is_dup)
                continue; /* the same item in another format: an earlier codec wins */
            if (n >= TW_BAGGAGE_MAX_ITEMS || bytes + kl + vl > TW_BAGGAGE_MAX_TOTAL_BYTES) {
                char shown[TW__EXCERPT_SIZE];
                tw__excerpt(shown, k, kl);
                tw__scan_warn(
                    scan, "baggage item \"%s\" dropped: the merged baggage exceeds %s", shown,
                    n >= TW_BAGGAGE_MAX_ITEMS ? TW__STR(TW_BAGGAGE_MAX_ITEMS) " items"
                                              : TW__STR(TW_BAGGAGE_MAX_TOTAL_BYTES) " bytes");
                continue;
            }
            picked[n++] = here;
            bytes += kl + vl;
        }
    }
    *is_empty = n == 0;
    if (n == 0)
        return NULL;
    /* One allocation, laid out as context.c's tw__baggage_with does. */
    size_t head = sizeof(tw__baggage) + n * sizeof(((tw__baggage *)0)->items[0]);
    tw__baggage *b = malloc(head + bytes + 2 * n);
    if (!b)
        return NULL;
    atomic_init(&b->refcount, 1);
    b->n = n;
    b->n_bytes = bytes;
    char *strings = (char *)b + head;
    for (size_t i = 0; i < n; i++) {
        const char *k, *v;
        size_t kl, vl;
        tw__scan_record(scan, picked[i], &k, &kl, &v, &vl);
        memcpy(strings, k, kl + 1);
        b->items[i].key = strings;
        strings += kl + 1;
        memcpy(strings, v, vl + 1);
        b->items[i].value = strings;
        strings += vl + 1;
    }
    return b;
}

/* ---- extracted ---------------------------------------------------------------------------- */

void tw__extracted_malformed(tw__extracted *out, const char *header, const tw__scan *scan,
                             const tw__slot *slot, const char *fmt, ...)
{
    out->found = TW__FOUND_MALFORMED;
    out->header = header;
    out->value = slot ? tw__slot_value(scan, slot) : NULL;
    out->value_len = out->value ? slot->len : 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->reason, sizeof out->reason, fmt, ap);
    va_end(ap);
}
