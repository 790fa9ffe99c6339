/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_common.c: the Jansson helpers of the wire layer (see
 * wire/core/json_common.h): strings and keys repaired to valid UTF-8 before
 * Jansson sees them, ownership-taking put/push, compact dumps into a
 * tw__buf. No state, no locks.
 */
#include "wire/core/json_common.h"

#include <stdlib.h>
#include <string.h>

bool tw__json_set(json_t *object, const char *key, size_t key_len, json_t *value)
{
    /* Keys are C strings (the model has no NUL in keys), so the NUL-terminated
     * json_object_set_new() serves; jansson >= 2.12 (configure's minimum) has
     * no length-taking variant before 2.14. */
    if (!value)
        return false;
    if (tw__utf8_is_valid(key, key_len))
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

json_t *tw__json_text(const char *text, size_t len)
{
    if (!text)
        text = "";
    if (tw__utf8_is_valid(text, len))
        return json_stringn(text, len);
    tw__buf fixed;
    tw__buf_init(&fixed);
    json_t *str = tw__utf8_repair_append(&fixed, text, len, NULL)
                      ? json_stringn((const char *)fixed.data, fixed.len)
                      : NULL;
    tw__buf_free(&fixed);
    return str;
}

char *tw__json_value_text(const json_t *v, size_t *len)
{
    if (json_is_string(v)) {
        *len = json_string_length(v);
        char *copy = malloc(*len + 1);
        if (copy) {
            memcpy(copy, json_string_value(v), *len);
            copy[*len] = '\0';
        }
        return copy;
    }
    char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER);
    *len = text ? strlen(text) : 0;
    return text;
}
