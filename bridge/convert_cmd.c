/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/convert_cmd.c: `tracewire convert`, which translates span logs
 * between formats and ships them to backends (docs/bridge.md).
 *
 * Flow (bridge/convert.h): for each input file, a reader (named by --from,
 * else detected from the file's first bytes) emits spans; the shared input
 * pipeline (pipeline.h, also used by the views) checks and bounds each span
 * (durations, value sizes, the annotation cap), interns its process, and
 * hands it to the assembler (assemble/assemble.h: window, merge, dedup, skew,
 * trace-hash sampling, Jaeger ids), whose groups this file sends to a writer
 * (sinks/, --to) or a sender (sinks/send.h, --send). Bad records are reported
 * as "file:line: reason", counted, copied verbatim to --rejects and never
 * stop the run unless --strict. A summary goes to stderr; a progress line
 * too, when stderr is a terminal.
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
#include <unistd.h>

#include "pipeline.h"
#include "sinks/send.h"

#define DEFAULT_WINDOW_SPANS 10000
#define DEFAULT_MAX_ANNOTATIONS 1000
#define DEFAULT_MAX_VALUE_BYTES ((size_t)64 * 1024)
/* A numeric option the user did not give (GOption cannot say; no valid value is this). */
#define OPTION_UNSET INT64_MIN

/* The accepted range of each numeric option (docs/bridge.md). Out of range is a usage
 * error naming the option: a value is never wrapped, clamped or ignored. */
typedef struct option_range {
    const char *name;
    int64_t min, max;
} option_range;
static const option_range RANGE_WINDOW = {"--window", 0, 10000000};
static const option_range RANGE_MAX_ANNOTATIONS = {"--max-annotations", 0, 1000000};
static const option_range RANGE_MAX_VALUE_BYTES = {"--max-value-bytes", 16, 16 << 20};
static const option_range RANGE_MAX_BODY_BYTES = {"--max-body-bytes", 1024, 256 << 20};
static const option_range RANGE_RETRIES = {"--retries", 0, 100};
static const option_range RANGE_TIMEOUT_MS = {"--timeout-ms", 1, 3600 * 1000};
static const option_range RANGE_SEND_GIVE_UP = {"--send-give-up", 1, 1000};

/* --undelivered FILE: every span --send did not deliver, written as its
 * fate becomes known (sinks/send.h on_undelivered) by the writer of the
 * format --send sends (so the file reads back as what the backend would
 * have got), to a temporary file beside FILE that is renamed to FILE at
 * the end. Nothing undelivered: no FILE (one left by an earlier run is
 * removed). Streamed: memory is the writer's. */
typedef struct undelivered {
    const char *path; /* FILE */
    char *tmp_path;   /* FILE.tmp.XXXXXX, beside it; NULL once renamed or removed */
    FILE *out;
    const twb_writer_vtable *vt;
    twb_writer *writer;
    twb_options opts;      /* the run's, with span_rejected counting here */
    uint64_t written;      /* spans written */
    uint64_t not_written;  /* spans lost to a write error or refused by the writer */
    uint64_t rejected_now; /* spans the writer left out in the write under way */
    tw_error *error;       /* the first write error (the file is then not kept) */
    bool is_failed;        /* undelivered_close could not keep the spans (said) */
} undelivered;

/* The input side (reading, detection, checks, assembly) is bridge/pipeline.c,
 * shared with the views; this file adds the output side. */
typedef struct run {
    twb_options opts;
    twb_pipeline *pipeline;
    const twb_writer_vtable *writer_vt;
    twb_writer *writer;
    twb_sender *sender;
    uint64_t written;
    const char *out_name;    /* the output, for messages ("standard output") */
    uint64_t shown_refused;  /* spans the backend refused, reported (the first 100 printed) */
    undelivered undelivered; /* --undelivered (path NULL: not given) */
} run;

/* A writer's failure names the output it could not write ("out.json: write
 * error: No space left on device"): the writer only knows its FILE. */
static tw_status name_output(const run *r, tw_status st, tw_error **err)
{
    if (st == TW_OK || !err || !*err)
        return st;
    tw_error *named = NULL;
    tw__set_error(&named, tw_error_status(*err), "%s: %s", r->out_name, tw_error_message(*err));
    if (named) {
        tw_error_free(*err);
        *err = named;
    }
    return st;
}

/* The assembler's groups go to the writer or the sender. */
static tw_status on_group(void *arg, const twb_span *spans, size_t n, tw_error **err)
{
    run *r = arg;
    tw_status st = r->sender ? twb_sender_send(r->sender, spans, n, err)
                             : name_output(r, r->writer_vt->write(r->writer, spans, n, err), err);
    if (st == TW_OK)
        r->written += n;
    return st;
}

/* A span the output format cannot hold: the writer left it out (the rest
 * goes on); it counts as a rejected record, named by its ids. */
static void on_span_rejected(void *user_data, const twb_span *span, const char *reason)
{
    run *r = user_data;
    r->written--; /* on_group adds the whole group after the writer returns (unsigned: the
                   * sum comes out right) */
    twb_pipeline_span_rejected(r->pipeline, span, reason);
}

/* A span the backend refused on its own (--send): one line each, ids in
 * their own width, the first TWB_PIPELINE_SHOWN_MAX of them (the summary
 * counts them all). The reason quotes the backend: tw__cli_error escapes
 * it. */
static void on_send_refused(void *arg, const char *trace_hex, const char *span_hex,
                            const char *reason)
{
    run *r = arg;
    if (++r->shown_refused <= TWB_PIPELINE_SHOWN_MAX)
        tw__cli_error("convert: --send (%s): span %s/%s refused: %s", twb_sender_format(r->sender),
                      trace_hex, span_hex, reason);
}

/* A span the --undelivered writer left out (its format cannot hold it: it
 * never should, being the format --send sends). */
static void on_undelivered_rejected(void *user_data, const twb_span *span, const char *reason)
{
    undelivered *u = user_data;
    u->rejected_now++;
    tw__cli_error("convert: --undelivered %s: span %016" PRIx64 "%016" PRIx64 "/%016" PRIx64
                  " not written: %s",
                  u->path, span->data->trace_id_high, span->data->trace_id_low, span->data->span_id,
                  reason);
}

/* A span --send did not deliver (sinks/send.h): to the --undelivered file. */
static void on_send_undelivered(void *arg, const twb_span *span)
{
    undelivered *u = arg;
    if (u->error) {
        u->not_written++;
        return;
    }
    u->rejected_now = 0;
    if (u->vt->write(u->writer, span, 1, &u->error) != TW_OK) {
        u->not_written++;
        if (!u->error)
            tw__set_error(&u->error, TW_E_IO, "write error");
        return;
    }
    u->not_written += u->rejected_now;
    u->written += 1 - u->rejected_now;
}

/* Checks --undelivered FILE before anything is sent and opens its
 * temporary file beside it with the writer of @format. False with a
 * message (a usage error: exit 2) when FILE cannot be written. */
static bool undelivered_open(undelivered *u, const char *format, const twb_options *opts)
{
    struct stat st;
    if (stat(u->path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            tw__cli_error("convert: --undelivered %s: is a directory", u->path);
            return false;
        }
        if (!S_ISREG(st.st_mode)) {
            tw__cli_error("convert: --undelivered %s: not a regular file (it is replaced at the "
                          "end of the run)",
                          u->path);
            return false;
        }
        if (access(u->path, W_OK) != 0) {
            tw__cli_error("convert: --undelivered %s: cannot write: %s", u->path, strerror(errno));
            return false;
        }
    } else if (errno != ENOENT) {
        tw__cli_error("convert: --undelivered %s: %s", u->path, strerror(errno));
        return false;
    }
    u->vt = twb_writer_find(format);
    if (!u->vt) { /* every HTTP --send format has a writer (send_outputs) */
        tw__cli_error("convert: --undelivered: no file format for --send-format %s", format);
        return false;
    }
    u->tmp_path = g_strdup_printf("%s.tmp.XXXXXX", u->path);
    int fd = mkstemp(u->tmp_path);
    if (fd < 0) {
        tw__cli_error("convert: --undelivered %s: cannot write beside it: %s", u->path,
                      strerror(errno));
        g_free(u->tmp_path);
        u->tmp_path = NULL;
        return false;
    }
    /* mkstemp makes it 0600; FILE gets the mode a new file would. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    tw_error *e = NULL;
    u->opts = *opts;
    u->opts.span_rejected = on_undelivered_rejected;
    u->opts.span_rejected_data = u;
    if (!(u->out = fdopen(fd, "wb")) || !(u->writer = u->vt->new_writer(u->out, &u->opts, &e))) {
        tw__cli_error("convert: --undelivered %s: %s", u->path,
                      e ? tw_error_message(e) : strerror(errno));
        tw_error_free(e);
        if (u->out)
            fclose(u->out);
        else
            close(fd);
        u->out = NULL;
        unlink(u->tmp_path);
        g_free(u->tmp_path);
        u->tmp_path = NULL;
        return false;
    }
    return true;
}

/* Frees what undelivered_open made; a temporary file still there is
 * removed (the run did not get to keep it). */
static void undelivered_free(undelivered *u)
{
    if (u->writer)
        u->vt->free_writer(u->writer);
    u->writer = NULL;
    if (u->out)
        fclose(u->out);
    u->out = NULL;
    if (u->tmp_path)
        unlink(u->tmp_path);
    g_free(u->tmp_path);
    u->tmp_path = NULL;
    tw_error_free(u->error);
    u->error = NULL;
}

/* Ends the --undelivered file: renamed to FILE when it holds spans;
 * removed, and FILE with it, when nothing was undelivered. False (the
 * reason said) when the spans could not all be saved. */
static bool undelivered_close(undelivered *u)
{
    if (!u->error && u->vt->finish(u->writer, &u->error) == TW_OK && !u->error) {
        u->vt->free_writer(u->writer);
        u->writer = NULL;
        FILE *out = u->out;
        u->out = NULL;
        if ((fflush(out) != 0 || fsync(fileno(out)) != 0) | (fclose(out) != 0))
            tw__set_error(&u->error, TW_E_IO, "write error: %s", strerror(errno));
    }
    if (u->error || u->not_written) {
        tw__cli_error("convert: --undelivered %s: %s%s%" PRIu64
                      " undelivered spans were not saved (the file is not written)",
                      u->path, u->error ? tw_error_message(u->error) : "", u->error ? ": " : "",
                      u->written + u->not_written);
        undelivered_free(u);
        u->is_failed = true;
        return false;
    }
    if (u->written == 0) {
        unlink(u->tmp_path);
        g_free(u->tmp_path);
        u->tmp_path = NULL;
        struct stat st;
        if (lstat(u->path, &st) == 0 && S_ISREG(st.st_mode) && unlink(u->path) == 0)
            fprintf(stderr,
                    "%s: convert: --undelivered %s: every span was delivered: the file of an "
                    "earlier run was removed\n",
                    TW_CLI_PROGRAM, u->path);
        return true;
    }
    if (rename(u->tmp_path, u->path) != 0) {
        tw__cli_error("convert: --undelivered %s: cannot rename %s to it: %s; the %" PRIu64
                      " undelivered spans are in %s",
                      u->path, u->tmp_path, strerror(errno), u->written, u->tmp_path);
        g_free(u->tmp_path); /* kept: it holds the spans */
        u->tmp_path = NULL;
        u->is_failed = true;
        return false;
    }
    g_free(u->tmp_path);
    u->tmp_path = NULL;
    return true;
}

/* ---- options
 * -------------------------------------------------------------------------------------------- */

typedef struct cli {
    char *from, *to, *output, *send, *rejects, *skew, *time_unit, *id_base, *scribe_category;
    char *map, *map_file, *send_format, *user, *undelivered;
    char **headers;
    double sample;
    gint64 window, max_annotations, max_value_bytes, max_body_bytes, retries, timeout_ms;
    gint64 send_give_up;
    gboolean is_strict, no_progress, no_gzip, list_formats;
    char **files;
} cli;

/* True when stdin is among the inputs or one named file can be read. When
 * none can, each is reported and nothing may be written: a typo in the only
 * file name must not leave an empty or truncated --output behind. Checked
 * with stat and access, not open, so that a FIFO is not opened twice. */
static bool any_input_opens(char **files)
{
    if (!files || !files[0])
        return true;
    for (size_t i = 0; files[i]; i++) {
        struct stat st;
        if (strcmp(files[i], "-") == 0 ||
            (access(files[i], R_OK) == 0 && stat(files[i], &st) == 0 && !S_ISDIR(st.st_mode)))
            return true;
    }
    for (size_t i = 0; files[i]; i++) {
        struct stat st;
        int why = EISDIR; /* readable, so a directory, unless stat itself fails */
        if (access(files[i], R_OK) != 0 || stat(files[i], &st) != 0)
            why = errno;
        tw__cli_error("%s: cannot open: %s", files[i], strerror(why));
    }
    tw__cli_error("convert: no input could be opened: nothing written");
    return false;
}

/* Each --send format and the --to format whose bytes it sends. */
static const struct {
    const char *send, *to;
} send_outputs[] = {{"zipkin", "zipkin-v2-json"},    {"jaeger-http", "jaeger-thrift"},
                    {"otlp-http", "otlp-json"},      {"otlp-http-proto", "otlp-proto"},
                    {"jaeger-udp", "jaeger-thrift"}, {"jaeger-udp-binary", "jaeger-thrift"}};

static bool is_udp_format(const char *send_format)
{
    return strncmp(send_format, "jaeger-udp", 10) == 0;
}

/* The --to format whose bytes a --send destination format takes (NULL: none). */
static const char *send_format_output(const char *send_format)
{
    for (size_t i = 0; send_format && i < sizeof send_outputs / sizeof send_outputs[0]; i++) {
        if (strcmp(send_outputs[i].send, send_format) == 0)
            return send_outputs[i].to;
    }
    return NULL;
}

/* A --send-format over the same transport (HTTP or UDP) as @send_format
 * that sends the bytes of --to @to, or NULL. */
static const char *send_format_for(const char *send_format, const char *to)
{
    for (size_t i = 0; i < sizeof send_outputs / sizeof send_outputs[0]; i++) {
        if (strcmp(send_outputs[i].to, to) == 0 &&
            is_udp_format(send_outputs[i].send) == is_udp_format(send_format))
            return send_outputs[i].send;
    }
    return NULL;
}

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

/* --send: one backend per run; a second --send is refused rather than
 * silently replacing the first. */
static gboolean on_send_option(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)name;
    cli *c = data;
    if (c->send) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--send given twice: one backend per run (run convert once per backend)");
        return FALSE;
    }
    c->send = g_strdup(value);
    return TRUE;
}

