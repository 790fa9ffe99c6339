/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/html.c: the page `tracewire show --html FILE` writes: one
 * self-contained HTML file (inline CSS and JavaScript from html/, no network
 * access of any kind) with the waterfall of every selected trace, collapsible
 * subtrees, a search box and a detail pane (docs/views.md, "The HTML page").
 *
 * Every span is a row of the document, written here in display order (depth
 * first, children by start, orphans under a placeholder row), with its bar
 * and critical-path sections placed in percent of the trace's time: the page
 * shows everything without running a script, and collapsing only hides rows.
 * The details (tags, logs, references, process) are one JSON block per trace,
 * made with Jansson; every '<', '>' and '&' in it is written as a \u escape so
 * that no text from the input can end the block or open markup. Text in the
 * markup is HTML-escaped. One trace is held at a time; the page streams out.
 * Single-threaded.
 */
#include "views/view_cmd.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "tracewire/tracewire.h"
#include "wire/core/json_common.h" /* tw__json_text: UTF-8-safe JSON strings */

extern const char *const twv_viewer_css[];
extern const char *const twv_viewer_js[];

/* An entry of the table of contents: one section of the page. */
typedef struct toc_entry {
    char trace_id[33];
    size_t part;   /* 1 for a trace's first section, 2 for its second, ... */
    char *columns; /* the row's cells after the link, HTML */
} toc_entry;

struct twv_html {
    FILE *out;
    GString *buf;
    size_t n_traces;   /* sections written */
    GPtrArray *toc;    /* toc_entry, one per section; the table is written at the end */
    GHashTable *parts; /* trace id text -> sections of that trace so far */
    bool is_failed;
};

/* ---- escaping ------------------------------------------------------------------------------ */

/* Appends @s HTML-escaped, with invalid UTF-8 bytes and control characters
 * replaced (U+FFFD and '?'). */
static void put_html(GString *g, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    for (size_t i = 0; i < n;) {
        size_t len = tw__utf8_sequence(p + i, n - i);
        if (len == 0) {
            g_string_append(g, "\xef\xbf\xbd");
            i++;
            continue;
        }
        if (len == 1) {
            unsigned char c = p[i];
            switch (c) {
            case '&':
                g_string_append(g, "&amp;");
                break;
            case '<':
                g_string_append(g, "&lt;");
                break;
            case '>':
                g_string_append(g, "&gt;");
                break;
            case '"':
                g_string_append(g, "&quot;");
                break;
            case '\'':
                g_string_append(g, "&#39;");
                break;
            default:
                g_string_append_c(g, c < 0x20 || c == 0x7f ? '?' : (char)c);
            }
        } else {
            g_string_append_len(g, (const char *)p + i, (gssize)len);
        }
        i += len;
    }
}

static bool flush(twv_html *h)
{
    if (h->buf->len && fwrite(h->buf->str, 1, h->buf->len, h->out) != h->buf->len)
        h->is_failed = true;
    g_string_truncate(h->buf, 0);
    return !h->is_failed;
}

/* The id of the section holding part @part of trace @id: "t-ID" for the
 * first, "t-ID-pN" after (a trace the window split reaches the page in
 * parts; a trace id is hex, so no suffixed id is another trace's). */
static void section_id(char *buf, size_t size, const char *id, size_t part)
{
    if (part <= 1)
        snprintf(buf, size, "t-%s", id);
    else
        snprintf(buf, size, "t-%s-p%zu", id, part);
}

static void toc_entry_free(gpointer p)
{
    toc_entry *e = p;
    g_free(e->columns);
    g_free(e);
}

/* ---- the JSON of a trace ------------------------------------------------------------------- */

static json_t *text(const char *s)
{
    return tw__json_text(s ? s : "", s ? strlen(s) : 0);
}

static json_t *tag_pair(const tw__tag *t)
{
    char buf[128];
    json_t *pair = json_array();
    json_array_append_new(pair, tw__json_text(t->key, t->key_len));
    const char *v = twv_tag_text(t, buf, sizeof buf);
    json_array_append_new(pair, tw__json_text(v, t->type == TW_VALUE_STRING ? t->len : strlen(v)));
    return pair;
}

