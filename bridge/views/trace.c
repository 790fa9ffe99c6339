/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/trace.c: one assembled trace as the views see it (views.h):
 * spans indexed by id, the tree, children sorted by start, roots and
 * orphans, skew marks and self time.
 *
 * The tree follows Jaeger UI's rules (transform-trace-data): a span's parent
 * is its parent id when that span is in the trace, else the first CHILD_OF or
 * FOLLOWS_FROM reference into the trace whose span is present; a span with
 * neither is a root, and an orphan when it names a parent that is missing.
 * Roots and children are ordered by start time; a span without a timestamp
 * takes its parent's start (a root: the trace's earliest start). Ids that
 * repeat (rare after assembly) resolve to their first span. A cycle of
 * parents is broken at the first span of it in input order, which becomes a
 * root.
 *
 * Self time (docs/views.md): a span's duration minus the union of its
 * children's intervals clipped to the span; unknown when the span's duration
 * is. Cost: O(n log n) per trace (the child sorts), arrays reused from one
 * trace to the next. Locking: none.
 */
#include "views/views.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FLAG_VISITED 0x01u

void twv_trace_init(twv_trace *t)
{
    memset(t, 0, sizeof *t);
}

void twv_trace_free(twv_trace *t)
{
    free(t->spans);
    free(t->children);
    free(t->order);
    free(t->roots);
    free(t->cp);
    free(t->cp_first);
    free(t->cp_of);
    free(t->table);
    free(t->work);
    free(t->times);
    free(t->flags);
    memset(t, 0, sizeof *t);
}

const char *twv_kind_name(twv_kind k)
{
    switch (k) {
    case TWV_KIND_CLIENT:
        return "client";
    case TWV_KIND_SERVER:
        return "server";
    case TWV_KIND_PRODUCER:
        return "producer";
    case TWV_KIND_CONSUMER:
        return "consumer";
    case TWV_KIND_NONE:
        break;
    }
    return "";
}

void twv_trace_id_text(uint64_t high, uint64_t low, char out[33])
{
    if (high)
        snprintf(out, 33, "%016" PRIx64 "%016" PRIx64, high, low);
    else
        snprintf(out, 33, "%016" PRIx64, low);
}

static bool key_is(const tw__tag *t, const char *key)
{
    size_t len = strlen(key);
    return t->key_len == len && memcmp(t->key, key, len) == 0;
}

const tw__tag *twv_find_tag(const tw__span_data *s, const char *key)
{
    for (size_t i = s->n_tags; i-- > 0;) {
        if (key_is(&s->tags[i], key))
            return &s->tags[i];
    }
    return NULL;
}

const char *twv_tag_text(const tw__tag *t, char *buf, size_t size)
{
    switch (t->type) {
    case TW_VALUE_STRING:
        return t->v.str;
    case TW_VALUE_BOOL:
        return t->v.boolean ? "true" : "false";
    case TW_VALUE_INT64:
        snprintf(buf, size, "%" PRId64, t->v.i64);
        return buf;
    case TW_VALUE_DOUBLE:
        snprintf(buf, size, "%.17g", t->v.dbl);
        return buf;
    case TW_VALUE_BINARY: {
        size_t o = 0;
        for (size_t i = 0; i < t->len && o + 3 < size; i++)
            o += (size_t)snprintf(buf + o, size - o, "%02x", t->v.bin[i]);
        if (o < size)
            buf[o] = '\0';
        return buf;
    }
    }
    buf[0] = '\0';
    return buf;
}

static twv_kind kind_of(const tw__span_data *s)
{
    const tw__tag *k = twv_find_tag(s, "span.kind");
    if (!k || k->type != TW_VALUE_STRING)
        return TWV_KIND_NONE;
    if (strcasecmp(k->v.str, "client") == 0)
        return TWV_KIND_CLIENT;
    if (strcasecmp(k->v.str, "server") == 0)
        return TWV_KIND_SERVER;
    if (strcasecmp(k->v.str, "producer") == 0)
        return TWV_KIND_PRODUCER;
    if (strcasecmp(k->v.str, "consumer") == 0)
        return TWV_KIND_CONSUMER;
    return TWV_KIND_NONE;
}

/* The error rule of Zipkin's writers in this tree (a false `error` tag is
 * dropped, anything else marks a failure), so that every view agrees with
 * what a Zipkin backend would count: bool/int/double false or 0 and the
 * string "false" are not errors. */
