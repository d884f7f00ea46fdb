// SPDX-License-Identifier: GPL-2.0
/*
 * Blocklist entries: text to flow keys and back, lists, files.
 *
 *   198.51.100.7                           a source address
 *   203.0.113.0/24, 2001:db8::/48          a source prefix (host bits zero)
 *   tcp:192.0.2.10:22, udp:[2001:db8::1]:53
 *                                          a service: destination, protocol, port
 *   tcp:198.51.100.7:40000,192.0.2.10:22   a flow: source and destination
 *
 * Protocols: tcp, udp, sctp. IPv6 addresses with a port go in brackets.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xdp.h"

static const struct { const char *name; uint8_t proto; } protos[] = {
	{ "tcp", IPPROTO_TCP }, { "udp", IPPROTO_UDP }, { "sctp", IPPROTO_SCTP },
};

static const char *const kind_names[SIEVE_XDP_NR_KINDS] = {
	[SIEVE_XDP_SRC] = "source", [SIEVE_XDP_PREFIX] = "prefix",
	[SIEVE_XDP_SERVICE] = "service", [SIEVE_XDP_FLOW] = "flow",
};

const char *sxdp_kind_name(unsigned int kind)
{
	return kind < SIEVE_XDP_NR_KINDS ? kind_names[kind] : "unknown";
}

/* An address alone: its family, or 0. */
static int parse_addr(const char *s, __be32 addr[4])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1)
		return SIEVE_XDP_V4;
	if (inet_pton(AF_INET6, s, addr) == 1)
		return SIEVE_XDP_V6;
	return 0;
}

static int parse_port(const char *s, __be16 *port)
{
	unsigned long v;
	char *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v == 0 || v > 65535)
		return -EINVAL;
	*port = htons((uint16_t)v);
	return 0;
}

/* ADDR:PORT or [ADDR6]:PORT; returns the family, or 0 with *why set. */
static int parse_endpoint(const char *s, __be32 addr[4], __be16 *port, const char **why)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *colon;
	bool bracketed = *s == '[';
	size_t alen;
	int family;

	if (bracketed) {
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return *why = "expected [IPV6]:PORT", 0;
		s++;
		alen = close - s;
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return *why = "expected ADDRESS:PORT", 0;
		alen = colon - s;
		if (memchr(s, ':', alen)) {
			/* The hint is the entry as it should be written, its own port. */
			static __thread char hint[128];

			snprintf(hint, sizeof(hint), "an IPv6 address with a port goes in brackets: "
				 "[%.*s]:%s", (int)(alen < 64 ? alen : 64), s, colon + 1);
			return *why = hint, 0;
		}
	}
	if (alen >= sizeof(buf))
		return *why = "address too long", 0;
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	family = parse_addr(buf, addr);
	if (!family || bracketed != (family == SIEVE_XDP_V6))
		return *why = "not an IP address", 0;
	if (parse_port(colon + 1, port))
		return *why = "bad port (1-65535)", 0;
	return family;
}

int sxdp_parse_host(const char *s, __be32 addr[4], __be16 *port, const char **why)
{
	const char *colon = strchr(s, ':');
	int family;

	*port = 0;
	*why = NULL;
	/* A port: after one colon (IPv4), or after brackets (IPv6, whose text has two or more). */
	if (*s == '[' || (colon && colon == strrchr(s, ':')))
		return parse_endpoint(s, addr, port, why);
	family = parse_addr(s, addr);
	if (!family)
		*why = "not an IP address, ADDR:PORT or [IPV6]:PORT";
	return family;
}

