/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/pipeline.c: "open inputs, detect, read, check, assemble", shared by
 * `tracewire convert` and the views (pipeline.h). Moved here from
 * convert_cmd.c unchanged in behaviour: the messages, the per-span bounds
 * (negative durations, the annotation cap, long values) and the detection on
 * a replayed head (pipes cannot seek back) are the ones docs/bridge.md
 * documents for convert.
 *
 * Single-threaded; memory: the assembly window and the largest record (the
 * readers stream), plus one 4 KiB detection head per open input.
 */
#include "pipeline.h"

#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SNIFF_BYTES 4096
/* The stdio buffer of an input (a buffer we allocate: glibc's setvbuf ignores
 * the size when it allocates the buffer itself, which left 8 KiB reads).
 * 64 KiB: the kernel's copy into a buffer this size measured a quarter of
 * its cost into 128 or 256 KiB ones (1 GiB of Dapper log: 0.13 s of kernel
 * time against 0.5 s, 2026-12-03), on every conversion path. The line reader
 * reads as much at a time, so that its reads of a regular file skip this
 * buffer (a pipe's go through the replay stream's). */
#define IO_BUFFER_BYTES ((size_t)64 << 10)
#define TRUNCATION_MARKER "...[truncated]"

struct twb_pipeline {
    twb_pipeline_config c;
    twb_procs *procs;
    twb_assembler *assembler;
    twb_pipeline_counts n;
    bool is_stopped;
    int64_t last_progress_ms, start_ms;
    uint64_t total_bytes, bytes_read; /* of the inputs that are regular files (progress) */
    FILE *direct;                     /* the regular file read without a replay, if any */
    const char *current;              /* the input being read, for messages */
    tw_error *fatal;                  /* what stopped the run */
    bool has_parts;                   /* a record too large to hold is being written to --rejects */
};

typedef struct pipeline_input {
    twb_input in;
    twb_pipeline *p;
    /* Detection (no --from): the reader chosen from the first bytes, which
     * the hint of on_reject needs; NULL when --from named the reader. */
    const twb_reader *detected;
    const uint8_t *head;
    size_t head_len;
    uint64_t emitted;
    bool has_hinted;
} pipeline_input;

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- progress ----------------------------------------------------------------------------- */

/* The progress line: a bar with the share of the input bytes read when the
 * inputs are regular files (their sizes are known), else counts only. Shown
 * at most 4 times a second, and only once a run has lasted a second (short
 * runs print nothing). */
static void progress(twb_pipeline *p, bool is_final)
{
    if (!p->c.has_progress)
        return;
    int64_t t = now_ms();
    if (!is_final && (t - p->last_progress_ms < 250 || t - p->start_ms < 1000))
        return;
    if (is_final && p->last_progress_ms == 0)
        return; /* nothing was shown: nothing to close */
    p->last_progress_ms = t;
    double secs = (double)(t - p->start_ms) / 1000.0;
    char bar[48] = "";
    if (p->total_bytes > 0) {
        off_t at = p->direct ? ftello(p->direct) : 0;
        double share =
            (double)(p->bytes_read + (at > 0 ? (uint64_t)at : 0)) / (double)p->total_bytes;
        if (share > 1.0)
            share = 1.0;
        int filled = (int)(share * 20.0);
        bar[0] = '[';
        for (int i = 0; i < 20; i++)
            bar[1 + i] = i < filled ? '#' : '.';
        snprintf(bar + 21, sizeof bar - 21, "] %3.0f%% ", share * 100.0);
    }
    char done[64] = "";
    if (p->c.progress_done)
        snprintf(done, sizeof done, ", %" PRIu64 " %s", *p->c.progress_done,
                 p->c.progress_done_label ? p->c.progress_done_label : "done");
    /* The file name is input: control bytes in it must not drive the terminal. */
    char name[256];
    size_t w = 0;
    for (const char *c = p->current ? p->current : ""; *c && w + 5 < sizeof name; c++) {
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            w += (size_t)snprintf(name + w, sizeof name - w, "\\x%02x", (unsigned char)*c);
        else
            name[w++] = *c;
    }
    name[w] = '\0';
    fprintf(stderr,
            "\r%s: %s: %s%s: %" PRIu64 " spans read%s, %" PRIu64 " rejected (%.0f spans/s)\x1b[K",
            TW_CLI_PROGRAM, p->c.command, bar, name, p->n.read, done, p->n.rejected,
            secs > 0 ? (double)p->n.read / secs : 0.0);
    if (is_final)
        fputc('\n', stderr);
}

