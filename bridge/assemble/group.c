/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/assemble/group.c: the rules the assembler applies to one group of
 * spans of one trace (assemble.h, top comment): longest trace id, exact
 * duplicates, merging the parts of one span, the shared-flag backfill, the
 * Jaeger shared-span ids with re-parenting, and clock skew, after Zipkin's
 * Trace.merge and SpanNode, Jaeger's clock skew adjuster and its
 * DeduplicateClientServerSpanIDs.
 *
 * The group is sorted once by (span id, non-shared first, CLIENT first,
 * arrival), so the parts of one span are adjacent and a parent is found by
 * binary search: O(n log n) per group, and nothing is hashed unless two
 * records share a span id. Records are changed in place when the assembler
 * holds the only reference, else copied first. Locking: none.
 */
#include "assemble/assemble_int.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/error.h"

#define LOOKBACK 64u          /* earlier parts of a span id compared for dedup and merge */
#define MERGE_MAX_ITEMS 4096u /* tags + logs a merged record may reach */
#define NONE SIZE_MAX

enum { KIND_NONE, KIND_CLIENT, KIND_SERVER, KIND_PRODUCER, KIND_CONSUMER, KIND_OTHER };

/* A local endpoint as Zipkin compares it; absent fields are NULL. */
typedef struct endpoint {
    const char *service;
    const tw__tag *ip, *ipv6, *port;
} endpoint;

typedef struct twb__item {
    twb_span *sp; /* its slot in the group's array (arrival position pos) */
    size_t pos;
    uint64_t hash;
    endpoint ep;      /* the part's own local endpoint */
    endpoint tracker; /* a merge base: the endpoint of every part merged so far */
    unsigned best_ep; /* a merge base: fields of its process's endpoint */
    uint8_t kind;     /* read through item_kind: found on first use (has_kind) */
    bool alive, has_hash, has_ep, has_kind, is_base, merged, reided;
    /* clock skew tree */
    size_t parent, first_child, next_sibling;
    int64_t delta;
} twb__item;

typedef struct twb__reid {
    uint64_t old_id, new_id;
    size_t item;
} twb__reid;

void twb__group_scratch_free(twb__group_scratch *sc)
{
    free(sc->items);
    free(sc->reids);
    free(sc->stack);
    free(sc->sorted);
    free(sc->order);
    memset(sc, 0, sizeof(*sc));
}

static bool ensure(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n <= *cap)
        return true;
    if (n > SIZE_MAX / elem)
        return false;
    void *grown = realloc(*arr, n * elem);
    if (!grown)
        return false;
    *arr = grown;
    *cap = n;
    return true;
}

/* ---- values and records ---------------------------------------------------------------------- */

/* A total order on typed values (doubles by their bits: equal means identical). */
static int value_cmp(const tw__tag *a, const tw__tag *b)
{
    if (a->type != b->type)
        return a->type < b->type ? -1 : 1;
    switch (a->type) {
    case TW_VALUE_STRING:
    case TW_VALUE_BINARY: {
        if (a->len != b->len)
            return a->len < b->len ? -1 : 1;
        return a->len ? memcmp(a->v.bin, b->v.bin, a->len) : 0;
    }
    case TW_VALUE_DOUBLE:
        return memcmp(&a->v.dbl, &b->v.dbl, sizeof(double));
    case TW_VALUE_BOOL:
        return (int)a->v.boolean - (int)b->v.boolean;
    case TW_VALUE_INT64:
        return a->v.i64 < b->v.i64 ? -1 : a->v.i64 > b->v.i64;
    }
    return 0;
}