/* ADDR or ADDR/LEN. */
static int parse_source(const char *s, struct sieve_xdp_key *key, const char **why)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	unsigned long len, full, w;
	char *end;
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);

	if (alen >= sizeof(buf))
		return *why = "not an IP address", -EINVAL;
	memcpy(buf, s, alen);
	buf[alen] = '\0';
	key->family = parse_addr(buf, key->saddr);
	if (!key->family)
		return *why = "not an IP address, prefix, PROTO:ADDR:PORT or flow", -EINVAL;
	full = key->family == SIEVE_XDP_V4 ? 32 : 128;
	len = full;
	if (slash) {
		errno = 0;
		len = isdigit((unsigned char)slash[1]) ? strtoul(slash + 1, &end, 10) : full + 1;
		if (errno || *end || len > full)
			return *why = "bad prefix length", -EINVAL;
		if (len == 0)
			return *why = "a /0 prefix would block every source", -EINVAL;
	}
	for (w = 0; w < 4; w++) {
		unsigned long bits = len > 32 * w ? len - 32 * w : 0;
		uint32_t mask = bits >= 32 ? ~0U : bits ? ~0U << (32 - bits) : 0;

		if (ntohl(key->saddr[w]) & ~mask)
			return *why = "host bits set after the prefix length", -EINVAL;
	}
	key->kind = len == full ? SIEVE_XDP_SRC : SIEVE_XDP_PREFIX;
	key->prefix_len = (uint8_t)len;
	return 0;
}

/* PROTO:DST:PORT (a service) or PROTO:SRC:PORT,DST:PORT (a flow). */
static int parse_l4_entry(const char *s, const char *colon, struct sieve_xdp_key *key,
			  const char **why)
{
	const char *comma = strchr(colon, ',');
	char src[INET6_ADDRSTRLEN + 16];
	size_t i, plen = colon - s;
	int fam;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (strlen(protos[i].name) == plen && !strncmp(s, protos[i].name, plen))
			key->proto = protos[i].proto;
	if (!key->proto)
		return *why = "unknown protocol (tcp, udp, sctp)", -EINVAL;
	if (!comma) {
		key->kind = SIEVE_XDP_SERVICE;
		key->family = parse_endpoint(colon + 1, key->daddr, &key->dport, why);
		return key->family ? 0 : -EINVAL;
	}
	if ((size_t)(comma - colon - 1) >= sizeof(src))
		return *why = "address too long", -EINVAL;
	memcpy(src, colon + 1, comma - colon - 1);
	src[comma - colon - 1] = '\0';
	key->kind = SIEVE_XDP_FLOW;
	fam = parse_endpoint(src, key->saddr, &key->sport, why);
	if (!fam)
		return -EINVAL;
	key->family = parse_endpoint(comma + 1, key->daddr, &key->dport, why);
	if (!key->family)
		return -EINVAL;
	if (fam != key->family)
		return *why = "source and destination of a flow are of different families", -EINVAL;
	return 0;
}

int sxdp_parse_entry(const char *s, struct sieve_xdp_key *key, const char **why)
{
	const char *colon = strchr(s, ':');
	size_t plen = colon ? (size_t)(colon - s) : 0;

	memset(key, 0, sizeof(*key));
	*why = NULL;
	/* Letters before the first colon name a protocol, unless they are all
	 * hex digits: then it is an IPv6 address such as "abcd::1". */
	if (plen && strspn(s, "abcdefghijklmnopqrstuvwxyz") == plen && strspn(s, "abcdef") != plen)
		return parse_l4_entry(s, colon, key, why);
	return parse_source(s, key, why);
}

void sxdp_format_entry(const struct sieve_xdp_key *key, char *buf, size_t len)
{
	int af = key->family == SIEVE_XDP_V4 ? AF_INET : AF_INET6;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	const char *proto = "?", *lb = af == AF_INET6 ? "[" : "", *rb = af == AF_INET6 ? "]" : "";
	size_t i;

	inet_ntop(af, key->saddr, s, sizeof(s));
	inet_ntop(af, key->daddr, d, sizeof(d));
	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].proto == key->proto)
			proto = protos[i].name;
	switch (key->kind) {
	case SIEVE_XDP_SRC:
		snprintf(buf, len, "%s", s);
		break;
	case SIEVE_XDP_PREFIX:
		snprintf(buf, len, "%s/%u", s, key->prefix_len);
		break;
	case SIEVE_XDP_SERVICE:
		snprintf(buf, len, "%s:%s%s%s:%u", proto, lb, d, rb, ntohs(key->dport));
		break;
	default:
		snprintf(buf, len, "%s:%s%s%s:%u,%s%s%s:%u", proto, lb, s, rb, ntohs(key->sport),
			 lb, d, rb, ntohs(key->dport));
	}
}