void twb_pipeline_progress_end(twb_pipeline *p)
{
    progress(p, true);
}

/* ---- messages and rejects ----------------------------------------------------------------- */

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
static void hint_other_format(pipeline_input *pi)
{
    pi->has_hinted = true;
    const twb_reader *other =
        twb_reader_alternative(pi->head, pi->head_len, pi->detected, pi->in.opts);
    if (!other)
        return;
    if (pi->p->c.has_progress)
        fputs("\r\x1b[K", stderr);
    tw__cli_error("%s: the first record does not read as %s (detected from the first bytes) but "
                  "reads as %s: name the format with --from %s",
                  pi->in.name, pi->detected->name, other->name, other->name);
}

static bool rejects_write_failed(twb_pipeline *p)
{
    tw__set_error(&p->fatal, TW_E_IO, "--rejects %s: write error: %s",
                  p->c.rejects_name ? p->c.rejects_name : "file", strerror(errno));
    p->is_stopped = true;
    return false;
}

/* A piece of a record too large for its reader to hold: written at once, so
 * that --rejects gets the record whole, byte for byte, while memory stays
 * bounded. Its reject (on_reject) follows and ends the line. */
static bool on_reject_part(twb_input *in, const void *bytes, size_t len)
{
    twb_pipeline *p = ((pipeline_input *)in)->p;
    if (p->fatal)
        return false;
    p->has_parts = true;
    if (len && fwrite(bytes, 1, len, p->c.rejects) != len)
        return rejects_write_failed(p);
    return true;
}

static bool on_reject(twb_input *in, size_t line_no, const void *raw, size_t raw_len,
                      const char *reason)
{
    pipeline_input *pi = (pipeline_input *)in;
    twb_pipeline *p = pi->p;
    p->n.rejected++;
    if (p->n.shown_rejects++ < TWB_PIPELINE_SHOWN_MAX || p->c.is_strict) {
        char at[512];
        where(at, sizeof at, in->name, line_no);
        if (p->c.has_progress)
            fputs("\r\x1b[K", stderr);
        tw__cli_error("%s: %s", at, reason); /* quotes input: escaped */
    }
    if (pi->detected && !pi->has_hinted && pi->emitted == 0)
        hint_other_format(pi);
    /* A record too large to hold came in pieces (on_reject_part): this ends it. */
    bool has_parts = p->has_parts;
    p->has_parts = false;
    if (p->c.rejects && (raw_len || has_parts) && !p->fatal) {
        if ((raw_len && fwrite(raw, 1, raw_len, p->c.rejects) != raw_len) ||
            fputc('\n', p->c.rejects) == EOF)
            return rejects_write_failed(p);
    }
    if (p->fatal)
        return false;
    if (p->c.is_strict) {
        p->is_stopped = true;
        return false;
    }
    return true;
}

static void on_warn(twb_input *in, size_t line_no, const char *reason)
{
    twb_pipeline *p = ((pipeline_input *)in)->p;
    p->n.warnings++;
    if (p->n.shown_warnings++ < TWB_PIPELINE_SHOWN_MAX) {
        char at[512];
        where(at, sizeof at, in->name, line_no);
        if (p->c.has_progress)
            fputs("\r\x1b[K", stderr);
        tw__cli_print(stderr, "%s: %s: warning: %s", TW_CLI_PROGRAM, at, reason);
    }
}

