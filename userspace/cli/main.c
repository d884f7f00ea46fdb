// SPDX-License-Identifier: GPL-2.0
/*
 * sieve: one CLI for sieve's filters. main() only dispatches to the
 * subcommand tables; each subcommand parses its own options and returns
 * an exit code (0 success, 1 not present, 2 error).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
	const struct cli_command *commands;
	const unsigned int *count;
} command_tables[] = {
	{ local_commands, &local_ncommands },
	{ filter_commands, &filter_ncommands },
	/* The static CLI for the VM (CLI_STATIC) has no libbpf, so no XDP. */
#ifndef SIEVE_CLI_NO_XDP
	{ xdp_commands, &xdp_ncommands },
#endif
};

static const struct cli_command *find_command(const char *name)
{
	unsigned int t, i;

	for (t = 0; t < sizeof(command_tables) / sizeof(command_tables[0]); t++)
		for (i = 0; i < *command_tables[t].count; i++)
			if (!strcmp(command_tables[t].commands[i].name, name))
				return &command_tables[t].commands[i];
	return NULL;
}

static void usage(FILE *out)
{
	unsigned int t, i;

	fprintf(out, "usage: sieve COMMAND [OPTIONS]   (sieve COMMAND --help for its options)\n\n"
		     "Probabilistic set-membership filters: Bloom, blocked Bloom, cuckoo.\n\n");
	for (t = 0; t < sizeof(command_tables) / sizeof(command_tables[0]); t++)
		for (i = 0; i < *command_tables[t].count; i++)
			fprintf(out, "  %-10s %s\n", command_tables[t].commands[i].name,
				command_tables[t].commands[i].summary);
}

int main(int argc, char **argv)
{
	const struct cli_command *cmd;
	int ret;

	if (argc < 2)
		return cli_error("no command given (see 'sieve --help')");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		if (argc > 2) {
			if (!(cmd = find_command(argv[2])))
				return cli_error("unknown command '%s' (see 'sieve --help')", argv[2]);
			printf("usage: %s\n", cmd->usage);
			return EXIT_OK;
		}
		usage(stdout);
		return EXIT_OK;
	}
	cmd = find_command(argv[1]);
	if (!cmd)
		return cli_error("unknown command '%s' (see 'sieve --help')", argv[1]);
	ret = cmd->run(argc - 1, argv + 1);
	/* Output that never got written (a full disk) is a failure too. */
	if (fflush(stdout) || ferror(stdout))
		return cli_error("writing output: %s", strerror(errno));
	return ret;
}