static json_t *tag_list(const tw__tag *tags, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(list, tag_pair(&tags[i]));
    return list;
}

static json_t *hex_id(uint64_t id)
{
    char hex[17];
    snprintf(hex, sizeof hex, "%016" PRIx64, id);
    return json_string(hex);
}

static json_t *span_json(const twv_trace *t, const twv_span *s)
{
    const tw__span_data *d = s->d;
    json_t *o = json_object();
    json_object_set_new(o, "span_id", hex_id(d->span_id));
    bool follows;
    uint64_t parent = twv_shown_parent(t, s, &follows); /* as show --tags says it */
    json_object_set_new(o, "parent_id", parent ? hex_id(parent) : json_null());
    json_object_set_new(o, "follows_from", json_boolean(follows));
    json_object_set_new(o, "service", text(s->service));
    json_object_set_new(o, "operation", text(d->operation));
    json_object_set_new(o, "kind", json_string(twv_kind_name((twv_kind)s->kind)));
    json_object_set_new(o, "start_us", json_integer(s->start_us - t->start_us));
    json_object_set_new(o, "duration_us",
                        s->has_duration ? json_integer(d->duration_us) : json_null());
    json_object_set_new(o, "self_us", s->self_us >= 0 ? json_integer(s->self_us) : json_null());
    json_object_set_new(o, "critical_us", json_integer(s->critical_us));
    json_object_set_new(o, "error", json_boolean(s->is_error));
    json_object_set_new(o, "skew", json_boolean(s->is_skew));
    json_object_set_new(o, "missing_parent",
                        s->missing_parent ? hex_id(s->missing_parent) : json_null());
    json_object_set_new(o, "tags", tag_list(d->tags, d->n_tags));
    json_t *logs = json_array();
    for (size_t i = 0; i < d->n_logs; i++) {
        json_t *l = json_object();
        json_object_set_new(l, "offset_us", json_integer(d->logs[i].timestamp_us - t->start_us));
        json_object_set_new(l, "fields", tag_list(d->logs[i].fields, d->logs[i].n_fields));
        json_array_append_new(logs, l);
    }
    json_object_set_new(o, "logs", logs);
    json_t *refs = json_array();
    for (size_t i = 0; i < d->n_refs; i++) {
        const tw__ref *r = &d->refs[i];
        char id[33];
        twv_trace_id_text(r->trace_id_high, r->trace_id_low, id);
        json_t *ref = json_object();
        json_object_set_new(
            ref, "type",
            json_string(r->type == TW__REF_FOLLOWS_FROM ? "follows_from" : "child_of"));
        json_object_set_new(ref, "trace_id", json_string(id));
        json_object_set_new(ref, "span_id", hex_id(r->span_id));
        json_array_append_new(refs, ref);
    }
    json_object_set_new(o, "refs", refs);
    json_t *proc = json_object();
    json_object_set_new(proc, "service", text(s->service));
    json_object_set_new(proc, "tags",
                        s->proc ? tag_list(s->proc->tags, s->proc->n_tags) : json_array());
    json_object_set_new(o, "process", proc);
    return o;
}

/* ---- rows ---------------------------------------------------------------------------------- */

static unsigned hue_of(const char *service)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)service; *p; p++)
        h = (h ^ *p) * 16777619u;
    return (h >> 7) % 360;
}

static double pct(const twv_trace *t, int64_t us)
{
    double total = (double)(t->end_us - t->start_us);
    if (total <= 0)
        return 0;
    double v = 100.0 * (double)(us - t->start_us) / total;
    return v < 0 ? 0 : v > 100 ? 100 : v;
}

