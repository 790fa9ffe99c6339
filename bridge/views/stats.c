/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/stats.c: `tracewire stats`, latency and errors by service and
 * operation over any number of traces (docs/views.md, "tracewire stats"):
 * count, errors and error rate, p50/p90/p99/max latency, total self time,
 * total time on the critical path and fan-out; sortable; --json for scripts.
 *
 * Streams: each trace is aggregated into the per-operation rows (opstats.c)
 * as it leaves the assembler and dropped. Percentiles are exact up to
 * TWV_EXACT_MAX timed spans per operation, then estimated by the sketch of
 * quantiles.c within TWV_SKETCH_ALPHA of the exact value (the bound is
 * printed by --help and tested in tests/unit/bridge/test_views_quantiles.c).
 * Spans whose duration is unknown are left out of the latency figures and
 * counted. Single-threaded.
 */
#include "views/view_cmd.h"

#include "cli.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "wire/core/json_common.h" /* tw__json_text: UTF-8-safe JSON strings */

#define DEFAULT_MAX_OPERATIONS 10000

typedef enum sort_key {
    SORT_SELF = 0,
    SORT_CRITICAL,
    SORT_COUNT,
    SORT_ERRORS,
    SORT_ERROR_RATE,
    SORT_P50,
    SORT_P90,
    SORT_P99,
    SORT_MAX,
    SORT_FANOUT,
    SORT_NAME
} sort_key;

static const char *const sort_names[] = {"self", "critical", "count", "errors", "error-rate", "p50",
                                         "p90",  "p99",      "max",   "fanout", "name"};

typedef struct row {
    twv_opstat *op;
    int64_t p50, p90, p99; /* valid when op->latency.count > 0 */
} row;

static int on_trace(void *arg, twv_trace *t)
{
    twv_opstats *s = arg;
    if (!twv_opstats_add_trace(s, t, true)) {
        tw__cli_error("stats: out of memory");
        return TWV_FAIL;
    }
    return TWV_CONTINUE;
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a < b) - (a > b); /* descending */
}

static int by_key(const void *pa, const void *pb, void *arg)
{
    const row *a = pa, *b = pb;
    sort_key key = *(const sort_key *)arg;
    const twv_opstat *x = a->op, *y = b->op;
    int c = 0;
    switch (key) {
    case SORT_SELF:
        c = cmp_i64(x->self_us, y->self_us);
        break;
    case SORT_CRITICAL:
        c = cmp_i64(x->critical_us, y->critical_us);
        break;
    case SORT_COUNT:
        c = cmp_i64((int64_t)x->count, (int64_t)y->count);
        break;
    case SORT_ERRORS:
        c = cmp_i64((int64_t)x->errors, (int64_t)y->errors);
        break;
    case SORT_ERROR_RATE: {
        double rx = x->count ? (double)x->errors / (double)x->count : 0;
        double ry = y->count ? (double)y->errors / (double)y->count : 0;
        c = (rx < ry) - (rx > ry);
        break;
    }
    case SORT_P50:
        c = cmp_i64(a->p50, b->p50);
        break;
    case SORT_P90:
        c = cmp_i64(a->p90, b->p90);
        break;
    case SORT_P99:
        c = cmp_i64(a->p99, b->p99);
        break;
    case SORT_MAX:
        c = cmp_i64(x->latency.count ? x->latency.max : -1, y->latency.count ? y->latency.max : -1);
        break;
    case SORT_FANOUT: {
        double fx = x->count ? (double)x->children / (double)x->count : 0;
        double fy = y->count ? (double)y->children / (double)y->count : 0;
        c = (fx < fy) - (fx > fy);
        break;
    }
    case SORT_NAME:
        break;
    }
    if (c)
        return c;
    c = strcmp(x->service, y->service);
    return c ? c : strcmp(x->operation, y->operation);
}

static json_t *maybe_us(const row *r, int64_t v)
{
    return r->op->latency.count ? json_integer(v) : json_null();
}

static bool write_json(FILE *out, const row *rows, size_t n)
{
    json_t *list = json_array();
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        const twv_opstat *op = r->op;
        json_t *o = json_object();
        json_object_set_new(o, "service", tw__json_text(op->service, strlen(op->service)));
        json_object_set_new(o, "operation", tw__json_text(op->operation, strlen(op->operation)));
        json_object_set_new(o, "count", json_integer((json_int_t)op->count));
        json_object_set_new(o, "errors", json_integer((json_int_t)op->errors));
        json_object_set_new(o, "p50_us", maybe_us(r, r->p50));
        json_object_set_new(o, "p90_us", maybe_us(r, r->p90));
        json_object_set_new(o, "p99_us", maybe_us(r, r->p99));
        json_object_set_new(o, "max_us", maybe_us(r, op->latency.max));
        json_object_set_new(o, "self_us", json_integer(op->self_us));
        json_object_set_new(o, "critical_us", json_integer(op->critical_us));
        json_array_append_new(list, o);
    }
    int rc = json_dumpf(list, out, JSON_INDENT(2));
    json_decref(list);
    return rc == 0 && fputc('\n', out) != EOF;
}