static bool is_error(const tw__span_data *s)
{
    const tw__tag *e = twv_find_tag(s, "error");
    if (!e)
        return false;
    switch (e->type) {
    case TW_VALUE_BOOL:
        return e->v.boolean;
    case TW_VALUE_INT64:
        return e->v.i64 != 0;
    case TW_VALUE_DOUBLE:
        return e->v.dbl != 0;
    case TW_VALUE_STRING:
        return strcasecmp(e->v.str, "false") != 0;
    case TW_VALUE_BINARY:
        return true;
    }
    return true;
}

/* ---- growing the arrays --------------------------------------------------------------------- */

static bool grow(void **p, size_t n, size_t size)
{
    void *q = realloc(*p, n * size);
    if (!q)
        return false;
    *p = q;
    return true;
}

static bool reserve(twv_trace *t, size_t n)
{
    size_t table_size = 16;
    while (table_size < 2 * n)
        table_size *= 2;
    if (t->table_mask + 1 < table_size || !t->table) {
        free(t->table);
        t->table = malloc(table_size * sizeof *t->table);
        if (!t->table) {
            t->table_mask = 0;
            return false;
        }
        t->table_mask = table_size - 1;
    }
    if (n <= t->cap_spans)
        return true;
    size_t cap = t->cap_spans ? t->cap_spans : 16;
    while (cap < n)
        cap *= 2;
    if (!grow((void **)&t->spans, cap, sizeof *t->spans) ||
        !grow((void **)&t->children, cap, sizeof *t->children) ||
        !grow((void **)&t->order, cap, sizeof *t->order) ||
        !grow((void **)&t->roots, cap, sizeof *t->roots) ||
        !grow((void **)&t->work, 4 * cap, sizeof *t->work) ||
        !grow((void **)&t->times, 2 * cap, sizeof *t->times) ||
        !grow((void **)&t->flags, cap, sizeof *t->flags))
        return false;
    t->cap_spans = cap;
    return true;
}

/* ---- the id table --------------------------------------------------------------------------- */

static size_t id_home(uint64_t id, size_t mask)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return (size_t)id & mask;
}

uint64_t twv_shown_parent(const twv_trace *t, const twv_span *s, bool *follows)
{
    *follows = s->parent != TWV_NONE && s->is_follows_from;
    return s->parent != TWV_NONE ? t->spans[s->parent].d->span_id : s->d->parent_id;
}

uint32_t twv_trace_find(const twv_trace *t, uint64_t span_id)
{
    if (!t->table || t->n_spans == 0)
        return TWV_NONE;
    for (size_t i = id_home(span_id, t->table_mask);; i = (i + 1) & t->table_mask) {
        uint32_t k = t->table[i];
        if (k == TWV_NONE)
            return TWV_NONE;
        if (t->spans[k].d->span_id == span_id)
            return k;
    }
}

static void index_ids(twv_trace *t)
{
    memset(t->table, 0xff, (t->table_mask + 1) * sizeof *t->table);
    for (uint32_t k = 0; k < t->n_spans; k++) {
        uint64_t id = t->spans[k].d->span_id;
        size_t i = id_home(id, t->table_mask);
        while (t->table[i] != TWV_NONE && t->spans[t->table[i]].d->span_id != id)
            i = (i + 1) & t->table_mask;
        if (t->table[i] == TWV_NONE)
            t->table[i] = k; /* the first span of an id wins */
    }
}

/* ---- parents -------------------------------------------------------------------------------- */

static bool same_trace(const twv_trace *t, const tw__ref *r)
{
    return r->trace_id_low == t->trace_id_low &&
           (r->trace_id_high == t->trace_id_high || r->trace_id_high == 0 || t->trace_id_high == 0);
}

