/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/views/view_cmd.c: what `tracewire show`, `deps`, `stats` and
 * `diff` share on the command line (view_cmd.h): the options, the run over
 * the inputs (the convert pipeline with Jaeger ids, one twv_trace built per
 * assembled group, filtered, handed to the view), the terminal and the
 * formatting of times.
 *
 * Inputs are read exactly as `tracewire convert --to jaeger-json` reads
 * them (same readers, detection, checks, window and assembly), so every view
 * agrees with what a Jaeger backend would hold. Exit status of the views:
 * 1 when an input could not be read or a record was rejected (the rest is
 * still shown, as convert converts the rest). Single-threaded.
 */
#include "views/view_cmd.h"

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_WINDOW_SPANS 10000
#define DEFAULT_MAX_ANNOTATIONS 1000
#define DEFAULT_MAX_VALUE_BYTES ((size_t)64 * 1024)

void twv_cli_init(twv_cli *c, const char *command)
{
    memset(c, 0, sizeof *c);
    c->command = command;
    c->window = DEFAULT_WINDOW_SPANS;
}

void twv_usage_error(const twv_cli *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tw__cli_error("%s: %s (see 'tracewire %s --help')", c->command, msg, c->command);
}

static gboolean parse_when(const char *value, twv_when *when, twv_when bare, GError **error,
                           const char *option)
{
    if (!value)
        *when = bare;
    else if (strcmp(value, "auto") == 0)
        *when = TWV_AUTO;
    else if (strcmp(value, "always") == 0 || strcmp(value, "yes") == 0)
        *when = TWV_ALWAYS;
    else if (strcmp(value, "never") == 0 || strcmp(value, "no") == 0)
        *when = TWV_NEVER;
    else {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "%s takes auto, always or never, not '%s'", option, value);
        return FALSE;
    }
    return TRUE;
}

static gboolean on_color(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)name;
    return parse_when(value, &((twv_cli *)data)->color, TWV_ALWAYS, error, "--color");
}

static gboolean on_unicode(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)name;
    return parse_when(value, &((twv_cli *)data)->unicode, TWV_ALWAYS, error, "--unicode");
}

static gboolean on_ascii(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)name;
    (void)value;
    (void)error;
    ((twv_cli *)data)->unicode = TWV_NEVER;
    return TRUE;
}

static gboolean on_width(const gchar *name, const gchar *value, gpointer data, GError **error)
{
    (void)name;
    char *end = NULL;
    errno = 0;
    gint64 n = g_ascii_strtoll(value, &end, 10);
    if (errno || end == value || *end || n < TWV_MIN_WIDTH || n > TWV_MAX_WIDTH) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--width takes %d to %d columns, not '%s'", TWV_MIN_WIDTH, TWV_MAX_WIDTH,
                    value);
        return FALSE;
    }
    ((twv_cli *)data)->width = n;
    return TRUE;
}

