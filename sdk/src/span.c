/* SPDX-License-Identifier: Apache-2.0 */
/*
 * span.c: the span lifecycle on the application thread: start (parent
 * selection, ids, the sampling decision), tags, logs, baggage, finish.
 *
 * Hot path: a span of an unsampled trace records nothing. Its handle comes
 * from a per-thread free list (no malloc, no lock, no atomic), it takes no
 * reference on the tracer, it draws no id until something reads its context
 * (lazy ids, internal.h: inject, a child, a scope), and finish just returns
 * it to the list: a tracer whose sampler never samples costs about 140
 * instructions per span with two tags (callgrind, `make bench`). A sampled
 * span additionally owns a model record (wire/model/span_data.h: one malloc for
 * record + inline arena) and a reference on the tracer, and its finish hands
 * the record to the handler chain, if any (handlers/handlers.h), then to the
 * reporter, whose report() only enqueues. When a handler wants unsampled
 * spans ("sample local"), unsampled spans record like sampled ones (costing
 * the same), but their record goes only to the handlers; their context stays
 * unsampled. Without such a handler the unsampled path pays one more test.
 *
 * Limits (tw__limits) are enforced here; what they cut is counted on the
 * record and marked at finish with tracewire.* tags, which are exempt from
 * the limits (they are structural, like ids and times).
 *
 * Locking: a span is single-writer (see span.h); the free list is
 * thread-local. A span finished on another thread goes to that thread's list.
 */
#include "internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "handlers/handlers.h"
#include "ids.h"
#include "propagation/propagation.h" /* TW__STR */
#include "report/report.h"
#include "sampling/sampling.h"
#include "scope/scope.h"

/* ---- the wall-clock anchor (clock.h) ------------------------------------------------------- */

TW__TLS tw__wall_anchor tw__anchor = {TW__ANCHOR_NEVER, 0};

int64_t tw__anchor_refresh(int64_t mono_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t wall_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    tw__anchor.wall_minus_mono_ns = wall_ns - mono_ns;
    tw__anchor.mono_at_ns = mono_ns;
    return wall_ns / 1000;
}

/* ---- per-thread handle pool ---------------------------------------------------------------- */

#define POOL_MAX 64 /* handles kept per thread; beyond that they are freed */

typedef struct {
    tw_span *head;
    /* Handles a release may still add: POOL_MAX less those in the list once
     * the thread's exit destructor is registered, else 0 (the list is empty
     * then), so that a release tests one number. */
    size_t room;
    bool has_destructor;
} span_pool;

static TW__TLS span_pool tls_pool;
static pthread_key_t pool_key;
static pthread_once_t pool_key_once = PTHREAD_ONCE_INIT;

static void pool_destroy(void *arg)
{
    span_pool *p = arg;
    while (p->head) {
        tw_span *next = p->head->next_free;
        free(p->head);
        p->head = next;
    }
    p->room = 0;
    /* A span finished later in this thread's exit (another key's destructor,
     * such as scope.c's, finishing an owned span) registers again. */
    p->has_destructor = false;
}

static void pool_key_create(void)
{
    pthread_key_create(&pool_key, pool_destroy);
}

/* A new handle in the state a pooled one is in: what finish leaves at zero
 * (no record, no long name, no retired baggage) and the embedded context's
 * refcount, which is 0 for good, are not written again at each start. */
static __attribute__((noinline)) tw_span *span_new(void)
{
    tw_span *s = malloc(sizeof(tw_span));
    if (!s)
        return NULL;
    memset(s, 0, sizeof *s);
    atomic_init(&s->context.refcount, 0);
    atomic_init(&s->ids_pending, TW__IDS_READY);
    atomic_init(&s->is_baggage_lent, false);
    return s;
}

static inline tw_span *span_alloc(void)
{
    span_pool *p = &tls_pool;
    tw_span *s = p->head;
    if (__builtin_expect(s != NULL, 1)) {
        p->head = s->next_free;
        p->room++;
        return s;
    }
    return span_new();
}

/* span_release's rare cases: the pool is full (the handle is freed), or
 * this thread has not registered its exit destructor yet. */
static __attribute__((noinline)) void span_release_slow(tw_span *s)
{
    span_pool *p = &tls_pool;
    if (!p->has_destructor) {
        /* Register once per thread so the pool is freed at thread exit. */
        pthread_once(&pool_key_once, pool_key_create);
        pthread_setspecific(pool_key, p);
        p->has_destructor = true;
        p->room = POOL_MAX; /* the list is empty until now */
    }
    if (p->room == 0) {
        free(s);
        return;
    }
    s->next_free = p->head;
    p->head = s;
    p->room--;
}

/* Back to the thread's pool; the fields finish leaves at 0 must be 0. */
static inline void span_release(tw_span *s)
{
    span_pool *p = &tls_pool;
    s->state = TW__SPAN_FREE;
    if (__builtin_expect(p->room == 0, 0)) {
        span_release_slow(s);
        return;
    }
    s->next_free = p->head;
    p->head = s;
    p->room--;
}

void tw__span_pool_drain_thread(void);
/* Frees the calling thread's pool now (tw_tracer_free calls it, so a
 * single-threaded program ends with nothing reachable). */
void tw__span_pool_drain_thread(void)
{
    pool_destroy(&tls_pool);
}

size_t tw__span_pool_size(void);
/* Handles the calling thread keeps for reuse, at most POOL_MAX (tests). */
size_t tw__span_pool_size(void)
{
    return tls_pool.has_destructor ? POOL_MAX - tls_pool.room : 0;
}

/* ---- lazy ids ------------------------------------------------------------------------------ */

/* Writes the ids @pending names into the span's context. */
static inline void draw_ids_into(tw_span *s, unsigned int pending)
{
    if (pending == TW__IDS_SPAN) {
        s->context.span_id = tw__random_id();
        return;
    }
    /* A root's span id is its trace id's low half, as in Jaeger's Go client:
     * one random draw fewer on every trace, and the low half is already
     * random and non-zero. Low half first, as tw__trace_id_low draws. */
    uint64_t low, high = 0;
    if (pending == TW__IDS_TRACE128)
        tw__random_id_pair(&low, &high);
    else
        low = tw__random_id();
    s->context.trace_id_low = low;
    s->context.trace_id_high = high;
    s->context.span_id = low;
}

/* The same on a span no other thread can see yet (being started). */
static inline __attribute__((always_inline)) void draw_ids_unpublished(tw_span *s)
{
    unsigned int pending = atomic_load_explicit(&s->ids_pending, memory_order_relaxed);
    if (pending != TW__IDS_READY) {
        draw_ids_into(s, pending);
        atomic_store_explicit(&s->ids_pending, TW__IDS_READY, memory_order_relaxed);
    }
}

/* Several threads may read one span (span.h) and so ask for its ids at
 * once: one of them draws (the compare-and-swap to DRAWING), the others wait
 * the few instructions that takes, so they all see the same ids. */
void tw__span_draw_ids(tw_span *s)
{
    unsigned int pending = atomic_load_explicit(&s->ids_pending, memory_order_acquire);
    while (pending != TW__IDS_READY) {
        if (pending == TW__IDS_DRAWING) {
            sched_yield();
            pending = atomic_load_explicit(&s->ids_pending, memory_order_acquire);
            continue;
        }
        if (atomic_compare_exchange_weak_explicit(&s->ids_pending, &pending, TW__IDS_DRAWING,
                                                  memory_order_acquire, memory_order_acquire)) {
            draw_ids_into(s, pending);
            atomic_store_explicit(&s->ids_pending, TW__IDS_READY, memory_order_release);
            return;
        }
    }
}

/* ---- options ----------------------------------------------------------------------------- */

typedef struct {
    tw_reference_type type;
    tw_span_context *ctx; /* owned reference */
} option_ref;

typedef struct {
    char *key;
    tw_value value; /* string payload owned (value.as.str) */
} option_tag;

