// SPDX-License-Identifier: GPL-2.0
/*
 * What the filter commands share (and the local ones, for sizing): their
 * options, the checks of a new filter's options, keys in batches, error
 * lines and the info printout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "filter_cli.h"
#include "json.h"

/* ---- Options ----------------------------------------------------------------- */

static int set_type(void *opts, const char *arg)
{
	return parse_filter_type(arg, &((struct filter_opts *)opts)->params.type);
}

static int set_capacity(void *opts, const char *arg)
{
	struct filter_opts *o = opts;

	if (parse_u64(arg, &o->params.capacity) || !o->params.capacity)
		return -EINVAL;
	o->sized = true;
	return 0;
}

static int set_fpr(void *opts, const char *arg)
{
	struct filter_opts *o = opts;

	if (parse_rate_ppb(arg, &o->params.fpp_ppb))
		return -EINVAL;
	o->sized = true;
	return 0;
}

static int set_seed(void *opts, const char *arg)
{
	struct sieve_params *p = &((struct filter_opts *)opts)->params;

	if (parse_u32(arg, &p->seed))
		return -EINVAL;
	p->flags |= SIEVE_CREATE_SEED;
	return 0;
}

/* A geometry field: a positive integer; filter_check_params() checks the whole. */
static int set_geometry_u64(struct filter_opts *o, const char *arg, __u64 *field)
{
	uint64_t val;

	if (parse_u64(arg, &val) || !val)
		return -EINVAL;
	*field = val;
	o->geometry = true;
	return 0;
}

static int set_geometry_u32(struct filter_opts *o, const char *arg, uint32_t *field)
{
	if (parse_u32(arg, field) || !*field)
		return -EINVAL;
	o->geometry = true;
	return 0;
}

static int set_bits(void *opts, const char *arg)
{
	return set_geometry_u64(opts, arg, &((struct filter_opts *)opts)->params.geo.nbits);
}

static int set_buckets(void *opts, const char *arg)
{
	return set_geometry_u64(opts, arg, &((struct filter_opts *)opts)->params.geo.nbuckets);
}

static int set_hashes(void *opts, const char *arg)
{
	return set_geometry_u32(opts, arg, &((struct filter_opts *)opts)->params.geo.nhashes);
}

static int set_fp_bits(void *opts, const char *arg)
{
	return set_geometry_u32(opts, arg, &((struct filter_opts *)opts)->params.geo.fp_bits);
}

static int set_scalable(void *opts, const char *arg)
{
	((struct filter_opts *)opts)->params.flags |= SIEVE_CREATE_SCALABLE;
	return 0;
}

/* Growth and layers: positive here, their ranges in filter_check_params(). */
static int set_growth(void *opts, const char *arg)
{
	uint32_t *growth = &((struct filter_opts *)opts)->params.growth;

	return parse_u32(arg, growth) || !*growth ? -EINVAL : 0;
}

static int set_max_layers(void *opts, const char *arg)
{
	uint32_t *layers = &((struct filter_opts *)opts)->params.max_layers;

	return parse_u32(arg, layers) || !*layers ? -EINVAL : 0;
}

static int set_if_absent(void *opts, const char *arg)
{
	((struct filter_opts *)opts)->add_flags |= SIEVE_ADD_IF_ABSENT;
	return 0;
}

static int set_file(void *opts, const char *arg)
{
	((struct filter_opts *)opts)->key_file = arg;
	return 0;
}

#define RATE_ACCEPTS	"between 1e-9 and 1, e.g. 0.01 or 1%"

