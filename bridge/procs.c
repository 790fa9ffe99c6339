/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/procs.c: the process table of one `tracewire convert` run
 * (bridge/convert.h). Readers describe the process of every span they read
 * (a Zipkin endpoint, a Jaeger Batch process, a Dapper log line's process);
 * the table keeps one copy per distinct process, so a span carries a pointer
 * and writers group spans by process with pointer equality (Jaeger's p1..pN,
 * one Batch per process, one OTLP resource per process).
 *
 * Equality: the same service name and the same tags, in the same order, with
 * equal types and values. Memory: one copy per distinct process for the
 * whole run (a run over the logs of N hosts holds N processes); the table is
 * a GHashTable keyed by a hash of the whole process, with chains compared
 * field by field. Single-threaded.
 */
#include "convert.h"

#include <glib.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Lookups go: the address guess (below), the fingerprint guess (below),
 * the recent processes, the hash. Processes returned last, tried before
 * hashing: a file holds the spans of one or a few processes, so most
 * lookups hit here, at the cost of one comparison. A miss hashes the whole process (8 bytes a step:
 * a byte at a time, it cost about 1,000 instructions a span on `convert --from dapper`, whose 20
 * processes mostly miss). Hashing first and comparing only the recent process with the same hash
 * was measured slower: a hit then pays the hash and the comparison. */
#define N_RECENT 4

/* Before those: by the address of the caller's process, the interned one
 * it equalled last time. A reader that keeps one process per host (the
 * Zipkin v1 readers) passes the same few addresses again and again, so this
 * is one comparison where the recent ones took up to four and a miss the
 * hash. Only a guess: the caller may have changed the process at that
 * address (a reader reusing one scratch process for every record), so the
 * guess is compared in full like any other, unless the caller gave it a
 * stamp (twb_procs_intern_stamped): the same non-zero stamp at the same
 * address is the content the guess was made from (the Dapper reader's
 * shared processes, the Zipkin v2 reader's endpoint memo), so the
 * comparison is skipped. A reader that changes
 * a process at one address gives it a new stamp or none. */
#define N_BY_ADDRESS 64 /* a power of two */

/* Next: by a fingerprint of the process (the tag count, the ends of the
 * service name, each tag's lengths and the first and last 8 bytes of its key
 * and value), the interned process that last had it. It reads a few words
 * per tag where the hash reads every byte, and tells apart the processes of
 * one service on many hosts, where the recent ones mostly miss (a Dapper
 * log's 20 processes). A guess again, compared in full. */
#define N_BY_PRINT 256 /* a power of two */

typedef struct by_print {
    uint64_t print;
    const tw__process *interned; /* NULL when unused */
} by_print;

typedef struct by_address {
    const tw__process *given;    /* the caller's; NULL when unused */
    const tw__process *interned; /* what it equalled */
    uint64_t stamp;              /* the caller's stamp of it; 0: none */
} by_address;

struct twb_procs {
    GHashTable
        *by_hash;   /* uint64 hash (boxed in the key pointer's target) -> GSList of tw__process* */
    GPtrArray *all; /* every interned process, owned */
    const tw__process *recent[N_RECENT]; /* borrowed from `all`; NULL when unused */
    size_t recent_next;                  /* slot the next miss replaces */
    by_address guess[N_BY_ADDRESS];
    by_print prints[N_BY_PRINT];
};

static size_t address_slot(const tw__process *p)
{
    return (size_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 58) & (N_BY_ADDRESS - 1);
}

static uint64_t mix_word(uint64_t h, uint64_t w)
{
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

static uint64_t mix(uint64_t h, const void *data, size_t len)
{
    /* 8 bytes a step, the tail and the length last: a handful of short
     * strings per process, hashed on each miss of the recent ones. */
    const unsigned char *p = data;
    size_t n = len;
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix_word(h, w);
    }
    /* The 0-7 bytes left in two overlapping loads (or three bytes that
     * cover them all when fewer than 4), not a byte at a time. */
    uint64_t tail = 0;
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + n - 4, 4);
        tail = (uint64_t)hi << 32 | lo;
    } else if (n > 0) {
        tail = (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16;
    }
    return mix_word(h, tail ^ ((uint64_t)len << 56));
}

