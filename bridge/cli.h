/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/cli.h: what the `tracewire` command's files share: exit codes, the
 * subcommand entry points that main.c dispatches to, and the message helpers
 * that keep every diagnostic in one shape ("tracewire: <what>: <why>").
 *
 * Where it sits: main.c picks a subcommand from argv[1] and calls its
 * tw__*_cmd_main with the remaining arguments (argv[0] is the subcommand's
 * own name, so GOption's usage lines read "tracewire context extract").
 * Subcommands write results to stdout and diagnostics to stderr, never both
 * for one message. Single-threaded; nothing here is shared between threads.
 */
#ifndef TW_BRIDGE_CLI_H
#define TW_BRIDGE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tracewire/common.h"

/* Exit statuses of every subcommand (documented in docs/bridge.md). */
#define TW_CLI_EXIT_OK 0
#define TW_CLI_EXIT_FAILURE 1 /* bad input, nothing found, I/O error: the reason is on stderr */
#define TW_CLI_EXIT_USAGE 2   /* unknown command or option, missing or extra argument */

/* The program name used in messages ("tracewire"). */
#define TW_CLI_PROGRAM "tracewire"

/* `tracewire context ...`: argv[0] is "context". Returns an exit status. */
int tw__context_cmd_main(int argc, char **argv);
/* `tracewire convert ...` (convert_cmd.c). */
int tw__convert_cmd_main(int argc, char **argv);
/* `tracewire config ...` (config_cmd.c). */
int tw__config_cmd_main(int argc, char **argv);

/* `tracewire agent ...` (agent/agent_cmd.c; agent/agent_missing.c in a build
 * without libmicrohttpd). */
int tw__agent_cmd_main(int argc, char **argv);

/* The views of span logs (bridge/views/): show.c, deps.c, stats.c, diff.c. */
int tw__show_cmd_main(int argc, char **argv);
int tw__deps_cmd_main(int argc, char **argv);
int tw__stats_cmd_main(int argc, char **argv);
int tw__diff_cmd_main(int argc, char **argv);

/* The candidate nearest to @word (a typo: at most 2 edits; or a prefix of 3
 * or more characters), or NULL when none is close. For "did you mean". */
const char *tw__cli_nearest(const char *word, const char *const *candidates, size_t n);

/* After GOption refused @argv: " (did you mean --NAME?)" for the first long
 * option that @entries (GLib's GOptionEntry array, NULL-terminated) does not
 * know, when one of theirs is near; else "". Static storage. */
struct _GOptionEntry;
const char *tw__cli_option_hint(int argc, char **argv, const struct _GOptionEntry *entries);

/* GOption's message for @error, except that of an unknown option, which
 * quotes the whole argument ("--heder=Authorization: Bearer ..."): that one
 * is cut after the option's name. @buf (@size bytes) may receive it. */
struct _GError;
const char *tw__cli_option_message(const struct _GError *error, char *buf, size_t size);

/* The message for a --user value (convert --send, agent) that is not
 * NAME:PASSWORD, or NULL when it is. The message never quotes the value: a
 * password typed alone would be printed. */
const char *tw__cli_user_problem(const char *user);

/* Whether one of @headers ("Name: value", NULL-terminated; may be NULL) is
 * an Authorization header: with --user, both would set the one header (the
 * header won and --user was dropped silently), so callers refuse the pair. */
bool tw__cli_has_authorization(char *const *headers);

/* Limit of tw__cli_read_file for configuration files. */
#define TW_CLI_MAX_CONFIG_BYTES ((size_t)16 * 1024 * 1024)

/* Reads the file at @path whole into *text (malloc'd, NUL-terminated, *len
 * bytes; free() it), refusing one larger than @max_bytes without reading
 * past the bound (/dev/zero, an endless FIFO). False with *err_no (an errno
 * value: ENOENT for a missing file, EFBIG over the bound) and a reason in
 * @why that does not repeat the path. */
bool tw__cli_read_file(const char *path, size_t max_bytes, char **text, size_t *len, int *err_no,
                       char *why, size_t why_size);

/* False, with the reason in @why, when @value, given to @option (one that
 * names a file to write), looks like an option ("-o", "--to"): GOption
 * takes the next word whatever it is, so `--html -o page.html` used to
 * create a file named "-o". NULL and "-" alone (the standard stream) pass;
 * a file whose name starts with '-' is named ./-x. */
bool tw__cli_output_path_ok(const char *option, const char *value, char *why, size_t why_size);

/* True when @a and @b name one file: the same device and inode when both
 * exist; when neither exists yet (an output is created later), the same name
 * in the same directory, the directories compared by inode ("out" and
 * "./out" are one file). */
bool tw__cli_same_file(const char *a, const char *b);

/* False, with the reason in @why, when @path, the file @option names to
 * write, is a file the command reads: one of @inputs (NULL-terminated; an
 * empty or NULL list, or "-" in it, means standard input), or standard input
 * itself when that is a regular file (`cmd -o F < F`). Opening the output
 * truncates it, so the input would be emptied before it is read. NULL and
 * "-" (standard output) pass. */
bool tw__cli_output_not_input(const char *option, const char *path, char *const *inputs, char *why,
                              size_t why_size);

/* Every message below is one line: control bytes in it are written as \xNN,
 * URL credentials (scheme://user:password@), query and path parameter
 * values and fragments as *** (wire/core/redact.h). */

/* Prints the message + newline on @out (results: stdout). */
void tw__cli_print(FILE *out, const char *fmt, ...) TW_PRINTF(2, 3);
/* Prints "tracewire: " + the message + newline on stderr. */
void tw__cli_error(const char *fmt, ...) TW_PRINTF(1, 2);
/* Prints "tracewire: warning: " + the message + newline on stderr. */
void tw__cli_warn(const char *fmt, ...) TW_PRINTF(1, 2);

#endif /* TW_BRIDGE_CLI_H */
