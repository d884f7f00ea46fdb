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
#include "json.h"

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

static int cmd_create(const struct cli_command *cmd, int argc, char **argv)
{
	struct filter_opts o;
	struct target t;
	int ret = filter_parse(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	if (sieve_name_check(o.args[0]))
		return cli_usage_error(cmd, "bad filter name '%s': 1 to %u of A-Z a-z 0-9 . _ -",
				       o.args[0], SIEVE_NAME_MAX - 1);
	if (filter_check_params(cmd, &o))
		return EXIT_ERROR;
	if (!o.params.capacity && !o.geometry)
		return cli_usage_error(cmd, "give --capacity N (and --fpr P), or a geometry");
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
	if (o.json) {
		json_object(NULL);
		json_str("name", o.args[0]);
		json_u64("id", ret);
		json_end();
	} else
		printf("created %s (id %d)\n", o.args[0], ret);
	return EXIT_OK;
}

static void print_list_entry_json(const struct sieve_list_entry *e, const struct sieve_info *in)
{
	json_object(NULL);
	json_u64("id", e->id);
	json_strn("name", e->name, strnlen(e->name, SIEVE_NAME_MAX));
	json_str("type", filter_type_name(e->type));
	json_u64("create_flags", e->flags);
	json_u64("layers", in->nlayers);
	json_u64("items", in->items);
	json_u64("capacity", in->capacity);
	json_u64("memory_bytes", in->memory_bytes);
	json_end();
}

static int cmd_list(const struct cli_command *cmd, int argc, char **argv)
{
	struct sieve_list_entry *all;
	struct filter_opts o;
	struct target t;
	int i, n, ret = filter_parse(cmd, argc, argv, &o);

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
		json_array(NULL);
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
			print_list_entry_json(&all[i], &in);
			continue;
		}
		printf("%-6u %-31.31s %-8s %6u %12llu %12llu %12llu  %s%s\n", all[i].id, all[i].name,
		       filter_type_name(all[i].type), in.nlayers, (unsigned long long)in.items,
		       (unsigned long long)in.capacity, (unsigned long long)in.memory_bytes,
		       all[i].flags & SIEVE_CREATE_SCALABLE ? "scalable " : "",
		       all[i].flags & SIEVE_CREATE_EPHEMERAL ? "ephemeral" : "");
	}
	if (o.json)
		json_end_all();
	free(all);
	sieve_dev_close(t.dev);
	return ret ? filter_error("list", ret) : EXIT_OK;
}

static int cmd_info(const struct cli_command *cmd, int argc, char **argv)
{
	struct sieve_info in;
	struct filter_opts o;
	struct target t;
	int ret = filter_parse(cmd, argc, argv, &o);

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
	if (o->json && r->per_key) {
		json_object(NULL);
		json_array("results");
	}
	while ((ret = keys_next(&k)) == 1) {
		ret = sieve_dev_batch(t.dev, t.id, r->op, o->add_flags, k.bytes, k.lens, k.n,
				      k.results, &st);
		r->keys += st.done;
		r->present += st.present;
		k.n = st.done;
		print_key_results(r, &k, o->json);
		if (ret) {
			ret = key_error(&t, r, ret);
			break;
		}
	}
	keys_close(&k);
	sieve_dev_close(t.dev);
	/* The counts go on in the same object; after an error, it is closed. */
	if (o->json && r->per_key)
		json_end();
	if (o->json && ret)
		json_end_all();
	return ret ? EXIT_ERROR : -1;
}

static int cmd_add(const struct cli_command *cmd, int argc, char **argv)
{
	struct key_run r = { .op = SIEVE_BATCH_ADD };
	struct filter_opts o;
	int ret = filter_parse(cmd, argc, argv, &o);

	if (ret >= 0 || (ret = run_keys(cmd, &o, &r)) >= 0)
		return ret;
	if (o.json) {
		json_object(NULL);
		json_u64("keys", r.keys);
		json_u64("new", r.keys - r.present);
		json_u64("present", r.present);
		json_end();
	} else {
		printf("%llu key%s: %llu new, %llu maybe present before\n",
		       (unsigned long long)r.keys, r.keys == 1 ? "" : "s",
		       (unsigned long long)(r.keys - r.present), (unsigned long long)r.present);
	}
	return EXIT_OK;
}

