/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/json_common.c: helpers shared by the Zipkin and OTLP JSON encoders
 * (see json_common.h). They sit between the span model and Jansson: ids as
 * hex, binary as base64, doubles as their shortest exact text, and strings
 * repaired to valid UTF-8 so that Jansson accepts them. Jansson writes every
 * JSON byte, escaping included, except tw__json_append_text(): the string
 * writer of the direct Zipkin encoder (zipkin_text.c says why it exists),
 * which restates Jansson's dump rules and is tested byte for byte against
 * them.
 *
 * No state, no locks.
 */
#include "wire/core/json_common.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <strings.h>

static const char hex_digits[] = "0123456789abcdef";

void tw__hex64(uint64_t id, char out[17])
{
    /* A byte (two digits) per step: ids are written twice per span on the
     * bridge's hot path. */
    for (int i = 14; i >= 0; i -= 2) {
        out[i] = hex_digits[(id >> 4) & 0xf];
        out[i + 1] = hex_digits[id & 0xf];
        id >>= 8;
    }
    out[16] = '\0';
}

void tw__hex128(uint64_t high, uint64_t low, char out[33])
{
    tw__hex64(high, out);
    tw__hex64(low, out + 16);
}

char *tw__base64(const uint8_t *data, size_t len)
{
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
        return NULL;
    char *out = malloc((len + 2) / 3 * 4 + 1);
    if (!out)
        return NULL;
    char *p = out;
    size_t i = 0;
    for (; i + 3 <= len; i += 3) {
        uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8 | data[i + 2];
        *p++ = alphabet[v >> 18];
        *p++ = alphabet[(v >> 12) & 0x3f];
        *p++ = alphabet[(v >> 6) & 0x3f];
        *p++ = alphabet[v & 0x3f];
    }
    if (i < len) {
        uint32_t v = (uint32_t)data[i] << 16;
        if (i + 1 < len)
            v |= (uint32_t)data[i + 1] << 8;
        *p++ = alphabet[v >> 18];
        *p++ = alphabet[(v >> 12) & 0x3f];
        *p++ = i + 1 < len ? alphabet[(v >> 6) & 0x3f] : '=';
        *p++ = '=';
    }
    *p = '\0';
    return out;
}

static int base64_digit(unsigned char c, bool is_strict)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || (!is_strict && c == '-'))
        return 62;
    if (c == '/' || (!is_strict && c == '_'))
        return 63;
    return -1;
}

bool tw__base64_decode_into(const char *text, size_t len, bool is_strict, uint8_t *out,
                            size_t *out_len)
{
    size_t data_len = len;
    while (data_len > 0 && text[data_len - 1] == '=' && len - data_len < 2)
        data_len--;
    if (is_strict || data_len < len) {
        if (len % 4 != 0)
            return false; /* padding (always, when strict) completes the last quantum */
    }
    if (data_len % 4 == 1)
        return false;
    size_t n = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < data_len; i++) {
        int d = base64_digit((unsigned char)text[i], is_strict);
        if (d < 0)
            return false;
        acc = acc << 6 | (uint32_t)d;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[n++] = (uint8_t)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    *out_len = n;
    return true;
}

bool tw__base64_decode(const char *text, size_t len, bool is_strict, uint8_t **out, size_t *out_len,
                       bool *is_nomem)
{
    *is_nomem = false;
    uint8_t *buf = malloc(len / 4 * 3 + 3);
    if (!buf) {
        *is_nomem = true;
        return false;
    }
    if (!tw__base64_decode_into(text, len, is_strict, buf, out_len)) {
        free(buf);
        return false;
    }
    *out = buf;
    return true;
}

size_t tw__double_text(double value, char *out, size_t size)
{
    const char *special = NULL;
    if (isnan(value))
        special = "NaN";
    else if (isinf(value))
        special = value > 0 ? "Infinity" : "-Infinity";
    if (special) {
        snprintf(out, size, "%s", special);
        return strlen(out);
    }
    /* The fewest significant digits that read back exactly: 0.1 is "0.1",
     * not the "0.10000000000000001" of a fixed %.17g. printf and strtod
     * follow the same LC_NUMERIC, so the round-trip test holds in any
     * locale; the locale's decimal point is then turned into '.'. */
    for (int precision = 1; precision <= 17; precision++) {
        snprintf(out, size, "%.*g", precision, value);
        if (strtod(out, NULL) == value)
            break;
    }
    char point = localeconv()->decimal_point[0];
    if (point != '.' && point != '\0') {
        char *p = strchr(out, point);
        if (p)
            *p = '.';
    }
    return strlen(out);
}

/* Length of the valid UTF-8 sequence at @s (at most @len bytes), or 0 when
 * it is not one. The rules are Jansson's (utf.c): no overlong forms, no
 * surrogates, nothing above U+10FFFF. */
