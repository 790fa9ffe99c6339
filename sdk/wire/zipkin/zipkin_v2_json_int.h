/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/zipkin/zipkin_v2_json_int.h: what the Zipkin v2 JSON decoder
 * (zipkin_v2_json_decode.c) and its direct reader (zipkin_v2_json_direct.c)
 * share: the members of one span object as the direct reader finds them in
 * the input, before the decoder builds the span from them with the same
 * model calls, in the same order, as its token path (decode_span).
 *
 * Locking: none (the caller's thread).
 */
#ifndef TW_WIRE_ZIPKIN_ZIPKIN_V2_JSON_INT_H
#define TW_WIRE_ZIPKIN_ZIPKIN_V2_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire/core/json_direct.h"

/* Per span: more tags or annotations are declined (the token path reads
 * them); a writer's span has a dozen tags and a few annotations. */
#define TW__Z2D_MAX_TAGS 64
#define TW__Z2D_MAX_ANNOTATIONS 32

/* A string of the input (in place, not NUL-terminated) or of the scratch
 * buffer (unescaped); never holds U+0000 (json_direct.h declines it). */
typedef struct tw__z2d_str {
    const char *s;
    size_t len;
} tw__z2d_str;

/* The endpoint memo (tw__z2d_memo): its slots and the longest text it keeps. */
#define TW__Z2D_MEMO_SETS 64 /* a power of two */
#define TW__Z2D_MEMO_WAYS 4
#define TW__Z2D_MEMO_SLOTS (TW__Z2D_MEMO_SETS * TW__Z2D_MEMO_WAYS)
#define TW__Z2D_MEMO_TEXT 128

/* An Endpoint as given; s NULL: the member was absent or null. */
typedef struct tw__z2d_endpoint {
    tw__z2d_str service, ipv4, ipv6;
    int64_t port;  /* as given (the decoder applies Zipkin's range rules) */
    bool has_port; /* an integer was given */
} tw__z2d_endpoint;

/* A string of a memo slot's text: where it starts in it, its length. */
typedef struct tw__z2d_memo_str {
    uint8_t off, len;
    bool is_set;
} tw__z2d_memo_str;

/* One endpoint object's text as read before, with what the reader took of
 * it (its strings as places in the text: all were plain, none unescaped). */
typedef struct tw__z2d_memo_slot {
    uint64_t gen;  /* which text the slot holds (0: none): a new one per store */
    uint64_t hash; /* of its first bytes (zipkin_v2_json_direct.c) */
    size_t len;
    tw__z2d_memo_str service, ipv4, ipv6;
    bool has_port;
    int64_t port;
    char text[TW__Z2D_MEMO_TEXT];
} tw__z2d_memo_slot;

/*
 * Endpoint objects read before, by their text. A batch of spans comes from
 * a few services, and every span repeats its localEndpoint (and a client's
 * remoteEndpoint) byte for byte: a text equal in full to one kept here is
 * taken as the reader took it then (the same bytes read the same way),
 * without reading it again, and the decoder keeps what it made of a slot's
 * text (its addresses, its process) by the slot's gen. Zeroed to start.
 */
typedef struct tw__z2d_memo {
    uint64_t last_gen;
    uint8_t victim[TW__Z2D_MEMO_SETS]; /* the way of each set the next store takes */
    tw__z2d_memo_slot slots[TW__Z2D_MEMO_SLOTS];
} tw__z2d_memo;

typedef struct tw__z2d_pair {
    tw__z2d_str key, value;
} tw__z2d_pair;

typedef struct tw__z2d_annotation {
    int64_t timestamp; /* as given, in the input's unit */
    tw__z2d_str value;
} tw__z2d_annotation;

/*
 * One span object as the direct reader took it. Only the common shape is
 * taken: every member one the decoder knows, at most once, with the JSON
 * type the decoder reads without a warning (null for an optional member
 * is taken as absent, as the token path takes it): ids as strings, kind a
 * string, times integers, debug and shared booleans, endpoints objects of
 * serviceName/ipv4/ipv6 strings and an integer port, annotations objects of
 * an integer timestamp and a string value, tags strings. The rules that
 * need the decoder's options or the model (id digits, kind names, address
 * forms, time units, ranges) are the decoder's, in build_direct.
 */
typedef struct tw__z2d_span {
    tw__z2d_str trace_id, id, parent_id, name, kind; /* s NULL: absent or null */
    bool has_timestamp, has_duration;
    int64_t timestamp, duration;
    bool debug, shared; /* true given */
    bool has_local, has_remote;
    tw__z2d_endpoint local, remote;
    /* The endpoints' text as given (s NULL: absent): the same text gives the
     * same process, which the decoder then keeps from the span before. */
    tw__z2d_str local_text, remote_text;
    /* The memo slots that held the endpoints' texts (-1: none, or no memo)
     * and their gens then (the remote endpoint's text may take the slot of
     * the local one's, so the slot alone does not tell which text). */
    int local_slot, remote_slot;
    uint64_t local_gen, remote_gen;
    size_t n_tags, n_annotations;
    tw__z2d_pair tags[TW__Z2D_MAX_TAGS];
    tw__z2d_annotation annotations[TW__Z2D_MAX_ANNOTATIONS];
} tw__z2d_span;

/* Reads the span object that starts @text (its '{', at most @len bytes,
 * blanks allowed between tokens) into @out, with @memo (NULL: none) for its
 * endpoints (what it takes is the same with or without one): true when it is valid JSON of
 * the common shape above that ends within @len bytes, *used then its length
 * up to its closing brace (what follows is not looked at). Escaped strings
 * are unescaped into @sc, which must outlive @out's use. False otherwise
 * (the text may still be valid JSON, or a span the token path reads): the
 * caller then reads it the general way. Reads only text[0 .. len - 1]. */
bool tw__zipkin_v2_direct_parse(const char *text, size_t len, tw__jd_scratch *sc,
                                tw__z2d_memo *memo, tw__z2d_span *out, size_t *used);

#endif /* TW_WIRE_ZIPKIN_ZIPKIN_V2_JSON_INT_H */
