// SPDX-License-Identifier: GPL-2.0
/*
 * sieve-agent: the agent's program (agent.h), which `sieve agent` execs.
 * `sieve-agent [OPTIONS]` is `sieve agent [OPTIONS]`; `sieve-agent
 * __publish ...` is the CLI's --fleet (publish.c), and `sieve-agent
 * __capture ...` its `xdp capture` (capture.c): not for people.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent.h"
#include "cli.h"
#include "fleet.h"
#include "xdp_capture.h"

int main(int argc, char **argv)
{
	int ret;

	if (argc >= 2 && !strcmp(argv[1], SFLEET_PUBLISH_CMD))
		ret = sagent_publish_main(argc - 1, argv + 1);
	else if (argc >= 2 && !strcmp(argv[1], SXDP_CAPTURE_CMD))
		ret = cli_dispatch(&xdp_capture_command, argc - 1, argv + 1);
	else
		ret = cli_dispatch(&agent_command, argc, argv);
	/* Output that never got written (a full disk) is a failure too, as in sieve's main(). */
	if (fflush(stdout) || ferror(stdout))
		return cli_error("writing output: %s", strerror(errno));
	return ret;
}
