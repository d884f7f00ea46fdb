// SPDX-License-Identifier: GPL-2.0
/*
 * The one parser, dispatcher and --help of the CLI, over the tables of
 * struct cli_command and struct cli_option (cli.h).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/sieve.h>

#include "cli.h"
#include "json.h"

const struct cli_option cli_opt_json = {
	"json", 'j', NULL, "JSON output, one line", .hidden = false,
};
const struct cli_option cli_opt_pretty = {
	"pretty", 'p', NULL, "JSON output, indented", .hidden = false,
};

/* getopt_long's value for --NAME of option i: above every letter (-L returns L). */
#define OPTION_VAL_BASE	256
/* --version, every command's (as --help is): below those, above every letter. */
#define OPTION_VERSION	(OPTION_VAL_BASE - 1)

/* The build passes both (Makefile: the file VERSION); a bare compile still works. */
#ifndef SIEVE_VERSION
#define SIEVE_VERSION	"unknown"
#endif

void cli_print_version(void)
{
	printf("sieve %s (ioctl ABI %d)\n", SIEVE_VERSION, SIEVE_ABI_VERSION);
}

static size_t count_options(const struct cli_command *cmd)
{
	size_t n = 0;

	while (cmd->options && cmd->options[n])
		n++;
	return n;
}

static const struct cli_option *find_option(const struct cli_command *cmd, int c)
{
	size_t i, n = count_options(cmd);

	if (c >= OPTION_VAL_BASE)
		return (size_t)(c - OPTION_VAL_BASE) < n ? cmd->options[c - OPTION_VAL_BASE] : NULL;
	for (i = 0; i < n; i++)
		if (cmd->options[i]->letter == c)
			return cmd->options[i];
	return NULL;
}

static bool has_option(const struct cli_command *cmd, const char *name)
{
	size_t i, n = count_options(cmd);

	for (i = 0; i < n; i++)
		if (!strcmp(cmd->options[i]->name, name))
			return true;
	return false;
}

/* The last word of a command's name: what is typed to choose it. */
static const char *command_word(const struct cli_command *cmd)
{
	const char *space = strrchr(cmd->name, ' ');

	return space ? space + 1 : cmd->name;
}

static void print_option_help(const struct cli_option *opt)
{
	char left[40];

	snprintf(left, sizeof(left), "%c%c%c --%s%s%s", opt->letter ? '-' : ' ',
		 opt->letter ? opt->letter : ' ', opt->letter ? ',' : ' ', opt->name,
		 opt->value ? " " : "", opt->value ? opt->value : "");
	printf("  %-24s %s\n", left, opt->help);
}

static void print_help(const struct cli_command *cmd)
{
	const struct cli_command *const *sub;
	size_t i, n = count_options(cmd);

	printf("usage: sieve%s%s%s [OPTIONS]%s%s\n", *cmd->name ? " " : "", cmd->name,
	       cmd->subcommands ? " COMMAND" : "", cmd->args ? " " : "",
	       cmd->args ? cmd->args : "");
	printf("  %s.\n", cmd->summary);
	if (cmd->details)
		printf("%s\n", cmd->details);
	if (cmd->subcommands) {
		printf("\nCommands ('sieve%s%s COMMAND --help' for each):\n", *cmd->name ? " " : "",
		       cmd->name);
		for (sub = cmd->subcommands; *sub; sub++)
			if (!(*sub)->hidden)
				printf("  %-10s %s\n", command_word(*sub), (*sub)->summary);
	}
	printf("\nOptions:\n");
	for (i = 0; i < n; i++)
		if (!cmd->options[i]->hidden)
			print_option_help(cmd->options[i]);
	printf("  %-24s %s\n", "-h, --help", "this help");
	if (!*cmd->name)
		printf("  %-24s %s\n", "    --version", "the version and the ioctl ABI (any command)");
}