static void put_row(twv_html *h, const twv_trace *t, uint32_t k, uint32_t depth, int key,
                    const char *id)
{
    GString *g = h->buf;
    const twv_span *s = &t->spans[k];
    char dur[32];
    twv_format_duration(s->has_duration ? s->d->duration_us : -1, dur, sizeof dur);
    g_string_append_printf(g,
                           "<div class=\"tw-row%s%s\" id=\"s-%s-%016" PRIx64
                           "\" data-k=\"%d\" data-depth=\"%" PRIu32
                           "\" style=\"--c:hsl(%u,55%%,45%%)\">",
                           s->is_error ? " tw-error" : "", s->critical_us ? " tw-crit" : "", id,
                           s->d->span_id, key, depth, hue_of(s->service));
    g_string_append_printf(g, "<div class=\"tw-name\" style=\"padding-left:%" PRIu32 "px\">",
                           depth * 14);
    g_string_append_printf(g, "<button class=\"tw-tog\" aria-expanded=\"true\"%s>%s</button>",
                           s->n_children ? "" : " disabled", s->n_children ? "\xe2\x96\xbe" : "");
    g_string_append(g, "<span class=\"tw-svc\">");
    put_html(g, s->service[0] ? s->service : "?");
    g_string_append(g, "</span><span class=\"tw-op\">");
    put_html(g, s->d->operation);
    g_string_append(g, "</span>");
    if (s->is_error)
        g_string_append(g, "<span class=\"tw-mark err\">error</span>");
    if (s->is_skew)
        g_string_append(g, "<span class=\"tw-mark skew\">skew</span>");
    if (s->is_cycle)
        g_string_append(g, "<span class=\"tw-mark skew\">cycle</span>");
    g_string_append(g, "</div><div class=\"tw-timeline\">");
    if (s->has_start) {
        double left = pct(t, s->start_us), right = pct(t, s->end_us);
        double width = right - left;
        g_string_append_printf(g, "<div class=\"tw-bar\" style=\"left:%.3f%%;width:%.3f%%\">", left,
                               width);
        for (uint32_t i = t->cp_first[k]; width > 0 && i < t->cp_first[k + 1]; i++) {
            const twv_cp_section *cp = &t->cp[t->cp_of[i]];
            double a = (pct(t, cp->start_us) - left) / width * 100.0;
            double b = (pct(t, cp->end_us) - left) / width * 100.0;
            g_string_append_printf(g, "<i style=\"left:%.3f%%;width:%.3f%%\"></i>", a, b - a);
        }
        g_string_append(g, "</div>");
        /* the duration after the bar, else before it, else inside it */
        if (right <= 82)
            g_string_append_printf(g,
                                   "<span class=\"tw-dur\" style=\"left:calc(%.3f%% + "
                                   "4px)\">%s</span>",
                                   right, dur);
        else if (left >= 18)
            g_string_append_printf(g,
                                   "<span class=\"tw-dur\" style=\"right:calc(%.3f%% + "
                                   "4px)\">%s</span>",
                                   100.0 - left, dur);
        else
            g_string_append_printf(g,
                                   "<span class=\"tw-dur tw-dur-in\" style=\"left:calc(%.3f%% + "
                                   "4px)\">%s</span>",
                                   left, dur);
    } else {
        g_string_append_printf(g, "<span class=\"tw-dur\" style=\"left:0\">%s, no timestamp</span>",
                               dur);
    }
    g_string_append(g, "</div></div>\n");
}

static void put_missing_row(twv_html *h, uint64_t missing)
{
    g_string_append_printf(h->buf,
                           "<div class=\"tw-row tw-missing\" data-depth=\"0\"><div "
                           "class=\"tw-name\"><button class=\"tw-tog\" "
                           "aria-expanded=\"true\">\xe2\x96\xbe</button>missing parent %016" PRIx64
                           "</div><div class=\"tw-timeline\"></div></div>\n",
                           missing);
}

/* Depth first from root @r with @base added to the depths. */
static void put_subtree(twv_html *h, const twv_trace *t, uint32_t r, uint32_t base,
                        const int *key_of, const char *id, uint32_t *stack)
{
    size_t top = 0;
    stack[top++] = r;
    while (top > 0) {
        uint32_t k = stack[--top];
        const twv_span *s = &t->spans[k];
        put_row(h, t, k, s->depth + base, key_of[k], id);
        for (uint32_t i = s->n_children; i-- > 0;)
            stack[top++] = t->children[s->first_child + i];
    }
}

