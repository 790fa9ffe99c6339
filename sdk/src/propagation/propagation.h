/* SPDX-License-Identifier: Apache-2.0 */
/*
 * propagation/propagation.h: the internal interface of the propagation
 * codecs (Jaeger, B3, W3C, binary) and of the propagator that combines them.
 *
 * Where it sits: tw_tracer_inject/extract (tracer.c) and the public
 * tw_propagator_* calls (composite.c) read and write carriers; each text
 * codec (jaeger.c, b3.c, w3c.c) is a tw__codec_vtable that names the headers
 * it reads and turns them into a context, or writes a context as headers.
 * binary.c is the one non-text format. support.c holds what they share: hex
 * and percent coding, the scratch buffer, warnings and the baggage builder.
 *
 * Extract runs in two phases, so that the carrier is read exactly once for
 * all codecs of a propagator: (1) the scan calls the carrier's foreach once
 * and files every key that some codec asked for into a slot (single-valued
 * headers: the first value, copied; list headers and prefixes: a codec
 * callback parses them on the spot, so their size is bounded by the limits,
 * not by the carrier); (2) each codec, in the propagator's order, reads its
 * slots. After phase 1 the scan's buffer never grows again, so pointers into
 * it stay valid until the scan is freed (phase 2 may still report warnings).
 *
 * Nothing here is shared between threads: a scan lives on the stack of one
 * extract call; propagators and codec tables are immutable. Rules and limits
 * are in docs/PROPAGATION.md (keep the two in step).
 */
#ifndef TW_PROPAGATION_INTERNAL_H
#define TW_PROPAGATION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "wire/core/hex.h"

/* ---- limits (docs/PROPAGATION.md, "Limits") ------------------------------------------------ */

#define TW__STR_(x) #x
#define TW__STR(x) TW__STR_(x) /* a limit's value as a string literal, for messages */

#define TW__UBER_TRACE_ID_MAX 512 /* bytes of an uber-trace-id value, before %-decoding */
#define TW__DEBUG_ID_MAX 256      /* bytes of a jaeger-debug-id value */
#define TW__B3_SINGLE_MAX 128     /* bytes of a b3 value (the longest valid one has 68) */
#define TW__B3_MULTI_MAX 64       /* bytes of one X-B3-* value (the longest valid one has 32) */
#define TW__TRACEPARENT_MAX 512   /* bytes of a traceparent value (future versions may grow) */
#define TW__TRACESTATE_MAX_MEMBERS 32
#define TW__TRACESTATE_MAX_BYTES 512   /* what we propagate; W3C: "at least 512" */
#define TW__TRACESTATE_KEY_MAX 256     /* characters of a key (W3C grammar) */
#define TW__TRACESTATE_VALUE_MAX 256   /* characters of a value (W3C grammar) */
#define TW__TRACESTATE_LONG_MEMBER 128 /* longer members are truncated first (W3C) */
#define TW__WARNINGS_SHOWN 16          /* per extract; the rest are counted and summarised */
#define TW__SLOTS_MAX 24               /* single-valued headers of all codecs of a propagator */

/* ---- hex: wire/core/hex.h (tw__hex_value, tw__hex_u64, tw__parse_hex) ------------------ */

/* ---- scratch buffer ----------------------------------------------------------------------- */

/* A byte buffer that starts in caller-provided (stack) storage and moves to
 * the heap only when it outgrows it, so the common case allocates nothing.
 * After a failed allocation `has_failed` is set and appends do nothing. */
typedef struct tw__sbuf {
    char *data;
    size_t len, cap;
    char *stack; /* the initial storage, never freed */
    bool has_failed;
} tw__sbuf;

void tw__sbuf_init(tw__sbuf *b, char *stack, size_t size);
void tw__sbuf_free(tw__sbuf *b);
/* Appends @n bytes; returns their offset, or SIZE_MAX on allocation failure. */
size_t tw__sbuf_append(tw__sbuf *b, const void *src, size_t n);
static inline size_t tw__sbuf_append_str(tw__sbuf *b, const char *s)
{
    return tw__sbuf_append(b, s, strlen(s));
}
/* Appends @src[0..n) percent-encoded: bytes whose @keep entry is non-zero stay, the rest
 * become %XX (upper-case hex, RFC 3986 2.1). Returns false on allocation failure. */