static bool key_equal(const tw__tag *a, const tw__tag *b)
{
    return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

static int tag_cmp(const tw__tag *a, const tw__tag *b)
{
    if (a->key_len != b->key_len)
        return a->key_len < b->key_len ? -1 : 1;
    int c = memcmp(a->key, b->key, a->key_len);
    return c ? c : value_cmp(a, b);
}

static int log_cmp(const tw__log *a, const tw__log *b)
{
    if (a->timestamp_us != b->timestamp_us)
        return a->timestamp_us < b->timestamp_us ? -1 : 1;
    if (a->n_fields != b->n_fields)
        return a->n_fields < b->n_fields ? -1 : 1;
    for (size_t i = 0; i < a->n_fields; i++) {
        int c = tag_cmp(&a->fields[i], &b->fields[i]);
        if (c)
            return c;
    }
    return 0;
}

static int log_qsort_cmp(const void *x, const void *y)
{
    return log_cmp(x, y);
}

static bool processes_equal(const tw__process *a, const tw__process *b)
{
    if (a == b)
        return true;
    if (!a || !b || strcmp(a->service_name, b->service_name) != 0 || a->n_tags != b->n_tags)
        return false;
    for (size_t i = 0; i < a->n_tags; i++) {
        if (tag_cmp(&a->tags[i], &b->tags[i]) != 0)
            return false;
    }
    return true;
}

static bool records_equal(const twb_span *x, const twb_span *y)
{
    const tw__span_data *a = x->data, *b = y->data;
    if (a->trace_id_high != b->trace_id_high || a->trace_id_low != b->trace_id_low ||
        a->span_id != b->span_id || a->parent_id != b->parent_id || a->flags != b->flags ||
        a->shared != b->shared || a->start_us != b->start_us || a->duration_us != b->duration_us ||
        a->n_refs != b->n_refs || a->n_tags != b->n_tags || a->n_logs != b->n_logs ||
        strcmp(a->operation, b->operation) != 0)
        return false;
    for (size_t i = 0; i < a->n_refs; i++) {
        const tw__ref *r = &a->refs[i], *s = &b->refs[i];
        if (r->type != s->type || r->trace_id_high != s->trace_id_high ||
            r->trace_id_low != s->trace_id_low || r->span_id != s->span_id)
            return false;
    }
    for (size_t i = 0; i < a->n_tags; i++) {
        if (tag_cmp(&a->tags[i], &b->tags[i]) != 0)
            return false;
    }
    for (size_t i = 0; i < a->n_logs; i++) {
        if (log_cmp(&a->logs[i], &b->logs[i]) != 0)
            return false;
    }
    return processes_equal(x->process, y->process);
}

/* A cheap hash of scalar fields: a filter before records_equal. The
 * operation name is left to records_equal: parts of one span id that agree
 * on start, duration, parent and counts almost always share it, and hashing
 * it a byte at a time cost more than all the rest. */
static uint64_t record_hash(const twb_span *sp)
{
    const tw__span_data *d = sp->data;
    uint64_t h = (uint64_t)d->start_us * 0x9e3779b97f4a7c15ull;
    h ^= (uint64_t)d->duration_us + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
    h ^= d->parent_id + (uint64_t)d->flags * 31u + (d->shared ? 7u : 0u) + (h << 6) + (h >> 2);
    h ^= (d->n_tags << 20) ^ (d->n_logs << 8) ^ d->n_refs;
    return h;
}

static bool tag_append(tw__span_data *d, const tw__tag *t)
{
    tw__tag *slot = tw__span_data_push_tag(d);
    if (!slot)
        return false;
    tw_value v;
    tw__tag_to_value(t, &v);
    bool truncated = false;
    if (!tw__tag_set(&d->arena, slot, t->key, &v, SIZE_MAX, &truncated))
        return false;
    d->n_tags++;
    return true;
}

static bool log_append(tw__span_data *d, const tw__log *src)
{
    tw__log *l = tw__span_data_push_log(d, src->n_fields);
    if (!l)
        return false;
    for (size_t i = 0; i < src->n_fields; i++) {
        tw_value v;
        tw__tag_to_value(&src->fields[i], &v);
        bool truncated = false;
        if (!tw__tag_set(&d->arena, &l->fields[i], src->fields[i].key, &v, SIZE_MAX, &truncated))
            return false;
    }
    l->n_fields = src->n_fields;
    l->timestamp_us = src->timestamp_us;
    d->n_logs++;
    return true;
}

/* A private copy of @s (refcount 1); NULL on allocation failure. */
static tw__span_data *span_clone(const tw__span_data *s)
{
    tw__span_data *c = tw__span_data_new();
    if (!c)
        return NULL;
    c->trace_id_high = s->trace_id_high;
    c->trace_id_low = s->trace_id_low;
    c->span_id = s->span_id;
    c->parent_id = s->parent_id;
    c->flags = s->flags;
    c->shared = s->shared;
    c->start_us = s->start_us;
    c->duration_us = s->duration_us;
    c->dropped_tags = s->dropped_tags;
    c->dropped_logs = s->dropped_logs;
    c->truncated_values = s->truncated_values;
    c->exempt_tags = s->exempt_tags;
    if (!tw__span_data_set_operation(c, s->operation, strlen(s->operation)))
        goto fail;
    for (size_t i = 0; i < s->n_refs; i++) {
        const tw__ref *r = &s->refs[i];
        if (!tw__span_data_add_ref(c, r->type, r->trace_id_high, r->trace_id_low, r->span_id))
            goto fail;
    }
    for (size_t i = 0; i < s->n_tags; i++) {
        if (!tag_append(c, &s->tags[i]))
            goto fail;
    }
    for (size_t i = 0; i < s->n_logs; i++) {
        if (!log_append(c, &s->logs[i]))
            goto fail;
    }
    return c;
fail:
    tw__span_data_unref(c);
    return NULL;
}

/* Makes sp->data safe to change: in place when the assembler holds the only
 * reference, else a copy replaces it. False on allocation failure. */
static bool make_writable(twb_span *sp)
{
    if (atomic_load_explicit(&sp->data->refcount, memory_order_acquire) == 1)
        return true;
    tw__span_data *c = span_clone(sp->data);
    if (!c)
        return false;
    tw__span_data_unref(sp->data);
    sp->data = c;
    return true;
}

static uint32_t add_sat32(uint32_t a, uint32_t b)
{
    return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

/* Zipkin's Span.Builder.merge, on the model: fills what @m lacks from @s. */
static bool merge_into(tw__span_data *m, const tw__span_data *s)
{
    if (m->operation[0] == '\0' && s->operation[0] != '\0' &&
        !tw__span_data_set_operation(m, s->operation, strlen(s->operation)))
        return false;
    if (m->start_us == 0)
        m->start_us = s->start_us;
    /* A known duration beats an unknown one whatever the order of the parts
     * (Zipkin fills a zero duration from a later part; here "unknown" must
     * be cleared with it, or the result would depend on arrival order). */
    if ((m->is_duration_unknown || m->duration_us == 0) && !s->is_duration_unknown &&
        s->duration_us != 0) {
        m->duration_us = s->duration_us;
        m->is_duration_unknown = false;
    }
    if (m->parent_id == 0)
        m->parent_id = s->parent_id;
    m->flags |= s->flags;
    for (size_t i = 0; i < s->n_refs; i++) {
        const tw__ref *r = &s->refs[i];
        bool have = false;
        for (size_t j = 0; j < m->n_refs && !have; j++) {
            const tw__ref *q = &m->refs[j];
            have = q->type == r->type && q->trace_id_high == r->trace_id_high &&
                   q->trace_id_low == r->trace_id_low && q->span_id == r->span_id;
        }
        if (!have &&
            !tw__span_data_add_ref(m, r->type, r->trace_id_high, r->trace_id_low, r->span_id))
            return false;
    }
    for (size_t i = 0; i < s->n_tags; i++) {
        const tw__tag *t = &s->tags[i];
        size_t j = m->n_tags;
        while (j > 0 && !key_equal(&m->tags[j - 1], t))
            j--;
        if (j == 0) {
            if (!tag_append(m, t))
                return false;
            continue;
        }
        if (value_cmp(&m->tags[j - 1], t) == 0)
            continue;
        tw_value v;
        tw__tag_to_value(t, &v);
        bool truncated = false;
        if (!tw__tag_set(&m->arena, &m->tags[j - 1], t->key, &v, SIZE_MAX, &truncated))
            return false;
    }
    for (size_t i = 0; i < s->n_logs; i++) {
        if (!log_append(m, &s->logs[i]))
            return false;
    }
    m->dropped_tags = add_sat32(m->dropped_tags, s->dropped_tags);
    m->dropped_logs = add_sat32(m->dropped_logs, s->dropped_logs);
    m->truncated_values = add_sat32(m->truncated_values, s->truncated_values);
    return true;
}

/* Logs sorted by timestamp (then content), equal logs removed. */
static void normalise_logs(tw__span_data *m)
{
    if (m->n_logs < 2)
        return;
    qsort(m->logs, m->n_logs, sizeof(tw__log), log_qsort_cmp);
    size_t w = 1;
    for (size_t r = 1; r < m->n_logs; r++) {
        if (log_cmp(&m->logs[w - 1], &m->logs[r]) != 0)
            m->logs[w++] = m->logs[r];
    }
    m->n_logs = w;
}

/* ---- kinds and endpoints --------------------------------------------------------------------- */

/* @v (NUL-terminated, @len bytes) is the literal @lit: strcmp's answer
 * without the call. The literal's NUL is compared too, within v's len + 1
 * readable bytes, so a value with an embedded NUL compares as strcmp does. */
#define VALUE_IS(v, len, lit) ((len) >= sizeof(lit) - 1 && memcmp((v), (lit), sizeof(lit)) == 0)

static uint8_t kind_of(const tw__span_data *d)
{
    /* tw__span_data_find_tag(d, "span.kind") (the last such tag), compared
     * by the key's length first (a tag's key_len is its strlen): most keys
     * differ there, and no strcmp call. */
    const tw__tag *t = NULL;
    for (size_t i = d->n_tags; i > 0; i--) {
        const tw__tag *c = &d->tags[i - 1];
        if (c->key_len == 9 && memcmp(c->key, "span.kind", 9) == 0) {
            t = c;
            break;
        }
    }
    if (!t || t->type != TW_VALUE_STRING)
        return KIND_NONE;
    const char *v = t->v.str;
    size_t len = t->len;
    switch (v[0]) { /* the first byte first: most values are one of these */
    case 'c':
        if (VALUE_IS(v, len, "client"))
            return KIND_CLIENT;
        if (VALUE_IS(v, len, "consumer"))
            return KIND_CONSUMER;
        break;
    case 's':
        if (VALUE_IS(v, len, "server"))
            return KIND_SERVER;
        break;
    case 'p':
        if (VALUE_IS(v, len, "producer"))
            return KIND_PRODUCER;
        break;
    default:
        break;
    }
    return KIND_OTHER;
}

/* The part's kind, looked up on first use. Most groups never need it: it
 * matters only where parts share a span id (ordering, merge, backfill) and
 * to --skew adjust. Looking it up for every span scanned the tags of records
 * the window made 10,000 spans earlier, long out of the cache: that scan was
 * about half of this file's time in a conversion (perf, otlp-proto ->
 * zipkin-v2-json). */
static uint8_t item_kind(twb__item *it)
{
    if (!it->has_kind) {
        it->kind = kind_of(it->sp->data);
        it->has_kind = true;
    }
    return it->kind;
}

static const tw__tag *present_tag(const tw__process *p, const char *key)
{
    const tw__tag *t = tw__process_find_tag(p, key);
    if (!t)
        return NULL;
    if ((t->type == TW_VALUE_STRING || t->type == TW_VALUE_BINARY) && t->len == 0)
        return NULL;
    if (t->type == TW_VALUE_INT64 && t->v.i64 == 0)
        return NULL;
    return t;
}

static const endpoint *item_ep(twb__item *it)
{
    if (!it->has_ep) {
        const tw__process *p = it->sp->process;
        memset(&it->ep, 0, sizeof(it->ep));
        if (p) {
            it->ep.service = p->service_name && p->service_name[0] ? p->service_name : NULL;
            it->ep.ip = present_tag(p, "ip");
            it->ep.ipv6 = present_tag(p, "ipv6");
            it->ep.port = present_tag(p, "port");
        }
        it->has_ep = true;
    }
    return &it->ep;
}

static bool field_compatible(const tw__tag *a, const tw__tag *b)
{
    return !a || !b || value_cmp(a, b) == 0;
}

static bool field_equal(const tw__tag *a, const tw__tag *b)
{
    return (!a && !b) || (a && b && value_cmp(a, b) == 0);
}

static bool ep_compatible(const endpoint *a, const endpoint *b)
{
    return (!a->service || !b->service || strcmp(a->service, b->service) == 0) &&
           field_compatible(a->ip, b->ip) && field_compatible(a->ipv6, b->ipv6) &&
           field_compatible(a->port, b->port);
}

static bool ep_equal(const endpoint *a, const endpoint *b)
{
    bool service = (!a->service && !b->service) ||
                   (a->service && b->service && strcmp(a->service, b->service) == 0);
    return service && field_equal(a->ip, b->ip) && field_equal(a->ipv6, b->ipv6) &&
           field_equal(a->port, b->port);
}

static unsigned ep_fields(const endpoint *e)
{
    return (e->service != NULL) + (e->ip != NULL) + (e->ipv6 != NULL) + (e->port != NULL);
}

static void ep_absorb(endpoint *into, const endpoint *e)
{
    if (!into->service)
        into->service = e->service;
    if (!into->ip)
        into->ip = e->ip;
    if (!into->ipv6)
        into->ipv6 = e->ipv6;
    if (!into->port)
        into->port = e->port;
}

/* Same local endpoint: the same interned process, or Zipkin's Endpoint equality. */
static bool same_endpoint(twb__item *a, twb__item *b)
{
    return a->sp->process == b->sp->process || ep_equal(item_ep(a), item_ep(b));
}

/* The clock skew host key: process tag `ip`, else `ipv6`, else none. */
static const tw__tag *host_of(twb__item *it)
{
    const endpoint *e = item_ep(it);
    return e->ip ? e->ip : e->ipv6;
}

/* ---- sorting and lookup ---------------------------------------------------------------------- */

/* The order of items: span id, then a bucket's precedence, then arrival.
 * Not const: it may look up a kind (item_kind). */
static inline int item_order(twb__item *a, twb__item *b)
{
    const tw__span_data *p = a->sp->data, *q = b->sp->data;
    if (p->span_id != q->span_id)
        return p->span_id < q->span_id ? -1 : 1;
    if (p->shared != q->shared)
        return p->shared ? 1 : -1;
    if (!p->shared) {
        bool ca = item_kind(a) == KIND_CLIENT, cb = item_kind(b) == KIND_CLIENT;
        if (ca != cb)
            return ca ? -1 : 1;
    }
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* qsort's comparison: sort_items looks every kind up first, so that
 * item_order writes nothing into the array qsort is sorting. */
static int item_cmp(const void *x, const void *y)
{
    return item_order((twb__item *)x, (twb__item *)y);
}

/* Groups up to this size are sorted here, larger ones by qsort. */
#define SMALL_SORT 64u

/*
 * Sorts sc->items[0..n) by item_order. A trace's group is small (tens of
 * parts), where qsort's indirect merge sort of these large items (pointers,
 * comparisons through a function pointer, a permutation by memcpy) cost
 * several times the work: an insertion sort of pointers with the comparison
 * inlined, then one copy of each item into the other array, which becomes
 * sc->items. item_order is a total order (arrival position last), so every
 * sort gives the same order. Input already in order (the sort after new
 * Jaeger ids often is) is left as it is. Allocation failure falls back to
 * qsort, which needs none from us.
 */
static void sort_items(twb__group_scratch *sc, size_t n)
{
    twb__item *items = sc->items;
    size_t i = 1;
    while (i < n && item_order(&items[i - 1], &items[i]) < 0)
        i++;
    if (i >= n)
        return;
    if (n > SMALL_SORT || !ensure((void **)&sc->order, &sc->order_cap, n, sizeof(twb__item *)) ||
        !ensure((void **)&sc->sorted, &sc->sorted_cap, n, sizeof(twb__item))) {
        for (size_t k = 0; k < n; k++)
            (void)item_kind(&items[k]);
        qsort(items, n, sizeof(twb__item), item_cmp);
        return;
    }
    twb__item **order = sc->order;
    for (size_t k = 0; k < n; k++) {
        twb__item *x = &items[k];
        size_t j = k;
        while (j > 0 && item_order(order[j - 1], x) > 0) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    twb__item *sorted = sc->sorted;
    for (size_t k = 0; k < n; k++)
        sorted[k] = *order[k];
    size_t cap = sc->items_cap;
    sc->items = sorted;
    sc->items_cap = sc->sorted_cap;
    sc->sorted = items;
    sc->sorted_cap = cap;
}

/* The first item with span id @id (items sorted), or NONE. */
static size_t find_first(const twb__item *items, size_t n, uint64_t id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (items[mid].sp->data->span_id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && items[lo].sp->data->span_id == id ? lo : NONE;
}

static size_t bucket_end(const twb__item *items, size_t n, size_t b)
{
    uint64_t id = items[b].sp->data->span_id;
    size_t e = b + 1;
    while (e < n && items[e].sp->data->span_id == id)
        e++;
    return e;
}

/* ---- rules per span id ------------------------------------------------------------------------
 */

static void kill(twb__item *it)
{
    tw__span_data_unref(it->sp->data);
    it->sp->data = NULL;
    it->alive = false;
}

static bool mergeable(twb__item *base, twb__item *x, bool fragment)
{
    const tw__span_data *b = base->sp->data, *d = x->sp->data;
    if (b->shared != d->shared && !fragment)
        return false;
    uint8_t bk = item_kind(base), xk = item_kind(x);
    if (bk != xk && bk != KIND_NONE && xk != KIND_NONE)
        return false;
    if (b->parent_id != 0 && d->parent_id != 0 && b->parent_id != d->parent_id)
        return false;
    if (b->n_tags + b->n_logs + d->n_tags + d->n_logs > MERGE_MAX_ITEMS)
        return false;
    if (!base->is_base) {
        base->tracker = *item_ep(base);
        base->best_ep = ep_fields(&base->tracker);
        base->is_base = true;
    }
    return ep_compatible(&base->tracker, item_ep(x));
}

/* Merges @x into @base and kills @x; the result takes the earlier arrival slot. */
static bool merge_parts(twb__item *base, twb__item *x)
{
    if (!make_writable(base->sp) || !merge_into(base->sp->data, x->sp->data))
        return false;
    base->merged = true;
    const endpoint *xe = item_ep(x);
    ep_absorb(&base->tracker, xe);
    if (ep_fields(xe) > base->best_ep) {
        base->best_ep = ep_fields(xe);
        base->sp->process = x->sp->process;
        base->ep = *xe;
    }
    if (item_kind(base) == KIND_NONE)
        base->kind = item_kind(x);
    twb_span *slot = x->sp;
    kill(x);
    if (x->pos < base->pos) {
        *slot = *base->sp;
        base->sp->data = NULL;
        base->sp = slot;
        base->pos = x->pos;
    }
    return true;
}

static tw_status bucket_rules(twb__item *items, size_t b, size_t e, twb_assemble_stats *st,
                              tw_error **err)
{
    /* Exact duplicates. */
    for (size_t j = b + 1; j < e; j++) {
        twb__item *x = &items[j];
        for (size_t k = j > b + LOOKBACK ? j - LOOKBACK : b; k < j; k++) {
            twb__item *y = &items[k];
            if (!y->alive)
                continue;
            if (!y->has_hash) {
                y->hash = record_hash(y->sp);
                y->has_hash = true;
            }
            if (!x->has_hash) {
                x->hash = record_hash(x->sp);
                x->has_hash = true;
            }
            if (x->hash == y->hash && records_equal(x->sp, y->sp)) {
                kill(x);
                st->duplicates++;
                break;
            }
        }
    }
    /* Parts of one span. */
    for (size_t j = b + 1; j < e; j++) {
        twb__item *x = &items[j];
        if (!x->alive)
            continue;
        for (size_t k = j > b + LOOKBACK ? j - LOOKBACK : b; k < j; k++) {
            twb__item *base = &items[k];
            if (!base->alive || !mergeable(base, x, false))
                continue;
            if (!merge_parts(base, x)) {
                tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory merging span parts");
                return TW_E_NOMEM;
            }
            st->merged++;
            break;
        }
    }
    /* A late fragment (no kind, no timestamp, not shared: what the v1 -> v2
     * conversion makes of a server's stray annotation) that matched no
     * non-shared part joins a shared part with a compatible endpoint. */
    for (size_t j = b; j < e; j++) {
        twb__item *x = &items[j];
        if (!x->alive || item_kind(x) != KIND_NONE || x->sp->data->shared || x->sp->data->start_us)
            continue;
        for (size_t k = b; k < e; k++) {
            twb__item *base = &items[k];
            if (k == j || !base->alive || !base->sp->data->shared || !mergeable(base, x, true))
                continue;
            if (!merge_parts(base, x)) {
                tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory merging span parts");
                return TW_E_NOMEM;
            }
            st->merged++;
            break;
        }
    }
    for (size_t j = b; j < e; j++) {
        if (items[j].alive && items[j].merged)
            normalise_logs(items[j].sp->data);
    }
    /* Backfill shared and the shared part's parent from the first non-shared part. */
    size_t f = NONE;
    for (size_t j = b; j < e && f == NONE; j++) {
        if (items[j].alive && !items[j].sp->data->shared)
            f = j;
    }
    if (f == NONE)
        return TW_OK;
    const tw__span_data *first = items[f].sp->data;
    for (size_t j = f + 1; j < e; j++) {
        twb__item *x = &items[j];
        if (!x->alive)
            continue;
        bool to_share = item_kind(&items[f]) == KIND_CLIENT && item_kind(x) == KIND_SERVER &&
                        !x->sp->data->shared;
        bool shared = to_share || x->sp->data->shared;
        bool to_parent = shared && x->sp->data->parent_id == 0 && first->parent_id != 0;
        if (!to_share && !to_parent)
            continue;
        uint64_t parent = first->parent_id;
        if (!make_writable(x->sp)) {
            tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory");
            return TW_E_NOMEM;
        }
        if (to_share)
            x->sp->data->shared = true;
        if (to_parent)
            x->sp->data->parent_id = parent;
    }
    return TW_OK;
}

/* ---- Jaeger ids ---------------------------------------------------------------------------------
 */

static bool id_taken(const twb__item *items, size_t n, const twb__reid *reids, size_t n_reids,
                     uint64_t id)
{
    if (find_first(items, n, id) != NONE)
        return true;
    for (size_t i = 0; i < n_reids; i++) {
        if (reids[i].new_id == id)
            return true;
    }
    return false;
}

static tw_status jaeger_ids(twb__group_scratch *sc, size_t n, twb_assemble_stats *st, bool *changed,
                            tw_error **err)
{
    twb__item *items = sc->items;
    size_t n_reids = 0;
    for (size_t b = 0; b < n;) {
        size_t e = bucket_end(items, n, b);
        bool has_owner = false;
        for (size_t j = b; j < e; j++) {
            twb__item *x = &items[j];
            if (!x->alive)
                continue;
            if (!x->sp->data->shared) {
                has_owner = true;
                continue;
            }
            if (!has_owner)
                continue;
            if (!ensure((void **)&sc->reids, &sc->reids_cap, n_reids + 1, sizeof(twb__reid)))
                goto nomem;
            uint64_t old = x->sp->data->span_id, state = old, id;
            do {
                state += 0x9e3779b97f4a7c15ull;
                id = twb__splitmix64_mix(state);
            } while (id == 0 || id_taken(items, n, sc->reids, n_reids, id));
            sc->reids[n_reids++] = (twb__reid){old, id, j};
            x->reided = true;
        }
        b = e;
    }
    if (n_reids == 0)
        return TW_OK;
    /* Children of a re-ided id whose endpoint equals the new span's move under it. */
    for (size_t i = 0; i < n; i++) {
        twb__item *y = &items[i];
        if (!y->alive || y->reided)
            continue;
        uint64_t p = y->sp->data->parent_id;
        if (p == 0 || p == y->sp->data->span_id)
            continue;
        size_t lo = 0, hi = n_reids; /* reids are in ascending old id order */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (sc->reids[mid].old_id < p)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (size_t r = lo; r < n_reids && sc->reids[r].old_id == p; r++) {
            if (!same_endpoint(y, &items[sc->reids[r].item]))
                continue;
            if (!make_writable(y->sp))
                goto nomem;
            tw__span_data *d = y->sp->data;
            d->parent_id = sc->reids[r].new_id;
            for (size_t k = 0; k < d->n_refs; k++) {
                tw__ref *ref = &d->refs[k];
                if (ref->type == TW__REF_CHILD_OF && ref->span_id == p &&
                    ref->trace_id_low == d->trace_id_low)
                    ref->span_id = sc->reids[r].new_id;
            }
            st->reparented++;
            break;
        }
    }
    for (size_t r = 0; r < n_reids; r++) {
        twb__item *x = &items[sc->reids[r].item];
        if (!make_writable(x->sp))
            goto nomem;
        x->sp->data->span_id = sc->reids[r].new_id;
        x->sp->data->parent_id = sc->reids[r].old_id;
        x->sp->data->shared = false;
        st->shared_ids++;
    }
    *changed = true;
    return TW_OK;
nomem:
    tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory (shared span ids)");
    return TW_E_NOMEM;
}

/* ---- clock skew ---------------------------------------------------------------------------------
 */

/* The item a span hangs under in the tree (assemble.h, CLOCK SKEW), or NONE. */
static size_t resolve_parent(twb__item *items, size_t n, size_t i)
{
    twb__item *x = &items[i];
    const tw__span_data *d = x->sp->data;
    if (d->shared) {
        for (size_t j = find_first(items, n, d->span_id); j != NONE && j < n; j++) {
            if (items[j].sp->data->span_id != d->span_id)
                break;
            if (items[j].alive && j != i && !items[j].sp->data->shared)
                return j;
        }
    }
    uint64_t p = d->parent_id;
    if (p == 0 || p == d->span_id)
        return NONE;
    size_t b = find_first(items, n, p);
    if (b == NONE)
        return NONE;
    size_t e = bucket_end(items, n, b);
    size_t first_alive = NONE, first_owner = NONE;
    for (size_t j = b; j < e; j++) {
        twb__item *y = &items[j];
        if (!y->alive)
            continue;
        if (first_alive == NONE)
            first_alive = j;
        if (y->sp->data->shared) {
            if (same_endpoint(y, x))
                return j;
        } else if (first_owner == NONE) {
            first_owner = j;
        }
    }
    return first_owner != NONE ? first_owner : first_alive;
}

/* Jaeger's calculateSkew: how far the server @c must move into the client @p. */
static int64_t skew_delta(const tw__span_data *p, const tw__span_data *c)
{
    if (p->start_us == 0 || c->start_us == 0)
        return 0;
    int64_t pd = p->duration_us, cd = c->duration_us, pend, cend, out;
    if (pd < cd)
        return c->start_us < p->start_us ? p->start_us - c->start_us : 0;
    if (__builtin_add_overflow(p->start_us, pd, &pend) ||
        __builtin_add_overflow(c->start_us, cd, &cend))
        return 0;
    if (c->start_us >= p->start_us && cend <= pend)
        return 0;
    if (__builtin_add_overflow(p->start_us, (pd - cd) / 2, &out) ||
        __builtin_sub_overflow(out, c->start_us, &out))
        return 0;
    return out;
}

static bool shift(twb_span *sp, int64_t delta)
{
    if (!make_writable(sp))
        return false;
    tw__span_data *d = sp->data;
    int64_t v;
    if (!__builtin_add_overflow(d->start_us, delta, &v))
        d->start_us = v;
    for (size_t i = 0; i < d->n_logs; i++) {
        if (!__builtin_add_overflow(d->logs[i].timestamp_us, delta, &v))
            d->logs[i].timestamp_us = v;
    }
    return true;
}

static tw_status clock_skew(twb__group_scratch *sc, size_t n, twb_assemble_stats *st,
                            tw_error **err)
{
    twb__item *items = sc->items;
    if (!ensure((void **)&sc->stack, &sc->stack_cap, n, sizeof(size_t))) {
        tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory (clock skew)");
        return TW_E_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        items[i].first_child = items[i].next_sibling = NONE;
        items[i].delta = 0;
    }
    size_t top = 0;
    for (size_t i = n; i > 0; i--) { /* reversed, so children lists keep item order */
        twb__item *x = &items[i - 1];
        if (!x->alive)
            continue;
        x->parent = resolve_parent(items, n, i - 1);
        if (x->parent == NONE) {
            sc->stack[top++] = i - 1;
        } else {
            x->next_sibling = items[x->parent].first_child;
            items[x->parent].first_child = i - 1;
        }
    }
    /* Depth first from the roots; each item is pushed once (its parent is unique). */
    while (top > 0) {
        twb__item *p = &items[sc->stack[--top]];
        for (size_t c = p->first_child; c != NONE; c = items[c].next_sibling) {
            twb__item *child = &items[c];
            const tw__tag *hp = host_of(p), *hc = host_of(child);
            int64_t delta = 0;
            if (field_equal(hp, hc))
                delta = p->delta;
            else if (item_kind(p) == KIND_CLIENT && item_kind(child) == KIND_SERVER)
                delta = skew_delta(p->sp->data, child->sp->data);
            child->delta = delta;
            if (delta != 0) {
                if (!shift(child->sp, delta)) {
                    tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory (clock skew)");
                    return TW_E_NOMEM;
                }
                st->skew_adjusted++;
            }
            sc->stack[top++] = c;
        }
    }
    return TW_OK;
}

/* ---- the group ----------------------------------------------------------------------------------
 */

/* Applies the longest trace id (and references into the trace). */
static bool longest_trace_id(twb_span *spans, size_t n)
{
    uint64_t high = 0, low = spans[0].data->trace_id_low;
    for (size_t i = 0; i < n && high == 0; i++)
        high = spans[i].data->trace_id_high;
    if (high == 0)
        return true;
    for (size_t i = 0; i < n; i++) {
        tw__span_data *d = spans[i].data;
        bool need = d->trace_id_high == 0;
        for (size_t k = 0; k < d->n_refs && !need; k++)
            need = d->refs[k].trace_id_low == low && d->refs[k].trace_id_high == 0;
        if (!need)
            continue;
        if (!make_writable(&spans[i]))
            return false;
        d = spans[i].data;
        d->trace_id_high = high;
        for (size_t k = 0; k < d->n_refs; k++) {
            if (d->refs[k].trace_id_low == low && d->refs[k].trace_id_high == 0)
                d->refs[k].trace_id_high = high;
        }
    }
    return true;
}

tw_status twb__assemble_group(twb__group_scratch *sc, const twb_assemble_options *o,
                              twb_span *spans, size_t n, size_t *kept, twb_assemble_stats *st,
                              tw_error **err)
{
    if (!longest_trace_id(spans, n) ||
        !ensure((void **)&sc->items, &sc->items_cap, n, sizeof(twb__item))) {
        tw__set_error(err, TW_E_NOMEM, "trace assembly: out of memory");
        return TW_E_NOMEM;
    }
    twb__item *items = sc->items;
    for (size_t i = 0; i < n; i++) {
        memset(&items[i], 0, sizeof(items[i]));
        items[i].sp = &spans[i];
        items[i].pos = i;
        items[i].alive = true;
    }
    sort_items(sc, n);
    items = sc->items;
    for (size_t b = 0; b < n;) {
        size_t e = bucket_end(items, n, b);
        if (e - b >= 2) {
            tw_status s = bucket_rules(items, b, e, st, err);
            if (s != TW_OK)
                return s;
        }
        b = e;
    }
    /* From here on only the survivors matter: dead items' slots may hold
     * another record (a merged part moved to the earlier arrival slot). */
    size_t alive = 0;
    for (size_t i = 0; i < n; i++) {
        if (items[i].alive) {
            if (i != alive) /* an item is large: no copy onto itself */
                items[alive] = items[i];
            alive++;
        }
    }
    if (o->jaeger_ids) {
        bool changed = false;
        tw_status s = jaeger_ids(sc, alive, st, &changed, err);
        if (s != TW_OK)
            return s;
        if (changed) {
            sort_items(sc, alive);
            items = sc->items;
        }
    }
    if (o->skew_adjust) {
        tw_status s = clock_skew(sc, alive, st, err);
        if (s != TW_OK)
            return s;
    }
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (spans[i].data)
            spans[w++] = spans[i];
    }
    *kept = w;
    return TW_OK;
}