static void resolve_parent(twv_trace *t, uint32_t k)
{
    twv_span *s = &t->spans[k];
    const tw__span_data *d = s->d;
    uint32_t p = d->parent_id ? twv_trace_find(t, d->parent_id) : TWV_NONE;
    if (p == k)
        p = TWV_NONE;
    bool follows = false;
    if (p != TWV_NONE) {
        bool has_child_of = false, has_follows = false;
        for (size_t i = 0; i < d->n_refs; i++) {
            const tw__ref *r = &d->refs[i];
            if (r->span_id != d->parent_id || !same_trace(t, r))
                continue;
            has_child_of |= r->type == TW__REF_CHILD_OF;
            has_follows |= r->type == TW__REF_FOLLOWS_FROM;
        }
        follows = has_follows && !has_child_of;
    }
    uint64_t missing = d->parent_id;
    for (size_t i = 0; p == TWV_NONE && i < d->n_refs; i++) {
        const tw__ref *r = &d->refs[i];
        if (!same_trace(t, r) || r->span_id == d->span_id)
            continue;
        if (!missing)
            missing = r->span_id;
        uint32_t q = twv_trace_find(t, r->span_id);
        if (q != TWV_NONE && q != k) {
            p = q;
            follows = r->type == TW__REF_FOLLOWS_FROM;
        }
    }
    s->parent = p;
    s->is_follows_from = p != TWV_NONE && follows;
    s->missing_parent = p == TWV_NONE ? missing : 0;
}

/* ---- order ---------------------------------------------------------------------------------- */

static int by_start_cmp(const twv_trace *t, uint32_t x, uint32_t y)
{
    int64_t sx = t->spans[x].start_us, sy = t->spans[y].start_us;
    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x < y ? -1 : (x > y);
}

static int by_start(const void *a, const void *b, void *arg)
{
    return by_start_cmp(arg, *(const uint32_t *)a, *(const uint32_t *)b);
}

static void sort_by_start(const twv_trace *t, uint32_t *list, size_t n)
{
    if (n < 2)
        return;
    if (n < 12) { /* insertion sort: the common fan-outs are small */
        for (size_t i = 1; i < n; i++) {
            uint32_t v = list[i];
            size_t j = i;
            while (j > 0 && by_start_cmp(t, list[j - 1], v) > 0) {
                list[j] = list[j - 1];
                j--;
            }
            list[j] = v;
        }
        return;
    }
    qsort_r(list, n, sizeof *list, by_start, (void *)t);
}

/* Repairs a missing start from the parent's (Jaeger UI's rule) so the span
 * sorts and draws where it belongs instead of at the epoch. */
static void repair_start(twv_span *s, int64_t start)
{
    if (s->has_start)
        return;
    int64_t dur = s->end_us - s->start_us;
    s->start_us = start;
    s->end_us = start + dur;
}

/* Depth first from @root, appending to t->order; children sorted on the
 * way (after their starts were repaired). */
static void walk(twv_trace *t, uint32_t root, size_t *n_order)
{
    uint32_t *stack = t->work; /* work[0 .. n): the stack */
    size_t top = 0;
    t->spans[root].depth = 0;
    t->flags[root] |= FLAG_VISITED;
    stack[top++] = root;
    while (top > 0) {
        uint32_t k = stack[--top];
        twv_span *s = &t->spans[k];
        t->order[(*n_order)++] = k;
        uint32_t *kids = &t->children[s->first_child];
        size_t kept = 0;
        for (uint32_t i = 0; i < s->n_children; i++) {
            uint32_t c = kids[i];
            if (t->flags[c] & FLAG_VISITED)
                continue; /* a cycle: already placed */
            kids[kept++] = c;
            repair_start(&t->spans[c], s->start_us);
        }
        s->n_children = (uint32_t)kept;
        sort_by_start(t, kids, kept);
        for (size_t i = kept; i-- > 0;) {
            uint32_t c = kids[i];
            t->flags[c] |= FLAG_VISITED;
            t->spans[c].depth = s->depth + 1;
            stack[top++] = c;
        }
    }
}

/* ---- self time ------------------------------------------------------------------------------ */

static void self_time(twv_trace *t, uint32_t k)
{
    twv_span *s = &t->spans[k];
    if (!s->has_duration || !s->has_start) {
        s->self_us = -1;
        return;
    }
    int64_t lo = s->start_us, hi = s->end_us;
    int64_t covered = 0, run_start = 0, run_end = 0;
    bool in_run = false;
    const uint32_t *kids = &t->children[s->first_child];
    for (uint32_t i = 0; i < s->n_children; i++) { /* sorted by start */
        const twv_span *c = &t->spans[kids[i]];
        if (!c->has_start)
            continue;
        int64_t a = c->start_us < lo ? lo : c->start_us;
        int64_t b = c->end_us > hi ? hi : c->end_us;
        if (b <= a)
            continue;
        if (in_run && a <= run_end) {
            if (b > run_end)
                run_end = b;
            continue;
        }
        if (in_run)
            covered += run_end - run_start;
        run_start = a;
        run_end = b;
        in_run = true;
    }
    if (in_run)
        covered += run_end - run_start;
    s->self_us = (hi - lo) - covered;
}

