// SPDX-License-Identifier: GPL-2.0
/* Strict parsing of the CLI's numbers and names. */
#define _GNU_SOURCE	/* vasprintf */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/sieve.h>

#include "cli.h"
#include "escape.h"

/*
 * A message to stderr, escaped (escape.h): it quotes feed lines, entries,
 * file and interface names, error strings from outside, and stays one line
 * with no control character for a terminal to act on.
 */
static void vmessage(const char *fmt, va_list ap)
{
	char *line = NULL;
	int n = vasprintf(&line, fmt, ap);

	if (n >= 0)
		sieve_escape(stderr, line, n, SIEVE_ESC_LOG);
	free(line);
}

int cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sieve: ", stderr);
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_ERROR;
}

int cli_usage_error(const struct cli_command *cmd, const char *fmt, ...)
{
	va_list ap;
	/* The top-level command has no name: "sieve: ..." */
	const char *sep = *cmd->name ? " " : "";

	fprintf(stderr, "sieve%s%s: ", sep, cmd->name);
	va_start(ap, fmt);
	vmessage(fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'sieve%s%s --help')\n", sep, cmd->name);
	return EXIT_ERROR;
}

int parse_u64(const char *s, uint64_t *out)
{
	static const struct { char suffix; uint64_t scale; } scales[] = {
		{ 'k', 1000ULL }, { 'K', 1000ULL }, { 'M', 1000000ULL }, { 'G', 1000000000ULL },
	};
	uint64_t val, scale = 1;
	char *end;
	size_t i;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	val = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (i = 0; *end && i < sizeof(scales) / sizeof(scales[0]); i++)
		if (*end == scales[i].suffix) {
			scale = scales[i].scale;
			end++;
			break;
		}
	if (*end || __builtin_mul_overflow(val, scale, &val))
		return -EINVAL;
	*out = val;
	return 0;
}

int parse_u32(const char *s, uint32_t *out)
{
	uint64_t val;

	if (parse_u64(s, &val) || val > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)val;
	return 0;
}

/* A probability in (0, 1): "0.01", "1e-3" or a percentage "1%". */
int parse_rate_ppb(const char *s, uint32_t *out)
{
	double rate, ppb;
	char *end;

	/* Decimal only: strtod would also take spaces, hex, "inf" and "nan". */
	if (!s || !*s || s[strspn(s, "0123456789.eE+-%")])
		return -EINVAL;
	errno = 0;
	rate = strtod(s, &end);
	if (errno || end == s || !isfinite(rate))
		return -EINVAL;
	if (*end == '%') {
		rate /= 100;
		end++;
	}
	if (*end)
		return -EINVAL;
	ppb = round(rate * SIEVE_PPB);
	if (!(ppb >= 1 && ppb < SIEVE_PPB))
		return -EINVAL;
	*out = (uint32_t)ppb;
	return 0;
}

static const struct { const char *name; uint32_t type; } type_names[] = {
	{ "bloom", SIEVE_BLOOM },
	{ "blocked", SIEVE_BLOCKED_BLOOM },
	{ "blocked-bloom", SIEVE_BLOCKED_BLOOM },
	{ "cuckoo", SIEVE_CUCKOO },
};

int parse_filter_type(const char *s, uint32_t *out)
{
	size_t i;

	for (i = 0; s && i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (!strcmp(s, type_names[i].name)) {
			*out = type_names[i].type;
			return 0;
		}
	return -EINVAL;
}

const char *filter_type_name(uint32_t type)
{
	size_t i;

	for (i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (type_names[i].type == type)
			return type_names[i].name;
	return "unknown";
}
