/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/interop/interop_json.h: writes the canonical JSON of
 * jaeger_thrift_decode.py (what the interop driver expects the independent
 * decoder to print) from public tracewire types only, so that both driver
 * modes, the encoder cases and the real UDP reporter, spell values the same
 * way: ids and doubles as 16 hex digits of their bits, binaries as hex,
 * strings as JSON strings of their UTF-8 bytes.
 */
#ifndef TW_TESTS_INTEROP_JSON_H
#define TW_TESTS_INTEROP_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracewire/common.h"

/* A JSON string of @len bytes (valid UTF-8), written by Jansson; UTF-8
 * passes through (the reader decodes the file as UTF-8). */
void ij_string(FILE *f, const char *s, size_t len);
/* A JSON string of the bytes in lower-case hex. */
void ij_hex(FILE *f, const uint8_t *b, size_t len);
/* "key": "<16 hex digits>" */
void ij_id(FILE *f, const char *key, uint64_t id);
/* One jaeger.thrift Tag: {"key", "vType", and the one v* field of its type}. */
void ij_tag(FILE *f, const char *key, size_t key_len, const tw_value *value);

#endif /* TW_TESTS_INTEROP_JSON_H */
