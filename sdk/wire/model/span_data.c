/* SPDX-License-Identifier: Apache-2.0 */
/*
 * wire/model/span_data.c: span records, their arenas, and process records.
 *
 * A record and its first arena block share one allocation
 * (TW__SPAN_INLINE_ARENA bytes), so a typical sampled span costs a single
 * malloc; larger spans chain extra blocks that double in size. Nothing here
 * enforces tracer limits: span.c decides what to keep, this file only stores.
 * See span_data.h for the locking rule (none; single writer, then immutable).
 */
#include "wire/model/span_data.h"
#include "wire/core/copy_short.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fork.h"
#include "wire/core/tls.h"

#define ARENA_MIN_BLOCK 1024u

static size_t align_up(size_t n)
{
    const size_t a = _Alignof(max_align_t);
    return (n + a - 1) & ~(a - 1);
}

void tw__arena_init(tw__arena *a)
{
    a->head = NULL;
    a->extra = NULL;
}

void tw__arena_init_inline(tw__arena *a, void *block_mem, size_t block_total)
{
    tw__arena_block *b = block_mem;
    b->next = NULL;
    b->size = block_total - sizeof(tw__arena_block);
    b->used = 0;
    a->head = b;
    a->extra = NULL;
}

/* A new block of at least @block bytes and at least @need (aligned), @need
 * of them taken. */
static void *new_block(tw__arena *a, size_t need, size_t block)
{
    if (block < need)
        block = need;
    if (block > SIZE_MAX - sizeof(tw__arena_block))
        return NULL;
    tw__arena_block *b = malloc(sizeof(tw__arena_block) + block);
    if (!b)
        return NULL;
    b->size = block;
    b->used = need;
    /* Heap blocks are chained on `extra` for release; `head` always points
     * to the newest block (older blocks' tails are abandoned, bounded by the
     * doubling to less than half of the total). */
    b->next = a->extra;
    a->extra = b;
    a->head = b;
    return b->data;
}

void *tw__arena_alloc_block(tw__arena *a, size_t size)
{
    if (size > SIZE_MAX - _Alignof(max_align_t))
        return NULL;
    size_t need = align_up(size == 0 ? 1 : size);
    if (a->head && a->head->size - a->head->used >= need) { /* the inline path's case */
        void *p = (char *)a->head->data + a->head->used;
        a->head->used += need;
        return p;
    }
    /* At least twice the previous block, and at least ARENA_MIN_BLOCK. */
    size_t prev = a->head ? a->head->size : 0;
    return new_block(a, need, prev * 2 > ARENA_MIN_BLOCK ? prev * 2 : ARENA_MIN_BLOCK);
}

void tw__arena_release(tw__arena *a)
{
    tw__arena_block *b = a->extra;
    while (b) {
        tw__arena_block *next = b->next;
        free(b);
        b = next;
    }
    a->extra = NULL;
    a->head = NULL;
}

/* ---- the record pool ---------------------------------------------------------------------
 *
 * Records are finished on application threads and freed on the reporter
 * thread, so with plain malloc/free every sampled span paid a cross-thread
 * free into the application thread's arena and a fresh allocation there:
 * ~300 instructions and contended arena locks (callgrind, bench_tracer).
 * Unused records are kept instead, in chains of up to POOL_BATCH: each
 * thread fills one chain and keeps one full spare, and full chains are
 * exchanged whole with a shared stack of chains under `shared_lock`, so the
 * lock is taken once per 32 records and a chain changes hands in a few
 * instructions (moving records one by one cost ~10 per record on each
 * side). Both levels are bounded (2 chains a thread, POOL_SHARED_MAX
 * records shared); beyond them a chain is freed.
 *
 * The pool is on in every build, sanitizers and valgrind included, so they
 * test what users run. A kept record is poisoned for them instead (all but
 * its `next_free` link): AddressSanitizer reports a use after its release
 * as use-after-poison, and memcheck as an invalid access (and its contents
 * as undefined again once it is reused), as they would for a freed block.
 *
 * fork(): `shared_lock` is one of fork.h's innermost locks (nothing is
 * taken while it is held), so the hooks of fork.c take it after every
 * other and release it before any other hook runs, and a reporter's child
 * hook can free spans into the pool. A forked child keeps the forking
 * thread's local chains; the other threads' chains stay unused in it.
 */