GOptionContext *twv_cli_context(twv_cli *c, const char *parameter, const char *summary,
                                const GOptionEntry *entries, bool with_output)
{
    const GOptionEntry shared[] = {
        {"trace", 0, 0, G_OPTION_ARG_STRING, &c->trace,
         "Only the trace(s) whose id starts with PREFIX (hex)", "PREFIX"},
        {"service", 0, 0, G_OPTION_ARG_STRING, &c->service,
         "Only traces with a span of this service (any case)", "NAME"},
        {"operation", 0, 0, G_OPTION_ARG_STRING, &c->operation,
         "Only traces with a span of this operation (with --service: the same span)", "NAME"},
        {"since", 0, 0, G_OPTION_ARG_STRING, &c->since,
         "Only traces that start at or after TIME (2024-05-01T10:00:00Z, a date, @SECONDS, "
         "or a duration ago: 2h)",
         "TIME"},
        {"until", 0, 0, G_OPTION_ARG_STRING, &c->until, "Only traces that start before TIME",
         "TIME"},
        {"min-duration", 0, 0, G_OPTION_ARG_STRING, &c->min_duration,
         "Only traces with a span lasting at least DURATION (250ms, 1.5s)", "DURATION"},
        {"error", 0, 0, G_OPTION_ARG_NONE, &c->error_only, "Only traces with an error span", NULL},
        {"from", 'f', 0, G_OPTION_ARG_STRING, &c->from,
         "Input format (default: detected per file; 'tracewire convert --list-formats')", "FORMAT"},
        {"window", 'w', 0, G_OPTION_ARG_INT64, &c->window,
         "Spans held to assemble traces, as convert (default 10000)", "N"},
        {"skew", 0, 0, G_OPTION_ARG_STRING, &c->skew,
         "Clock skew correction: off (default: skew is shown, not hidden) or adjust", "MODE"},
        {"time-unit", 0, 0, G_OPTION_ARG_STRING, &c->time_unit,
         "Unit of input timestamps: auto (default), s, ms, us, ns", "UNIT"},
        {"id-base", 0, 0, G_OPTION_ARG_STRING, &c->id_base,
         "Base of textual ids: auto (default), hex, dec", "BASE"},
        {"scribe-category", 0, 0, G_OPTION_ARG_STRING, &c->scribe_category,
         "Scribe category kept by zipkin-v1-thrift (default zipkin)", "NAME"},
        {"map", 0, 0, G_OPTION_ARG_STRING, &c->map,
         "custom: field mapping, e.g. trace_id=tid,span_id=sid,start=ts", "SPEC"},
        {"map-file", 0, 0, G_OPTION_ARG_FILENAME, &c->map_file, "custom: mapping file", "FILE"},
        {"no-progress", 0, 0, G_OPTION_ARG_NONE, &c->no_progress,
         "No progress line (stats, deps, diff show one on stderr when it is a terminal and the "
         "run lasts over a second)",
         NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    const GOptionEntry output[] = {
        {"output", 'o', 0, G_OPTION_ARG_FILENAME, &c->output, "Write to FILE (default: stdout)",
         "FILE"},
        {"color", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer)on_color,
         "Colours: auto (default: on a terminal, unless NO_COLOR is set), always, never", "[WHEN]"},
        {"unicode", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer)on_unicode,
         "Box drawing and block bars: auto (default: on a UTF-8 terminal), always, never",
         "[WHEN]"},
        {"ascii", 0, G_OPTION_FLAG_NO_ARG, G_OPTION_ARG_CALLBACK, (gpointer)on_ascii,
         "The same as --unicode=never", NULL},
        {"width", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)on_width,
         "Columns, 25 to 100000 (default: the terminal's; on a pipe COLUMNS, else 120)", "N"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    /* GLib prints the remaining arguments' description before @parameter: a
     * view whose @parameter names its operands gets none here, or its usage
     * line would read "[FILE...] A B [FILE...]". */
    const GOptionEntry rest[] = {{G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &c->files,
                                  NULL, parameter[0] == '-' ? "[FILE...]" : NULL},
                                 {NULL, 0, 0, 0, NULL, NULL, NULL}};
    char *prgname = g_strdup_printf("%s %s", TW_CLI_PROGRAM, c->command);
    g_set_prgname(prgname); /* usage reads "tracewire show ..." */
    g_free(prgname);
    GOptionContext *ctx = g_option_context_new(parameter);
    g_option_context_set_summary(ctx, summary);
    char *page = g_strdup_printf("Manual page: %s-%s(1).", TW_CLI_PROGRAM, c->command);
    g_option_context_set_description(ctx, page); /* copies */
    g_free(page);
    GOptionGroup *group = g_option_group_new(NULL, NULL, NULL, c, NULL);
    if (entries)
        g_option_group_add_entries(group, entries);
    g_option_group_add_entries(group, shared);
    if (with_output)
        g_option_group_add_entries(group, output);
    g_option_group_add_entries(group, rest);
    g_option_context_set_main_group(ctx, group);
    return ctx;
}

bool twv_cli_parse(twv_cli *c, GOptionContext *ctx, int *argc, char ***argv)
{
    /* `--color` and `--unicode` alone mean "always": GOption would take the
     * next argument (a FILE) as their optional value, so they are spelled out
     * here before it parses; `--color=WHEN` is the form with a value. */
    for (int i = 1; i < *argc; i++) {
        if (strcmp((*argv)[i], "--") == 0)
            break;
        if (strcmp((*argv)[i], "--color") == 0)
            (*argv)[i] = (char *)"--color=always";
        else if (strcmp((*argv)[i], "--unicode") == 0)
            (*argv)[i] = (char *)"--unicode=always";
    }
    GError *gerr = NULL;
    if (!g_option_context_parse(ctx, argc, argv, &gerr)) {
        char msg[256];
        twv_usage_error(c, "%s", tw__cli_option_message(gerr, msg, sizeof msg));
        g_error_free(gerr);
        return false;
    }
    return true;
}

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

bool twv_cli_finish(twv_cli *c)
{
    char why[512];
    twv_filter *f = &c->filter;
    memset(f, 0, sizeof *f);
    if (c->trace && !twv_parse_trace_prefix(c->trace, f->trace_prefix, why, sizeof why)) {
        twv_usage_error(c, "--trace: %s", why);
        return false;
    }
    f->service = c->service;
    f->operation = c->operation;
    f->error_only = c->error_only;
    int64_t now = now_us();
    if (c->since) {
        if (!twv_parse_time(c->since, now, &f->since_us, why, sizeof why)) {
            twv_usage_error(c, "--since: %s", why);
            return false;
        }
        f->has_since = true;
    }
    if (c->until) {
        if (!twv_parse_time(c->until, now, &f->until_us, why, sizeof why)) {
            twv_usage_error(c, "--until: %s", why);
            return false;
        }
        f->has_until = true;
    }
    if (c->min_duration) {
        if (!twv_parse_duration(c->min_duration, &f->min_duration_us, why, sizeof why)) {
            twv_usage_error(c, "--min-duration: %s", why);
            return false;
        }
        f->has_min_duration = true;
    }
    if (c->window < 0) {
        twv_usage_error(c, "--window must be >= 0");
        return false;
    }
    c->opts.max_value_bytes = DEFAULT_MAX_VALUE_BYTES;
    c->opts.max_annotations = DEFAULT_MAX_ANNOTATIONS;
    c->opts.scribe_category = c->scribe_category ? c->scribe_category : "zipkin";
    if (c->from && !(c->reader = twb_reader_find(c->from))) {
        twv_usage_error(c, "unknown input format '%s' ('tracewire convert --list-formats')",
                        c->from);
        return false;
    }
    if (c->skew && strcmp(c->skew, "adjust") == 0) {
        c->skew_adjust = true;
    } else if (c->skew && strcmp(c->skew, "off") != 0) {
        twv_usage_error(c, "--skew takes off or adjust, not '%s'", c->skew);
        return false;
    }
    if (c->time_unit) {
        int unit = (int)twb_time_unit_parse(c->time_unit);
        if (unit < 0) {
            twv_usage_error(c, "--time-unit takes auto, s, ms, us or ns, not '%s'", c->time_unit);
            return false;
        }
        c->opts.time_unit = (twb_time_unit)unit;
    }
    if (c->id_base) {
        if (strcmp(c->id_base, "hex") == 0) {
            c->opts.id_base = TWB_ID_HEX;
        } else if (strcmp(c->id_base, "dec") == 0) {
            c->opts.id_base = TWB_ID_DEC;
        } else if (strcmp(c->id_base, "auto") != 0) {
            twv_usage_error(c, "--id-base takes auto, hex or dec, not '%s'", c->id_base);
            return false;
        }
    }
    if (c->map_file || c->map) {
        char *text = NULL;
        if (c->map_file) {
            size_t text_len;
            int err_no;
            char ferr[160];
            if (!tw__cli_read_file(c->map_file, TW_CLI_MAX_CONFIG_BYTES, &text, &text_len, &err_no,
                                   ferr, sizeof ferr)) {
                twv_usage_error(c, "--map-file %s: %s", c->map_file, ferr);
                return false;
            }
        }
        bool ok = (!text || twb_custom_map_parse(&c->custom, text, true, why, sizeof why)) &&
                  (!c->map || twb_custom_map_parse(&c->custom, c->map, false, why, sizeof why));
        free(text);
        if (!ok) {
            twv_usage_error(c, "%s: %s", c->map ? "--map" : "--map-file", why);
            return false;
        }
        c->opts.custom = &c->custom;
    } else if (c->reader == &twb_reader_custom) {
        twv_usage_error(c, "--from custom needs a field mapping: --map or --map-file");
        return false;
    }
    return true;
}

void twv_cli_clear(twv_cli *c)
{
    char **strings[] = {&c->from,         &c->time_unit, &c->id_base,         &c->skew,
                        &c->map,          &c->map_file,  &c->scribe_category, &c->trace,
                        &c->service,      &c->operation, &c->since,           &c->until,
                        &c->min_duration, &c->output};
    for (size_t i = 0; i < sizeof strings / sizeof strings[0]; i++) {
        g_free(*strings[i]);
        *strings[i] = NULL;
    }
    g_strfreev(c->files);
    c->files = NULL;
    twb_custom_map_clear(&c->custom);
}

/* ---- running ------------------------------------------------------------------------------ */

typedef struct run_ctx {
    const twv_filter *filter;
    bool with_critical;
    twv_trace_fn fn;
    void *arg;
    twv_trace trace;
    twv_run_result *res;
} run_ctx;

static bool keep_span(void *arg, const tw__span_data *span, const tw__process *process)
{
    (void)process;
    const run_ctx *r = arg;
    return twv_filter_match_id(r->filter, span->trace_id_high, span->trace_id_low);
}

static tw_status on_group(void *arg, const twb_span *spans, size_t n, tw_error **err)
{
    run_ctx *r = arg;
    if (r->res->is_stopped)
        return TW_OK;
    r->res->traces++;
    if (!twv_trace_build(&r->trace, spans, n) ||
        (r->with_critical && !twv_critical_path(&r->trace))) {
        tw__set_error(err, TW_E_NOMEM, "out of memory (a trace of %zu spans)", n);
        return TW_E_NOMEM;
    }
    if (!twv_filter_match(r->filter, &r->trace))
        return TW_OK;
    r->res->selected++;
    r->res->spans += n;
    int verdict = r->fn(r->arg, &r->trace);
    if (verdict == TWV_CONTINUE)
        return TW_OK;
    r->res->is_stopped = true;
    r->res->is_failed |= verdict == TWV_FAIL;
    return TW_E_STATE; /* stops the reader quietly (no error set) */
}

bool twv_run(const twv_cli *c, char *const *files, const twv_filter *filter, bool with_critical,
             bool with_progress, twv_trace_fn fn, void *arg, twv_run_result *res)
{
    memset(res, 0, sizeof *res);
    run_ctx r = {
        .filter = filter, .with_critical = with_critical, .fn = fn, .arg = arg, .res = res};
    twv_trace_init(&r.trace);
    twb_pipeline_config pc = {
        .command = c->command,
        .opts = c->opts,
        .assemble = {.window_spans = (size_t)c->window,
                     .jaeger_ids = true,
                     .skew_adjust = c->skew_adjust,
                     .sample = 1.0},
        .from = c->reader,
        .has_progress = with_progress && !c->no_progress && isatty(STDERR_FILENO),
        .out = on_group,
        .out_arg = &r,
        .keep = filter->trace_prefix[0] ? keep_span : NULL,
        .keep_arg = &r,
    };
    twb_pipeline *p = twb_pipeline_new(&pc);
    if (!p) {
        tw__cli_error("%s: out of memory", c->command);
        return false;
    }
    if (pc.has_progress)
        twb_pipeline_measure(p, files);
    uint64_t attempted = 1;
    if (!files || !files[0]) {
        twb_pipeline_read(p, "-");
    } else {
        for (attempted = 0; files[attempted] && !res->is_stopped;) {
            if (!twb_pipeline_read(p, files[attempted++]))
                break;
        }
    }
    twb_pipeline_flush(p);
    twb_pipeline_progress_end(p);
    twb_pipeline_warn_split(p);
    const twb_pipeline_counts *n = twb_pipeline_get_counts(p);
    tw_error **fatal = twb_pipeline_fatal(p);
    if (*fatal)
        tw__cli_error("%s: %s", c->command, tw_error_message(*fatal));
    if (n->rejected)
        tw__cli_error(
            "%s: %" PRIu64 " record(s) rejected%s; the rest is shown", c->command, n->rejected,
            n->shown_rejects > TWB_PIPELINE_SHOWN_MAX ? " (the first 100 are above)" : " (above)");
    if (n->failed_files)
        tw__cli_error("%s: %" PRIu64 " input(s) could not be read", c->command, n->failed_files);
    res->is_failed |= *fatal != NULL || n->rejected > 0 || n->failed_files > 0;
    res->is_unread = n->failed_files >= attempted;
    twv_trace_free(&r.trace);
    twb_pipeline_free(p);
    return true;
}

/* ---- terminal ----------------------------------------------------------------------------- */

static bool locale_is_utf8(void)
{
    setlocale(LC_CTYPE, ""); /* LC_CTYPE only: number formatting stays "C" */
    const char *cs = nl_langinfo(CODESET);
    return cs && (strcasecmp(cs, "UTF-8") == 0 || strcasecmp(cs, "utf8") == 0);
}

static int env_columns(void)
{
    const char *v = getenv("COLUMNS");
    if (!v || !*v)
        return 0;
    char *end;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (errno || *end || n < 1 || n > TWV_MAX_WIDTH)
        return 0;
    return n < TWV_MIN_WIDTH ? TWV_MIN_WIDTH : (int)n;
}

void twv_term_detect(twv_term *term, const twv_cli *c, FILE *out)
{
    int fd = fileno(out);
    term->is_tty = fd >= 0 && isatty(fd);
    const char *no_color = getenv("NO_COLOR");
    bool no_color_set = no_color && *no_color;
    term->color = c->color == TWV_ALWAYS || (c->color == TWV_AUTO && term->is_tty && !no_color_set);
    term->unicode =
        c->unicode == TWV_ALWAYS || (c->unicode == TWV_AUTO && term->is_tty && locale_is_utf8());
    int width = 0;
    if (c->width > 0) {
        width = (int)c->width;
    } else if (term->is_tty) {
        struct winsize ws;
        if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
            width = ws.ws_col < TWV_MIN_WIDTH ? TWV_MIN_WIDTH : ws.ws_col;
        if (!width)
            width = env_columns();
        if (!width)
            width = 80;
    } else {
        width = env_columns();
        if (!width)
            width = 120;
    }
    term->width = width;
}

bool twv_check_output(const twv_cli *c, const char *path, const char *option)
{
    char why[512];
    if (!tw__cli_output_path_ok(option, path, why, sizeof why) ||
        !tw__cli_output_not_input(option, path, c->files, why, sizeof why)) {
        twv_usage_error(c, "%s", why);
        return false;
    }
    return true;
}

const char *twv_file_span_format(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    uint8_t head[4096];
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, head, sizeof head) : -1;
    close(fd);
    const twb_reader *r = n > 0 ? twb_reader_detect(head, (size_t)n) : NULL;
    return r ? r->name : NULL;
}

