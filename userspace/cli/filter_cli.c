// SPDX-License-Identifier: GPL-2.0
/*
 * What the filter commands share: one table of options (each subcommand
 * accepts a subset), the sizing options' checks, keys in batches, JSON
 * strings, error lines and the info printout.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "filter_cli.h"

/*
 * Every option of the filter commands. @letter identifies it in the
 * subcommands' @allowed strings; only those with @short_opt have it as a
 * short option too.
 */
static const struct {
	const char *name;
	int has_arg;
	char letter;
	bool short_opt;
} filter_options[] = {
	{ "type", required_argument, 't', true },
	{ "capacity", required_argument, 'n', true },
	{ "fpp", required_argument, 'p', true },
	{ "seed", required_argument, 's', true },
	{ "bits", required_argument, 'B', false },
	{ "buckets", required_argument, 'U', false },
	{ "hashes", required_argument, 'K', false },
	{ "fp-bits", required_argument, 'F', false },
	{ "scalable", no_argument, 'S', false },
	{ "growth", required_argument, 'G', false },
	{ "max-layers", required_argument, 'L', false },
	{ "ephemeral", no_argument, 'E', false },
	{ "if-absent", no_argument, 'A', false },
	{ "file", required_argument, 'f', true },
	{ "count", no_argument, 'c', true },
	{ "json", no_argument, 'j', true },
	{ "help", no_argument, 'h', true },
};
#define NOPTIONS	(sizeof(filter_options) / sizeof(filter_options[0]))

/* Stores one option's value; 0 or a reported EXIT_ERROR. */
static int set_option(const struct cli_command *cmd, int c, const char *arg, struct filter_opts *o)
{
	struct sieve_params *p = &o->params;
	uint64_t u64;

	switch (c) {
	case 't':
		if (parse_filter_type(arg, &p->type))
			return cli_usage_error(cmd, "unknown filter type '%s' (bloom, blocked, cuckoo)", arg);
		return 0;
	case 'n':
		if (parse_u64(arg, &p->capacity) || !p->capacity)
			return cli_usage_error(cmd, "bad capacity '%s': a positive integer, e.g. 1000000 or 64M", arg);
		o->sized = true;
		return 0;
	case 'p':
		if (parse_rate_ppb(arg, &p->fpp_ppb))
			return cli_usage_error(cmd, "bad false-positive rate '%s': between 1e-9 and 1, e.g. 0.01 or 1%%", arg);
		o->sized = true;
		return 0;
	case 's':
		if (parse_u32(arg, &p->seed))
			return cli_usage_error(cmd, "bad seed '%s': an integer below 2^32", arg);
		p->flags |= SIEVE_CREATE_SEED;
		return 0;
	case 'B':
	case 'U':
		if (parse_u64(arg, &u64) || !u64)
			return cli_usage_error(cmd, "bad --%s '%s': a positive integer", c == 'B' ? "bits" : "buckets", arg);
		*(c == 'B' ? &p->geo.nbits : &p->geo.nbuckets) = u64;
		o->geometry = true;
		return 0;
	case 'K':
	case 'F':
		if (parse_u32(arg, c == 'K' ? &p->geo.nhashes : &p->geo.fp_bits))
			return cli_usage_error(cmd, "bad --%s '%s': a positive integer", c == 'K' ? "hashes" : "fp-bits", arg);
		o->geometry = true;
		return 0;
	case 'S':
		p->flags |= SIEVE_CREATE_SCALABLE;
		return 0;
	case 'G':
		if (parse_u32(arg, &p->growth) || p->growth < 2 || p->growth > 16)
			return cli_usage_error(cmd, "bad growth '%s': 2 to 16", arg);
		return 0;
	case 'L':
		if (parse_u32(arg, &p->max_layers) || p->max_layers < 2 || p->max_layers > SIEVE_MAX_LAYERS)
			return cli_usage_error(cmd, "bad layer count '%s': 2 to %u", arg, SIEVE_MAX_LAYERS);
		return 0;
	case 'E':
		o->ephemeral = true;
		return 0;
	case 'A':
		o->add_flags |= SIEVE_ADD_IF_ABSENT;
		return 0;
	case 'f':
		o->key_file = arg;
		return 0;
	case 'c':
		o->count_only = true;
		return 0;
	case 'j':
		o->json = true;
		return 0;
	}
	return cli_usage_error(cmd, "unknown option");
}

