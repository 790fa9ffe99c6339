/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/convert_cmd.c: `tracewire convert`, which translates span logs
 * between formats and ships them to backends (docs/bridge.md).
 *
 * Flow (bridge/convert.h): for each input file, a reader (named by --from,
 * else detected from the file's first bytes) emits spans; this file checks
 * and bounds each span (durations, value sizes, the annotation cap), interns
 * its process, and hands it to the assembler (assemble/assemble.h: window,
 * merge, dedup, skew, trace-hash sampling, Jaeger ids), whose groups go to a
 * writer (sinks/, --to) or a sender (sinks/send.h, --send). Bad records are
 * reported as "file:line: reason", counted, copied verbatim to --rejects and
 * never stop the run unless --strict. A summary goes to stderr; a progress
 * line too, when stderr is a terminal.
 *
 * Exit status: 0 when every record converted, 1 when any record was
 * rejected or the run failed (the reason is on stderr), 2 on a usage error.
 * Single-threaded; memory is bounded by the assembly window and the largest
 * record (the readers stream).
 */
#include "cli.h"
#include "convert.h"

#include <errno.h>
#include <glib.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "assemble/assemble.h"
#include "sinks/send.h"

#define DEFAULT_WINDOW_SPANS 10000
#define DEFAULT_MAX_ANNOTATIONS 1000
#define DEFAULT_MAX_VALUE_BYTES ((size_t)64 * 1024)
#define MAX_SHOWN_MESSAGES 100 /* per kind; the rest are counted (and in --rejects) */
#define SNIFF_BYTES 4096
#define IO_BUFFER_BYTES ((size_t)1 << 20) /* stdio buffers of inputs and the output */
#define TRUNCATION_MARKER "...[truncated]"

typedef struct run_counts {
    uint64_t read, written, rejected, warnings, truncated, dropped_annotations, fixed_durations;
    uint64_t files, failed_files;
} run_counts;

typedef struct run {
    twb_options opts;
    twb_procs *procs;
    twb_assembler *assembler;
    const twb_writer_vtable *writer_vt;
    twb_writer *writer;
    twb_sender *sender;
    FILE *rejects;
    bool is_strict, is_stopped, has_progress;
    run_counts n;
    uint64_t shown_rejects, shown_warnings;
    int64_t last_progress_ms, start_ms;
    uint64_t total_bytes, bytes_read; /* of the inputs that are regular files (progress) */
    const char *current;              /* the input being read, for messages */
    tw_error *fatal;                  /* what stopped the run */
} run;

typedef struct run_input {
    twb_input in;
    run *r;
    /* Detection (no --from): the reader chosen from the first bytes, which
     * the hint of on_reject needs; NULL when --from named the reader. */
    const twb_reader *detected;
    const uint8_t *head;
    size_t head_len;
    uint64_t emitted;
    bool has_hinted;
} run_input;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- progress -----------------------------------------------------------------------------------
 */

/* The progress line: a bar with the share of the input bytes read when the
 * inputs are regular files (their sizes are known), else counts only. Shown
 * only on a terminal, at most 4 times a second, and only once a run has
 * lasted a second (short runs print nothing). */
static void progress(run *r, bool is_final)
{
    if (!r->has_progress)
        return;
    int64_t t = now_ms();
    if (!is_final && (t - r->last_progress_ms < 250 || t - r->start_ms < 1000))
        return;
    if (is_final && r->last_progress_ms == 0)
        return; /* nothing was shown: nothing to close */
    r->last_progress_ms = t;
    double secs = (double)(t - r->start_ms) / 1000.0;
    char bar[48] = "";
    if (r->total_bytes > 0) {
        double share = (double)r->bytes_read / (double)r->total_bytes;
        if (share > 1.0)
            share = 1.0;
        int filled = (int)(share * 20.0);
        bar[0] = '[';
        for (int i = 0; i < 20; i++)
            bar[1 + i] = i < filled ? '#' : '.';
        snprintf(bar + 21, sizeof bar - 21, "] %3.0f%% ", share * 100.0);
    }
    fprintf(stderr,
            "\r%s: convert: %s%s: %" PRIu64 " spans read, %" PRIu64 " converted, %" PRIu64
            " rejected (%.0f spans/s)\x1b[K",
            TW_CLI_PROGRAM, bar, r->current ? r->current : "", r->n.read, r->n.written,
            r->n.rejected, secs > 0 ? (double)r->n.read / secs : 0.0);
    if (is_final)
        fputc('\n', stderr);
}

/* ---- messages and rejects
 * ------------------------------------------------------------------------ */

static void where(char *out, size_t size, const char *name, size_t line_no)
{
    if (line_no)
        snprintf(out, size, "%s:%zu", name, line_no);
    else
        snprintf(out, size, "%s", name);
}

/* The detected reader refused the first record of its file: when another
 * format reads that record, say so once (detection goes by the first bytes
 * only, and formats share member names). */
static void hint_other_format(run_input *ri)
{
    ri->has_hinted = true;
    const twb_reader *other =
        twb_reader_alternative(ri->head, ri->head_len, ri->detected, ri->in.opts);
    if (!other)
        return;
    if (ri->r->has_progress)
        fputs("\r\x1b[K", stderr);
    fprintf(stderr,
            "%s: %s: the first record does not read as %s (detected from the first bytes) but "
            "reads as %s: name the format with --from %s\n",
            TW_CLI_PROGRAM, ri->in.name, ri->detected->name, other->name, other->name);
}

static bool on_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                      const char *reason)
{
    run_input *ri = (run_input *)in;
    run *r = ri->r;
    r->n.rejected++;
    if (r->shown_rejects++ < MAX_SHOWN_MESSAGES || r->is_strict) {
        char at[512];
        where(at, sizeof at, in->name, line_no);
        if (r->has_progress)
            fputs("\r\x1b[K", stderr);
        fprintf(stderr, "%s: %s: %s\n", TW_CLI_PROGRAM, at, reason);
    }
    if (ri->detected && !ri->has_hinted && ri->emitted == 0)
        hint_other_format(ri);
    if (r->rejects && raw_len) {
        if (fwrite(raw, 1, raw_len, r->rejects) != raw_len || fputc('\n', r->rejects) == EOF) {
            tw__set_error(&r->fatal, TW_E_IO, "--rejects: write error: %s", strerror(errno));
            r->is_stopped = true;
            return false;
        }
    }
    if (r->is_strict) {
        r->is_stopped = true;
        return false;
    }
    return true;
}