bool tw__sbuf_append_pct(tw__sbuf *b, const char *src, size_t n, const uint8_t keep[256]);
/* NUL-terminates the contents (not counted in len); returns data, or NULL after a failure. */
const char *tw__sbuf_cstr(tw__sbuf *b);

/* ---- text helpers ------------------------------------------------------------------------- */

/* HTTP optional white space (RFC 7230 3.2.3): SP and HTAB. */
static inline bool tw__is_ows(char c)
{
    return c == ' ' || c == '\t';
}
/* Trims OWS from both ends of s[0..*n); returns the new start. */
const char *tw__trim_ows(const char *s, size_t *n);
/* ASCII-only case-insensitive comparison of @n bytes; @lower is already lower case. */
bool tw__equals_lower(const char *s, const char *lower, size_t n);
/* RFC 7230 tchar: the characters of a header name / W3C baggage key. */
extern const uint8_t tw__is_tchar[256];
bool tw__is_token(const char *s, size_t n);

/* Decodes %XX (either case) and, when @plus_is_space, '+' as a space, from
 * @src[0..n) into @dst (room for n + 1 bytes; may be @src itself). Returns
 * the decoded length, or SIZE_MAX when a '%' is not followed by two hex
 * digits or a byte decodes to NUL (which a C string cannot hold); @dst is
 * then unspecified. NUL-terminates on success. */
size_t tw__pct_decode(const char *src, size_t n, char *dst, bool plus_is_space);

/* A printable, quoted-safe excerpt of untrusted bytes for messages: at most
 * 48 source bytes, non-printables and quotes as \xNN, "..." when cut. */
#define TW__EXCERPT_SIZE 200
void tw__excerpt(char out[TW__EXCERPT_SIZE], const char *s, size_t n);

/* ---- the scan: phase 1 of extract ---------------------------------------------------------- */

/* Lists of key/value records the scan keeps: baggage sources (a propagator
 * merges them in the order of its codecs, tw__codec_vtable.sources) and the
 * raw tracestate header values. */
typedef enum tw__source {
    TW__SRC_UBERCTX = 0,    /* uberctx-{key}: value */
    TW__SRC_JAEGER_BAGGAGE, /* jaeger-baggage: k=v, k=v */
    TW__SRC_W3C_BAGGAGE,    /* baggage: k=v;props, k=v */
    TW__SRC_BINARY,         /* the binary format's items */
    TW__SRC_TRACESTATE,     /* raw tracestate values (value only), parsed in phase 2 */
    TW__SRC_COUNT
} tw__source;

/* Raw tracestate bytes kept (all headers together). A valid list of 32
 * members of the longest size with OWS fits; more is discarded unread. */
#define TW__TRACESTATE_MAX_RAW 20480

/* One header slot: where the first value of a single-valued header went, or
 * whatever a codec callback keeps there. */
typedef struct tw__slot {
    uint32_t offset;  /* of the NUL-terminated value in the scan's buffer */
    uint32_t len;     /* value length (also set when the value was too long to keep) */
    uint32_t count;   /* how many times the header occurred */
    bool is_present;  /* a value is stored at offset */
    bool is_overlong; /* the first value was longer than the header's max_len; not kept */
    bool is_invalid;  /* set by a codec callback (tracestate: the list is discarded) */
} tw__slot;

typedef struct tw__scan tw__scan;

/* A header a codec reads. Single-valued headers (on_value NULL) keep their
 * first value, OWS-trimmed, up to max_len bytes. Headers with on_value get
 * every value (and, for a prefix, the whole key). */
typedef struct tw__header_spec {
    const char *name; /* lower case; for a prefix, the prefix ("uberctx-") */
    size_t name_len;
    bool is_prefix;
    size_t max_len;
    void (*on_value)(tw__scan *scan, tw__slot *slot, const char *key, size_t key_len,
                     const char *value, size_t value_len);
} tw__header_spec;

/* Per-list counters and the list itself (offsets + 1 of records; 0 = none). */
typedef struct tw__list {
    size_t n_items;
    size_t n_bytes; /* key + value bytes */
    uint32_t head, tail;
} tw__list;