int sxdp_keys_add(struct sxdp_keys *l, const struct sieve_xdp_key *key)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		struct sieve_xdp_key *keys = realloc(l->keys, cap * sizeof(*keys));

		if (!keys)
			return -ENOMEM;
		l->keys = keys;
		l->cap = cap;
	}
	l->keys[l->n++] = *key;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct sieve_xdp_key));
}

/*
 * key_cmp()'s order (the bytes', what find() searches by), a word at a
 * time and inline: a feed of 10^7 keys is sorted once per load, and
 * qsort() through a comparator call and an indirect sort of 40-byte
 * elements was a fifth of the load.
 */
_Static_assert(sizeof(struct sieve_xdp_key) == 5 * sizeof(uint64_t),
	       "a key is five words without padding");

static inline int key_order(const struct sieve_xdp_key *a, const struct sieve_xdp_key *b)
{
	uint64_t x[5], y[5];
	int i;

	memcpy(x, a, sizeof(x));
	memcpy(y, b, sizeof(y));
	for (i = 0; i < 5; i++) {
		if (x[i] == y[i])
			continue;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		return __builtin_bswap64(x[i]) < __builtin_bswap64(y[i]) ? -1 : 1;
#else
		return x[i] < y[i] ? -1 : 1;
#endif
	}
	return 0;
}

static inline void key_swap(struct sieve_xdp_key *a, struct sieve_xdp_key *b)
{
	struct sieve_xdp_key t = *a;

	*a = *b;
	*b = t;
}

static void keys_insertion(struct sieve_xdp_key *v, size_t n)
{
	struct sieve_xdp_key t;
	size_t i, j;

	for (i = 1; i < n; i++) {
		t = v[i];
		for (j = i; j && key_order(&t, &v[j - 1]) < 0; j--)
			v[j] = v[j - 1];
		v[j] = t;
	}
}

static void keys_sift(struct sieve_xdp_key *v, size_t root, size_t n)
{
	size_t child;

	while ((child = 2 * root + 1) < n) {
		if (child + 1 < n && key_order(&v[child], &v[child + 1]) < 0)
			child++;
		if (key_order(&v[root], &v[child]) >= 0)
			return;
		key_swap(&v[root], &v[child]);
		root = child;
	}
}

static void keys_heapsort(struct sieve_xdp_key *v, size_t n)
{
	size_t i;

	for (i = n / 2; i-- > 0;)
		keys_sift(v, i, n);
	for (i = n; i-- > 1;) {
		key_swap(&v[0], &v[i]);
		keys_sift(v, 0, i);
	}
}

/*
 * Introsort: quicksort (median of three, Hoare's partition, the smaller
 * side first so the stack stays O(log n)) that turns to heapsort past
 * @depth levels, so a feed crafted against the pivots costs n log n all
 * the same.
 */
static void keys_sort(struct sieve_xdp_key *v, size_t n, unsigned int depth)
{
	struct sieve_xdp_key pivot;
	size_t i, j, mid;

	while (n > 16) {
		if (!depth--) {
			keys_heapsort(v, n);
			return;
		}
		mid = n / 2;
		if (key_order(&v[mid], &v[0]) < 0)
			key_swap(&v[mid], &v[0]);
		if (key_order(&v[n - 1], &v[mid]) < 0) {
			key_swap(&v[n - 1], &v[mid]);
			if (key_order(&v[mid], &v[0]) < 0)
				key_swap(&v[mid], &v[0]);
		}
		pivot = v[mid];
		i = 0;
		j = n - 1;
		for (;;) {
			while (key_order(&v[i], &pivot) < 0)
				i++;
			while (key_order(&pivot, &v[j]) < 0)
				j--;
			if (i >= j)
				break;
			key_swap(&v[i], &v[j]);
			i++;
			j--;
		}
		/* [0, j] and [j + 1, n), both smaller than n. */
		if (j + 1 < n - j - 1) {
			keys_sort(v, j + 1, depth);
			v += j + 1;
			n -= j + 1;
		} else {
			keys_sort(v + j + 1, n - j - 1, depth);
			n = j + 1;
		}
	}
	keys_insertion(v, n);
}

/* Whether @v is in key_order with no key twice: a sort of it has nothing to do. */
static bool keys_strictly_sorted(const struct sieve_xdp_key *v, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++)
		if (key_order(&v[i - 1], &v[i]) >= 0)
			return false;
	return true;
}

