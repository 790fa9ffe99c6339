/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/json_common.h: the Jansson side of the wire layer: JSON values
 * made safe for Jansson (strings repaired to valid UTF-8, keys too, since
 * Jansson refuses anything else), the put/push helpers that take ownership
 * even on failure, and compact serialization into a tw__buf. The decoders
 * (which parse with Jansson) and the Zipkin v1 JSON encoder use them; the
 * span encoders of the hot paths write directly (wire/core/json_write.h).
 *
 * It also includes the other primitives (hex, base64, UTF-8, the direct
 * JSON writers, the model's conventions), which older users took from here.
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

#include "wire/core/base64.h"
#include "wire/core/buf.h"
#include "wire/core/hex.h"
#include "wire/core/json_write.h"
#include "wire/core/utf8.h"
#include "wire/model/conventions.h"
#include "wire/model/span_data.h"

/* A JSON string of @len bytes of @text (which may hold NUL bytes): the
 * bytes as they are when they are valid UTF-8, else with each invalid byte
 * replaced by U+FFFD. New reference; NULL on allocation failure. */
json_t *tw__json_text(const char *text, size_t len);

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

/* The text of any JSON value, for decoders that keep a non-string value as
 * a string: a string as it is, anything else as compact JSON. malloc'd (the
 * caller frees it); NULL on allocation failure. */
char *tw__json_value_text(const json_t *v, size_t *len);

/* The compact flags used everywhere: UTF-8 output, no spaces, insertion
 * order kept. */
#define TW__JSON_FLAGS (JSON_COMPACT | JSON_PRESERVE_ORDER)

#endif /* TW_WIRE_JSON_COMMON_H */