/* A record in the scan buffer, followed by key, NUL, value, NUL. Records sit
 * at any offset: read and write the header with memcpy. */
typedef struct tw__record {
    uint32_t next; /* offset + 1 of the next record of the same list, 0 for the last */
    uint32_t key_len;
    uint32_t value_len;
} tw__record;

struct tw__scan {
    tw_format format;
    tw__sbuf buf; /* slot values and baggage records */
    tw__slot slots[TW__SLOTS_MAX];
    tw__list lists[TW__SRC_COUNT];
    tw_extract_warning_fn warn;
    void *warn_data;
    size_t n_warnings; /* problems found (all of them, shown or not) */
    tw_status failed;  /* TW_E_NOMEM once an allocation failed, else TW_OK */
};

void tw__scan_init(tw__scan *scan, tw_format format, tw_extract_warning_fn warn, void *warn_data,
                   char *stack, size_t stack_size);
void tw__scan_free(tw__scan *scan);

/* Reports a baggage/tracestate problem: counted always; the first
 * TW__WARNINGS_SHOWN per extract go to the warning callback and the logger
 * (formatted only when one of them listens). */
void tw__scan_warn(tw__scan *scan, const char *fmt, ...) TW_PRINTF(2, 3);
/* At the end of an extract: one line for the problems that were not shown. */
void tw__scan_warn_summary(tw__scan *scan);

/* Stores the first value of a single-valued header into @slot (the default
 * on_value). */
void tw__scan_keep_first(tw__scan *scan, tw__slot *slot, const tw__header_spec *spec,
                         const char *value, size_t value_len);

/* Adds a decoded baggage item from @source (@what names the header in
 * warnings). Applies, per source: a key must not be empty; the first value
 * of a key wins; TW_BAGGAGE_MAX_ITEM_BYTES per item, TW_BAGGAGE_MAX_ITEMS
 * and TW_BAGGAGE_MAX_TOTAL_BYTES per source. Each refusal is a warning. */
void tw__scan_add_baggage(tw__scan *scan, tw__source source, const char *what, const char *key,
                          size_t key_len, const char *value, size_t value_len);

/* Builds the baggage of the extracted context from @sources, in that order
 * (the first value of a key wins across sources; the global limits apply
 * again). Returns NULL for no items (*is_empty true) or on allocation
 * failure (*is_empty false). */
tw__baggage *tw__scan_build_baggage(tw__scan *scan, const tw__source *sources, size_t n_sources,
                                    bool *is_empty);

/* Appends a record to @list without any check; false on allocation failure. */
bool tw__scan_push(tw__scan *scan, tw__source list, const char *key, size_t key_len,
                   const char *value, size_t value_len);
/* Reads the record at @pos (offset + 1, as in tw__list.head and tw__record.next):
 * sets the borrowed key and value and returns the position of the next one. */
uint32_t tw__scan_record(const tw__scan *scan, uint32_t pos, const char **key, size_t *key_len,
                         const char **value, size_t *value_len);

/* ---- codecs: phase 2 of extract, and inject ------------------------------------------------ */

typedef enum tw__found {
    TW__FOUND_NONE = 0, /* none of the codec's headers */
    TW__FOUND_HINT,     /* no trace context, but a sampling decision or a debug id */
    TW__FOUND_CONTEXT,  /* a valid trace context */
    TW__FOUND_MALFORMED /* the trace context header is present but bad */
} tw__found;

typedef struct tw__extracted {
    tw__found found;
    tw__context_parts parts; /* baggage is filled in by the propagator */
    /* MALFORMED: which header, why, and the value (borrowed from the scan). */
    const char *header;
    char reason[160];
    const char *value;
    size_t value_len;
    /* W3C: the tracestate to keep (parts.tracestate points here). */
    char tracestate[TW__TRACESTATE_MAX_BYTES + 1];
} tw__extracted;

/* Sets @out to MALFORMED for @header with a printf-style reason. */
void tw__extracted_malformed(tw__extracted *out, const char *header, const tw__scan *scan,
                             const tw__slot *slot, const char *fmt, ...) TW_PRINTF(5, 6);

