// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve xdp detach --all` and `sieve xdp prune`: what the host's pins
 * know, across namespaces (userspace/xdp/prune.c). detach --all is what
 * package removal runs: `ip link set dev X xdp off` cannot take off a
 * program attached through a pinned bpf_link.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "settings.h"
#include "store.h"
#include "xdp.h"
#include "xdp_json.h"

struct report {
	bool json, prune;
	unsigned int n, failed;
};

/*
 * -j: the document of `detach -j IFACE...` (xdp_json.h), each interface
 * with its result ("detached", "pruned" or "failed", with an error) and
 * what detach --all and prune know besides. A failure of a namespace's
 * folder or of the store has iface "" (and netns 0 for the store).
 */
static void json_removed(const struct report *rep, const struct sxdp_removed *r)
{
	json_object(NULL);
	json_str("iface", r->iface);
	json_str("result", r->error ? "failed" : rep->prune ? "pruned" : "detached");
	if (r->error)
		json_str("error", r->error);
	json_u64("netns", r->netns);
	json_bool("this_netns", r->netns == sxdp_netns());
	if (rep->prune && r->why)
		json_str("why", r->why);
	json_bool("was_linked", r->linked);
	json_bool("record_removed", r->record);
	json_end();
}

static void print_removed(const struct sxdp_removed *r, void *arg)
{
	struct report *rep = arg;

	if (r->error)
		rep->failed++;
	else
		rep->n++;
	if (rep->json)
		return json_removed(rep, r);
	if (r->error) {
		cli_error("%s%s", rep->prune ? "not pruned: " : "not detached: ", r->error);
		return;
	}
	if (r->netns == sxdp_netns())
		printf("%s: ", r->iface);
	else
		printf("%s (netns %llu): ", r->iface, (unsigned long long)r->netns);
	if (rep->prune)
		printf("pruned, %s%s\n", r->why, r->record ? "; its record removed" : "");
	else
		printf("detached%s\n", r->linked ? "" : " (its link ran on no interface)");
}

/*
 * The store; for detach --all, none where its folder holds no store file:
 * nothing is recorded, and package removal must neither make one nor
 * touch the folder (opening a store makes its file and tightens its
 * folder's mode, and refuses one of another owner: a /var/lib/sieve that
 * was someone else's before the package would block its removal).
 */
static int open_store(const char *state_dir, bool prune, struct sxdp_store **s, char *err,
		      size_t errlen)
{
	struct sconf_cmdline cl = { 0 };
	char dir[4096], file[4200];
	enum sxdp_store_sync sync;
	int ret;

	*s = NULL;
	/* The store every other command opens: the same order of sources. */
	cl.set[SCONF_STATE_DIR] = state_dir;
	ret = sconf_store_settings(&cl, dir, sizeof(dir), &sync, err, errlen);
	if (ret)
		return ret;
	snprintf(file, sizeof(file), "%s/%s", dir, SXDP_STORE_FILE);
	if (!prune && access(file, F_OK) && errno == ENOENT)
		return 0;
	return sxdp_store_open_sync(dir, sync, s, err, errlen);
}

/*
 * detach --all (@prune false) or prune. The store is optional for detach
 * --all: the pins go even when it cannot be opened, and the exit code
 * says the records stayed.
 */
int xdp_removal_run(bool prune, const char *state_dir, bool json)
{
	struct report rep = { .json = json, .prune = prune };
	char err[512] = "", serr[512] = "";
	struct sxdp_store *s = NULL;
	int ret;

	if (geteuid())
		return cli_error("%s needs root (BPF pins and XDP)", prune ? "pruning" : "detaching");
	ret = open_store(state_dir, prune, &s, serr, sizeof(serr));
	if (ret && !serr[0])
		snprintf(serr, sizeof(serr), "%s", strerror(-ret));
	if (ret && prune)
		return cli_error("%s", serr[0] ? serr : strerror(-ret));
	if (json)
		xdp_json_begin(prune ? "prune" : "detach", "interfaces");
	ret = prune ? sxdp_prune(s, print_removed, &rep, err, sizeof(err)) :
		      sxdp_detach_all(s, print_removed, &rep, err, sizeof(err));
	if (json)
		xdp_json_end();
	else if (!ret && !rep.n)
		printf(prune ? "nothing to prune\n" : "no interface had the blocklist\n");
	if (s)
		sxdp_store_close(s);
	/* Each failure is reported (a line, or an object) as it comes. */
	if (ret && rep.failed)
		return EXIT_ERROR;
	if (ret)
		return cli_error("%s", err[0] ? err : strerror(-ret));
	if (!s && serr[0])
		return cli_error("the pins are detached, but the store's attachments are not "
				 "removed: %s", serr[0] ? serr : "the store cannot be opened");
	return EXIT_OK;
}

static int cmd_prune(const struct cli_command *cmd, int argc, char **argv)
{
	const char *state_dir = NULL;
	struct cli_args a;
	int ret = cli_parse(cmd, argc, argv, &state_dir, &a);

	if (ret >= 0)
		return ret;
	return xdp_removal_run(true, state_dir, a.json);
}

const struct cli_command xdp_prune_command = {
	"xdp prune", "remove the pins and records of namespaces and interfaces that are gone",
	.details = "  Pin folders under " SIEVE_XDP_PIN_ROOT "/netns-N are named after a\n"
		   "  namespace's inode number, which a new namespace may get once the old\n"
		   "  one is deleted; each records its namespace's cookie too. Removed: the\n"
		   "  pins of a namespace that is gone or whose number another namespace\n"
		   "  has now, with its attachments in the store (nothing would enforce\n"
		   "  them, and the next namespace with that number would inherit them);\n"
		   "  the pins of an interface that is gone (its attachment stays, for the\n"
		   "  agent to attach it again when it comes back); empty folders. A link\n"
		   "  still running on an interface is never pruned for a namespace not\n"
		   "  found (one held only by an open file is not); an older sieve's folder\n"
		   "  whose link runs gets its namespace's cookie. The agent prunes at\n"
		   "  start. An interface that fails (a line on stderr, or an object with\n"
		   "  result \"failed\" and an error) does not stop the others; exit 2 at\n"
		   "  the end.",
	.options = CLI_OPTIONS(&xdp_opt_state_dir, CLI_JSON_OPTIONS),
	.run = cmd_prune,
};
