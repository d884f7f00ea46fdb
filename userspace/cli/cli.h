/* SPDX-License-Identifier: GPL-2.0 */
/* The sieve CLI: subcommands declared as tables, parsing shared by all. */
#ifndef SIEVE_CLI_H
#define SIEVE_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* Exit codes: every subcommand ends with one of these. */
enum {
	EXIT_OK = 0,
	EXIT_ABSENT = 1,	/* a query found nothing */
	EXIT_ERROR = 2,		/* bad usage or a failed operation */
};

struct cli_command {
	const char *name;
	const char *summary;
	const char *usage;	/* printed by --help and on a usage error */
	int (*run)(int argc, char **argv);
};

extern const struct cli_command local_commands[];
extern const unsigned int local_ncommands;
extern const struct cli_command filter_commands[];	/* filter, build, snapshot */
extern const unsigned int filter_ncommands;
extern const struct cli_command xdp_commands[];
extern const unsigned int xdp_ncommands;

/* One line on stderr, prefixed "sieve: "; returns EXIT_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Strict parsers: 0 on success, -EINVAL (with nothing stored) otherwise. */
int parse_u64(const char *s, uint64_t *out);		/* "1000000", "64M", "2k" */
int parse_u32(const char *s, uint32_t *out);
int parse_rate_ppb(const char *s, uint32_t *out);	/* "0.01", "1%", "1e-3" */
int parse_filter_type(const char *s, uint32_t *out);	/* bloom, blocked, cuckoo */
const char *filter_type_name(uint32_t type);

#endif /* SIEVE_CLI_H */