/* The value of a present slot, or NULL. */
static inline const char *tw__slot_value(const tw__scan *scan, const tw__slot *slot)
{
    return slot->is_present ? scan->buf.data + slot->offset : NULL;
}

/*
 * A text codec. `headers` are the keys it reads; during extract it receives
 * its own slots, in the same order. Implementers may assume: @ctx has ids,
 * @format is TEXT_MAP or HTTP_HEADERS, and @out is zeroed.
 */
typedef struct tw__codec_vtable {
    size_t size;
    tw_codec id;
    const char *name; /* as JAEGER_PROPAGATION spells it */
    const tw__header_spec *headers;
    size_t n_headers;
    const tw__source *sources; /* baggage sources, in priority order */
    size_t n_sources;
    tw_status (*inject)(const tw_span_context *ctx, tw_format format,
                        const tw_carrier_writer *carrier);
    void (*extract)(tw__scan *scan, const tw__slot *slots, tw__extracted *out);
} tw__codec_vtable;

extern const tw__codec_vtable tw__codec_jaeger;
extern const tw__codec_vtable tw__codec_b3;
extern const tw__codec_vtable tw__codec_b3_single;
extern const tw__codec_vtable tw__codec_w3c;

/* The Jaeger flags byte a codec writes for @ctx: deferred contexts are
 * written as not sampled (no format but B3 can say "defer"). */
static inline unsigned int tw__wire_flags(const tw_span_context *ctx)
{
    unsigned int flags = ctx->flags & TW__FLAGS_WIRE;
    if (ctx->flags & TW__FLAG_DEFERRED)
        flags &= ~(unsigned int)(TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
    return flags;
}

/* ---- W3C tracestate (tracestate.c) --------------------------------------------------------- */

/* The W3C grammar (Trace Context, "tracestate Header Field Values"):
 *   key   = ( lcalpha / DIGIT ) 0*255 ( lcalpha / DIGIT / "_" / "-" / "*" / "/" / "@" )
 *   value = 0*255( %x20 / nblk-chr ) nblk-chr;  nblk-chr = %x21-2B / %x2D-3C / %x3E-7E */
bool tw__ts_key_is_valid(const char *k, size_t n);
bool tw__ts_value_is_valid(const char *v, size_t n);

/* A member of a list: "key=value" at @s, @len bytes, the key @key_len of them. */
typedef struct tw__ts_member {
    const char *s;
    size_t len, key_len;
} tw__ts_member;

/* Drops whole members of @m[0..*n) until the joined list fits TW__TRACESTATE_MAX_BYTES:
 * those over TW__TRACESTATE_LONG_MEMBER bytes first, from the right, then others from
 * the right; the first @pinned members are never dropped. @dropped (nullable) hears
 * each one. */
void tw__ts_fit(tw__ts_member *m, size_t *n, size_t pinned,
                void (*dropped)(void *data, const tw__ts_member *member, const char *why),
                void *data);
/* Writes the members joined with ',' and a NUL to @out (room for the joined length
 * + 1); returns the length. */
size_t tw__ts_join(const tw__ts_member *m, size_t n, char *out);

/* W3C traceparent "00-<32 hex>-<16 hex>-<flags>" of a context with ids
 * (w3c.c), NUL-terminated in @v. */
void tw__w3c_traceparent(const tw_span_context *ctx, char v[56]);

/* ---- propagator (composite.c) -------------------------------------------------------------- */

/* tw_propagator_extract, also returning the number of problems found (the
 * tracer counts them in TW_TRACER_EXTRACT_WARNINGS). */
tw_span_context *tw__propagator_extract(const tw_propagator *propagator, tw_format format,
                                        const tw_carrier_reader *carrier,
                                        tw_extract_warning_fn warn, void *warn_data,
                                        size_t *n_warnings, tw_error **err);
/* The default propagator (Jaeger only); NULL on allocation failure. */
tw_propagator *tw__propagator_default(void);

/* tw_binary_extract, also returning the number of problems found. */
tw_span_context *tw__binary_extract(const uint8_t *buf, size_t len, tw_extract_warning_fn warn,
                                    void *warn_data, size_t *n_warnings, tw_error **err);

#endif /* TW_PROPAGATION_INTERNAL_H */