struct tw_span_options {
    int64_t start_us;
    bool has_start;
    bool ignore_active_span; /* no implicit parent from the active scope */
    option_ref *refs;
    size_t n_refs, cap_refs;
    option_tag *tags;
    size_t n_tags, cap_tags;
};

tw_span_options *tw_span_options_new(void)
{
    return calloc(1, sizeof(tw_span_options));
}

void tw_span_options_reset(tw_span_options *opts)
{
    if (!opts)
        return;
    for (size_t i = 0; i < opts->n_refs; i++)
        tw_span_context_unref(opts->refs[i].ctx);
    for (size_t i = 0; i < opts->n_tags; i++) {
        free(opts->tags[i].key);
        if (opts->tags[i].value.type == TW_VALUE_STRING)
            free((char *)opts->tags[i].value.as.str);
    }
    opts->n_refs = 0;
    opts->n_tags = 0;
    opts->has_start = false;
    opts->start_us = 0;
    opts->ignore_active_span = false;
}

void tw_span_options_free(tw_span_options *opts)
{
    if (!opts)
        return;
    tw_span_options_reset(opts);
    free(opts->refs);
    free(opts->tags);
    free(opts);
}

tw_status tw_span_options_set_start_time_us(tw_span_options *opts, int64_t start_us)
{
    TW_CHECK_ARG(opts && start_us >= 0, TW_E_INVALID_ARG);
    opts->start_us = start_us;
    opts->has_start = true;
    return TW_OK;
}

tw_status tw_span_options_set_ignore_active_span(tw_span_options *opts, bool ignore_active_span)
{
    TW_CHECK_ARG(opts, TW_E_INVALID_ARG);
    opts->ignore_active_span = ignore_active_span;
    return TW_OK;
}

tw_status tw_span_options_add_reference(tw_span_options *opts, tw_reference_type type,
                                        const tw_span_context *ctx)
{
    TW_CHECK_ARG(opts, TW_E_INVALID_ARG);
    TW_CHECK_ARG(type == TW_REF_CHILD_OF || type == TW_REF_FOLLOWS_FROM, TW_E_INVALID_ARG);
    if (!ctx)
        return TW_OK;
    if (!tw__context_is_usable(ctx, "tw_span_options_add_reference"))
        return TW_E_INVALID_ARG;
    if (opts->n_refs == opts->cap_refs) {
        size_t ncap = opts->cap_refs ? opts->cap_refs * 2 : 4;
        option_ref *grown = realloc(opts->refs, ncap * sizeof(*grown));
        if (!grown)
            return TW_E_NOMEM;
        opts->refs = grown;
        opts->cap_refs = ncap;
    }
    tw_span_context *ref = tw_span_context_ref(ctx);
    if (!ref)
        return TW_E_NOMEM;
    opts->refs[opts->n_refs++] = (option_ref){type, ref};
    return TW_OK;
}

static tw_status options_add_tag(tw_span_options *opts, const char *key, tw_value value)
{
    TW_CHECK_ARG(opts && key, TW_E_INVALID_ARG);
    if (opts->n_tags == opts->cap_tags) {
        size_t ncap = opts->cap_tags ? opts->cap_tags * 2 : 4;
        option_tag *grown = realloc(opts->tags, ncap * sizeof(*grown));
        if (!grown)
            return TW_E_NOMEM;
        opts->tags = grown;
        opts->cap_tags = ncap;
    }
    char *k = strdup(key);
    if (!k)
        return TW_E_NOMEM;
    if (value.type == TW_VALUE_STRING) {
        char *v = strdup(value.as.str ? value.as.str : "");
        if (!v) {
            free(k);
            return TW_E_NOMEM;
        }
        value.as.str = v;
        value.len = strlen(v);
    }
    opts->tags[opts->n_tags++] = (option_tag){k, value};
    return TW_OK;
}

tw_status tw_span_options_add_tag_str(tw_span_options *opts, const char *key, const char *value)
{
    return options_add_tag(opts, key, (tw_value){.type = TW_VALUE_STRING, .as.str = value});
}

tw_status tw_span_options_add_tag_bool(tw_span_options *opts, const char *key, bool value)
{
    return options_add_tag(opts, key, (tw_value){.type = TW_VALUE_BOOL, .as.boolean = value});
}

tw_status tw_span_options_add_tag_int64(tw_span_options *opts, const char *key, int64_t value)
{
    return options_add_tag(opts, key, (tw_value){.type = TW_VALUE_INT64, .as.i64 = value});
}

tw_status tw_span_options_add_tag_double(tw_span_options *opts, const char *key, double value)
{
    return options_add_tag(opts, key, (tw_value){.type = TW_VALUE_DOUBLE, .as.dbl = value});
}

/* ---- recording --------------------------------------------------------------------------- */

static const char SAMPLING_PRIORITY[] = "sampling.priority";

static inline bool is_sampling_priority(const char *key)
{
    return key[0] == 's' && strcmp(key, SAMPLING_PRIORITY) == 0;
}

/* The numeric meaning of a sampling.priority value: >0 forces, 0 unsamples,
 * -1 for a value that is not a number (ignored, as a non-numeric string). */
static int priority_of(const tw_value *v)
{
    switch (v->type) {
    case TW_VALUE_INT64:
        return v->as.i64 > 0 ? 1 : v->as.i64 == 0 ? 0 : -1;
    case TW_VALUE_DOUBLE:
        return v->as.dbl > 0 ? 1 : v->as.dbl == 0 ? 0 : -1;
    case TW_VALUE_BOOL:
        return v->as.boolean ? 1 : 0;
    case TW_VALUE_STRING: {
        char *end = NULL;
        double d = v->as.str ? strtod(v->as.str, &end) : 0;
        if (!v->as.str || end == v->as.str || *end != '\0')
            return -1;
        return d > 0 ? 1 : d == 0 ? 0 : -1;
    }
    case TW_VALUE_BINARY:
        break;
    }
    return -1;
}

/* Copies @len bytes; up to 48 with two to four fixed-size moves (each reads
 * only within [src, src + len)), no call: names, keys and short values. */
static inline void copy_bytes(char *dst, const char *src, size_t len)
{
    if (len >= 16) {
        if (__builtin_expect(len > 48, 0)) {
            memcpy(dst, src, len);
            return;
        }
        memcpy(dst, src, 16);
        if (len > 32)
            memcpy(dst + 16, src + 16, 16);
        memcpy(dst + len - 16, src + len - 16, 16);
    } else if (len >= 8) {
        memcpy(dst, src, 8);
        memcpy(dst + len - 8, src + len - 8, 8);
    } else if (len >= 4) {
        memcpy(dst, src, 4);
        memcpy(dst + len - 4, src + len - 4, 4);
    } else if (len > 0) {
        dst[0] = src[0];
        dst[len / 2] = src[len / 2];
        dst[len - 1] = src[len - 1];
    }
}

/* Keeps the operation name of a span that does not record, so that a later
 * sampling.priority (or a rename before it) can still name it: inline when
 * it fits, else on the heap (rare: a name of 48 bytes or more). */
static inline void keep_op_name(tw_span *s, const char *operation)
{
    size_t len = strnlen(operation, sizeof s->op_name);
    if (__builtin_expect(len < sizeof s->op_name, 1)) {
        copy_bytes(s->op_name, operation, len);
        s->op_name[len] = '\0';
        return;
    }
    free(s->op_name_long);
    s->needs_finish_work = true;
    /* One byte past the bound at most: enough for begin_recording to see
     * that the name is too long, cut it and count the cut. */
    s->op_name_long = strndup(operation, TW__MAX_NAME_BYTES + 1);
    if (!s->op_name_long) { /* no memory: the name is cut rather than lost */
        memcpy(s->op_name, operation, sizeof s->op_name - 1);
        s->op_name[sizeof s->op_name - 1] = '\0';
    }
}

/* keep_op_name for a span being started, returned: a tail call for the
 * unsampled start, which then needs no stack frame of its own. */
static __attribute__((noinline)) tw_span *keep_op_name_of_new(tw_span *s, const char *operation)
{
    keep_op_name(s, operation);
    return s;
}

