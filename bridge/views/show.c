/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/show.c: `tracewire show`, traces without a backend
 * (docs/views.md, "tracewire show"):
 *
 *   - a waterfall per trace in the terminal: the tree by parent, one line per
 *     span (service, operation, start offset, duration, kind, status, marks)
 *     and a bar on the trace's time axis; --tags, --logs and --critical-path
 *     add details; orphans hang under a placeholder naming the missing
 *     parent; a child starting before its parent is marked `skew`;
 *   - --list: one line per trace;
 *   - --html FILE: one self-contained page (html.c).
 *
 * Output is plain ASCII without escape codes unless stdout is a terminal or
 * --color / --unicode ask (view_cmd.c decides); every line fits the width.
 * Text from the input is printed through put_text, which replaces control
 * characters (a span name cannot move the cursor or change colours) and
 * invalid UTF-8. One trace is held at a time. Single-threaded.
 */
#include "views/view_cmd.h"

#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MIN_BAR_COLS 12
#define MIN_LABEL_COLS 24
#define MIN_NAME_COLS 8 /* indentation leaves at least this much of a name */
#define LABEL_HEADER "service  operation"
#define MAX_DRAWN_DEPTH 48 /* deeper levels are drawn as a depth number */
#define CP_SUMMARY_ROWS 8

/* SGR sequences */
#define SGR_RESET "\x1b[0m"
#define SGR_DIM "\x1b[2m"
#define SGR_BOLD "\x1b[1m"
#define SGR_ERROR "\x1b[1;31m"
#define SGR_SKEW "\x1b[33m"
static const char *const service_colors[] = {"\x1b[36m", "\x1b[33m", "\x1b[35m", "\x1b[32m",
                                             "\x1b[34m", "\x1b[96m", "\x1b[93m", "\x1b[95m",
                                             "\x1b[92m", "\x1b[94m"};
#define N_SERVICE_COLORS (sizeof service_colors / sizeof service_colors[0])

typedef struct show_opts {
    gboolean list, tags, logs, critical; /* GOption writes a gboolean (int) */
    char *html;
    gint64 limit;
} show_opts;

typedef struct show_ctx {
    const twv_cli *cli;
    show_opts o;
    twv_term term;
    twv_output out;
    twv_html *html; /* --html: made with the first trace shown */
    uint64_t shown;
    bool is_header_done;
    bool write_failed;
    GString *line;
    /* per trace */
    uint8_t *cont; /* per depth: the ancestor at that depth has more siblings */
    size_t cap_cont;
} show_ctx;

/* ---- text cells ------------------------------------------------------------------------------ */

static void pad(GString *g, int n)
{
    for (int i = 0; i < n; i++)
        g_string_append_c(g, ' ');
}

static void sgr(const show_ctx *x, GString *g, const char *code)
{
    if (x->term.color)
        g_string_append(g, code);
}

static const char *service_color(const char *service)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)service; *p; p++)
        h = (h ^ *p) * 16777619u;
    return service_colors[h % N_SERVICE_COLORS];
}

static void emit(show_ctx *x, GString *g)
{
    g_string_append_c(g, '\n');
    if (fwrite(g->str, 1, g->len, x->out.f) != g->len)
        x->write_failed = true;
    g_string_truncate(g, 0);
}

/* ---- columns ------------------------------------------------------------------------------- */

static const char *status_of(const tw__span_data *d, char *buf, size_t size)
{
    static const char *const keys[] = {"http.status_code", "http.response.status_code",
                                       "rpc.grpc.status_code", "grpc.status_code"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const tw__tag *t = twv_find_tag(d, keys[i]);
        if (t)
            return twv_tag_text(t, buf, size);
    }
    return "";
}

typedef struct layout {
    int width, label, start, duration, kind, status, marks, bar; /* bar: cells inside the frame */
} layout;

/* The marks of a span line: ERROR, skew, cycle (made a root to break a
 * cycle of parents), and * when on the critical path. */
static void marks_of(const show_ctx *x, const twv_span *s, char *buf, size_t size)
{
    const char *marks[4] = {s->is_error ? "ERROR" : NULL, s->is_skew ? "skew" : NULL,
                            s->is_cycle ? "cycle" : NULL,
                            x->o.critical && s->critical_us > 0 ? "*" : NULL};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < 4; i++) {
        if (marks[i] && used < size)
            used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? " " : "", marks[i]);
    }
}

/* ---- tree lines ---------------------------------------------------------------------------- */

typedef struct line {
    uint32_t span;    /* TWV_NONE: a placeholder for a missing parent */
    uint64_t missing; /* placeholder: the missing id */
    uint32_t depth;   /* display depth (orphans one deeper, under their placeholder) */
    bool is_last;     /* the last among its siblings */
} line;

