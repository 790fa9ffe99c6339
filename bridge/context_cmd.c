/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/context_cmd.c: `tracewire context extract` and `tracewire context
 * inject`, the command-line face of the SDK's propagators
 * (sdk/include/tracewire/propagation.h, docs/wire/propagation.md).
 *
 *   extract: HTTP header lines on stdin (header_lines.c) -> tw_headers ->
 *            tw_propagator_extract -> one JSON object on stdout (context_json.c)
 *   inject:  one JSON object on stdin -> context -> tw_propagator_inject ->
 *            tw_headers -> header lines on stdout
 *
 * The codecs themselves are the SDK's; this file adds no parsing rule of
 * its own, so what the command prints is what a traced program would see.
 * Both directions use the HTTP_HEADERS carrier format (Jaeger baggage values
 * %-encoded), since the text is HTTP headers. --format takes the names of
 * JAEGER_PROPAGATION ("jaeger", "b3", "b3-single", "w3c", or a comma list in
 * priority order) plus "auto" for extract, which is "jaeger,w3c,b3": Jaeger
 * first because it is this SDK's native format and the only one that
 * carries a jaeger-debug-id, W3C before B3 as the standard. Option parsing
 * is GLib's GOption. Single-threaded; no state outlives a call.
 * Usage and exit codes: docs/bridge.md.
 */
#include "cli.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "context_json.h"
#include "header_lines.h"
#include "tracewire/tracewire.h"
#include "wire/core/json_error.h"

#define AUTO_CODECS "jaeger,w3c,b3"

static const char json_schema_help[] =
    "The context as JSON (one object; extract prints every key):\n"
    "  {\"trace_id\": \"<32 hex digits>\" | null, \"span_id\": \"<16 hex>\" | null,\n"
    "   \"parent_id\": \"<16 hex>\" | null, \"sampled\": true | false | null,\n"
    "   \"debug\": false, \"firehose\": false, \"random_trace_id\": false,\n"
    "   \"baggage\": {\"key\": \"value\"},\n"
    "   \"tracestate\": \"<W3C tracestate>\" | null, \"debug_id\": \"<jaeger-debug-id>\" | null}\n"
    "\"sampled\": null means no decision was made upstream (B3 without X-B3-Sampled).\n"
    "\"random_trace_id\": W3C traceparent flag 0x02 (only the w3c format carries it).\n"
    "A hint has no ids (trace_id and span_id null) and carries a debug_id, a sampling\n"
    "decision and/or baggage, as the headers 'jaeger-debug-id: x' or 'b3: 1' alone give.\n"
    "\n"
    "Exit status: 0 success, 1 no context or bad input (reason on stderr), 2 usage error.\n"
    "Manual page: tracewire-context(1).\n";

static void print_warning(const char *message, void *user_data)
{
    (void)user_data;
    tw__cli_warn("%s", message);
}

static void log_warning(tw_log_level level, const char *message, void *user_data)
{
    (void)level;
    (void)user_data;
    tw__cli_warn("%s", message);
}

/* stdin for Jansson with a byte budget: the bound applies to what is read,
 * so an endless input (/dev/zero) stops after the budget instead of growing
 * Jansson's buffer (the same limit as extract's header block). */
typedef struct bounded_input {
    FILE *in;
    size_t budget; /* bytes still allowed */
    bool is_over;  /* the input went past the limit */
} bounded_input;

static size_t read_bounded(void *buffer, size_t size, void *data)
{
    bounded_input *b = data;
    if (b->budget == 0) {
        /* One byte more tells the end of input from an overlong one. */
        if (getc(b->in) == EOF)
            return 0;
        b->is_over = true;
        return (size_t)-1;
    }
    size_t n = fread(buffer, 1, size < b->budget ? size : b->budget, b->in);
    b->budget -= n;
    if (n == 0 && ferror(b->in))
        return (size_t)-1;
    return n;
}

/* Parses the options of one subcommand. Returns -1 to go on, or an exit
 * status (GOption has printed --help itself and exited). */
static int parse_options(const char *name, const char *summary, GOptionEntry *entries, int *argc,
                         char ***argv)
{
    char *prgname = g_strdup_printf("%s context %s", TW_CLI_PROGRAM, name);
    g_set_prgname(prgname);
    g_free(prgname);
    GOptionContext *options = g_option_context_new(NULL);
    g_option_context_set_summary(options, summary);
    g_option_context_set_description(options, json_schema_help);
    g_option_context_add_main_entries(options, entries, NULL);
    GError *error = NULL;
    bool ok = g_option_context_parse(options, argc, argv, &error);
    g_option_context_free(options);
    if (!ok) {
        char msg[256];
        tw__cli_error("context %s: %s%s (see --help)", name,
                      tw__cli_option_message(error, msg, sizeof msg),
                      tw__cli_option_hint(*argc, *argv, entries));
        g_error_free(error);
        return TW_CLI_EXIT_USAGE;
    }
    if (*argc > 1) {
        tw__cli_error("context %s: unexpected argument '%s' (input is read from stdin)", name,
                      (*argv)[1]);
        return TW_CLI_EXIT_USAGE;
    }
    return -1;
}

