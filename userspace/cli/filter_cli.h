/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the filter commands (`sieve filter ...`, `sieve build`, `sieve
 * snapshot ...`) share: their options, keys read from arguments, a file or
 * stdin in batches, and error lines. The local commands size filters with
 * the same options.
 */
#ifndef SIEVE_FILTER_CLI_H
#define SIEVE_FILTER_CLI_H

#include <stdio.h>

#include "libsieve.h"
#include "cli.h"

/* Options of the filter commands (and of the local ones, which size filters too). */
struct filter_opts {
	struct sieve_params params;
	bool sized;		/* --capacity or --fpr given */
	bool geometry;		/* --bits, --buckets, --hashes or --fp-bits given */
	bool ephemeral;
	bool json;		/* -j or -p */
	bool count_only;	/* -c: counts, not one line per key */
	bool verbose;		/* dedup -v */
	uint64_t queries;	/* measure -q */
	uint32_t add_flags;	/* --if-absent */
	const char *key_file;	/* -f FILE ("-": stdin) */
	int nargs;		/* the positional arguments, after the options */
	char **args;
};

/* Each option once; the commands' tables list the ones they take. */
extern const struct cli_option opt_type, opt_capacity, opt_fpr, opt_fpp, opt_seed;
extern const struct cli_option opt_bits, opt_hashes, opt_buckets, opt_fp_bits;
extern const struct cli_option opt_scalable, opt_growth, opt_max_layers, opt_ephemeral;
extern const struct cli_option opt_if_absent, opt_file, opt_count;

/* What makes a new filter: `filter create` and `build`. */
#define FILTER_CREATE_OPTIONS \
	&opt_type, &opt_capacity, &opt_fpr, &opt_fpp, &opt_bits, &opt_hashes, &opt_buckets, \
	&opt_fp_bits, &opt_seed, &opt_scalable, &opt_growth, &opt_max_layers, &opt_ephemeral

/* cli_parse() into @o (zeroed first), with -j and the arguments in it too. */
int filter_parse(const struct cli_command *cmd, int argc, char **argv, struct filter_opts *o);
/*
 * Checks a new filter's options into o->params (the one place for them):
 * 0 or a reported EXIT_ERROR.
 */
int filter_check_params(const struct cli_command *cmd, struct filter_opts *o);

/*
 * Keys in batches: from the arguments (each one key), or lines of a file
 * or stdin (one key per line, the newline not included; empty lines are
 * skipped). Batches hold at most KEYS_BATCH keys.
 */
#define KEYS_BATCH	65536U

struct keys {
	char **args;		/* keys given as arguments, or NULL */
	int nargs;
	FILE *in;		/* else the lines of this */
	const char *in_name;
	uint64_t line;		/* lines read so far */
	/* The current batch, as the batch calls take it. */
	char *bytes;
	size_t bytes_len, bytes_cap;
	uint32_t *lens;
	size_t *offs;		/* where each key starts in bytes */
	size_t n;
	uint8_t *results;
};

/*
 * Sets @k up from the options: keys from o->args, or from o->key_file / a
 * lone "-" argument. 0, or a reported exit code.
 */
int keys_open(const struct cli_command *cmd, const struct filter_opts *o, struct keys *k);
/* The next batch into k->bytes/lens/n: 1 with keys, 0 at the end, or a reported EXIT_ERROR. */
int keys_next(struct keys *k);
void keys_close(struct keys *k);
/* Prints key @i of the current batch, raw, then @end. */
void keys_print(const struct keys *k, size_t i, const char *end);

/*
 * A run of key batches: what the key commands count and print (one line
 * or JSON object per key when @per_key, for queries).
 */
struct key_run {
	uint32_t op;		/* enum sieve_batch_op */
	bool per_key;
	uint64_t keys, present;
};

/* Prints the answers of the first k->n keys of the batch (if r->per_key). */
void print_key_results(const struct key_run *r, const struct keys *k, bool json);
/* A query's counts in JSON: after the results (per key), or alone. */
void print_query_counts_json(const struct key_run *r);

/* Prints the fields of a filter's info (a device filter or a local one). */
void print_info(const struct sieve_info *info, const char *name, uint32_t id, bool json);

/*
 * One error line for a failed operation on a filter or a file: @what says
 * what was tried ("add to 'f'"), @err is the -errno; some errors get a
 * sentence of their own. Returns EXIT_ERROR.
 */
int filter_error(const char *what, int err);

#endif /* SIEVE_FILTER_CLI_H */