/* Display lines: roots in start order; orphans grouped under one placeholder
 * per missing parent id, placed where the first of them starts. */
static line *make_lines(const twv_trace *t, size_t *n_lines)
{
    line *lines = malloc((2 * t->n_spans + 1) * sizeof *lines);
    uint32_t *stack = malloc((t->n_spans + 1) * sizeof *stack);
    uint32_t *next = malloc((t->n_roots + 1) * sizeof *next);
    bool *first = malloc((t->n_roots + 1) * sizeof *first);
    if (!lines || !stack || !next || !first) {
        free(lines);
        free(stack);
        free(next);
        free(first);
        return NULL;
    }
    size_t n = 0;
    /* top-level items: a root, or a placeholder with its orphans */
    size_t n_top = twv_root_groups(t, next, first), top_seen = 0;
    for (size_t r = 0; r < t->n_roots; r++) {
        if (!first[r])
            continue; /* drawn with the first orphan of its group */
        const twv_span *rs = &t->spans[t->roots[r]];
        top_seen++;
        uint32_t base = 0;
        if (rs->missing_parent) {
            lines[n++] = (line){.span = TWV_NONE,
                                .missing = rs->missing_parent,
                                .depth = 0,
                                .is_last = top_seen == n_top};
            base = 1;
        }
        for (uint32_t q = (uint32_t)r; q != TWV_NONE; q = next[q]) {
            /* depth first from this root, with its own is_last flags */
            size_t top = 0;
            stack[top++] = t->roots[q];
            bool root_is_last = base ? next[q] == TWV_NONE : top_seen == n_top;
            while (top > 0) {
                uint32_t k = stack[--top];
                const twv_span *s = &t->spans[k];
                bool is_last;
                if (k == t->roots[q]) {
                    is_last = root_is_last;
                } else {
                    const twv_span *p = &t->spans[s->parent];
                    is_last = t->children[p->first_child + p->n_children - 1] == k;
                }
                lines[n++] = (line){.span = k, .depth = s->depth + base, .is_last = is_last};
                for (uint32_t i = s->n_children; i-- > 0;)
                    stack[top++] = t->children[s->first_child + i];
            }
        }
    }
    free(stack);
    free(next);
    free(first);
    *n_lines = n;
    return lines;
}

static bool reserve_cont(show_ctx *x, size_t depth)
{
    if (depth < x->cap_cont)
        return true;
    size_t cap = x->cap_cont ? x->cap_cont : 64;
    while (cap <= depth)
        cap *= 2;
    uint8_t *grown = realloc(x->cont, cap);
    if (!grown)
        return false;
    x->cont = grown;
    x->cap_cont = cap;
    return true;
}

/* Columns of a line's tree prefix at @depth: indented (three a level) or as
 * the depth in brackets ("[12] `- "); a detail line (the continuation below
 * its span) takes three more. */
static int prefix_cols(uint32_t depth, bool is_detail, bool bracketed)
{
    int cols = is_detail ? 3 : 0;
    if (!bracketed)
        return cols + 3 * (int)depth;
    char deep[32];
    return cols + snprintf(deep, sizeof deep, "[%" PRIu32 "] ", depth) + (depth >= 1 ? 3 : 0);
}

/* The tree prefix of a line at @depth into @g, in at most @max_cols columns:
 * the ancestors' continuation bars and the line's connector, or, for a detail
 * line (is_detail), the continuation below the span. Indented when the depth
 * is at most MAX_DRAWN_DEPTH and that leaves the line's text (@text_cols
 * columns) or MIN_NAME_COLS of it room, or when the depth in brackets would
 * not be shorter; else as the depth in brackets; nothing when even that does
 * not fit (a width of a few columns). Returns its columns. */
static int put_prefix(show_ctx *x, GString *g, uint32_t depth, bool is_last, bool is_detail,
                      bool has_children, int max_cols, int text_cols)
{
    const char *bar = x->term.unicode ? "\xe2\x94\x82  " : "|  ";
    const char *tee = x->term.unicode ? "\xe2\x94\x9c\xe2\x94\x80 " : "|- ";
    const char *ell = x->term.unicode ? "\xe2\x94\x94\xe2\x94\x80 " : "`- ";
    int need = text_cols < MIN_NAME_COLS ? text_cols : MIN_NAME_COLS;
    int indented = prefix_cols(depth, is_detail, false);
    int brackets = prefix_cols(depth, is_detail, true);
    bool bracketed = depth > MAX_DRAWN_DEPTH || (indented + need > max_cols && brackets < indented);
    if ((bracketed ? brackets : indented) > max_cols)
        return 0;
    int cols = 0;
    sgr(x, g, SGR_DIM);
    uint32_t from = 1;
    if (bracketed) { /* say how deep */
        char deep[32];
        int n = snprintf(deep, sizeof deep, "[%" PRIu32 "] ", depth);
        g_string_append(g, deep);
        cols += n;
        from = depth;
    }
    for (uint32_t level = from; level < depth; level++) {
        g_string_append(g, x->cont[level] ? bar : "   ");
        cols += 3;
    }
    if (depth >= 1) {
        if (is_detail)
            g_string_append(g, x->cont[depth] ? bar : "   ");
        else
            g_string_append(g, is_last ? ell : tee);
        cols += 3;
    }
    if (is_detail) {
        g_string_append(g, has_children ? bar : "   ");
        cols += 3;
    }
    sgr(x, g, SGR_RESET);
    return cols;
}

