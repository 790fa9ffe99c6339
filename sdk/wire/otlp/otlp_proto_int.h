/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/otlp/otlp_proto_int.h: the OTLP protobuf reader's one-step KeyValue
 * reading (otlp_proto_decode.c), internal, for the tests and the fuzz
 * target that hold it to the general reading.
 */
#ifndef TW_WIRE_OTLP_OTLP_PROTO_INT_H
#define TW_WIRE_OTLP_OTLP_PROTO_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracewire/common.h"

/* A KeyValue message in data[0..len) in the common layout (key, then a
 * value holding one string, bool, int, double or bytes member, one-byte
 * lengths): true with its key (@key_len bytes, to the key's first NUL; not
 * NUL-terminated) and value (pointing into @data), exactly as the general
 * reading would give them; false ("decline") for any other bytes, valid or
 * not. */
bool tw__otlp_proto_key_value_common(const uint8_t *data, size_t len, const char **key,
                                     size_t *key_len, tw_value *v);

/* Whether the decoder tries the one-step reading before the general one
 * (on by default). For tests only: set it before decoding, from one
 * thread; a differential test decodes with it off and on and compares. */
void tw__otlp_proto_set_common_kv(bool on);

#endif /* TW_WIRE_OTLP_OTLP_PROTO_INT_H */