static void on_warn(twb_input *in, size_t line_no, const char *reason)
{
    run *r = ((run_input *)in)->r;
    r->n.warnings++;
    if (r->shown_warnings++ < MAX_SHOWN_MESSAGES) {
        char at[512];
        where(at, sizeof at, in->name, line_no);
        if (r->has_progress)
            fputs("\r\x1b[K", stderr);
        fprintf(stderr, "%s: %s: warning: %s\n", TW_CLI_PROGRAM, at, reason);
    }
}

/* A span the output format cannot hold: the writer left it out (the rest
 * goes on); it counts as a rejected record, named by its ids. */
static void on_span_rejected(void *user_data, const twb_span *span, const char *reason)
{
    run *r = user_data;
    r->n.rejected++;
    r->n.written--; /* on_group adds the whole group after the writer returns (unsigned:
                     * the sum comes out right) */
    if (r->shown_rejects++ < MAX_SHOWN_MESSAGES || r->is_strict) {
        char trace[33], id[17];
        tw__trace_id_hex(span->data->trace_id_high, span->data->trace_id_low, trace);
        tw__hex64(span->data->span_id, id);
        if (r->has_progress)
            fputs("\r\x1b[K", stderr);
        fprintf(stderr, "%s: span %s of trace %s (\"%.60s\") left out of the output: %s\n",
                TW_CLI_PROGRAM, id, trace, span->data->operation ? span->data->operation : "",
                reason);
    }
}

/* ---- per-span checks and bounds
 * ------------------------------------------------------------------- */

/* Cuts a string value to the cap at a UTF-8 boundary and appends the marker
 * (in the record's arena). */
static bool truncate_value(tw__span_data *s, tw__tag *t, size_t cap)
{
    if (t->type == TW_VALUE_BINARY) {
        t->len = cap;
        return true;
    }
    size_t cut = cap;
    while (cut > 0 && ((unsigned char)t->v.str[cut] & 0xC0) == 0x80)
        cut--;
    size_t marker = strlen(TRUNCATION_MARKER);
    char *copy = tw__arena_alloc(&s->arena, cut + marker + 1);
    if (!copy)
        return false;
    memcpy(copy, t->v.str, cut);
    memcpy(copy + cut, TRUNCATION_MARKER, marker + 1);
    t->v.str = copy;
    t->len = cut + marker;
    return true;
}