static uint64_t tag_hash(uint64_t h, const tw__tag *t)
{
    h = mix(h, t->key, t->key_len);
    h = mix(h, &t->type, sizeof t->type);
    switch (t->type) {
    case TW_VALUE_STRING:
    case TW_VALUE_BINARY:
        return mix(h, t->v.bin, t->len);
    case TW_VALUE_DOUBLE:
        return mix(h, &t->v.dbl, sizeof t->v.dbl);
    case TW_VALUE_BOOL: {
        unsigned char b = t->v.boolean ? 1 : 0;
        return mix(h, &b, 1);
    }
    default:
        return mix(h, &t->v.i64, sizeof t->v.i64);
    }
}

static uint64_t process_hash(const tw__process *p)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const char *service = p->service_name ? p->service_name : "";
    h = mix(h, service, strlen(service) + 1);
    for (size_t i = 0; i < p->n_tags; i++)
        h = tag_hash(h, &p->tags[i]);
    return h;
}

/* Equality of @n bytes, inline for the short keys and values of process
 * tags: a call to memcmp cost more than the comparison (callgrind). Loads
 * overlap instead of reading past either end. */
static inline bool bytes_equal(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    if (n >= 8 && n <= 16) {
        uint64_t x0, y0, x1, y1;
        memcpy(&x0, x, 8);
        memcpy(&y0, y, 8);
        memcpy(&x1, x + n - 8, 8);
        memcpy(&y1, y + n - 8, 8);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n >= 4 && n < 8) {
        uint32_t x0, y0, x1, y1;
        memcpy(&x0, x, 4);
        memcpy(&y0, y, 4);
        memcpy(&x1, x + n - 4, 4);
        memcpy(&y1, y + n - 4, 4);
        return ((x0 ^ y0) | (x1 ^ y1)) == 0;
    }
    if (n < 4) {
        for (size_t i = 0; i < n; i++) {
            if (x[i] != y[i])
                return false;
        }
        return true;
    }
    return memcmp(x, y, n) == 0;
}

static bool tag_equal(const tw__tag *a, const tw__tag *b)
{
    if (a->type != b->type || a->key_len != b->key_len || !bytes_equal(a->key, b->key, a->key_len))
        return false;
    switch (a->type) {
    case TW_VALUE_STRING:
    case TW_VALUE_BINARY:
        return a->len == b->len && bytes_equal(a->v.bin, b->v.bin, a->len);
    case TW_VALUE_DOUBLE:
        return memcmp(&a->v.dbl, &b->v.dbl, sizeof a->v.dbl) == 0;
    case TW_VALUE_BOOL:
        return a->v.boolean == b->v.boolean;
    default:
        return a->v.i64 == b->v.i64;
    }
}

static bool process_equal(const tw__process *a, const tw__process *b)
{
    if (a == b)
        return true;
    const char *sa = a->service_name ? a->service_name : "";
    const char *sb = b->service_name ? b->service_name : "";
    /* Most misses (a recent process of another service) differ in the tag
     * count or the service's first byte: decided before strcmp. */
    if (a->n_tags != b->n_tags || sa[0] != sb[0] || strcmp(sa, sb) != 0)
        return false;
    for (size_t i = 0; i < a->n_tags; i++) {
        if (!tag_equal(&a->tags[i], &b->tags[i]))
            return false;
    }
    return true;
}

static void free_process(void *p)
{
    tw__process_clear(p);
    free(p);
}

static void free_chain(void *chain)
{
    g_slist_free(chain);
}

twb_procs *twb_procs_new(void)
{
    twb_procs *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->by_hash = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, free_chain);
    t->all = g_ptr_array_new_with_free_func(free_process);
    return t;
}

void twb_procs_free(twb_procs *t)
{
    if (!t)
        return;
    g_hash_table_destroy(t->by_hash);
    g_ptr_array_free(t->all, TRUE);
    free(t);
}

size_t twb_procs_count(const twb_procs *t)
{
    return t ? t->all->len : 0;
}

static tw__process *copy_process(const tw__process *p)
{
    tw__process *c = malloc(sizeof *c);
    if (!c)
        return NULL;
    tw__process_init(c);
    if (!tw__process_set_service(c, p->service_name ? p->service_name : ""))
        goto fail;
    for (size_t i = 0; i < p->n_tags; i++) {
        tw_value v;
        tw__tag_to_value(&p->tags[i], &v);
        if (!tw__process_add_tag(c, p->tags[i].key, &v))
            goto fail;
    }
    return c;
fail:
    free_process(c);
    return NULL;
}

static const tw__process *remember(twb_procs *t, const tw__process *p)
{
    t->recent[t->recent_next] = p;
    t->recent_next = (t->recent_next + 1) % N_RECENT;
    return p;
}