int filter_parse_opts(const struct cli_command *cmd, const char *allowed, int argc,
		      char **argv, struct filter_opts *o)
{
	struct option longopts[NOPTIONS + 1];
	char shortopts[2 * NOPTIONS + 2] = ":";
	size_t i, nlong = 0, nshort = 1;
	int c;

	memset(o, 0, sizeof(*o));
	memset(longopts, 0, sizeof(longopts));
	for (i = 0; i < NOPTIONS; i++) {
		if (!strchr(allowed, filter_options[i].letter) && filter_options[i].letter != 'h')
			continue;
		longopts[nlong].name = filter_options[i].name;
		longopts[nlong].has_arg = filter_options[i].has_arg;
		longopts[nlong].val = filter_options[i].letter;
		nlong++;
		if (!filter_options[i].short_opt)
			continue;
		shortopts[nshort++] = filter_options[i].letter;
		if (filter_options[i].has_arg)
			shortopts[nshort++] = ':';
	}
	shortopts[nshort] = '\0';
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			printf("usage: %s\n", cmd->usage);
			return EXIT_OK;
		}
		if (c == ':')
			return cli_usage_error(cmd, "option '%s' needs a value", argv[optind - 1]);
		if (c == '?')
			return cli_usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
		if (set_option(cmd, c, optarg, o))
			return EXIT_ERROR;
	}
	o->args = argv + optind;
	o->nargs = argc - optind;
	return -1;
}

/* The geometry options given must be the ones the type uses. */
static int check_geometry(const struct cli_command *cmd, struct sieve_params *p)
{
	struct sieve_geometry *g = &p->geo;
	u64 table_bytes;
	int err;

	if (p->type == SIEVE_CUCKOO ? g->nbits || g->nhashes || !g->nbuckets || !g->fp_bits
				    : g->nbuckets || g->fp_bits || !g->nbits || !g->nhashes)
		return cli_usage_error(cmd, "a %s geometry is %s", filter_type_name(p->type),
				       p->type == SIEVE_CUCKOO ? "--buckets and --fp-bits"
							       : "--bits and --hashes");
	g->type = p->type;
	err = sieve_geometry_check(g, &table_bytes);
	if (err == -E2BIG)
		return cli_error("that geometry needs more than the %llu MiB a filter may hold",
				 SIEVE_MAX_TABLE_BYTES >> 20);
	if (err)
		return cli_usage_error(cmd, "bad %s geometry: %s", filter_type_name(p->type),
				       p->type == SIEVE_CUCKOO ?
				       "buckets a power of two (at least 2), fp-bits 4 to 16" :
				       p->type == SIEVE_BLOOM ? "bits at least 64, hashes 1 to 32" :
				       "bits a multiple of 512, hashes 1 to 32");
	p->flags |= SIEVE_CREATE_GEOMETRY;
	return 0;
}

/* A sized filter: is there a geometry for this capacity and rate? */
static int check_sizing(struct sieve_params *p)
{
	struct sieve_geometry geo;
	int err;

	if (!p->capacity)
		return 0;	/* counted later (sieve build) */
	err = sieve_size(p->type, p->capacity, p->fpp_ppb >> !!(p->flags & SIEVE_CREATE_SCALABLE), &geo);
	if (err == -E2BIG)
		return cli_error("%s: %llu keys at that rate need more than the %llu MiB a filter may hold",
				 filter_type_name(p->type), (unsigned long long)p->capacity,
				 SIEVE_MAX_TABLE_BYTES >> 20);
	if (err)
		return cli_error("%s cannot reach a false-positive rate of %.3g%s%s",
				 filter_type_name(p->type), p->fpp_ppb / 1e9,
				 p->type == SIEVE_CUCKOO ? " (16-bit fingerprints reach 1.2e-4)" : "",
				 p->flags & SIEVE_CREATE_SCALABLE ?
				 " (a scalable filter's first layer gets half the rate)" : "");
	return 0;
}

int filter_check_params(const struct cli_command *cmd, struct filter_opts *o)
{
	struct sieve_params *p = &o->params;
	bool scalable = p->flags & SIEVE_CREATE_SCALABLE;

	if (!p->type)
		return cli_usage_error(cmd, "which type? --type bloom, blocked or cuckoo");
	if (o->ephemeral)
		return cli_usage_error(cmd, "--ephemeral: the filter would be destroyed as this "
				       "command exits; ephemeral filters are for programs (libsieve)");
	if ((p->growth || p->max_layers) && !scalable)
		return cli_usage_error(cmd, "--growth and --max-layers need --scalable");
	if (o->geometry && (o->sized || scalable))
		return cli_usage_error(cmd, "a geometry excludes --capacity, --fpp and --scalable");
	if (o->geometry)
		return check_geometry(cmd, p);
	if (!p->fpp_ppb)
		p->fpp_ppb = SIEVE_PPB / 100;	/* 1% */
	return check_sizing(p);
}