static bool bound_values(run *r, tw__span_data *s, tw__tag *tags, size_t n)
{
    size_t cap = r->opts.max_value_bytes;
    for (size_t i = 0; i < n; i++) {
        tw__tag *t = &tags[i];
        if ((t->type == TW_VALUE_STRING || t->type == TW_VALUE_BINARY) && t->len > cap) {
            if (!truncate_value(s, t, cap))
                return false;
            r->n.truncated++;
        }
    }
    return true;
}

/* The checks every span passes whatever its reader (docs/bridge.md, "Time"
 * and "Values"): a negative duration becomes 1 µs (and is warned); the
 * annotation cap keeps the first tags, then the first logs; long values are
 * cut with a marker. False on allocation failure. */
static bool check_span(run *r, twb_input *in, tw__span_data *s)
{
    if (s->duration_us < 0) {
        char id[17];
        snprintf(id, sizeof id, "%016" PRIx64, s->span_id);
        twb_warn(in, 0,
                 "span %s ends before it starts (duration %" PRId64 " us): duration set "
                 "to 1 us",
                 id, s->duration_us);
        s->duration_us = 1;
        r->n.fixed_durations++;
    }
    /* A span that ended within the microsecond it began lasted at most 1 µs:
     * Zipkin and Jaeger read a 0 as "unknown" (Brave rounds up the same way). */
    if (s->duration_us == 0 && !s->is_duration_unknown)
        s->duration_us = 1;
    size_t cap = r->opts.max_annotations;
    if (cap && s->n_tags + s->n_logs > cap) {
        size_t keep_tags = s->n_tags < cap ? s->n_tags : cap;
        size_t keep_logs = cap - keep_tags;
        if (keep_logs > s->n_logs)
            keep_logs = s->n_logs;
        size_t dropped = s->n_tags + s->n_logs - keep_tags - keep_logs;
        s->n_tags = keep_tags;
        s->n_logs = keep_logs;
        r->n.dropped_annotations += dropped;
        tw_value v = {.type = TW_VALUE_INT64, .as.i64 = (int64_t)dropped};
        if (!twb_tag_value(s, "tracewire.dropped_annotations", &v))
            return false;
    }
    if (!bound_values(r, s, s->tags, s->n_tags))
        return false;
    for (size_t i = 0; i < s->n_logs; i++) {
        if (!bound_values(r, s, s->logs[i].fields, s->logs[i].n_fields))
            return false;
    }
    return true;
}

static bool on_emit(twb_input *in, tw__span_data *span, const tw__process *process)
{
    run *r = ((run_input *)in)->r;
    ((run_input *)in)->emitted++;
    if (r->is_stopped) {
        tw__span_data_unref(span);
        return false;
    }
    r->n.read++;
    const tw__process *interned = twb_procs_intern(r->procs, process);
    if (!interned || !check_span(r, in, span)) {
        tw__span_data_unref(span);
        tw__set_error(&r->fatal, TW_E_NOMEM, "out of memory");
        r->is_stopped = true;
        return false;
    }
    twb_span s = {.data = span, .process = interned};
    if (twb_assembler_add(r->assembler, s, &r->fatal) != TW_OK) {
        r->is_stopped = true;
        return false;
    }
    if ((r->n.read & 1023) == 0)
        progress(r, false);
    return true;
}

/* The assembler's groups go to the writer or the sender. */
static tw_status on_group(void *arg, const twb_span *spans, size_t n, tw_error **err)
{
    run *r = arg;
    tw_status st = r->sender ? twb_sender_send(r->sender, spans, n, err)
                             : r->writer_vt->write(r->writer, spans, n, err);
    if (st == TW_OK)
        r->n.written += n;
    return st;
}

/* ---- inputs
 * ------------------------------------------------------------------------------------------ */

/* A stream that replays the bytes already read for detection, then the rest
 * of the file: detection must work on pipes, which cannot seek back. */
typedef struct replay {
    unsigned char head[SNIFF_BYTES];
    size_t len, pos;
    FILE *rest;
    uint64_t *bytes_read; /* the run's count, for the progress bar */
} replay;

