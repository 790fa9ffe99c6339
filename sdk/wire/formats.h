/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/formats.h: the format registry: every format module of the wire
 * layer, with its name (the --from / --to value of `tracewire convert`),
 * the content type it travels as over HTTP, its decoder (wire/core/input.h:
 * read a stream, sniff the first bytes) and its document encoder
 * (wire/core/output.h). `tracewire convert` detects and chooses formats
 * through it; the agent and the views use it the same way.
 *
 * The registry and the decoders and encoders it lists are linked into the
 * `tracewire` command and the tests (libtracewire-wire-cli), not into
 * libtracewire.so, which carries only the encoders its reporters use.
 *
 * Locking: none; the table is constant.
 */
#ifndef TW_WIRE_FORMATS_H
#define TW_WIRE_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "wire/core/input.h"
#include "wire/core/output.h"

typedef struct tw__wire_format {
    const char *name;                /* --from / --to */
    const char *content_type;        /* as an HTTP body; NULL: span logs, not sent */
    const tw__wire_decoder *decoder; /* NULL: not readable */
    const tw__wire_encoder *encoder; /* NULL: not writable */
} tw__wire_format;

/* Every format, in detection priority order (a tie goes to the earlier
 * one); NULL-terminated. */
extern const tw__wire_format *const tw__wire_formats[];

/* The format named @name, or NULL. */
const tw__wire_format *tw__wire_format_find(const char *name);

/* Detection: the formats whose decoder scores @head above 0, best first
 * (ties in registry order), at most @max of them in @out; returns how many.
 * @scores (nullable) receives their scores. */
size_t tw__wire_detect(const uint8_t *head, size_t len, const tw__wire_format **out, int *scores,
                       size_t max);

/* ---- the modules -------------------------------------------------------------------------- */

/* Decoders. */
extern const tw__wire_decoder tw__dapper_decoder;         /* wire/dapper/dapper_read.c */
extern const tw__wire_decoder tw__zipkin_v2_json_decoder; /* wire/zipkin/zipkin_v2_json_decode.c */
extern const tw__wire_decoder tw__zipkin_v1_json_decoder; /* wire/zipkin/zipkin_v1_json_decode.c */
extern const tw__wire_decoder
    tw__zipkin_v1_thrift_decoder;                          /* wire/zipkin/zipkin_v1_thrift_read.c */
extern const tw__wire_decoder tw__jaeger_json_decoder;     /* wire/jaeger/jaeger_json_decode.c */
extern const tw__wire_decoder tw__jaeger_thrift_decoder;   /* wire/jaeger/jaeger_thrift_read.c */
extern const tw__wire_decoder tw__otlp_json_decoder;       /* wire/otlp/otlp_json_decode.c */
extern const tw__wire_decoder tw__custom_decoder;          /* wire/custom/custom.c */
extern const tw__wire_decoder tw__otlp_proto_decoder;      /* wire/otlp/otlp_proto_read.c */
extern const tw__wire_decoder tw__zipkin_v2_proto_decoder; /* wire/zipkin/zipkin_proto_read.c */
extern const tw__wire_decoder tw__jaeger_api_v2_json_decoder; /* wire/jaeger/api_v2_json_read.c */

/* Document encoders. */
extern const tw__wire_encoder tw__zipkin_v2_json_encoder;  /* wire/zipkin/zipkin_v2_json_doc.c */
extern const tw__wire_encoder tw__zipkin_v1_json_encoder;  /* wire/zipkin/zipkin_v1_json_encode.c */
extern const tw__wire_encoder tw__jaeger_json_encoder;     /* wire/jaeger/jaeger_json_encode.c */
extern const tw__wire_encoder tw__jaeger_thrift_encoder;   /* wire/jaeger/jaeger_thrift_doc.c */
extern const tw__wire_encoder tw__otlp_json_encoder;       /* wire/otlp/otlp_json_doc.c */
extern const tw__wire_encoder tw__dapper_encoder;          /* wire/dapper/dapper_doc.c */
extern const tw__wire_encoder tw__otlp_proto_encoder;      /* wire/otlp/otlp_proto_doc.c */
extern const tw__wire_encoder tw__zipkin_v2_proto_encoder; /* wire/zipkin/zipkin_proto_doc.c */

#endif /* TW_WIRE_FORMATS_H */