/* ---- Keys ---------------------------------------------------------------- */

int keys_open(const struct cli_command *cmd, const struct filter_opts *o, struct keys *k)
{
	const char *file = o->key_file;
	int i;

	memset(k, 0, sizeof(*k));
	if (file && o->nargs)
		return cli_usage_error(cmd, "keys come from arguments or from -f, not both");
	if (!file && o->nargs == 1 && !strcmp(o->args[0], "-"))
		file = "-";
	if (!file && !o->nargs)
		return cli_usage_error(cmd, "no keys: give them as arguments, -f FILE or - (stdin)");
	k->lens = malloc(KEYS_BATCH * sizeof(*k->lens));
	k->offs = malloc(KEYS_BATCH * sizeof(*k->offs));
	k->results = malloc(KEYS_BATCH);
	if (!k->lens || !k->offs || !k->results) {
		keys_close(k);
		return cli_error("out of memory");
	}
	if (!file) {
		for (i = 0; i < o->nargs; i++) {
			size_t len = strlen(o->args[i]);

			if (!len || len > SIEVE_MAX_KEY_LEN) {
				keys_close(k);
				return cli_usage_error(cmd, "key %d: keys are 1 to %u bytes", i + 1,
						       SIEVE_MAX_KEY_LEN);
			}
		}
		k->args = o->args;
		k->nargs = o->nargs;
		return 0;
	}
	k->in_name = strcmp(file, "-") ? file : "stdin";
	k->in = strcmp(file, "-") ? fopen(file, "r") : stdin;
	if (!k->in) {
		int err = errno;

		keys_close(k);
		return cli_error("%s: %s", file, strerror(err));
	}
	return 0;
}

/* Appends one key to the batch. */
static int keys_append(struct keys *k, const char *key, size_t len)
{
	if (k->bytes_len + len > k->bytes_cap) {
		size_t cap = k->bytes_cap ? k->bytes_cap : 1 << 20;
		char *bytes;

		while (cap < k->bytes_len + len)
			cap *= 2;
		bytes = realloc(k->bytes, cap);
		if (!bytes)
			return cli_error("out of memory");
		k->bytes = bytes;
		k->bytes_cap = cap;
	}
	memcpy(k->bytes + k->bytes_len, key, len);
	k->offs[k->n] = k->bytes_len;
	k->lens[k->n++] = (uint32_t)len;
	k->bytes_len += len;
	return 0;
}

int keys_next(struct keys *k)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int err = 0;

	k->n = 0;
	k->bytes_len = 0;
	while (!err && k->nargs && k->n < KEYS_BATCH) {
		err = keys_append(k, k->args[0], strlen(k->args[0]));
		k->args++;
		k->nargs--;
	}
	while (!err && k->in && k->n < KEYS_BATCH && (len = getline(&line, &cap, k->in)) >= 0) {
		k->line++;
		if (len && line[len - 1] == '\n')
			len--;
		if (!len)
			continue;
		if (len > SIEVE_MAX_KEY_LEN)
			err = cli_error("%s:%llu: a key longer than %u bytes", k->in_name,
					(unsigned long long)k->line, SIEVE_MAX_KEY_LEN);
		else
			err = keys_append(k, line, (size_t)len);
	}
	if (!err && k->in && ferror(k->in))
		err = cli_error("%s: %s", k->in_name, strerror(errno));
	free(line);
	return err ? err : k->n > 0;
}

void keys_close(struct keys *k)
{
	if (k->in && k->in != stdin)
		fclose(k->in);
	free(k->bytes);
	free(k->lens);
	free(k->offs);
	free(k->results);
	memset(k, 0, sizeof(*k));
}

void keys_print(const struct keys *k, size_t i, const char *end)
{
	fwrite(k->bytes + k->offs[i], 1, k->lens[i], stdout);
	fputs(end, stdout);
}

