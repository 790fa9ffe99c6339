/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/critical_path.c: the critical path of a trace, the chain of
 * spans that determined when each root finished, as Jaeger UI computes it
 * (packages/jaeger-ui/src/components/TracePage/CriticalPath: the algorithm
 * of its 2023 "critical path" feature; docs/views.md states it in full):
 *
 * 1. Only blocking children count. A FOLLOWS_FROM child is not on its
 *    parent's critical path (Jaeger UI's getChildOfSpans), nor is a CONSUMER
 *    child of a PRODUCER (Jaeger UI's current isBlockingSpan); either is
 *    dropped with its whole subtree.
 * 2. The roots are clipped to the trace's extent (its earliest start to its
 *    latest end, the duration the views print) and to each other: the root
 *    that ends last keeps its interval, the next (by end) is cut at that
 *    one's start, and so on, like the children of one span covering the
 *    trace (a root left empty gets no path). So the path never reads longer
 *    than the trace, even when roots overlap or a root without a timestamp
 *    outlasts the spans that have one. (Jaeger UI walks from the earliest
 *    span only; this keeps every root, as the views always have.)
 * 3. Children are clipped to their parent, top-down (sanitizeOverFlowing-
 *    Children): a child that starts at or after its parent's end, or ends at
 *    or before its parent's start, is dropped with its subtree; otherwise its
 *    start and end are clamped into the (already clipped) parent.
 * 4. From each root (a span with no parent id: orphans get none, as in
 *    Jaeger UI, whose sanitize step drops a span whose parent is missing;
 *    nor does a span made a root to break a cycle of parents, which has a
 *    parent id), latest first: take the last-finishing child (LFC; the
 *    first one by start on a tie); the parent's section is [LFC end, parent
 *    end), and the walk descends into the LFC. A span without an LFC
 *    contributes [its start, bound) and the walk returns to its parent with
 *    bound = that span's start, where the next LFC is the child ending
 *    strictly before the bound, and so on up to the root. Empty sections
 *    are not recorded.
 *
 * A span whose duration is unknown counts as lasting 0 µs. Each child is
 * entered at most once (the bound only decreases), so with the children of
 * each span sorted by clipped end, one cursor per span makes the walk linear
 * after the sort. The sections are then indexed by span (a counting sort) so
 * that a view draws a span's bar from its own sections. Locking: none.
 */
#include "views/views.h"

#include <stdlib.h>
#include <string.h>

#define FLAG_DROPPED 0x02u

static bool is_blocking(const twv_span *child, const twv_span *parent)
{
    if (child->is_follows_from)
        return false;
    return !(parent->kind == TWV_KIND_PRODUCER && child->kind == TWV_KIND_CONSUMER);
}

/* Sort context: children by clipped end, latest first; ties keep their
 * order by start (stable through the index comparison). */
typedef struct by_end_ctx {
    const int64_t *end;
    const uint32_t *rank;
} by_end_ctx;

static int by_end_desc(const void *a, const void *b, void *arg)
{
    const by_end_ctx *c = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (c->end[x] != c->end[y])
        return c->end[x] > c->end[y] ? -1 : 1;
    return c->rank[x] < c->rank[y] ? -1 : (c->rank[x] > c->rank[y]);
}

static bool push_section(twv_trace *t, uint32_t span, int64_t start, int64_t end)
{
    if (start == end)
        return true;
    if (t->n_cp == t->cap_cp) {
        size_t cap = t->cap_cp ? 2 * t->cap_cp : 32;
        twv_cp_section *grown = realloc(t->cp, cap * sizeof *grown);
        if (!grown)
            return false;
        t->cp = grown;
        t->cap_cp = cap;
    }
    t->cp[t->n_cp++] = (twv_cp_section){.span = span, .start_us = start, .end_us = end};
    t->spans[span].critical_us += end - start;
    return true;
}

/* The sections grouped by span, each group in t->cp's order (a counting
 * sort): linear, so that a view can find a span's sections without scanning
 * the whole path for every span. */
static bool index_sections(twv_trace *t)
{
    size_t n = t->n_spans;
    if (t->n_cp >= UINT32_MAX)
        return false;
    if (t->cap_cp_first < n + 1) {
        uint32_t *grown = realloc(t->cp_first, (n + 1) * sizeof *grown);
        if (!grown)
            return false;
        t->cp_first = grown;
        t->cap_cp_first = n + 1;
    }
    if (t->cap_cp_of < t->n_cp + 1) {
        uint32_t *grown = realloc(t->cp_of, (t->n_cp + 1) * sizeof *grown);
        if (!grown)
            return false;
        t->cp_of = grown;
        t->cap_cp_of = t->n_cp + 1;
    }
    memset(t->cp_first, 0, (n + 1) * sizeof *t->cp_first);
    if (n == 0)
        return true;
    for (size_t i = 0; i < t->n_cp; i++)
        t->cp_first[t->cp[i].span + 1]++;
    for (size_t k = 0; k < n; k++)
        t->cp_first[k + 1] += t->cp_first[k];
    uint32_t *next = t->work; /* the walk is done with it */
    memcpy(next, t->cp_first, n * sizeof *next);
    for (size_t i = 0; i < t->n_cp; i++)
        t->cp_of[next[t->cp[i].span]++] = (uint32_t)i;
    return true;
}

