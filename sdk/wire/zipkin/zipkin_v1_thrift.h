/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v1_thrift.h: the project's one Zipkin v1 Thrift decoder, and the
 * plain-C "v1 span" both Zipkin v1 readers of the bridge fill (internal).
 *
 * Both Thrift protocols: the binary one (TBinaryProtocol, below) and the
 * compact one (TCompactProtocol), which the Jaeger agent's emitZipkinBatch
 * uses on UDP 5775 (`tracewire agent --zipkin-udp`).
 *
 * Where it sits: `tracewire convert` reads Zipkin v1 spans from a raw
 * TBinaryProtocol list<Span> (the body of Zipkin's /api/v1/spans) or from
 * Scribe lines (one base64 Span per entry); sdk/wire/zipkin/zipkin_v1_thrift_read.c
 * calls this decoder, sdk/wire/zipkin/zipkin_v1_json_decode.c fills the same struct
 * from JSON, and sdk/wire/zipkin/zipkin_v1.c converts it to the span model. No GLib or Thrift type
 * appears here.
 *
 * Wire layout (openzipkin/zipkin-api thrift/zipkinCore.thrift, our copy
 * thrift/zipkincore.thrift). TBinaryProtocol: a field
 * is a type byte, a big-endian i16 id and the value; a struct ends with a
 * type byte 0 (STOP); a list is an element type byte and a big-endian i32
 * count; a string/binary is a big-endian i32 length and the bytes.
 *
 *   Span              1 i64 trace_id   3 string name   4 i64 id
 *                     5 i64 parent_id (opt)            6 list<Annotation>
 *                     8 list<BinaryAnnotation>         9 bool debug (opt)
 *                     10 i64 timestamp (opt, us)       11 i64 duration (opt, us)
 *                     12 i64 trace_id_high (opt; non-zero: 128-bit trace)
 *   Annotation        1 i64 timestamp (us)   2 string value   3 Endpoint host (opt)
 *   BinaryAnnotation  1 string key  2 binary value  3 i32 annotation_type
 *                     4 Endpoint host (opt)
 *   Endpoint          1 i32 ipv4 (packed, big-endian bits)  2 i16 port (unsigned
 *                     in practice)  3 string service_name  4 binary ipv6 (opt, 16)
 *   AnnotationType    BOOL 0, BYTES 1, I16 2, I32 3, I64 4, DOUBLE 5, STRING 6
 *
 * Unknown fields are skipped (nested containers at most 64 deep), as
 * generated Thrift code does; a known field with an unexpected type is
 * skipped too. Why not c_glib's generated structs or protocol API: they
 * allocate one GObject per struct and g_malloc the length a string claims
 * before checking that many bytes exist (an abort on hostile input), and a
 * streaming reader needs to tell "the buffer ends inside this span" from
 * "this span is malformed". This decoder only reads a bounded byte range
 * and allocates from the span's arena in proportion to what it decoded.
 *
 * What the decoder drops, as Zipkin's V1ThriftSpanReader does: annotations
 * with timestamp 0 or an empty value, and binary annotations with an empty
 * key (they carry nothing a converter can use). An ipv6 that is not 16
 * bytes is left out (has_ipv6 false) and counted in bad_ipv6.
 *
 * Ownership: a tw__zipkin_v1_span owns its arena (arrays, endpoints and
 * service names, NUL-terminated copies). Annotation values, binary
 * annotation keys and values and the name may point INTO the decoded input
 * (the Thrift decoder does not copy them): they are valid while those input
 * bytes are. Locking: none (one thread per span struct).
 */
#ifndef TW_WIRE_ZIPKIN_THRIFT_H
#define TW_WIRE_ZIPKIN_THRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/core/thrift.h"
#include "wire/model/span_data.h"

/* Zipkin v1 AnnotationType. */
typedef enum tw__zipkin_ba_type {
    TW__ZIPKIN_BOOL = 0,
    TW__ZIPKIN_BYTES = 1,
    TW__ZIPKIN_I16 = 2,
    TW__ZIPKIN_I32 = 3,
    TW__ZIPKIN_I64 = 4,
    TW__ZIPKIN_DOUBLE = 5,
    TW__ZIPKIN_STRING = 6
} tw__zipkin_ba_type;

typedef struct tw__zipkin_endpoint {
    const char *service_name; /* NUL-terminated, never NULL ("" when absent) */
    size_t service_len;
    uint32_t ipv4; /* packed, 192.168.1.1 = 0xc0a80101; 0: absent */
    uint16_t port; /* 0: absent */
    bool has_ipv6;
    uint8_t ipv6[16];
} tw__zipkin_endpoint;

typedef struct tw__zipkin_annotation {
    int64_t timestamp_us;
    const char *value; /* value_len bytes, not necessarily NUL-terminated */
    size_t value_len;
    const tw__zipkin_endpoint *host; /* NULL: none */
} tw__zipkin_annotation;

typedef struct tw__zipkin_binary_annotation {
    const char *key; /* key_len bytes, not necessarily NUL-terminated; as text it
                      * ends at its first NUL, if any */
    size_t key_len;
    const uint8_t *value; /* value_len bytes (may be NULL when 0) */
    size_t value_len;
    int32_t type;                    /* tw__zipkin_ba_type, or another value the input had */
    const tw__zipkin_endpoint *host; /* NULL: none */
} tw__zipkin_binary_annotation;

/* At most this many annotations plus binary annotations per span: bounds
 * what a small hostile input can make us allocate. */
#define TW__ZIPKIN_MAX_ITEMS 65536u

/* An Endpoint the binary decoder's fast path keeps across spans: its raw
 * bytes and what they decode to (zipkin_v1_thrift.c, fast_endpoint_kept).
 * Spans come from the same hosts over and over; decoding an Endpoint again
 * (fields, the service name into the arena) cost several times comparing
 * its bytes with a kept one. One slot per hash of the first 8 bytes (the
 * ipv4 field's header and address, and the next header's type). */
#define TW__ZIPKIN_EP_SLOTS_LOG2 6
#define TW__ZIPKIN_EP_CACHE (1u << TW__ZIPKIN_EP_SLOTS_LOG2) /* slots */
#define TW__ZIPKIN_EP_RAW_MAX 96                             /* longer Endpoints are not kept */
#define TW__ZIPKIN_EP_NAME_MAX 63 /* nor ones with a longer service name */

typedef struct tw__zipkin_endpoint_kept {
    tw__zipkin_endpoint e; /* e.service_name points at name */
    size_t raw_len;        /* 0: empty slot */
    size_t bad_ipv6;       /* what decoding it counted */
    uint64_t head;         /* the first 8 raw bytes, compared first */
    unsigned gen;          /* the span (s->ep_gen) that last handed it out */
    char name[TW__ZIPKIN_EP_NAME_MAX + 1];
    uint8_t raw[TW__ZIPKIN_EP_RAW_MAX];
} tw__zipkin_endpoint_kept;

typedef struct tw__zipkin_v1_span {
    uint64_t trace_id_high; /* 0: 64-bit trace id */
    uint64_t trace_id;
    uint64_t id;
    uint64_t parent_id;
    bool has_parent_id;
    bool has_timestamp;
    bool has_duration;
    bool debug;
    int64_t timestamp_us;
    int64_t duration_us;
    const char *name; /* name_len bytes; "" when absent */
    size_t name_len;
    tw__zipkin_annotation *annotations;
    size_t n_annotations, cap_annotations;
    tw__zipkin_binary_annotation *binary_annotations;
    size_t n_binary_annotations, cap_binary_annotations;
    size_t dropped_annotations; /* dropped by the rules above */
    size_t bad_ipv6;            /* endpoints whose ipv6 was not 16 bytes */
    tw__arena arena;
    _Alignas(max_align_t) unsigned char inline_arena[2048];
    /* Kept across spans: tw__zipkin_v1_span_clear leaves them (they are
     * found by their bytes, so they never go stale); init empties them. A
     * slot handed out in the current span (gen == ep_gen) is not replaced
     * while the span may point at it. */
    tw__zipkin_endpoint_kept ep_kept[TW__ZIPKIN_EP_CACHE];
    unsigned ep_gen; /* counts the fast path's spans */
} tw__zipkin_v1_span;

/* An empty span (all fields zero, name "", no kept Endpoints). Cannot fail. */
void tw__zipkin_v1_span_init(tw__zipkin_v1_span *s);
/* Frees what the span allocated and makes it empty again (the kept
 * Endpoints stay); init'ed spans only. */
void tw__zipkin_v1_span_clear(tw__zipkin_v1_span *s);

/* Builders for the JSON reader (and the decoder): a new zeroed element in
 * the span's arena. NULL on allocation failure or when the span already
 * holds TW__ZIPKIN_MAX_ITEMS items. */
tw__zipkin_annotation *tw__zipkin_v1_add_annotation(tw__zipkin_v1_span *s);
tw__zipkin_binary_annotation *tw__zipkin_v1_add_binary_annotation(tw__zipkin_v1_span *s);
/* A new endpoint with service "" and no address. NULL on allocation failure. */
tw__zipkin_endpoint *tw__zipkin_v1_new_endpoint(tw__zipkin_v1_span *s);
/* A NUL-terminated copy in the span's arena; NULL on allocation failure. */
char *tw__zipkin_v1_strdup(tw__zipkin_v1_span *s, const char *text, size_t len);

/* The decoders below return a tw__thrift_result (wire/core/thrift.h):
 * TW__THRIFT_OK (*size = bytes the value took), SHORT (the input ends
 * inside the value: more bytes may complete it), MALFORMED (cannot be a
 * valid value whatever follows) or NOMEM; @why says why ("byte N: reason",
 * N counted from @data). */

/* The header of a list<Span> at @data: element type 12 (STRUCT) and a
 * count in 0..2^31-1. *size is 5 when decoded. */
tw__thrift_result tw__zipkin_thrift_list_begin(const uint8_t *data, size_t len, uint32_t *count,
                                               size_t *size, char *why, size_t why_size);

/* The same header, for a list whose spans are read as they arrive: the
 * count is not checked against the bytes present (the spans are, one by
 * one), so that a reader never has to hold the whole list to start. */
tw__thrift_result tw__zipkin_thrift_list_header(const uint8_t *data, size_t len, uint32_t *count,
                                                size_t *size, char *why, size_t why_size);

/* The size of the Span struct at @data, without decoding it (cost in
 * proportion to its field count, not its bytes): what a reader uses to
 * tell whether it holds a whole span. */
tw__thrift_result tw__zipkin_thrift_measure_span(const uint8_t *data, size_t len, size_t *size,
                                                 char *why, size_t why_size);

/* Decodes the Span struct at @data into @out (cleared first). On anything
 * but TW__THRIFT_OK, @out is left cleared (empty). */
tw__thrift_result tw__zipkin_thrift_decode_span(const uint8_t *data, size_t len,
                                                tw__zipkin_v1_span *out, size_t *size, char *why,
                                                size_t why_size);

/* The same, always through the protocol-neutral reader: what
 * tw__zipkin_thrift_decode_span falls back to when its binary fast path
 * gives up, for the tests that hold the two to the same results. */
tw__thrift_result tw__zipkin_thrift_decode_span_slow(const uint8_t *data, size_t len,
                                                     tw__zipkin_v1_span *out, size_t *size,
                                                     char *why, size_t why_size);

/* The same Span struct in TCompactProtocol (varint integers, delta field
 * ids, bools in field headers), as the Jaeger agent's emitZipkinBatch
 * carries it on UDP port 5775. */
tw__thrift_result tw__zipkin_compact_decode_span(const uint8_t *data, size_t len,
                                                 tw__zipkin_v1_span *out, size_t *size, char *why,
                                                 size_t why_size);

/* The start of a compact Agent.emitZipkinBatch message (agent.thrift: a
 * CALL or ONEWAY message "emitZipkinBatch" whose args field 1 is
 * list<zipkincore.Span>): *count spans follow at byte *size. */
tw__thrift_result tw__zipkin_compact_emit_begin(const uint8_t *data, size_t len, uint32_t *count,
                                                size_t *size, char *why, size_t why_size);

#endif /* TW_WIRE_ZIPKIN_THRIFT_H */
