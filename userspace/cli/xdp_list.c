// SPDX-License-Identifier: GPL-2.0
/*
 * The rows of `sieve xdp list` (xdp_list.h). The store keeps entries
 * ordered by their text, where 10.0.0.10 comes before 10.0.0.9 and
 * 2001:db8::/32 between them by accident of spelling; an operator reads a
 * list by address. So the rows are read whole, parsed back into keys and
 * sorted by number: memory in proportion to the list, which the store
 * reads into memory for every rebuild anyway.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "xdp_list.h"

void xdp_time_left(char *buf, size_t len, int64_t secs)
{
	if (secs <= 0)
		snprintf(buf, len, "due");
	else if (secs < 3600)
		snprintf(buf, len, "%lldm%02llds", (long long)secs / 60, (long long)secs % 60);
	else if (secs < 86400)
		snprintf(buf, len, "%lldh%02lldm", (long long)secs / 3600, (long long)secs / 60 % 60);
	else
		snprintf(buf, len, "%lldd%02lldh", (long long)secs / 86400, (long long)secs / 3600 % 24);
}

void xdp_entry_json(const struct sxdp_store_entry *e, int64_t now)
{
	json_str("entry", e->key);
	json_str("kind", sxdp_kind_name(e->kind));
	json_bool("allow", e->allow);
	json_str("origin", e->origin);
	json_u64("added_at", e->added_at);
	if (e->expires_at) {
		json_u64("expires_at", e->expires_at);
		json_u64("expires_in", e->expires_at > now ? e->expires_at - now : 0);
	}
	if (e->comment)
		json_str("comment", e->comment);
}

bool xdp_kind_ok(const char *kind)
{
	unsigned int k;

	if (!strncmp(kind, "allow-", 6))
		kind += 6;
	for (k = 0; k < SIEVE_XDP_NR_KINDS; k++)
		if (!strcmp(kind, sxdp_kind_name(k)))
			return true;
	return false;
}

void xdp_kind_text(const struct sxdp_store_entry *e, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s", e->allow ? "allow-" : "", sxdp_kind_name(e->kind));
}

static char *dup_or_null(const char *s, bool *nomem)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*nomem = true;
	return d;
}

int xdp_rows_add(const struct sxdp_store_entry *e, void *arg)
{
	struct xdp_rows *rows = arg;
	struct xdp_row *r;
	const char *why;
	char kind[32];

	if (rows->origin && strcmp(rows->origin, e->origin))
		return 0;
	xdp_kind_text(e, kind, sizeof(kind));
	if (rows->kind && strcmp(rows->kind, kind))
		return 0;
	if (rows->n == rows->cap) {
		size_t cap = rows->cap ? rows->cap * 2 : 256;
		struct xdp_row *v = realloc(rows->v, cap * sizeof(*v));

		if (!v) {
			rows->nomem = true;
			return -1;
		}
		rows->v = v;
		rows->cap = cap;
	}
	r = &rows->v[rows->n++];
	r->e = *e;
	r->e.list = dup_or_null(e->list, &rows->nomem);
	r->e.key = dup_or_null(e->key, &rows->nomem);
	r->e.origin = dup_or_null(e->origin, &rows->nomem);
	r->e.comment = dup_or_null(e->comment, &rows->nomem);
	r->parsed = !sxdp_parse_entry(e->key, &r->key, &why);
	return rows->nomem ? -1 : 0;
}

/* Sources and prefixes together, by address: a prefix before the addresses in it. */
static int kind_group(unsigned int kind)
{
	return kind == SIEVE_XDP_PREFIX ? SIEVE_XDP_SRC : kind;
}

static int cmp_num(unsigned int a, unsigned int b)
{
	return a < b ? -1 : a > b;
}

/* Addresses are in network order: their bytes compare as their numbers. */
static int key_cmp(const struct sieve_xdp_key *a, const struct sieve_xdp_key *b)
{
	int d = cmp_num(kind_group(a->kind), kind_group(b->kind));

	if (!d)
		d = cmp_num(a->family, b->family);
	if (!d)
		d = memcmp(a->saddr, b->saddr, sizeof(a->saddr));
	if (!d)
		d = cmp_num(a->prefix_len, b->prefix_len);
	if (!d)
		d = memcmp(a->daddr, b->daddr, sizeof(a->daddr));
	if (!d)
		d = cmp_num(ntohs(a->dport), ntohs(b->dport));
	if (!d)
		d = cmp_num(ntohs(a->sport), ntohs(b->sport));
	if (!d)
		d = cmp_num(a->proto, b->proto);
	return d;
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct xdp_row *a = pa, *b = pb;
	int d = cmp_num(a->e.allow, b->e.allow);

	if (!d)
		d = cmp_num(!a->parsed, !b->parsed);
	if (!d && a->parsed)
		d = key_cmp(&a->key, &b->key);
	return d ? d : strcmp(a->e.key, b->e.key);
}

void xdp_rows_sort(struct xdp_rows *rows)
{
	if (rows->n)
		qsort(rows->v, rows->n, sizeof(*rows->v), row_cmp);
}

void xdp_rows_clear(struct xdp_rows *rows)
{
	size_t i;

	for (i = 0; i < rows->n; i++) {
		free((char *)rows->v[i].e.list);
		free((char *)rows->v[i].e.key);
		free((char *)rows->v[i].e.origin);
		free((char *)rows->v[i].e.comment);
	}
	free(rows->v);
	rows->v = NULL;
	rows->n = rows->cap = 0;
	rows->nomem = false;
}
