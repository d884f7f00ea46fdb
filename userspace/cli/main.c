// SPDX-License-Identifier: GPL-2.0
/*
 * sieve: one CLI for sieve's filters. main() only dispatches through the
 * command tables; each command parses its options with the shared parser
 * and returns an exit code (0 success, 1 not present, 2 error).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_command complete_command;

static const struct cli_command sieve_command = {
	.name = "",
	.summary = "probabilistic set-membership filters: Bloom, blocked Bloom, cuckoo",
	.subcommands = (const struct cli_command *const[]){
		&size_command, &dedup_command, &measure_command,
		&filter_command, &build_command, &snapshot_command,
		/* The static CLI for the VM (CLI_STATIC) has no libbpf, so no XDP and no agent. */
#ifndef SIEVE_CLI_NO_XDP
		&xdp_command, &agent_command,
#endif
		&complete_command,
		NULL,
	},
};

static int cmd_complete(const struct cli_command *cmd, int argc, char **argv)
{
	struct cli_args a;
	int ret = cli_parse(cmd, argc, argv, NULL, &a);

	if (ret >= 0)
		return ret;
	cli_print_table(&sieve_command);
	return EXIT_OK;
}

/* For completion scripts: the whole table, generated from what the parser reads. */
static const struct cli_command complete_command = {
	"__complete", "every command and option, tab-separated, for completion scripts",
	.run = cmd_complete, .hidden = true,
};

int main(int argc, char **argv)
{
	int ret = cli_dispatch(&sieve_command, argc, argv);

	/* Output that never got written (a full disk) is a failure too. */
	if (fflush(stdout) || ferror(stdout))
		return cli_error("writing output: %s", strerror(errno));
	return ret;
}
