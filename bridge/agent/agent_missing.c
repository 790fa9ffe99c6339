/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bridge/agent/agent_missing.c: `tracewire agent` in a build without
 * libmicrohttpd, which the agent's HTTP receivers, sampling and metrics
 * endpoints need: says so and how to get it, instead of a missing command.
 */
#include "cli.h"

int tw__agent_cmd_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    tw__cli_error("agent: this tracewire was built without libmicrohttpd, which the agent needs "
                  "(install libmicrohttpd-dev, 0.9.71 or newer, and run configure again)");
    return TW_CLI_EXIT_FAILURE;
}
