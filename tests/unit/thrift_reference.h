/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/unit/thrift_reference.h: Apache Thrift c_glib as the reference of
 * the direct Thrift writer (wire/core/thrift.h), for the differential suite
 * (tests/unit/wire/test_thrift_write.c) and fuzz target
 * (tests/fuzz/fuzz_thrift_write.c).
 *
 * Two references:
 *   - a span: the generated struct TwireJaegerSpan (from thrift/jaeger.thrift:
 *     the field ids and types of the IDL) filled from the model record and
 *     written with c_glib's generated writer and protocol; the direct
 *     encoder must produce the same bytes;
 *   - a "program": bytes read as a sequence of writer operations (fields of
 *     every type, nested structs, lists, a message header) run once on the
 *     direct writer and once on c_glib's protocol API.
 *
 * Single-threaded (GObject types are registered on first use).
 */
#ifndef TW_TESTS_THRIFT_REFERENCE_H
#define TW_TESTS_THRIFT_REFERENCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/core/buf.h"
#include "wire/core/thrift.h"
#include "wire/model/span_data.h"

/* Whether c_glib's generated struct can carry @s as the model holds it:
 * its strings are C strings, so a NUL inside a name, key or string value
 * cannot be represented there (the direct writer keeps those bytes). */
bool tw_test_reference_can_carry(const tw__span_data *s);

/* The bytes of @s as c_glib's generated TwireJaegerSpan writer writes them
 * (texts repaired to valid UTF-8 first, as the direct encoder does). False
 * when c_glib reported an error. */
bool tw_test_reference_span(tw__thrift_protocol proto, const tw__span_data *s, tw__buf *out);

/* Runs the writer program @program (@len bytes, any content) on the direct
 * writer into @ours and on c_glib's protocol API into @theirs. Programs
 * only use what both can write. False when either side failed to write. */
bool tw_test_run_thrift_program(tw__thrift_protocol proto, const uint8_t *program, size_t len,
                                tw__buf *ours, tw__buf *theirs);

#endif /* TW_TESTS_THRIFT_REFERENCE_H */