#if defined(__SANITIZE_ADDRESS__)
#define POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POOL_ASAN 1
#endif
#endif
#ifdef POOL_ASAN
#include <sanitizer/asan_interface.h>
#endif
#if defined(__has_include)
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define POOL_VALGRIND 1
#endif
#endif

#define POOL_BATCH 32u        /* records in a full chain */
#define POOL_SHARED_MAX 4096u /* records kept process-wide */
#define POOL_SHARED_CHAINS (POOL_SHARED_MAX / POOL_BATCH)

/* A chain of records linked by next_free. */
typedef struct {
    tw__span_data *head;
    size_t n;
} record_chain;

typedef struct {
    record_chain fill;    /* taken from and given to; up to POOL_BATCH */
    tw__span_data *spare; /* NULL or a full chain (POOL_BATCH records) */
    bool has_destructor;
} record_list;

static TW__TLS record_list local_records;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
/* Full chains, and the partial ones of exited threads; guarded by shared_lock. */
static record_chain shared_chains[POOL_SHARED_CHAINS];
static size_t shared_n_chains; /* guarded by shared_lock */
static size_t shared_n;        /* records in them; guarded by shared_lock */
static pthread_key_t local_key;
static pthread_once_t local_key_once = PTHREAD_ONCE_INIT;

static size_t record_size(void)
{
    return TW__SPAN_RECORD_BYTES;
}

/* A record entering the pool: nothing but its link (the first field) may
 * be touched, so one range is poisoned: a client request costs about a
 * dozen instructions natively too. */
static void poison_record(tw__span_data *s)
{
    _Static_assert(offsetof(tw__span_data, next_free) == 0, "the link leads the record");
    char *rest = (char *)s + sizeof s->next_free;
#ifdef POOL_ASAN
    ASAN_POISON_MEMORY_REGION(rest, record_size() - sizeof s->next_free);
#endif
#ifdef POOL_VALGRIND
    VALGRIND_MAKE_MEM_NOACCESS(rest, record_size() - sizeof s->next_free);
#endif
    (void)rest;
}

/* A record leaving the pool: writable, its old contents undefined. */
static void unpoison_record(tw__span_data *s)
{
#ifdef POOL_ASAN
    ASAN_UNPOISON_MEMORY_REGION(s, record_size());
#endif
#ifdef POOL_VALGRIND
    VALGRIND_MAKE_MEM_UNDEFINED(s, record_size());
#endif
    (void)s;
}

static void free_list(tw__span_data *s)
{
    while (s) {
        tw__span_data *next = s->next_free;
        unpoison_record(s);
        free(s);
        s = next;
    }
}

/* Hands a chain to the shared stack; false when it is full (the caller
 * frees the chain). */
static bool put_chain(record_chain c)
{
    pthread_mutex_lock(&shared_lock);
    bool has_room = shared_n_chains < POOL_SHARED_CHAINS && shared_n + c.n <= POOL_SHARED_MAX;
    if (has_room) {
        shared_chains[shared_n_chains++] = c;
        shared_n += c.n;
    }
    pthread_mutex_unlock(&shared_lock);
    return has_room;
}

/* Thread exit: hand the thread's chains to the shared stack (or free them). */
static void local_records_destroy(void *arg)
{
    record_list *l = arg;
    if (l->fill.head && !put_chain(l->fill))
        free_list(l->fill.head);
    record_chain spare = {l->spare, POOL_BATCH};
    if (spare.head && !put_chain(spare))
        free_list(spare.head);
    l->fill = (record_chain){NULL, 0};
    l->spare = NULL;
    l->has_destructor = false; /* a later destructor that keeps records sets it again */
}

void tw__span_data_pool_fork_prepare(void)
{
    pthread_mutex_lock(&shared_lock);
}

void tw__span_data_pool_fork_parent(void)
{
    pthread_mutex_unlock(&shared_lock);
}

void tw__span_data_pool_fork_child(void)
{
    pthread_mutex_unlock(&shared_lock); /* held by this thread only: the list is whole */
}

