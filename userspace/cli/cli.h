/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sieve CLI: every command and option is declared in tables of the
 * types below. One parser, one dispatcher and one --help generator read
 * them, so what a command accepts, what its help lists and what its errors
 * say come from the same entry (and a completion script can, too).
 */
#ifndef SIEVE_CLI_H
#define SIEVE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A numeric constant's digits, for help texts: CLI_STR(SIEVE_MAX_GROWTH) is "16". */
#define CLI_STR_(x)	#x
#define CLI_STR(x)	CLI_STR_(x)

/* Exit codes: every subcommand ends with one of these. */
enum {
	EXIT_OK = 0,
	EXIT_ABSENT = 1,	/* a query found nothing */
	EXIT_ERROR = 2,		/* bad usage or a failed operation */
	/*
	 * xdp: a change stored, or a status read, while a recorded
	 * attachment of the list does not enforce it (xdp_enforce.c).
	 */
	EXIT_NOT_ENFORCED = 3,
};

/**
 * struct cli_option - one option, shared by the commands that list it
 * @name: the long name, without "--".
 * @letter: the short option, or 0 (long only).
 * @value: the value's name in --help ("N"), or NULL for a flag.
 * @help: one line for --help.
 * @hidden: accepted but not in --help (an old name kept for a release).
 * @set: stores the option into the command's options struct (NULL for a
 *	plain flag, see @flag_offset); 0, or -EINVAL for a bad value.
 * @accepts: what a value may be, for the usage error of a bad one.
 * @flag_offset: a flag without @set: the offset of the bool it sets.
 * @choices: a value that is one of a few words: those words, space-separated
 *	("native generic"), for completion; NULL for any other value.
 */
struct cli_option {
	const char *name;
	char letter;
	const char *value;
	const char *help;
	bool hidden;
	int (*set)(void *opts, const char *arg);
	const char *accepts;
	size_t flag_offset;
	const char *choices;
};

/* A plain flag: sets @field, a bool of the options struct @type. */
#define CLI_FLAG(type, field)	.flag_offset = offsetof(type, field)

/* -j and -p: every command with JSON output lists both; the parser sets cli_args.json. */
extern const struct cli_option cli_opt_json, cli_opt_pretty;
#define CLI_JSON_OPTIONS	&cli_opt_json, &cli_opt_pretty

/* A command's options list: CLI_OPTIONS(&opt_a, &opt_b). */
#define CLI_OPTIONS(...)	((const struct cli_option *const[]){ __VA_ARGS__, NULL })

/**
 * struct cli_command - a command, or a command of subcommands
 * @name: the words after "sieve" ("filter create"); the last is typed.
 * @summary: one line, for the parent's --help.
 * @args: the positional arguments in the usage line ("NAME FILE|-"), or NULL.
 * @details: more lines for --help (each starting "  "), or NULL.
 * @options: what it accepts besides --help, NULL-terminated (or NULL).
 * @min_args: positional arguments at least,
 * @max_args: and at most (-1: any number).
 * @subcommands: for a command of commands, NULL-terminated (then no @run).
 * @run: the command, given its own entry and argv from its last word on.
 * @hidden: runs, but is in no --help (tools' commands, not users').
 */
struct cli_command {
	const char *name;
	const char *summary;
	const char *args;
	const char *details;
	const struct cli_option *const *options;
	int min_args, max_args;
	const struct cli_command *const *subcommands;
	int (*run)(const struct cli_command *cmd, int argc, char **argv);
	bool hidden;
};

/* What cli_parse() leaves besides the command's own options. */
struct cli_args {
	bool json;		/* -j or -p (then the JSON writer indents) */
	int nargs;		/* the positional arguments */
	char **args;
};

/*
 * Parses @argv against @cmd's options into @opts (filled in as given; the
 * caller sets the defaults) and checks the count of positional arguments.
 * Returns -1 when the command should go on, else the exit code to end
 * with: 0 after printing --help, 2 after a reported usage error.
 */
int cli_parse(const struct cli_command *cmd, int argc, char **argv, void *opts,
	      struct cli_args *a);
/* Runs @cmd, or the subcommand argv[1] names; --help of either. */
int cli_dispatch(const struct cli_command *cmd, int argc, char **argv);
/*
 * The table under @cmd on stdout, what a completion script and the man
 * pages' test read, one tab-separated line each, hidden entries left out:
 *   command NAME ARGS SUMMARY
 *   option  COMMAND-NAME --LONG -L|"" VALUE|"" HELP CHOICES|""
 * --help and --version are every command's and are not listed.
 */
void cli_print_table(const struct cli_command *cmd);

/*
 * "sieve VERSION (ioctl ABI N)": the version (SIEVE_VERSION, from the file
 * VERSION) and the /dev/sieve ABI this CLI speaks (SIEVE_ABI_VERSION of
 * <linux/sieve.h>). `sieve --version`, and --version of every command.
 */
void cli_print_version(void);

/* The top-level commands, each family in its file. */
extern const struct cli_command size_command, dedup_command, measure_command;
extern const struct cli_command filter_command, build_command, snapshot_command;
extern const struct cli_command xdp_command;
/* xdp_removal.c: `xdp prune`, and `xdp detach --all` (@prune false). */
extern const struct cli_command xdp_prune_command;
int xdp_removal_run(bool prune, const char *state_dir, bool json);
/* xdp_why.c: `xdp why`. */
extern const struct cli_command xdp_why_command;
struct sxdp_store;
/*
 * xdp.c: the store by the agent's order (settings.h): @state_dir
 * (--state-dir, or NULL), $SIEVE_STATE_DIR, the settings @config (or
 * NULL); errors said on stderr (@cmd names the command): EXIT_OK or
 * EXIT_ERROR.
 */
int xdp_open_store(const char *state_dir, const char *config, const char *cmd,
		   struct sxdp_store **s);
/*
 * xdp.c: --state-dir of every xdp command, an absolute path. It sets the
 * first member of the command's options struct, which must be
 * `const char *state_dir` (XDP_STATE_DIR_FIRST asserts it).
 */
extern const struct cli_option xdp_opt_state_dir;
#define XDP_STATE_DIR_FIRST(type) \
	_Static_assert(offsetof(type, state_dir) == 0, #type ": state_dir must come first")
/*
 * agent_command.c: the table (agent_command.h); the agent runs as
 * sieve-agent, which agent_exec.c execs (not in the static VM CLI: no XDP loader there).
 */
extern const struct cli_command agent_command;
/* agent_exec.c: execs sieve-agent (beside this program) with @argv[1...]; returns only on failure. */
int cli_exec_agent(char **argv);

/* One line on stderr, prefixed "sieve: "; returns EXIT_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "sieve CMD: reason (see 'sieve CMD --help')"; returns EXIT_ERROR. */
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Strict parsers: 0 on success, -EINVAL (with nothing stored) otherwise. */
int parse_u64(const char *s, uint64_t *out);		/* "1000000", "64M", "2k" */
int parse_u32(const char *s, uint32_t *out);
int parse_rate_ppb(const char *s, uint32_t *out);	/* "0.01", "1%", "1e-3" */
int parse_filter_type(const char *s, uint32_t *out);	/* bloom, blocked, cuckoo */
const char *filter_type_name(uint32_t type);

#endif /* SIEVE_CLI_H */
