/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/core/base64.h: the project's one base64 encoder and decoder (RFC
 * 4648): binary tag values in every JSON format (Zipkin, OTLP, Jaeger JSON,
 * the Dapper log), Scribe log lines (Zipkin v1 Thrift), ids that proto3
 * JSON writers encode as bytes.
 *
 * No state, no locks: any thread.
 */
#ifndef TW_WIRE_CORE_BASE64_H
#define TW_WIRE_CORE_BASE64_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/core/buf.h"

/* Standard base64 (RFC 4648 section 4, padded) of @len bytes, NUL-terminated,
 * from malloc (free it). NULL on allocation failure. @data may be NULL when
 * @len is 0 (the result is ""). */
char *tw__base64(const uint8_t *data, size_t len);
/* The same appended to @out (no NUL); false on allocation failure. */
bool tw__base64_append(tw__buf *out, const uint8_t *data, size_t len);

/* Decodes base64 into @out, which must hold len / 4 * 3 + 3 bytes; *out_len
 * receives the byte count. Strict (@is_strict): RFC 4648 section 4, the
 * standard alphabet, a length that is a multiple of 4, '=' only as the last
 * one or two characters (what Go's encoding/json and our encoder write).
 * Lenient: the standard or the URL alphabet (RFC 4648 section 5), padding
 * optional but, when present, at most two '=' completing the last quantum
 * (what legacy Zipkin and OTLP writers produce). False when @text is not
 * base64 by those rules. */
bool tw__base64_decode_into(const char *text, size_t len, bool is_strict, uint8_t *out,
                            size_t *out_len);
/* The same into malloc'd memory (at least 1 byte, the caller frees it):
 * false when not base64, or on allocation failure (then *is_nomem). */
bool tw__base64_decode(const char *text, size_t len, bool is_strict, uint8_t **out, size_t *out_len,
                       bool *is_nomem);

#endif /* TW_WIRE_CORE_BASE64_H */