bool twv_output_open(twv_output *o, const twv_cli *c, const char *path)
{
    *o = (twv_output){.f = stdout};
    if (!path || strcmp(path, "-") == 0)
        return true;
    o->path = path;
    /* Created, or opened as it is: emptied by twv_output_start only. */
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
        o->is_created = true;
    } else if (errno == EEXIST) {
        fd = open(path, O_WRONLY | O_CLOEXEC);
        /* A symbolic link to a missing file: its target is created (as
         * fopen would), and kept. */
        if (fd < 0 && errno == ENOENT)
            fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
    }
    int err = errno;
    if (fd >= 0 && !(o->f = fdopen(fd, "wb"))) {
        err = errno;
        close(fd);
    }
    if (fd < 0 || !o->f) {
        tw__cli_error("%s: %s: cannot open for writing: %s", c->command, path, strerror(err));
        if (o->is_created)
            unlink(path);
        o->f = NULL;
        return false;
    }
    return true;
}

bool twv_output_start(twv_output *o, const twv_cli *c)
{
    if (o->is_started)
        return true;
    o->is_started = true;
    struct stat st;
    if (!o->path || o->is_created || fstat(fileno(o->f), &st) != 0 || !S_ISREG(st.st_mode))
        return true;
    if (ftruncate(fileno(o->f), 0) != 0) {
        tw__cli_error("%s: %s: cannot empty it for writing: %s", c->command, o->path,
                      strerror(errno));
        return false;
    }
    return true;
}