size_t tw__utf8_sequence(const unsigned char *s, size_t len)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n > len)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

json_t *tw__json_text(const char *text, size_t len)
{
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    size_t valid = 0;
    size_t n_invalid = 0;
    for (size_t i = 0; i < len;) {
        size_t n = tw__utf8_sequence(s + i, len - i);
        if (n == 0) {
            n_invalid++;
            i++;
        } else {
            valid += n;
            i += n;
        }
    }
    if (n_invalid == 0)
        return json_stringn(text ? text : "", len);
    /* Each bad byte becomes the 3-byte U+FFFD. */
    if (n_invalid > (SIZE_MAX - valid) / 3)
        return NULL;
    char *fixed = malloc(valid + 3 * n_invalid + 1);
    if (!fixed)
        return NULL;
    size_t out = 0;
    for (size_t i = 0; i < len;) {
        size_t n = tw__utf8_sequence(s + i, len - i);
        if (n == 0) {
            memcpy(fixed + out, "\xef\xbf\xbd", 3);
            out += 3;
            i++;
        } else {
            memcpy(fixed + out, s + i, n);
            out += n;
            i += n;
        }
    }
    json_t *str = json_stringn(fixed, out);
    free(fixed);
    return str;
}

bool tw__json_append_text(tw__buf *out, const char *text, size_t len)
{
    /* Worst case: every byte a 6-byte \u00XX; plus the quotes. */
    if (len > (SIZE_MAX - out->len - 2) / 6 || !tw__buf_reserve(out, out->len + len * 6 + 2))
        return false;
    static const char hex_upper[] = "0123456789ABCDEF";
    const unsigned char *s = (const unsigned char *)(text ? text : "");
    uint8_t *o = out->data + out->len;
    *o++ = '"';
    for (size_t i = 0; i < len;) {
        size_t run = tw__json_plain_run(s + i, len - i);
        memcpy(o, s + i, run);
        o += run;
        i += run;
        if (i == len)
            break;
        unsigned char c = s[i];
        if (c >= 0x80) {
            size_t n = tw__utf8_sequence(s + i, len - i);
            if (n == 0) {
                memcpy(o, "\xef\xbf\xbd", 3);
                o += 3;
                i++;
            } else {
                memcpy(o, s + i, n);
                o += n;
                i += n;
            }
            continue;
        }
        *o++ = '\\';
        switch (c) {
        case '"':
        case '\\':
            *o++ = c;
            break;
        case '\b':
            *o++ = 'b';
            break;
        case '\f':
            *o++ = 'f';
            break;
        case '\n':
            *o++ = 'n';
            break;
        case '\r':
            *o++ = 'r';
            break;
        case '\t':
            *o++ = 't';
            break;
        default:
            memcpy(o, "u00", 3);
            o[3] = (uint8_t)hex_upper[c >> 4];
            o[4] = (uint8_t)hex_upper[c & 0xf];
            o += 5;
            break;
        }
        i++;
    }
    *o++ = '"';
    out->len = (size_t)(o - out->data);
    return true;
}

bool tw__json_set(json_t *object, const char *key, size_t key_len, json_t *value)
{
    /* Keys are C strings (the model has no NUL in keys), so the NUL-terminated
     * json_object_set_new() serves; jansson >= 2.12 (configure's minimum) has
     * no length-taking variant before 2.14. */
    if (!value)
        return false;
    const unsigned char *s = (const unsigned char *)key;
    bool is_valid = true;
    for (size_t i = 0; i < key_len && is_valid;) {
        size_t n = tw__utf8_sequence(s + i, key_len - i);
        is_valid = n > 0;
        i += n;
    }
    if (is_valid)
        return json_object_set_new(object, key, value) == 0;
    json_t *fixed = tw__json_text(key, key_len);
    if (!fixed) {
        json_decref(value);
        return false;
    }
    bool ok = json_object_set_new(object, json_string_value(fixed), value) == 0;
    json_decref(fixed);
    return ok;
}

bool tw__json_put(json_t *object, const char *key, json_t *value)
{
    return value && json_object_set_new(object, key, value) == 0;
}

bool tw__json_push(json_t *array, json_t *value)
{
    return value && json_array_append_new(array, value) == 0;
}

size_t tw__json_size(const json_t *json)
{
    return json ? json_dumpb(json, NULL, 0, TW__JSON_FLAGS) : 0;
}

bool tw__json_dump(const json_t *json, tw__buf *out)
{
    size_t size = tw__json_size(json);
    if (size == 0 || !tw__buf_reserve(out, size))
        return false;
    size_t written = json_dumpb(json, (char *)out->data, size, TW__JSON_FLAGS);
    if (written != size)
        return false;
    out->len = size;
    return true;
}