/* ---- one trace ---------------------------------------------------------------------------- */

/* Columns of the text of a line's label: "service  operation" (a span with
 * no service is "?"), or the placeholder of a missing parent. */
static int text_cols(const twv_trace *t, const line *l)
{
    if (l->span == TWV_NONE)
        return 33; /* "? missing parent " and 16 hex digits */
    const twv_span *s = &t->spans[l->span];
    return twv_text_cols(s->service[0] ? s->service : "?") + 2 +
           twv_text_cols(s->d->operation ? s->d->operation : "");
}

/* Columns the label of a line takes when nothing in it is cut. */
static int label_cols(const twv_trace *t, const line *l)
{
    int cols = text_cols(t, l);
    if (l->depth >= 1)
        cols += prefix_cols(l->depth, false, l->depth > MAX_DRAWN_DEPTH);
    return cols;
}

static layout make_layout(const show_ctx *x, const twv_trace *t, const line *lines, size_t n)
{
    layout L = {.width = x->term.width, .start = 11, .duration = 10, .kind = 8, .status = 0};
    int max_label = (int)strlen(LABEL_HEADER); /* the column header fits too */
    for (size_t i = 0; i < n; i++) {
        int c = label_cols(t, &lines[i]);
        if (c > max_label)
            max_label = c;
        if (lines[i].span == TWV_NONE)
            continue;
        const twv_span *s = &t->spans[lines[i].span];
        char buf[64], marks[32];
        int sc = (int)strlen(status_of(s->d, buf, sizeof buf));
        if (sc > 12)
            sc = 12;
        if (sc > L.status)
            L.status = sc;
        marks_of(x, s, marks, sizeof marks);
        if ((int)strlen(marks) > L.marks)
            L.marks = (int)strlen(marks);
    }
    /* Columns after the label: " start duration  kind status  marks |bar|". On a
     * narrow terminal the bar goes first, then marks, status, kind and start
     * (in that order) until the label has MIN_LABEL_COLS. The duration always
     * stays: TWV_MIN_WIDTH (view_cmd.h) leaves it room. */
    int label = max_label, bar = 0;
    for (int drop = 0; drop <= 5; drop++) {
        if (drop >= 2)
            L.marks = 0;
        if (drop >= 3)
            L.status = 0;
        if (drop >= 4)
            L.kind = 0;
        if (drop >= 5)
            L.start = 0;
        int fixed = (L.start ? 1 + L.start : 0) + 1 + L.duration + (L.kind ? 2 + L.kind : 0) +
                    (L.status ? 1 + L.status : 0) + (L.marks ? 2 + L.marks : 0);
        int room = L.width - fixed;
        if (drop == 0) {
            /* The bar gets at least a quarter of the width (MIN_BAR_COLS on narrow
             * terminals) while the label keeps MIN_LABEL_COLS + 16. */
            int want_bar = L.width / 4;
            if (want_bar < MIN_BAR_COLS)
                want_bar = MIN_BAR_COLS;
            int cap = room - 3 - want_bar;
            if (cap < MIN_LABEL_COLS + 16)
                cap = room - 3 - MIN_BAR_COLS < MIN_LABEL_COLS + 16 ? room - 3 - MIN_BAR_COLS
                                                                    : MIN_LABEL_COLS + 16;
            label = max_label < cap ? max_label : cap;
            bar = room - label - 3; /* " |" + "|" */
            if (label >= MIN_LABEL_COLS || label >= max_label)
                break;
            continue;
        }
        bar = 0;
        label = room < max_label ? room : max_label;
        if (label >= MIN_LABEL_COLS || label >= max_label)
            break;
    }
    if (label < 0)
        label = 0;
    L.label = label;
    L.bar = bar;
    return L;
}

static void put_right(GString *g, const char *text, int cols)
{
    int len = (int)strlen(text);
    if (len > cols) {
        g_string_append_len(g, text, cols);
        return;
    }
    pad(g, cols - len);
    g_string_append(g, text);
}