const struct cli_option opt_type = {
	"type", 't', "TYPE", "bloom, blocked or cuckoo",
	.set = set_type, .accepts = "bloom, blocked or cuckoo", .choices = "bloom blocked cuckoo",
};
const struct cli_option opt_capacity = {
	"capacity", 'n', "N", "keys to hold at the target rate (e.g. 1000000, 64M)",
	.set = set_capacity, .accepts = "a positive integer, e.g. 1000000 or 64M",
};
const struct cli_option opt_fpr = {
	"fpr", 0, "FPR", "target false-positive rate (e.g. 0.01 or 1%)",
	.set = set_fpr, .accepts = RATE_ACCEPTS,
};
/* The old name, before -p became --pretty: kept one release, not in --help. */
const struct cli_option opt_fpp = {
	"fpp", 0, "FPR", "old name of --fpr", .hidden = true,
	.set = set_fpr, .accepts = RATE_ACCEPTS,
};
const struct cli_option opt_seed = {
	"seed", 's', "SEED", "hash seed (default: random)",
	.set = set_seed, .accepts = "an integer below 2^32",
};
const struct cli_option opt_bits = {
	"bits", 0, "N", "geometry of bloom and blocked: bits of the table",
	.set = set_bits, .accepts = "a positive integer",
};
const struct cli_option opt_hashes = {
	"hashes", 0, "K", "geometry of bloom and blocked: hash functions",
	.set = set_hashes, .accepts = "a positive integer",
};
const struct cli_option opt_buckets = {
	"buckets", 0, "N", "geometry of cuckoo: buckets (a power of two)",
	.set = set_buckets, .accepts = "a positive integer",
};
const struct cli_option opt_fp_bits = {
	"fp-bits", 0, "F", "geometry of cuckoo: fingerprint bits (4 to 16)",
	.set = set_fp_bits, .accepts = "a positive integer",
};
const struct cli_option opt_scalable = {
	"scalable", 0, NULL, "add layers as keys arrive", .set = set_scalable,
};
const struct cli_option opt_growth = {
	"growth", 0, "G", "scalable: each layer G times larger (" CLI_STR(SIEVE_MIN_GROWTH)
	" to " CLI_STR(SIEVE_MAX_GROWTH) ", default " CLI_STR(SIEVE_DEFAULT_GROWTH) ")",
	.set = set_growth, .accepts = "a positive integer",
};
const struct cli_option opt_max_layers = {
	"max-layers", 0, "L", "scalable: at most L layers (" CLI_STR(SIEVE_MIN_LAYERS) " to "
	CLI_STR(SIEVE_MAX_LAYERS) ", default " CLI_STR(SIEVE_DEFAULT_LAYERS) ")",
	.set = set_max_layers, .accepts = "a positive integer",
};
const struct cli_option opt_ephemeral = {
	"ephemeral", 0, NULL, "refused: the filter would die as the command exits", .hidden = true,
	CLI_FLAG(struct filter_opts, ephemeral),
};
const struct cli_option opt_if_absent = {
	"if-absent", 0, NULL, "cuckoo: no second copy of a present key",
	.set = set_if_absent,
};
const struct cli_option opt_file = {
	"file", 'f', "FILE", "keys from FILE, one per line (-: stdin)", .set = set_file,
};
const struct cli_option opt_count = {
	"count", 'c', NULL, "only the counts, not a line per key",
	CLI_FLAG(struct filter_opts, count_only),
};

int filter_parse(const struct cli_command *cmd, int argc, char **argv, struct filter_opts *o)
{
	struct cli_args a;
	int ret;

	memset(o, 0, sizeof(*o));
	ret = cli_parse(cmd, argc, argv, o, &a);
	o->json = a.json;
	o->args = a.args;
	o->nargs = a.nargs;
	return ret;
}

/* ---- Checks of a new filter's options --------------------------------------- */

/* The geometry options given must be the ones the type uses. */
static int check_geometry(const struct cli_command *cmd, struct sieve_params *p)
{
	struct sieve_geometry *g = &p->geo;
	struct sieve_plan plan;
	int err;

	if (p->type == SIEVE_CUCKOO ? g->nbits || g->nhashes || !g->nbuckets || !g->fp_bits
				    : g->nbuckets || g->fp_bits || !g->nbits || !g->nhashes)
		return cli_usage_error(cmd, "a %s geometry is %s", filter_type_name(p->type),
				       p->type == SIEVE_CUCKOO ? "--buckets and --fp-bits"
							       : "--bits and --hashes");
	g->type = p->type;
	p->flags |= SIEVE_CREATE_GEOMETRY;
	err = sieve_local_plan(p, &plan);
	if (err == -E2BIG)
		return cli_error("that geometry needs more than the %llu MiB a filter may hold",
				 SIEVE_MAX_TABLE_BYTES >> 20);
	if (err)
		return cli_usage_error(cmd, "bad %s geometry: %s", filter_type_name(p->type),
				       p->type == SIEVE_CUCKOO ?
				       "buckets a power of two (at least 2), fp-bits 4 to 16" :
				       p->type == SIEVE_BLOOM ? "bits at least 64, hashes 1 to 32" :
				       "bits a multiple of 512, hashes 1 to 32");
	return 0;
}

