/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/diff.c: `tracewire diff A B`, what changed between two traces
 * (a good and a bad request) or two sets of traces of the same operation
 * (docs/views.md, "tracewire diff").
 *
 * A side is a trace id prefix (looked up in the FILE arguments), a file (all
 * its traces), or PREFIX@FILE; the shared filters narrow both sides (e.g.
 * --operation). Each side is aggregated by service and operation (opstats.c:
 * spans, total duration, self time, critical path) and compared per trace:
 * the largest changes first. When each side is one trace, the spans are
 * also matched by their path from the root (service: operation at every
 * level, and the order among equal paths): spans only in B were added,
 * spans only in A are missing.
 *
 * A path is not kept as text (a chain 100,000 deep would hold 100,000
 * prefixes of up to 100,000 names): each distinct path is a number, interned
 * in a table shared by both sides as the pair (its parent path's number, its
 * own name's number). Two spans have the same number exactly when their
 * paths are equal name by name (by induction from the roots), so no two
 * distinct paths can merge, and the sides compare numbers.
 *
 * Exit status: 0 when the comparison ran, whatever it found; 1 when a side
 * selected no trace or an input was bad; 2 on a usage error. Memory: the
 * per-operation rows of both sides, plus one trace's span paths per side
 * (a few words per span, and each distinct name once). Single-threaded.
 */
#include "views/view_cmd.h"

#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/json_common.h" /* tw__json_text: UTF-8-safe JSON strings */

#define DEFAULT_TOP 10
#define MAX_LISTED 50 /* added / missing spans listed in the text output */

/* A map of 64-bit keys to 32-bit values, open addressing (values TWV_NONE
 * mark free slots). */
typedef struct u64_map {
    uint64_t *keys;
    uint32_t *vals;
    size_t mask, n;
} u64_map;

static void map_free(u64_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

static size_t map_home(uint64_t key, size_t mask)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ull;
    key ^= key >> 33;
    return (size_t)key & mask;
}

/* The value slot of @key in @m, or NULL. */
static uint32_t *map_slot(const u64_map *m, uint64_t key)
{
    if (!m->vals)
        return NULL;
    for (size_t i = map_home(key, m->mask);; i = (i + 1) & m->mask) {
        if (m->vals[i] == TWV_NONE)
            return NULL;
        if (m->keys[i] == key)
            return &m->vals[i];
    }
}

static uint32_t map_get(const u64_map *m, uint64_t key)
{
    const uint32_t *v = map_slot(m, key);
    return v ? *v : TWV_NONE;
}

/* Adds @key (not yet in @m) with @val (not TWV_NONE). False on allocation
 * failure. */
static bool map_add(u64_map *m, uint64_t key, uint32_t val)
{
    if (!m->vals || 2 * (m->n + 1) > m->mask + 1) {
        size_t size = m->vals ? 2 * (m->mask + 1) : 64;
        u64_map g = {.keys = malloc(size * sizeof *g.keys),
                     .vals = malloc(size * sizeof *g.vals),
                     .mask = size - 1};
        if (!g.keys || !g.vals) {
            map_free(&g);
            return false;
        }
        memset(g.vals, 0xff, size * sizeof *g.vals);
        for (size_t i = 0; m->vals && i <= m->mask; i++) {
            if (m->vals[i] != TWV_NONE)
                map_add(&g, m->keys[i], m->vals[i]); /* has room: cannot fail */
        }
        g.n = m->n;
        map_free(m);
        *m = g;
    }
    size_t i = map_home(key, m->mask);
    while (m->vals[i] != TWV_NONE)
        i = (i + 1) & m->mask;
    m->keys[i] = key;
    m->vals[i] = val;
    m->n++;
    return true;
}

/* The names and paths of both sides, each interned once. */
typedef struct path_table {
    GHashTable *name_ids; /* "svc: op" (owned by names) -> id + 1 */
    GPtrArray *names;     /* id -> "svc: op" */
    u64_map paths;        /* (parent path + 1) << 32 | name id -> path id */
    uint32_t n_paths;
} path_table;

static void path_table_init(path_table *pt)
{
    pt->name_ids = g_hash_table_new(g_str_hash, g_str_equal);
    pt->names = g_ptr_array_new_with_free_func(g_free);
    memset(&pt->paths, 0, sizeof pt->paths);
    pt->n_paths = 0;
}

static void path_table_free(path_table *pt)
{
    g_hash_table_destroy(pt->name_ids);
    g_ptr_array_free(pt->names, TRUE);
    map_free(&pt->paths);
}

/* One span of a kept trace, by its path from the root. */
typedef struct path_span {
    uint32_t path;       /* path_table id: every name from the root to this span */
    uint32_t occurrence; /* among the spans of the trace with the same path, in display order */
    const char *name;    /* "svc: op" (the path table's) */
    const char *where;   /* the parent's name, for people; "(root)" */
    int64_t duration_us;
} path_span;

typedef struct side {
    const char *arg;
    twv_side sel;
    twv_filter filter; /* the shared filters plus this side's prefix */
    twv_opstats ops;
    uint64_t n_traces;
    double total_us; /* sum of the traces' durations (exact below 2^53 us, never wraps) */
    char first_id[33];
    char *root_name;  /* "svc: op" of the first trace's first root */
    path_table *pt;   /* shared by both sides */
    path_span *paths; /* the first trace, while the side has one trace */
    size_t n_paths;
    bool is_nomem;
} side;

static bool file_exists(const char *path)
{
    return g_file_test(path, G_FILE_TEST_IS_REGULAR);
}

static void free_paths(side *s)
{
    free(s->paths);
    s->paths = NULL;
    s->n_paths = 0;
}

static char *span_name(const twv_span *sp)
{
    return g_strdup_printf("%s: %s", sp->service[0] ? sp->service : "?",
                           sp->d->operation ? sp->d->operation : "");
}

/* The id of the name of @sp in @pt, interned; TWV_NONE on allocation failure. */
static uint32_t intern_name(path_table *pt, const twv_span *sp)
{
    char *name = span_name(sp);
    gpointer id = g_hash_table_lookup(pt->name_ids, name);
    if (id) {
        g_free(name);
        return GPOINTER_TO_UINT(id) - 1;
    }
    if (pt->names->len >= TWV_NONE - 1) {
        g_free(name);
        return TWV_NONE;
    }
    uint32_t n = pt->names->len;
    g_ptr_array_add(pt->names, name);
    g_hash_table_insert(pt->name_ids, name, GUINT_TO_POINTER(n + 1));
    return n;
}

/* The id of the path (@parent_path, or TWV_NONE for a root, then @name_id),
 * interned; TWV_NONE on allocation failure. */
static uint32_t intern_path(path_table *pt, uint32_t parent_path, uint32_t name_id)
{
    uint64_t key = (uint64_t)(parent_path == TWV_NONE ? 0 : parent_path + 1) << 32 | name_id;
    uint32_t id = map_get(&pt->paths, key);
    if (id != TWV_NONE)
        return id;
    if (pt->n_paths >= TWV_NONE - 1 || !map_add(&pt->paths, key, pt->n_paths))
        return TWV_NONE;
    return pt->n_paths++;
}

/* The paths of every span of @t (display order), with occurrence numbers.
 * t->order lists a parent before its children. */
static bool keep_paths(side *s, const twv_trace *t)
{
    path_table *pt = s->pt;
    s->paths = calloc(t->n_spans + 1, sizeof *s->paths);
    uint32_t *path_of = malloc((t->n_spans + 1) * sizeof *path_of); /* by span index */
    uint32_t *name_of = malloc((t->n_spans + 1) * sizeof *name_of);
    u64_map seen = {0}; /* path id -> spans seen with it */
    bool ok = s->paths && path_of && name_of;
    for (size_t i = 0; ok && i < t->n_spans; i++) {
        uint32_t k = t->order[i];
        const twv_span *sp = &t->spans[k];
        uint32_t name = intern_name(pt, sp);
        uint32_t path =
            name == TWV_NONE
                ? TWV_NONE
                : intern_path(pt, sp->parent == TWV_NONE ? TWV_NONE : path_of[sp->parent], name);
        if (path == TWV_NONE) {
            ok = false;
            break;
        }
        name_of[k] = name;
        path_of[k] = path;
        uint32_t *count = map_slot(&seen, path), n = count ? *count : 0;
        if (count)
            (*count)++;
        else if (!map_add(&seen, path, 1))
            ok = false;
        path_span *p = &s->paths[s->n_paths++];
        p->path = path;
        p->occurrence = n;
        p->name = g_ptr_array_index(pt->names, name);
        p->where = sp->parent == TWV_NONE
                       ? "(root)"
                       : (const char *)g_ptr_array_index(pt->names, name_of[sp->parent]);
        p->duration_us = sp->has_duration ? sp->d->duration_us : -1;
    }
    free(path_of);
    free(name_of);
    map_free(&seen);
    if (!ok)
        free_paths(s);
    return ok;
}

static void add_trace(side *s, const twv_trace *t)
{
    if (s->is_nomem)
        return;
    if (!twv_opstats_add_trace(&s->ops, t, true)) {
        s->is_nomem = true;
        return;
    }
    s->total_us += (double)(t->end_us - t->start_us);
    if (s->n_traces == 0) {
        twv_trace_id_text(t->trace_id_high, t->trace_id_low, s->first_id);
        if (t->n_roots)
            s->root_name = span_name(&t->spans[t->roots[0]]);
        if (!keep_paths(s, t))
            s->is_nomem = true;
    } else if (s->n_traces == 1) {
        free_paths(s); /* a set: no span-by-span comparison */
    }
    s->n_traces++;
}

typedef struct run_both {
    side *a, *b;
} run_both;

static int on_trace_both(void *arg, twv_trace *t)
{
    run_both *r = arg;
    if (twv_filter_match(&r->a->filter, t))
        add_trace(r->a, t);
    if (r->b && twv_filter_match(&r->b->filter, t))
        add_trace(r->b, t);
    if (r->a->is_nomem || (r->b && r->b->is_nomem)) {
        tw__cli_error("diff: out of memory");
        return TWV_FAIL;
    }
    return TWV_CONTINUE;
}

/* ---- comparison -------------------------------------------------------------------------- */

typedef struct change {
    const char *service, *operation;
    const twv_opstat *a, *b;
    double spans_a, spans_b, dur_a, dur_b, self_a, self_b, crit_a, crit_b; /* per trace */
} change;

static double per_trace(uint64_t v, uint64_t traces)
{
    return traces ? (double)v / (double)traces : 0;
}

static int by_change(const void *x, const void *y)
{
    const change *p = x, *q = y;
    double dp = fabs(p->dur_b - p->dur_a), dq = fabs(q->dur_b - q->dur_a);
    if (dp != dq)
        return dp > dq ? -1 : 1;
    int c = strcmp(p->service, q->service);
    return c ? c : strcmp(p->operation, q->operation);
}

static change *make_changes(side *a, side *b, size_t *n_out)
{
    size_t cap = a->ops.n_rows + b->ops.n_rows + 1, n = 0;
    change *list = calloc(cap, sizeof *list);
    if (!list)
        return NULL;
    for (int pass = 0; pass < 2; pass++) {
        side *from = pass ? b : a, *other = pass ? a : b;
        for (size_t i = 0; i < from->ops.n_rows; i++) {
            twv_opstat *op = &from->ops.rows[i];
            twv_opstat *twin = twv_opstats_find(&other->ops, op->service, op->operation);
            if (pass == 1 && twin)
                continue; /* already paired in the first pass */
            change *c = &list[n++];
            c->service = op->service;
            c->operation = op->operation;
            c->a = pass ? twin : op;
            c->b = pass ? op : twin;
        }
    }
    for (size_t i = 0; i < n; i++) {
        change *c = &list[i];
        if (c->a) {
            c->spans_a = per_trace(c->a->count, a->n_traces);
            c->dur_a = (double)c->a->duration_us / (double)a->n_traces;
            c->self_a = (double)c->a->self_us / (double)a->n_traces;
            c->crit_a = (double)c->a->critical_us / (double)a->n_traces;
        }
        if (c->b) {
            c->spans_b = per_trace(c->b->count, b->n_traces);
            c->dur_b = (double)c->b->duration_us / (double)b->n_traces;
            c->self_b = (double)c->b->self_us / (double)b->n_traces;
            c->crit_b = (double)c->b->critical_us / (double)b->n_traces;
        }
    }
    qsort(list, n, sizeof *list, by_change);
    *n_out = n;
    return list;
}

/* @us rounded, held within int64_t (llround of 2^63 or more is undefined). */
static int64_t round_us(double us)
{
    if (us >= 0x1p63)
        return INT64_MAX;
    if (us <= -0x1p63)
        return -INT64_MAX;
    return (int64_t)llround(us);
}

static void fmt_signed(double us, char *buf, size_t size)
{
    char tmp[32];
    twv_format_duration(round_us(fabs(us)), tmp, sizeof tmp);
    snprintf(buf, size, "%s%s", us < 0 ? "-" : "+", tmp);
}

static void fmt_us(double us, char *buf, size_t size)
{
    twv_format_duration(round_us(us), buf, size);
}

/* The spans added in B and missing from B, when both sides are one trace. */
typedef struct span_changes {
    const path_span **added, **missing;
    size_t n_added, n_missing;
} span_changes;

static uint64_t path_key(const path_span *p)
{
    return (uint64_t)p->path << 32 | p->occurrence;
}

/* Spans of @from whose path and occurrence are not among @other's. -1 on
 * allocation failure. */
static ptrdiff_t unmatched(const side *from, const side *other, const path_span **out)
{
    u64_map keys = {0};
    for (size_t i = 0; i < other->n_paths; i++) {
        uint64_t key = path_key(&other->paths[i]);
        if (map_get(&keys, key) == TWV_NONE && !map_add(&keys, key, 1)) {
            map_free(&keys);
            return -1;
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < from->n_paths; i++) {
        if (map_get(&keys, path_key(&from->paths[i])) == TWV_NONE)
            out[n++] = &from->paths[i];
    }
    map_free(&keys);
    return (ptrdiff_t)n;
}

/* Fills @sc (both sides hold their paths). False on allocation failure. */
static bool find_span_changes(const side *a, const side *b, span_changes *sc)
{
    sc->added = calloc(b->n_paths + 1, sizeof *sc->added);
    sc->missing = calloc(a->n_paths + 1, sizeof *sc->missing);
    ptrdiff_t n_added = sc->added ? unmatched(b, a, sc->added) : -1;
    ptrdiff_t n_missing = sc->missing ? unmatched(a, b, sc->missing) : -1;
    sc->n_added = n_added < 0 ? 0 : (size_t)n_added;
    sc->n_missing = n_missing < 0 ? 0 : (size_t)n_missing;
    return n_added >= 0 && n_missing >= 0;
}

static void safe_append(GString *g, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        g_string_append_c(g, *p < 0x20 || *p == 0x7f ? '?' : (char)*p);
}

static uint64_t span_count(const side *s)
{
    uint64_t n = 0;
    for (size_t i = 0; i < s->ops.n_rows; i++)
        n += s->ops.rows[i].count;
    return n;
}

static void describe(GString *g, const char *label, const side *s)
{
    char dur[32];
    twv_format_duration(round_us(s->total_us / (double)s->n_traces), dur, sizeof dur);
    g_string_append_printf(g, "%s: ", label);
    if (s->n_traces == 1) {
        g_string_append_printf(g, "trace %s (", s->first_id);
        safe_append(g, s->root_name ? s->root_name : "?");
        g_string_append_printf(g, "), %" PRIu64 " spans, %s\n", span_count(s), dur);
    } else {
        g_string_append_printf(g, "%" PRIu64 " traces (first %s, ", s->n_traces, s->first_id);
        safe_append(g, s->root_name ? s->root_name : "?");
        g_string_append_printf(g, "), %.1f spans and %s per trace\n",
                               (double)span_count(s) / (double)s->n_traces, dur);
    }
}

static bool write_text(FILE *out, side *a, side *b, const span_changes *sc, const change *ch,
                       size_t n_ch, size_t top)
{
    GString *g = g_string_new(NULL);
    describe(g, "A", a);
    describe(g, "B", b);
    double ma = a->total_us / (double)a->n_traces;
    double mb = b->total_us / (double)b->n_traces;
    char delta[40];
    fmt_signed(mb - ma, delta, sizeof delta);
    g_string_append_printf(g, "duration%s: %s", a->n_traces > 1 || b->n_traces > 1 ? " (mean)" : "",
                           delta);
    if (ma > 0)
        g_string_append_printf(g, " (x%.2f)", mb / ma);
    g_string_append(g, "\n\n");

    if (sc) {
        for (int pass = 0; pass < 2; pass++) {
            const path_span **list = pass == 0 ? sc->added : sc->missing;
            size_t n = pass == 0 ? sc->n_added : sc->n_missing;
            g_string_append_printf(g, "spans %s (%zu)%s\n",
                                   pass == 0 ? "added in B" : "missing from B", n, n ? ":" : "");
            for (size_t i = 0; i < n && i < MAX_LISTED; i++) {
                char dur[32];
                twv_format_duration(list[i]->duration_us, dur, sizeof dur);
                g_string_append_printf(g, "  %c ", pass == 0 ? '+' : '-');
                safe_append(g, list[i]->name);
                g_string_append_printf(g, "  %s  under ", dur);
                safe_append(g, list[i]->where);
                g_string_append_c(g, '\n');
            }
            if (n > MAX_LISTED)
                g_string_append_printf(g, "  ... %zu more\n", n - MAX_LISTED);
        }
        g_string_append_c(g, '\n');
    } else {
        size_t only_a = 0, only_b = 0;
        for (size_t i = 0; i < n_ch; i++) {
            only_a += ch[i].b == NULL;
            only_b += ch[i].a == NULL;
        }
        g_string_append_printf(g,
                               "operations only in B: %zu; only in A: %zu (marked new / gone "
                               "below)\n\n",
                               only_b, only_a);
    }

    g_string_append_printf(g, "largest changes by operation (per trace; self = without "
                              "children; critical = on the critical path):\n");
    g_string_append_printf(g, "  %-44s %7s %7s %11s %11s %11s %11s %11s\n", "SERVICE: OPERATION",
                           "SPANS A", "SPANS B", "DURATION A", "DURATION B", "CHANGE",
                           "SELF CHANGE", "CRIT CHANGE");
    const change *most_self = NULL;
    for (size_t i = 0; i < n_ch; i++) {
        if (!most_self ||
            fabs(ch[i].self_b - ch[i].self_a) > fabs(most_self->self_b - most_self->self_a))
            most_self = &ch[i];
    }
    for (size_t i = 0; i < n_ch && i < top; i++) {
        const change *c = &ch[i];
        char da[32], db[32], dd[40], ds[40], dc[40];
        fmt_us(c->dur_a, da, sizeof da);
        fmt_us(c->dur_b, db, sizeof db);
        fmt_signed(c->dur_b - c->dur_a, dd, sizeof dd);
        fmt_signed(c->self_b - c->self_a, ds, sizeof ds);
        fmt_signed(c->crit_b - c->crit_a, dc, sizeof dc);
        GString *name = g_string_new(NULL);
        safe_append(name, c->service);
        g_string_append(name, ": ");
        safe_append(name, c->operation);
        if (!c->a)
            g_string_append(name, " (new)");
        else if (!c->b)
            g_string_append(name, " (gone)");
        if (name->len > 44) {
            g_string_truncate(name, 43);
            g_string_append_c(name, '~');
        }
        g_string_append_printf(g, "  %-44s %7.1f %7.1f %11s %11s %11s %11s %11s\n", name->str,
                               c->spans_a, c->spans_b, c->a ? da : "-", c->b ? db : "-", dd, ds,
                               dc);
        g_string_free(name, TRUE);
    }
    if (n_ch > top)
        g_string_append_printf(g, "  ... %zu more operation%s (--top)\n", n_ch - top,
                               n_ch - top == 1 ? "" : "s");
    if (most_self && fabs(most_self->self_b - most_self->self_a) >= 1) {
        char ds[40];
        fmt_signed(most_self->self_b - most_self->self_a, ds, sizeof ds);
        g_string_append(g, "\nthe largest change of self time: ");
        safe_append(g, most_self->service);
        g_string_append(g, ": ");
        safe_append(g, most_self->operation);
        g_string_append_printf(g, " (%s per trace)\n", ds);
    }
    bool ok = fwrite(g->str, 1, g->len, out) == g->len;
    g_string_free(g, TRUE);
    return ok;
}

static json_t *side_json(const side *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "traces", json_integer((json_int_t)s->n_traces));
    json_object_set_new(o, "first_trace_id", json_string(s->first_id));
    json_object_set_new(
        o, "root", s->root_name ? tw__json_text(s->root_name, strlen(s->root_name)) : json_null());
    json_object_set_new(o, "spans", json_integer((json_int_t)span_count(s)));
    json_object_set_new(o, "mean_duration_us",
                        json_integer(round_us(s->total_us / (double)s->n_traces)));
    return o;
}

static bool write_json(FILE *out, side *a, side *b, const span_changes *sc, const change *ch,
                       size_t n_ch, size_t top)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "a", side_json(a));
    json_object_set_new(doc, "b", side_json(b));
    if (sc) {
        for (int pass = 0; pass < 2; pass++) {
            const path_span **list = pass == 0 ? sc->added : sc->missing;
            size_t n = pass == 0 ? sc->n_added : sc->n_missing;
            json_t *arr = json_array();
            for (size_t i = 0; i < n; i++) {
                json_t *o = json_object();
                json_object_set_new(o, "span", tw__json_text(list[i]->name, strlen(list[i]->name)));
                json_object_set_new(o, "under",
                                    tw__json_text(list[i]->where, strlen(list[i]->where)));
                json_object_set_new(o, "duration_us",
                                    list[i]->duration_us >= 0 ? json_integer(list[i]->duration_us)
                                                              : json_null());
                json_array_append_new(arr, o);
            }
            json_object_set_new(doc, pass == 0 ? "added" : "missing", arr);
        }
    }
    json_t *arr = json_array();
    for (size_t i = 0; i < n_ch && i < top; i++) {
        const change *c = &ch[i];
        json_t *o = json_object();
        json_object_set_new(o, "service", tw__json_text(c->service, strlen(c->service)));
        json_object_set_new(o, "operation", tw__json_text(c->operation, strlen(c->operation)));
        json_object_set_new(o, "spans_a", json_real(c->spans_a));
        json_object_set_new(o, "spans_b", json_real(c->spans_b));
        json_object_set_new(o, "duration_a_us", json_integer(round_us(c->dur_a)));
        json_object_set_new(o, "duration_b_us", json_integer(round_us(c->dur_b)));
        json_object_set_new(o, "self_change_us", json_integer(round_us(c->self_b - c->self_a)));
        json_object_set_new(o, "critical_change_us", json_integer(round_us(c->crit_b - c->crit_a)));
        json_array_append_new(arr, o);
    }
    json_object_set_new(doc, "changes", arr);
    int rc = json_dumpf(doc, out, JSON_INDENT(2));
    json_decref(doc);
    return rc == 0 && fputc('\n', out) != EOF;
}