/* Closes --rejects and the output (standard output is flushed) and sets
 * them to NULL. A write error shows at the latest here: it is said whatever
 * the exit status already is (a run with rejects exits 1 anyway, and a lost
 * --rejects file must not go unnoticed). False on a write error. */
static bool close_outputs(FILE **rejects, FILE **out, const cli *c)
{
    bool ok = true;
    if (*rejects && fclose(*rejects) != 0) {
        tw__cli_error("convert: %s: write error: %s", c->rejects, strerror(errno));
        ok = false;
    }
    *rejects = NULL;
    if (*out == stdout && fflush(stdout) != 0) {
        tw__cli_error("convert: standard output: write error: %s", strerror(errno));
        ok = false;
    } else if (*out && *out != stdout && fclose(*out) != 0) {
        tw__cli_error("convert: %s: write error: %s", c->output, strerror(errno));
        ok = false;
    }
    *out = NULL;
    return ok;
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

/* The notes that go before the summary: messages not shown, --send giving
 * up. */
static void summary_notes(const run *r, const twb_send_stats *ss, unsigned int give_up,
                          bool has_rejects_file)
{
    const twb_pipeline_counts *n = twb_pipeline_get_counts(r->pipeline);
    twb_pipeline_warn_split(r->pipeline);
    if (n->shown_rejects > TWB_PIPELINE_SHOWN_MAX)
        fprintf(stderr, "%s: convert: %" PRIu64 " more rejected records were not shown%s\n",
                TW_CLI_PROGRAM, n->shown_rejects - TWB_PIPELINE_SHOWN_MAX,
                has_rejects_file ? " (all are in the --rejects file)" : "; use --rejects FILE");
    if (n->shown_warnings > TWB_PIPELINE_SHOWN_MAX)
        fprintf(stderr, "%s: convert: %" PRIu64 " more warnings were not shown\n", TW_CLI_PROGRAM,
                n->shown_warnings - TWB_PIPELINE_SHOWN_MAX);
    if (r->shown_refused > TWB_PIPELINE_SHOWN_MAX)
        fprintf(stderr,
                "%s: convert: %" PRIu64 " more spans refused by the backend were not shown\n",
                TW_CLI_PROGRAM, r->shown_refused - TWB_PIPELINE_SHOWN_MAX);
    if (ss && ss->has_given_up)
        fprintf(stderr,
                "%s: convert: --send gave up after %u failed rounds of retries in a row "
                "(--send-give-up): %" PRIu64 " spans sent, %" PRIu64
                " failed after being attempted, %" PRIu64 " never attempted\n",
                TW_CLI_PROGRAM, give_up, ss->sent, ss->failed - ss->unattempted, ss->unattempted);
}

/* The summary: the last lines of a run. */
static void summary(const run *r, const twb_assemble_stats *as, const twb_send_stats *ss)
{
    const twb_pipeline_counts *n = twb_pipeline_get_counts(r->pipeline);
    fprintf(stderr,
            "%s: convert: read %" PRIu64 " spans from %" PRIu64 " input(s); converted %" PRIu64
            "; rejected %" PRIu64 " records; warnings %" PRIu64 "; adjusted (clock skew) %" PRIu64
            "; sampled out %" PRIu64 "; merged %" PRIu64 "; duplicates removed %" PRIu64
            "; values truncated %" PRIu64 "; annotations dropped %" PRIu64
            "; traces split by the window %" PRIu64 "\n",
            TW_CLI_PROGRAM, n->read, n->files, r->written, n->rejected, n->warnings,
            as->skew_adjusted, as->sampled_out, as->merged, as->duplicates, n->truncated,
            n->dropped_annotations, as->split_traces);
    if (ss && is_udp_format(twb_sender_format(r->sender))) /* no answers */
        fprintf(stderr,
                "%s: convert: sent %" PRIu64 " spans in %" PRIu64 " datagrams (%" PRIu64
                " bytes); failed %" PRIu64 "; too large %" PRIu64 "\n",
                TW_CLI_PROGRAM, ss->sent, ss->batches, ss->bytes, ss->failed, ss->too_large);
    else if (ss)
        fprintf(stderr,
                "%s: convert: sent %" PRIu64 " spans in %" PRIu64 " accepted requests (%" PRIu64
                " bytes); requests made %" PRIu64 " (retries %" PRIu64 ", split requests %" PRIu64
                ", refused by the backend %" PRIu64 "); failed %" PRIu64
                " spans (attempted %" PRIu64 ", of them refused by the backend %" PRIu64
                "; never attempted %" PRIu64 "); too large %" PRIu64 "\n",
                TW_CLI_PROGRAM, ss->sent, ss->batches, ss->bytes, ss->requests, ss->retries,
                ss->split_requests, ss->refused_requests, ss->failed, ss->failed - ss->unattempted,
                ss->refused, ss->unattempted, ss->too_large);
    const undelivered *u = &r->undelivered;
    if (ss && u->path && !u->is_failed) {
        if (u->written)
            fprintf(stderr,
                    "%s: convert: --undelivered: %" PRIu64
                    " spans written to %s (%s; send them with: tracewire convert --from %s "
                    "--send URL %s)\n",
                    TW_CLI_PROGRAM, u->written, u->path, u->vt->name, u->vt->name, u->path);
        else
            fprintf(stderr,
                    "%s: convert: --undelivered: 0 spans: every span was delivered, %s "
                    "not written\n",
                    TW_CLI_PROGRAM, u->path);
    }
}

int tw__convert_cmd_main(int argc, char **argv)
{
    cli c = {.sample = 1.0,
             .window = DEFAULT_WINDOW_SPANS,
             .max_annotations = DEFAULT_MAX_ANNOTATIONS,
             .max_value_bytes = (gint64)DEFAULT_MAX_VALUE_BYTES,
             .max_body_bytes = OPTION_UNSET,
             .retries = OPTION_UNSET,
             .timeout_ms = OPTION_UNSET,
             .send_give_up = OPTION_UNSET};
    GOptionEntry entries[] = {
        {"from", 'f', 0, G_OPTION_ARG_STRING, &c.from,
         "Input format (default: detected per file; --list-formats)", "FORMAT"},
        {"to", 't', 0, G_OPTION_ARG_STRING, &c.to, "Output format (required unless --send)",
         "FORMAT"},
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &c.output, "Write to FILE (default: stdout)",
         "FILE"},
        {"send", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_send_option,
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
         "--send: retries per batch on 5xx, 429 and connection errors (default 3)", "N"},
        {"timeout-ms", 0, 0, G_OPTION_ARG_INT64, &c.timeout_ms,
         "--send: timeout of one request (default 10000)", "MS"},
        {"send-give-up", 0, 0, G_OPTION_ARG_INT64, &c.send_give_up,
         "--send: give up after N failed rounds of retries in a row, each after a cool-down "
         "(default 8)",
         "N"},
        {"no-gzip", 0, 0, G_OPTION_ARG_NONE, &c.no_gzip, "--send: do not compress bodies", NULL},
        {"header", 'H', 0, G_OPTION_ARG_STRING_ARRAY, &c.headers,
         "--send: add an HTTP header (repeatable)", "'NAME: VALUE'"},
        {"user", 'u', 0, G_OPTION_ARG_STRING, &c.user, "--send: HTTP basic auth", "NAME:PASSWORD"},
        {"undelivered", 0, 0, G_OPTION_ARG_FILENAME, &c.undelivered,
         "--send: write the spans not delivered to FILE (in the format sent), to send them later",
         "FILE"},
        {"send-format", 0, 0, G_OPTION_ARG_STRING, &c.send_format,
         "--send: zipkin, jaeger-http, otlp-http, otlp-http-proto, jaeger-udp or "
         "jaeger-udp-binary (default: from the URL)",
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
    g_option_context_set_description(ctx, "Manual page: tracewire-convert(1).");
    GOptionGroup *group = g_option_group_new(NULL, NULL, NULL, &c, NULL);
    g_option_group_add_entries(group, entries);
    g_option_context_set_main_group(ctx, group);
    GError *gerr = NULL;
    if (!g_option_context_parse(ctx, &argc, &argv, &gerr)) {
        char msg[256];
        tw__cli_error("convert: %s%s (see 'tracewire convert --help')",
                      tw__cli_option_message(gerr, msg, sizeof msg),
                      tw__cli_option_hint(argc, argv, entries));
        g_error_free(gerr);
        g_option_context_free(ctx);
        /* GLib reverts the strings it set; --send's is ours (on_send_option). */
        g_free(c.send);
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
    const struct {
        const char *option, *value;
    } written[] = {
        {"--output", c.output}, {"--rejects", c.rejects}, {"--undelivered", c.undelivered}};
    for (size_t i = 0; i < sizeof written / sizeof written[0]; i++) {
        char why[512];
        if (!tw__cli_output_path_ok(written[i].option, written[i].value, why, sizeof why)) {
            rc = usage_error(ctx, "%s", why);
            goto free_cli;
        }
    }
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
    if (c.output && strcmp(c.output, "-") == 0) {
        /* "-o -" is standard output, as "-" is standard input and as the views read it. */
        g_free(c.output);
        c.output = NULL;
    }
    if (c.send && c.output) {
        rc = usage_error(ctx, "--send ships to a backend: it takes no --output");
        goto free_cli;
    }
    /* The options of --send mean nothing without it: given alone they are a
     * mistake (a forgotten --send), not something to ignore. */
    const struct {
        const char *name;
        bool is_given;
    } send_only[] = {{"--max-body-bytes", c.max_body_bytes != OPTION_UNSET},
                     {"--retries", c.retries != OPTION_UNSET},
                     {"--timeout-ms", c.timeout_ms != OPTION_UNSET},
                     {"--send-give-up", c.send_give_up != OPTION_UNSET},
                     {"--no-gzip", c.no_gzip},
                     {"--header", c.headers != NULL},
                     {"--user", c.user != NULL},
                     {"--send-format", c.send_format != NULL},
                     {"--undelivered", c.undelivered != NULL}};
    for (size_t i = 0; !c.send && i < sizeof send_only / sizeof send_only[0]; i++) {
        if (send_only[i].is_given) {
            rc = usage_error(ctx, "%s is an option of --send, which is not given",
                             send_only[i].name);
            goto free_cli;
        }
    }
    if (tw__cli_user_problem(c.user)) {
        rc = usage_error(ctx, "%s", tw__cli_user_problem(c.user));
        goto free_cli;
    }
    if (c.user && tw__cli_has_authorization(c.headers)) {
        rc = usage_error(ctx, "-u and an Authorization header both set the Authorization "
                              "header: give one");
        goto free_cli;
    }
    const struct {
        const option_range *range;
        int64_t value;
    } numeric[] = {{&RANGE_WINDOW, c.window},
                   {&RANGE_MAX_ANNOTATIONS, c.max_annotations},
                   {&RANGE_MAX_VALUE_BYTES, c.max_value_bytes},
                   {&RANGE_MAX_BODY_BYTES, c.max_body_bytes},
                   {&RANGE_RETRIES, c.retries},
                   {&RANGE_TIMEOUT_MS, c.timeout_ms},
                   {&RANGE_SEND_GIVE_UP, c.send_give_up}};
    for (size_t i = 0; i < sizeof numeric / sizeof numeric[0]; i++) {
        const option_range *range = numeric[i].range;
        int64_t v = numeric[i].value;
        if (v != OPTION_UNSET && (v < range->min || v > range->max)) {
            rc = usage_error(ctx, "%s takes %" PRId64 " to %" PRId64 ", not %" PRId64, range->name,
                             range->min, range->max, v);
            goto free_cli;
        }
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
    if ((c.map_file || c.map) && from != &twb_reader_custom) {
        rc = usage_error(ctx, "%s maps the fields of a custom log: it needs --from custom",
                         c.map ? "--map" : "--map-file");
        goto free_cli;
    }
    if (c.map_file || c.map) {
        char why[512];
        char *text = NULL;
        if (c.map_file) {
            size_t text_len;
            int err_no;
            char ferr[160];
            if (!tw__cli_read_file(c.map_file, TW_CLI_MAX_CONFIG_BYTES, &text, &text_len, &err_no,
                                   ferr, sizeof ferr)) {
                rc = usage_error(ctx, "--map-file %s: %s", c.map_file, ferr);
                goto free_cli;
            }
        }
        bool ok = (!text || twb_custom_map_parse(&custom, text, true, why, sizeof why)) &&
                  (!c.map || twb_custom_map_parse(&custom, c.map, false, why, sizeof why)) &&
                  twb_custom_map_check(&custom, why, sizeof why);
        free(text);
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
    /* Opening -o or --rejects truncates it: naming an input there, or the
     * file standard input reads, would empty the input before it is read. */
    const char *outs[] = {c.output, c.rejects, c.undelivered},
               *out_names[] = {"--output", "--rejects", "--undelivered"};
    for (size_t k = 0; k < 3; k++) {
        char why[512];
        if (!tw__cli_output_not_input(out_names[k], outs[k], c.files, why, sizeof why)) {
            rc = usage_error(ctx, "%s", why);
            goto free_custom_early;
        }
    }
    if (c.output && c.rejects && tw__cli_same_file(c.output, c.rejects)) {
        rc = usage_error(ctx, "--output and --rejects name the same file");
        goto free_custom_early;
    }
    if (c.undelivered && c.rejects && tw__cli_same_file(c.undelivered, c.rejects)) {
        rc = usage_error(ctx, "--undelivered and --rejects name the same file");
        goto free_custom_early;
    }
    /* As gzip does: binary bytes on a terminal are of no use and can leave
     * it in a strange state. */
    if (!c.send && !c.output && r.writer_vt && (r.writer_vt->target_flags & TWB_TARGET_BINARY) &&
        isatty(STDOUT_FILENO)) {
        rc = usage_error(ctx,
                         "--to %s writes binary: not to a terminal (name a file with -o, or pipe "
                         "it on)",
                         r.writer_vt->name);
        goto free_custom_early;
    }
    g_option_context_free(ctx);
    if (!any_input_opens(c.files)) {
        rc = TW_CLI_EXIT_USAGE; /* nothing written: --output is not even created */
        goto free_custom;
    }

    FILE *out = stdout;
    FILE *rejects = NULL;
    tw_error *e = NULL;
    unsigned int target_flags = 0;
    if (c.send) {
        twb_send_options so;
        twb_send_options_init(&so);
        if (c.max_body_bytes != OPTION_UNSET)
            so.max_body_bytes = (size_t)c.max_body_bytes;
        if (c.retries != OPTION_UNSET)
            so.max_retries = (unsigned int)c.retries;
        if (c.timeout_ms != OPTION_UNSET)
            so.timeout_ms = (unsigned int)c.timeout_ms;
        if (c.send_give_up != OPTION_UNSET)
            so.give_up_rounds = (unsigned int)c.send_give_up;
        so.on_refused = on_send_refused;
        so.refused_arg = &r;
        so.is_gzip = !c.no_gzip;
        so.headers = (const char *const *)c.headers;
        so.n_headers = c.headers ? g_strv_length(c.headers) : 0;
        so.user = c.user;
        so.format = c.send_format;
        if (c.undelivered) {
            r.undelivered.path = c.undelivered;
            so.on_undelivered = on_send_undelivered;
            so.undelivered_arg = &r.undelivered;
        }
        r.sender = twb_sender_new(c.send, &so, &e);
        if (!r.sender) {
            tw__cli_error("convert: %s", tw_error_message(e));
            tw_error_free(e);
            rc = TW_CLI_EXIT_USAGE;
            goto free_custom;
        }
        /* A --to is welcome when it names the bytes the destination takes
         * (--send-format otlp-http-proto sends otlp-proto). */
        const char *fmt = twb_sender_format(r.sender);
        const char *takes = send_format_output(fmt);
        if (c.to && (!takes || strcmp(c.to, takes) != 0)) {
            const char *other = send_format_for(fmt, c.to);
            char hint[128] = "";
            if (other)
                snprintf(hint, sizeof hint, "; --send-format %s sends %s", other, c.to);
            tw__cli_error("convert: --to %s conflicts with --send: it sends %s (%s%s%s); name "
                          "the matching --to, or none",
                          c.to, takes ? takes : "no --to format",
                          c.send_format ? "--send-format " : "format ", fmt, hint);
            rc = TW_CLI_EXIT_USAGE;
            goto close_out;
        }
        /* Before anything is read or sent: a FILE that cannot be written
         * is a usage error (nothing sent). */
        if (c.undelivered && !undelivered_open(&r.undelivered, takes, &r.opts)) {
            rc = TW_CLI_EXIT_USAGE;
            goto close_out;
        }
        /* The SDK's senders report failed requests through its logger. */
        tw_set_logger(tw_log_to_stderr, NULL, TW_LOG_WARN);
        target_flags = twb_sender_target_flags(r.sender);
    }
    /* Before the output and before reading: a --rejects that cannot be
     * written (a directory, a missing or read-only folder) stops the run at
     * once (exit 1, --output not created) rather than losing every rejected
     * record of a long run. */
    if (c.rejects && !(rejects = fopen(c.rejects, "wb"))) {
        tw__cli_error("convert: --rejects %s: cannot open for writing: %s", c.rejects,
                      strerror(errno));
        goto close_out;
    }
    if (!c.send) {
        if (c.output && !(out = fopen(c.output, "wb"))) {
            tw__cli_error("convert: %s: cannot open for writing: %s", c.output, strerror(errno));
            out = stdout;
            goto close_out;
        }
        r.out_name = c.output ? c.output : "standard output";
        /* Unbuffered: the writer hands over pieces of 256 KiB or more
         * (bridge/sinks/writers.c), each one write(2) with no copy into a
         * stdio buffer. */
        setvbuf(out, NULL, _IONBF, 0);
        r.writer = r.writer_vt->new_writer(out, &r.opts, &e);
        if (!r.writer) {
            tw__cli_error("convert: %s", tw_error_message(e));
            tw_error_free(e);
            goto close_out;
        }
        target_flags = r.writer_vt->target_flags;
    }
    twb_pipeline_config pc = {
        .command = "convert",
        .opts = r.opts,
        .assemble = {.window_spans = (size_t)c.window,
                     .jaeger_ids = (target_flags & TWB_TARGET_JAEGER_IDS) != 0,
                     .skew_adjust = skew_adjust,
                     .sample = c.sample},
        .from = from,
        .rejects = rejects,
        .rejects_name = c.rejects,
        .is_strict = c.is_strict,
        .has_progress = !c.no_progress && isatty(STDERR_FILENO),
        .progress_done = &r.written,
        .progress_done_label = "converted",
        .out = on_group,
        .out_arg = &r,
    };
    r.pipeline = twb_pipeline_new(&pc);
    if (!r.pipeline) {
        tw__cli_error("convert: out of memory");
        goto close_out;
    }
    if (pc.has_progress)
        twb_pipeline_measure(r.pipeline, c.files);

    if (!c.files || !c.files[0]) {
        twb_pipeline_read(r.pipeline, "-");
    } else {
        for (size_t i = 0; c.files[i]; i++) {
            if (!twb_pipeline_read(r.pipeline, c.files[i]))
                break;
        }
    }
    tw_error **fatal = twb_pipeline_fatal(r.pipeline);
    twb_pipeline_flush(r.pipeline);
    if (!*fatal) {
        if (r.sender)
            twb_sender_finish(r.sender, fatal);
        else
            name_output(&r, r.writer_vt->finish(r.writer, fatal), fatal);
    }
    if (r.sender)
        twb_sender_abandon(r.sender); /* anything still batched goes to --undelivered */
    twb_pipeline_progress_end(r.pipeline);

    twb_assemble_stats as;
    twb_pipeline_assemble_stats(r.pipeline, &as);
    twb_send_stats ss;
    if (r.sender)
        twb_sender_stats(r.sender, &ss);
    const twb_pipeline_counts *n = twb_pipeline_get_counts(r.pipeline);
    if (*fatal)
        tw__cli_error("convert: %s", tw_error_message(*fatal));
    else if (twb_pipeline_is_stopped(r.pipeline) && c.is_strict)
        tw__cli_error("convert: stopped at the first rejected record (--strict)");
    /* The outputs are closed before the summary, so that a write error
     * they show is said before it and the summary stays the last line. */
    if (r.writer)
        r.writer_vt->free_writer(r.writer);
    r.writer = NULL;
    bool is_written = close_outputs(&rejects, &out, &c);
    if (r.undelivered.writer && !undelivered_close(&r.undelivered))
        is_written = false;
    summary_notes(&r, r.sender ? &ss : NULL,
                  c.send_give_up != OPTION_UNSET ? (unsigned int)c.send_give_up
                                                 : TWB_SEND_DEFAULT_GIVE_UP,
                  c.rejects != NULL);
    summary(&r, &as, r.sender ? &ss : NULL);
    bool is_clean = !*fatal && is_written && n->rejected == 0 && n->failed_files == 0 &&
                    (!r.sender || (ss.failed == 0 && ss.too_large == 0));
    rc = is_clean ? TW_CLI_EXIT_OK : TW_CLI_EXIT_FAILURE;

close_out:
    twb_pipeline_free(r.pipeline);
    if (r.writer)
        r.writer_vt->free_writer(r.writer);
    twb_sender_free(r.sender);
    undelivered_free(&r.undelivered);
    if (!close_outputs(&rejects, &out, &c) && rc == TW_CLI_EXIT_OK)
        rc = TW_CLI_EXIT_FAILURE;
free_custom:
    twb_custom_map_clear(&custom);
    goto free_cli;
free_custom_early:
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
    g_free(c.undelivered);
    g_strfreev(c.headers);
    g_strfreev(c.files);
    return rc;
}
