// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve filter ...`: the filters the kernel holds, through /dev/sieve
 * (libsieve's device client; $SIEVE_DEVICE overrides the path). Each
 * subcommand opens the device read-only when it only reads, so a query
 * needs no more than read access.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "filter_cli.h"

static const struct cli_command filter_subcommands[];

/* One open device and the filter a subcommand works on. */
struct target {
	struct sieve_dev *dev;
	const char *name;
	uint32_t id;
};

static int open_device(struct target *t, bool writable)
{
	const char *path = sieve_dev_default_path();
	int err = sieve_dev_open(path, writable, &t->dev);

	if (err == -ENOENT)
		return cli_error("%s: no such device (is the sieve module loaded?)", path);
	if (err == -EACCES || err == -EPERM)
		return cli_error("%s: permission denied (%s access is for root)", path,
				 writable ? "write" : "read");
	if (err)
		return cli_error("%s: %s", path, strerror(-err));
	return 0;
}

/* Opens the device and finds the filter called @name. */
static int open_target(const struct cli_command *cmd, struct target *t, const char *name,
		       bool writable)
{
	int ret;

	t->name = name;
	t->dev = NULL;
	if (sieve_name_check(name))
		return cli_usage_error(cmd, "bad filter name '%s': 1 to %u of A-Z a-z 0-9 . _ -",
				       name, SIEVE_NAME_MAX - 1);
	if (open_device(t, writable))
		return EXIT_ERROR;
	ret = sieve_dev_lookup(t->dev, name);
	if (ret < 0) {
		sieve_dev_close(t->dev);
		t->dev = NULL;
		if (ret == -ENOENT)
			return cli_error("no filter named '%s'", name);
		return filter_error(name, ret);
	}
	t->id = (uint32_t)ret;
	return 0;
}

/* Parses options, then checks the count of positional arguments. */
static int parse(const struct cli_command *cmd, const char *allowed, int argc, char **argv,
		 struct filter_opts *o, int min_args, int max_args)
{
	int ret = filter_parse_opts(cmd, allowed, argc, argv, o);

	if (ret >= 0)
		return ret;
	if (o->nargs < min_args)
		return cli_usage_error(cmd, "missing argument");
	if (max_args >= 0 && o->nargs > max_args)
		return cli_usage_error(cmd, "unexpected argument '%s'", o->args[max_args]);
	return -1;
}

static int cmd_create(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_subcommands[0];
	struct filter_opts o;
	struct target t;
	int ret = parse(cmd, "tnpsBUKFSGLEj", argc, argv, &o, 1, 1);

	if (ret >= 0)
		return ret;
	if (sieve_name_check(o.args[0]))
		return cli_usage_error(cmd, "bad filter name '%s': 1 to %u of A-Z a-z 0-9 . _ -",
				       o.args[0], SIEVE_NAME_MAX - 1);
	if (filter_check_params(cmd, &o))
		return EXIT_ERROR;
	if (!o.params.capacity && !o.geometry)
		return cli_usage_error(cmd, "give --capacity N (and --fpp P), or a geometry");
	if (open_device(&t, true))
		return EXIT_ERROR;
	ret = sieve_dev_create(t.dev, o.args[0], &o.params);
	sieve_dev_close(t.dev);
	if (ret == -EEXIST)
		return cli_error("a filter named '%s' exists", o.args[0]);
	if (ret == -ENOSPC)
		return cli_error("create '%s': the module's limit on filters (max_filters) is reached",
				 o.args[0]);
	if (ret < 0)
		return filter_error(o.args[0], ret);
	if (o.json)
		printf("{\"name\": \"%s\", \"id\": %d}\n", o.args[0], ret);
	else
		printf("created %s (id %d)\n", o.args[0], ret);
	return EXIT_OK;
}

static int cmd_list(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_subcommands[1];
	struct sieve_list_entry *all;
	struct filter_opts o;
	struct target t;
	int i, n, shown = 0, ret = parse(cmd, "j", argc, argv, &o, 0, 0);

	if (ret >= 0)
		return ret;
	if (open_device(&t, false))
		return EXIT_ERROR;
	n = sieve_dev_list_all(t.dev, &all);
	if (n < 0) {
		sieve_dev_close(t.dev);
		return filter_error("list", n);
	}
	ret = 0;
	if (o.json)
		printf("[");
	else if (n)
		printf("%-6s %-31s %-8s %6s %12s %12s %12s  %s\n", "ID", "NAME", "TYPE", "LAYERS",
		       "ITEMS", "CAPACITY", "MEMORY", "FLAGS");
	for (i = 0; i < n; i++) {
		struct sieve_info in;

		ret = sieve_dev_info(t.dev, all[i].id, &in);
		/* Destroyed since the list was taken: not there any more. */
		if (ret == -ENOENT)
			continue;
		if (ret)
			break;
		if (o.json) {
			printf("%s\n  {\"id\": %u, \"name\": ", shown++ ? "," : "", all[i].id);
			json_string(stdout, all[i].name, strnlen(all[i].name, SIEVE_NAME_MAX));
			printf(", \"type\": \"%s\", \"create_flags\": %u, \"layers\": %u, "
			       "\"items\": %llu, \"capacity\": %llu, \"memory_bytes\": %llu}",
			       filter_type_name(all[i].type), all[i].flags, in.nlayers,
			       (unsigned long long)in.items, (unsigned long long)in.capacity,
			       (unsigned long long)in.memory_bytes);
			continue;
		}
		printf("%-6u %-31.31s %-8s %6u %12llu %12llu %12llu  %s%s\n", all[i].id, all[i].name,
		       filter_type_name(all[i].type), in.nlayers, (unsigned long long)in.items,
		       (unsigned long long)in.capacity, (unsigned long long)in.memory_bytes,
		       all[i].flags & SIEVE_CREATE_SCALABLE ? "scalable " : "",
		       all[i].flags & SIEVE_CREATE_EPHEMERAL ? "ephemeral" : "");
	}
	if (o.json && !ret)
		printf("%s]\n", shown ? "\n" : "");
	free(all);
	sieve_dev_close(t.dev);
	return ret ? filter_error("list", ret) : EXIT_OK;
}

static int cmd_info(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_subcommands[2];
	struct sieve_info in;
	struct filter_opts o;
	struct target t;
	int ret = parse(cmd, "j", argc, argv, &o, 1, 1);

	if (ret >= 0)
		return ret;
	if (open_target(cmd, &t, o.args[0], false))
		return EXIT_ERROR;
	ret = sieve_dev_info(t.dev, t.id, &in);
	sieve_dev_close(t.dev);
	if (ret)
		return filter_error(t.name, ret);
	print_info(&in, t.name, t.id, o.json);
	return EXIT_OK;
}

/* Why a key batch stopped, in one line. */
static int key_error(const struct target *t, const struct key_run *r, int err)
{
	char what[96];

	if (r->op == SIEVE_BATCH_DELETE && err == -EOPNOTSUPP)
		return cli_error("delete from '%s': Bloom-type filters cannot delete (only cuckoo)",
				 t->name);
	if (r->op == SIEVE_BATCH_ADD && err == -ENOSPC)
		return cli_error("add to '%s': the filter is full after %llu keys of this run "
				 "(a cuckoo table, or a scalable filter at its last layer)",
				 t->name, (unsigned long long)r->keys);
	if (err == -ENOENT)
		return cli_error("'%s' was destroyed meanwhile", t->name);
	snprintf(what, sizeof(what), "%s '%s' after %llu keys",
		 r->op == SIEVE_BATCH_ADD ? "add to" : r->op == SIEVE_BATCH_QUERY ? "query" :
		 "delete from", t->name, (unsigned long long)r->keys);
	return filter_error(what, err);
}

static int run_keys(const struct cli_command *cmd, const struct filter_opts *o, struct key_run *r)
{
	struct filter_opts keys_from = *o;
	struct sieve_batch_stats st;
	struct target t;
	struct keys k;
	bool first = true;
	int ret;

	/* Bad usage is reported before the device is asked anything. */
	keys_from.args++;
	keys_from.nargs--;
	ret = keys_open(cmd, &keys_from, &k);
	if (ret)
		return ret;
	if (open_target(cmd, &t, o->args[0], r->op != SIEVE_BATCH_QUERY)) {
		keys_close(&k);
		return EXIT_ERROR;
	}
	if (o->json && r->per_key)
		printf("{\"results\": [");
	while ((ret = keys_next(&k)) == 1) {
		ret = sieve_dev_batch(t.dev, t.id, r->op, o->add_flags, k.bytes, k.lens, k.n,
				      k.results, &st);
		r->keys += st.done;
		r->present += st.present;
		k.n = st.done;
		print_key_results(r, &k, o->json, &first);
		if (ret) {
			ret = key_error(&t, r, ret);
			break;
		}
	}
	keys_close(&k);
	sieve_dev_close(t.dev);
	if (o->json && r->per_key)
		printf("%s]%s", first ? "" : "\n  ", ret ? "}\n" : ", ");
	return ret ? EXIT_ERROR : -1;
}

static int cmd_add(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_subcommands[3];
	struct key_run r = { .op = SIEVE_BATCH_ADD };
	struct filter_opts o;
	int ret = parse(cmd, "fAj", argc, argv, &o, 1, -1);

	if (ret >= 0 || (ret = run_keys(cmd, &o, &r)) >= 0)
		return ret;
	if (o.json)
		printf("{\"keys\": %llu, \"new\": %llu, \"present\": %llu}\n",
		       (unsigned long long)r.keys, (unsigned long long)(r.keys - r.present),
		       (unsigned long long)r.present);
	else
		printf("%llu key%s: %llu new, %llu maybe present before\n",
		       (unsigned long long)r.keys, r.keys == 1 ? "" : "s",
		       (unsigned long long)(r.keys - r.present), (unsigned long long)r.present);
	return EXIT_OK;
}

static int cmd_query(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_subcommands[4];
	struct filter_opts o;
	struct key_run r = { .op = SIEVE_BATCH_QUERY };
	int ret = parse(cmd, "fcj", argc, argv, &o, 1, -1);

	if (ret >= 0)
		return ret;
	r.per_key = !o.count_only;
	ret = run_keys(cmd, &o, &r);
	if (ret >= 0)
		return ret;
	if (o.json)
		printf("%s\"keys\": %llu, \"present\": %llu, \"absent\": %llu}\n",
		       r.per_key ? "" : "{", (unsigned long long)r.keys,
		       (unsigned long long)r.present, (unsigned long long)(r.keys - r.present));
	else if (o.count_only)
		printf("%llu key%s: %llu maybe present, %llu absent\n",
		       (unsigned long long)r.keys, r.keys == 1 ? "" : "s",
		       (unsigned long long)r.present, (unsigned long long)(r.keys - r.present));
	return r.present == r.keys ? EXIT_OK : EXIT_ABSENT;
}

static int cmd_del(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_subcommands[5];
	struct key_run r = { .op = SIEVE_BATCH_DELETE };
	struct filter_opts o;
	int ret = parse(cmd, "fj", argc, argv, &o, 1, -1);

	if (ret >= 0 || (ret = run_keys(cmd, &o, &r)) >= 0)
		return ret;
	if (o.json)
		printf("{\"keys\": %llu, \"deleted\": %llu, \"not_found\": %llu}\n",
		       (unsigned long long)r.keys, (unsigned long long)r.present,
		       (unsigned long long)(r.keys - r.present));
	else
		printf("%llu key%s: %llu deleted, %llu not found\n",
		       (unsigned long long)r.keys, r.keys == 1 ? "" : "s",
		       (unsigned long long)r.present, (unsigned long long)(r.keys - r.present));
	return r.present == r.keys ? EXIT_OK : EXIT_ABSENT;
}

/* clear and destroy: one filter, no output. */
static int id_command(const struct cli_command *cmd, int argc, char **argv,
		      int (*op)(struct sieve_dev *, uint32_t))
{
	struct filter_opts o;
	struct target t;
	int ret = parse(cmd, "", argc, argv, &o, 1, 1);

	if (ret >= 0)
		return ret;
	if (open_target(cmd, &t, o.args[0], true))
		return EXIT_ERROR;
	ret = op(t.dev, t.id);
	sieve_dev_close(t.dev);
	if (ret == -ENOENT)
		return cli_error("'%s' was destroyed meanwhile", t.name);
	return ret ? filter_error(t.name, ret) : EXIT_OK;
}

static int cmd_clear(int argc, char **argv)
{
	return id_command(&filter_subcommands[6], argc, argv, sieve_dev_clear);
}

static int cmd_destroy(int argc, char **argv)
{
	return id_command(&filter_subcommands[7], argc, argv, sieve_dev_destroy);
}

static int cmd_export(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_subcommands[8];
	const char *file;
	struct filter_opts o;
	struct target t;
	uint64_t bytes = 0;
	int ret = parse(cmd, "", argc, argv, &o, 2, 2);

	if (ret >= 0)
		return ret;
	file = o.args[1];
	if (!strcmp(file, "-") && isatty(STDOUT_FILENO))
		return cli_usage_error(cmd, "a snapshot is binary: not to a terminal");
	if (open_target(cmd, &t, o.args[0], false))
		return EXIT_ERROR;
	if (!strcmp(file, "-"))
		ret = sieve_dev_export(t.dev, t.id, STDOUT_FILENO, &bytes);
	else
		ret = sieve_dev_export_path(t.dev, t.id, file, &bytes);
	sieve_dev_close(t.dev);
	if (ret == -EIO)
		return cli_error("export '%s': the device stopped before the end of the snapshot",
				 t.name);
	if (ret)
		return cli_error("export '%s' to %s: %s", t.name, file, strerror(-ret));
	if (strcmp(file, "-"))
		printf("exported %s to %s (%llu bytes)\n", t.name, file, (unsigned long long)bytes);
	return EXIT_OK;
}

static int cmd_import(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_subcommands[9];
	const char *name, *file;
	struct filter_opts o;
	struct target t;
	int ret = parse(cmd, "", argc, argv, &o, 2, 2);

	if (ret >= 0)
		return ret;
	name = o.args[0];
	file = o.args[1];
	if (sieve_name_check(name))
		return cli_usage_error(cmd, "bad filter name '%s': 1 to %u of A-Z a-z 0-9 . _ -",
				       name, SIEVE_NAME_MAX - 1);
	if (open_device(&t, true))
		return EXIT_ERROR;
	if (!strcmp(file, "-"))
		ret = sieve_dev_import(t.dev, name, 0, STDIN_FILENO);
	else
		ret = sieve_dev_import_path(t.dev, name, 0, file);
	sieve_dev_close(t.dev);
	if (ret == -EINVAL)
		return cli_error("%s: not a valid sieve snapshot (corrupted, truncated, or "
				 "followed by other bytes)", file);
	if (ret == -EEXIST)
		return cli_error("a filter named '%s' exists", name);
	if (ret == -ENOSPC)
		return cli_error("import '%s': the module's limit on filters (max_filters) is reached",
				 name);
	if (ret < 0) {
		char what[SIEVE_NAME_MAX + 64];

		snprintf(what, sizeof(what), "import %s from %s", name, file);
		return filter_error(what, ret);
	}
	printf("imported %s (id %d)\n", name, ret);
	return EXIT_OK;
}

static int cmd_merge(int argc, char **argv)
{
	const struct cli_command *cmd = &filter_subcommands[10];
	struct target dst, src;
	struct filter_opts o;
	int ret = parse(cmd, "", argc, argv, &o, 2, 2);

	if (ret >= 0)
		return ret;
	if (open_target(cmd, &src, o.args[1], false))
		return EXIT_ERROR;
	sieve_dev_close(src.dev);
	if (open_target(cmd, &dst, o.args[0], true))
		return EXIT_ERROR;
	ret = sieve_dev_merge(dst.dev, dst.id, src.id);
	sieve_dev_close(dst.dev);
	if (ret == -EINVAL)
		return cli_error("cannot merge '%s' into '%s': both must be non-scalable Bloom or "
				 "blocked filters with the same geometry and seed, and not the same "
				 "filter", src.name, dst.name);
	if (ret == -ENOENT)
		return cli_error("merge: a filter was destroyed meanwhile");
	return ret ? filter_error("merge", ret) : EXIT_OK;
}

#define SIZING_OPTS "(--capacity N [--fpp P] | --bits N --hashes K | --buckets N --fp-bits F)"

static const struct cli_command filter_subcommands[] = {
	{ "filter create", "make a filter in the kernel",
	  "sieve filter create NAME --type bloom|blocked|cuckoo " SIZING_OPTS "\n"
	  "                    [--seed S] [--scalable [--growth G] [--max-layers L]] [-j]\n"
	  "  NAME: 1 to 31 of A-Z a-z 0-9 . _ -. --fpp defaults to 1%. A geometry\n"
	  "  (bits and hashes for bloom and blocked, buckets and fingerprint bits for\n"
	  "  cuckoo) replaces the sizing. --scalable stacks layers GROWTH times larger\n"
	  "  (default 2, at most MAX_LAYERS, default 8) as keys arrive. --ephemeral is\n"
	  "  refused: the filter would die as this command exits.",
	  cmd_create },
	{ "filter list", "list the kernel's filters",
	  "sieve filter list [-j]", cmd_list },
	{ "filter info", "a filter's shape and counters",
	  "sieve filter info NAME [-j]", cmd_info },
	{ "filter add", "add keys",
	  "sieve filter add NAME [--if-absent] [-j] (KEY... | -f FILE | -)\n"
	  "  Keys from arguments, or one per line from FILE or stdin (empty lines\n"
	  "  skipped), sent in batches. Prints how many keys were new. A cuckoo\n"
	  "  filter stores another copy of a present key unless --if-absent.\n"
	  "  Put -- before keys that start with '-'.",
	  cmd_add },
	{ "filter query", "ask whether keys may be present",
	  "sieve filter query NAME [-c] [-j] (KEY... | -f FILE | -)\n"
	  "  Prints 'present KEY' or 'absent KEY' for each key (-c: only the counts).\n"
	  "  Exit 0 if every key may be present, 1 if any is absent.",
	  cmd_query },
	{ "filter del", "delete keys (cuckoo filters)",
	  "sieve filter del NAME [-j] (KEY... | -f FILE | -)\n"
	  "  Removes one copy of each key; exit 1 if any was not found. Delete only\n"
	  "  keys you added: another key's fingerprint may go instead.",
	  cmd_del },
	{ "filter clear", "forget every key of a filter",
	  "sieve filter clear NAME", cmd_clear },
	{ "filter destroy", "remove a filter",
	  "sieve filter destroy NAME", cmd_destroy },
	{ "filter export", "save a filter's snapshot to a file",
	  "sieve filter export NAME FILE|-\n"
	  "  FILE is replaced only once the whole snapshot is written.",
	  cmd_export },
	{ "filter import", "make a filter from a snapshot file",
	  "sieve filter import NAME FILE|-\n"
	  "  The snapshot (from export or sieve build) is checked in full by the kernel.",
	  cmd_import },
	{ "filter merge", "OR one Bloom filter into another",
	  "sieve filter merge DST SRC\n"
	  "  Both non-scalable Bloom or blocked filters of the same geometry and seed.",
	  cmd_merge },
};
#define NSUBCOMMANDS	(sizeof(filter_subcommands) / sizeof(filter_subcommands[0]))

static int cmd_filter(int argc, char **argv)
{
	unsigned int i;

	if (argc < 2)
		return cli_error("filter: which subcommand? (see 'sieve filter --help')");
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		printf("usage: sieve filter SUBCOMMAND [OPTIONS]   (sieve filter SUBCOMMAND --help)\n"
		       "  Filters held by the kernel, through %s ($SIEVE_DEVICE).\n\n",
		       sieve_dev_default_path());
		for (i = 0; i < NSUBCOMMANDS; i++)
			printf("  %-8s %s\n", filter_subcommands[i].name + strlen("filter "),
			       filter_subcommands[i].summary);
		return EXIT_OK;
	}
	for (i = 0; i < NSUBCOMMANDS; i++)
		if (!strcmp(argv[1], filter_subcommands[i].name + strlen("filter ")))
			return filter_subcommands[i].run(argc - 1, argv + 1);
	return cli_error("filter: unknown subcommand '%s' (see 'sieve filter --help')", argv[1]);
}

const struct cli_command filter_commands[] = {
	{ "filter", "filters in the kernel: create, list, info, add, query, del, clear, destroy, "
		    "export, import, merge",
	  "sieve filter SUBCOMMAND [OPTIONS]   (sieve filter --help lists them)", cmd_filter },
	{ "build", "build a snapshot file offline from a key file",
	  "sieve build FILE --type TYPE " SIZING_OPTS " [--seed S]\n"
	  "                 [--scalable [--growth G] [--max-layers L]] [--if-absent] [-j]\n"
	  "                 (-f KEYFILE | -)\n"
	  "  Adds every line of KEYFILE (or stdin) to a local filter and writes its\n"
	  "  snapshot to FILE, for 'sieve filter import'. Without --capacity, a filter\n"
	  "  sized for the number of lines of KEYFILE (a regular file).",
	  cmd_build },
	{ "snapshot", "look into a snapshot file: info, query",
	  "sieve snapshot info FILE [-j]\n"
	  "       sieve snapshot query FILE [-c] [-j] (KEY... | -f FILE | -)\n"
	  "  The snapshot is checked in full first (as the kernel's import does).",
	  cmd_snapshot },
};
const unsigned int filter_ncommands = sizeof(filter_commands) / sizeof(filter_commands[0]);
