// SPDX-License-Identifier: GPL-2.0
/* The JSON of the `sieve xdp` commands that change something: see xdp_json.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "xdp_json.h"

void xdp_json_begin(const char *op, const char *what)
{
	json_object(NULL);
	json_str("op", op);
	json_array(what);
}

void xdp_json_end(void)
{
	json_end_all();
}

/*
 * Where an interface recorded as enforcing a list stands: its pinned
 * maps opened from this namespace, their store version against the
 * list's, the program its link runs. Read only, no lock: a snapshot, as
 * status's.
 */
static void iface_state(const struct sxdp_attachment *a, uint64_t version)
{
	struct sieve_xdp_config c;
	struct sxdp_handle h;
	struct sxdp_prog prog;
	int err = sxdp_open_ns(a->netns, a->iface, &h);

	if (err) {
		json_str("state", err == -ESTALE ? "older_program" : "not_enforcing");
		json_str("reason", err == -ENOENT ? "no pinned maps in reach (another mount "
				   "namespace, or not attached since a reboot)" :
				   err == -ESTALE ? "an older sieve's program: sieve xdp attach "
				   "replaces it" : strerror(-err));
		return;
	}
	err = sxdp_read_config(&h, &c, NULL);
	if (!err)
		err = sxdp_prog_running(a->netns, a->iface, &prog);
	sxdp_close(&h);
	if (err) {
		json_str("state", "not_enforcing");
		json_str("reason", err == -ENOENT ? "no program runs" : strerror(-err));
		return;
	}
	json_str("state", c.store_version == version ? "enforcing" : "behind");
	json_u64("maps_version", c.store_version);
}

static void list_ifaces(struct sxdp_store *s, const char *list, uint64_t version)
{
	struct sxdp_attachment *a = NULL;
	char err[512] = "";
	size_t n = 0, i;

	if (sxdp_store_attachments(s, list, &a, &n, err, sizeof(err))) {
		json_str("interfaces_error", err[0] ? err : "reading the attachments");
		return;
	}
	json_array("interfaces");
	for (i = 0; i < n; i++) {
		json_object(NULL);
		json_str("iface", a[i].iface);
		json_u64("netns", a[i].netns);
		iface_state(&a[i], version);
		json_end();
	}
	json_end();
	free(a);
}

void xdp_json_list(struct sxdp_store *s, const char *list, const struct xdp_json_counts *c,
		   const struct sxdp_op_result *r)
{
	uint64_t version = r->version;

	/* An expire with nothing due leaves the result empty: the list's version. */
	if (!version && sxdp_store_version(s, list, &version))
		version = 0;
	json_object(NULL);
	json_str("list", list);
	json_u64("store_version", version);
	json_u64("added", c->added);
	json_u64("updated", c->updated);
	json_u64("removed", c->removed);
	json_u64("missing", c->missing);
	json_u64("interfaces_in_step", r->ifaces);
	json_u64("rebuilt", r->rebuilt);
	json_u64("stale", r->stale);
	list_ifaces(s, list, version);
	json_end();
}

void xdp_json_detached(const char *iface, bool was_attached)
{
	json_object(NULL);
	json_str("iface", iface);
	json_str("result", was_attached ? "detached" : "not_attached");
	json_end();
}