static int cmd_query(const struct cli_command *cmd, int argc, char **argv)
{
	struct filter_opts o;
	struct key_run r = { .op = SIEVE_BATCH_QUERY };
	int ret = filter_parse(cmd, argc, argv, &o);

	if (ret >= 0)
		return ret;
	r.per_key = !o.count_only;
	ret = run_keys(cmd, &o, &r);
	if (ret >= 0)
		return ret;
	if (o.json)
		print_query_counts_json(&r);
	else if (o.count_only)
		printf("%llu key%s: %llu maybe present, %llu absent\n",
		       (unsigned long long)r.keys, r.keys == 1 ? "" : "s",
		       (unsigned long long)r.present, (unsigned long long)(r.keys - r.present));
	return r.present == r.keys ? EXIT_OK : EXIT_ABSENT;
}

static int cmd_del(const struct cli_command *cmd, int argc, char **argv)
{
	struct key_run r = { .op = SIEVE_BATCH_DELETE };
	struct filter_opts o;
	int ret = filter_parse(cmd, argc, argv, &o);

	if (ret >= 0 || (ret = run_keys(cmd, &o, &r)) >= 0)
		return ret;
	if (o.json) {
		json_object(NULL);
		json_u64("keys", r.keys);
		json_u64("deleted", r.present);
		json_u64("not_found", r.keys - r.present);
		json_end();
	} else {
		printf("%llu key%s: %llu deleted, %llu not found\n",
		       (unsigned long long)r.keys, r.keys == 1 ? "" : "s",
		       (unsigned long long)r.present, (unsigned long long)(r.keys - r.present));
	}
	return r.present == r.keys ? EXIT_OK : EXIT_ABSENT;
}

