/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent_command.c: the `agent` command's table, linked into both sieve and
 * sieve-agent, so that `sieve agent --help`, the completion and the man
 * pages' test read the options the agent parses. Its @run is sagent_run(),
 * which each program defines: sieve-agent runs the agent
 * (userspace/agent/agent.c), sieve execs sieve-agent (agent_exec.c).
 */
#ifndef SIEVE_CLI_AGENT_COMMAND_H
#define SIEVE_CLI_AGENT_COMMAND_H

#include <stdbool.h>

#include "settings.h"

struct cli_command;
struct agent_opts {
	struct sconf_cmdline cl;	/* --config, --state-dir (settings.h) */
	bool check;
};
int sagent_run(const struct cli_command *cmd, int argc, char **argv);

#endif /* SIEVE_CLI_AGENT_COMMAND_H */