static void put_left(GString *g, const char *text, int cols)
{
    int used = twv_put_text(g, text, cols, false);
    pad(g, cols - used);
}

/* The bar of a span: cells [c0, c1) of the axis. With --critical-path, the
 * cells of its critical sections are solid and the rest light: the span's
 * sections (t->cp_of, latest first) are walked from the earliest once, as
 * the cells advance, so a bar costs its cells plus its sections. */
static void put_bar(show_ctx *x, GString *g, const twv_trace *t, const layout *L, uint32_t k)
{
    const char *frame = x->term.unicode ? "\xe2\x94\x82" : "|";
    g_string_append_c(g, ' ');
    sgr(x, g, SGR_DIM);
    g_string_append(g, frame);
    sgr(x, g, SGR_RESET);
    int cells = L->bar;
    const twv_span *s = k == TWV_NONE ? NULL : &t->spans[k];
    double span_us = (double)(t->end_us - t->start_us);
    int c0 = cells, c1 = cells;
    if (s && s->has_start && span_us > 0) {
        c0 = (int)((double)(s->start_us - t->start_us) * cells / span_us);
        c1 = (int)((double)(s->end_us - t->start_us) * cells / span_us + 0.999999);
        if (c0 < 0)
            c0 = 0;
        if (c0 >= cells)
            c0 = cells - 1;
        if (c1 <= c0)
            c1 = c0 + 1;
        if (c1 > cells)
            c1 = cells;
    } else if (s && s->has_start) {
        c0 = 0;
        c1 = cells;
    }
    pad(g, c0);
    if (c1 > c0) {
        sgr(x, g, s->is_error ? SGR_ERROR : service_color(s->service));
        /* this span's sections, earliest at next - 1 */
        uint32_t first = x->o.critical ? t->cp_first[k] : 0;
        uint32_t next = x->o.critical ? t->cp_first[k + 1] : 0;
        for (int c = c0; c < c1; c++) {
            bool solid = true;
            if (x->o.critical) {
                int64_t a = t->start_us + (int64_t)((double)c * span_us / cells);
                int64_t b = t->start_us + (int64_t)((double)(c + 1) * span_us / cells);
                while (next > first && t->cp[t->cp_of[next - 1]].end_us <= a)
                    next--; /* ends before this cell, so before every later one */
                solid = next > first && t->cp[t->cp_of[next - 1]].start_us < b;
            }
            if (x->term.unicode)
                g_string_append(g, solid ? "\xe2\x96\x88" : "\xe2\x96\x91");
            else
                g_string_append_c(g, solid ? '#' : '=');
        }
        sgr(x, g, SGR_RESET);
    }
    pad(g, cells - c1);
    sgr(x, g, SGR_DIM);
    g_string_append(g, frame);
    sgr(x, g, SGR_RESET);
}

static void put_detail(show_ctx *x, const line *l, const twv_span *s, const char *text)
{
    GString *g = x->line;
    int cols = put_prefix(x, g, l->depth, l->is_last, true, s->n_children > 0, x->term.width,
                          twv_text_cols(text));
    sgr(x, g, SGR_DIM);
    twv_put_text(g, text, x->term.width - cols, x->term.unicode);
    sgr(x, g, SGR_RESET);
    emit(x, g);
}

static void details(show_ctx *x, const twv_trace *t, const line *l)
{
    const twv_span *s = &t->spans[l->span];
    const tw__span_data *d = s->d;
    char buf[512], val[128];
    GString *text = g_string_new(NULL);
    if (x->o.tags) {
        /* The parent the tree shows: its parent id, or the reference it was
         * taken from when that id is not in the trace (trace.c); "follows
         * from" only when that link is one. An orphan names its parent id. */
        bool follows;
        uint64_t parent = twv_shown_parent(t, s, &follows);
        g_string_printf(text, "span %016" PRIx64, d->span_id);
        if (parent)
            g_string_append_printf(text, "  parent %016" PRIx64 "%s", parent,
                                   follows ? " (follows from)" : "");
        put_detail(x, l, s, text->str);
        for (size_t i = 0; i < d->n_tags; i++) {
            const tw__tag *tag = &d->tags[i];
            g_string_printf(text, "%s = %s", tag->key, twv_tag_text(tag, val, sizeof val));
            put_detail(x, l, s, text->str);
        }
        if (s->proc) {
            g_string_printf(text, "process %s", s->service);
            for (size_t i = 0; i < s->proc->n_tags; i++)
                g_string_append_printf(text, " %s=%s", s->proc->tags[i].key,
                                       twv_tag_text(&s->proc->tags[i], val, sizeof val));
            put_detail(x, l, s, text->str);
        }
        for (size_t i = 0; i < d->n_refs; i++) {
            const tw__ref *r = &d->refs[i];
            if (r->span_id == parent &&
                r->type == (follows ? TW__REF_FOLLOWS_FROM : TW__REF_CHILD_OF))
                continue; /* the parent line says it */
            char id[33];
            twv_trace_id_text(r->trace_id_high, r->trace_id_low, id);
            g_string_printf(text, "reference %s %s:%016" PRIx64,
                            r->type == TW__REF_FOLLOWS_FROM ? "follows_from" : "child_of", id,
                            r->span_id);
            put_detail(x, l, s, text->str);
        }
    }
    if (x->o.logs) {
        for (size_t i = 0; i < d->n_logs; i++) {
            const tw__log *lg = &d->logs[i];
            twv_format_duration(lg->timestamp_us - t->start_us, buf, sizeof buf);
            g_string_printf(text, "log +%s:", buf);
            for (size_t f = 0; f < lg->n_fields; f++)
                g_string_append_printf(text, " %s=%s", lg->fields[f].key,
                                       twv_tag_text(&lg->fields[f], val, sizeof val));
            put_detail(x, l, s, text->str);
        }
    }
    g_string_free(text, TRUE);
}