/* A name cell: made safe, cut to @width columns ("~" marks a cut), padded. */
static void put_cell(GString *g, const char *s, int width)
{
    int used = twv_put_text(g, s, width, false);
    for (; used < width; used++)
        g_string_append_c(g, ' ');
}

static void fmt_us(const row *r, int64_t v, char *buf, size_t size)
{
    if (!r->op->latency.count)
        snprintf(buf, size, "-");
    else
        twv_format_duration(v, buf, size);
}

static bool write_text(FILE *out, const row *rows, size_t n, const twv_opstats *s)
{
    int sw = 7, ow = 9;
    for (size_t i = 0; i < n; i++) {
        int a = twv_text_cols(rows[i].op->service), b = twv_text_cols(rows[i].op->operation);
        sw = a > sw ? (a > 32 ? 32 : a) : sw;
        ow = b > ow ? (b > 48 ? 48 : b) : ow;
    }
    GString *g = g_string_new(NULL);
    put_cell(g, "SERVICE", sw);
    g_string_append(g, "  ");
    put_cell(g, "OPERATION", ow);
    g_string_append_printf(g, "  %8s %7s %6s %10s %10s %10s %10s %11s %11s %9s\n", "COUNT",
                           "ERRORS", "ERR%", "P50", "P90", "P99", "MAX", "SELF", "CRITICAL",
                           "FAN-OUT");
    uint64_t no_duration = 0, sketched = 0;
    for (size_t i = 0; i < n; i++) {
        const row *r = &rows[i];
        const twv_opstat *op = r->op;
        char p50[24], p90[24], p99[24], max[24], self[24], crit[24], fan[24];
        fmt_us(r, r->p50, p50, sizeof p50);
        fmt_us(r, r->p90, p90, sizeof p90);
        fmt_us(r, r->p99, p99, sizeof p99);
        fmt_us(r, op->latency.max, max, sizeof max);
        twv_format_duration(op->self_us, self, sizeof self);
        twv_format_duration(op->critical_us, crit, sizeof crit);
        snprintf(fan, sizeof fan, "%.1f/%" PRIu64,
                 op->count ? (double)op->children / (double)op->count : 0.0, op->max_children);
        put_cell(g, op->service, sw);
        g_string_append(g, "  ");
        put_cell(g, op->operation, ow);
        g_string_append_printf(g,
                               "  %8" PRIu64 " %7" PRIu64 " %5.1f%% %10s %10s %10s %10s %11s "
                               "%11s %9s\n",
                               op->count, op->errors,
                               op->count ? 100.0 * (double)op->errors / (double)op->count : 0.0,
                               p50, p90, p99, max, self, crit, fan);
        no_duration += op->no_duration;
        sketched += op->latency.is_sketch;
    }
    g_string_append_printf(g,
                           "%zu operation%s in %" PRIu64 " trace%s. SELF: total self time "
                           "(duration minus children); CRITICAL: total time on the critical "
                           "path; FAN-OUT: children per span, mean/max.\n",
                           n, n == 1 ? "" : "s", s->n_traces, s->n_traces == 1 ? "" : "s");
    if (sketched)
        g_string_append_printf(g,
                               "Percentiles of %" PRIu64 " operation%s with more than %d timed "
                               "spans are estimates within %.0f%% of the exact value.\n",
                               sketched, sketched == 1 ? "" : "s", TWV_EXACT_MAX,
                               100.0 * TWV_SKETCH_ALPHA);
    if (no_duration)
        g_string_append_printf(g,
                               "%" PRIu64 " span%s without a duration %s left out of the latency "
                               "figures (still counted in COUNT and ERRORS).\n",
                               no_duration, no_duration == 1 ? "" : "s",
                               no_duration == 1 ? "was" : "were");
    bool ok = fwrite(g->str, 1, g->len, out) == g->len;
    g_string_free(g, TRUE);
    return ok;
}