/* A propagator for --format, or NULL after printing a usage error. */
static tw_propagator *make_propagator(const char *name, const char *format, bool allow_auto)
{
    if (g_ascii_strcasecmp(format, "auto") == 0) {
        if (!allow_auto) {
            tw__cli_error("context %s: --format auto is for extract only: name the format to "
                          "write (jaeger, b3, b3-single, w3c)",
                          name);
            return NULL;
        }
        format = AUTO_CODECS;
    }
    tw_error *err = NULL;
    tw_propagator *p = tw_propagator_parse(format, &err);
    if (!p) {
        /* The SDK's message lists the known names. */
        tw__cli_error("context %s: --format %s: %s%s", name, format, tw_error_message(err),
                      allow_auto ? "; or auto" : "");
        tw_error_free(err);
    }
    return p;
}

static int extract_main(int argc, char **argv)
{
    char *format = NULL;
    gboolean pretty = FALSE; /* gboolean: GOption writes it */
    GOptionEntry entries[] = {
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format,
         "Codecs to try, in order: auto (= " AUTO_CODECS "), jaeger, b3 (multi or single "
         "header), b3-single, w3c, or a comma list",
         "FORMAT"},
        {"pretty", 'p', 0, G_OPTION_ARG_NONE, &pretty, "Indent the JSON output", NULL},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    int rc = parse_options("extract",
                           "Reads HTTP header lines ('Name: value', up to an empty line or EOF) "
                           "on stdin and prints the trace context they carry as JSON.",
                           entries, &argc, &argv);
    if (rc >= 0)
        goto out;
    rc = TW_CLI_EXIT_FAILURE;
    tw_propagator *propagator = make_propagator("extract", format ? format : "auto", true);
    if (!propagator) {
        rc = TW_CLI_EXIT_USAGE;
        goto out;
    }
    tw_error *err = NULL;
    tw_headers *headers = tw__header_lines_read(stdin, &err);
    if (!headers) {
        tw__cli_error("context extract: stdin: %s", tw_error_message(err));
        goto fail_read;
    }
    tw_carrier_reader reader = tw_headers_reader(headers);
    /* Extract gives each baggage, tracestate or debug-id problem to both the
     * callback and the logger: the callback shows them, the logger keeps to
     * errors for this call, so that each is printed once. */
    tw_set_logger(NULL, NULL, TW_LOG_ERROR);
    tw_span_context *ctx = tw_propagator_extract(propagator, TW_FORMAT_HTTP_HEADERS, &reader,
                                                 print_warning, NULL, &err);
    if (!ctx) {
        /* The SDK's message names the header and the reason. */
        tw__cli_error("%s", tw_error_message(err));
        goto fail_extract;
    }
    json_t *obj = tw__context_to_json(ctx, print_warning, NULL);
    if (!obj) {
        tw__cli_error("context extract: out of memory");
        goto fail_json;
    }
    /* Jansson writes members in insertion order (since 2.8), the schema's. */
    if (json_dumpf(obj, stdout, pretty ? JSON_INDENT(2) : 0) != 0 || fputc('\n', stdout) == EOF ||
        fflush(stdout) != 0) {
        tw__cli_error("context extract: writing stdout failed");
        goto fail_write;
    }
    rc = TW_CLI_EXIT_OK;
fail_write:
    json_decref(obj);
fail_json:
    tw_span_context_unref(ctx);
fail_extract:
    tw_headers_free(headers);
fail_read:
    tw_error_free(err);
    tw_propagator_free(propagator);
out:
    g_free(format);
    return rc;
}