/* ---- per-span checks and bounds ------------------------------------------------------------ */

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

static bool bound_values(twb_pipeline *p, tw__span_data *s, tw__tag *tags, size_t n)
{
    size_t cap = p->c.opts.max_value_bytes;
    for (size_t i = 0; i < n; i++) {
        tw__tag *t = &tags[i];
        /* The length first: it rules out most tags in one test (a number's
         * len is unused, so the type still decides). */
        if (t->len > cap && (t->type == TW_VALUE_STRING || t->type == TW_VALUE_BINARY)) {
            if (!truncate_value(s, t, cap))
                return false;
            p->n.truncated++;
        }
    }
    return true;
}

/* The checks every span passes whatever its reader (docs/bridge.md, "Time"
 * and "Values"): a negative duration becomes 1 µs (and is warned); the
 * annotation cap keeps the first tags, then the first logs; long values are
 * cut with a marker. False on allocation failure. */
static bool check_span(twb_pipeline *p, twb_input *in, tw__span_data *s)
{
    if (s->duration_us < 0) {
        char id[17];
        snprintf(id, sizeof id, "%016" PRIx64, s->span_id);
        twb_warn(in, 0,
                 "span %s ends before it starts (duration %" PRId64 " us): duration set "
                 "to 1 us",
                 id, s->duration_us);
        s->duration_us = 1;
        p->n.fixed_durations++;
    }
    /* A span that ended within the microsecond it began lasted at most 1 µs:
     * Zipkin and Jaeger read a 0 as "unknown" (Brave rounds up the same way). */
    if (s->duration_us == 0 && !s->is_duration_unknown)
        s->duration_us = 1;
    size_t cap = p->c.opts.max_annotations;
    if (cap && s->n_tags + s->n_logs > cap) {
        size_t keep_tags = s->n_tags < cap ? s->n_tags : cap;
        size_t keep_logs = cap - keep_tags;
        if (keep_logs > s->n_logs)
            keep_logs = s->n_logs;
        size_t dropped = s->n_tags + s->n_logs - keep_tags - keep_logs;
        s->n_tags = keep_tags;
        s->n_logs = keep_logs;
        p->n.dropped_annotations += dropped;
        tw_value v = {.type = TW_VALUE_INT64, .as.i64 = (int64_t)dropped};
        if (!twb_tag_value(s, "tracewire.dropped_annotations", &v))
            return false;
    }
    if (!bound_values(p, s, s->tags, s->n_tags))
        return false;
    for (size_t i = 0; i < s->n_logs; i++) {
        if (!bound_values(p, s, s->logs[i].fields, s->logs[i].n_fields))
            return false;
    }
    return true;
}

void twb_pipeline_span_rejected(twb_pipeline *p, const twb_span *span, const char *reason)
{
    p->n.rejected++;
    if (p->n.shown_rejects++ < TWB_PIPELINE_SHOWN_MAX || p->c.is_strict) {
        char trace[33], id[17];
        tw__trace_id_hex(span->data->trace_id_high, span->data->trace_id_low, trace);
        tw__hex64(span->data->span_id, id);
        if (p->c.has_progress)
            fputs("\r\x1b[K", stderr);
        tw__cli_error("span %s of trace %s (\"%.60s\") left out of the output: %s", id, trace,
                      span->data->operation ? span->data->operation : "", reason);
    }
}

static bool on_emit(twb_input *in, tw__span_data *span, const tw__process *process)
{
    twb_pipeline *p = ((pipeline_input *)in)->p;
    ((pipeline_input *)in)->emitted++;
    if (p->is_stopped) {
        tw__span_data_unref(span);
        return false;
    }
    p->n.read++;
    const tw__process *interned = twb_procs_intern_stamped(p->procs, process, in->process_stamp);
    if (!interned || !check_span(p, in, span)) {
        tw__span_data_unref(span);
        tw__set_error(&p->fatal, TW_E_NOMEM, "out of memory");
        p->is_stopped = true;
        return false;
    }
    if (p->c.keep && !p->c.keep(p->c.keep_arg, span, interned)) {
        tw__span_data_unref(span);
        p->n.filtered++;
        return true;
    }
    twb_span s = {.data = span, .process = interned};
    if (twb_assembler_add(p->assembler, s, &p->fatal) != TW_OK) {
        p->is_stopped = true;
        return false;
    }
    if ((p->n.read & 1023) == 0)
        progress(p, false);
    return true;
}

