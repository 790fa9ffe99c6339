/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/main.c: the `tracewire` command: picks the subcommand named by the
 * first argument and hands it the rest (docs/bridge.md).
 *
 * Where it sits: the entry point of the bridge (CONTRIBUTING.md, "Code conventions", Layout);
 * each subcommand lives in its own file (context_cmd.c, convert_cmd.c) and
 * is one row of `commands` below, so adding one touches that file and one
 * line here. The table is static and read-only; the process is
 * single-threaded.
 *
 * Options before the subcommand are only --help and --version: GOption
 * parses each subcommand's own options, so `tracewire context extract
 * --help` shows that subcommand's usage. An unknown command or option is
 * answered with the nearest known one (tw__cli_nearest, edit distance); the
 * bash completion (bridge/completion/tracewire.bash) reads the command list
 * from `tracewire --help`, so the table below is the only list to extend.
 */
#include "cli.h"

#include <glib.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tracewire/tracewire.h"
#include "wire/core/redact.h"

typedef struct {
    const char *name;
    int (*main)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"context", tw__context_cmd_main,
     "convert trace context headers (Jaeger, B3, W3C) to and from JSON"},
    {"convert", tw__convert_cmd_main,
     "translate span logs (Dapper, Zipkin v1/v2, Jaeger, OTLP, custom) and ship them"},
    {"config", tw__config_cmd_main,
     "show and check the tracer configuration of this environment (--probe: endpoints)"},
    {"show", tw__show_cmd_main,
     "draw traces as a waterfall in the terminal, list them, or write an HTML viewer"},
    {"deps", tw__deps_cmd_main,
     "service dependency links (Zipkin's rules) as a table, JSON, DOT or SVG"},
    {"stats", tw__stats_cmd_main,
     "latency, errors, self time and critical path by service and operation"},
    {"diff", tw__diff_cmd_main, "compare two traces, or two sets of traces: what got slower"},
    {"agent", tw__agent_cmd_main,
     "receive spans (Jaeger, Zipkin, OTLP, span logs) and forward them, losing nothing"},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Writes one line: the text quotes input (file names, header values, URLs),
 * so it goes through tw__redact_text (wire/core/redact.h: control bytes as
 * \xNN, URL credentials, query and parameter values and fragments as ***). */
static void vline(FILE *out, const char *prefix, const char *fmt, va_list ap)
{
    char text[4096], safe[4 * sizeof text];
    vsnprintf(text, sizeof text, fmt, ap);
    tw__redact_text(text, safe, sizeof safe);
    fputs(prefix, out);
    fputs(safe, out);
    fputc('\n', out);
}

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
    char head[64];
    snprintf(head, sizeof head, "%s: %s", TW_CLI_PROGRAM, prefix);
    vline(stderr, head, fmt, ap);
}

void tw__cli_print(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(out, "", fmt, ap);
    va_end(ap);
}

void tw__cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("", fmt, ap);
    va_end(ap);
}

void tw__cli_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vmessage("warning: ", fmt, ap);
    va_end(ap);
}

static void usage(FILE *out)
{
    fprintf(out, "Usage: %s COMMAND [OPTION...]\n       %s --help | --version\n\nCommands:\n",
            TW_CLI_PROGRAM, TW_CLI_PROGRAM);
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out,
            "\n'%s COMMAND --help' describes a command. Exit status: 0 success, 1 failure "
            "(reason on stderr), 2 usage error.\nManual pages: tracewire(1), and "
            "tracewire-COMMAND(1) for each command.\n",
            TW_CLI_PROGRAM);
}

/* Edit distance (Levenshtein: insert, delete, replace) of two short words,
 * or SIZE_MAX when one is too long to matter. */
static size_t edit_distance(const char *a, const char *b)
{
    enum { MAX_WORD = 64 };
    size_t la = strlen(a), lb = strlen(b);
    if (la >= MAX_WORD || lb >= MAX_WORD)
        return SIZE_MAX;
    size_t row[MAX_WORD + 1];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[lb];
}

const char *tw__cli_nearest(const char *word, const char *const *candidates, size_t n)
{
    /* Close enough to be a typo: at most 2 edits, and fewer than half the
     * word's length (so "ab" does not suggest "cd"); else a word of 3 or
     * more characters that starts a candidate ("conv" -> "convert"). */
    const char *best = NULL;
    size_t best_distance = SIZE_MAX, len = strlen(word);
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(word, candidates[i]);
        if (d < best_distance && d <= 2 && 2 * d < len) {
            best = candidates[i];
            best_distance = d;
        }
    }
    for (size_t i = 0; !best && len >= 3 && i < n; i++) {
        if (strncmp(word, candidates[i], len) == 0)
            best = candidates[i];
    }
    return best;
}

const char *tw__cli_user_problem(const char *user)
{
    return user && !strchr(user, ':') ? "--user takes NAME:PASSWORD (the value given has no ':')"
                                      : NULL;
}

bool tw__cli_has_authorization(char *const *headers)
{
    static const char name[] = "authorization";
    for (size_t i = 0; headers && headers[i]; i++) {
        const char *h = headers[i] + strspn(headers[i], " \t");
        size_t n = strcspn(h, ":");
        while (n && (h[n - 1] == ' ' || h[n - 1] == '\t'))
            n--;
        if (n == sizeof name - 1 && g_ascii_strncasecmp(h, name, n) == 0)
            return true;
    }
    return false;
}

const char *tw__cli_option_message(const GError *error, char *buf, size_t size)
{
    const char *m = error->message;
    const char *dash = strstr(m, "--");
    if (error->domain != G_OPTION_ERROR || error->code != G_OPTION_ERROR_UNKNOWN_OPTION || !dash)
        return m;
    const char *end = dash + 2;
    while (g_ascii_isalnum(*end) || *end == '-' || *end == '_')
        end++;
    if (!*end)
        return m;
    snprintf(buf, size, "%.*s (the rest of the argument is not shown: it may hold a secret)",
             (int)(end - m), m);
    return buf;
}

const char *tw__cli_option_hint(int argc, char **argv, const struct _GOptionEntry *entries)
{
    /* GOption's error names the bad option in a message that may be
     * translated, so the option is found again here: the first "--name"
     * argument (before "--") that no entry names. */
    static char hint[96];
    const char *names[64];
    size_t n = 0;
    for (const GOptionEntry *e = entries; e->long_name && n < 64; e++) {
        if (*e->long_name)
            names[n++] = e->long_name;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0)
            break;
        if (strncmp(arg, "--", 2) != 0)
            continue;
        char name[64];
        size_t len = strcspn(arg + 2, "=");
        if (len == 0 || len >= sizeof name)
            continue;
        memcpy(name, arg + 2, len);
        name[len] = '\0';
        bool is_known = strcmp(name, "help") == 0 || strcmp(name, "help-all") == 0;
        for (size_t k = 0; k < n && !is_known; k++)
            is_known = strcmp(name, names[k]) == 0;
        if (is_known)
            continue;
        const char *near = tw__cli_nearest(name, names, n);
        if (!near)
            return "";
        snprintf(hint, sizeof hint, " (did you mean --%s?)", near);
        return hint;
    }
    return "";
}

int main(int argc, char **argv)
{
    /* The user's locale for the character set (GLib's help then prints
     * "[OPTION…]", not "[OPTION?]") and for messages; numbers stay in the C
     * locale, since every format this command reads and writes wants a '.'. */
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C");
    if (argc < 2) {
        tw__cli_error("missing command");
        usage(stderr);
        return TW_CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return TW_CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0) {
        printf("%s %s\n", TW_CLI_PROGRAM, tw_version());
        return TW_CLI_EXIT_OK;
    }
    for (size_t i = 0; i < N_COMMANDS; i++) {
        if (strcmp(name, commands[i].name) == 0)
            return commands[i].main(argc - 1, argv + 1);
    }
    const char *names[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++)
        names[i] = commands[i].name;
    static const char *const options[] = {"--help", "--version"};
    const char *near = name[0] == '-' ? tw__cli_nearest(name, options, 2)
                                      : tw__cli_nearest(name, names, N_COMMANDS);
    const char *what = name[0] == '-' ? "option" : "command";
    if (near) {
        tw__cli_error("unknown %s '%s'; did you mean '%s'? ('%s --help' lists the commands)", what,
                      name, near, TW_CLI_PROGRAM);
        return TW_CLI_EXIT_USAGE;
    }
    tw__cli_error("unknown %s '%s'", what, name);
    usage(stderr);
    return TW_CLI_EXIT_USAGE;
}