/* The name keep_op_name kept. */
static inline const char *kept_op_name(const tw_span *s)
{
    return s->op_name_long ? s->op_name_long : s->op_name;
}

/* Bytes from the record's arena: the current block when it has room (the
 * inline block holds a typical span), else tw__arena_alloc, which chains a
 * new block. Sizes are rounded up as tw__arena_alloc does, so that what
 * either returns is aligned for any type. */
static inline void *arena_take(tw__arena *a, size_t size)
{
    const size_t align = _Alignof(max_align_t);
    size_t need = (size + align - 1) & ~(align - 1);
    tw__arena_block *b = a->head;
    /* Callers ask for at least 1 byte, so `need` is never 0. */
    if (__builtin_expect(b != NULL && b->size - b->used >= need, 1)) {
        void *p = (char *)b->data + b->used;
        b->used += need;
        return p;
    }
    return tw__arena_alloc(a, size);
}

/* @str (@len bytes) and a NUL in the arena; NULL without memory. */
static inline char *arena_copy(tw__arena *a, const char *str, size_t len)
{
    char *p = arena_take(a, len + 1);
    if (__builtin_expect(p != NULL, 1)) {
        copy_bytes(p, str, len);
        p[len] = '\0';
    }
    return p;
}

/* Makes the span record from now on (a sampled start, sampling forced on an
 * unsampled span, or a local record): allocates the record and takes the
 * tracer reference. The caller counts a sampled span (spans_started_sampled)
 * and sets s->is_local_record. */
static inline __attribute__((always_inline)) bool begin_recording(tw_span *s, const char *operation,
                                                                  int64_t start_us)
{
    tw__span_ensure_ids(s); /* the record carries them */
    tw__span_data *d = tw__span_data_new();
    if (!d)
        return false;
    d->trace_id_high = s->context.trace_id_high;
    d->trace_id_low = s->context.trace_id_low;
    d->span_id = s->context.span_id;
    d->parent_id = s->context.parent_id;
    d->start_us = start_us;
    size_t len = strlen(operation);
    if (__builtin_expect(len > TW__MAX_NAME_BYTES, 0)) {
        len = tw__utf8_cut(operation, TW__MAX_NAME_BYTES);
        d->truncated_values++;
    }
    const char *name = arena_copy(&d->arena, operation, len);
    if (!name) {
        tw__span_data_unref(d);
        return false;
    }
    d->operation = name;
    d->operation_len = len < UINT32_MAX ? (uint32_t)len : UINT32_MAX;
    s->data = d;
    atomic_fetch_add_explicit(&s->tracer->refcount, 1, memory_order_relaxed);
    return true;
}

/* Whether writes to the span are kept: it records for the reporter, or
 * locally for handlers that want unsampled spans (handlers/handlers.h). */
static inline bool is_recording(const tw_span *s)
{
    return s->data && ((s->context.flags & TW_FLAG_SAMPLED) || s->tracer->records_unsampled);
}

/* The next tag slot of a record: the inline array while it has room. */
static inline tw__tag *next_tag_slot(tw__span_data *d)
{
    if (__builtin_expect(d->n_tags < d->cap_tags, 1))
        return &d->tags[d->n_tags];
    return tw__span_data_push_tag(d);
}

/* tw__tag_set for fill_tag's rare cases, its result as fill_tag's. Out of
 * line, so that the flag it sets lives only here: the common case keeps
 * no flag in memory. */
static __attribute__((noinline)) int fill_tag_slow(tw__arena *a, tw__tag *t, const char *key,
                                                   size_t key_len, const tw_value *value,
                                                   size_t value_cap)
{
    bool truncated = false;
    if (key_len > TW__MAX_NAME_BYTES) {
        key_len = tw__utf8_cut(key, TW__MAX_NAME_BYTES);
        truncated = true;
    }
    bool value_cut = false;
    if (!tw__tag_set_n(a, t, key, key_len, value, value_cap, &value_cut))
        return -1;
    return truncated || value_cut ? 1 : 0;
}

/* Fills @t with a copy of @key and @value, the common cases inline: a key
 * and a string value that fits the cap share one arena allocation, a
 * number copies the key only. Binary values, values over the cap, keys
 * over TW__MAX_NAME_BYTES and allocation failures go through
 * fill_tag_slow. Returns 0, 1 when the key or value was cut, -1 on failure
 * (@t is not filled). */
static inline __attribute__((always_inline)) int fill_tag(tw__arena *a, tw__tag *t, const char *key,
                                                          tw_value_type type, const tw_value *value,
                                                          size_t value_cap)
{
    size_t key_len = strlen(key);
    size_t value_len = type == TW_VALUE_STRING ? value->len : 0;
    /* Unsigned compare: also sends a value type out of the enum (a caller's
     * bad log field) to tw__tag_set, which refuses it. */
    if (__builtin_expect((unsigned)type <= TW_VALUE_INT64 && value_len <= value_cap &&
                             key_len <= TW__MAX_NAME_BYTES && (value_len == 0 || value->as.str),
                         1)) {
        size_t value_at = type == TW_VALUE_STRING ? key_len + 1 : 0;
        char *p = arena_take(a, key_len + 1 + (value_at ? value_len + 1 : 0));
        if (__builtin_expect(p != NULL, 1)) {
            copy_bytes(p, key, key_len + 1); /* with its NUL */
            t->key = p;
            t->key_len = (uint32_t)key_len;
            t->type = type;
            t->len = value_len;
            switch (type) {
            case TW_VALUE_STRING:
                copy_bytes(p + value_at, value->as.str, value_len);
                p[value_at + value_len] = '\0';
                t->v.str = p + value_at;
                break;
            case TW_VALUE_INT64:
                t->v.i64 = value->as.i64;
                break;
            case TW_VALUE_DOUBLE:
                t->v.dbl = value->as.dbl;
                break;
            case TW_VALUE_BOOL:
                t->v.boolean = value->as.boolean;
                break;
            case TW_VALUE_BINARY:
                break;
            }
            return 0;
        }
    }
    return fill_tag_slow(a, t, key, key_len, value, value_cap);
}

/* @type is @value's: a constant in each setter, so that the switch above
 * folds away there. */
static inline __attribute__((always_inline)) void add_tag_inline(tw_span *s, const char *key,
                                                                 tw_value_type type,
                                                                 const tw_value *value,
                                                                 bool is_exempt)
{
    tw__span_data *d = s->data;
    const tw__limits *lim = &s->tracer->limits;
    if (!is_exempt && d->n_tags - d->exempt_tags >= lim->max_tags) {
        d->dropped_tags++;
        return;
    }
    tw__tag *t = next_tag_slot(d);
    int cut =
        t ? fill_tag(&d->arena, t, key, type, value, is_exempt ? SIZE_MAX : lim->max_value_bytes)
          : -1;
    if (cut < 0) {
        d->dropped_tags++; /* allocation failure: counted like a limit */
        return;
    }
    d->truncated_values += (uint32_t)cut;
    if (is_exempt)
        d->exempt_tags++;
    d->n_tags++;
}

static __attribute__((noinline)) void add_tag(tw_span *s, const char *key, const tw_value *value,
                                              bool is_exempt)
{
    add_tag_inline(s, key, value->type, value, is_exempt);
}

/* Adds a structural tag whose strings are literals (no copy). */
static inline void add_prebuilt_tag(tw__span_data *d, const tw__tag *prebuilt)
{
    tw__tag *t = next_tag_slot(d);
    if (!t) {
        d->dropped_tags++;
        return;
    }
    *t = *prebuilt;
    d->exempt_tags++;
    d->n_tags++;
}

/* The sampler's tags through add_prebuilt_tag (a record whose inline
 * tags are taken: never a new one). */