static ssize_t replay_read(void *cookie, char *buf, size_t size)
{
    replay *rp = cookie;
    if (rp->pos < rp->len) {
        size_t n = rp->len - rp->pos < size ? rp->len - rp->pos : size;
        memcpy(buf, rp->head + rp->pos, n);
        rp->pos += n;
        return (ssize_t)n;
    }
    size_t n = fread(buf, 1, size, rp->rest);
    if (n == 0 && ferror(rp->rest))
        return -1;
    *rp->bytes_read += n;
    return (ssize_t)n;
}

static int replay_close(void *cookie)
{
    (void)cookie; /* the caller closes the underlying file and frees the replay */
    return 0;
}

static bool convert_one(run *r, const char *path, const twb_reader *from)
{
    bool is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    r->current = name;
    r->n.files++;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        tw__cli_error("%s: cannot open: %s", name, strerror(errno));
        r->n.failed_files++;
        return true;
    }
    replay *rp = calloc(1, sizeof *rp);
    if (!rp) {
        tw__set_error(&r->fatal, TW_E_NOMEM, "out of memory");
        if (!is_stdin)
            fclose(f);
        return false;
    }
    rp->rest = f;
    rp->bytes_read = &r->bytes_read;
    setvbuf(f, NULL, _IOFBF, IO_BUFFER_BYTES);
    rp->len = fread(rp->head, 1, SNIFF_BYTES, f);
    r->bytes_read += rp->len;
    if (rp->len < SNIFF_BYTES && ferror(f)) {
        tw__cli_error("%s: read error: %s", name, strerror(errno));
        r->n.failed_files++;
        goto done;
    }
    const twb_reader *reader = from ? from : twb_reader_detect(rp->head, rp->len);
    if (!reader) {
        if (rp->len == 0) {
            goto done; /* an empty file holds no spans: nothing to say */
        }
        tw__cli_error("%s: cannot tell the input format from its first bytes; name it with "
                      "--from (see 'tracewire convert --help')",
                      name);
        r->n.failed_files++;
        goto done;
    }
    cookie_io_functions_t io = {.read = replay_read, .close = replay_close};
    FILE *stream = fopencookie(rp, "rb", io);
    if (!stream) {
        tw__set_error(&r->fatal, TW_E_NOMEM, "out of memory");
        goto done;
    }
    /* Large reads: 8 KiB stdio buffers made the kernel copies a tenth of a
     * Thrift conversion (bench profile). The underlying file reads through
     * the replay in the same large blocks. */
    setvbuf(stream, NULL, _IOFBF, IO_BUFFER_BYTES);
    run_input ri = {.in = {.name = name,
                           .opts = &r->opts,
                           .emit = on_emit,
                           .reject = on_reject,
                           .warn = on_warn},
                    .r = r,
                    .detected = from ? NULL : reader,
                    .head = rp->head,
                    .head_len = rp->len};
    tw_error *e = NULL;
    tw_status st = reader->read(stream, &ri.in, &e);
    fclose(stream);
    if (st != TW_OK && st != TW_E_STATE) {
        tw__cli_error("%s", tw_error_message(e));
        r->n.failed_files++;
    }
    tw_error_free(e);
done:
    free(rp);
    if (!is_stdin)
        fclose(f);
    return !r->is_stopped && !r->fatal;
}

/* ---- options
 * -------------------------------------------------------------------------------------------- */

typedef struct cli {
    char *from, *to, *output, *send, *rejects, *skew, *time_unit, *id_base, *scribe_category;
    char *map, *map_file, *send_format, *user;
    char **headers;
    double sample;
    gint64 window, max_annotations, max_value_bytes, max_body_bytes, retries, timeout_ms;
    gboolean is_strict, no_progress, no_gzip, list_formats;
    char **files;
} cli;

static void list_formats(void)
{
    printf("Input formats (--from):\n");
    for (size_t i = 0; twb_readers[i]; i++)
        printf("  %-18s %s%s\n", twb_readers[i]->name, twb_readers[i]->summary,
               twb_readers[i]->sniff ? "" : " (never auto-detected)");
    printf("Output formats (--to):\n");
    for (size_t i = 0; twb_writers[i]; i++)
        printf("  %-18s %s\n", twb_writers[i]->name, twb_writers[i]->summary);
}