/* ---- the command --------------------------------------------------------------------------- */

static bool same_inputs(const side *a, const side *b)
{
    if (!a->sel.path || !b->sel.path)
        return !a->sel.path && !b->sel.path;
    return strcmp(a->sel.path, b->sel.path) == 0;
}

int tw__diff_cmd_main(int argc, char **argv)
{
    twv_cli c;
    twv_cli_init(&c, "diff");
    gboolean as_json = FALSE;
    gint64 top = DEFAULT_TOP;
    GOptionEntry entries[] = {
        {"json", 0, 0, G_OPTION_ARG_NONE, &as_json, "The comparison as one JSON object", NULL},
        {"top", 0, 0, G_OPTION_ARG_INT64, &top,
         "Operations listed, largest change first (default 10; 0: all)", "N"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    GOptionContext *ctx = twv_cli_context(
        &c, "A B [FILE...] - what changed between two traces, or two sets of traces",
        "A and B are each a trace id prefix (looked up in FILE..., or stdin), a file (every "
        "trace in it), or PREFIX@FILE. Two single traces are compared span by span (spans "
        "added and missing, matched by their path from the root); sets are compared per "
        "trace. Both are compared by operation: spans, duration, self time and critical path "
        "per trace, largest change first. The filters apply to both sides (e.g. --operation "
        "to compare the requests of one operation). Exit status: 0 when the comparison ran, "
        "whatever it found; 1 when a side selected no trace or an input was bad; 2 on a usage "
        "error. Rules: docs/views.md.",
        entries, false);
    int rc = TW_CLI_EXIT_USAGE;
    side a = {0}, b = {0};
    side *sides[2] = {&a, &b};
    path_table pt;
    path_table_init(&pt);
    a.pt = b.pt = &pt;
    span_changes sc = {0};
    twv_opstats_init(&a.ops, 0);
    twv_opstats_init(&b.ops, 0);
    change *ch = NULL;
    if (!twv_cli_parse(&c, ctx, &argc, &argv) || !twv_cli_finish(&c))
        goto out;
    size_t n_args = c.files ? g_strv_length(c.files) : 0;
    if (n_args < 2) {
        twv_usage_error(&c, "name two sides to compare: A B [FILE...]");
        goto out;
    }
    if (top < 0) {
        twv_usage_error(&c, "--top must be >= 0");
        goto out;
    }
    if (c.filter.trace_prefix[0]) {
        twv_usage_error(&c, "--trace does not apply: name the traces as A and B");
        goto out;
    }
    char why[512];
    for (int i = 0; i < 2; i++) {
        sides[i]->arg = c.files[i];
        if (!twv_parse_side(c.files[i], file_exists, &sides[i]->sel, why, sizeof why)) {
            twv_usage_error(&c, "%s", why);
            goto out;
        }
        sides[i]->filter = c.filter;
        memcpy(sides[i]->filter.trace_prefix, sides[i]->sel.prefix, sizeof sides[i]->sel.prefix);
    }
    char **inputs = c.files + 2;
    bool any_bare = !a.sel.path || !b.sel.path;
    if (!any_bare && n_args > 2) {
        twv_usage_error(&c, "'%s' is not needed: both sides name their file", c.files[2]);
        goto out;
    }
    rc = TW_CLI_EXIT_FAILURE;
    bool is_failed = false;
    twv_filter none = c.filter; /* the id filter is each side's: applied in the callback */
    none.trace_prefix[0] = '\0';
    if (same_inputs(&a, &b)) {
        char *files[2] = {(char *)a.sel.path, NULL};
        run_both r = {.a = &a, .b = &b};
        twv_run_result res;
        if (!twv_run(&c, a.sel.path ? files : inputs, &none, true, true, on_trace_both, &r, &res))
            goto out;
        is_failed |= res.is_failed;
    } else {
        for (int i = 0; i < 2; i++) {
            side *s = sides[i];
            char *files[2] = {(char *)s->sel.path, NULL};
            run_both r = {.a = s, .b = NULL};
            twv_run_result res;
            if (!twv_run(&c, s->sel.path ? files : inputs, &none, true, true, on_trace_both, &r,
                         &res))
                goto out;
            is_failed |= res.is_failed;
        }
    }
    for (int i = 0; i < 2; i++) {
        if (sides[i]->n_traces == 0) {
            tw__cli_error("diff: %s: no trace matched%s", sides[i]->arg,
                          sides[i]->sel.path && !sides[i]->sel.prefix[0] ? " in that file" : "");
            is_failed = true;
        }
    }
    if (a.n_traces == 0 || b.n_traces == 0 || a.is_nomem || b.is_nomem)
        goto out;
    size_t n_ch = 0;
    ch = make_changes(&a, &b, &n_ch);
    if (!ch) {
        tw__cli_error("diff: out of memory");
        goto out;
    }
    bool by_span = a.paths && b.paths;
    if (by_span && !find_span_changes(&a, &b, &sc)) {
        tw__cli_error("diff: out of memory");
        goto out;
    }
    size_t shown = top == 0 ? n_ch : (size_t)top;
    bool ok = as_json ? write_json(stdout, &a, &b, by_span ? &sc : NULL, ch, n_ch, shown)
                      : write_text(stdout, &a, &b, by_span ? &sc : NULL, ch, n_ch, shown);
    ok = fflush(stdout) == 0 && !ferror(stdout) && ok;
    if (!ok)
        tw__cli_error("diff: standard output: write error: %s", strerror(errno ? errno : EIO));
    rc = ok && !is_failed ? TW_CLI_EXIT_OK : TW_CLI_EXIT_FAILURE;
out:
    free(ch);
    free(sc.added);
    free(sc.missing);
    for (int i = 0; i < 2; i++) {
        free_paths(sides[i]);
        g_free(sides[i]->root_name);
        twv_opstats_free(&sides[i]->ops);
    }
    path_table_free(&pt);
    g_option_context_free(ctx);
    twv_cli_clear(&c);
    return rc;
}