/* How the user wrote the option getopt_long stopped at. */
static const char *option_text(const struct cli_command *cmd, char **argv, char *buf,
			       size_t size)
{
	const struct cli_option *opt = optopt ? find_option(cmd, optopt) : NULL;

	if (opt && optopt >= OPTION_VAL_BASE)
		snprintf(buf, size, "--%s", opt->name);
	else if (optopt == OPTION_VERSION)
		snprintf(buf, size, "--version");
	else if (optopt > 0 && optopt < OPTION_VAL_BASE)
		snprintf(buf, size, "-%c", optopt);
	else
		snprintf(buf, size, "%s", argv[optind - 1]);
	return buf;
}

/*
 * -p was the false-positive rate before it meant --pretty: a rate right
 * after it, where --fpr exists, is an old command line, not a key or a file.
 */
static int check_old_rate(const struct cli_command *cmd, int argc, char **argv)
{
	uint32_t ppb;

	if (optind < argc && has_option(cmd, "fpr") && !parse_rate_ppb(argv[optind], &ppb))
		return cli_usage_error(cmd, "-p is --pretty now: give the false-positive rate as "
				       "--fpr %s", argv[optind]);
	return 0;
}

/* Stores one option; -1 to go on, or the exit code. */
static int apply_option(const struct cli_command *cmd, const struct cli_option *opt, int argc,
			char **argv, void *opts, struct cli_args *a)
{
	if (opt == &cli_opt_pretty) {
		if (check_old_rate(cmd, argc, argv))
			return EXIT_ERROR;
		json_set_pretty(true);
	}
	if (opt == &cli_opt_json || opt == &cli_opt_pretty) {
		a->json = true;
		return -1;
	}
	if (!opt->set) {
		*(bool *)((char *)opts + opt->flag_offset) = true;
		return -1;
	}
	if (opt->set(opts, optarg))
		return cli_usage_error(cmd, "bad --%s '%s': %s", opt->name, optarg ? optarg : "",
				       opt->accepts ? opt->accepts : "see --help");
	return -1;
}

/* getopt_long's tables from the command's options (with --help). */
static int getopt_tables(const struct cli_command *cmd, struct option **longopts, char **shortopts)
{
	size_t i, n = count_options(cmd), ns = 0;

	*longopts = calloc(n + 3, sizeof(**longopts));
	*shortopts = malloc(2 * n + 4);
	if (!*longopts || !*shortopts) {
		free(*longopts);
		free(*shortopts);
		return cli_error("out of memory");
	}
	/* ':' first: a missing value is told apart from an unknown option. */
	(*shortopts)[ns++] = ':';
	(*shortopts)[ns++] = 'h';
	for (i = 0; i < n; i++) {
		const struct cli_option *opt = cmd->options[i];

		(*longopts)[i] = (struct option){ opt->name, opt->value ? required_argument :
						  no_argument, NULL, OPTION_VAL_BASE + (int)i };
		if (!opt->letter)
			continue;
		(*shortopts)[ns++] = opt->letter;
		if (opt->value)
			(*shortopts)[ns++] = ':';
	}
	(*longopts)[n] = (struct option){ "help", no_argument, NULL, 'h' };
	(*longopts)[n + 1] = (struct option){ "version", no_argument, NULL, OPTION_VERSION };
	(*shortopts)[ns] = '\0';
	return 0;
}

static int parse_options(const struct cli_command *cmd, int argc, char **argv, void *opts,
			 struct cli_args *a, const struct option *longopts, const char *shortopts)
{
	char buf[64];
	int c, ret;

