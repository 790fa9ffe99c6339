/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/procs.c: the agent's process table (agent.h, "interned
 * processes"). Unlike convert's table (bridge/procs.c), which lives for one
 * run, the agent runs for months and hears from any number of processes, so
 * entries are reference-counted and swept: a span in flight holds one
 * reference; the table holds one; twa_procs_sweep frees entries whose only
 * reference is the table's. Taking a reference happens only under the table
 * lock (intern), so an entry seen with refs == 1 under the lock cannot gain
 * one while it is freed; releasing is a lock-free decrement.
 *
 * --tag overrides are applied when a process is interned: the copy gets the
 * tag (replacing one of the same key), so equal inputs still share one entry.
 * Equality: the same service and the same tags in the same order (values
 * compared by type and bytes).
 */
#include "agent/agent.h"

#include <stdlib.h>
#include <string.h>

#define N_BUCKETS 1024u

struct twa_procs {
    pthread_mutex_t lock;
    twa_proc *buckets[N_BUCKETS];
    size_t count;
    char **tag_keys, **tag_values; /* the overrides */
    size_t n_tags;
};

static uint64_t mix(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t process_hash(const tw__process *p)
{
    uint64_t h = 0xcbf29ce484222325ull;
    const char *service = p && p->service_name ? p->service_name : "";
    h = mix(h, service, strlen(service) + 1);
    for (size_t i = 0; p && i < p->n_tags; i++) {
        const tw__tag *t = &p->tags[i];
        h = mix(h, t->key, t->key_len + 1);
        h = mix(h, &t->type, sizeof t->type);
        if (t->type == TW_VALUE_STRING || t->type == TW_VALUE_BINARY)
            h = mix(h, t->v.bin, t->len);
        else if (t->type == TW_VALUE_BOOL)
            h = mix(h, &(unsigned char){t->v.boolean ? 1 : 0}, 1);
        else
            h = mix(h, &t->v.i64, sizeof t->v.i64);
    }
    return h;
}

static bool tag_equal(const tw__tag *a, const tw__tag *b)
{
    if (a->type != b->type || a->key_len != b->key_len || memcmp(a->key, b->key, a->key_len) != 0)
        return false;
    switch (a->type) {
    case TW_VALUE_STRING:
    case TW_VALUE_BINARY:
        return a->len == b->len && (a->len == 0 || memcmp(a->v.bin, b->v.bin, a->len) == 0);
    case TW_VALUE_DOUBLE:
        return memcmp(&a->v.dbl, &b->v.dbl, sizeof a->v.dbl) == 0;
    case TW_VALUE_BOOL:
        return a->v.boolean == b->v.boolean;
    default:
        return a->v.i64 == b->v.i64;
    }
}

/* An entry keeps the input's form (`orig`), which lookups compare, and the
 * form with the overrides applied, which spans carry. */
typedef struct entry {
    twa_proc proc;    /* first */
    tw__process orig; /* the input form: what lookups compare */
} entry;

static bool process_equal(const tw__process *a, const tw__process *b)
{
    const char *sa = a && a->service_name ? a->service_name : "";
    const char *sb = b && b->service_name ? b->service_name : "";
    size_t na = a ? a->n_tags : 0, nb = b ? b->n_tags : 0;
    if (strcmp(sa, sb) != 0 || na != nb)
        return false;
    for (size_t i = 0; i < na; i++) {
        if (!tag_equal(&a->tags[i], &b->tags[i]))
            return false;
    }
    return true;
}

static bool copy_process(tw__process *dst, const tw__process *src)
{
    tw__process_init(dst);
    if (!tw__process_set_service(dst, src && src->service_name ? src->service_name : ""))
        return false;
    for (size_t i = 0; src && i < src->n_tags; i++) {
        tw_value v;
        tw__tag_to_value(&src->tags[i], &v);
        if (!tw__process_add_tag(dst, src->tags[i].key, &v))
            return false;
    }
    return true;
}

static void free_tags(char **keys, char **values, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(keys[i]);
        free(values[i]);
    }
    free(keys);
    free(values);
}

