// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshot files without the kernel: `sieve build` fills a local filter
 * from a key file and writes its snapshot (for `sieve filter import`);
 * `sieve snapshot info|query` read one back, checked in full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "filter_cli.h"
#include "json.h"

/* Non-empty lines of a regular file: the capacity a build defaults to. */
static int count_keys(const char *path, uint64_t *count)
{
	FILE *in = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	struct stat st;

	*count = 0;
	if (!in)
		return cli_error("%s: %s", path, strerror(errno));
	if (fstat(fileno(in), &st) || !S_ISREG(st.st_mode)) {
		fclose(in);
		return cli_error("%s: give --capacity when the keys do not come from a regular file",
				 path);
	}
	while ((len = getline(&line, &cap, in)) >= 0)
		*count += len > 1 || (len == 1 && line[0] != '\n');
	free(line);
	fclose(in);
	return 0;
}

static int snapshot_error(const char *file, int err)
{
	if (err == -ENOEXEC)
		return cli_error("%s: a sieve snapshot of another format version (version 1 came "
				 "before the one-pass hash): its tables cannot be converted; rebuild it "
				 "from its keys with 'sieve build'", file);
	if (err == -EINVAL)
		return cli_error("%s: not a valid sieve snapshot (corrupted, truncated, or followed "
				 "by other bytes)", file);
	if (err == -E2BIG)
		return cli_error("%s: a table beyond sieve's limits", file);
	return cli_error("%s: %s", file, strerror(-err));
}

/* Every key of @k into @f; 0 or a reported EXIT_ERROR. */
static int add_all(struct sieve_local *f, struct keys *k, uint32_t flags, struct key_run *r)
{
	struct sieve_batch_stats st;
	int ret;

	while ((ret = keys_next(k)) == 1) {
		ret = sieve_local_batch(f, SIEVE_BATCH_ADD, flags, k->bytes, k->lens, k->n, NULL, &st);
		r->keys += st.done;
		r->present += st.present;
		if (ret == -ENOSPC)
			return cli_error("the filter is full after %llu keys: raise --capacity, or "
					 "--scalable", (unsigned long long)r->keys);
		if (ret)
			return cli_error("adding key %llu: %s", (unsigned long long)r->keys + 1,
					 strerror(-ret));
	}
	return ret;
}

static void print_built(const char *out, const struct key_run *r, const struct sieve_info *info,
			bool json)
{
	if (json) {
		json_object(NULL);
		json_str("file", out);
		json_u64("keys", r->keys);
		json_u64("new", r->keys - r->present);
		json_str("type", filter_type_name(info->geo.type));
		json_u64("layers", info->nlayers);
		json_u64("snapshot_bytes", info->snapshot_bytes);
		json_double("fpr", "%.9g", info->fpr_ppb / 1e9);
		json_end();
		return;
	}
	printf("%s: %llu keys (%llu new), %s, %u layer%s, %llu bytes, fpr now %.4g\n",
	       out, (unsigned long long)r->keys, (unsigned long long)(r->keys - r->present),
	       filter_type_name(info->geo.type), info->nlayers, info->nlayers > 1 ? "s" : "",
	       (unsigned long long)info->snapshot_bytes, info->fpr_ppb / 1e9);
}

static int cmd_build(const struct cli_command *cmd, int argc, char **argv)
{
	struct key_run r = { .op = SIEVE_BATCH_ADD };
	struct sieve_local *f = NULL;
	struct sieve_info info;
	struct filter_opts o;
	struct keys k;
	const char *out;
	int ret = filter_parse(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.nargs < 1)
		return cli_usage_error(cmd, "missing the snapshot FILE");
	out = o.args[0];
	if (!strcmp(out, "-") && isatty(STDOUT_FILENO))
		return cli_usage_error(cmd, "a snapshot is binary: not to a terminal");
	if (filter_check_params(cmd, &o))
		return EXIT_ERROR;
	if (!o.geometry && !o.params.capacity) {
		if (!o.key_file || !strcmp(o.key_file, "-"))
			return cli_usage_error(cmd, "give --capacity when the keys come from stdin");
		if (count_keys(o.key_file, &o.params.capacity))
			return EXIT_ERROR;
		if (!o.params.capacity)
			return cli_error("%s: no keys", o.key_file);
		if (filter_check_params(cmd, &o))
			return EXIT_ERROR;
	}
	o.args++;
	o.nargs--;
	ret = keys_open(cmd, &o, &k);
	if (ret)
		return ret;
	ret = sieve_local_create(&o.params, &f);
	if (ret) {
		keys_close(&k);
		return filter_error("cannot make the filter", ret);
	}
	ret = add_all(f, &k, o.add_flags, &r);
	keys_close(&k);
	if (!ret) {
		int err = strcmp(out, "-") ? sieve_local_save_path(f, out)
					   : sieve_local_save(f, STDOUT_FILENO);

		ret = err ? cli_error("%s: %s", out, strerror(-err)) : EXIT_OK;
	}
	if (!ret && strcmp(out, "-")) {
		sieve_local_info(f, &info);
		print_built(out, &r, &info, o.json);
	}
	sieve_local_destroy(f);
	return ret;
}