/* ---- inputs ------------------------------------------------------------------------------- */

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
    /* End of file is final: a terminal delivers more after Ctrl-D, and
     * glibc's fread of a large block reads again past it, so typed input
     * took a second Ctrl-D to end. */
    if (feof(rp->rest))
        return 0;
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

bool twb_pipeline_read(twb_pipeline *p, const char *path)
{
    bool is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    p->current = name;
    p->n.files++;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    /* A command typed without its FILE waits at the terminal: say why. */
    if (is_stdin && isatty(STDIN_FILENO))
        tw__cli_error("%s: reading spans from the terminal: name a FILE, or end the input with "
                      "Ctrl-D",
                      p->c.command);
    if (!f) {
        tw__cli_error("%s: cannot open: %s", name, strerror(errno));
        p->n.failed_files++;
        return true;
    }
    char *stream_buffer = NULL;
    /* A regular file is read straight, from its start again after detection:
     * the replay stream below copies every byte through its own buffer
     * (glibc's fopencookie streams do not hand large reads to the caller's
     * memory): a tenth of the instructions of a Dapper log conversion under
     * callgrind, 2026-12-03. Its buffer
     * is as large as the replay's would be: the readers' large reads skip
     * it, small ones need few system calls. */
    struct stat sb;
    bool is_direct = !is_stdin && fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
    if (is_direct && (stream_buffer = malloc(IO_BUFFER_BYTES)) != NULL)
        setvbuf(f, stream_buffer, _IOFBF, IO_BUFFER_BYTES);
    replay *rp = calloc(1, sizeof *rp);
    if (!rp) {
        tw__set_error(&p->fatal, TW_E_NOMEM, "out of memory");
        if (!is_stdin)
            fclose(f);
        free(stream_buffer);
        return false;
    }
    rp->rest = f;
    rp->bytes_read = &p->bytes_read;
    rp->len = fread(rp->head, 1, SNIFF_BYTES, f);
    if (!is_direct)
        p->bytes_read += rp->len;
    if (rp->len < SNIFF_BYTES && ferror(f)) {
        tw__cli_error("%s: read error: %s", name, strerror(errno));
        p->n.failed_files++;
        goto done;
    }
    const twb_reader *reader = p->c.from ? p->c.from : twb_reader_detect(rp->head, rp->len);
    if (!reader) {
        if (rp->len == 0) {
            goto done; /* an empty file holds no spans: nothing to say */
        }
        tw__cli_error("%s: cannot tell the input format from its first bytes; name it with "
                      "--from (see 'tracewire %s --help')",
                      name, p->c.command);
        p->n.failed_files++;
        goto done;
    }
    FILE *stream = f;
    if (is_direct && fseeko(f, 0, SEEK_SET) != 0) {
        tw__cli_error("%s: cannot read from the start again: %s", name, strerror(errno));
        p->n.failed_files++;
        goto done;
    }
    if (!is_direct) {
        cookie_io_functions_t io = {.read = replay_read, .close = replay_close};
        stream = fopencookie(rp, "rb", io);
        if (!stream) {
            tw__set_error(&p->fatal, TW_E_NOMEM, "out of memory");
            goto done;
        }
        /* Large reads: 8 KiB stdio buffers made the kernel copies a tenth of
         * a Thrift conversion (bench profile). The underlying file needs no
         * large buffer of its own: glibc's fread reads a request of a
         * buffer's size or more straight into the caller's memory, here this
         * buffer. Without the buffer (no memory) the stream keeps glibc's
         * small one. */
        stream_buffer = malloc(IO_BUFFER_BYTES);
        if (stream_buffer)
            setvbuf(stream, stream_buffer, _IOFBF, IO_BUFFER_BYTES);
    } else {
        p->direct = f;
    }
    pipeline_input pi = {.in = {.name = name,
                                .opts = &p->c.opts,
                                .emit = on_emit,
                                .reject = on_reject,
                                .reject_part = p->c.rejects ? on_reject_part : NULL,
                                .warn = on_warn},
                         .p = p,
                         .detected = p->c.from ? NULL : reader,
                         .head = rp->head,
                         .head_len = rp->len};
    tw_error *e = NULL;
    tw_status st = reader->read(stream, &pi.in, &e);
    if (is_direct) {
        p->direct = NULL;
        p->bytes_read += (uint64_t)sb.st_size;
    } else {
        fclose(stream);
    }
    if (st != TW_OK && st != TW_E_STATE) {
        tw__cli_error("%s", tw_error_message(e));
        p->n.failed_files++;
    }
    tw_error_free(e);
done:
    free(rp);
    if (!is_stdin)
        fclose(f);
    free(stream_buffer); /* after the file that may use it */
    return !p->is_stopped && !p->fatal;
}

