/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/config_cmd.c: `tracewire config`: prints the configuration that
 * tw_tracer_new_from_env() would build from the current environment (each
 * setting, its value and where it came from), the problems found (errors
 * that would make it fail, conflicts between variable families, variables
 * with no effect), and with --probe whether each endpoint answers.
 *
 * Where it sits: a thin shell over the SDK's public tracewire/config.h
 * (tw_config_from_env, tw_config_probe), so that what it says is what the
 * library does: the same parsers, the same precedence, the same reporter
 * constructors. It includes public headers only. Secrets never reach it
 * (the SDK redacts them), and what it prints is escaped by the CLI's
 * message helpers. Single-threaded; no state outlives a call.
 * Usage and exit codes: docs/bridge.md, docs/CONFIGURATION.md.
 */
#include "cli.h"

#include <errno.h>
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracewire/tracewire.h"

static const char description[] =
    "Reads the environment exactly as tw_tracer_new_from_env() does (JAEGER_*, OTEL_*,\n"
    "TRACEWIRE_*; TRACEWIRE_* wins over JAEGER_*, which wins over OTEL_*) and prints each\n"
    "setting, its value and its source (a variable, default, or argument for --service).\n"
    "Secrets (passwords, tokens, header values, URL credentials, query and path parameter\n"
    "values, fragments) are shown as ***.\n"
    "Problems go to stderr, one line each: errors (the tracer would not be created),\n"
    "conflicts between variable families, variables that have no effect, and with --probe\n"
    "endpoints that do not answer. UDP cannot prove an agent listens: a closed port on a\n"
    "host that answers with ICMP (loopback always does) is found, silence is said as such.\n"
    "\n"
    "Exit status: 0 no problem, 1 at least one problem, 2 usage error.\n"
    "\n"
    "Manual page: tracewire-config(1).";

typedef struct probe_state {
    size_t n_failed;
} probe_state;

static void on_probe(void *user_data, const char *what, bool is_ok, const char *message)
{
    probe_state *p = user_data;
    if (is_ok) {
        tw__cli_print(stdout, "probe ok: %s: %s", what, message);
    } else {
        p->n_failed++;
        tw__cli_error("config: %s: %s", what, message);
    }
}

/* A positive number of milliseconds for an option; false with a usage error. */
static bool parse_ms(const char *option, const char *text, unsigned int *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = text && g_ascii_isdigit(text[0]) ? strtoull(text, &end, 10) : 0;
    if (!text || !g_ascii_isdigit(text[0]) || errno || *end || v < 1 || v > 600000) {
        tw__cli_error("config: %s takes milliseconds in 1..600000, not '%s' (see --help)", option,
                      text ? text : "");
        return false;
    }
    *out = (unsigned int)v;
    return true;
}

int tw__config_cmd_main(int argc, char **argv)
{
    char *service = NULL, *timeout_text = NULL;
    gboolean probe = FALSE;
    GOptionEntry entries[] = {
        {"service", 's', 0, G_OPTION_ARG_STRING, &service,
         "The default service name the program passes (used when no variable names one)", "NAME"},
        {"probe", 'p', 0, G_OPTION_ARG_NONE, &probe,
         "Also check that the agent, collectors and sampling endpoint answer", NULL},
        {"timeout-ms", 0, 0, G_OPTION_ARG_STRING, &timeout_text,
         "--probe: time allowed per endpoint (default 2000)", "MS"},
        {NULL, 0, 0, 0, NULL, NULL, NULL}};
    g_set_prgname(TW_CLI_PROGRAM " config");
    GOptionContext *options =
        g_option_context_new("- show and check the tracer configuration of this environment");
    g_option_context_set_description(options, description);
    g_option_context_add_main_entries(options, entries, NULL);
    GError *gerr = NULL;
    int rc = TW_CLI_EXIT_USAGE;
    bool ok = g_option_context_parse(options, &argc, &argv, &gerr);
    g_option_context_free(options);
    if (!ok) {
        char msg[256];
        tw__cli_error("config: %s (see 'tracewire config --help')",
                      tw__cli_option_message(gerr, msg, sizeof msg));
        g_error_free(gerr);
        goto done;
    }
    if (argc > 1) {
        tw__cli_error("config: unexpected argument '%s' (see 'tracewire config --help')", argv[1]);
        goto done;
    }
    unsigned int timeout_ms = 2000;
    if (timeout_text && !parse_ms("--timeout-ms", timeout_text, &timeout_ms))
        goto done;

    tw_config *config = tw_config_from_env(service);
    if (!config) {
        tw__cli_error("config: out of memory");
        rc = TW_CLI_EXIT_FAILURE;
        goto done;
    }
    size_t width = 0;
    for (size_t i = 0; i < tw_config_setting_count(config); i++) {
        const char *name;
        tw_config_setting(config, i, &name, NULL, NULL);
        width = strlen(name) > width ? strlen(name) : width;
    }
    for (size_t i = 0; i < tw_config_setting_count(config); i++) {
        const char *name, *value, *source;
        tw_config_setting(config, i, &name, &value, &source);
        tw__cli_print(stdout, "%-*s  %s  (%s)", (int)width, name, value, source);
    }
    size_t n_problems = tw_config_problem_count(config);
    bool has_errors = false;
    for (size_t i = 0; i < n_problems; i++) {
        tw_log_level level;
        const char *text = tw_config_problem(config, i, &level);
        has_errors = has_errors || level >= TW_LOG_ERROR;
        tw__cli_error("config: %s: %s", level >= TW_LOG_ERROR ? "error" : "warning", text);
    }
    probe_state p = {0};
    if (probe && has_errors)
        tw__cli_error("config: not probed: fix the errors above first");
    else if (probe)
        tw_config_probe(config, timeout_ms, on_probe, &p);
    fflush(stdout);
    rc = n_problems || p.n_failed ? TW_CLI_EXIT_FAILURE : TW_CLI_EXIT_OK;
    tw_config_free(config);
done:
    g_free(service);
    g_free(timeout_text);
    return rc;
}
