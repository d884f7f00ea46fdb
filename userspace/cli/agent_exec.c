// SPDX-License-Identifier: GPL-2.0
/*
 * What sieve hands to sieve-agent: the agent (userspace/agent/) and the
 * fleet's publishing (userspace/fleet/fleet.h), whose libraries
 * (libmicrohttpd, libsystemd, hiredis) the CLI does not load, so that a
 * command starts as fast as ipset's. `sieve agent ARGS` execs
 * `sieve-agent ARGS`; `sieve xdp block ... --fleet` execs
 * `sieve-agent __publish ...` with the entries it parsed. sieve-agent is
 * looked for beside this program's own file (/proc/self/exe, links
 * resolved): build/ in the source tree, BINDIR once installed; never on
 * $PATH, so that a root shell's PATH cannot choose what runs.
 */
#define _GNU_SOURCE	/* memrchr */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_command.h"
#include "xdp_capture.h"
#include "cli.h"

#define SAGENT_PROGRAM	"sieve-agent"

/* Replaces this process with sieve-agent, given @argv from its argv[1] on; returns only on failure. */
int cli_exec_agent(char **argv)
{
	char path[PATH_MAX + sizeof(SAGENT_PROGRAM)], *slash;
	ssize_t n = readlink("/proc/self/exe", path, PATH_MAX);

	if (n <= 0 || n >= PATH_MAX || !(slash = memrchr(path, '/', n)))
		return cli_error("cannot find this program's folder (/proc/self/exe): %s",
				 n < 0 ? strerror(errno) : "no absolute path");
	strcpy(slash + 1, SAGENT_PROGRAM);
	argv[0] = path;
	fflush(stdout);
	execv(path, argv);
	return cli_error("cannot run %s: %s", path, strerror(errno));
}

/* sieve's agent_command runs the agent as sieve-agent (agent_command.h). */
int sagent_run(const struct cli_command *cmd, int argc, char **argv)
{
	return cli_exec_agent(argv);
}

/*
 * `sieve xdp capture ARGS` runs as `sieve-agent __capture ARGS`
 * (xdp_capture.h): libpcap is sieve-agent's.
 */
int xdp_capture_run(const struct cli_command *cmd, int argc, char **argv)
{
	char **args = calloc(argc + 2, sizeof(*args));
	int i;

	if (!args)
		return cli_error("out of memory");
	args[1] = SXDP_CAPTURE_CMD;
	for (i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	cli_exec_agent(args);
	free(args);
	return EXIT_ERROR;
}