static void local_key_create(void)
{
    tw__fork_install(); /* before shared_lock is first used */
    pthread_key_create(&local_key, local_records_destroy);
}

void tw__span_data_pool_trim(void)
{
    pthread_mutex_lock(&shared_lock);
    record_chain all[POOL_SHARED_CHAINS];
    size_t n_chains = shared_n_chains;
    memcpy(all, shared_chains, n_chains * sizeof all[0]);
    shared_n_chains = 0;
    shared_n = 0;
    pthread_mutex_unlock(&shared_lock);
    for (size_t i = 0; i < n_chains; i++)
        free_list(all[i].head);
    free_list(local_records.fill.head);
    free_list(local_records.spare);
    local_records.fill = (record_chain){NULL, 0};
    local_records.spare = NULL;
}

/* Makes sure this thread's list goes back to the pool when the thread
 * exits: from the first record it keeps, whether released here or taken
 * in a batch from the shared list (a thread that only starts spans, which
 * other threads finish, exits with the rest of its last batch). */
static void watch_thread_exit(record_list *l)
{
    if (l->has_destructor)
        return;
    pthread_once(&local_key_once, local_key_create);
    pthread_setspecific(local_key, l);
    l->has_destructor = true;
}

/* A chain from the shared stack, or none. */
static record_chain take_chain(void)
{
    record_chain c = {NULL, 0};
    pthread_once(&local_key_once, local_key_create);
    pthread_mutex_lock(&shared_lock);
    if (shared_n_chains > 0) {
        c = shared_chains[--shared_n_chains];
        shared_n -= c.n;
    }
    pthread_mutex_unlock(&shared_lock);
    return c;
}

static tw__span_data *record_take(void)
{
    record_list *l = &local_records;
    if (!l->fill.head) {
        if (l->spare) {
            l->fill = (record_chain){l->spare, POOL_BATCH};
            l->spare = NULL;
        } else {
            l->fill = take_chain();
            if (!l->fill.head)
                return NULL;
            watch_thread_exit(l);
        }
    }
    tw__span_data *s = l->fill.head;
    l->fill.head = s->next_free;
    l->fill.n--;
    unpoison_record(s);
    return s;
}

/* Keeps a dead record for reuse. A full chain becomes the spare; the spare
 * it replaces goes to the shared stack, or is freed when that is full. */
static void record_give(tw__span_data *s)
{
    record_list *l = &local_records;
    watch_thread_exit(l);
    if (l->fill.n >= POOL_BATCH) {
        record_chain full = {l->spare, POOL_BATCH};
        l->spare = l->fill.head;
        l->fill = (record_chain){NULL, 0};
        if (full.head && !put_chain(full))
            free_list(full.head);
    }
    s->next_free = l->fill.head;
    poison_record(s);
    l->fill.head = s;
    l->fill.n++;
}

/* Zeroes the fields from trace_id_high to inline_tags (span_data.h; inline
 * tags are written before they are read). Field by field, which the
 * compiler turns into a dozen vector stores, where a memset of the range
 * is a `rep stos` of twice the instructions. The assertion catches a field
 * added to the range and not here. */
static inline void zero_fields(tw__span_data *s)
{
    /* (On LP64; elsewhere the layout differs and the list is the same.) */
    _Static_assert(sizeof(void *) != 8 || offsetof(tw__span_data, inline_tags) -
                                                  offsetof(tw__span_data, trace_id_high) ==
                                              4 * 8 + 8 + 2 * 8 + 2 * 8 + 8 + 3 * 8 + 4 * 4,
                   "every field from trace_id_high to inline_tags is zeroed below");
    s->trace_id_high = 0;
    s->trace_id_low = 0;
    s->span_id = 0;
    s->parent_id = 0;
    s->flags = 0;
    s->shared = false;
    s->is_duration_unknown = false;
    s->start_us = 0;
    s->duration_us = 0;
    s->refs = NULL;
    s->n_refs = 0;
    s->n_tags = 0;
    s->logs = NULL;
    s->n_logs = 0;
    s->cap_logs = 0;
    s->dropped_tags = 0;
    s->dropped_logs = 0;
    s->truncated_values = 0;
    s->exempt_tags = 0;
}