static int usage_error(GOptionContext *ctx, const char *fmt, ...) TW_PRINTF(2, 3);
static int usage_error(GOptionContext *ctx, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tw__cli_error("convert: %s (see 'tracewire convert --help')", msg);
    g_option_context_free(ctx);
    return TW_CLI_EXIT_USAGE;
}

static void summary(const run *r, const twb_assemble_stats *as, const twb_send_stats *ss)
{
    fprintf(stderr,
            "%s: convert: read %" PRIu64 " spans from %" PRIu64 " input(s); converted %" PRIu64
            "; rejected %" PRIu64 " records; warnings %" PRIu64 "; adjusted (clock skew) %" PRIu64
            "; sampled out %" PRIu64 "; merged %" PRIu64 "; duplicates removed %" PRIu64
            "; values truncated %" PRIu64 "; annotations dropped %" PRIu64 "\n",
            TW_CLI_PROGRAM, r->n.read, r->n.files, r->n.written, r->n.rejected, r->n.warnings,
            as->skew_adjusted, as->sampled_out, as->merged, as->duplicates, r->n.truncated,
            r->n.dropped_annotations);
    if (ss)
        fprintf(stderr,
                "%s: convert: sent %" PRIu64 " spans in %" PRIu64 " requests (%" PRIu64
                " bytes, %" PRIu64 " retries, %" PRIu64 " split requests); failed %" PRIu64
                " (refused by the backend %" PRIu64 "); too large %" PRIu64 "\n",
                TW_CLI_PROGRAM, ss->sent, ss->batches, ss->bytes, ss->retries, ss->split_requests,
                ss->failed, ss->refused, ss->too_large);
    if (r->shown_rejects > MAX_SHOWN_MESSAGES)
        fprintf(stderr, "%s: convert: %" PRIu64 " more rejected records were not shown%s\n",
                TW_CLI_PROGRAM, r->shown_rejects - MAX_SHOWN_MESSAGES,
                r->rejects ? " (all are in the --rejects file)" : "; use --rejects FILE");
    if (r->shown_warnings > MAX_SHOWN_MESSAGES)
        fprintf(stderr, "%s: convert: %" PRIu64 " more warnings were not shown\n", TW_CLI_PROGRAM,
                r->shown_warnings - MAX_SHOWN_MESSAGES);
}