/* ---- life cycle ---------------------------------------------------------------------------- */

twb_pipeline *twb_pipeline_new(const twb_pipeline_config *config)
{
    twb_pipeline *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->c = *config;
    p->procs = twb_procs_new();
    p->assembler = p->procs ? twb_assembler_new(&p->c.assemble, p->c.out, p->c.out_arg) : NULL;
    if (!p->assembler) {
        twb_pipeline_free(p);
        return NULL;
    }
    p->start_ms = now_ms();
    return p;
}

void twb_pipeline_free(twb_pipeline *p)
{
    if (!p)
        return;
    twb_assembler_free(p->assembler);
    twb_procs_free(p->procs);
    tw_error_free(p->fatal);
    free(p);
}

void twb_pipeline_measure(twb_pipeline *p, char *const *paths)
{
    for (size_t i = 0; paths && paths[i]; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") != 0 && stat(paths[i], &st) == 0 && S_ISREG(st.st_mode))
            p->total_bytes += (uint64_t)st.st_size;
    }
}

tw_status twb_pipeline_flush(twb_pipeline *p)
{
    if (p->fatal)
        return tw_error_status(p->fatal);
    return twb_assembler_flush(p->assembler, &p->fatal);
}

const twb_pipeline_counts *twb_pipeline_get_counts(const twb_pipeline *p)
{
    return &p->n;
}

void twb_pipeline_assemble_stats(const twb_pipeline *p, twb_assemble_stats *st)
{
    twb_assembler_stats(p->assembler, st);
}

void twb_pipeline_warn_split(const twb_pipeline *p)
{
    twb_assemble_stats st;
    twb_assembler_stats(p->assembler, &st);
    if (st.split_traces == 0)
        return;
    const char *s = st.split_traces == 1 ? "" : "s";
    size_t window = p->c.assemble.window_spans;
    if (window > 0)
        tw__cli_warn("%s: %" PRIu64 " trace%s went out in parts: %s spans arrived further apart "
                     "than the window holds (--window %zu), so each part was assembled on its own "
                     "(merging, duplicates, Jaeger ids, clock skew); a larger --window joins them",
                     p->c.command, st.split_traces, s, st.split_traces == 1 ? "its" : "their",
                     window);
    else
        tw__cli_warn("%s: %" PRIu64 " trace%s went out in parts: with --window 0 a part ends at "
                     "a span of another trace or at 1024 spans, and each part was assembled on "
                     "its own; --window N holds N spans to join them",
                     p->c.command, st.split_traces, s);
}

bool twb_pipeline_is_stopped(const twb_pipeline *p)
{
    return p->is_stopped;
}

tw_error **twb_pipeline_fatal(twb_pipeline *p)
{
    return &p->fatal;
}