tw__span_data *tw__span_data_new(void)
{
    size_t head = align_up(sizeof(tw__span_data));
    tw__span_data *s = record_take();
    if (!s) {
        s = malloc(record_size());
        if (!s)
            return NULL;
    }
    zero_fields(s);
    s->next_free = NULL;
    s->operation_len = 0;
    atomic_init(&s->refcount, 1);
    tw__arena_init_inline(&s->arena, (char *)s + head, TW__SPAN_INLINE_ARENA);
    s->operation = "";
    s->tags = s->inline_tags;
    s->cap_tags = sizeof s->inline_tags / sizeof s->inline_tags[0];
    return s;
}

size_t tw__span_data_footprint_blocks(const tw__span_data *s)
{
    size_t bytes = 0;
    for (const tw__arena_block *b = s->arena.extra; b; b = b->next)
        bytes += sizeof(tw__arena_block) + b->size + 16;
    return bytes;
}

tw__span_data *tw__span_data_ref(tw__span_data *s)
{
    /* Relaxed is enough for an increment: the caller already holds a
     * reference, so the record cannot be freed concurrently. */
    atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
    return s;
}

void tw__span_data_unref(tw__span_data *s)
{
    if (!s)
        return;
    if (atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1)
        return;
    tw__arena_release(&s->arena);
    record_give(s);
}

bool tw__span_data_set_operation(tw__span_data *s, const char *op, size_t len)
{
    char *copy = tw__arena_strndup(&s->arena, op, len);
    if (!copy)
        return false;
    s->operation = copy;
    /* The encoders write up to the first NUL (a decoded name may hold one). */
    size_t n = strlen(copy);
    s->operation_len = n < UINT32_MAX ? (uint32_t)n : UINT32_MAX;
    return true;
}

/* Grows an arena array to at least n+1 elements (doubling, starting at
 * @first). */
static void *grow(tw__arena *a, void *items, size_t n, size_t *cap, size_t elem, size_t first)
{
    if (n < *cap)
        return items;
    size_t ncap = *cap ? *cap * 2 : first;
    void *fresh = tw__arena_alloc(a, ncap * elem);
    if (!fresh)
        return NULL;
    if (n)
        memcpy(fresh, items, n * elem);
    *cap = ncap;
    return fresh;
}

tw__tag *tw__span_data_grow_tags(tw__span_data *s)
{
    /* The six inline tags are full. When the record's own block has no
     * room for twice as many either, the new array takes a heap block of
     * twice that block, not ARENA_MIN_BLOCK: it holds the array and the
     * rest of a typical span's strings, and spans of seven to a dozen tags
     * (OTLP's with their resource attributes) are common enough that the
     * smaller block is a tenth of a convert's peak memory. */
    size_t n = s->n_tags;
    tw__arena_block *b = s->arena.head;
    if (n == s->cap_tags && n > 0 && !s->arena.extra && b &&
        b->size - b->used < align_up(2 * n * sizeof(tw__tag))) {
        tw__tag *tags = new_block(&s->arena, align_up(2 * n * sizeof(tw__tag)), 2 * b->size);
        if (!tags)
            return NULL;
        memcpy(tags, s->tags, n * sizeof(tw__tag));
        s->tags = tags;
        s->cap_tags = 2 * n;
        return &s->tags[n];
    }
    size_t cap = s->cap_tags;
    tw__tag *tags = grow(&s->arena, s->tags, n, &cap, sizeof(tw__tag), 8);
    if (!tags)
        return NULL;
    s->tags = tags;
    s->cap_tags = cap;
    return &s->tags[n];
}

tw__log *tw__span_data_push_log(tw__span_data *s, size_t n_fields)
{
    /* Four logs first, not eight: most spans log once or twice (a Zipkin
     * span's annotations), and the smaller array leaves a span with a grown
     * tag array within its first heap block. */
    size_t cap = s->cap_logs;
    tw__log *logs = grow(&s->arena, s->logs, s->n_logs, &cap, sizeof(tw__log), 4);
    if (!logs)
        return NULL;
    s->logs = logs;
    s->cap_logs = cap;
    tw__log *l = &s->logs[s->n_logs];
    l->timestamp_us = 0;
    l->n_fields = 0;
    l->fields = n_fields ? tw__arena_alloc(&s->arena, n_fields * sizeof(tw__tag)) : NULL;
    if (n_fields && !l->fields)
        return NULL;
    return l;
}