static void put_trace_header(show_ctx *x, const twv_trace *t)
{
    char id[33], dur[32], when[40];
    twv_trace_id_text(t->trace_id_high, t->trace_id_low, id);
    twv_format_duration(t->end_us - t->start_us, dur, sizeof dur);
    twv_format_time(t->start_us, when, sizeof when);
    size_t n_services = 0;
    for (size_t i = 0; i < t->n_spans; i++) {
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = t->spans[j].proc == t->spans[i].proc ||
                   strcmp(t->spans[j].service, t->spans[i].service) == 0;
        n_services += !seen;
        if (i > 4096)
            break; /* enough for a header; huge traces count the first 4096 */
    }
    GString *h = g_string_new(NULL);
    g_string_printf(h, "trace %s  %zu span%s, %zu service%s, %s, %s", id, t->n_spans,
                    t->n_spans == 1 ? "" : "s", n_services, n_services == 1 ? "" : "s", dur, when);
    if (t->n_errors)
        g_string_append_printf(h, ", %zu error%s", t->n_errors, t->n_errors == 1 ? "" : "s");
    if (t->n_orphans)
        g_string_append_printf(h, ", %zu orphan%s", t->n_orphans, t->n_orphans == 1 ? "" : "s");
    if (t->n_skew)
        g_string_append_printf(h, ", %zu skewed", t->n_skew);
    GString *g = x->line;
    sgr(x, g, SGR_BOLD);
    twv_put_text(g, h->str, x->term.width, x->term.unicode);
    sgr(x, g, SGR_RESET);
    emit(x, g);
    g_string_free(h, TRUE);
}

static void put_column_header(show_ctx *x, const twv_trace *t, const layout *L)
{
    GString *g = x->line;
    sgr(x, g, SGR_DIM);
    put_left(g, LABEL_HEADER, L->label);
    if (L->start) {
        g_string_append_c(g, ' ');
        put_right(g, "start", L->start);
    }
    g_string_append_c(g, ' ');
    put_right(g, "duration", L->duration);
    if (L->kind) {
        g_string_append(g, "  ");
        put_left(g, "kind", L->kind);
    }
    if (L->status) {
        g_string_append_c(g, ' ');
        put_right(g, L->status >= 6 ? "status" : "st", L->status);
    }
    if (L->marks) {
        g_string_append(g, "  ");
        pad(g, L->marks);
    }
    if (L->bar) {
        char total[32];
        twv_format_duration(t->end_us - t->start_us, total, sizeof total);
        g_string_append(g, "  ");
        int left = twv_put_text(g, "0", L->bar, false);
        int right = (int)strlen(total);
        if (left + 1 + right <= L->bar) {
            pad(g, L->bar - left - right);
            g_string_append(g, total);
        } else {
            pad(g, L->bar - left);
        }
        g_string_append_c(g, ' ');
    }
    sgr(x, g, SGR_RESET);
    /* no trailing spaces */
    while (g->len && g->str[g->len - 1] == ' ')
        g_string_truncate(g, g->len - 1);
    emit(x, g);
}

