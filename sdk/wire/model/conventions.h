/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/model/conventions.h: how the encoders read the span model's
 * conventions (tags that carry meaning: span.kind, error, the message of
 * an error log) and the rules every encoder shares (the last tag of a key
 * wins; the text of a typed value). One reading for every format, so that
 * Zipkin, OTLP, Jaeger and the Dapper log agree on what a span says.
 *
 * No state, no locks: any thread.
 */
#ifndef TW_WIRE_MODEL_CONVENTIONS_H
#define TW_WIRE_MODEL_CONVENTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "wire/core/buf.h"
#include "wire/model/span_data.h"

/* The value of a string tag or field, or NULL for other types. */
static inline const char *tw__tag_str(const tw__tag *t)
{
    return t && t->type == TW_VALUE_STRING ? t->v.str : NULL;
}

/* Whether the C string @text is an IPv4 address in the form inet_ntop
 * writes (four decimal parts 0..255 without leading zeros): then
 * inet_pton(AF_INET) reads it and inet_ntop gives the same text back, so
 * readers and writers of endpoint addresses skip both calls. */
static inline bool tw__ipv4_is_canonical(const char *text)
{
    for (int part = 0; part < 4; part++) {
        if (part > 0 && *text++ != '.')
            return false;
        unsigned v = 0;
        int digits = 0;
        while (*text >= '0' && *text <= '9' && digits < 4) {
            v = v * 10 + (unsigned)(*text++ - '0');
            digits++;
        }
        if (digits == 0 || digits > 3 || v > 255 || (digits > 1 && text[-digits] == '0'))
            return false;
    }
    return *text == '\0';
}

/* tw__ipv4_is_canonical's test that also measures: the length of @text
 * (7 to 15) when it is such an address, else 0. The writers of endpoint
 * addresses then copy it without a strlen. Each part's digits are read
 * without a loop (one to three, the first not 0 unless alone, at most
 * 255), so that an address costs about as many steps as it has bytes. */
static inline size_t tw__ipv4_canonical_len(const char *text)
{
    const unsigned char *p = (const unsigned char *)text;
    size_t i = 0;
    for (int part = 0; part < 4; part++) {
        if (part > 0 && p[i++] != '.')
            return 0;
        unsigned d0 = p[i] - (unsigned)'0', d1, d2;
        if (d0 > 9)
            return 0;
        if ((d1 = p[i + 1] - (unsigned)'0') > 9) {
            i += 1;
        } else if (d0 == 0) {
            return 0; /* a leading zero */
        } else if ((d2 = p[i + 2] - (unsigned)'0') > 9) {
            i += 2;
        } else if (d0 * 100 + d1 * 10 + d2 > 255 || p[i + 3] - (unsigned)'0' <= 9) {
            return 0; /* above 255, or a fourth digit */
        } else {
            i += 3;
        }
    }
    return p[i] == '\0' ? i : 0;
}

/* Whether a tag/field key equals @key (keys are NUL-terminated). Inline:
 * the encoders ask it of every tag for literal keys, whose length and
 * comparison the compiler then folds. */
static inline bool tw__tag_key_is(const tw__tag *t, const char *key)
{
    if (!t || !t->key)
        return false;
    size_t len = strlen(key);
    return t->key_len == len && memcmp(t->key, key, len) == 0;
}

/*
 * Which tags win when keys repeat: the last tag with a key wins (as in
 * Zipkin's model and in a JSON object). Fills @is_winner[i] for the @n tags;
 * false on allocation failure. Linear, with a hash index, so a span from the
 * bridge with thousands of tags costs no quadratic scan. @n == 0 is valid.
 */
bool tw__last_by_key(const tw__tag *tags, size_t n, bool *is_winner);

/* The OpenTracing span.kind values . */
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

#endif /* TW_WIRE_MODEL_CONVENTIONS_H */