static __attribute__((noinline)) void add_sampler_tags(tw__span_data *d,
                                                       const tw__sampling_decision *decision)
{
    tw__tag type = {.key = "sampler.type",
                    .key_len = 12,
                    .type = TW_VALUE_STRING,
                    .v.str = decision->type,
                    .len = decision->type_len};
    tw__tag param = {.key = "sampler.param", .key_len = 13, .type = decision->param.type};
    if (decision->param.type == TW_VALUE_BOOL)
        param.v.boolean = decision->param.as.boolean;
    else
        param.v.dbl = decision->param.as.dbl;
    add_prebuilt_tag(d, &type);
    add_prebuilt_tag(d, &param);
}

/* Applies a sampling.priority value to the span's decision. */
static __attribute__((noinline)) void apply_priority(tw_span *s, const tw_value *value)
{
    int p = priority_of(value);
    if (p < 0)
        return;
    if (p > 0) {
        s->context.flags |= TW_FLAG_SAMPLED | TW_FLAG_DEBUG;
        if (!s->data) {
            s->is_local_record = false;
            if (begin_recording(s, kept_op_name(s), tw__now_us())) {
                atomic_fetch_add_explicit(&s->tracer->spans_started_sampled, 1,
                                          memory_order_relaxed);
            } else {
                s->context.flags &= ~(TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
                tw__log_msg(TW_LOG_ERROR, "span: out of memory while forcing sampling");
            }
        } else if (s->is_local_record) {
            /* A local record becomes a sampled one: count it now. */
            s->is_local_record = false;
            atomic_fetch_add_explicit(&s->tracer->spans_started_sampled, 1, memory_order_relaxed);
        }
    } else {
        s->context.flags &= ~(TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
    }
    if (tw__scope_tops)
        tw__scope_span_changed(s); /* scopes of this span see the new decision */
}

static inline __attribute__((always_inline)) void set_tag(tw_span *s, const char *key,
                                                          tw_value_type type, const tw_value *value)
{
    if (!s)
        return; /* a failed start, already logged */
    if (!key) {
        tw__log_msg(TW_LOG_ERROR, "tw_span_set_tag: invalid argument: NULL key");
        return;
    }
    if (__builtin_expect(is_sampling_priority(key), 0)) {
        /* A copy, so that @value does not escape and the inlined writer
         * below sees its type as the constant it is in each setter. */
        tw_value copy = *value;
        apply_priority(s, &copy);
    }
    if (!is_recording(s))
        return;
    add_tag_inline(s, key, type, value, false);
}

/* ---- start -------------------------------------------------------------------------------- */

/* Records the references of a starting span (those with ids: a hint is not
 * a span to refer to). */
static inline void add_refs(tw__span_data *d, const option_ref *refs, size_t n_refs,
                            const tw_span_context *single_parent)
{
    for (size_t i = 0; i < n_refs; i++) {
        const tw_span_context *c = refs[i].ctx;
        if (!tw__context_has_ids(c))
            continue;
        tw__span_data_add_ref(
            d, refs[i].type == TW_REF_FOLLOWS_FROM ? TW__REF_FOLLOWS_FROM : TW__REF_CHILD_OF,
            c->trace_id_high, c->trace_id_low, c->span_id);
    }
    if (single_parent && tw__context_has_ids(single_parent))
        tw__span_data_add_ref(d, TW__REF_CHILD_OF, single_parent->trace_id_high,
                              single_parent->trace_id_low, single_parent->span_id);
}

/*
 * Sample local: an unsampled span of a tracer with a handler that wants
 * unsampled spans records for the handlers only (handlers/handlers.h). It
 * records as a sampled span does (times, references, start tags), minus
 * what describes a reported span: it is not counted as sampled and gets no
 * sampler tags. Its context, which propagates, stays unsampled. Out of line
 * and cold, so that the unsampled fast path pays one test for it
 * (callgrind: bench_tracer ir unsampled).
 */
static __attribute__((noinline, cold)) tw_span *
start_local_record(tw_span *s, const char *operation, const option_ref *refs, size_t n_refs,
                   const tw_span_context *single_parent, const tw_span_options *opts)
{
    bool has_start = opts && opts->has_start;
    int64_t start_us = has_start ? opts->start_us : tw__start_times(&s->start_mono_ns);
    s->has_mono_start = !has_start;
    s->is_local_record = true;
    if (!begin_recording(s, operation, start_us)) {
        tw__log_msg(TW_LOG_ERROR, "tw_span_start: out of memory recording \"%s\" locally",
                    operation);
        keep_op_name(s, operation);
        return s;
    }
    add_refs(s->data, refs, n_refs, single_parent);
    for (size_t i = 0; opts && i < opts->n_tags; i++)
        add_tag(s, opts->tags[i].key, &opts->tags[i].value, false);
    return s;
}

/* How a starting span's sampling was decided, for its recording. */
typedef struct {
    tw__sampling_decision decision; /* valid when is_sampler_decision */
    const char *debug_id;           /* a hint's jaeger-debug-id, or NULL */
    bool is_sampler_decision;       /* the sampler decided at this span */
    bool is_root;                   /* the span starts a trace */
    bool is_forced;                 /* sampling.priority > 0 among the start tags */
} start_state;

/* A root span's ids and decision: the trace id is drawn when the sampler
 * reads it, else when the span's context is first read (lazy ids). */
static inline bool start_root(tw_span *s, const tw_tracer *t, const char *operation,
                              start_state *st)
{
    s->needs_finish_work = false;
    if (t->never_samples) {
        /* Known without asking: unsampled, and no sampler tags to write (a
         * span forced by sampling.priority gets none). */
        s->context.flags = TW__FLAG_RANDOM | TW__FLAG_IN_SPAN;
        s->context.trace_id_high = 0;
        s->context.trace_id_low = 0;
        s->context.span_id = 0;
        s->context.parent_id = 0;
        s->context.baggage = NULL;
        s->context.extra = NULL;
        atomic_store_explicit(&s->ids_pending, TW__IDS_TRACE64 + t->is_128bit,
                              memory_order_relaxed);
        return false;
    }
    tw__trace_id id = {.high = 0, .low = 0, .is_drawn = false, .is_128bit = t->is_128bit};
    st->is_sampler_decision = true;
    tw__sampler_decide_lazy(t->sampler, &id, operation, &st->decision);
    /* The trace id is ours and random where W3C Level 2 asks (its low 7 bytes, drawn
     * uniformly by tw__random_id in both id sizes): traceparent says so (flag 0x02). */
    s->context.flags =
        (st->decision.is_sampled ? TW_FLAG_SAMPLED : 0) | TW__FLAG_RANDOM | TW__FLAG_IN_SPAN;
    s->context.trace_id_high = id.high;
    s->context.trace_id_low = id.low;
    s->context.span_id = id.low; /* a root's span id: see draw_ids_into */
    s->context.parent_id = 0;
    s->context.baggage = NULL;
    s->context.extra = NULL;
    atomic_store_explicit(&s->ids_pending,
                          id.is_drawn    ? TW__IDS_READY
                          : id.is_128bit ? TW__IDS_TRACE128
                                         : TW__IDS_TRACE64,
                          memory_order_relaxed);
    return st->decision.is_sampled;
}

/* A root started from a hint (a parent without ids: a debug id, a decision
 * alone, baggage): a new trace that honours it. Out of line: rare. */
static __attribute__((noinline)) void start_from_hint(tw_span *s, const tw_tracer *t,
                                                      const tw_span_context *hint,
                                                      const char *operation, start_state *st)
{
    uint32_t flags;
    if (hint->extra && hint->extra->debug_id) {
        flags = TW_FLAG_SAMPLED | TW_FLAG_DEBUG;
        st->debug_id = hint->extra->debug_id;
    } else if (!(hint->flags & TW__FLAG_DEFERRED) && !t->samples_every_span) {
        flags = hint->flags & TW__FLAGS_WIRE;
    } else {
        start_root(s, t, operation, st);
        s->context.baggage = tw__baggage_ref(hint->baggage);
        s->needs_finish_work = s->context.baggage != NULL;
        return;
    }
    s->context.flags = flags | TW__FLAG_RANDOM | TW__FLAG_IN_SPAN;
    s->context.trace_id_high = 0;
    s->context.trace_id_low = 0;
    s->context.span_id = 0;
    s->context.parent_id = 0;
    s->context.baggage = tw__baggage_ref(hint->baggage);
    s->context.extra = NULL;
    s->needs_finish_work = s->context.baggage != NULL;
    atomic_store_explicit(&s->ids_pending, t->is_128bit ? TW__IDS_TRACE128 : TW__IDS_TRACE64,
                          memory_order_relaxed);
}

/* A child's context: its parent's trace, flags, baggage and extras; its span
 * id is drawn when first read (lazy ids). */
static inline void start_child(tw_span *s, const tw_tracer *t, const tw_span_context *parent,
                               const char *operation, start_state *st)
{
    s->context.trace_id_high = parent->trace_id_high;
    s->context.trace_id_low = parent->trace_id_low;
    s->context.span_id = 0;
    s->context.parent_id = parent->span_id;
    s->context.flags = parent->flags | TW__FLAG_IN_SPAN;
    s->context.baggage = parent->baggage ? tw__baggage_ref(parent->baggage) : NULL;
    s->context.extra = parent->extra ? tw__ctx_extra_ref(parent->extra) : NULL;
    s->needs_finish_work = (parent->baggage != NULL) | (parent->extra != NULL);
    atomic_store_explicit(&s->ids_pending, TW__IDS_SPAN, memory_order_relaxed);
    if (__builtin_expect((parent->flags & TW__FLAG_DEFERRED) || t->samples_every_span, 0)) {
        st->is_sampler_decision = true;
        tw__sampler_decide(t->sampler, parent->trace_id_high, parent->trace_id_low, operation,
                           &st->decision);
        s->context.flags = (st->decision.is_sampled ? TW_FLAG_SAMPLED : 0) |
                           (parent->flags & TW__FLAG_RANDOM) /* W3C: kept in the trace */ |
                           TW__FLAG_IN_SPAN;
    }
}

/* sampling.priority among the start tags is applied first (as Java does),
 * so it can still decide whether the other tags are recorded. */
static __attribute__((noinline)) void
apply_start_priorities(tw_span *s, const tw_span_options *opts, start_state *st)
{
    for (size_t i = 0; i < opts->n_tags; i++) {
        if (is_sampling_priority(opts->tags[i].key)) {
            int p = priority_of(&opts->tags[i].value);
            if (p > 0) {
                s->context.flags |= TW_FLAG_SAMPLED | TW_FLAG_DEBUG;
                st->is_forced = true;
            } else if (p == 0) {
                s->context.flags &= ~(TW_FLAG_SAMPLED | TW_FLAG_DEBUG);
            }
        }
    }
}

/* The recording part of a sampled span's start: ids, times, the record,
 * references and start tags. Inlined into start_plain (one stack frame for
 * the common sampled start); start_span calls start_recording. */
static inline __attribute__((always_inline)) tw_span *
start_recording_inline(tw_span *s, const char *operation, const option_ref *refs, size_t n_refs,
                       const tw_span_context *single_parent, const tw_span_options *opts,
                       const start_state *st)
{
    tw_tracer *t = s->tracer;
    draw_ids_unpublished(s); /* a recording span carries its ids */
    bool has_start = opts && opts->has_start;
    int64_t start_us;
    s->has_mono_start = !has_start;
    if (!has_start) {
        start_us = tw__start_times(&s->start_mono_ns);
    } else {
        start_us = opts->start_us;
    }
    s->is_local_record = false;
    if (!begin_recording(s, operation, start_us)) {
        tw__log_msg(TW_LOG_ERROR, "tw_span_start: out of memory recording \"%s\"", operation);
        s->context.flags &= ~TW_FLAG_SAMPLED;
        keep_op_name(s, operation); /* for a later sampling.priority */
        return s;
    }
    atomic_fetch_add_explicit(&t->spans_started_sampled, 1, memory_order_relaxed);
    tw__span_data *d = s->data;
    if (n_refs || single_parent)
        add_refs(d, refs, n_refs, single_parent);
    if (st->is_root)
        atomic_fetch_add_explicit(&t->traces_started_sampled, 1, memory_order_relaxed);
    /* Jaeger puts sampler tags only on the span whose sampler decided. */
    if (st->is_sampler_decision && !st->is_forced) {
        /* Literal key and type strings and a plain value: no copy. A new
         * record has room for both in its inline tags (start tags and
         * references come after). */
        tw__tag *tags = d->tags;
        if (__builtin_expect(d->n_tags + 2 <= d->cap_tags, 1)) {
            tags[d->n_tags] = (tw__tag){.key = "sampler.type",
                                        .key_len = 12,
                                        .type = TW_VALUE_STRING,
                                        .v.str = st->decision.type,
                                        .len = st->decision.type_len};
            tw__tag *param = &tags[d->n_tags + 1];
            *param =
                (tw__tag){.key = "sampler.param", .key_len = 13, .type = st->decision.param.type};
            if (st->decision.param.type == TW_VALUE_BOOL)
                param->v.boolean = st->decision.param.as.boolean;
            else
                param->v.dbl = st->decision.param.as.dbl;
            d->n_tags += 2;
            d->exempt_tags += 2;
        } else {
            add_sampler_tags(d, &st->decision);
        }
    }
    if (st->debug_id) {
        tw_value v = {.type = TW_VALUE_STRING, .as.str = st->debug_id, .len = strlen(st->debug_id)};
        add_tag(s, "jaeger-debug-id", &v, true);
    }
    for (size_t i = 0; opts && i < opts->n_tags; i++)
        add_tag(s, opts->tags[i].key, &opts->tags[i].value, false);
    return s;
}

static __attribute__((noinline)) tw_span *start_recording(tw_span *s, const char *operation,
                                                          const option_ref *refs, size_t n_refs,
                                                          const tw_span_context *single_parent,
                                                          const tw_span_options *opts,
                                                          const start_state *st)
{
    return start_recording_inline(s, operation, refs, n_refs, single_parent, opts, st);
}

/* Why a start is refused (NULL arguments, a closed tracer): logged. */
static __attribute__((noinline, cold)) tw_span *refuse_start(const tw_tracer *t,
                                                             const char *operation)
{
    if (!t || !operation)
        tw__log_msg(TW_LOG_ERROR, "tw_span_start: invalid argument: NULL %s",
                    t ? "operation" : "tracer");
    else
        tw__log_msg(TW_LOG_ERROR, "tw_span_start: tracer is closed (operation \"%s\")", operation);
    return NULL;
}

/* The parent among references: the first ChildOf, else the first FollowsFrom. */
static const tw_span_context *parent_of_refs(const option_ref *refs, size_t n_refs)
{
    for (size_t i = 0; i < n_refs; i++) {
        if (refs[i].type == TW_REF_CHILD_OF)
            return refs[i].ctx;
    }
    return refs[0].ctx;
}

/*
 * The hot path. A span that does not record (the trace is not sampled)
 * costs: the checks, a handle from the thread's pool, its context (copied
 * from the parent, or a root's decision, which draws no id unless the
 * sampler reads it) and a copy of its name into the handle. No allocation,
 * no lock, no id drawn (callgrind: bench_tracer ir unsampled).
 */
static __attribute__((noinline)) tw_span *start_span(tw_tracer *t, const char *operation,
                                                     const option_ref *refs, size_t n_refs,
                                                     const tw_span_context *single_parent,
                                                     const tw_span_options *opts)
{
    if (__builtin_expect(
            !t || !operation || atomic_load_explicit(&t->is_closed, memory_order_acquire), 0))
        return refuse_start(t, operation);
    const tw_span_context *parent = single_parent;
    if (__builtin_expect(n_refs != 0, 0) && !parent)
        parent = parent_of_refs(refs, n_refs);
    if (__builtin_expect(parent != NULL, 0) && !tw__context_is_usable(parent, "tw_span_start"))
        parent = single_parent = NULL;
    /* No explicit parent: the active scope's context (scope/scope.h), recorded
     * as a ChildOf reference like an explicit parent. When no scope is open on
     * this thread this costs one TLS load and a compare (tested first: with
     * `!parent` first, GCC moved the test out of line, 6 instructions, not 3). */
    if (__builtin_expect(tw__scope_tops != NULL, 0) && !parent) {
        parent = tw__scope_implicit_parent(t, opts && opts->ignore_active_span);
        single_parent = parent;
    }

    tw_span *s = span_alloc();
    if (__builtin_expect(s == NULL, 0)) {
        tw__log_msg(TW_LOG_ERROR, "tw_span_start: out of memory");
        return NULL;
    }
    /* data, op_name_long, retired, n_retired and is_baggage_lent are 0
     * already (span_new, finish). Relaxed stores: no other thread sees the
     * span yet. */
    s->state = TW__SPAN_OPEN;
    s->tracer = t;
    start_state st;
    st.debug_id = NULL;
    st.is_sampler_decision = false;
    st.is_forced = false;
    st.is_root = parent == NULL || !tw__context_has_ids(parent);
    if (!st.is_root)
        start_child(s, t, parent, operation, &st);
    else if (__builtin_expect(parent == NULL, 1))
        start_root(s, t, operation, &st);
    else
        start_from_hint(s, t, parent, operation, &st);
    if (__builtin_expect(opts != NULL && opts->n_tags != 0, 0))
        apply_start_priorities(s, opts, &st);

    if (__builtin_expect(!(s->context.flags & TW_FLAG_SAMPLED), 1)) {
        if (__builtin_expect(t->records_unsampled, 0))
            return start_local_record(s, operation, refs, n_refs, single_parent, opts);
        s->has_mono_start = false;
        keep_op_name(s, operation);
        return s; /* records nothing, draws no id; the start time is not even read */
    }
    return start_recording(s, operation, refs, n_refs, single_parent, opts, &st);
}

/* A parent start_plain can take: usable (not a finished span's context),
 * with ids, with a decision made, on a parent-based tracer. */
static inline bool is_plain_parent(const tw_tracer *t, const tw_span_context *parent)
{
    const tw_span *of = tw__context_span(parent);
    return (of == NULL || of->state == TW__SPAN_OPEN) && tw__context_has_ids(parent) &&
           !(parent->flags & TW__FLAG_DEFERRED) && !t->samples_every_span;
}

/*
 * tw_span_start without options, and tw_span_start_child: a root with no
 * active scope, or a child of a parent with ids and a decision, take this
 * short way; everything else (options, scopes, hints, deferred decisions,
 * bad arguments) start_span. An unsampled span here costs the checks, a
 * pooled handle, its context and the copy of its name: no allocation, no
 * id drawn (callgrind: bench_tracer ir unsampled).
 */
static inline __attribute__((always_inline)) tw_span *
start_plain(tw_tracer *t, const char *operation, const tw_span_context *parent)
{
    if (__builtin_expect(
            !t || !operation || atomic_load_explicit(&t->is_closed, memory_order_acquire), 0))
        return refuse_start(t, operation);
    if (parent == NULL) {
        if (__builtin_expect(tw__scope_tops != NULL, 0))
            return start_span(t, operation, NULL, 0, NULL, NULL);
    } else if (__builtin_expect(!is_plain_parent(t, parent), 0)) {
        return start_span(t, operation, NULL, 0, parent, NULL);
    }
    tw_span *s = span_alloc();
    if (__builtin_expect(s == NULL, 0)) {
        tw__log_msg(TW_LOG_ERROR, "tw_span_start: out of memory");
        return NULL;
    }
    s->state = TW__SPAN_OPEN;
    s->tracer = t;
    start_state st;
    bool is_sampled;
    if (parent) {
        st.is_sampler_decision = false;
        start_child(s, t, parent, operation, &st);
        is_sampled = s->context.flags & TW_FLAG_SAMPLED;
    } else {
        st.is_sampler_decision = false;
        is_sampled = start_root(s, t, operation, &st);
    }
    if (__builtin_expect(!is_sampled, 1)) {
        if (__builtin_expect(t->records_unsampled, 0))
            return start_local_record(s, operation, NULL, 0, parent, NULL);
        s->has_mono_start = false;
        keep_op_name(s, operation);
        return s;
    }
    st.debug_id = NULL;
    st.is_root = parent == NULL;
    st.is_forced = false;
    return start_recording_inline(s, operation, NULL, 0, parent, NULL, &st);
}

static __attribute__((noinline)) tw_span *start_plain_root(tw_tracer *t, const char *operation)
{
    return start_plain(t, operation, NULL);
}

tw_span *tw_span_start(tw_tracer *tracer, const char *operation, const tw_span_options *opts)
{
    if (opts)
        return start_span(tracer, operation, opts->refs, opts->n_refs, NULL, opts);
    /* The never-sampled root, the case instrumentation left on in a service
     * that does not trace pays on every request: no call but the name's copy
     * (a tail call), so no stack frame. Everything else: start_plain. */
    tw_span *s;
    if (__builtin_expect(tracer != NULL && operation != NULL && tracer->never_samples &&
                             !tracer->records_unsampled && tw__scope_tops == NULL &&
                             !atomic_load_explicit(&tracer->is_closed, memory_order_acquire) &&
                             (s = tls_pool.head) != NULL,
                         1)) {
        tls_pool.head = s->next_free;
        tls_pool.room++;
        s->state = TW__SPAN_OPEN;
        s->tracer = tracer;
        s->has_mono_start = false;
        s->needs_finish_work = false;
        s->context.flags = TW__FLAG_RANDOM | TW__FLAG_IN_SPAN;
        s->context.trace_id_high = 0;
        s->context.trace_id_low = 0;
        s->context.span_id = 0;
        s->context.parent_id = 0;
        s->context.baggage = NULL;
        s->context.extra = NULL;
        atomic_store_explicit(&s->ids_pending, TW__IDS_TRACE64 + tracer->is_128bit,
                              memory_order_relaxed);
        return keep_op_name_of_new(s, operation);
    }
    return start_plain_root(tracer, operation);
}

tw_span *tw_span_start_child(tw_tracer *tracer, const char *operation,
                             const tw_span_context *parent)
{
    return start_plain(tracer, operation, parent);
}

/* ---- finish ------------------------------------------------------------------------------- */

static __attribute__((noinline)) void mark_limits(tw_span *s)
{
    tw__span_data *d = s->data;
    if (d->dropped_tags) {
        tw_value v = {.type = TW_VALUE_INT64, .as.i64 = d->dropped_tags};
        add_tag(s, "tracewire.dropped_tags", &v, true);
    }
    if (d->dropped_logs) {
        tw_value v = {.type = TW_VALUE_INT64, .as.i64 = d->dropped_logs};
        add_tag(s, "tracewire.dropped_logs", &v, true);
    }
    if (d->truncated_values) {
        tw_value v = {.type = TW_VALUE_INT64, .as.i64 = d->truncated_values};
        add_tag(s, "tracewire.truncated_values", &v, true);
    }
}

/* The end of a local record (sample local): limit marks, then the handlers
 * that want unsampled spans; never reported. Out of line, like its start. */
static __attribute__((noinline, cold)) void finish_local_record(tw_span *s)
{
    mark_limits(s);
    tw__handlers_run(s->tracer, s->data);
}

/* A baggage the span replaced after lending values from it (tw_span): kept
 * until finish so that every value it lent stays valid. */
typedef struct tw__retired_baggage {
    struct tw__retired_baggage *next;
    tw__baggage *baggage;
} retired_baggage;

/* Drops what a span kept for its own life: its context's baggage and
 * extras, a long operation name, retired baggage; leaves the fields at 0 as
 * a pooled handle has them. Out of line: most spans have none of them. */
static __attribute__((noinline)) void free_kept(tw_span *s)
{
    tw__baggage_unref(s->context.baggage);
    tw__ctx_extra_unref(s->context.extra);
    s->context.baggage = NULL;
    s->context.extra = NULL;
    /* Lent implies a baggage (values are lent from one), so a span without
     * baggage never gets here with it set. */
    atomic_store_explicit(&s->is_baggage_lent, false, memory_order_relaxed);
    free(s->op_name_long);
    s->op_name_long = NULL;
    while (s->retired) {
        retired_baggage *next = s->retired->next;
        tw__baggage_unref(s->retired->baggage);
        free(s->retired);
        s->retired = next;
    }
    s->n_retired = 0;
}

/* The end of a recording span: its duration and flags, then the handlers
 * and the reporter (sampled), or the handlers that want unsampled spans
 * (a local record); the record (given to the reporter, or dropped) and
 * the tracer reference are let go. */
static inline void finish_record(tw_span *s, tw__span_data *d, bool has_end, int64_t end_us)
{
    tw_tracer *t = s->tracer;
    if (has_end)
        d->duration_us = end_us - d->start_us;
    else if (s->has_mono_start)
        d->duration_us = (tw__mono_ns() - s->start_mono_ns) / 1000;
    else
        d->duration_us = tw__now_us() - d->start_us;
    if (d->duration_us < 0)
        d->duration_us = 0;
    d->flags = s->context.flags & TW__FLAGS_WIRE; /* Jaeger's byte only */
    if (s->context.flags & TW_FLAG_SAMPLED) {
        if (__builtin_expect((d->dropped_tags | d->dropped_logs | d->truncated_values) != 0, 0))
            mark_limits(s);
        if (__builtin_expect(atomic_load_explicit(&t->is_closed, memory_order_acquire), 0)) {
            atomic_fetch_add_explicit(&t->spans_after_close, 1, memory_order_relaxed);
            tw__log_msg(TW_LOG_WARN,
                        "span \"%s\" finished after its tracer was closed; "
                        "dropped",
                        d->operation);
        } else {
            atomic_fetch_add_explicit(&t->spans_finished_sampled, 1, memory_order_relaxed);
            /* The handler chain may edit the record or drop it. */
            if (__builtin_expect(t->handlers == NULL, 1) || tw__handlers_run(t, d)) {
                s->data = NULL;
                tw__reporter_report_owned(t->reporter, d); /* takes the span's reference */
                tw__tracer_release(t);
                return;
            }
        }
    } else if (__builtin_expect(t->records_unsampled, 0) &&
               !atomic_load_explicit(&t->is_closed, memory_order_acquire)) {
        finish_local_record(s);
    }
    s->data = NULL;
    tw__span_data_unref(d);
    tw__tracer_release(t);
}

static __attribute__((noinline)) void finish(tw_span *s, bool has_end, int64_t end_us)
{
    if (!s)
        return;
    if (s->state != TW__SPAN_OPEN) {
        tw__log_msg(TW_LOG_ERROR, "tw_span_finish: span already finished (or not a span)");
        return;
    }
    if (__builtin_expect(s->needs_finish_work && tw__scope_tops != NULL, 0))
        tw__scope_span_finished(s); /* this thread's scopes forget the handle */
    tw__span_data *d = s->data;
    if (d)
        finish_record(s, d, has_end, end_us);
    if (__builtin_expect(s->needs_finish_work, 0) &&
        ((uintptr_t)s->context.baggage | (uintptr_t)s->context.extra | (uintptr_t)s->op_name_long |
         (uintptr_t)s->retired) != 0)
        free_kept(s);
    span_release(s);
}

void tw_span_finish(tw_span *span)
{
    /* A span that recorded nothing, kept nothing and was never in a scope:
     * back to the pool, with no stack frame. */
    if (__builtin_expect(span != NULL && span->state == TW__SPAN_OPEN && span->data == NULL &&
                             !span->needs_finish_work,
                         1)) {
        span_release(span);
        return;
    }
    finish(span, false, 0);
}

void tw_span_finish_at(tw_span *span, int64_t end_us)
{
    finish(span, true, end_us);
}

/* ---- accessors and writers ------------------------------------------------------------------ */

const tw_span_context *tw_span_get_context(const tw_span *span)
{
    if (!span || span->state != TW__SPAN_OPEN)
        return NULL;
    tw__span_ensure_ids(span); /* whoever reads the context reads its ids */
    return &span->context;
}

bool tw_span_is_sampled(const tw_span *span)
{
    return span && (span->context.flags & TW_FLAG_SAMPLED) && span->data;
}

/* NULL spans are silent no-ops everywhere below: tw_span_start returns NULL
 * only after logging why (a closed tracer, no memory), and instrumentation
 * keeps calling on the result; one line per cause is enough. */

void tw_span_set_firehose(tw_span *span)
{
    if (!span)
        return;
    TW_CHECK_ARG_VOID(span->state == TW__SPAN_OPEN);
    span->context.flags |= TW_FLAG_FIREHOSE;
    if (tw__scope_tops)
        tw__scope_span_changed(span);
}

void tw_span_set_operation_name(tw_span *span, const char *operation)
{
    if (!span)
        return;
    TW_CHECK_ARG_VOID(operation && span->state == TW__SPAN_OPEN);
    if (span->data) {
        size_t len = strlen(operation);
        if (len > TW__MAX_NAME_BYTES) {
            len = tw__utf8_cut(operation, TW__MAX_NAME_BYTES);
            span->data->truncated_values++;
        }
        if (!tw__span_data_set_operation(span->data, operation, len))
            tw__log_msg(TW_LOG_ERROR, "tw_span_set_operation_name: out of memory");
        return;
    }
    /* Not recording: keep the name, for a sampling.priority set later. */
    keep_op_name(span, operation);
}

/* Removes the non-structural tags named @key of a recording span. */
static void remove_tags(tw__span_data *d, const char *key)
{
    size_t kept = 0;
    for (size_t i = 0; i < d->n_tags; i++) {
        if (strcmp(d->tags[i].key, key) == 0)
            continue;
        d->tags[kept++] = d->tags[i];
    }
    d->n_tags = kept;
}

void tw_span_set_kind(tw_span *span, tw_span_kind kind)
{
    static const char *const names[] = {NULL, "server", "client", "producer", "consumer"};
    if (!span)
        return;
    TW_CHECK_ARG_VOID(span->state == TW__SPAN_OPEN);
    TW_CHECK_ARG_VOID((unsigned)kind < sizeof names / sizeof names[0]);
    if (!is_recording(span))
        return;
    remove_tags(span->data, TW_TAG_SPAN_KIND); /* the last kind set wins, alone */
    if (names[kind]) {
        tw_value v = {.type = TW_VALUE_STRING, .as.str = names[kind], .len = strlen(names[kind])};
        add_tag(span, TW_TAG_SPAN_KIND, &v, false);
    }
}

/* A tag on a span that records nothing and whose key cannot be
 * sampling.priority (it does not start with "sa"; key[1] exists when
 * key[0] is not NUL): nothing to do. The rest (sampling.priority, bad
 * arguments, recording spans) takes the long way, out of line, so that
 * this test needs no stack frame. */
static inline bool is_ignored_tag(const tw_span *span, const char *key)
{
    return __builtin_expect(
        span != NULL && span->data == NULL && key != NULL && (key[0] != 's' || key[1] != 'a'), 1);
}

static __attribute__((noinline)) void set_tag_str(tw_span *span, const char *key, const char *value)
{
    /* Spans that do not record skip the strlen; sampling.priority still needs
     * the value. */
    if (span && key && !is_recording(span) && !is_sampling_priority(key))
        return;
    tw_value v = {
        .type = TW_VALUE_STRING, .as.str = value ? value : "", .len = value ? strlen(value) : 0};
    set_tag(span, key, TW_VALUE_STRING, &v);
}

void tw_span_set_tag_str(tw_span *span, const char *key, const char *value)
{
    if (is_ignored_tag(span, key))
        return;
    set_tag_str(span, key, value);
}

static __attribute__((noinline)) void set_tag_bool(tw_span *span, const char *key, bool value)
{
    tw_value v = {.type = TW_VALUE_BOOL, .as.boolean = value};
    set_tag(span, key, TW_VALUE_BOOL, &v);
}

void tw_span_set_tag_bool(tw_span *span, const char *key, bool value)
{
    if (is_ignored_tag(span, key))
        return;
    set_tag_bool(span, key, value);
}

static __attribute__((noinline)) void set_tag_int64(tw_span *span, const char *key, int64_t value)
{
    tw_value v = {.type = TW_VALUE_INT64, .as.i64 = value};
    set_tag(span, key, TW_VALUE_INT64, &v);
}

void tw_span_set_tag_int64(tw_span *span, const char *key, int64_t value)
{
    if (is_ignored_tag(span, key))
        return;
    set_tag_int64(span, key, value);
}

static __attribute__((noinline)) void set_tag_double(tw_span *span, const char *key, double value)
{
    tw_value v = {.type = TW_VALUE_DOUBLE, .as.dbl = value};
    set_tag(span, key, TW_VALUE_DOUBLE, &v);
}

void tw_span_set_tag_double(tw_span *span, const char *key, double value)
{
    if (is_ignored_tag(span, key))
        return;
    set_tag_double(span, key, value);
}

void tw_span_set_tag_binary(tw_span *span, const char *key, const void *data, size_t len)
{
    if (!span)
        return;
    TW_CHECK_ARG_VOID(data || len == 0);
    tw_value v = {.type = TW_VALUE_BINARY, .as.bin = data, .len = len};
    set_tag(span, key, TW_VALUE_BINARY, &v);
}

void tw_span_log_fields(tw_span *span, int64_t timestamp_us, const tw_log_field *fields,
                        size_t n_fields)
{
    if (!span)
        return;
    TW_CHECK_ARG_VOID(fields || n_fields == 0);
    tw__span_data *d = span->data;
    if (!is_recording(span))
        return;
    const tw__limits *lim = &span->tracer->limits;
    if (d->n_logs >= lim->max_logs) {
        d->dropped_logs++;
        return;
    }
    size_t keep = n_fields > lim->max_log_fields ? lim->max_log_fields : n_fields;
    tw__log *log = tw__span_data_push_log(d, keep);
    if (!log) {
        d->dropped_logs++;
        return;
    }
    log->timestamp_us = timestamp_us ? timestamp_us : tw__now_us();
    for (size_t i = 0; i < keep; i++) {
        bool truncated = false;
        if (!fields[i].key) {
            d->truncated_values++;
            continue;
        }
        size_t key_len = strlen(fields[i].key);
        bool key_cut = key_len > TW__MAX_NAME_BYTES;
        if (key_cut)
            key_len = tw__utf8_cut(fields[i].key, TW__MAX_NAME_BYTES);
        if (!tw__tag_set_n(&d->arena, &log->fields[log->n_fields], fields[i].key, key_len,
                           &fields[i].value, lim->max_value_bytes, &truncated)) {
            d->truncated_values++;
            continue;
        }
        if (truncated || key_cut)
            d->truncated_values++;
        log->n_fields++;
    }
    /* Fields beyond the per-log cap are counted as cut values. */
    d->truncated_values += (uint32_t)(n_fields - keep);
    d->n_logs++;
}

void tw_span_log_kv(tw_span *span, const char *key, ...)
{
    if (!span)
        return;
    TW_CHECK_ARG_VOID(key);
    if (!is_recording(span))
        return;
    tw_log_field fields[64];
    size_t n = 0;
    va_list ap;
    va_start(ap, key);
    for (const char *k = key; k; k = va_arg(ap, const char *)) {
        const char *v = va_arg(ap, const char *);
        if (!v) {
            va_end(ap);
            tw__log_msg(TW_LOG_ERROR, "tw_span_log_kv: key \"%s\" has no value; log dropped", k);
            return;
        }
        if (n < sizeof fields / sizeof fields[0])
            fields[n++] =
                (tw_log_field){k, {.type = TW_VALUE_STRING, .as.str = v, .len = strlen(v)}};
    }
    va_end(ap);
    tw_span_log_fields(span, 0, fields, n);
}

void tw_span_log_event(tw_span *span, const char *event)
{
    if (!span)
        return;
    TW_CHECK_ARG_VOID(event);
    tw_log_field f = {"event", {.type = TW_VALUE_STRING, .as.str = event, .len = strlen(event)}};
    tw_span_log_fields(span, 0, &f, 1);
}

void tw_span_set_error(tw_span *span, const char *kind, const char *message)
{
    if (!span)
        return;
    tw_span_set_tag_bool(span, "error", true);
    tw_log_field fields[3];
    size_t n = 0;
    fields[n++] = (tw_log_field){"event", {.type = TW_VALUE_STRING, .as.str = "error", .len = 5}};
    if (kind)
        fields[n++] = (tw_log_field){
            "error.kind", {.type = TW_VALUE_STRING, .as.str = kind, .len = strlen(kind)}};
    if (message)
        fields[n++] = (tw_log_field){
            "message", {.type = TW_VALUE_STRING, .as.str = message, .len = strlen(message)}};
    tw_span_log_fields(span, 0, fields, n);
}

/* Keeps @old (the span's previous baggage, which lent values) until finish.
 * False when the span keeps TW__SPAN_RETIRED_MAX already or no memory. */
static bool retire_baggage(tw_span *span, tw__baggage *old)
{
    if (span->n_retired >= TW__SPAN_RETIRED_MAX)
        return false;
    retired_baggage *r = malloc(sizeof *r);
    if (!r)
        return false;
    r->baggage = old;
    r->next = span->retired;
    span->retired = r;
    span->n_retired++;
    return true;
}

static tw_status refuse_baggage(tw_span *span, const char *key, const char *why, tw_status st)
{
    atomic_fetch_add_explicit(&span->tracer->baggage_dropped, 1, memory_order_relaxed);
    tw__log_msg(TW_LOG_WARN, "tw_span_set_baggage: baggage item \"%.64s\" dropped: %s", key, why);
    return st;
}

tw_status tw_span_set_baggage(tw_span *span, const char *key, const char *value)
{
    if (!span)
        return TW_E_INVALID_ARG; /* a failed start, already logged */
    TW_CHECK_ARG(span->state == TW__SPAN_OPEN && key && *key, TW_E_INVALID_ARG);
    /* The limits inject and extract apply: what could never travel is
     * refused here, where the caller can still see it. */
    const char *why = tw__baggage_refusal(span->context.baggage, key, value);
    if (why)
        return refuse_baggage(span, key, why, TW_E_LIMIT);
    tw__baggage *old = span->context.baggage;
    /* The values lent from the old baggage must outlive this change: the
     * span keeps its reference (a child or scope sharing it may finish
     * before the span does, so their references are no guarantee). */
    bool must_keep_old = old && atomic_load_explicit(&span->is_baggage_lent, memory_order_relaxed);
    if (must_keep_old && span->n_retired >= TW__SPAN_RETIRED_MAX)
        return refuse_baggage(span, key,
                              "the span's baggage was read and then changed more than " TW__STR(
                                  TW__SPAN_RETIRED_MAX) " times (values lent stay valid until "
                                                        "finish, so memory would grow)",
                              TW_E_LIMIT);
    bool is_empty = false;
    tw__baggage *nb = tw__baggage_with(old, key, value, &is_empty);
    if (!nb && !is_empty)
        return refuse_baggage(span, key, "out of memory", TW_E_NOMEM);
    if (must_keep_old && !retire_baggage(span, old)) {
        tw__baggage_unref(nb);
        return refuse_baggage(span, key, "out of memory", TW_E_NOMEM);
    }
    if (!must_keep_old)
        tw__baggage_unref(old);
    span->context.baggage = nb;
    span->needs_finish_work = true;
    atomic_store_explicit(&span->is_baggage_lent, false, memory_order_relaxed);
    if (tw__scope_tops)
        tw__scope_span_changed(span); /* children started from its scopes see it */
    return TW_OK;
}

const char *tw_span_get_baggage(const tw_span *span, const char *key)
{
    if (!span || !key)
        return NULL;
    const char *v = tw__baggage_get(span->context.baggage, key);
    if (v)
        atomic_store_explicit(&((tw_span *)span)->is_baggage_lent, true, memory_order_relaxed);
    return v;
}
