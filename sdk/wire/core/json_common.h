/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/json_common.h: what the JSON encoders (zipkin_json.c, otlp_json.c)
 * share: hex ids, base64, the shortest round-trip text of a double, strings
 * made safe for Jansson, and compact serialization into a tw__buf.
 *
 * Every JSON byte the project writes comes from Jansson (DESIGN.md: never
 * hand-written escaping), with one measured exception: tw__json_append_text
 * below, the string writer of the bridge's direct Zipkin encoder
 * (zipkin_text.c), which is tested byte for byte against Jansson's dump.
 * The other helpers only prepare the values Jansson is given. Jansson
 * refuses strings that are not valid UTF-8, and tag values and keys come
 * from the application, so tw__json_text() replaces each invalid byte with
 * U+FFFD instead of losing the whole value.
 *
 * No state, no locks: any thread.
 */
#ifndef TW_WIRE_JSON_COMMON_H
#define TW_WIRE_JSON_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "wire/model/span_data.h"
#include "wire/jaeger/jaeger_thrift.h" /* tw__buf */

/* Lower-case hex of a 64-bit id: 16 characters and a NUL. */
void tw__hex64(uint64_t id, char out[17]);
/* Lower-case hex of a 128-bit id (high half first): 32 characters and a NUL. */
void tw__hex128(uint64_t high, uint64_t low, char out[33]);

/* Standard base64 (RFC 4648 section 4, padded) of @len bytes, NUL-terminated,
 * from malloc (free it). NULL on allocation failure. @data may be NULL when
 * @len is 0 (the result is ""). */
char *tw__base64(const uint8_t *data, size_t len);

/* Decodes base64 into @out, which must hold len / 4 * 3 + 3 bytes; *out_len
 * receives the byte count. Strict (@is_strict): RFC 4648 section 4, the
 * standard alphabet, a length that is a multiple of 4, '=' only as the last
 * one or two characters (what Go's encoding/json and our encoder write).
 * Lenient: the standard or the URL alphabet (RFC 4648 section 5), padding
 * optional but, when present, at most two '=' completing the last quantum
 * (what legacy Zipkin and OTLP writers produce). False when @text is not
 * base64 by those rules. The one base64 decoder of the project. */
bool tw__base64_decode_into(const char *text, size_t len, bool is_strict, uint8_t *out,
                            size_t *out_len);
/* The same into malloc'd memory (at least 1 byte, the caller frees it):
 * false when not base64, or on allocation failure (then *is_nomem). */
bool tw__base64_decode(const char *text, size_t len, bool is_strict, uint8_t **out, size_t *out_len,
                       bool *is_nomem);

/* The shortest decimal text that strtod() reads back as exactly @value
 * ("0.25", "3.141592653589793", "1e+21", "-0"); "NaN", "Infinity" and
 * "-Infinity" (the spellings of Java, JavaScript and proto3 JSON) for the
 * non-finite values. @size must be at least 32. Returns the length. */
size_t tw__double_text(double value, char *out, size_t size);

/* A JSON string of @len bytes of @text (which may hold NUL bytes): the
 * bytes as they are when they are valid UTF-8, else with each invalid byte
 * replaced by U+FFFD. New reference; NULL on allocation failure. */
json_t *tw__json_text(const char *text, size_t len);

/* Length of the valid UTF-8 sequence at @s (at most @len >= 1 bytes), or 0
 * when it is not one. Jansson's rules (utf.c): no overlong forms, no
 * surrogates, nothing above U+10FFFF. */
size_t tw__utf8_sequence(const unsigned char *s, size_t len);

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define TW__JSON_SWAR 1
/* Eight bytes @x (loaded little-endian): a mask whose lowest set bit is in
 * the first byte that JSON strings cannot hold as it is ('"', '\\', below
 * 0x20, above 0x7f), 0 when there is none. The usual SWAR tests; their
 * false positives only sit above a true one, so the lowest bit is exact. */
static inline uint64_t tw__json_special_mask(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101u, highs = 0x8080808080808080u;
    uint64_t quote = x ^ (ones * '"');
    uint64_t backslash = x ^ (ones * '\\');
    return (((quote - ones) & ~quote) | ((backslash - ones) & ~backslash) | (x - ones * 0x20) | x) &
           highs;
}
#endif

/* The number of leading bytes of @p (at most @n) that JSON strings hold as
 * they are: printable ASCII other than '"' and '\\'. */