/* clear and destroy: one filter, no output. */
static int id_command(const struct cli_command *cmd, int argc, char **argv,
		      int (*op)(struct sieve_dev *, uint32_t))
{
	struct filter_opts o;
	struct target t;
	int ret = filter_parse(cmd, argc, argv, &o);

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

static int cmd_clear(const struct cli_command *cmd, int argc, char **argv)
{
	return id_command(cmd, argc, argv, sieve_dev_clear);
}

static int cmd_destroy(const struct cli_command *cmd, int argc, char **argv)
{
	return id_command(cmd, argc, argv, sieve_dev_destroy);
}

static int cmd_export(const struct cli_command *cmd, int argc, char **argv)
{
	const char *file;
	struct filter_opts o;
	struct target t;
	uint64_t bytes = 0;
	int ret = filter_parse(cmd, argc, argv, &o);

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

static int cmd_import(const struct cli_command *cmd, int argc, char **argv)
{
	const char *name, *file;
	struct filter_opts o;
	struct target t;
	int ret = filter_parse(cmd, argc, argv, &o);

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
	if (ret == -ENOEXEC)
		return cli_error("%s: a sieve snapshot of another format version (version 1 came "
				 "before the one-pass hash): its tables cannot be converted; rebuild it "
				 "from its keys with 'sieve build'", file);

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

static int cmd_merge(const struct cli_command *cmd, int argc, char **argv)
{
	struct target dst, src;
	struct filter_opts o;
	int ret = filter_parse(cmd, argc, argv, &o);

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

#define KEYS_ARGS	"(KEY... | -f FILE | -)"

static const struct cli_command filter_create_command = {
	"filter create", "make a filter in the kernel",
	.args = "NAME", .min_args = 1, .max_args = 1,
	.details = "  NAME: 1 to 31 of A-Z a-z 0-9 . _ -. A size: --type with --capacity (and\n"
		   "  --fpr, default 1%), or a geometry (--bits and --hashes for bloom and\n"
		   "  blocked, --buckets and --fp-bits for cuckoo). --scalable stacks layers\n"
		   "  as keys arrive (--growth, --max-layers).",
	.options = CLI_OPTIONS(FILTER_CREATE_OPTIONS, CLI_JSON_OPTIONS),
	.run = cmd_create,
};
static const struct cli_command filter_list_command = {
	"filter list", "list the kernel's filters",
	.options = CLI_OPTIONS(CLI_JSON_OPTIONS),
	.run = cmd_list,
};
static const struct cli_command filter_info_command = {
	"filter info", "a filter's shape and counters",
	.args = "NAME", .min_args = 1, .max_args = 1,
	.options = CLI_OPTIONS(CLI_JSON_OPTIONS),
	.run = cmd_info,
};
static const struct cli_command filter_add_command = {
	"filter add", "add keys",
	.args = "NAME " KEYS_ARGS, .min_args = 1, .max_args = -1,
	.details = "  Keys from arguments, or one per line from FILE or stdin (empty lines\n"
		   "  skipped), sent in batches. Prints how many keys were new. A cuckoo\n"
		   "  filter stores another copy of a present key unless --if-absent.\n"
		   "  Put -- before keys that start with '-'.",
	.options = CLI_OPTIONS(&opt_if_absent, &opt_file, CLI_JSON_OPTIONS),
	.run = cmd_add,
};
static const struct cli_command filter_query_command = {
	"filter query", "ask whether keys may be present",
	.args = "NAME " KEYS_ARGS, .min_args = 1, .max_args = -1,
	.details = "  Prints 'present KEY' or 'absent KEY' for each key (-c: only the counts).\n"
		   "  Exit 0 if every key may be present, 1 if any is absent.",
	.options = CLI_OPTIONS(&opt_count, &opt_file, CLI_JSON_OPTIONS),
	.run = cmd_query,
};
static const struct cli_command filter_del_command = {
	"filter del", "delete keys (cuckoo filters)",
	.args = "NAME " KEYS_ARGS, .min_args = 1, .max_args = -1,
	.details = "  Removes one copy of each key; exit 1 if any was not found. Delete only\n"
		   "  keys you added: another key's fingerprint may go instead.",
	.options = CLI_OPTIONS(&opt_file, CLI_JSON_OPTIONS),
	.run = cmd_del,
};
static const struct cli_command filter_clear_command = {
	"filter clear", "forget every key of a filter",
	.args = "NAME", .min_args = 1, .max_args = 1,
	.run = cmd_clear,
};
static const struct cli_command filter_destroy_command = {
	"filter destroy", "remove a filter",
	.args = "NAME", .min_args = 1, .max_args = 1,
	.run = cmd_destroy,
};
static const struct cli_command filter_export_command = {
	"filter export", "save a filter's snapshot to a file",
	.args = "NAME FILE|-", .min_args = 2, .max_args = 2,
	.details = "  FILE is replaced only once the whole snapshot is written.",
	.run = cmd_export,
};
static const struct cli_command filter_import_command = {
	"filter import", "make a filter from a snapshot file",
	.args = "NAME FILE|-", .min_args = 2, .max_args = 2,
	.details = "  The snapshot (from export or sieve build) is checked in full by the kernel.",
	.run = cmd_import,
};
static const struct cli_command filter_merge_command = {
	"filter merge", "OR one Bloom filter into another",
	.args = "DST SRC", .min_args = 2, .max_args = 2,
	.details = "  Both non-scalable Bloom or blocked filters of the same geometry and seed.",
	.run = cmd_merge,
};

const struct cli_command filter_command = {
	"filter", "filters in the kernel: create, list, info, add, query, del, clear, destroy, "
		  "export, import, merge",
	.details = "  Filters held by the kernel, through /dev/sieve ($SIEVE_DEVICE overrides).",
	.subcommands = (const struct cli_command *const[]){
		&filter_create_command, &filter_list_command, &filter_info_command,
		&filter_add_command, &filter_query_command, &filter_del_command,
		&filter_clear_command, &filter_destroy_command, &filter_export_command,
		&filter_import_command, &filter_merge_command, NULL,
	},
};