bool tw__span_data_add_ref(tw__span_data *s, tw__ref_type type, uint64_t trace_hi,
                           uint64_t trace_lo, uint64_t span_id)
{
    tw__ref *refs = tw__arena_alloc(&s->arena, (s->n_refs + 1) * sizeof(tw__ref));
    if (!refs)
        return false;
    if (s->n_refs)
        memcpy(refs, s->refs, s->n_refs * sizeof(tw__ref));
    refs[s->n_refs] = (tw__ref){type, trace_hi, trace_lo, span_id};
    s->refs = refs;
    s->n_refs++;
    return true;
}

size_t tw__utf8_cut(const char *str, size_t cap)
{
    size_t n = cap;
    /* Step back over continuation bytes (10xxxxxx) of a split character. */
    while (n > 0 && ((unsigned char)str[n] & 0xC0) == 0x80)
        n--;
    return n;
}

char *tw__arena_strndup(tw__arena *a, const char *str, size_t len)
{
    char *p = tw__arena_alloc(a, len + 1);
    if (!p)
        return NULL;
    tw__copy_short(p, str, len);
    p[len] = '\0';
    return p;
}

bool tw__tag_store_rare(tw__arena *a, tw__tag *tag, const char *key, size_t key_len,
                        tw_value_type type, const char *src, size_t len)
{
    if (key_len > UINT32_MAX || len > SIZE_MAX - key_len - 2)
        return false;
    char *k = tw__arena_alloc(a, key_len + len + 2);
    if (!k)
        return false;
    memcpy(k, key, key_len);
    k[key_len] = '\0';
    char *copy = k + key_len + 1;
    if (len)
        memcpy(copy, src, len);
    copy[len] = '\0';
    *tag =
        (tw__tag){.key = k, .v.str = copy, .len = len, .key_len = (uint32_t)key_len, .type = type};
    return true;
}

bool tw__tag_set_cut(tw__arena *a, tw__tag *tag, const char *key, size_t key_len,
                     const tw_value *value, size_t value_cap, bool *was_truncated)
{
    /* tw__tag_set_n calls this for a string or binary longer than the cap. */
    tw_value cut = *value;
    cut.len = value->type == TW_VALUE_STRING ? tw__utf8_cut(value->as.str, value_cap) : value_cap;
    *was_truncated = true;
    return tw__tag_store(a, tag, key, key_len, &cut);
}

const tw__tag *tw__span_data_find_tag(const tw__span_data *s, const char *key)
{
    /* Tags carry their key's length: only a key of the same length is
     * compared (a key holds no NUL, so equal bytes mean equal keys). */
    size_t len = strlen(key);
    for (size_t i = s->n_tags; i > 0; i--) {
        const tw__tag *t = &s->tags[i - 1];
        if (t->key_len == len && memcmp(t->key, key, len) == 0)
            return t;
    }
    return NULL;
}

void tw__process_init(tw__process *p)
{
    memset(p, 0, sizeof(*p));
    tw__arena_init(&p->arena);
    p->service_name = "";
}

void tw__process_clear(tw__process *p)
{
    tw__arena_release(&p->arena);
    tw__process_init(p);
}

void tw__process_reset(tw__process *p)
{
    tw__arena_block *b = p->arena.extra;
    if (!b || b->next) {
        tw__process_clear(p); /* none, or several blocks: start over */
        return;
    }
    /* One heap block: kept, emptied (a reader's next record reuses it). */
    b->used = 0;
    p->arena.head = b;
    p->service_name = "";
    p->tags = NULL;
    p->n_tags = 0;
    p->cap_tags = 0;
}

bool tw__process_set_service(tw__process *p, const char *name)
{
    return tw__process_set_service_n(p, name, strlen(name));
}