static void put_span_line(show_ctx *x, const twv_trace *t, const layout *L, const line *l)
{
    GString *g = x->line;
    int cols = l->depth
                   ? put_prefix(x, g, l->depth, l->is_last, false, false, L->label, text_cols(t, l))
                   : 0;
    int room = L->label - cols;
    if (l->span == TWV_NONE) {
        char text[64];
        snprintf(text, sizeof text, "? missing parent %016" PRIx64, l->missing);
        sgr(x, g, SGR_SKEW);
        int used = twv_put_text(g, text, room, x->term.unicode);
        sgr(x, g, SGR_RESET);
        pad(g, room - used);
        while (g->len && g->str[g->len - 1] == ' ')
            g_string_truncate(g, g->len - 1);
        emit(x, g);
        return;
    }
    const twv_span *s = &t->spans[l->span];
    sgr(x, g, s->is_error ? SGR_ERROR : service_color(s->service));
    int used = twv_put_text(g, s->service[0] ? s->service : "?", room, x->term.unicode);
    sgr(x, g, SGR_RESET);
    if (used + 2 < room) {
        g_string_append(g, "  ");
        used += 2 + twv_put_text(g, s->d->operation ? s->d->operation : "", room - used - 2,
                                 x->term.unicode);
    }
    pad(g, room - used);
    char start[32], dur[32], status[64], marks[32];
    if (s->has_start) {
        twv_format_duration(s->start_us - t->start_us, start + 1, sizeof start - 1);
        start[0] = '+';
    } else {
        snprintf(start, sizeof start, "?");
    }
    twv_format_duration(s->has_duration ? s->d->duration_us : -1, dur, sizeof dur);
    if (L->start) {
        g_string_append_c(g, ' ');
        put_right(g, start, L->start);
    }
    g_string_append_c(g, ' ');
    put_right(g, dur, L->duration);
    if (L->kind) {
        g_string_append(g, "  ");
        const char *kind = twv_kind_name((twv_kind)s->kind);
        put_left(g, kind[0] ? kind : "internal", L->kind);
    }
    if (L->status) {
        g_string_append_c(g, ' ');
        const char *st = status_of(s->d, status, sizeof status);
        GString *cut = g_string_new(NULL);
        twv_put_text(cut, st, L->status, false);
        put_right(g, cut->str, L->status);
        g_string_free(cut, TRUE);
    }
    if (L->marks) {
        marks_of(x, s, marks, sizeof marks);
        g_string_append(g, "  ");
        sgr(x, g, s->is_error ? SGR_ERROR : SGR_SKEW);
        g_string_append(g, marks);
        sgr(x, g, SGR_RESET);
        pad(g, L->marks - (int)strlen(marks));
    }
    if (L->bar)
        put_bar(x, g, t, L, l->span);
    while (g->len && g->str[g->len - 1] == ' ')
        g_string_truncate(g, g->len - 1);
    emit(x, g);
}

typedef struct cp_row {
    const char *service, *operation;
    int64_t us;
} cp_row;

static int by_us_desc(const void *a, const void *b)
{
    const cp_row *x = a, *y = b;
    if (x->us != y->us)
        return x->us > y->us ? -1 : 1;
    int c = strcmp(x->service, y->service);
    return c ? c : strcmp(x->operation, y->operation);
}

static guint cp_row_hash(gconstpointer p)
{
    const cp_row *r = p;
    return g_str_hash(r->service) * 31u + g_str_hash(r->operation);
}

static gboolean cp_row_equal(gconstpointer a, gconstpointer b)
{
    const cp_row *x = a, *y = b;
    return strcmp(x->service, y->service) == 0 && strcmp(x->operation, y->operation) == 0;
}

/* "time on the critical path by service/operation" below the waterfall. */
static void put_critical_summary(show_ctx *x, const twv_trace *t)
{
    int64_t total = 0;
    for (size_t i = 0; i < t->n_cp; i++)
        total += t->cp[i].end_us - t->cp[i].start_us;
    cp_row *rows = calloc(t->n_spans + 1, sizeof *rows);
    if (!rows)
        return;
    /* rows by (service, operation): row index + 1 */
    GHashTable *index = g_hash_table_new(cp_row_hash, cp_row_equal);
    size_t n = 0;
    for (size_t i = 0; i < t->n_spans; i++) {
        const twv_span *s = &t->spans[i];
        if (s->critical_us <= 0)
            continue;
        const char *op = s->d->operation ? s->d->operation : "";
        cp_row probe = {.service = s->service, .operation = op};
        size_t j = GPOINTER_TO_SIZE(g_hash_table_lookup(index, &probe));
        if (j == 0) {
            rows[n++] = probe;
            j = n;
            g_hash_table_insert(index, &rows[j - 1], GSIZE_TO_POINTER(j));
        }
        rows[j - 1].us += s->critical_us;
    }
    g_hash_table_destroy(index);
    qsort(rows, n, sizeof *rows, by_us_desc);
    char tot[32], span_len[32];
    twv_format_duration(total, tot, sizeof tot);
    twv_format_duration(t->end_us - t->start_us, span_len, sizeof span_len);
    GString *g = x->line, *text = g_string_new(NULL);
    g_string_printf(text, "critical path: %s of %s, %zu section%s; by service and operation:", tot,
                    span_len, t->n_cp, t->n_cp == 1 ? "" : "s");
    sgr(x, g, SGR_BOLD);
    twv_put_text(g, text->str, x->term.width, x->term.unicode);
    sgr(x, g, SGR_RESET);
    emit(x, g);
    for (size_t i = 0; i < n && i < CP_SUMMARY_ROWS; i++) {
        char d[32];
        twv_format_duration(rows[i].us, d, sizeof d);
        g_string_printf(text, "  %10s %5.1f%%  %s  %s", d,
                        total > 0 ? 100.0 * (double)rows[i].us / (double)total : 0.0,
                        rows[i].service, rows[i].operation);
        twv_put_text(g, text->str, x->term.width, x->term.unicode);
        emit(x, g);
    }
    if (n > CP_SUMMARY_ROWS) {
        g_string_printf(text, "  ... %zu more", n - CP_SUMMARY_ROWS);
        twv_put_text(g, text->str, x->term.width, x->term.unicode);
        emit(x, g);
    }
    g_string_free(text, TRUE);
    free(rows);
}

