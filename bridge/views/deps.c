/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/deps.c: `tracewire deps`, the service dependency graph of any
 * number of traces, as Zipkin's dependency linker computes it (links.c;
 * docs/views.md, "tracewire deps"). Output: a text table (default), Zipkin's
 * /api/v2/dependencies JSON, Jaeger's /api/dependencies JSON, Graphviz DOT,
 * or SVG drawn by Graphviz's `dot` when it is installed.
 *
 * Streams: each trace is linked as it leaves the assembler and dropped; only
 * the links (one row per parent/child pair) stay. Single-threaded.
 */
#include "views/view_cmd.h"

#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wire/core/json_common.h" /* tw__json_text: UTF-8-safe JSON strings */

#define DEFAULT_MAX_LINKS 100000

typedef enum deps_format { FMT_TEXT, FMT_ZIPKIN, FMT_JAEGER, FMT_DOT, FMT_SVG } deps_format;

typedef struct deps_ctx {
    twv_links links;
} deps_ctx;

static int on_trace(void *arg, twv_trace *t)
{
    deps_ctx *x = arg;
    if (!twv_links_add_trace(&x->links, t)) {
        tw__cli_error("deps: out of memory");
        return TWV_FAIL;
    }
    return TWV_CONTINUE;
}

/* ---- writers ------------------------------------------------------------------------------- */

/* A name from the input (made safe, cut to @width columns), padded. */
static void put_name(GString *g, const char *s, int width)
{
    int used = twv_put_text(g, s, width, false);
    for (; used < width; used++)
        g_string_append_c(g, ' ');
}

static bool write_text(FILE *out, const twv_links *l, const twv_run_result *res)
{
    int pw = 6, cw = 5;
    uint64_t calls = 0, errors = 0;
    for (size_t i = 0; i < l->n_rows; i++) {
        int a = twv_text_cols(l->rows[i].parent), b = twv_text_cols(l->rows[i].child);
        pw = a > pw ? (a > 40 ? 40 : a) : pw;
        cw = b > cw ? (b > 40 ? 40 : b) : cw;
        calls += l->rows[i].calls;
        errors += l->rows[i].errors;
    }
    GString *g = g_string_new(NULL);
    put_name(g, "PARENT", pw);
    g_string_append(g, "  ");
    put_name(g, "CHILD", cw);
    g_string_append_printf(g, "  %10s  %10s\n", "CALLS", "ERRORS");
    for (size_t i = 0; i < l->n_rows; i++) {
        const twv_link *r = &l->rows[i];
        put_name(g, r->parent, pw);
        g_string_append(g, "  ");
        put_name(g, r->child, cw);
        g_string_append_printf(g, "  %10" PRIu64 "  %10" PRIu64 "\n", r->calls, r->errors);
    }
    g_string_append_printf(
        g, "%zu link%s, %" PRIu64 " call%s, %" PRIu64 " error%s, from %" PRIu64 " trace%s\n",
        l->n_rows, l->n_rows == 1 ? "" : "s", calls, calls == 1 ? "" : "s", errors,
        errors == 1 ? "" : "s", res->selected, res->selected == 1 ? "" : "s");
    bool ok = fwrite(g->str, 1, g->len, out) == g->len;
    g_string_free(g, TRUE);
    return ok;
}

/* Zipkin's GET /api/v2/dependencies body: parent, child, callCount, and
 * errorCount only when it is not 0 (as Zipkin's encoder writes it). Jaeger's
 * GET /api/dependencies body: {"data": [{parent, child, callCount}], ...}. */
static bool write_json(FILE *out, const twv_links *l, deps_format f)
{
    json_t *list = json_array();
    for (size_t i = 0; i < l->n_rows; i++) {
        const twv_link *r = &l->rows[i];
        json_t *o = json_object();
        json_object_set_new(o, "parent", tw__json_text(r->parent, strlen(r->parent)));
        json_object_set_new(o, "child", tw__json_text(r->child, strlen(r->child)));
        json_object_set_new(o, "callCount", json_integer((json_int_t)r->calls));
        if (f == FMT_ZIPKIN && r->errors)
            json_object_set_new(o, "errorCount", json_integer((json_int_t)r->errors));
        json_array_append_new(list, o);
    }
    json_t *doc = list;
    if (f == FMT_JAEGER) {
        doc = json_object();
        json_object_set_new(doc, "data", list);
        json_object_set_new(doc, "total", json_integer(0));
        json_object_set_new(doc, "limit", json_integer(0));
        json_object_set_new(doc, "offset", json_integer(0));
        json_object_set_new(doc, "errors", json_null());
    }
    int rc = json_dumpf(doc, out, JSON_COMPACT);
    json_decref(doc);
    return rc == 0 && fputc('\n', out) != EOF;
}