bool twv_critical_path(twv_trace *t)
{
    size_t n = t->n_spans;
    t->n_cp = 0;
    if (n == 0)
        return index_sections(t);
    int64_t *cs = t->times, *ce = t->times + n;
    /* work: [0, n) eligible children lists (at the children offsets),
     * [n, 2n) per span count of eligible children, [2n, 3n) cursors, [3n, 4n) places among
     * siblings. */
    uint32_t *eligible = t->work, *n_eligible = t->work + n, *cursor = t->work + 2 * n;

    for (size_t i = 0; i < n; i++) {
        t->spans[i].critical_us = 0;
        t->flags[i] &= (uint8_t)~FLAG_DROPPED;
        n_eligible[i] = 0;
        cursor[i] = 0;
    }
    /* The roots that get a path, clipped to the trace and to each other
     * (step 2), latest end first; pos (below) holds their places among the
     * roots for the ties. */
    by_end_ctx ctx = {.end = ce, .rank = NULL};
    uint32_t *pos = t->work + 3 * n;
    uint32_t *roots = malloc((t->n_roots + 1) * sizeof *roots);
    if (!roots)
        return false;
    size_t n_roots = 0;
    for (size_t r = 0; r < t->n_roots; r++) {
        uint32_t k = t->roots[r];
        const twv_span *s = &t->spans[k];
        cs[k] = s->start_us < t->start_us ? t->start_us : s->start_us;
        ce[k] = s->end_us > t->end_us ? t->end_us : s->end_us;
        pos[k] = (uint32_t)r;
        if (s->missing_parent || s->is_cycle || ce[k] <= cs[k])
            t->flags[k] |= FLAG_DROPPED; /* an orphan (Jaeger UI drops it), a cycle, outside */
        else
            roots[n_roots++] = k;
    }
    ctx.rank = pos;
    if (n_roots > 1)
        qsort_r(roots, n_roots, sizeof *roots, by_end_desc, &ctx);
    int64_t later_start = t->end_us; /* where the roots that end later begin */
    size_t kept = 0;
    for (size_t r = 0; r < n_roots; r++) {
        uint32_t k = roots[r];
        if (ce[k] > later_start)
            ce[k] = later_start;
        if (ce[k] <= cs[k]) {
            t->flags[k] |= FLAG_DROPPED; /* within the time of roots that end later */
            continue;
        }
        later_start = cs[k];
        roots[kept++] = k;
    }
    n_roots = kept;
    /* Clip top-down: t->order lists parents before their children. */
    for (size_t o = 0; o < n; o++) {
        uint32_t k = t->order[o];
        const twv_span *s = &t->spans[k];
        if (s->parent == TWV_NONE)
            continue; /* clipped above */
        cs[k] = s->start_us;
        ce[k] = s->end_us;
        uint32_t p = s->parent;
        if ((t->flags[p] & FLAG_DROPPED) || !is_blocking(s, &t->spans[p])) {
            t->flags[k] |= FLAG_DROPPED;
            continue;
        }
        int64_t ps = cs[p], pe = ce[p];
        if (cs[k] >= ps) {
            if (cs[k] >= pe)
                t->flags[k] |= FLAG_DROPPED;
            else if (ce[k] > pe)
                ce[k] = pe;
        } else if (ce[k] <= ps) {
            t->flags[k] |= FLAG_DROPPED;
        } else if (ce[k] <= pe) {
            cs[k] = ps;
        } else {
            cs[k] = ps;
            ce[k] = pe;
        }
    }
    /* Eligible children of each span, sorted by clipped end (latest first);
     * a tie keeps the order by start, i.e. the place in the children list. */
    for (size_t k = 0; k < n; k++) {
        const twv_span *s = &t->spans[k];
        for (uint32_t i = 0; i < s->n_children; i++)
            pos[t->children[s->first_child + i]] = i;
    }
    for (size_t k = 0; k < n; k++) {
        const twv_span *s = &t->spans[k];
        uint32_t m = 0;
        for (uint32_t i = 0; i < s->n_children; i++) {
            uint32_t c = t->children[s->first_child + i];
            if (!(t->flags[c] & FLAG_DROPPED))
                eligible[s->first_child + m++] = c;
        }
        n_eligible[k] = m;
        if (m > 1)
            qsort_r(&eligible[s->first_child], m, sizeof *eligible, by_end_desc, &ctx);
    }

    bool ok = true;
    for (size_t r = 0; ok && r < n_roots; r++) { /* latest first: t->cp stays in order */
        uint32_t root = roots[r];
        uint32_t cur = root;
        bool has_bound = false;
        int64_t bound = 0;
        for (;;) {
            const twv_span *s = &t->spans[cur];
            const uint32_t *kids = &eligible[s->first_child];
            uint32_t lfc = TWV_NONE;
            if (!has_bound) {
                if (n_eligible[cur] > 0) {
                    lfc = kids[0];
                    cursor[cur] = 1;
                }
            } else {
                while (cursor[cur] < n_eligible[cur] && ce[kids[cursor[cur]]] >= bound)
                    cursor[cur]++;
                if (cursor[cur] < n_eligible[cur])
                    lfc = kids[cursor[cur]++];
            }
            int64_t end = has_bound ? bound : ce[cur];
            if (lfc != TWV_NONE) {
                ok = push_section(t, cur, ce[lfc], end);
                cur = lfc;
                has_bound = false;
            } else {
                ok = push_section(t, cur, cs[cur], end);
                if (cur == root || s->parent == TWV_NONE)
                    break;
                bound = cs[cur];
                has_bound = true;
                cur = s->parent;
            }
            if (!ok)
                break;
        }
    }
    free(roots);
    return ok && index_sections(t);
}