static int load(const char *file, struct sieve_local **f)
{
	int err = strcmp(file, "-") ? sieve_local_load_path(file, f)
				    : sieve_local_load(STDIN_FILENO, f);

	return err ? snapshot_error(file, err) : 0;
}

static int snapshot_info(const struct cli_command *cmd, int argc, char **argv)
{
	struct sieve_local *f;
	struct sieve_info info;
	struct filter_opts o;
	int ret = filter_parse(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (load(o.args[0], &f))
		return EXIT_ERROR;
	sieve_local_info(f, &info);
	print_info(&info, o.args[0], 0, o.json);
	sieve_local_destroy(f);
	return EXIT_OK;
}

static int snapshot_query(const struct cli_command *cmd, int argc, char **argv)
{
	struct key_run r = { .op = SIEVE_BATCH_QUERY };
	struct sieve_batch_stats st;
	struct sieve_local *f;
	struct filter_opts o;
	struct keys k;
	const char *file;
	int ret = filter_parse(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	file = o.args[0];
	r.per_key = !o.count_only;
	o.args++;
	o.nargs--;
	ret = keys_open(cmd, &o, &k);
	if (ret)
		return ret;
	if (load(file, &f)) {
		keys_close(&k);
		return EXIT_ERROR;
	}
	if (o.json && r.per_key) {
		json_object(NULL);
		json_array("results");
	}
	while ((ret = keys_next(&k)) == 1) {
		sieve_local_batch(f, SIEVE_BATCH_QUERY, 0, k.bytes, k.lens, k.n, k.results, &st);
		r.keys += st.done;
		r.present += st.present;
		print_key_results(&r, &k, o.json);
	}
	keys_close(&k);
	sieve_local_destroy(f);
	if (o.json && r.per_key)
		json_end();
	if (ret) {
		json_end_all();
		return ret;
	}
	if (o.json)
		print_query_counts_json(&r);
	else if (o.count_only)
		printf("%llu key%s: %llu maybe present, %llu absent\n",
		       (unsigned long long)r.keys, r.keys == 1 ? "" : "s",
		       (unsigned long long)r.present, (unsigned long long)(r.keys - r.present));
	return r.present == r.keys ? EXIT_OK : EXIT_ABSENT;
}

const struct cli_command build_command = {
	"build", "build a snapshot file offline from a key file",
	.args = "FILE (-f KEYFILE | -)", .max_args = -1,
	.details = "  Adds every line of KEYFILE (or stdin) to a local filter and writes its\n"
		   "  snapshot to FILE, for 'sieve filter import'. A size as for 'sieve filter\n"
		   "  create'; without --capacity, a filter sized for the number of lines of\n"
		   "  KEYFILE (a regular file).",
	.options = CLI_OPTIONS(FILTER_CREATE_OPTIONS, &opt_if_absent, &opt_file, CLI_JSON_OPTIONS),
	.run = cmd_build,
};

static const struct cli_command snapshot_info_command = {
	"snapshot info", "a snapshot file's shape and counters",
	.args = "FILE|-", .min_args = 1, .max_args = 1,
	.options = CLI_OPTIONS(CLI_JSON_OPTIONS),
	.run = snapshot_info,
};

static const struct cli_command snapshot_query_command = {
	"snapshot query", "ask a snapshot file whether keys may be present",
	.args = "FILE|- (KEY... | -f KEYFILE | -)", .min_args = 1, .max_args = -1,
	.details = "  As 'sieve filter query': exit 0 if every key may be present, 1 if not.",
	.options = CLI_OPTIONS(&opt_count, &opt_file, CLI_JSON_OPTIONS),
	.run = snapshot_query,
};

const struct cli_command snapshot_command = {
	"snapshot", "look into a snapshot file: info, query",
	.details = "  The snapshot is checked in full first (as the kernel's import does).",
	.subcommands = (const struct cli_command *const[]){
		&snapshot_info_command, &snapshot_query_command, NULL,
	},
};