bool twv_output_close(twv_output *o, const twv_cli *c)
{
    if (!o->f)
        return true;
    int err = 0;
    if (fflush(o->f) != 0 || ferror(o->f))
        err = errno ? errno : EIO;
    if (o->f != stdout) {
        if (fclose(o->f) != 0 && !err)
            err = errno ? errno : EIO;
        if (o->is_created && !o->is_started)
            unlink(o->path);
    }
    bool ok = err == 0;
    if (!ok)
        tw__cli_error("%s: %s: write error: %s", c->command, o->path ? o->path : "standard output",
                      strerror(err));
    o->f = NULL;
    return ok;
}

/* ---- text cells ----------------------------------------------------------------------------- */

/* Decodes one UTF-8 character; its length, or 0 when the bytes are not valid
 * UTF-8 (overlong, surrogate, beyond U+10FFFF, truncated). */
static size_t utf8_decode(const unsigned char *p, size_t n, uint32_t *cp)
{
    if (p[0] < 0x80) {
        *cp = p[0];
        return 1;
    }
    size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || p[0] > 0xF4 || n < len)
        return 0;
    uint32_t v = p[0] & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        v = (v << 6) | (p[i] & 0x3F);
    }
    if ((len == 3 && v < 0x800) || (len == 4 && (v < 0x10000 || v > 0x10FFFF)) ||
        (v >= 0xD800 && v <= 0xDFFF))
        return 0;
    *cp = v;
    return len;
}

