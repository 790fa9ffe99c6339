/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/view_cmd.h: the command-line side the four views share
 * (internal): the input options (the same as `tracewire convert`'s: --from,
 * --window, --skew, --time-unit, --id-base, --map, ...), the filters
 * (--trace, --service, --operation, --since, --until, --min-duration,
 * --error), running the input pipeline with a callback per selected trace,
 * and the terminal (width, colour, box drawing). The views themselves are in
 * show.c (+ html.c), deps.c, stats.c and diff.c.
 *
 * Ownership: a twv_cli owns the option strings GOption filled in; free it
 * with twv_cli_clear. Locking: none; each command runs on one thread.
 */
#ifndef TW_BRIDGE_VIEW_CMD_H
#define TW_BRIDGE_VIEW_CMD_H

#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#include "pipeline.h"
#include "views/views.h"

typedef enum twv_when { TWV_AUTO = 0, TWV_ALWAYS, TWV_NEVER } twv_when;

/* The narrowest width show can draw every line in: the duration column (11
 * columns with its space) and a label of 14, which holds the depth prefix of
 * the deepest span a trace can have ("[9999999] `- ", the window's 10,000,000
 * spans in one chain) and one column of its name. --width below it is a usage
 * error; a terminal or COLUMNS below it counts as that width. */
#define TWV_MIN_WIDTH 25
#define TWV_MAX_WIDTH 100000

typedef struct twv_cli {
    const char *command; /* "show", "deps", ... */
    /* input options, as convert's */
    char *from, *time_unit, *id_base, *skew, *map, *map_file, *scribe_category;
    gint64 window;
    gboolean no_progress;
    /* filters */
    char *trace, *service, *operation, *since, *until, *min_duration;
    gboolean error_only;
    /* output */
    char *output;
    twv_when color, unicode;
    gint64 width; /* --width; 0 when not given */
    char **files; /* the remaining arguments */
    /* derived by twv_cli_finish */
    twv_filter filter;
    twb_options opts;
    twb_custom_map custom;
    const twb_reader *reader;
    bool skew_adjust;
} twv_cli;

/* Sets defaults; @command names the view in messages. */
void twv_cli_init(twv_cli *c, const char *command);
/* A GOption context whose main group holds the shared options (inputs,
 * filters, and when @with_output, -o and the terminal options) and then
 * @entries (NULL-terminated). @parameter and @summary as
 * g_option_context_new / set_summary; a @parameter that starts with "-" (a
 * summary line) follows "[FILE...]" in the usage line, any other names the
 * operands itself ("A B [FILE...] - ..."). The description names the
 * view's manual page, tracewire-VIEW(1) (a view that sets a description
 * of its own ends it with that line). */
GOptionContext *twv_cli_context(twv_cli *c, const char *parameter, const char *summary,
                                const GOptionEntry *entries, bool with_output);
/* Parses argv; on a usage error prints it and returns false. */
bool twv_cli_parse(twv_cli *c, GOptionContext *ctx, int *argc, char ***argv);
/* Checks and converts the shared options; on a usage error prints it and
 * returns false. */
bool twv_cli_finish(twv_cli *c);
void twv_cli_clear(twv_cli *c);
/* Prints "tracewire: VIEW: message (see 'tracewire VIEW --help')". */
void twv_usage_error(const twv_cli *c, const char *fmt, ...) TW_PRINTF(2, 3);

/* ---- running ------------------------------------------------------------------------------ */

/* What a view's callback returns. */
enum { TWV_CONTINUE = 0, TWV_DONE = 1, TWV_FAIL = -1 };
/* Called with each selected trace (built, filtered; @t is reused after the
 * call). Returns TWV_CONTINUE, TWV_DONE (stop reading: the view has what it
 * needs) or TWV_FAIL (stop with an error already reported). */
typedef int (*twv_trace_fn)(void *arg, twv_trace *t);

typedef struct twv_run_result {
    uint64_t traces;   /* groups assembled */
    uint64_t selected; /* traces the filters kept and the callback saw */
    uint64_t spans;    /* spans in the selected traces */
    bool is_failed;    /* an input could not be read, records were rejected, or the run failed */
    bool is_stopped;   /* the callback stopped the run (TWV_DONE or TWV_FAIL) */
    bool is_unread;    /* not one input could be read (each was reported) */
} twv_run_result;

/* Reads @files (NULL or empty: stdin) through the pipeline (Jaeger ids on)
 * and calls @fn for each trace @filter selects, with the critical path
 * computed when @with_critical. Prints a short summary of problems (rejects,
 * unreadable inputs) on stderr. Returns false only when the run could not
 * start (out of memory, reported). */
