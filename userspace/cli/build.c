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

static const struct cli_command snapshot_subcommands[];

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

int cmd_build(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_commands[1];
	struct key_run r = { .op = SIEVE_BATCH_ADD };
	struct sieve_local *f = NULL;
	struct sieve_info info;
	struct filter_opts o;
	struct keys k;
	const char *out;
	int ret = filter_parse_opts(cmd, "tnpsBUKFSGLAfj", argc, argv, &o);

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
		if (o.json)
			printf("{\"file\": \"%s\", \"keys\": %llu, \"new\": %llu, \"type\": \"%s\", "
			       "\"layers\": %u, \"snapshot_bytes\": %llu, \"fpr\": %.9g}\n", out,
			       (unsigned long long)r.keys, (unsigned long long)(r.keys - r.present),
			       filter_type_name(info.geo.type), info.nlayers,
			       (unsigned long long)info.snapshot_bytes, info.fpr_ppb / 1e9);
		else
			printf("%s: %llu keys (%llu new), %s, %u layer%s, %llu bytes, fpr now %.4g\n",
			       out, (unsigned long long)r.keys, (unsigned long long)(r.keys - r.present),
			       filter_type_name(info.geo.type), info.nlayers, info.nlayers > 1 ? "s" : "",
			       (unsigned long long)info.snapshot_bytes, info.fpr_ppb / 1e9);
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

static int snapshot_info(int argc, char **argv)
{
	const struct cli_command *cmd = &snapshot_subcommands[0];
	struct sieve_local *f;
	struct sieve_info info;
	struct filter_opts o;
	int ret = filter_parse_opts(cmd, "j", argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.nargs != 1)
		return cli_usage_error(cmd, o.nargs ? "one FILE only" : "missing the snapshot FILE");
	if (load(o.args[0], &f))
		return EXIT_ERROR;
	sieve_local_info(f, &info);
	print_info(&info, o.args[0], 0, o.json);
	sieve_local_destroy(f);
	return EXIT_OK;
}

static int snapshot_query(int argc, char **argv)
{
	const struct cli_command *cmd = &snapshot_subcommands[1];
	struct key_run r = { .op = SIEVE_BATCH_QUERY };
	struct sieve_batch_stats st;
	struct sieve_local *f;
	struct filter_opts o;
	struct keys k;
	const char *file;
	bool first = true;
	int ret = filter_parse_opts(cmd, "fcj", argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (o.nargs < 1)
		return cli_usage_error(cmd, "missing the snapshot FILE");
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
	if (o.json && r.per_key)
		printf("{\"results\": [");
	while ((ret = keys_next(&k)) == 1) {
		sieve_local_batch(f, SIEVE_BATCH_QUERY, 0, k.bytes, k.lens, k.n, k.results, &st);
		r.keys += st.done;
		r.present += st.present;
		print_key_results(&r, &k, o.json, &first);
	}
	keys_close(&k);
	sieve_local_destroy(f);
	if (ret)
		return ret;
	if (o.json)
		printf("%s\"keys\": %llu, \"present\": %llu, \"absent\": %llu}\n",
		       r.per_key ? (first ? "], " : "\n  ], ") : "{", (unsigned long long)r.keys,
		       (unsigned long long)r.present, (unsigned long long)(r.keys - r.present));
	else if (o.count_only)
		printf("%llu key%s: %llu maybe present, %llu absent\n",
		       (unsigned long long)r.keys, r.keys == 1 ? "" : "s",
		       (unsigned long long)r.present, (unsigned long long)(r.keys - r.present));
	return r.present == r.keys ? EXIT_OK : EXIT_ABSENT;
}

static const struct cli_command snapshot_subcommands[] = {
	{ "snapshot info", "a snapshot file's shape and counters",
	  "sieve snapshot info FILE|- [-j]", snapshot_info },
	{ "snapshot query", "ask a snapshot file whether keys may be present",
	  "sieve snapshot query FILE|- [-c] [-j] (KEY... | -f KEYFILE | -)\n"
	  "  As 'sieve filter query': exit 0 if every key may be present, 1 if not.",
	  snapshot_query },
};

int cmd_snapshot(int argc, char **argv)
{
	unsigned int i;

	if (argc < 2)
		return cli_error("snapshot: which subcommand? (see 'sieve snapshot --help')");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		printf("usage: %s\n", filter_commands[2].usage);
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(snapshot_subcommands) / sizeof(snapshot_subcommands[0]); i++)
		if (!strcmp(argv[1], snapshot_subcommands[i].name + strlen("snapshot ")))
			return snapshot_subcommands[i].run(argc - 1, argv + 1);
	return cli_error("snapshot: unknown subcommand '%s' (see 'sieve snapshot --help')", argv[1]);
}