bool twv_html_add(twv_html *h, const twv_trace *t)
{
    if (h->is_failed)
        return false;
    GString *g = h->buf;
    char id[33], dur[32], when[40];
    twv_trace_id_text(t->trace_id_high, t->trace_id_low, id);
    twv_format_duration(t->end_us - t->start_us, dur, sizeof dur);
    twv_format_time(t->start_us, when, sizeof when);
    const twv_span *root = t->n_roots ? &t->spans[t->roots[0]] : NULL;

    /* which part of its trace this section is: every section gets an id of its own */
    size_t part = GPOINTER_TO_SIZE(g_hash_table_lookup(h->parts, id)) + 1;
    g_hash_table_replace(h->parts, g_strdup(id), GSIZE_TO_POINTER(part));
    char sec[64];
    section_id(sec, sizeof sec, id, part);

    /* the entry in the table of contents, written at the end (when the parts are known) */
    toc_entry *e = g_new0(toc_entry, 1);
    memcpy(e->trace_id, id, sizeof e->trace_id);
    e->part = part;
    GString *cols = g_string_new(NULL);
    g_string_append_printf(cols, "<td>%s</td><td>%s</td><td>%zu spans</td><td>%zu errors</td><td>",
                           when, dur, t->n_spans, t->n_errors);
    if (root) {
        put_html(cols, root->service);
        g_string_append(cols, ": ");
        put_html(cols, root->d->operation);
    }
    g_string_append(cols, "</td>");
    e->columns = g_string_free(cols, FALSE);
    g_ptr_array_add(h->toc, e);

    g_string_append_printf(g,
                           "<section class=\"tw-trace\" id=\"%s\" data-trace=\"%zu\" "
                           "data-part=\"%zu\"><h2>trace <code>%s</code><small>",
                           sec, h->n_traces, part, id);
    if (part > 1)
        g_string_append_printf(g, "part %zu \xc2\xb7 ", part);
    g_string_append_printf(g, "%zu spans \xc2\xb7 %s \xc2\xb7 %s", t->n_spans, dur, when);
    if (t->n_errors)
        g_string_append_printf(g, " \xc2\xb7 %zu errors", t->n_errors);
    if (t->n_orphans)
        g_string_append_printf(g, " \xc2\xb7 %zu orphans", t->n_orphans);
    if (t->n_skew)
        g_string_append_printf(g, " \xc2\xb7 %zu skewed", t->n_skew);
    g_string_append(g, "</small></h2>\n<div class=\"tw-axis\"><div></div><div class=\"tw-ticks\">");
    for (int q = 0; q <= 4; q++) {
        char tick[32];
        twv_format_duration((t->end_us - t->start_us) * q / 4, tick, sizeof tick);
        g_string_append_printf(g, "<span style=\"left:%d%%\">%s</span>", q * 25, tick);
    }
    g_string_append(g, "</div></div>\n<div class=\"tw-rows\">\n");

    /* rows, in display order; key_of maps a span to its index in the JSON */
    int *key_of = malloc((t->n_spans + 1) * sizeof *key_of);
    uint32_t *stack = malloc((t->n_spans + 1) * sizeof *stack);
    uint32_t *next = malloc((t->n_roots + 1) * sizeof *next);
    bool *first = malloc((t->n_roots + 1) * sizeof *first);
    json_t *spans = json_array();
    if (!key_of || !stack || !next || !first || !spans) {
        free(key_of);
        free(stack);
        free(next);
        free(first);
        json_decref(spans);
        h->is_failed = true;
        return false;
    }
    for (size_t i = 0; i < t->n_spans; i++) {
        key_of[t->order[i]] = (int)i;
        json_array_append_new(spans, span_json(t, &t->spans[t->order[i]]));
    }
    twv_root_groups(t, next, first);
    for (size_t r = 0; r < t->n_roots; r++) {
        if (!first[r])
            continue; /* written with the first orphan of its group */
        uint64_t missing = t->spans[t->roots[r]].missing_parent;
        if (!missing) {
            put_subtree(h, t, t->roots[r], 0, key_of, id, stack);
            continue;
        }
        put_missing_row(h, missing);
        for (uint32_t q = (uint32_t)r; q != TWV_NONE; q = next[q])
            put_subtree(h, t, t->roots[q], 1, key_of, id, stack);
        if (g->len > 1 << 20)
            flush(h);
    }
    g_string_append(g, "</div></section>\n");

    /* the details, as JSON with no '<', '>' or '&' left */
    json_t *doc = json_object();
    json_object_set_new(doc, "trace_id", json_string(id));
    json_object_set_new(doc, "spans", spans);
    char *dumped = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    free(key_of);
    free(stack);
    free(next);
    free(first);
    if (!dumped) {
        h->is_failed = true;
        return false;
    }
    g_string_append_printf(g, "<script type=\"application/json\" id=\"tw-data-%zu\">", h->n_traces);
    for (const char *p = dumped; *p; p++) {
        if (*p == '<')
            g_string_append(g, "\\u003c");
        else if (*p == '>')
            g_string_append(g, "\\u003e");
        else if (*p == '&')
            g_string_append(g, "\\u0026");
        else
            g_string_append_c(g, *p);
    }
    free(dumped);
    g_string_append(g, "</script>\n");
    h->n_traces++;
    return flush(h);
}