/* Appends @s for a DOT quoted string: valid UTF-8 (an invalid byte becomes
 * U+FFFD, as in the JSON outputs), '"' and '\' escaped (\" and \\), and every
 * character that XML 1.0 does not allow or that a drawing would not show (C0
 * and C1 controls, DEL, U+FFFE, U+FFFF) written as @esc and its code in four
 * hex digits. In a node id @esc is \u, one backslash, which no other
 * character of a name becomes: names that differ only by such a character
 * stay two nodes (U+0001 is "\u0001", a name holding the text \u0001 is
 * "\\u0001"). In a label @esc is \\u, which Graphviz draws as \u. Returns
 * whether a character was escaped that way. */
static bool dot_text(GString *g, const char *s, const char *esc)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    bool escaped = false;
    for (size_t i = 0; i < n;) {
        size_t len = tw__utf8_sequence(p + i, n - i);
        if (len == 0) {
            g_string_append(g, TW__UTF8_REPLACEMENT);
            i++;
            continue;
        }
        uint32_t c = p[i];
        if (len == 2)
            c = (uint32_t)(p[i] & 0x1f) << 6 | (p[i + 1] & 0x3f);
        else if (len == 3)
            c = (uint32_t)(p[i] & 0x0f) << 12 | (uint32_t)(p[i + 1] & 0x3f) << 6 |
                (p[i + 2] & 0x3f);
        if (c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0xfffe || c == 0xffff) {
            g_string_append_printf(g, "%s%04" PRIx32, esc, c);
            escaped = true;
        } else {
            if (c == '"' || c == '\\')
                g_string_append_c(g, '\\');
            g_string_append_len(g, (const char *)p + i, (gssize)len);
        }
        i += len;
    }
    return escaped;
}

static void dot_string(GString *g, const char *s)
{
    g_string_append_c(g, '"');
    dot_text(g, s, "\\u");
    g_string_append_c(g, '"');
}

static char *make_dot(const twv_links *l)
{
    GString *g = g_string_new("digraph dependencies {\n"
                              "  graph [rankdir=LR, fontname=\"Helvetica\", label=\"service "
                              "dependencies (tracewire deps)\", labelloc=t];\n"
                              "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef2ff\", "
                              "color=\"#6366f1\", fontname=\"Helvetica\"];\n"
                              "  edge [fontname=\"Helvetica\", fontsize=10, color=\"#4b5563\"];\n");
    /* every service once, so that isolated names still show */
    GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (size_t i = 0; i < l->n_rows; i++) {
        const char *names[2] = {l->rows[i].parent, l->rows[i].child};
        for (int k = 0; k < 2; k++) {
            if (g_hash_table_contains(seen, names[k]))
                continue;
            g_hash_table_add(seen, (gpointer)names[k]);
            g_string_append(g, "  ");
            dot_string(g, names[k]);
            /* a name with an escaped character is drawn with the escape visible */
            size_t at = g->len;
            g_string_append(g, " [label=\"");
            if (dot_text(g, names[k], "\\\\u"))
                g_string_append(g, "\"]");
            else
                g_string_truncate(g, at);
            g_string_append(g, ";\n");
        }
    }
    g_hash_table_destroy(seen);
    for (size_t i = 0; i < l->n_rows; i++) {
        const twv_link *r = &l->rows[i];
        g_string_append(g, "  ");
        dot_string(g, r->parent);
        g_string_append(g, " -> ");
        dot_string(g, r->child);
        g_string_append_printf(g, " [label=\"%" PRIu64 " call%s", r->calls,
                               r->calls == 1 ? "" : "s");
        if (r->errors)
            g_string_append_printf(g, "\\n%" PRIu64 " error%s", r->errors,
                                   r->errors == 1 ? "" : "s");
        g_string_append_printf(g, "\", penwidth=%.2f%s];\n", 1.0 + log10((double)r->calls),
                               r->errors ? ", color=\"#dc2626\", fontcolor=\"#dc2626\"" : "");
    }
    g_string_append(g, "}\n");
    return g_string_free(g, FALSE);
}

/* Runs Graphviz's dot on @dot and writes the SVG to @out. */
static bool write_svg(FILE *out, const char *dot)
{
    char *path = NULL;
    GError *gerr = NULL;
    int fd = g_file_open_tmp("tracewire-deps-XXXXXX.dot", &path, &gerr);
    if (fd < 0) {
        tw__cli_error("deps: --svg: cannot make a temporary file: %s", gerr->message);
        g_error_free(gerr);
        return false;
    }
    size_t len = strlen(dot);
    bool ok = write(fd, dot, len) == (ssize_t)len;
    close(fd);
    if (!ok) {
        tw__cli_error("deps: --svg: cannot write %s: %s", path, strerror(errno));
        unlink(path);
        g_free(path);
        return false;
    }
    char *argv[] = {"dot", "-Tsvg", path, NULL};
    char *svg = NULL, *err_text = NULL;
    gint status = 0;
    ok = g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, &svg, &err_text, &status,
                      &gerr);
    unlink(path);
    g_free(path);
    if (!ok) {
        if (g_error_matches(gerr, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT))
            tw__cli_error("deps: --svg needs Graphviz's dot, which is not installed (Debian: "
                          "apt-get install graphviz); --dot writes the graph for it");
        else
            tw__cli_error("deps: --svg: cannot run dot: %s", gerr->message);
        g_error_free(gerr);
        return false;
    }
    if (!g_spawn_check_wait_status(status, &gerr)) {
        tw__cli_error("deps: --svg: dot failed (%s): %s", gerr->message,
                      err_text && *err_text ? err_text : "no message");
        g_error_free(gerr);
        g_free(svg);
        g_free(err_text);
        return false;
    }
    ok = fputs(svg ? svg : "", out) != EOF;
    g_free(svg);
    g_free(err_text);
    return ok;
}