/* A sized filter: is there a geometry for this capacity and rate? */
static int check_sizing(struct sieve_params *p)
{
	struct sieve_plan plan;
	int err;

	if (!p->capacity)
		return 0;	/* counted later (sieve build) */
	err = sieve_local_plan(p, &plan);
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

/*
 * Does the create contract (the module's, through libsieve) refuse the
 * layering asked for? Asked about it alone, on a filter that is otherwise
 * valid, so the refusal can name the options to blame.
 */
static bool layering_refused(const struct sieve_params *p)
{
	struct sieve_params probe = {
		.type = p->type, .flags = SIEVE_CREATE_SCALABLE,
		.capacity = 1, .fpp_ppb = SIEVE_PPB / 100,
		.growth = p->growth, .max_layers = p->max_layers,
	};

	return (p->growth || p->max_layers) && sieve_params_check(&probe) == -EINVAL;
}

/*
 * Every check of a new filter's options, device or local, is here (what
 * the parser took are plain numbers).
 */
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
	if (layering_refused(p))
		return cli_usage_error(cmd, "bad --growth %u or --max-layers %u: growth %u to %u, "
				       "layers %u to %u", p->growth, p->max_layers,
				       SIEVE_MIN_GROWTH, SIEVE_MAX_GROWTH, SIEVE_MIN_LAYERS,
				       SIEVE_MAX_LAYERS);
	if (o->geometry && (o->sized || scalable))
		return cli_usage_error(cmd, "a geometry excludes --capacity, --fpr and --scalable");
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

void print_key_results(const struct key_run *r, const struct keys *k, bool json)
{
	size_t i;

	for (i = 0; r->per_key && i < k->n; i++) {
		if (json) {
			json_object(NULL);
			json_strn("key", k->bytes + k->offs[i], k->lens[i]);
			json_bool("present", k->results[i]);
			json_end();
		} else {
			fputs(k->results[i] ? "present " : "absent ", stdout);
			keys_print(k, i, "\n");
		}
	}
}

void print_query_counts_json(const struct key_run *r)
{
	/* Per key, the counts close the object the results opened. */
	if (!r->per_key)
		json_object(NULL);
	json_u64("keys", r->keys);
	json_u64("present", r->present);
	json_u64("absent", r->keys - r->present);
	json_end();
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

static void print_info_json(const struct sieve_info *in, const char *name, uint32_t id)
{
	const struct sieve_geometry *g = &in->geo;

	json_object(NULL);
	json_str("name", name);
	json_u64("id", id);
	json_str("type", filter_type_name(g->type));
	json_u64("create_flags", in->create_flags);
	json_object("geometry");
	json_str("type", filter_type_name(g->type));
	json_u64("seed", g->seed);
	json_u64("nbits", g->nbits);
	json_u64("nbuckets", g->nbuckets);
	json_u64("nhashes", g->nhashes);
	json_u64("fp_bits", g->fp_bits);
	json_end();
	json_u64("capacity", in->capacity);
	json_double("target_fpr", "%.9g", in->fpp_ppb / 1e9);
	json_u64("layers", in->nlayers);
	json_u64("max_layers", in->max_layers);
	json_u64("growth", in->growth);
	json_double("fill", "%.6f", in->fill_ppm / 1e6);
	json_double("fpr", "%.9g", in->fpr_ppb / 1e9);
	json_u64("items", in->items);
	json_u64("inserted", in->inserted);
	json_u64("deleted", in->deleted);
	json_u64("queries", in->queries);
	json_u64("hits", in->hits);
	json_u64("memory_bytes", in->memory_bytes);
	json_u64("snapshot_bytes", in->snapshot_bytes);
	json_end();
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
		print_info_json(in, name, id);
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