static inline size_t tw__json_plain_run(const unsigned char *p, size_t n)
{
    size_t i = 0;
#ifdef TW__JSON_SWAR
    for (; n - i >= 8; i += 8) {
        uint64_t x;
        memcpy(&x, p + i, 8);
        uint64_t m = tw__json_special_mask(x);
        if (m)
            return i + ((size_t)__builtin_ctzll(m) >> 3);
    }
#endif
    while (i < n && p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\')
        i++;
    return i;
}

/* Appends @len bytes of @text as a JSON string (quotes included) exactly as
 * json_dumpb(tw__json_text(text, len), TW__JSON_FLAGS) writes it: invalid
 * bytes become U+FFFD; '"', '\\' and the controls \b \f \n \r \t get their
 * short escapes, other bytes below 0x20 \u00XX with upper-case hex; '/'
 * and non-ASCII are written as they are. The hand-written counterpart of
 * Jansson's dump for the direct encoders (zipkin_text.c); the differential
 * tests hold it to Jansson's bytes. False on allocation failure. */
bool tw__json_append_text(tw__buf *out, const char *text, size_t len);

/* json_object_set_new() for a key that may not be valid UTF-8 (repaired as
 * in tw__json_text). Steals @value, also on failure; false on allocation
 * failure or a NULL value. */
bool tw__json_set(json_t *object, const char *key, size_t key_len, json_t *value);

/* json_object_set_new() with a key known to be valid (a literal); steals
 * @value; false on failure or a NULL value. */
bool tw__json_put(json_t *object, const char *key, json_t *value);

/* json_array_append_new(); steals @value; false on failure or NULL. */
bool tw__json_push(json_t *array, json_t *value);

/* Size in bytes of the compact serialization of @json (no NUL); 0 on
 * failure. */
size_t tw__json_size(const json_t *json);

/* Replaces the contents of @out with the compact serialization of @json.
 * False (out unchanged) on allocation failure. */
bool tw__json_dump(const json_t *json, tw__buf *out);

/* The compact flags used everywhere: UTF-8 output, no spaces, insertion
 * order kept. */
#define TW__JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)

/* The value of a string tag or field, or NULL for other types. */
static inline const char *tw__tag_str(const tw__tag *t)
{
    return t && t->type == TW_VALUE_STRING ? t->v.str : NULL;
}

/* Whether a tag/field key equals @key (keys are NUL-terminated). */
bool tw__tag_key_is(const tw__tag *t, const char *key);

/*
 * Which tags win when keys repeat: the last tag with a key wins (as in
 * Zipkin's model and in a JSON object). Fills @is_winner[i] for the @n tags;
 * false on allocation failure. Linear, with a hash index, so a span from the
 * bridge with thousands of tags costs no quadratic scan. @n == 0 is valid.
 */
bool tw__last_by_key(const tw__tag *tags, size_t n, bool *is_winner);

/* ---- how the JSON encoders read the model's conventions ------------------------------------ */

/* The OpenTracing span.kind values (WIRE-NOTES 7). */
typedef enum tw__span_kind {
    TW__KIND_NONE = 0, /* no span.kind tag, or a value that is none of these */
    TW__KIND_CLIENT,
    TW__KIND_SERVER,
    TW__KIND_PRODUCER,
    TW__KIND_CONSUMER,
    TW__KIND_INTERNAL /* "internal" (OpenTelemetry's name; Zipkin has no kind for it) */
} tw__span_kind;

/* The kind named by the last `span.kind` tag (case-insensitive), and that
 * tag's index in *index (SIZE_MAX when there is none). */
tw__span_kind tw__span_kind_of(const tw__span_data *span, size_t *index);

/* Truth of an `error` tag: 1 for bool true, a non-zero number, or the string
 * "true"; -1 for bool false, zero, or "false" (strings in any case); 0 for
 * any other string or a binary value (a message, not a truth value). */
int tw__error_truth(const tw__tag *tag);

/* The string `message` field of the first log whose `event` field is
 * "error" (what tw_span_set_error writes), or NULL. */
const tw__tag *tw__error_message(const tw__span_data *span);

/* Appends the text of a typed value to @out: strings as they are, bool
 * "true"/"false", int64 decimal, double by tw__double_text, binary as
 * base64. False on allocation failure. */
bool tw__value_text(const tw__tag *value, tw__buf *out);

#endif /* TW_WIRE_JSON_COMMON_H */