bool tw__process_set_service_n(tw__process *p, const char *name, size_t len)
{
    char *copy = tw__arena_alloc(&p->arena, len + 1);
    if (!copy)
        return false;
    tw__copy_short(copy, name, len);
    copy[len] = '\0';
    p->service_name = copy;
    return true;
}

bool tw__process_add_tag(tw__process *p, const char *key, const tw_value *value)
{
    /* Doubling through the arena, like span tags: JAEGER_TAGS can hold
     * thousands of items, and copying the array per add was quadratic. */
    tw__tag *tags = grow(&p->arena, p->tags, p->n_tags, &p->cap_tags, sizeof(tw__tag), 8);
    if (!tags)
        return false;
    bool truncated = false;
    if (!tw__tag_set(&p->arena, &tags[p->n_tags], key, value, SIZE_MAX, &truncated))
        return false;
    p->tags = tags;
    p->n_tags++;
    return true;
}

const tw__tag *tw__process_find_tag(const tw__process *p, const char *key)
{
    for (size_t i = 0; i < p->n_tags; i++) {
        if (strcmp(p->tags[i].key, key) == 0)
            return &p->tags[i];
    }
    return NULL;
}

void tw__tag_to_value(const tw__tag *t, tw_value *out)
{
    out->type = t->type;
    out->len = t->len;
    switch (t->type) {
    case TW_VALUE_STRING:
        out->as.str = t->v.str;
        break;
    case TW_VALUE_BINARY:
        out->as.bin = t->v.bin;
        break;
    case TW_VALUE_DOUBLE:
        out->as.dbl = t->v.dbl;
        break;
    case TW_VALUE_BOOL:
        out->as.boolean = t->v.boolean;
        break;
    case TW_VALUE_INT64:
        out->as.i64 = t->v.i64;
        break;
    }
}

/* ---- builders for decoders ---------------------------------------------------------------------
 */

bool tw__span_data_reserve_tags(tw__span_data *s, size_t n)
{
    if (n <= s->cap_tags - s->n_tags)
        return true;
    if (n > (SIZE_MAX / sizeof(tw__tag)) - s->n_tags)
        return false;
    size_t cap = s->n_tags + n;
    tw__tag *tags = tw__arena_alloc(&s->arena, cap * sizeof(tw__tag));
    if (!tags)
        return false;
    if (s->n_tags)
        memcpy(tags, s->tags, s->n_tags * sizeof(tw__tag));
    s->tags = tags;
    s->cap_tags = cap;
    return true;
}

bool tw__span_data_add_event(tw__span_data *s, int64_t ts_us, const char *value, size_t len)
{
    tw__log *log = tw__span_data_push_log(s, 1);
    if (!log)
        return false;
    log->timestamp_us = ts_us;
    tw_value v = {.type = TW_VALUE_STRING, .len = len, .as.str = value};
    bool was_truncated = false;
    if (!tw__tag_set(&s->arena, &log->fields[0], "event", &v, SIZE_MAX, &was_truncated))
        return false;
    log->n_fields = 1;
    s->n_logs++; /* commits the log */
    return true;
}

/* ---- the model's time range ---------------------------------------------------------------- */

static bool time_ok(int64_t us)
{
    return us >= -TW__MAX_TIME_US && us <= TW__MAX_TIME_US;
}

bool tw__span_data_check_times(const tw__span_data *s, char *why, size_t why_size)
{
    const char *what = NULL;
    int64_t bad = 0;
    if (!time_ok(s->start_us)) {
        what = "start time";
        bad = s->start_us;
    } else if (!time_ok(s->duration_us)) {
        what = "duration";
        bad = s->duration_us;
    } else if (!time_ok(s->start_us + s->duration_us)) { /* both within range: no overflow */
        what = "end time";
        bad = s->start_us + s->duration_us;
    }
    for (size_t i = 0; !what && i < s->n_logs; i++) {
        if (!time_ok(s->logs[i].timestamp_us)) {
            what = "log timestamp";
            bad = s->logs[i].timestamp_us;
        }
    }
    if (!what)
        return true;
    if (why && why_size)
        snprintf(why, why_size,
                 "%s %" PRId64 " us is outside the range of span times (+-%" PRId64
                 " us: years 1677 to 2262)",
                 what, bad, TW__MAX_TIME_US);
    return false;
}