void json_string(FILE *out, const char *s, size_t len)
{
	size_t i;

	fputc('"', out);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

void print_key_results(const struct key_run *r, const struct keys *k, bool json,
			      bool *first)
{
	size_t i;

	for (i = 0; r->per_key && i < k->n; i++) {
		if (json) {
			printf("%s\n    {\"key\": ", *first ? "" : ",");
			json_string(stdout, k->bytes + k->offs[i], k->lens[i]);
			printf(", \"present\": %s}", k->results[i] ? "true" : "false");
		} else {
			fputs(k->results[i] ? "present " : "absent ", stdout);
			keys_print(k, i, "\n");
		}
		*first = false;
	}
}

/* ---- Reporting ------------------------------------------------------------ */

int filter_error(const char *what, int err)
{
	switch (-err) {
	case ENOMEM:
		return cli_error("%s: out of memory (or the module's max_memory_mb limit)", what);
	case E2BIG:
		return cli_error("%s: the filter would exceed %llu MiB or the capacity limit", what,
				 SIEVE_MAX_TABLE_BYTES >> 20);
	case EBADF:
		return cli_error("%s: the device is open read-only", what);
	case ENOTTY:
		return cli_error("%s: %s is not a sieve device", what, sieve_dev_default_path());
	}
	return cli_error("%s: %s", what, strerror(-err));
}

static void print_geometry_json(const struct sieve_geometry *g)
{
	printf("\"geometry\": {\"type\": \"%s\", \"seed\": %u, \"nbits\": %llu, \"nbuckets\": %llu, "
	       "\"nhashes\": %u, \"fp_bits\": %u}", filter_type_name(g->type), g->seed,
	       (unsigned long long)g->nbits, (unsigned long long)g->nbuckets, g->nhashes, g->fp_bits);
}

static void print_flags(uint32_t flags)
{
	printf("%s%s%s%s", flags & SIEVE_CREATE_SCALABLE ? " scalable" : "",
	       flags & SIEVE_CREATE_EPHEMERAL ? " ephemeral" : "",
	       flags & SIEVE_CREATE_GEOMETRY ? " geometry" : "",
	       flags & SIEVE_CREATE_SEED ? " seed" : "");
}

void print_info(const struct sieve_info *in, const char *name, uint32_t id, bool json)
{
	const struct sieve_geometry *g = &in->geo;

	if (json) {
		printf("{\"name\": ");
		json_string(stdout, name, strlen(name));
		printf(", \"id\": %u, \"type\": \"%s\", \"create_flags\": %u, ", id,
		       filter_type_name(g->type), in->create_flags);
		print_geometry_json(g);
		printf(", \"capacity\": %llu, \"target_fpr\": %.9g, \"layers\": %u, "
		       "\"max_layers\": %u, \"growth\": %u, \"fill\": %.6f, \"fpr\": %.9g, "
		       "\"items\": %llu, \"inserted\": %llu, \"deleted\": %llu, \"queries\": %llu, "
		       "\"hits\": %llu, \"memory_bytes\": %llu, \"snapshot_bytes\": %llu}\n",
		       (unsigned long long)in->capacity, in->fpp_ppb / 1e9, in->nlayers,
		       in->max_layers, in->growth, in->fill_ppm / 1e6, in->fpr_ppb / 1e9,
		       (unsigned long long)in->items, (unsigned long long)in->inserted,
		       (unsigned long long)in->deleted, (unsigned long long)in->queries,
		       (unsigned long long)in->hits, (unsigned long long)in->memory_bytes,
		       (unsigned long long)in->snapshot_bytes);
		return;
	}
	printf("name:       %s\n", name);
	if (id)
		printf("id:         %u\n", id);
	printf("type:       %s\n", filter_type_name(g->type));
	if (in->create_flags) {
		printf("flags:     ");
		print_flags(in->create_flags);
		printf("\n");
	}
	if (g->type == SIEVE_CUCKOO)
		printf("geometry:   %llu buckets, %u-bit fingerprints, seed %u\n",
		       (unsigned long long)g->nbuckets, g->fp_bits, g->seed);
	else
		printf("geometry:   %llu bits, %u hashes, seed %u\n",
		       (unsigned long long)g->nbits, g->nhashes, g->seed);
	if (in->fpp_ppb)
		printf("sized for:  %llu keys at %.4g\n", (unsigned long long)in->capacity,
		       in->fpp_ppb / 1e9);
	if (in->create_flags & SIEVE_CREATE_SCALABLE)
		printf("layers:     %u of at most %u, growth %u\n", in->nlayers, in->max_layers,
		       in->growth);
	printf("items:      %llu%s\n", (unsigned long long)in->items,
	       g->type == SIEVE_CUCKOO ? "" : " (estimated)");
	printf("fill:       %.2f%%\n", in->fill_ppm / 1e4);
	printf("fpr now:    %.4g\n", in->fpr_ppb / 1e9);
	printf("counters:   %llu inserted, %llu deleted, %llu queries, %llu hits\n",
	       (unsigned long long)in->inserted, (unsigned long long)in->deleted,
	       (unsigned long long)in->queries, (unsigned long long)in->hits);
	printf("memory:     %llu bytes (snapshot %llu bytes)\n",
	       (unsigned long long)in->memory_bytes, (unsigned long long)in->snapshot_bytes);
}