static const tw__process *intern(twb_procs *t, const tw__process *p, const tw__process *tried);

/* Up to 16 bytes of @n at @p as one word: the first and last 8 (or the
 * bytes there are), never reading outside them. */
static uint64_t ends_word(const void *data, size_t n)
{
    const unsigned char *p = data;
    uint64_t a, b;
    if (n >= 8) {
        memcpy(&a, p, 8);
        memcpy(&b, p + n - 8, 8);
        return a ^ (b * 0x9e3779b97f4a7c15ull);
    }
    if (n >= 4) {
        uint32_t x, y;
        memcpy(&x, p, 4);
        memcpy(&y, p + n - 4, 4);
        return (uint64_t)y << 32 | x;
    }
    return n ? (uint64_t)p[0] | (uint64_t)p[n / 2] << 8 | (uint64_t)p[n - 1] << 16 : 0;
}

static uint64_t fingerprint(const tw__process *p)
{
    const char *service = p->service_name ? p->service_name : "";
    size_t service_len = strlen(service);
    uint64_t h = mix_word(p->n_tags, ends_word(service, service_len) ^ service_len);
    for (size_t i = 0; i < p->n_tags; i++) {
        const tw__tag *g = &p->tags[i];
        uint64_t v;
        switch (g->type) { /* only the member the type names is set */
        case TW_VALUE_STRING:
        case TW_VALUE_BINARY:
            v = ends_word(g->v.bin, g->len) ^ g->len;
            break;
        case TW_VALUE_DOUBLE:
            memcpy(&v, &g->v.dbl, sizeof v);
            break;
        case TW_VALUE_BOOL:
            v = g->v.boolean;
            break;
        default:
            v = (uint64_t)g->v.i64;
            break;
        }
        h = mix_word(h, ends_word(g->key, g->key_len) ^ (uint64_t)g->key_len << 56 ^ g->type);
        h = mix_word(h, v);
    }
    return h;
}

const tw__process *twb_procs_intern(twb_procs *t, const tw__process *p)
{
    return twb_procs_intern_stamped(t, p, 0);
}

const tw__process *twb_procs_intern_stamped(twb_procs *t, const tw__process *p, uint64_t stamp)
{
    if (!t || !p)
        return NULL;
    by_address *g = &t->guess[address_slot(p)];
    if (stamp && g->given == p && g->stamp == stamp)
        return g->interned;
    const tw__process *tried = NULL; /* compared already: not again below */
    if (g->given == p) {
        if (process_equal(g->interned, p)) {
            g->stamp = stamp;
            return g->interned;
        }
        tried = g->interned;
    }
    uint64_t print = fingerprint(p);
    /* The top bits: multiplying carries every input bit upward only. */
    by_print *f = &t->prints[(print >> 56) & (N_BY_PRINT - 1)];
    if (f->interned && f->print == print && f->interned != tried) {
        if (process_equal(f->interned, p)) {
            *g = (by_address){p, f->interned, stamp};
            return f->interned;
        }
        if (!tried)
            tried = f->interned;
    }
    const tw__process *r = intern(t, p, tried);
    if (r) {
        *g = (by_address){p, r, stamp};
        *f = (by_print){print, r};
    }
    return r;
}

/* @tried: an interned process known to differ from @p, or NULL. */
static const tw__process *intern(twb_procs *t, const tw__process *p, const tw__process *tried)
{
    const char *service = p->service_name ? p->service_name : "";
    for (size_t i = 0; i < N_RECENT; i++) {
        const tw__process *r = t->recent[i];
        /* process_equal's first tests inline: most recent ones miss there. */
        if (r && r != tried && r->n_tags == p->n_tags &&
            (r->service_name ? r->service_name[0] : '\0') == service[0] && process_equal(r, p))
            return r;
    }
    uint64_t h = process_hash(p);
    GSList *chain = g_hash_table_lookup(t->by_hash, &h);
    for (GSList *l = chain; l; l = l->next) {
        if (l->data != tried && process_equal(l->data, p))
            return remember(t, l->data);
    }
    tw__process *copy = copy_process(p);
    if (!copy)
        return NULL;
    g_ptr_array_add(t->all, copy);
    if (chain) {
        /* Appending after the head keeps the table's value pointer valid. */
        chain->next = g_slist_prepend(chain->next, copy);
    } else {
        uint64_t *key = g_new(uint64_t, 1);
        *key = h;
        g_hash_table_insert(t->by_hash, key, g_slist_prepend(NULL, copy));
    }
    return remember(t, copy);
}