bool twv_run(const twv_cli *c, char *const *files, const twv_filter *filter, bool with_critical,
             bool with_progress, twv_trace_fn fn, void *arg, twv_run_result *res);

/* The top-level items of a trace as the views draw them: each root that is
 * not an orphan, and each group of orphans that name the same missing
 * parent, placed where its first orphan is. For each place r in t->roots:
 * first[r] is true when the root begins an item; next[r] is the place of
 * the next orphan of its group, TWV_NONE after the last (and for a root that
 * is not an orphan). @next and @first hold t->n_roots entries. Linear in
 * the roots. Returns the number of items. */
size_t twv_root_groups(const twv_trace *t, uint32_t *next, bool *first);

/* ---- output and terminal ------------------------------------------------------------------ */

typedef struct twv_term {
    bool is_tty;  /* stdout is a terminal (and no --output) */
    bool color;   /* escape codes */
    bool unicode; /* box drawing and block characters */
    int width;    /* columns */
} twv_term;

/* Decides colour, box drawing and width for @out (docs/views.md, "Terminal
 * output"): colours and Unicode on a terminal (colours unless NO_COLOR is
 * set and not empty; Unicode when the locale's charset is UTF-8), neither
 * otherwise, unless --color / --unicode ask; the width is --width, else
 * the terminal's, else COLUMNS, else 80 on a terminal and 120 on a pipe;
 * never below TWV_MIN_WIDTH. */
void twv_term_detect(twv_term *term, const twv_cli *c, FILE *out);

/* False (with a usage error printed) when @path, the file an @option would
 * write, is one of the inputs (opening it would empty the input before it
 * is read) or looks like an option taken as its value (tw__cli_output_path_ok).
 * NULL and "-" are stdout. */
bool twv_check_output(const twv_cli *c, const char *path, const char *option);
/* The name of the span format detected in the first bytes of the regular
 * file @path, or NULL (missing, not a regular file, unreadable, not spans). */
const char *twv_file_span_format(const char *path);

/* The output of a view: standard output, or the file --output (show:
 * --html) names. The file is opened before the inputs are read, so that a
 * path that cannot be written is an error at once, not after a long read;
 * an existing file is emptied only when the view starts writing
 * (twv_output_start). A run that writes nothing (no spans on standard
 * input, every input unreadable, nothing matched in show) leaves an
 * existing file as it was and removes the one it created. */
typedef struct twv_output {
    FILE *f;          /* stdout, or the file */
    const char *path; /* NULL: standard output */
    bool is_created;  /* the run created the file */
    bool is_started;  /* twv_output_start ran */
} twv_output;

/* Opens @path (NULL or "-": standard output) for writing without emptying
 * it. False on failure (reported). */
bool twv_output_open(twv_output *o, const twv_cli *c, const char *path);
/* Before the first byte: empties an existing regular file. Once per run;
 * false on failure (reported). */
bool twv_output_start(twv_output *o, const twv_cli *c);
/* Flushes and closes the file (never stdout); removes a file the run
 * created and never started. False on a write error (reported). */
bool twv_output_close(twv_output *o, const twv_cli *c);

/* Appends @s to @g made safe for a terminal and cut to @max_cols display
 * columns (an ellipsis marks a cut; "~" without @unicode); returns the
 * columns used. Control characters (C0, DEL, C1) become '?', invalid UTF-8
 * bytes '?' or U+FFFD: nothing from the input can move the cursor or change
 * colours. Wide (CJK) characters count two columns, combining marks none. */
int twv_put_text(GString *g, const char *s, int max_cols, bool unicode);
/* The display columns of @s as twv_put_text would write it. */
int twv_text_cols(const char *s);

/* Durations for people, always with a unit: "850 us", "12.504 ms",
 * "3.204 s", "302.1 s", from 100,000 s "27.8 h", from 100,000 h "4166.7 d";
 * "?" when unknown (< 0). At most 10 characters for anything under a million
 * days (any span time or extent; the views' columns are that wide). */
void twv_format_duration(int64_t us, char *buf, size_t size);
/* A timestamp in UTC, RFC 3339 with milliseconds: 2024-05-01T10:00:00.123Z. */
void twv_format_time(int64_t us, char *buf, size_t size);

/* ---- the HTML page (html.c) ------------------------------------------------------------- */

typedef struct twv_html twv_html;
/* Starts the page in @out (borrowed). */
twv_html *twv_html_new(FILE *out, const char *title);
/* Adds one trace (its critical path computed). False on a write error. */
bool twv_html_add(twv_html *h, const twv_trace *t);
/* Ends the page; false on a write error. Frees @h. */
bool twv_html_finish(twv_html *h);

#endif /* TW_BRIDGE_VIEW_CMD_H */
