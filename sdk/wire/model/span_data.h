/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/model/span_data.h: the one span model of tracewire (internal).
 *
 * Every producer of spans (the SDK's recording span, later the bridge's
 * readers) fills a tw__span_data; every encoder in wire/ consumes one. It is
 * the "finished span" of the SDK's flow: after tw_span_finish the record
 * is immutable and reference-counted, so the composite reporter can hand the
 * same record to several senders without copying.
 *
 * Memory: a record owns one arena (a chain of blocks, the first inline in the
 * record's allocation). Every string, tag array and log array lives in the
 * arena, so building a span costs one malloc in the common case and freeing
 * it costs one free per block. Strings are NUL-terminated and also carry
 * their length (values may contain NUL bytes only when binary).
 *
 * Locking: none. A record is written by one thread at a time while open
 * (the span's owner) and is read-only once finished; the reference count is
 * atomic.
 */
#ifndef TW_MODEL_SPAN_DATA_H
#define TW_MODEL_SPAN_DATA_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tracewire/common.h"
#include "wire/core/copy_short.h"

/* Jaeger span flags (uber-trace-id and jaeger.thrift Span.flags). */
#define TW__FLAG_SAMPLED 0x01u
#define TW__FLAG_DEBUG 0x02u
#define TW__FLAG_FIREHOSE 0x08u

/* ---- arena ---------------------------------------------------------------------------- */

typedef struct tw__arena_block {
    struct tw__arena_block *next;
    size_t size; /* usable bytes in data[] */
    size_t used;
    max_align_t data[]; /* flexible, aligned storage */
} tw__arena_block;

typedef struct tw__arena {
    tw__arena_block *head;  /* block currently allocated from */
    tw__arena_block *extra; /* heap blocks to free (excludes the inline first block) */
} tw__arena;

/* ---- typed values ---------------------------------------------------------------------- */

/* A tag or a log field. key and string/binary payloads live in the arena. */
typedef struct tw__tag {
    const char *key;
    union {
        const char *str; /* NUL-terminated, len bytes */
        const uint8_t *bin;
        double dbl;
        bool boolean;
        int64_t i64;
    } v;
    size_t len;       /* bytes of str/bin */
    uint32_t key_len; /* keys longer than 4 GiB are refused */
    tw_value_type type;
} tw__tag; /* 32 bytes: the record keeps several inline */

typedef struct tw__log {
    int64_t timestamp_us; /* microseconds since the epoch */
    tw__tag *fields;
    size_t n_fields;
} tw__log;

typedef enum tw__ref_type { TW__REF_CHILD_OF = 0, TW__REF_FOLLOWS_FROM = 1 } tw__ref_type;

typedef struct tw__ref {
    tw__ref_type type;
    uint64_t trace_id_high;
    uint64_t trace_id_low;
    uint64_t span_id;
} tw__ref;

/* The process (Jaeger Batch.process): service name and process tags. */
typedef struct tw__process {
    const char *service_name;
    tw__tag *tags;
    size_t n_tags;
    size_t cap_tags;
    tw__arena arena;
} tw__process;

/* ---- the span record ------------------------------------------------------------------ */

typedef struct tw__span_data {
    /* The record pool's link while unused: first, so that the rest of a
     * pooled record is one range to poison (span_data.c). */
    struct tw__span_data *next_free;
    atomic_uint refcount;
    /* strlen(operation), kept where it is known so that encoders need not
     * measure it; UINT32_MAX when longer than that (then they measure). Set
     * with the operation (tw__span_data_set_operation). */
    uint32_t operation_len;
    /* Set by tw__span_data_new, as is everything above; it zeroes the
     * fields from trace_id_high to inline_tags (the fewer, the cheaper a
     * record: every sampled span takes one). */
    const char *operation;
    tw__tag *tags; /* inline_tags, or an array in the arena */
    size_t cap_tags;
    tw__arena arena;

    uint64_t trace_id_high; /* 0 for 64-bit trace ids */
    uint64_t trace_id_low;  /* never 0 */
    uint64_t span_id;       /* never 0 */
    uint64_t parent_id;     /* 0 for a root span */
    uint32_t flags;         /* TW__FLAG_* */
    /* A Zipkin SERVER half that shares its client's span id (Zipkin v2
     * `shared`). Only the bridge's readers set it: the SDK gives every span
     * its own id. */
    bool shared;
    /* The span's duration was not recorded (a one-way RPC half, a span the
     * bridge read without an end): duration_us is 0 and encoders that can
     * say "absent" (Zipkin) do. Only the bridge's readers set it. */
    bool is_duration_unknown;

    int64_t start_us;    /* microseconds since the epoch */
    int64_t duration_us; /* >= 0 */

    tw__ref *refs;
    size_t n_refs;

    size_t n_tags;

    tw__log *logs;
    size_t n_logs;
    size_t cap_logs;

    /* What the limits cut off while the span was open (marked as tags at finish). */
    uint32_t dropped_tags;
    uint32_t dropped_logs;
    uint32_t truncated_values;
    uint32_t exempt_tags; /* structural tags (sampler.*, tracewire.*): not capped */

    /* The first tags live in the record itself, so a typical span's tag
     * array costs no arena space and never triggers a second allocation. */
    tw__tag inline_tags[6];
} tw__span_data;

/* Inline arena bytes in the same allocation as the record: enough for the
 * strings of a typical span (name, a handful of tag keys and values) without
 * a second malloc. */
#define TW__SPAN_INLINE_ARENA 384

/* An empty record with refcount 1, recycled when possible (see the record
 * pool in span_data.c); NULL on allocation failure. */
tw__span_data *tw__span_data_new(void);
/* Frees the records kept for reuse by the shared pool and by the calling
 * thread (records of other threads are freed when those threads exit). */
void tw__span_data_pool_trim(void);
/* The heap bytes @s holds: its record, its arena blocks and malloc's
 * overhead for each, a word rounded to 16 bytes on glibc (what a queue of
 * records costs in memory). Inline for the common case, a span whose
 * strings fit in its record: the reporter queue counts every span. */
#define TW__SPAN_RECORD_BYTES                                                                      \
    (((sizeof(tw__span_data) + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1)) +        \
     TW__SPAN_INLINE_ARENA)
size_t tw__span_data_footprint_blocks(const tw__span_data *s);
static inline size_t tw__span_data_footprint(const tw__span_data *s)
{
    size_t bytes = TW__SPAN_RECORD_BYTES + 16;
    return s->arena.extra ? bytes + tw__span_data_footprint_blocks(s) : bytes;
}
/* Adds a reference; returns @s. */
tw__span_data *tw__span_data_ref(tw__span_data *s);
/* Drops a reference, freeing the record and its arena at zero. NULL is a no-op. */
void tw__span_data_unref(tw__span_data *s);

/* Arena allocation: NULL on allocation failure. Never returns memory that
 * outlives the arena. Inline: the decoders make a dozen per span, and the
 * common case (room in the current block) is a few instructions. */
void *tw__arena_alloc_block(tw__arena *a, size_t need); /* a new block; @need aligned */
static inline void *tw__arena_alloc(tw__arena *a, size_t size)
{
    const size_t align = _Alignof(max_align_t);
    size_t need = size == 0 ? align : (size + align - 1) & ~(align - 1);
    tw__arena_block *b = a->head;
    if (__builtin_expect(b && need >= size && b->size - b->used >= need, 1)) {
        void *p = (char *)b->data + b->used;
        b->used += need;
        return p;
    }
    return tw__arena_alloc_block(a, size);
}
/* Copies len bytes and a NUL into the arena. */
char *tw__arena_strndup(tw__arena *a, const char *str, size_t len);
void tw__arena_init_inline(tw__arena *a, void *block_mem, size_t block_total);
void tw__arena_init(tw__arena *a);
void tw__arena_release(tw__arena *a);

/* Record builders (used while the span is open; the caller enforces limits).
 * Each returns false on allocation failure and leaves the record unchanged. */
bool tw__span_data_set_operation(tw__span_data *s, const char *op, size_t len);
/* The slot for the next tag: the caller fills the whole tag, then commits
 * it by incrementing n_tags, so a failed fill leaves the record unchanged.
 * NULL on allocation failure. Inline: every reader takes one per tag, and
 * the array usually has room. */
tw__tag *tw__span_data_grow_tags(tw__span_data *s); /* the array is full */
static inline tw__tag *tw__span_data_push_tag(tw__span_data *s)
{
    if (__builtin_expect(s->n_tags < s->cap_tags, 1))
        return &s->tags[s->n_tags];
    return tw__span_data_grow_tags(s);
}
tw__log *tw__span_data_push_log(tw__span_data *s, size_t n_fields);
bool tw__span_data_add_ref(tw__span_data *s, tw__ref_type type, uint64_t trace_hi,
                           uint64_t trace_lo, uint64_t span_id);

/* ---- the tag store ----------------------------------------------------------------------- */

/* Key and value lengths tw__tag_store takes inline: 4 GiB (a key's bound),
 * a quarter of the address space where that is less, so that sums of them
 * cannot overflow. */
#define TW__TAG_FAST_MAX ((size_t)(SIZE_MAX / 4 < UINT32_MAX ? SIZE_MAX / 4 : UINT32_MAX))

/* tw__arena_alloc for 1 to 2 * TW__TAG_FAST_MAX + 2 bytes (no overflow
 * to test). */
static inline void *tw__arena_alloc_small(tw__arena *a, size_t size)
{
    const size_t align = _Alignof(max_align_t);
    size_t need = (size + align - 1) & ~(align - 1);
    tw__arena_block *b = a->head;
    if (__builtin_expect(b && b->size - b->used >= need, 1)) {
        void *p = (char *)b->data + b->used;
        b->used += need;
        return p;
    }
    return tw__arena_alloc_block(a, size);
}

/* tw__tag_store's rare case, out of line: a string or binary with a key
 * or a value longer than TW__TAG_FAST_MAX. */
bool tw__tag_store_rare(tw__arena *a, tw__tag *tag, const char *key, size_t key_len,
                        tw_value_type type, const char *src, size_t len);

/* The one store of a tag (every setter and builder below is this): @key's
 * @key_len bytes (no NUL among them; need not be NUL-terminated) and a NUL,
 * then for a string or a binary its bytes and a NUL (a string's; harmless
 * after a binary), in one arena allocation; a NULL string or binary is
 * empty. @tag is written only on success: false on allocation failure, a
 * key over TW__TAG_FAST_MAX bytes for a scalar or over 4 GiB, or an unknown
 * type. Always inline: it is on every reader's path, a dozen times a span,
 * and where the type is known (a string tag) the compiler keeps only that
 * case. (Nothing takes @value's address further, so that a caller's
 * tw_value stays in registers.) */
static inline __attribute__((always_inline)) bool
tw__tag_store(tw__arena *a, tw__tag *tag, const char *key, size_t key_len, const tw_value *value)
{
    tw_value_type type = value->type;
    if (type == TW_VALUE_STRING || type == TW_VALUE_BINARY) {
        const char *src = value->as.str; /* as.str and as.bin are the same pointer */
        size_t len = src ? value->len : 0;
        if (__builtin_expect((key_len | len) > TW__TAG_FAST_MAX, 0))
            return tw__tag_store_rare(a, tag, key, key_len, type, src, len);
        char *k = tw__arena_alloc_small(a, key_len + len + 2);
        if (!k)
            return false;
        tw__copy_short(k, key, key_len);
        k[key_len] = '\0';
        char *copy = k + key_len + 1;
        tw__copy_short(copy, src, len);
        copy[len] = '\0';
        tag->key = k;
        tag->v.str = copy;
        tag->len = len;
        tag->key_len = (uint32_t)key_len;
        tag->type = type;
        return true;
    }
    if (__builtin_expect(key_len > TW__TAG_FAST_MAX, 0))
        return false; /* over 4 GiB (a quarter of a 32-bit address space) */
    int64_t bits;
    if (type == TW_VALUE_BOOL)
        bits = value->as.boolean; /* its other bytes zero, as a tag built whole had them */
    else if (type == TW_VALUE_DOUBLE || type == TW_VALUE_INT64)
        bits = value->as.i64; /* a double's bits: the same 8 bytes */
    else
        return false;
    char *k = tw__arena_alloc_small(a, key_len + 1);
    if (!k)
        return false;
    tw__copy_short(k, key, key_len);
    k[key_len] = '\0';
    tag->key = k;
    if (type == TW_VALUE_BOOL) {
        tag->v.i64 = 0;
        tag->v.boolean = (bool)bits;
    } else {
        tag->v.i64 = bits;
    }
    tag->len = 0;
    tag->key_len = (uint32_t)key_len;
    tag->type = type;
    return true;
}

/* Length of the longest prefix of str[0..cap) that ends on a UTF-8
 * character boundary, so truncation never splits a multi-byte character.
 * @str must hold more than @cap bytes (str[cap] is read). */
size_t tw__utf8_cut(const char *str, size_t cap);

/* tw__tag_set_n when the value is cut (out of line: only the SDK caps). */
bool tw__tag_set_cut(tw__arena *a, tw__tag *tag, const char *key, size_t key_len,
                     const tw_value *value, size_t value_cap, bool *was_truncated);

/* Fill a tag in the record's arena, the key's length given (@key_len
 * bytes, no NUL among them). `value_cap` bounds copied string/binary bytes
 * (SIZE_MAX for none); returns false on allocation failure; sets
 * *was_truncated when the value was cut. A cut string is cut at a UTF-8
 * character boundary. */
static inline bool tw__tag_set_n(tw__arena *a, tw__tag *tag, const char *key, size_t key_len,
                                 const tw_value *value, size_t value_cap, bool *was_truncated)
{
    /* The readers pass SIZE_MAX: then the test folds away. */
    if (value_cap != SIZE_MAX &&
        (value->type == TW_VALUE_STRING || value->type == TW_VALUE_BINARY) && value->as.str &&
        value->len > value_cap)
        return tw__tag_set_cut(a, tag, key, key_len, value, value_cap, was_truncated);
    return tw__tag_store(a, tag, key, key_len, value);
}
/* The same with a NUL-terminated key. */
static inline bool tw__tag_set(tw__arena *a, tw__tag *tag, const char *key, const tw_value *value,
                               size_t value_cap, bool *was_truncated)
{
    return tw__tag_set_n(a, tag, key, strlen(key), value, value_cap, was_truncated);
}

/* The public view of a stored tag (pointers borrowed from the record). */
void tw__tag_to_value(const tw__tag *t, tw_value *out);

/* Finds the last tag with this key, or NULL. */
const tw__tag *tw__span_data_find_tag(const tw__span_data *s, const char *key);

/* Process records. */
void tw__process_init(tw__process *p);
void tw__process_clear(tw__process *p);
bool tw__process_set_service(tw__process *p, const char *name);
/* The same with the name's length given (@len bytes, no NUL among them). */
bool tw__process_set_service_n(tw__process *p, const char *name, size_t len);
/* Empties @p for the next record of a reader, keeping its arena's block
 * when it has one (tw__process_clear frees it): a reader that describes a
 * process per span then allocates nothing per span. */
void tw__process_reset(tw__process *p);
bool tw__process_add_tag(tw__process *p, const char *key, const tw_value *value);
const tw__tag *tw__process_find_tag(const tw__process *p, const char *key);

/* ---- builders for decoders --------------------------------------------------------------- */

/* Adds a typed tag (copied into the record's arena; no value cap), the
 * key's length given (@key_len bytes, no NUL among them; need not be
 * NUL-terminated). False on allocation failure, the record unchanged. */
static inline bool tw__span_data_add_tag_n(tw__span_data *s, const char *key, size_t key_len,
                                           const tw_value *value)
{
    tw__tag *t = tw__span_data_push_tag(s);
    if (!t || !tw__tag_store(&s->arena, t, key, key_len, value))
        return false;
    s->n_tags++; /* commits the tag */
    return true;
}
/* The same with a NUL-terminated key. */
static inline bool tw__span_data_add_tag(tw__span_data *s, const char *key, const tw_value *value)
{
    return tw__span_data_add_tag_n(s, key, strlen(key), value);
}
/* A string tag: @len bytes of @value (NULL: empty). */
static inline bool tw__span_data_add_str_tag_n(tw__span_data *s, const char *key, size_t key_len,
                                               const char *value, size_t len)
{
    tw_value v = {.type = TW_VALUE_STRING, .len = len, .as.str = value};
    tw__tag *t = tw__span_data_push_tag(s);
    if (!t || !tw__tag_store(&s->arena, t, key, key_len, &v))
        return false;
    s->n_tags++; /* commits the tag */
    return true;
}
static inline bool tw__span_data_add_str_tag(tw__span_data *s, const char *key, const char *value,
                                             size_t len)
{
    return tw__span_data_add_str_tag_n(s, key, strlen(key), value, len);
}
/* Makes room for @n more tags at once (a decoder that knows how many it
 * will add), so the array is not grown and copied on the way. False on
 * allocation failure, the record unchanged. */
bool tw__span_data_reserve_tags(tw__span_data *s, size_t n);
/* Adds a log with one field `event` = @value (a Zipkin annotation). */
bool tw__span_data_add_event(tw__span_data *s, int64_t ts_us, const char *value, size_t len);

/* ---- the time range ------------------------------------------------------------------------ */

/* Span times, in µs since the epoch, are within +-TW__MAX_TIME_US: the
 * times whose nanoseconds fit an int64 (years 1677 to 2262), the range of
 * Go's time (Jaeger) and of OTLP's nanoseconds in a signed type, so that
 * every encoder can write start, end and log times without overflow. */
#define TW__MAX_TIME_US (INT64_MAX / 1000)

/* Whether the start, the duration, the end and every log time of @s are
 * within that range; else false with a reason naming the value in @why.
 * The decoders check it once, where spans enter the model
 * (tw__wire_emit). */
bool tw__span_data_check_times(const tw__span_data *s, char *why, size_t why_size);

#endif /* TW_MODEL_SPAN_DATA_H */