twv_html *twv_html_new(FILE *out, const char *title)
{
    twv_html *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    h->out = out;
    h->buf = g_string_new(NULL);
    h->toc = g_ptr_array_new_with_free_func(toc_entry_free);
    h->parts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
    GString *g = h->buf;
    g_string_append(g,
                    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    g_string_append_printf(g, "<meta name=\"generator\" content=\"tracewire %s\">\n<title>",
                           tw_version());
    put_html(g, title);
    g_string_append(g, "</title>\n<style>\n");
    for (size_t i = 0; twv_viewer_css[i]; i++)
        g_string_append(g, twv_viewer_css[i]);
    g_string_append(g, "</style>\n</head>\n<body>\n<header class=\"tw-top\"><h1>");
    put_html(g, title);
    g_string_append(g, "</h1><input id=\"tw-search\" type=\"search\" placeholder=\"Search spans: "
                       "service, operation, id, tag, log (/)\" autocomplete=\"off\"><span "
                       "id=\"tw-count\"></span><label class=\"tw-opt\"><input type=\"checkbox\" "
                       "id=\"tw-cp\" checked> critical path</label></header>\n<main "
                       "class=\"tw-main\"><div id=\"tw-traces\">\n");
    flush(h);
    return h;
}

bool twv_html_finish(twv_html *h)
{
    GString *g = h->buf;
    g_string_append(g, "</div>\n<aside id=\"tw-detail\"><p class=\"tw-empty\">Select a span to "
                       "see its tags, logs, references and process.</p></aside>\n</main>\n");
    if (h->n_traces > 1) {
        /* one row per section, each linking to its own; a trace in parts says which */
        size_t n_ids = g_hash_table_size(h->parts);
        g_string_append_printf(g, "<footer class=\"tw-foot\"><nav class=\"tw-toc\"><b>%zu trace%s",
                               n_ids, n_ids == 1 ? "" : "s");
        if (n_ids != h->n_traces)
            g_string_append_printf(g, " in %zu sections", h->n_traces);
        g_string_append(g, "</b><table>\n");
        for (guint i = 0; i < h->toc->len; i++) {
            const toc_entry *e = g_ptr_array_index(h->toc, i);
            size_t parts = GPOINTER_TO_SIZE(g_hash_table_lookup(h->parts, e->trace_id));
            char sec[64];
            section_id(sec, sizeof sec, e->trace_id, e->part);
            g_string_append_printf(g, "<tr><td><a href=\"#%s\">%s", sec, e->trace_id);
            if (parts > 1)
                g_string_append_printf(g, " (part %zu of %zu)", e->part, parts);
            g_string_append_printf(g, "</a></td>%s</tr>\n", e->columns);
        }
        g_string_append(g, "</table></nav></footer>\n");
    }
    g_string_append(g, "<footer class=\"tw-foot\">Written by tracewire show. Rules: "
                       "docs/views.md.</footer>\n<script>\n");
    for (size_t i = 0; twv_viewer_js[i]; i++)
        g_string_append(g, twv_viewer_js[i]);
    g_string_append(g, "</script>\n</body>\n</html>\n");
    bool ok = flush(h);
    g_string_free(h->buf, TRUE);
    g_ptr_array_free(h->toc, TRUE);
    g_hash_table_destroy(h->parts);
    free(h);
    return ok;
}
