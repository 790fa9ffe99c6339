/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/carriers.c: tw_headers, the ready-made carrier: an ordered
 * list of key/value pairs (duplicates allowed, as in HTTP), with a reader
 * (tw_headers_reader: every pair, in order) and a writer (tw_headers_writer:
 * set semantics, so injecting into a list that already holds forwarded
 * trace headers replaces them instead of adding a second, older value that
 * "first value wins" receivers would pick).
 *
 * Each pair is one allocation (key and value back to back); the array of
 * pairs grows by doubling. One thread at a time per list; no shared state.
 */
#include "propagation/propagation.h"

#include <stdlib.h>
#include <string.h>

typedef struct pair {
    char *key; /* key, NUL, value, NUL: one allocation */
    const char *value;
} pair;

struct tw_headers {
    pair *items;
    size_t n, cap;
};

tw_headers *tw_headers_new(void)
{
    return calloc(1, sizeof(tw_headers));
}

void tw_headers_clear(tw_headers *headers)
{
    if (!headers)
        return;
    for (size_t i = 0; i < headers->n; i++)
        free(headers->items[i].key);
    headers->n = 0;
}

void tw_headers_free(tw_headers *headers)
{
    if (!headers)
        return;
    tw_headers_clear(headers);
    free(headers->items);
    free(headers);
}

static bool make_pair(pair *p, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value);
    char *mem = malloc(kl + vl + 2);
    if (!mem)
        return false;
    memcpy(mem, key, kl + 1);
    memcpy(mem + kl + 1, value, vl + 1);
    p->key = mem;
    p->value = mem + kl + 1;
    return true;
}

tw_status tw_headers_add(tw_headers *headers, const char *key, const char *value)
{
    TW_CHECK_ARG(headers && key && value, TW_E_INVALID_ARG);
    if (headers->n == headers->cap) {
        size_t cap = headers->cap ? headers->cap * 2 : 8;
        pair *grown = realloc(headers->items, cap * sizeof(*grown));
        if (!grown)
            return TW_E_NOMEM;
        headers->items = grown;
        headers->cap = cap;
    }
    if (!make_pair(&headers->items[headers->n], key, value))
        return TW_E_NOMEM;
    headers->n++;
    return TW_OK;
}

static bool same_key(const char *a, const char *b)
{
    for (;; a++, b++) {
        unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x + ('a' - 'A'));
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y + ('a' - 'A'));
        if (x != y)
            return false;
        if (x == '\0')
            return true;
    }
}

tw_status tw_headers_set(tw_headers *headers, const char *key, const char *value)
{
    TW_CHECK_ARG(headers && key && value, TW_E_INVALID_ARG);
    size_t first = SIZE_MAX;
    for (size_t i = 0; i < headers->n && first == SIZE_MAX; i++) {
        if (same_key(headers->items[i].key, key))
            first = i;
    }
    if (first == SIZE_MAX)
        return tw_headers_add(headers, key, value);
    pair replacement;
    if (!make_pair(&replacement, key, value))
        return TW_E_NOMEM; /* the list is unchanged */
    free(headers->items[first].key);
    headers->items[first] = replacement;
    /* Later pairs with the same key go, keeping the order of the rest. */
    size_t kept = first + 1;
    for (size_t i = first + 1; i < headers->n; i++) {
        if (same_key(headers->items[i].key, key))
            free(headers->items[i].key);
        else
            headers->items[kept++] = headers->items[i];
    }
    headers->n = kept;
    return TW_OK;
}

size_t tw_headers_count(const tw_headers *headers)
{
    return headers ? headers->n : 0;
}

bool tw_headers_item(const tw_headers *headers, size_t index, const char **key, const char **value)
{
    if (!headers || index >= headers->n)
        return false;
    if (key)
        *key = headers->items[index].key;
    if (value)
        *value = headers->items[index].value;
    return true;
}

const char *tw_headers_get(const tw_headers *headers, const char *key)
{
    if (!headers || !key)
        return NULL;
    for (size_t i = 0; i < headers->n; i++) {
        if (same_key(headers->items[i].key, key))
            return headers->items[i].value;
    }
    return NULL;
}

static tw_status headers_set(void *user_data, const char *key, const char *value)
{
    return tw_headers_set(user_data, key, value);
}

static tw_status headers_foreach(void *user_data, tw_carrier_handler_fn handler, void *handler_data)
{
    const tw_headers *headers = user_data;
    if (!headers || !handler)
        return TW_E_INVALID_ARG;
    for (size_t i = 0; i < headers->n; i++) {
        tw_status status = handler(handler_data, headers->items[i].key, headers->items[i].value);
        if (status != TW_OK)
            return status;
    }
    return TW_OK;
}

tw_carrier_writer tw_headers_writer(tw_headers *headers)
{
    return (tw_carrier_writer){headers_set, headers};
}

tw_carrier_reader tw_headers_reader(const tw_headers *headers)
{
    /* The reader never writes through user_data; the cast only fits the
     * shared struct's void pointer. */
    return (tw_carrier_reader){headers_foreach, (void *)headers};
}
