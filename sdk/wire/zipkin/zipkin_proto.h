/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_proto.h: Zipkin v2 in proto3 (internal): the
 * ListOfSpans of openzipkin/zipkin-api zipkin.proto (proto/zipkin/), which
 * Zipkin's POST /api/v2/spans takes as application/x-protobuf.
 *
 * Zipkin v2 has one model in two encodings, JSON and proto3; the mapping
 * between the span model and Zipkin's is the Zipkin v2 encoder's
 * (wire/zipkin/zipkin_v2_json.h), written once. This module only changes
 * the syntax of that Zipkin v2 span:
 *
 *   Span  1 trace_id bytes(8|16)  2 parent_id bytes(8)  3 id bytes(8)
 *         4 kind (CLIENT 1, SERVER 2, PRODUCER 3, CONSUMER 4)  5 name
 *         6 timestamp fixed64 µs  7 duration varint µs
 *         8 local_endpoint, 9 remote_endpoint: Endpoint {1 service_name,
 *           2 ipv4 bytes(4), 3 ipv6 bytes(16), 4 port}
 *         10 annotations: {1 timestamp fixed64, 2 value}
 *         11 tags: map<string, string> (entries {1 key, 2 value}, in the
 *           JSON encoder's order)  12 debug  13 shared
 *   ListOfSpans  1 spans (repeated)
 * Ids are big-endian bytes (a 64-bit trace id is 8 bytes, as Zipkin writes
 * it); addresses are raw bytes; proto3 defaults (0, "", false) are left out.
 *
 * Encoding: the span's Zipkin v2 JSON text, as the one encoder writes it
 * (tw__zipkin_encode_span), is parsed back and written as proto3 directly
 * (wire/core/pb_write.h); the differential suite
 * tests/unit/wire/test_zipkin_proto.c holds it to protobuf-c's packer. The
 * parse costs what the Jansson tree it replaced cost; only `tracewire
 * convert --to zipkin-v2-proto` pays it (no reporter writes proto3).
 * Decoding: a Span message is checked and unpacked by protobuf-c
 * (wire/core/pb_read.h: wire types, nesting, memory budget) and rewritten
 * as the Zipkin v2 JSON object that the zipkin-v2-json reader reads, so one
 * set of reading rules serves both encodings. Ids of another length are
 * refused; an address of the wrong length is left out with a warning.
 *
 * Locking: none.
 */
#ifndef TW_WIRE_ZIPKIN_ZIPKIN_PROTO_H
#define TW_WIRE_ZIPKIN_ZIPKIN_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "wire/model/span_data.h"
#include "wire/core/buf.h"

#define TW__ZIPKIN_PROTO_CONTENT_TYPE "application/x-protobuf"

/* Appends @span of @process as one `spans` field of a ListOfSpans (tag,
 * length, Span) to @out. False (out unchanged) on allocation failure. */
bool tw__zipkin_proto_encode_span(const tw__span_data *span, const tw__process *process,
                                  tw__buf *out);

/* The same from a Zipkin v2 span object (the differential suite's entry
 * point). */
bool tw__zipkin_proto_encode_json(const json_t *span, tw__buf *out);

/* The Zipkin v2 JSON object of @span of @process (nullable): the one
 * encoder's text, parsed. New reference; NULL on allocation failure. */
json_t *tw__zipkin_proto_span_object(const tw__span_data *span, const tw__process *process);

struct tw__pb_arena;

/* Called for a member left out while decoding (@why says which). */
typedef void (*tw__zipkin_proto_warn_fn)(void *arg, const char *why);

/* The Zipkin v2 JSON object of the Span message in data[0..len) (at byte
 * @base_offset of the input), unpacked in @arena (reset by the caller).
 * NULL with the reason in @why, or *is_nomem. */
json_t *tw__zipkin_proto_span_json(const uint8_t *data, size_t len, uint64_t base_offset,
                                   struct tw__pb_arena *arena, tw__zipkin_proto_warn_fn warn,
                                   void *warn_arg, char *why, size_t why_size, bool *is_nomem);

/* 0 (not a ListOfSpans) .. 100, from the first bytes of an input. */
int tw__zipkin_proto_sniff(const uint8_t *head, size_t len);

#endif /* TW_WIRE_ZIPKIN_ZIPKIN_PROTO_H */