/* Past this many bytes that differ between keys, the radix sort makes more passes than it saves. */
#define RADIX_MAX_BYTES	12

/*
 * The byte positions where some key differs from the first, into @pos
 * (ascending); how many, or RADIX_MAX_BYTES + 1 past that bound.
 */
static unsigned int keys_varying_bytes(const struct sieve_xdp_key *v, size_t n,
				       unsigned int pos[RADIX_MAX_BYTES])
{
	uint64_t first[5], x[5], diff[5] = { 0 };
	unsigned char d[sizeof(diff)];
	unsigned int b, m = 0;
	size_t i;
	int w;

	memcpy(first, v, sizeof(first));
	for (i = 1; i < n; i++) {
		memcpy(x, &v[i], sizeof(x));
		for (w = 0; w < 5; w++)
			diff[w] |= x[w] ^ first[w];
	}
	memcpy(d, diff, sizeof(d));
	for (b = 0; b < sizeof(d); b++) {
		if (!d[b])
			continue;
		if (m == RADIX_MAX_BYTES)
			return RADIX_MAX_BYTES + 1;
		pos[m++] = b;
	}
	return m;
}

/*
 * Least significant digit first radix sort in key_order (the bytes'),
 * one stable counting pass per byte position where the keys differ: a
 * feed of IPv4 hosts differs in the four address bytes only, so 10^7
 * keys take four linear passes instead of n log n comparisons of five
 * words (the sort was a tenth of a 10^7 load). -ENOMEM: no room for the
 * second buffer, nothing done.
 */
static int keys_radix_sort(struct sieve_xdp_key *v, size_t n, const unsigned int *pos,
			   unsigned int m)
{
	struct sieve_xdp_key *tmp = malloc(n * sizeof(*tmp)), *src = v, *dst = tmp, *t;
	size_t (*count)[256], i, sum, c;
	unsigned int p;

	count = calloc(m ? m : 1, sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return -ENOMEM;
	}
	/* Every histogram in one read of the keys. */
	for (i = 0; i < n; i++)
		for (p = 0; p < m; p++)
			count[p][((const unsigned char *)&v[i])[pos[p]]]++;
	for (p = m; p-- > 0;) {
		for (c = 0, sum = 0; c < 256; c++) {
			size_t k = count[p][c];

			count[p][c] = sum;
			sum += k;
		}
		for (i = 0; i < n; i++)
			dst[count[p][((const unsigned char *)&src[i])[pos[p]]]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	free(count);
	return 0;
}

void sxdp_keys_sort(struct sxdp_keys *l)
{
	unsigned int depth = 0, pos[RADIX_MAX_BYTES], m;
	size_t i, out = 0;

	/* A feed sorted already (a refresh of a list read back, a plan of a sorted list). */
	if (l->n < 2 || keys_strictly_sorted(l->keys, l->n))
		return;
	m = keys_varying_bytes(l->keys, l->n, pos);
	if (l->n < 64 || m > RADIX_MAX_BYTES || keys_radix_sort(l->keys, l->n, pos, m)) {
		for (i = l->n; i; i >>= 1)
			depth += 2;
		keys_sort(l->keys, l->n, depth);
	}
	for (i = 1; i < l->n; i++)
		if (key_order(&l->keys[out], &l->keys[i]))
			l->keys[++out] = l->keys[i];
	l->n = out + 1;
}

bool sxdp_keys_find(const struct sxdp_keys *l, const struct sieve_xdp_key *key)
{
	return l->n && bsearch(key, l->keys, l->n, sizeof(*key), key_cmp);
}

bool sxdp_keys_remove(struct sxdp_keys *l, const struct sieve_xdp_key *key)
{
	struct sieve_xdp_key *k = l->n ? bsearch(key, l->keys, l->n, sizeof(*key), key_cmp) : NULL;

	if (!k)
		return false;
	memmove(k, k + 1, (l->keys + l->n - (k + 1)) * sizeof(*k));
	l->n--;
	return true;
}

void sxdp_keys_free(struct sxdp_keys *l)
{
	free(l->keys);
	*l = (struct sxdp_keys){ 0 };
}