static int inject_main(int argc, char **argv)
{
    char *format = NULL;
    GOptionEntry entries[] = {
        {"format", 'f', 0, G_OPTION_ARG_STRING, &format,
         "Headers to write (required): jaeger, b3 (multi header), b3-single, w3c, or a comma "
         "list",
         "FORMAT"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    int rc = parse_options("inject",
                           "Reads one JSON context object on stdin and prints the HTTP header "
                           "lines ('Name: value') that carry it in the chosen format.",
                           entries, &argc, &argv);
    if (rc >= 0)
        goto out;
    if (!format) {
        tw__cli_error("context inject: --format is required (jaeger, b3, b3-single, w3c)");
        rc = TW_CLI_EXIT_USAGE;
        goto out;
    }
    tw_propagator *propagator = make_propagator("inject", format, false);
    if (!propagator) {
        rc = TW_CLI_EXIT_USAGE;
        goto out;
    }
    rc = TW_CLI_EXIT_FAILURE;
    json_error_t jerr;
    char jtext[JSON_ERROR_TEXT_LENGTH + 64];
    /* Duplicate keys would make the input ambiguous; Jansson rejects them,
     * trailing text after the object, \u0000, invalid UTF-8 and nesting
     * past 2048 levels. */
    bounded_input input = {stdin, TW__HEADER_LINES_MAX_BYTES, false};
    json_t *obj = json_load_callback(read_bounded, &input, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj) {
        if (input.is_over)
            tw__cli_error("context inject: stdin: input longer than %u bytes",
                          TW__HEADER_LINES_MAX_BYTES);
        else
            tw__cli_error("context inject: stdin:%d:%d: %s", jerr.line, jerr.column,
                          tw__json_error_text(&jerr, jtext, sizeof jtext));
        goto fail_json;
    }
    tw_error *err = NULL;
    tw_span_context *ctx = tw__context_from_json(obj, &err);
    if (!ctx) {
        tw__cli_error("context inject: %s", tw_error_message(err));
        goto fail_context;
    }
    if (!tw_span_context_is_valid(ctx)) {
        /* The JSON is accepted so that `extract | inject` of a hint fails
         * with this reason rather than a parse error. */
        tw__cli_error("context inject: the context has no trace_id and span_id (a hint); "
                      "only contexts with ids are injected, in every format");
        goto fail_headers;
    }
    tw_headers *headers = tw_headers_new();
    if (!headers) {
        tw__cli_error("context inject: out of memory");
        goto fail_headers;
    }
    tw_carrier_writer writer = tw_headers_writer(headers);
    /* Inject reports what it leaves out (a baggage key that is not a header
     * name, say) only to the logger: show those as warnings, for this call
     * only, so that our own errors are not printed twice. */
    tw_set_logger(log_warning, NULL, TW_LOG_WARN);
    tw_status st = tw_propagator_inject(propagator, ctx, TW_FORMAT_HTTP_HEADERS, &writer);
    tw_set_logger(NULL, NULL, TW_LOG_ERROR);
    if (st != TW_OK) {
        tw__cli_error("context inject: %s", tw_status_str(st));
        goto fail_inject;
    }
    if (tw_headers_count(headers) == 0) {
        tw__cli_error("context inject: format %s wrote no header for this context", format);
        goto fail_inject;
    }
    if (tw__header_lines_write(headers, stdout) != TW_OK || fflush(stdout) != 0) {
        tw__cli_error("context inject: writing stdout failed");
        goto fail_inject;
    }
    rc = TW_CLI_EXIT_OK;
fail_inject:
    tw_headers_free(headers);
fail_headers:
    tw_span_context_unref(ctx);
fail_context:
    tw_error_free(err);
    json_decref(obj);
fail_json:
    tw_propagator_free(propagator);
out:
    g_free(format);
    return rc;
}

static void context_usage(FILE *out)
{
    fprintf(out,
            "Usage: %s context extract [--format FORMAT] [--pretty] < headers\n"
            "       %s context inject --format FORMAT < context.json\n\n"
            "extract reads HTTP header lines and prints the trace context as JSON;\n"
            "inject reads that JSON and prints the header lines. FORMAT: auto (extract\n"
            "only; = " AUTO_CODECS "), jaeger, b3, b3-single, w3c, or a comma list.\n"
            "'%s context extract --help' has the details; manual page: tracewire-context(1).\n",
            TW_CLI_PROGRAM, TW_CLI_PROGRAM, TW_CLI_PROGRAM);
}

int tw__context_cmd_main(int argc, char **argv)
{
    if (argc < 2) {
        tw__cli_error("context: missing subcommand (extract or inject)");
        context_usage(stderr);
        return TW_CLI_EXIT_USAGE;
    }
    const char *sub = argv[1];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        context_usage(stdout);
        return TW_CLI_EXIT_OK;
    }
    if (strcmp(sub, "extract") == 0)
        return extract_main(argc - 1, argv + 1);
    if (strcmp(sub, "inject") == 0)
        return inject_main(argc - 1, argv + 1);
    static const char *const subs[] = {"extract", "inject"};
    const char *near = tw__cli_nearest(sub, subs, 2);
    if (near) {
        tw__cli_error("context: unknown subcommand '%s'; did you mean '%s'?", sub, near);
        return TW_CLI_EXIT_USAGE;
    }
    tw__cli_error("context: unknown subcommand '%s' (extract or inject)", sub);
    context_usage(stderr);
    return TW_CLI_EXIT_USAGE;
}