static bool draw_trace(show_ctx *x, const twv_trace *t)
{
    size_t n = 0;
    line *lines = make_lines(t, &n);
    if (!lines)
        return false;
    uint32_t max_depth = 0;
    for (size_t i = 0; i < n; i++)
        max_depth = lines[i].depth > max_depth ? lines[i].depth : max_depth;
    if (!reserve_cont(x, max_depth + 1)) {
        free(lines);
        return false;
    }
    if (x->shown > 1)
        emit(x, x->line); /* a blank line between traces */
    put_trace_header(x, t);
    emit(x, x->line);
    layout L = make_layout(x, t, lines, n);
    put_column_header(x, t, &L);
    for (size_t i = 0; i < n; i++) {
        const line *l = &lines[i];
        if (l->depth >= 1)
            x->cont[l->depth] = !l->is_last;
        put_span_line(x, t, &L, l);
        if (l->span != TWV_NONE && (x->o.tags || x->o.logs))
            details(x, t, l);
    }
    if (x->o.critical) {
        emit(x, x->line);
        put_critical_summary(x, t);
    }
    free(lines);
    return true;
}

/* ---- --list -------------------------------------------------------------------------------- */

static void list_line(show_ctx *x, const twv_trace *t)
{
    GString *g = x->line;
    if (!x->is_header_done) {
        x->is_header_done = true;
        sgr(x, g, SGR_DIM);
        GString *h = g_string_new(NULL);
        g_string_printf(h, "%-32s  %-24s  %10s  %6s  %6s  %s", "TRACE ID", "START (UTC)",
                        "DURATION", "SPANS", "ERRORS", "ROOT");
        twv_put_text(g, h->str, x->term.width, x->term.unicode);
        g_string_free(h, TRUE);
        sgr(x, g, SGR_RESET);
        emit(x, g);
    }
    char id[33], when[40], dur[32];
    twv_trace_id_text(t->trace_id_high, t->trace_id_low, id);
    twv_format_time(t->start_us, when, sizeof when);
    twv_format_duration(t->end_us - t->start_us, dur, sizeof dur);
    const twv_span *root = t->n_roots ? &t->spans[t->roots[0]] : NULL;
    GString *text = g_string_new(NULL);
    g_string_printf(text, "%-32s  %-24s  %10s  %6zu  %6zu  ", id, when, dur, t->n_spans,
                    t->n_errors);
    int used = twv_put_text(g, text->str, x->term.width, x->term.unicode);
    if (root) {
        g_string_printf(text, "%s%s: %s", root->missing_parent ? "(orphan) " : "",
                        root->service[0] ? root->service : "?",
                        root->d->operation ? root->d->operation : "");
        sgr(x, g, root->is_error ? SGR_ERROR : service_color(root->service));
        twv_put_text(g, text->str, x->term.width - used, x->term.unicode);
        sgr(x, g, SGR_RESET);
    }
    g_string_free(text, TRUE);
    emit(x, g);
}

/* ---- the command --------------------------------------------------------------------------- */

static int on_trace(void *arg, twv_trace *t)
{
    show_ctx *x = arg;
    /* The output is emptied only now: a run that shows nothing leaves it
     * as it was. */
    if (!x->out.is_started && !twv_output_start(&x->out, x->cli))
        return TWV_FAIL;
    if (x->o.html && !x->html && !(x->html = twv_html_new(x->out.f, "tracewire show"))) {
        tw__cli_error("show: out of memory");
        return TWV_FAIL;
    }
    x->shown++;
    if (x->html) {
        if (!twv_html_add(x->html, t)) {
            tw__cli_error("show: %s: write error: %s", x->o.html, strerror(errno));
            return TWV_FAIL;
        }
    } else if (x->o.list) {
        list_line(x, t);
    } else if (!draw_trace(x, t)) {
        tw__cli_error("show: out of memory");
        return TWV_FAIL;
    }
    if (x->write_failed)
        return TWV_FAIL;
    if (x->o.limit > 0 && x->shown >= (uint64_t)x->o.limit)
        return TWV_DONE;
    return TWV_CONTINUE;
}