/* Display columns of a character: 0 for combining marks, 2 for East Asian
 * wide and emoji ranges, else 1 (a terminal's usual wcwidth, without
 * depending on the locale). */
static int char_cols(uint32_t c)
{
    if ((c >= 0x300 && c <= 0x36F) || (c >= 0x200B && c <= 0x200F) || (c >= 0xFE00 && c <= 0xFE0F))
        return 0;
    if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) ||
        (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
        (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
        (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
        (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
        return 2;
    return 1;
}

/* Appends @s, made safe and cut to @max_cols (with an ellipsis when cut);
 * returns the columns used. Control characters (C0, DEL, C1) become '?',
 * invalid bytes '?' (ASCII) or U+FFFD. */
int twv_put_text(GString *g, const char *s, int max_cols, bool unicode)
{
    if (max_cols <= 0 || !s)
        return 0;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    int cols = 0;
    /* First pass: does it fit? */
    int total = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t len = utf8_decode(p + i, n - i, &c);
        total += len ? (c < 0x20 || (c >= 0x7F && c < 0xA0) ? 1 : char_cols(c)) : 1;
        i += len ? len : 1;
        if (total > max_cols)
            break;
    }
    int budget = total > max_cols ? max_cols - 1 : max_cols;
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t len = utf8_decode(p + i, n - i, &c);
        int w;
        if (len == 0) {
            w = 1;
            if (cols + w > budget)
                break;
            g_string_append(g, unicode ? "\xef\xbf\xbd" : "?");
            i++;
        } else if (c < 0x20 || (c >= 0x7F && c < 0xA0)) {
            w = 1;
            if (cols + w > budget)
                break;
            g_string_append_c(g, '?');
            i += len;
        } else {
            w = char_cols(c);
            if (cols + w > budget)
                break;
            g_string_append_len(g, s + i, (gssize)len);
            i += len;
        }
        cols += w;
    }
    if (total > max_cols) {
        g_string_append(g, unicode ? "\xe2\x80\xa6" : "~");
        cols++;
    }
    return cols;
}

int twv_text_cols(const char *s)
{
    GString *tmp = g_string_new(NULL);
    int cols = twv_put_text(tmp, s, 1 << 30, true);
    g_string_free(tmp, TRUE);
    return cols;
}

size_t twv_root_groups(const twv_trace *t, uint32_t *next, bool *first)
{
    /* missing parent id -> place of the last orphan of its group + 1 */
    GHashTable *last = g_hash_table_new(g_int64_hash, g_int64_equal);
    size_t n_items = 0;
    for (size_t r = 0; r < t->n_roots; r++) {
        const twv_span *s = &t->spans[t->roots[r]];
        next[r] = TWV_NONE;
        first[r] = true;
        if (!s->missing_parent) {
            n_items++;
            continue;
        }
        /* the key points into the span, which outlives the table */
        gpointer prev = g_hash_table_lookup(last, &s->missing_parent);
        if (prev) {
            next[GPOINTER_TO_SIZE(prev) - 1] = (uint32_t)r;
            first[r] = false;
        } else {
            n_items++;
        }
        g_hash_table_insert(last, (gpointer)&s->missing_parent, GSIZE_TO_POINTER(r + 1));
    }
    g_hash_table_destroy(last);
    return n_items;
}

/* ---- formatting --------------------------------------------------------------------------- */

void twv_format_duration(int64_t us, char *buf, size_t size)
{
    if (us < 0)
        snprintf(buf, size, "?");
    else if (us < 1000)
        snprintf(buf, size, "%" PRId64 " us", us);
    else if (us < 1000000)
        snprintf(buf, size, "%.3f ms", (double)us / 1e3);
    else if (us < 100000000)
        snprintf(buf, size, "%.3f s", (double)us / 1e6);
    else if (us < INT64_C(100000) * 1000000) /* 27.8 hours */
        snprintf(buf, size, "%.1f s", (double)us / 1e6);
    else if (us < INT64_C(100000) * 3600 * 1000000) /* 11.4 years */
        snprintf(buf, size, "%.1f h", (double)us / 3.6e9);
    else /* span times reach 2^63 ns either side of 1970: at most 213,504 days */
        snprintf(buf, size, "%.1f d", (double)us / 8.64e10);
}

void twv_format_time(int64_t us, char *buf, size_t size)
{
    time_t secs = (time_t)(us >= 0 ? us / 1000000 : (us - 999999) / 1000000);
    int64_t ms = (us - (int64_t)secs * 1000000) / 1000;
    struct tm tm;
    if (!gmtime_r(&secs, &tm)) {
        snprintf(buf, size, "?");
        return;
    }
    snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03" PRId64 "Z", tm.tm_year + 1900,
             tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
}