	optind = 0;	/* GNU getopt: start afresh */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			print_help(cmd);
			return EXIT_OK;
		}
		if (c == OPTION_VERSION) {
			cli_print_version();
			return EXIT_OK;
		}
		if (c == ':')
			return cli_usage_error(cmd, "option '%s' needs a value",
					       option_text(cmd, argv, buf, sizeof(buf)));
		if (c == '?' && optopt >= OPTION_VERSION)
			return cli_usage_error(cmd, "option '%s' takes no value",
					       option_text(cmd, argv, buf, sizeof(buf)));
		if (c == '?')
			return cli_usage_error(cmd, "unknown option '%s'",
					       option_text(cmd, argv, buf, sizeof(buf)));
		ret = apply_option(cmd, find_option(cmd, c), argc, argv, opts, a);
		if (ret >= 0)
			return ret;
	}
	return -1;
}

int cli_parse(const struct cli_command *cmd, int argc, char **argv, void *opts,
	      struct cli_args *a)
{
	struct option *longopts;
	char *shortopts;
	int ret;

	memset(a, 0, sizeof(*a));
	if (getopt_tables(cmd, &longopts, &shortopts))
		return EXIT_ERROR;
	ret = parse_options(cmd, argc, argv, opts, a, longopts, shortopts);
	free(longopts);
	free(shortopts);
	if (ret >= 0)
		return ret;
	a->args = argv + optind;
	a->nargs = argc - optind;
	if (a->nargs < cmd->min_args)
		return cli_usage_error(cmd, "missing %s", cmd->args ? cmd->args : "arguments");
	if (cmd->max_args >= 0 && a->nargs > cmd->max_args)
		return cli_usage_error(cmd, "unexpected argument '%s'", a->args[cmd->max_args]);
	return -1;
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help") || !strcmp(arg, "help");
}

/* `sieve help A B`: as `sieve A B --help`. */
static int help_for(const struct cli_command *cmd, int argc, char **argv)
{
	char **args = calloc(argc + 1, sizeof(*args));
	int ret;

	if (!args)
		return cli_error("out of memory");
	args[0] = argv[0];
	memcpy(args + 1, argv + 2, (argc - 2) * sizeof(*args));
	args[argc - 1] = "--help";
	ret = cli_dispatch(cmd, argc, args);
	free(args);
	return ret;
}

int cli_dispatch(const struct cli_command *cmd, int argc, char **argv)
{
	const struct cli_command *const *sub;
	const char *what = *cmd->name ? "subcommand" : "command";

	/*
	 * Here too, not only in cli_parse(): a command of commands has no
	 * options, and a command that parses its own (`sieve agent`) still
	 * answers `sieve CMD --version` the same way.
	 */
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		cli_print_version();
		return EXIT_OK;
	}
	if (!cmd->subcommands)
		return cmd->run(cmd, argc, argv);
	if (argc < 2)
		return cli_usage_error(cmd, "no %s given", what);
	if (is_help(argv[1]) && argc > 2 && !strcmp(argv[1], "help"))
		return help_for(cmd, argc, argv);
	if (is_help(argv[1])) {
		print_help(cmd);
		return EXIT_OK;
	}
	for (sub = cmd->subcommands; *sub; sub++)
		if (!strcmp(argv[1], command_word(*sub)))
			return cli_dispatch(*sub, argc - 1, argv + 1);
	return cli_usage_error(cmd, "unknown %s '%s'", what, argv[1]);
}

void cli_print_table(const struct cli_command *cmd)
{
	const struct cli_command *const *sub;
	size_t i, n = count_options(cmd);

	if (cmd->hidden)
		return;
	printf("command\t%s\t%s\t%s\n", cmd->name, cmd->args ? cmd->args : "", cmd->summary);
	for (i = 0; i < n; i++) {
		const struct cli_option *opt = cmd->options[i];
		char letter[3] = { '-', opt->letter, '\0' };

		if (!opt->hidden)
			printf("option\t%s\t--%s\t%s\t%s\t%s\t%s\n", cmd->name, opt->name,
			       opt->letter ? letter : "", opt->value ? opt->value : "", opt->help,
			       opt->choices ? opt->choices : "");
	}
	for (sub = cmd->subcommands; sub && *sub; sub++)
		cli_print_table(*sub);
}
