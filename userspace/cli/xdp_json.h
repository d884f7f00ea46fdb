/* SPDX-License-Identifier: GPL-2.0 */
/*
 * -j of the `sieve xdp` commands that change something (xdp_json.c):
 * one document per command,
 *
 *   {"op": "block", "lists": [{"list": "default", "store_version": 7,
 *     "added": 1, "updated": 0, "removed": 0, "missing": 0,
 *     "interfaces_in_step": 1, "rebuilt": 0, "stale": 0,
 *     "interfaces": [{"iface": "eth0", "netns": 4026531840,
 *                     "state": "enforcing", "maps_version": 7}]}]}
 *
 * and for detach {"op": "detach", "interfaces": [{"iface": ..., "result":
 * "detached" or "not_attached"}]}; detach --all and prune ("op": "prune")
 * print that document too, their interfaces with more fields
 * (xdp_removal.c). An error on the way leaves the
 * document closed (json_end_all), its message on stderr.
 */
#ifndef SIEVE_CLI_XDP_JSON_H
#define SIEVE_CLI_XDP_JSON_H

#include <stddef.h>

#include "ops.h"

/* What a change did to one list, besides the operation's result. */
struct xdp_json_counts {
	size_t added, updated, removed, missing;
};

/* Opens the document of @op: {"op": @op, "@what": [ */
void xdp_json_begin(const char *op, const char *what);
/* Closes it. */
void xdp_json_end(void);
/*
 * One list's change, with each interface recorded as enforcing @list in
 * @s and the state its maps are in now (xdp_json.c).
 */
void xdp_json_list(struct sxdp_store *s, const char *list, const struct xdp_json_counts *c,
		   const struct sxdp_op_result *r);
/* detach: one interface; @was_attached false if it had no blocklist. */
void xdp_json_detached(const char *iface, bool was_attached);

#endif /* SIEVE_CLI_XDP_JSON_H */