int tw__stats_cmd_main(int argc, char **argv)
{
    twv_cli c;
    twv_cli_init(&c, "stats");
    char *sort = NULL;
    gboolean as_json = FALSE;
    gint64 max_ops = DEFAULT_MAX_OPERATIONS, top = 0;
    GOptionEntry entries[] = {
        {"sort", 's', 0, G_OPTION_ARG_STRING, &sort,
         "self (default), critical, count, errors, error-rate, p50, p90, p99, max, fanout, "
         "name",
         "KEY"},
        {"json", 0, 0, G_OPTION_ARG_NONE, &as_json,
         "A JSON array of {service, operation, count, errors, p50_us, p90_us, p99_us, max_us, "
         "self_us, critical_us}",
         NULL},
        {"top", 0, 0, G_OPTION_ARG_INT64, &top, "Only the first N rows (0: all)", "N"},
        {"max-operations", 0, 0, G_OPTION_ARG_INT64, &max_ops,
         "Distinct (service, operation) rows kept; further operations are summed in an "
         "'(other operations)' row of their service (default 10000)",
         "N"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    GOptionContext *ctx = twv_cli_context(
        &c, "- latency, errors, self time and critical path by service and operation",
        "Reads span logs (stdin when no FILE is named) and aggregates every span by service and "
        "operation: count, errors and error rate, p50/p90/p99/max latency, total self time "
        "(duration minus the union of its children's intervals), total time on the critical "
        "path (Jaeger UI's algorithm) and fan-out. Spans whose duration is unknown are left "
        "out of the latency figures and counted. Exit status: 0 success, 1 when an input was "
        "bad, 2 on a usage error. Rules: docs/views.md.",
        entries, true);
    char description[512];
    snprintf(description, sizeof description,
             "Percentiles: the value of rank ceil(p x n) among an operation's timed spans. Exact "
             "while an operation has at most %d timed spans; above that, estimated by a "
             "log-bucket sketch (DDSketch's mapping) whose error is bounded: |estimate - exact| "
             "<= %.0f%% of exact + 0.5 us (rounding to whole microseconds). The maximum is "
             "always exact.\n\nManual page: tracewire-stats(1).",
             TWV_EXACT_MAX, 100.0 * TWV_SKETCH_ALPHA);
    g_option_context_set_description(ctx, description);
    int rc = TW_CLI_EXIT_USAGE;
    twv_output output = {0};
    twv_opstats s;
    twv_opstats_init(&s, 0);
    row *rows = NULL;
    if (!twv_cli_parse(&c, ctx, &argc, &argv) || !twv_cli_finish(&c))
        goto out;
    sort_key key = SORT_SELF;
    if (sort) {
        size_t i = 0;
        while (i < sizeof sort_names / sizeof sort_names[0] && strcmp(sort, sort_names[i]) != 0)
            i++;
        if (i == sizeof sort_names / sizeof sort_names[0]) {
            twv_usage_error(&c,
                            "--sort takes self, critical, count, errors, error-rate, p50, p90, "
                            "p99, max, fanout or name, not '%s'",
                            sort);
            goto out;
        }
        key = (sort_key)i;
    }
    if (max_ops < 1 || top < 0) {
        twv_usage_error(&c, "--max-operations must be >= 1 and --top >= 0");
        goto out;
    }
    if (!twv_check_output(&c, c.output, "--output"))
        goto out;
    twv_opstats_free(&s);
    twv_opstats_init(&s, (size_t)max_ops);
    rc = TW_CLI_EXIT_FAILURE;
    if (!twv_output_open(&output, &c, c.output))
        goto out;
    twv_run_result res;
    if (!twv_run(&c, c.files, &c.filter, true, true, on_trace, &s, &res))
        goto out;
    if (res.is_unread) {
        tw__cli_error("%s: no input could be read: nothing written", c.command);
        goto out;
    }
    rows = calloc(s.n_rows + 1, sizeof *rows);
    if (!rows) {
        tw__cli_error("stats: out of memory");
        goto out;
    }
    uint64_t no_duration = 0;
    for (size_t i = 0; i < s.n_rows; i++) {
        row *r = &rows[i];
        r->op = &s.rows[i];
        r->p50 = twv_quantiles_get(&r->op->latency, 0.50);
        r->p90 = twv_quantiles_get(&r->op->latency, 0.90);
        r->p99 = twv_quantiles_get(&r->op->latency, 0.99);
        no_duration += r->op->no_duration;
    }
    qsort_r(rows, s.n_rows, sizeof *rows, by_key, &key);
    size_t n = top > 0 && (size_t)top < s.n_rows ? (size_t)top : s.n_rows;
    if (s.folded_spans)
        tw__cli_warn("stats: %" PRIu64 " span(s) of operations beyond --max-operations %" PRId64
                     " are summed in '(other operations)' rows",
                     s.folded_spans, max_ops);
    if (as_json && no_duration)
        tw__cli_warn("stats: %" PRIu64 " span(s) without a duration were left out of the "
                     "latency figures",
                     no_duration);
    if (!twv_output_start(&output, &c))
        goto out;
    FILE *out = output.f;
    bool ok = as_json ? write_json(out, rows, n) : write_text(out, rows, n, &s);
    ok = twv_output_close(&output, &c) && ok;
    rc = ok && !res.is_failed ? TW_CLI_EXIT_OK : TW_CLI_EXIT_FAILURE;
out:
    twv_output_close(&output, &c); /* when the run ended early: nothing written */
    free(rows);
    twv_opstats_free(&s);
    g_option_context_free(ctx);
    g_free(sort);
    twv_cli_clear(&c);
    return rc;
}