bool tw__tag_key_is(const tw__tag *t, const char *key)
{
    return t && t->key && strcmp(t->key, key) == 0;
}

/* FNV-1a over a NUL-terminated key. */
static uint64_t key_hash(const char *key)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 0x100000001b3u;
    return h;
}

bool tw__last_by_key(const tw__tag *tags, size_t n, bool *is_winner)
{
    if (n == 0)
        return true;
    if (n <= 8) {
        /* Small spans (the common case): a scan is cheaper than a table. */
        for (size_t i = 0; i < n; i++) {
            is_winner[i] = true;
            for (size_t j = i + 1; j < n && is_winner[i]; j++)
                is_winner[i] = strcmp(tags[i].key, tags[j].key) != 0;
        }
        return true;
    }
    size_t cap = 16;
    while (cap < n * 2)
        cap *= 2;
    /* Slots hold index + 1 of the last tag with a key; 0 is empty. */
    size_t *slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return false;
    for (size_t i = 0; i < n; i++) {
        is_winner[i] = true;
        size_t at = key_hash(tags[i].key) & (cap - 1);
        while (slots[at] && strcmp(tags[slots[at] - 1].key, tags[i].key) != 0)
            at = (at + 1) & (cap - 1);
        if (slots[at])
            is_winner[slots[at] - 1] = false;
        slots[at] = i + 1;
    }
    free(slots);
    return true;
}

tw__span_kind tw__span_kind_of(const tw__span_data *span, size_t *index)
{
    static const struct {
        const char *name;
        tw__span_kind kind;
    } names[] = {{"client", TW__KIND_CLIENT},
                 {"server", TW__KIND_SERVER},
                 {"producer", TW__KIND_PRODUCER},
                 {"consumer", TW__KIND_CONSUMER},
                 {"internal", TW__KIND_INTERNAL}};
    *index = SIZE_MAX;
    for (size_t i = span->n_tags; i > 0; i--) {
        const tw__tag *t = &span->tags[i - 1];
        if (!tw__tag_key_is(t, "span.kind"))
            continue;
        *index = i - 1;
        const char *value = tw__tag_str(t);
        for (size_t k = 0; value && k < sizeof(names) / sizeof(names[0]); k++) {
            if (strcasecmp(value, names[k].name) == 0)
                return names[k].kind;
        }
        return TW__KIND_NONE;
    }
    return TW__KIND_NONE;
}

int tw__error_truth(const tw__tag *tag)
{
    switch (tag->type) {
    case TW_VALUE_BOOL:
        return tag->v.boolean ? 1 : -1;
    case TW_VALUE_INT64:
        return tag->v.i64 != 0 ? 1 : -1;
    case TW_VALUE_DOUBLE:
        return tag->v.dbl != 0 ? 1 : -1;
    case TW_VALUE_STRING:
        if (strcasecmp(tag->v.str, "true") == 0)
            return 1;
        if (strcasecmp(tag->v.str, "false") == 0)
            return -1;
        return 0;
    case TW_VALUE_BINARY:
        return 0;
    }
    return 0;
}

const tw__tag *tw__error_message(const tw__span_data *span)
{
    for (size_t i = 0; i < span->n_logs; i++) {
        const tw__log *log = &span->logs[i];
        const tw__tag *message = NULL;
        bool is_error = false;
        for (size_t f = 0; f < log->n_fields; f++) {
            const tw__tag *field = &log->fields[f];
            const char *value = tw__tag_str(field);
            if (tw__tag_key_is(field, "event") && value && strcmp(value, "error") == 0)
                is_error = true;
            else if (tw__tag_key_is(field, "message") && value && !message)
                message = field;
        }
        if (is_error && message)
            return message;
    }
    return NULL;
}

bool tw__value_text(const tw__tag *value, tw__buf *out)
{
    char num[40];
    switch (value->type) {
    case TW_VALUE_STRING:
        return tw__buf_append(out, value->v.str, value->len);
    case TW_VALUE_BOOL:
        return value->v.boolean ? tw__buf_append(out, "true", 4) : tw__buf_append(out, "false", 5);
    case TW_VALUE_INT64: {
        int n = snprintf(num, sizeof num, "%" PRId64, value->v.i64);
        return tw__buf_append(out, num, (size_t)n);
    }
    case TW_VALUE_DOUBLE:
        return tw__buf_append(out, num, tw__double_text(value->v.dbl, num, sizeof num));
    case TW_VALUE_BINARY: {
        char *b64 = tw__base64(value->v.bin, value->len);
        bool ok = b64 && tw__buf_append(out, b64, strlen(b64));
        free(b64);
        return ok;
    }
    }
    return false;
}