int tw__convert_cmd_main(int argc, char **argv)
{
    cli c = {.sample = 1.0,
             .window = DEFAULT_WINDOW_SPANS,
             .max_annotations = DEFAULT_MAX_ANNOTATIONS,
             .max_value_bytes = (gint64)DEFAULT_MAX_VALUE_BYTES,
             .retries = -1,
             .timeout_ms = -1};
    GOptionEntry entries[] = {
        {"from", 'f', 0, G_OPTION_ARG_STRING, &c.from,
         "Input format (default: detected per file; --list-formats)", "FORMAT"},
        {"to", 't', 0, G_OPTION_ARG_STRING, &c.to, "Output format (required unless --send)",
         "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &c.output, "Write to FILE (default: stdout)",
         "FILE"},
        {"send", 0, 0, G_OPTION_ARG_STRING, &c.send,
         "Ship to a backend: http(s)://.../api/v2/spans (Zipkin), .../api/traces (Jaeger "
         "collector), .../v1/traces (OTLP), udp://host:6831 (Jaeger agent)",
         "URL"},
        {"window", 'w', 0, G_OPTION_ARG_INT64, &c.window,
         "Spans held to assemble traces (merge halves, dedup, skew); 0: none (default 10000)", "N"},
        {"skew", 0, 0, G_OPTION_ARG_STRING, &c.skew,
         "Clock skew correction: off (default) or adjust", "MODE"},
        {"sample", 0, 0, G_OPTION_ARG_DOUBLE, &c.sample,
         "Keep a trace iff a stable hash of its id is below P (0..1; default 1)", "P"},
        {"time-unit", 0, 0, G_OPTION_ARG_STRING, &c.time_unit,
         "Unit of input timestamps: auto (default), s, ms, us, ns", "UNIT"},
        {"id-base", 0, 0, G_OPTION_ARG_STRING, &c.id_base,
         "Base of textual ids: auto (default: hex, decimal when negative), hex, dec", "BASE"},
        {"max-annotations", 0, 0, G_OPTION_ARG_INT64, &c.max_annotations,
         "Tags + logs kept per span; 0: no cap (default 1000)", "N"},
        {"max-value-bytes", 0, 0, G_OPTION_ARG_INT64, &c.max_value_bytes,
         "Longer values are cut with a marker (default 65536)", "N"},
        {"rejects", 0, 0, G_OPTION_ARG_FILENAME, &c.rejects,
         "Write rejected records verbatim to FILE", "FILE"},
        {"strict", 0, 0, G_OPTION_ARG_NONE, &c.is_strict, "Stop at the first rejected record",
         NULL},
        {"scribe-category", 0, 0, G_OPTION_ARG_STRING, &c.scribe_category,
         "Scribe category kept by zipkin-v1-thrift (default zipkin)", "NAME"},
        {"map", 0, 0, G_OPTION_ARG_STRING, &c.map,
         "custom: field mapping, e.g. trace_id=tid,span_id=sid,start=ts", "SPEC"},
        {"map-file", 0, 0, G_OPTION_ARG_FILENAME, &c.map_file, "custom: mapping file", "FILE"},
        {"max-body-bytes", 0, 0, G_OPTION_ARG_INT64, &c.max_body_bytes,
         "--send: largest HTTP body (default 1048576)", "N"},
        {"retries", 0, 0, G_OPTION_ARG_INT64, &c.retries,
         "--send: retries per batch on 5xx and connection errors (default 3)", "N"},
        {"timeout-ms", 0, 0, G_OPTION_ARG_INT64, &c.timeout_ms,
         "--send: timeout of one request (default 10000)", "MS"},
        {"no-gzip", 0, 0, G_OPTION_ARG_NONE, &c.no_gzip, "--send: do not compress bodies", NULL},
        {"header", 'H', 0, G_OPTION_ARG_STRING_ARRAY, &c.headers,
         "--send: add an HTTP header (repeatable)", "'NAME: VALUE'"},
        {"user", 'u', 0, G_OPTION_ARG_STRING, &c.user, "--send: HTTP basic auth", "NAME:PASSWORD"},
        {"send-format", 0, 0, G_OPTION_ARG_STRING, &c.send_format,
         "--send: zipkin, jaeger-http, otlp-http, jaeger-udp or jaeger-udp-binary (default: "
         "from the URL)",
         "FORMAT"},
        {"no-progress", 0, 0, G_OPTION_ARG_NONE, &c.no_progress,
         "No progress line (it is shown only when stderr is a terminal)", NULL},
        {"list-formats", 0, 0, G_OPTION_ARG_NONE, &c.list_formats, "List the formats and exit",
         NULL},
        {G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &c.files, NULL, "[FILE...]"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    g_set_prgname(TW_CLI_PROGRAM " convert"); /* usage reads "tracewire convert ..." */
    GOptionContext *ctx = g_option_context_new("- translate span logs between formats");
    g_option_context_set_summary(
        ctx, "Reads span logs (stdin when no FILE is named; '-' is stdin) and writes them in "
             "another format, or ships them to a backend with --send. Exit status: 0 when every "
             "record converted, 1 when a record was rejected or the run failed, 2 on a usage "
             "error. Rules: docs/bridge.md.");
    g_option_context_add_main_entries(ctx, entries, NULL);
    GError *gerr = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &gerr)) {
        tw__cli_error("convert: %s (see 'tracewire convert --help')", gerr->message);
        g_error_free(gerr);
        g_option_context_free(ctx);
        return TW_CLI_EXIT_USAGE;
    }
    int rc = TW_CLI_EXIT_FAILURE;
    if (c.list_formats) {
        list_formats();
        g_option_context_free(ctx);
        rc = TW_CLI_EXIT_OK;
        goto free_cli;
    }

    run r = {.opts = {.max_value_bytes = (size_t)c.max_value_bytes,
                      .max_annotations = (size_t)c.max_annotations,
                      .scribe_category = c.scribe_category ? c.scribe_category : "zipkin",
                      .span_rejected = on_span_rejected}};
    r.opts.span_rejected_data = &r;
    const twb_reader *from = NULL;
    if (c.from && !(from = twb_reader_find(c.from))) {
        rc = usage_error(ctx, "unknown input format '%s' (--list-formats)", c.from);
        goto free_cli;
    }
    if (c.to && !(r.writer_vt = twb_writer_find(c.to))) {
        rc = usage_error(ctx, "unknown output format '%s' (--list-formats)", c.to);
        goto free_cli;
    }
    if (!c.to && !c.send) {
        rc = usage_error(ctx, "name an output format with --to, or a backend with --send");
        goto free_cli;
    }
    if (c.send && (c.to || c.output)) {
        rc = usage_error(ctx, "--send ships to a backend: it takes no --to or --output");
        goto free_cli;
    }
    if (c.window < 0 || c.max_annotations < 0 || c.max_value_bytes < 16) {
        rc = usage_error(ctx, "--window and --max-annotations must be >= 0, --max-value-bytes "
                              ">= 16");
        goto free_cli;
    }
    if (!(c.sample >= 0.0 && c.sample <= 1.0)) {
        rc = usage_error(ctx, "--sample must be between 0 and 1");
        goto free_cli;
    }
    bool skew_adjust = false;
    if (c.skew && strcmp(c.skew, "adjust") == 0) {
        skew_adjust = true;
    } else if (c.skew && strcmp(c.skew, "off") != 0) {
        rc = usage_error(ctx, "--skew takes off or adjust, not '%s'", c.skew);
        goto free_cli;
    }
    if (c.time_unit) {
        int unit = (int)twb_time_unit_parse(c.time_unit);
        if (unit < 0) {
            rc = usage_error(ctx, "--time-unit takes auto, s, ms, us or ns, not '%s'", c.time_unit);
            goto free_cli;
        }
        r.opts.time_unit = (twb_time_unit)unit;
    }
    if (c.id_base) {
        if (strcmp(c.id_base, "hex") == 0)
            r.opts.id_base = TWB_ID_HEX;
        else if (strcmp(c.id_base, "dec") == 0)
            r.opts.id_base = TWB_ID_DEC;
        else if (strcmp(c.id_base, "auto") != 0) {
            rc = usage_error(ctx, "--id-base takes auto, hex or dec, not '%s'", c.id_base);
            goto free_cli;
        }
    }
    twb_custom_map custom = {0};
    if (c.map_file || c.map) {
        char why[512];
        char *text = NULL;
        if (c.map_file) {
            GError *ferr = NULL;
            if (!g_file_get_contents(c.map_file, &text, NULL, &ferr)) {
                rc = usage_error(ctx, "--map-file: %s", ferr->message);
                g_error_free(ferr);
                goto free_cli;
            }
        }
        bool ok = (!text || twb_custom_map_parse(&custom, text, true, why, sizeof why)) &&
                  (!c.map || twb_custom_map_parse(&custom, c.map, false, why, sizeof why));
        g_free(text);
        if (!ok) {
            twb_custom_map_clear(&custom);
            rc = usage_error(ctx, "%s: %s", c.map ? "--map" : "--map-file", why);
            goto free_cli;
        }
        r.opts.custom = &custom;
    } else if (from == &twb_reader_custom) {
        rc = usage_error(ctx, "--from custom needs a field mapping: --map or --map-file");
        goto free_cli;
    }
    g_option_context_free(ctx);

    FILE *out = stdout;
    tw_error *e = NULL;
    unsigned int target_flags = 0;
    if (c.send) {
        twb_send_options so;
        twb_send_options_init(&so);
        if (c.max_body_bytes > 0)
            so.max_body_bytes = (size_t)c.max_body_bytes;
        if (c.retries >= 0)
            so.max_retries = (unsigned int)c.retries;
        if (c.timeout_ms > 0)
            so.timeout_ms = (unsigned int)c.timeout_ms;
        so.is_gzip = !c.no_gzip;
        so.headers = (const char *const *)c.headers;
        so.n_headers = c.headers ? g_strv_length(c.headers) : 0;
        so.user = c.user;
        so.format = c.send_format;
        r.sender = twb_sender_new(c.send, &so, &e);
        if (!r.sender) {
            tw__cli_error("convert: %s", tw_error_message(e));
            tw_error_free(e);
            rc = TW_CLI_EXIT_USAGE;
            goto free_custom;
        }
        /* The SDK's senders report failed requests through its logger. */
        tw_set_logger(tw_log_to_stderr, NULL, TW_LOG_WARN);
        target_flags = twb_sender_target_flags(r.sender);
    } else {
        if (c.output && !(out = fopen(c.output, "wb"))) {
            tw__cli_error("convert: %s: cannot open for writing: %s", c.output, strerror(errno));
            goto free_custom;
        }
        setvbuf(out, NULL, _IOFBF, IO_BUFFER_BYTES);
        r.writer = r.writer_vt->new_writer(out, &r.opts, &e);
        if (!r.writer) {
            tw__cli_error("convert: %s", tw_error_message(e));
            tw_error_free(e);
            goto close_out;
        }
        target_flags = r.writer_vt->target_flags;
    }
    if (c.rejects && !(r.rejects = fopen(c.rejects, "wb"))) {
        tw__cli_error("convert: %s: cannot open for writing: %s", c.rejects, strerror(errno));
        goto close_out;
    }
    twb_assemble_options ao = {.window_spans = (size_t)c.window,
                               .jaeger_ids = (target_flags & TWB_TARGET_JAEGER_IDS) != 0,
                               .skew_adjust = skew_adjust,
                               .sample = c.sample};
    r.procs = twb_procs_new();
    r.assembler = r.procs ? twb_assembler_new(&ao, on_group, &r) : NULL;
    if (!r.assembler) {
        tw__cli_error("convert: out of memory");
        goto close_out;
    }
    r.is_strict = c.is_strict;
    r.has_progress = !c.no_progress && isatty(STDERR_FILENO);
    r.start_ms = now_ms();
    for (size_t i = 0; r.has_progress && c.files && c.files[i]; i++) {
        struct stat st;
        if (strcmp(c.files[i], "-") != 0 && stat(c.files[i], &st) == 0 && S_ISREG(st.st_mode))
            r.total_bytes += (uint64_t)st.st_size;
    }

    if (!c.files || !c.files[0]) {
        convert_one(&r, "-", from);
    } else {
        for (size_t i = 0; c.files[i]; i++) {
            if (!convert_one(&r, c.files[i], from))
                break;
        }
    }
    if (!r.fatal)
        twb_assembler_flush(r.assembler, &r.fatal);
    if (!r.fatal) {
        if (r.sender)
            twb_sender_finish(r.sender, &r.fatal);
        else
            r.writer_vt->finish(r.writer, &r.fatal);
    }
    progress(&r, true);

    twb_assemble_stats as;
    twb_assembler_stats(r.assembler, &as);
    twb_send_stats ss;
    if (r.sender)
        twb_sender_stats(r.sender, &ss);
    summary(&r, &as, r.sender ? &ss : NULL);
    if (r.fatal)
        tw__cli_error("convert: %s", tw_error_message(r.fatal));
    else if (r.is_stopped && r.is_strict)
        tw__cli_error("convert: stopped at the first rejected record (--strict)");
    bool is_clean = !r.fatal && r.n.rejected == 0 && r.n.failed_files == 0 &&
                    (!r.sender || (ss.failed == 0 && ss.too_large == 0));
    rc = is_clean ? TW_CLI_EXIT_OK : TW_CLI_EXIT_FAILURE;

close_out:
    twb_assembler_free(r.assembler);
    twb_procs_free(r.procs);
    if (r.writer)
        r.writer_vt->free_writer(r.writer);
    twb_sender_free(r.sender);
    if (r.rejects && fclose(r.rejects) != 0 && rc == TW_CLI_EXIT_OK) {
        tw__cli_error("convert: %s: write error: %s", c.rejects, strerror(errno));
        rc = TW_CLI_EXIT_FAILURE;
    }
    if (out != stdout && fclose(out) != 0 && rc == TW_CLI_EXIT_OK) {
        tw__cli_error("convert: %s: write error: %s", c.output, strerror(errno));
        rc = TW_CLI_EXIT_FAILURE;
    }
    tw_error_free(r.fatal);
free_custom:
    twb_custom_map_clear(&custom);
free_cli:
    g_free(c.from);
    g_free(c.to);
    g_free(c.output);
    g_free(c.send);
    g_free(c.rejects);
    g_free(c.skew);
    g_free(c.time_unit);
    g_free(c.id_base);
    g_free(c.scribe_category);
    g_free(c.map);
    g_free(c.map_file);
    g_free(c.send_format);
    g_free(c.user);
    g_strfreev(c.headers);
    g_strfreev(c.files);
    return rc;
}