bool twa_procs_set_tags(twa_procs *t, const char *const *tags, size_t n_tags)
{
    char **keys = calloc(n_tags + 1, sizeof *keys), **values = calloc(n_tags + 1, sizeof *values);
    bool ok = keys && values;
    for (size_t i = 0; ok && i < n_tags; i++) {
        const char *eq = strchr(tags[i], '=');
        if (!eq || eq == tags[i]) {
            ok = false;
            break;
        }
        keys[i] = strndup(tags[i], (size_t)(eq - tags[i]));
        values[i] = strdup(eq + 1);
        ok = keys[i] && values[i];
    }
    if (!ok) {
        if (keys && values)
            free_tags(keys, values, n_tags);
        else {
            free(keys);
            free(values);
        }
        return false;
    }
    pthread_mutex_lock(&t->lock);
    char **old_k = t->tag_keys, **old_v = t->tag_values;
    size_t old_n = t->n_tags;
    t->tag_keys = keys;
    t->tag_values = values;
    t->n_tags = n_tags;
    pthread_mutex_unlock(&t->lock);
    if (old_k)
        free_tags(old_k, old_v, old_n);
    return true;
}

twa_procs *twa_procs_new(const char *const *tags, size_t n_tags)
{
    twa_procs *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    pthread_mutex_init(&t->lock, NULL);
    if (!twa_procs_set_tags(t, tags, n_tags)) {
        pthread_mutex_destroy(&t->lock);
        free(t);
        return NULL;
    }
    return t;
}

static void free_entry(entry *e)
{
    tw__process_clear(&e->proc.process);
    tw__process_clear(&e->orig);
    free(e);
}

/* Copies @src into @e's process with the overrides applied (table lock held). */
static bool apply_overrides(twa_procs *t, entry *e, const tw__process *src)
{
    tw__process *dst = &e->proc.process;
    tw__process_init(dst);
    if (!tw__process_set_service(dst, src && src->service_name ? src->service_name : ""))
        return false;
    for (size_t i = 0; src && i < src->n_tags; i++) {
        bool overridden = false;
        for (size_t k = 0; k < t->n_tags && !overridden; k++)
            overridden = strcmp(src->tags[i].key, t->tag_keys[k]) == 0;
        if (overridden)
            continue;
        tw_value v;
        tw__tag_to_value(&src->tags[i], &v);
        if (!tw__process_add_tag(dst, src->tags[i].key, &v))
            return false;
    }
    for (size_t k = 0; k < t->n_tags; k++) {
        tw_value v = {.type = TW_VALUE_STRING, .len = strlen(t->tag_values[k])};
        v.as.str = t->tag_values[k];
        if (!tw__process_add_tag(dst, t->tag_keys[k], &v))
            return false;
    }
    return true;
}

twa_proc *twa_procs_intern(twa_procs *t, const tw__process *p)
{
    uint64_t h = process_hash(p);
    pthread_mutex_lock(&t->lock);
    twa_proc **head = &t->buckets[h % N_BUCKETS];
    for (twa_proc *q = *head; q; q = q->next) {
        if (q->hash == h && process_equal(&((entry *)q)->orig, p)) {
            twa_proc_ref(q);
            pthread_mutex_unlock(&t->lock);
            return q;
        }
    }
    entry *e = calloc(1, sizeof *e);
    bool ok = e && copy_process(&e->orig, p) && apply_overrides(t, e, p);
    if (!ok) {
        pthread_mutex_unlock(&t->lock);
        if (e)
            free_entry(e);
        return NULL;
    }
    e->proc.hash = h;
    atomic_init(&e->proc.refs, 2); /* the table's and the caller's */
    e->proc.next = *head;
    *head = &e->proc;
    t->count++;
    pthread_mutex_unlock(&t->lock);
    return &e->proc;
}

size_t twa_procs_sweep(twa_procs *t)
{
    pthread_mutex_lock(&t->lock);
    for (size_t b = 0; b < N_BUCKETS; b++) {
        twa_proc **pp = &t->buckets[b];
        while (*pp) {
            twa_proc *q = *pp;
            if (atomic_load_explicit(&q->refs, memory_order_acquire) == 1) {
                *pp = q->next;
                free_entry((entry *)q);
                t->count--;
            } else {
                pp = &q->next;
            }
        }
    }
    size_t left = t->count;
    pthread_mutex_unlock(&t->lock);
    return left;
}

size_t twa_procs_count(twa_procs *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->count;
    pthread_mutex_unlock(&t->lock);
    return n;
}

void twa_procs_free(twa_procs *t)
{
    if (!t)
        return;
    for (size_t b = 0; b < N_BUCKETS; b++) {
        twa_proc *q = t->buckets[b];
        while (q) {
            twa_proc *next = q->next;
            free_entry((entry *)q);
            q = next;
        }
    }
    free_tags(t->tag_keys, t->tag_values, t->n_tags);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

void twa_item_release(twa_item *it)
{
    tw__span_data_unref(it->data);
    twa_proc_unref(it->proc);
    it->data = NULL;
    it->proc = NULL;
}
