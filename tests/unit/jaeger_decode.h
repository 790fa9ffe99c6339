/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/jaeger_decode.h: decodes an Agent.emitBatch datagram (Thrift
 * compact) with the c_glib code generated from thrift/agent.thrift, for the
 * UDP reporter tests and the benchmark's counting sink.
 */
#ifndef TW_TESTS_JAEGER_DECODE_H
#define TW_TESTS_JAEGER_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "twire_jaeger_agent_types.h"

/* Makes the generated Jaeger structs and ThriftMemoryBuffer chain up to
 * GObject's finalize (Thrift c_glib bug: each destroyed object would leak
 * 32 bytes and fail the leak checks). Idempotent; false if it ran out of
 * patch slots. Not thread-safe: call from one thread before decoding. */
bool tw_test_patch_thrift_finalizers(void);

/* Returns a new reference to the Batch (g_object_unref it), or NULL when
 * the bytes are not a well-formed compact emitBatch message. */
TwireJaegerBatch *tw_test_decode_emit_batch(const uint8_t *data, size_t len);
/* The same for the binary protocol (agent port 6832). */
TwireJaegerBatch *tw_test_decode_emit_batch_binary(const uint8_t *data, size_t len);

#endif
