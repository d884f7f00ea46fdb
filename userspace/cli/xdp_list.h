/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `sieve xdp list`'s rows (xdp_list.c): a list's entries read from the
 * store, filtered by origin and kind, sorted by number rather than text.
 */
#ifndef SIEVE_CLI_XDP_LIST_H
#define SIEVE_CLI_XDP_LIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"
#include "xdp.h"

/* One entry, its strings owned; @e's point into them. */
struct xdp_row {
	struct sxdp_store_entry e;
	struct sieve_xdp_key key;
	bool parsed;		/* @key holds e.key parsed (else sorted by text, last) */
};

struct xdp_rows {
	const char *origin;	/* only this origin's entries, or NULL */
	const char *kind;	/* only this KIND column ("allow-source"), or NULL */
	struct xdp_row *v;
	size_t n, cap;
	bool nomem;
};

/* The time left until an expiry @secs away: "due", "12m05s", "3h20m", "6d04h". */
void xdp_time_left(char *buf, size_t len, int64_t secs);
/* @e's members (entry, kind, allow, origin, times, comment) in the open JSON object. */
void xdp_entry_json(const struct sxdp_store_entry *e, int64_t now);
/* Whether @kind is a word the KIND column shows. */
bool xdp_kind_ok(const char *kind);
/* The KIND column of @e: "source", ..., "allow-prefix". */
void xdp_kind_text(const struct sxdp_store_entry *e, char *buf, size_t len);
/* An sxdp_store_foreach() callback: keeps a copy of @e if the filters take it. */
int xdp_rows_add(const struct sxdp_store_entry *e, void *rows);
/* Blocklist, then allowlist; by kind, family, address, prefix, ports. */
void xdp_rows_sort(struct xdp_rows *rows);
/* Frees the rows, keeps the filters. */
void xdp_rows_clear(struct xdp_rows *rows);

#endif /* SIEVE_CLI_XDP_LIST_H */
