/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/model/conventions.c: the span model's conventions as every encoder
 * reads them (wire/model/conventions.h). No state, no locks.
 */
#include "wire/model/conventions.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wire/core/base64.h"
#include "wire/core/json_write.h" /* tw__double_text, tw__json_write_int */

/* FNV-1a over a key of @len bytes. */
static uint64_t key_hash(const char *key, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)key[i]) * 0x100000001b3u;
    return h;
}

/* Keys are equal by their lengths and bytes (a key may hold a NUL byte);
 * the length first, where most keys differ. */
static bool same_key(const tw__tag *a, const tw__tag *b)
{
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

bool tw__last_by_key(const tw__tag *tags, size_t n, bool *is_winner)
{
    if (n == 0)
        return true;
    if (n <= 8) {
        /* Small spans (the common case): a scan is cheaper than a table.
         * The verdict stays in a register until the end of its scan (a
         * store per comparison through is_winner, which may alias the tags,
         * made each one twice as dear). */
        for (size_t i = 0; i < n; i++) {
            bool is_last = true;
            uint32_t len = tags[i].key_len;
            for (size_t j = i + 1; j < n; j++) {
                if (tags[j].key_len == len && memcmp(tags[i].key, tags[j].key, len) == 0) {
                    is_last = false;
                    break;
                }
            }
            is_winner[i] = is_last;
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
        size_t at = key_hash(tags[i].key, tags[i].key_len) & (cap - 1);
        while (slots[at] && !same_key(&tags[slots[at] - 1], &tags[i]))
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
    case TW_VALUE_INT64: /* "%" PRId64's digits, without printf's cost */
        return tw__buf_append(
            out, num, (size_t)(tw__json_write_int((uint8_t *)num, value->v.i64) - (uint8_t *)num));
    case TW_VALUE_DOUBLE:
        return tw__buf_append(out, num, tw__double_text(value->v.dbl, num, sizeof num));
    case TW_VALUE_BINARY:
        return tw__base64_append(out, value->v.bin, value->len);
    }
    return false;
}
