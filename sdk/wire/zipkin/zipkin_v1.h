/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v1.h: Zipkin v1 -> span model, shared by the
 * zipkin-v1-json and zipkin-v1-thrift readers (internal to the bridge).
 *
 * Both readers fill a tw__zipkin_v1_span (sdk/wire/zipkin/zipkin_v1_thrift.h) per
 * input record and hand it to tw__zipkin_v1_emit, which applies Zipkin's
 * V1SpanConverter rules (the rule list is at the top
 * of zipkin_v1.c) and emits one model span per host (client half, server
 * half, ...) through in->emit.
 *
 * Ownership: the v1 span stays the caller's. Locking: none.
 */
#ifndef TW_WIRE_ZIPKIN_ZIPKIN_V1_H
#define TW_WIRE_ZIPKIN_ZIPKIN_V1_H

#include <stdbool.h>
#include <stddef.h>

#include "wire/core/input.h"
#include "wire/zipkin/zipkin_v1_thrift.h"

/* The service name of a span whose data has no endpoint at all: empty. The
 * model keeps it empty; each writer applies its target's default. */
#define TW__ZIPKIN_V1_NO_SERVICE ""

/*
 * Converts @v1 (read from @line_no of @in; 0 when the input has no lines)
 * and emits its spans. A record that cannot become spans (a zero trace or
 * span id) is rejected with @raw (@raw_len bytes) as its raw bytes; kept
 * changes (a dropped annotation, a typed value of the wrong length, a
 * negative duration) are reported through in->warn. Applies in->opts'
 * time unit to every timestamp and duration (AUTO: microseconds, the
 * format's own unit).
 * Returns false when the run must stop (emit or reject said so).
 */
bool tw__zipkin_v1_emit(tw__wire_input *in, size_t line_no, tw__zipkin_v1_span *v1, const void *raw,
                        size_t raw_len);

/* The processes made for the last few distinct local endpoints, kept from
 * record to record by a reader: a file's records come from a handful of
 * hosts, and building a process (service, ip and port tags) for every span
 * cost more than converting the span. Owned by one reader (no locks). */
typedef struct tw__zipkin_v1_procs tw__zipkin_v1_procs;
tw__zipkin_v1_procs *tw__zipkin_v1_procs_new(void); /* NULL on allocation failure */
void tw__zipkin_v1_procs_free(tw__zipkin_v1_procs *procs);

/* tw__zipkin_v1_emit, taking each span's process from @procs (built there
 * the first time its endpoint is seen): the same spans and processes. */
bool tw__zipkin_v1_emit_with(tw__wire_input *in, size_t line_no, tw__zipkin_v1_span *v1,
                             const void *raw, size_t raw_len, tw__zipkin_v1_procs *procs);

/* Text of a packed IPv4 address ("192.168.1.1"); @out holds at least 16 bytes. */
void tw__ipv4_text(uint32_t ipv4, char *out);

#endif /* TW_WIRE_ZIPKIN_ZIPKIN_V1_H */
