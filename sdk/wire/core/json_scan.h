/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_scan.h: a strict, allocation-light JSON scanner for the fast
 * decode paths (first user: the Dapper log's fast decoder, wire/
 * dapper_log_fast.c). It turns one JSON text into a flat array of tokens in
 * one pass; a decoder then walks the tokens instead of a Jansson tree, which
 * costs a hashtable per object and a value per member (the reason Jansson
 * reads a 900-byte Dapper line at about 70 MB/s).
 *
 * Contract: tw__json_scan_parse() succeeds only on a text that Jansson's
 * json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL) reads with
 * exactly the same values (RFC 8259 plus Jansson's rules: UTF-8 validated
 * as in utf.c, \u0000 allowed in strings but not in keys, duplicate keys
 * rejected, integers as strtoll reads them, reals as strtod reads them,
 * an object or array at the top). Anything else, and anything it does not
 * handle the same way (deeper than max_depth, a locale whose
 * decimal point is not '.'), makes it fail: the caller then falls back to
 * Jansson, which gives the error message. The scanner never explains a
 * failure. Objects may have any number of members: the duplicate check is
 * linear per member up to 16 members and hashed beyond.
 *
 * Tokens: a value is one token; an object's token is followed by its
 * members as (key string token, value tokens) pairs, an array's by its
 * elements. `end` is the index just past a value's last token, so a walker
 * skips any subtree in O(1). String tokens point into the scanner's scratch
 * buffer: unescaped, NUL-terminated, `len` bytes (which may hold U+0000).
 *
 * Memory: the scanner keeps inline storage for a typical line and grows on
 * the heap beyond it; tw__json_scan_free() releases that. Pointers in
 * tokens are valid until the next parse or free. Locking: none; one thread
 * at a time per scanner.
 */
#ifndef TW_WIRE_JSON_SCAN_H
#define TW_WIRE_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Values nested at most this deep by default (what the Dapper log's fast
 * path reads; the top value is level 1, scalars count too); a scanner may
 * allow up to TW__JSON_SCAN_DEEPEST (max_depth), Jansson's own limit. */
#define TW__JSON_SCAN_MAX_DEPTH 64
#define TW__JSON_SCAN_DEEPEST 2048

typedef enum tw__jtype {
    TW__J_OBJECT = 1,
    TW__J_ARRAY,
    TW__J_STRING,
    TW__J_INTEGER, /* no '.', 'e' or 'E': Jansson's json_integer */
    TW__J_REAL,
    TW__J_TRUE,
    TW__J_FALSE,
    TW__J_NULL
} tw__jtype;

typedef struct tw__jtok {
    uint8_t type;    /* tw__jtype */
    uint8_t has_nul; /* a string holding U+0000 */
    uint32_t n;      /* members of an object, elements of an array (internal for strings) */
    uint32_t end;    /* index of the first token after this value */
    uint32_t len;    /* bytes of a string (texts are under 4 GiB: see parse) */
    union {
        const char *str; /* NUL-terminated, in the scratch buffer */
        int64_t i;
        double d;
    } v;
} tw__jtok;

typedef struct tw__json_scan {
    tw__jtok *tok; /* tok_inline or heap */
    size_t n_tok, cap_tok;
    size_t max_depth; /* TW__JSON_SCAN_MAX_DEPTH after init; at most TW__JSON_SCAN_DEEPEST */
    char *scratch;    /* scratch_inline or heap: unescaped strings */
    size_t cap_scratch;
    tw__jtok tok_inline[256];
    char scratch_inline[2048];
} tw__json_scan;

void tw__json_scan_init(tw__json_scan *s);
/* Frees heap storage; the scanner can be parsed with again after init. */
void tw__json_scan_free(tw__json_scan *s);

/* Scans @len bytes at @text (no NUL bytes: the caller checks). True when the
 * text is valid as described above; the tokens start at s->tok[0]. False
 * otherwise, or when memory runs out. */
bool tw__json_scan_parse(tw__json_scan *s, const char *text, size_t len);

/* The same for the value that starts @text: true when the first @len
 * bytes begin with an object or array that tw__json_scan_parse would
 * accept alone (the same tokens), *used then its length (up to its closing
 * bracket; what follows is not looked at). For readers that cut records
 * out of a stream and scan them in one pass. */
bool tw__json_scan_parse_prefix(tw__json_scan *s, const char *text, size_t len, size_t *used);

/* A key to look for, with its length: TW__JKEY("name"). */
typedef struct tw__json_key {
    const char *name;
    size_t len;
} tw__json_key;
#define TW__JKEY(lit)                                                                              \
    {                                                                                              \
        (lit), sizeof(lit) - 1                                                                     \
    }

/* One pass over the object at token @obj: out[k] is the value token of
 * keys[k], or 0 when absent (token 0 is the top-level value, never a
 * member). False (all 0) when @obj is not an object. */
bool tw__json_scan_pick(const tw__json_scan *s, size_t obj, const tw__json_key *keys, size_t n,
                        size_t *out);

#endif /* TW_WIRE_JSON_SCAN_H */
