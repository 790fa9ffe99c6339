/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/decode.h: what each receiver of `tracewire agent` does with
 * the bytes it got, through the project's one decoder per format (sdk/wire/):
 *
 *   jaeger UDP emitBatch (compact 6831, binary 6832), collector /api/traces:
 *       wire/jaeger/jaeger_thrift_decode.h (a buffer entry point)
 *   Zipkin emitZipkinBatch (compact, 5775): the Zipkin v1 Thrift decoder's
 *       compact entry points (wire/zipkin/zipkin_v1_thrift.h), then the V1 ->
 *       model rules (wire/zipkin/zipkin_v1.h)
 *   every HTTP body (OTLP/JSON and protobuf, Zipkin v2 JSON and proto3,
 *       Zipkin v1 JSON and Thrift): the format registry's decoder
 *       (wire/formats.h, the one `tracewire convert --from` runs) over the
 *       body (fmemopen)
 *
 * The HTTP body formats are rows of a table keyed by route and content type
 * (decode.c): a row whose decoder is NULL is answered 415 with the reason.
 * gzip bodies are inflated first with a bound on the inflated size (a gzip
 * bomb is refused as too large).
 *
 * No libmicrohttpd here: the fuzz targets (tests/fuzz/fuzz_agent_*.c) call
 * these functions directly. Locking: none (the caller's thread).
 */
#ifndef TW_BRIDGE_AGENT_DECODE_H
#define TW_BRIDGE_AGENT_DECODE_H

#include "agent/agent.h"
#include "wire/core/buf.h"

typedef enum twa_decode_result {
    TWA_DECODE_OK = 0,      /* spans (and maybe rejects) are in the span buffer */
    TWA_DECODE_MALFORMED,   /* nothing usable: 400 with @why */
    TWA_DECODE_UNSUPPORTED, /* no decoder for this content type: 415 with @why */
    TWA_DECODE_TOO_LARGE,   /* inflated body over the limit: 413 */
    TWA_DECODE_NOMEM
} twa_decode_result;

typedef twa_decode_result (*twa_decode_fn)(const uint8_t *data, size_t len, twa_spanbuf *b,
                                           char *why, size_t why_size);

/* UDP datagrams. */
twa_decode_result twa_decode_jaeger_compact(const uint8_t *data, size_t len, twa_spanbuf *b,
                                            char *why, size_t why_size);
twa_decode_result twa_decode_jaeger_binary(const uint8_t *data, size_t len, twa_spanbuf *b,
                                           char *why, size_t why_size);
twa_decode_result twa_decode_zipkin_compact(const uint8_t *data, size_t len, twa_spanbuf *b,
                                            char *why, size_t why_size);

/* One row of the HTTP body table. */
typedef struct twa_body_format {
    const char *route;        /* "/v1/traces", "/api/v2/spans", "/api/v1/spans", "/api/traces" */
    const char *content_type; /* media type, compared without parameters and case */
    const char *receiver;     /* "otlp", "zipkin", "jaeger-http" */
    twa_decode_fn decode;     /* NULL: not in this build (@missing says why) */
    const char *missing;
} twa_body_format;

/* The row for @route and @content_type (NULL or "" content type: the route's
 * first row). NULL when the route is unknown. *is_known_route tells a 404
 * from a 415. */
const twa_body_format *twa_body_format_find(const char *route, const char *content_type,
                                            bool *is_known_route);
/* The content types a route accepts, for a 415 answer ("a, b"). */
void twa_body_formats_of(const char *route, char *out, size_t size);

/* Inflates a gzip (or zlib) body into @out, refusing more than @max_bytes of
 * output (TWA_DECODE_TOO_LARGE) and bad data (TWA_DECODE_MALFORMED). */
twa_decode_result twa_inflate(const uint8_t *data, size_t len, size_t max_bytes, tw__buf *out,
                              char *why, size_t why_size);
/* The same for Content-Encoding: deflate, zlib-wrapped (as HTTP says) or raw
 * (as many clients send), told apart by the zlib header. */
twa_decode_result twa_inflate_deflate(const uint8_t *data, size_t len, size_t max_bytes,
                                      tw__buf *out, char *why, size_t why_size);

#endif /* TW_BRIDGE_AGENT_DECODE_H */