int tw__show_cmd_main(int argc, char **argv)
{
    twv_cli c;
    twv_cli_init(&c, "show");
    show_ctx x = {.cli = &c};
    GOptionEntry entries[] = {
        {"list", 'l', 0, G_OPTION_ARG_NONE, &x.o.list,
         "One line per trace: id, start, duration, spans, errors, root service and operation",
         NULL},
        {"tags", 0, 0, G_OPTION_ARG_NONE, &x.o.tags,
         "Show each span's ids, tags, process and references", NULL},
        {"logs", 0, 0, G_OPTION_ARG_NONE, &x.o.logs, "Show each span's logs", NULL},
        {"critical-path", 'c', 0, G_OPTION_ARG_NONE, &x.o.critical,
         "Mark the critical path (Jaeger UI's algorithm) and sum it by service and operation",
         NULL},
        {"html", 0, 0, G_OPTION_ARG_FILENAME, &x.o.html,
         "Write one self-contained HTML page (no network) with every trace to FILE ('-': "
         "stdout)",
         "FILE"},
        {"limit", 'n', 0, G_OPTION_ARG_INT64, &x.o.limit, "Show at most N traces (0: all)", "N"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    GOptionContext *ctx = twv_cli_context(
        &c, "- draw traces from span logs (no backend needed)",
        "Reads span logs in any format tracewire convert reads (stdin when no FILE is named) and "
        "draws each trace as a waterfall: the tree of spans with start, duration, kind, status "
        "and a bar on the trace's time axis. A span starting before its parent is marked skew; "
        "orphans hang under a line naming their missing parent. Exit status: 0 when a trace was "
        "shown, 1 when none matched or an input was bad, 2 on a usage error. Rules: "
        "docs/views.md.",
        entries, true);
    int rc = TW_CLI_EXIT_USAGE;
    if (!twv_cli_parse(&c, ctx, &argc, &argv) || !twv_cli_finish(&c))
        goto out;
    if (x.o.limit < 0) {
        twv_usage_error(&c, "--limit must be >= 0");
        goto out;
    }
    if (x.o.html && (x.o.list || c.output)) {
        twv_usage_error(&c, "--html writes its own file: it takes no --list or --output");
        goto out;
    }
    if (!twv_check_output(&c, x.o.html ? x.o.html : c.output, x.o.html ? "--html" : "--output"))
        goto out;
    /* `show --html trace.json`, --html taken for a switch, replaced the
     * trace with a page (of standard input's spans, or of none). */
    const char *held = x.o.html ? twv_file_span_format(x.o.html) : NULL;
    if (held) {
        twv_usage_error(&c,
                        "--html names %s, a file of spans (%s): the page would replace it. "
                        "--html takes the page to write: tracewire show --html PAGE.html %s",
                        x.o.html, held, x.o.html);
        goto out;
    }
    rc = TW_CLI_EXIT_FAILURE;
    if (!twv_output_open(&x.out, &c, x.o.html ? x.o.html : c.output))
        goto out;
    twv_term_detect(&x.term, &c, x.out.f);
    x.line = g_string_new(NULL);
    twv_run_result res;
    bool ran = twv_run(&c, c.files, &c.filter, x.o.critical || x.o.html, false, on_trace, &x, &res);
    bool ok = ran && !res.is_failed;
    if (x.html && !twv_html_finish(x.html))
        ok = false;
    if (!twv_output_close(&x.out, &c) || x.write_failed)
        ok = false;
    if (ran && res.selected == 0 && !res.is_failed) {
        if (c.filter.trace_prefix[0] && res.traces == 0)
            tw__cli_error("show: no trace id starts with %s", c.filter.trace_prefix);
        else if (res.traces == 0)
            tw__cli_error("show: no spans in the input");
        else
            tw__cli_error("show: no trace matched (%" PRIu64 " trace%s read)", res.traces,
                          res.traces == 1 ? "" : "s");
        ok = false;
    }
    rc = ok ? TW_CLI_EXIT_OK : TW_CLI_EXIT_FAILURE;
    g_string_free(x.line, TRUE);
    free(x.cont);
out:
    g_option_context_free(ctx);
    g_free(x.o.html);
    twv_cli_clear(&c);
    return rc;
}