/* ---- build ---------------------------------------------------------------------------------- */

bool twv_trace_build(twv_trace *t, const twb_span *spans, size_t n)
{
    t->n_spans = 0;
    t->n_roots = 0;
    t->n_cp = 0;
    t->start_us = t->end_us = 0;
    t->n_errors = t->n_orphans = t->n_skew = t->n_no_duration = 0;
    t->trace_id_high = t->trace_id_low = 0;
    if (n == 0)
        return true;
    if (n >= TWV_NONE || !reserve(t, n))
        return false;
    t->n_spans = n;
    t->trace_id_high = spans[0].data->trace_id_high;
    t->trace_id_low = spans[0].data->trace_id_low;
    bool has_any_start = false;
    int64_t earliest = 0;
    for (size_t i = 0; i < n; i++) {
        const tw__span_data *d = spans[i].data;
        twv_span *s = &t->spans[i];
        memset(s, 0, sizeof *s);
        s->d = d;
        s->proc = spans[i].process;
        s->service = s->proc && s->proc->service_name ? s->proc->service_name : "";
        s->kind = (uint8_t)kind_of(d);
        s->is_error = is_error(d);
        s->has_start = d->start_us > 0;
        s->has_duration = !d->is_duration_unknown;
        s->start_us = s->has_start ? d->start_us : 0;
        s->end_us = s->start_us + (s->has_duration ? d->duration_us : 0);
        s->parent = TWV_NONE;
        s->self_us = -1;
        if (d->trace_id_high && !t->trace_id_high)
            t->trace_id_high = d->trace_id_high;
        if (s->has_start && (!has_any_start || s->start_us < earliest)) {
            earliest = s->start_us;
            has_any_start = true;
        }
        t->n_errors += s->is_error;
        t->n_no_duration += !s->has_duration;
        t->flags[i] = 0;
    }
    index_ids(t);
    for (uint32_t k = 0; k < n; k++)
        resolve_parent(t, k);

    /* children lists: counts, offsets, fill */
    for (size_t k = 0; k < n; k++) {
        if (t->spans[k].parent != TWV_NONE)
            t->spans[t->spans[k].parent].n_children++;
    }
    uint32_t offset = 0;
    for (size_t k = 0; k < n; k++) {
        t->spans[k].first_child = offset;
        offset += t->spans[k].n_children;
        t->spans[k].n_children = 0;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t p = t->spans[k].parent;
        if (p != TWV_NONE) {
            twv_span *ps = &t->spans[p];
            t->children[ps->first_child + ps->n_children++] = k;
        }
    }

    /* roots by start; then every span reachable, depth first */
    for (uint32_t k = 0; k < n; k++) {
        twv_span *s = &t->spans[k];
        if (s->parent != TWV_NONE)
            continue;
        repair_start(s, earliest);
        t->roots[t->n_roots++] = k;
    }
    sort_by_start(t, t->roots, t->n_roots);
    size_t n_order = 0;
    for (size_t r = 0; r < t->n_roots; r++)
        walk(t, t->roots[r], &n_order);
    for (uint32_t k = 0; n_order < n && k < n; k++) {
        if (t->flags[k] & FLAG_VISITED)
            continue;
        /* A cycle of parents: this span becomes a root. */
        twv_span *s = &t->spans[k];
        s->parent = TWV_NONE;
        s->missing_parent = 0;
        s->is_follows_from = false;
        s->is_cycle = true;
        repair_start(s, earliest);
        t->roots[t->n_roots++] = k;
        walk(t, k, &n_order);
    }

    bool has_extent = false;
    for (uint32_t k = 0; k < n; k++) {
        twv_span *s = &t->spans[k];
        if (s->parent != TWV_NONE) {
            const twv_span *p = &t->spans[s->parent];
            s->is_skew = s->has_start && p->has_start && s->start_us < p->start_us;
            t->n_skew += s->is_skew;
        }
        t->n_orphans += s->missing_parent != 0;
        if (s->has_start) {
            if (!has_extent || s->start_us < t->start_us)
                t->start_us = s->start_us;
            if (!has_extent || s->end_us > t->end_us)
                t->end_us = s->end_us;
            has_extent = true;
        }
        self_time(t, k);
    }
    return true;
}