int tw__deps_cmd_main(int argc, char **argv)
{
    twv_cli c;
    twv_cli_init(&c, "deps");
    char *format = NULL;
    gboolean as_json = FALSE, as_dot = FALSE, as_svg = FALSE;
    gint64 max_links = DEFAULT_MAX_LINKS;
    GOptionEntry entries[] = {
        {"format", 'F', 0, G_OPTION_ARG_STRING, &format,
         "text (default), zipkin-json (GET /api/v2/dependencies), jaeger-json (GET "
         "/api/dependencies), dot, svg",
         "FORMAT"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &as_json, "The same as --format zipkin-json", NULL},
        {"dot", 0, 0, G_OPTION_ARG_NONE, &as_dot, "The same as --format dot (Graphviz)", NULL},
        {"svg", 0, 0, G_OPTION_ARG_NONE, &as_svg,
         "The same as --format svg (runs Graphviz's dot, which must be installed)", NULL},
        {"max-links", 0, 0, G_OPTION_ARG_INT64, &max_links,
         "Distinct parent/child pairs kept; more are counted as dropped (default 100000)", "N"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    GOptionContext *ctx = twv_cli_context(
        &c, "- service dependency links, as Zipkin's dependency linker computes them",
        "Reads span logs (stdin when no FILE is named) and counts calls and errors between "
        "services with Zipkin's rules: client and server spans, messaging producer -> broker -> "
        "consumer, uninstrumented peers named by a client's remote service, local spans "
        "skipped; service names in lower case. Exit status: 0 success, 1 when an input was bad, "
        "2 on a usage error. Rules: docs/views.md.",
        entries, true);
    int rc = TW_CLI_EXIT_USAGE;
    twv_output output = {0};
    deps_ctx x;
    twv_links_init(&x.links, 0);
    if (!twv_cli_parse(&c, ctx, &argc, &argv) || !twv_cli_finish(&c))
        goto out;
    deps_format f = FMT_TEXT;
    int n_chosen = (format != NULL) + as_json + as_dot + as_svg;
    if (n_chosen > 1) {
        twv_usage_error(&c, "choose one of --format, --json, --dot, --svg");
        goto out;
    }
    if (as_json || (format && strcmp(format, "zipkin-json") == 0))
        f = FMT_ZIPKIN;
    else if (format && strcmp(format, "jaeger-json") == 0)
        f = FMT_JAEGER;
    else if (as_dot || (format && strcmp(format, "dot") == 0))
        f = FMT_DOT;
    else if (as_svg || (format && strcmp(format, "svg") == 0))
        f = FMT_SVG;
    else if (format && strcmp(format, "text") != 0) {
        twv_usage_error(&c, "--format takes text, zipkin-json, jaeger-json, dot or svg, not '%s'",
                        format);
        goto out;
    }
    if (max_links < 1) {
        twv_usage_error(&c, "--max-links must be >= 1");
        goto out;
    }
    if (!twv_check_output(&c, c.output, "--output"))
        goto out;
    twv_links_free(&x.links);
    twv_links_init(&x.links, (size_t)max_links);
    rc = TW_CLI_EXIT_FAILURE;
    if (!twv_output_open(&output, &c, c.output))
        goto out;
    twv_run_result res;
    if (!twv_run(&c, c.files, &c.filter, false, true, on_trace, &x, &res))
        goto out;
    if (res.is_unread) {
        tw__cli_error("%s: no input could be read: nothing written", c.command);
        goto out;
    }
    twv_links_sort(&x.links);
    if (x.links.dropped)
        tw__cli_warn("deps: %" PRIu64 " call(s) not counted: more than %" PRId64
                     " distinct links (raise --max-links)",
                     x.links.dropped, max_links);
    if (!twv_output_start(&output, &c))
        goto out;
    FILE *out = output.f;
    bool ok = true;
    if (f == FMT_TEXT) {
        ok = write_text(out, &x.links, &res);
    } else if (f == FMT_ZIPKIN || f == FMT_JAEGER) {
        ok = write_json(out, &x.links, f);
    } else {
        char *dot = make_dot(&x.links);
        ok = f == FMT_DOT ? fputs(dot, out) != EOF : write_svg(out, dot);
        g_free(dot);
    }
    ok = twv_output_close(&output, &c) && ok;
    rc = ok && !res.is_failed ? TW_CLI_EXIT_OK : TW_CLI_EXIT_FAILURE;
out:
    twv_output_close(&output, &c); /* when the run ended early: nothing written */
    g_option_context_free(ctx);
    twv_links_free(&x.links);
    g_free(format);
    twv_cli_clear(&c);
    return rc;
}
