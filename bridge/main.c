/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/main.c: the `tracewire` command: picks the subcommand named by the
 * first argument and hands it the rest (docs/bridge.md).
 *
 * Where it sits: the entry point of the bridge (DESIGN.md, "bridge:" row);
 * each subcommand lives in its own file (context_cmd.c, convert_cmd.c) and
 * is one row of `commands` below, so adding one touches that file and one
 * line here. The table is static and read-only; the process is
 * single-threaded.
 *
 * Options before the subcommand are only --help and --version: GOption
 * parses each subcommand's own options, so `tracewire context extract
 * --help` shows that subcommand's usage.
 */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tracewire/tracewire.h"

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
    {"agent", tw__agent_cmd_main,
     "receive spans (Jaeger, Zipkin, OTLP, span logs) and forward them, losing nothing"},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: %s", TW_CLI_PROGRAM, prefix);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
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
            "(reason on stderr), 2 usage error.\n",
            TW_CLI_PROGRAM);
}

int main(int argc, char **argv)
{
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
    tw__cli_error("unknown command '%s'", name);
    usage(stderr);
    return TW_CLI_EXIT_USAGE;
}
