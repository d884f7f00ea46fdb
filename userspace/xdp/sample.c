// SPDX-License-Identifier: GPL-2.0
/*
 * The program's samples: settings and rings (sample.h). The settings map
 * and the ring are pinned beside the instance's other maps, outside its
 * generations; an older program has neither, and is left as it is.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sample.h"
#include "xdp.h"

static int cfg_fd(const char *dir)
{
	int fd = sxdp_pin_get(dir, SIEVE_XDP_MAP_SAMPLE_CFG);

	return fd >= 0 ? fd : errno == ENOENT ? -EOPNOTSUPP : -errno;
}

int sxdp_sample_cfg_get(const char *dir, struct sieve_xdp_sample_cfg *c)
{
	uint32_t zero = 0;
	int fd = cfg_fd(dir), ret = 0;

	if (fd < 0)
		return fd;
	if (bpf_map_lookup_elem(fd, &zero, c))
		ret = -errno;
	close(fd);
	return ret;
}

int sxdp_sample_cfg_put(const char *dir, const struct sieve_xdp_sample_cfg *c)
{
	uint32_t zero = 0;
	int fd = cfg_fd(dir), ret = 0;

	if (fd < 0)
		return fd;
	if (c->rate > SIEVE_XDP_SAMPLE_RATE_MAX || (c->flags & ~SIEVE_XDP_SAMPLE_ALLOWED))
		ret = -EINVAL;
	else if (bpf_map_update_elem(fd, &zero, c, BPF_ANY))
		ret = -errno;
	close(fd);
	return ret;
}

int sxdp_sample_apply(const char *dir, const struct sxdp_sample_change *ch)
{
	struct sieve_xdp_sample_cfg c;
	int ret;

	if (!ch->rate_given && !ch->allowed_given)
		return 0;
	ret = sxdp_sample_cfg_get(dir, &c);
	if (ret)
		return ret;
	if (ch->rate_given)
		c.rate = ch->rate;
	if (ch->allowed_given)
		c.flags = (c.flags & ~SIEVE_XDP_SAMPLE_ALLOWED) |
			  (ch->allowed ? SIEVE_XDP_SAMPLE_ALLOWED : 0);
	return sxdp_sample_cfg_put(dir, &c);
}

int sxdp_sample_set(const char *ifname, const struct sxdp_sample_change *ch, char *err,
		    size_t errlen)
{
	char dir[256];
	int lock_fd = sxdp_lock(ifname, false), ret;

	if (lock_fd == -ENOENT)
		return snprintf(err, errlen, "the blocklist is not attached to %s", ifname), -ENOENT;
	if (lock_fd < 0)
		return snprintf(err, errlen, "taking the lock of %s: %s", ifname,
				strerror(-lock_fd)), lock_fd;
	sxdp_pin_dir(dir, sizeof(dir), ifname);
	ret = sxdp_sample_apply(dir, ch);
	if (ret == -EOPNOTSUPP)
		snprintf(err, errlen, "%s runs an older sieve's program, without samples: "
			 "sieve xdp attach %s upgrades it", ifname, ifname);
	else if (ret)
		snprintf(err, errlen, "the sample settings of %s: %s", ifname, strerror(-ret));
	sxdp_unlock(lock_fd);
	return ret;
}

struct sampler_ring {
	char ifname[IF_NAMESIZE];
	struct sxdp_sampler *r;
};

struct sxdp_sampler {
	struct ring_buffer *rb;
	sxdp_sample_fn fn;
	void *ctx;
	int stop;		/* the callback's nonzero return */
	int n;
	struct sampler_ring rings[];
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct sampler_ring *ring = ctx;
	struct sieve_xdp_sample s;
	struct sxdp_sampler *r = ring->r;

	if (r->stop)
		return -ECANCELED;
	/* A record of another size is another layout's: not read as this one. */
	if (size != sizeof(s))
		return 0;
	memcpy(&s, data, sizeof(s));
	if (s.cap_len > sizeof(s.data))
		s.cap_len = sizeof(s.data);
	r->stop = r->fn(ring->ifname, &s, r->ctx);
	/* libbpf stops at a negative return: the consumer position stays right. */
	return r->stop ? -ECANCELED : 0;
}

int sxdp_sampler_open(char names[][IF_NAMESIZE], int n, sxdp_sample_fn fn, void *ctx,
		      struct sxdp_sampler **out, char *err, size_t errlen)
{
	struct sxdp_sampler *r = calloc(1, sizeof(*r) + n * sizeof(r->rings[0]));
	char dir[256];
	int i, fd, ret = 0;

	if (!r)
		return snprintf(err, errlen, "%s", strerror(ENOMEM)), -ENOMEM;
	r->fn = fn;
	r->ctx = ctx;
	for (i = 0; i < n && !ret; i++) {
		snprintf(r->rings[i].ifname, IF_NAMESIZE, "%s", names[i]);
		r->rings[i].r = r;
		sxdp_pin_dir(dir, sizeof(dir), names[i]);
		fd = sxdp_pin_get(dir, SIEVE_XDP_MAP_SAMPLES);
		if (fd < 0) {
			ret = errno == ENOENT ? -EOPNOTSUPP : -errno;
			if (access(dir, F_OK))
				snprintf(err, errlen, "the blocklist is not attached to %s", names[i]);
			else if (ret == -EOPNOTSUPP)
				snprintf(err, errlen, "%s runs an older sieve's program, without "
					 "samples: sieve xdp attach %s upgrades it", names[i], names[i]);
			else
				snprintf(err, errlen, "%s: opening its samples: %s", names[i],
					 strerror(-ret));
			break;
		}
		if (!r->rb)
			r->rb = ring_buffer__new(fd, on_record, &r->rings[i], NULL);
		else if (ring_buffer__add(r->rb, fd, on_record, &r->rings[i]))
			ret = -errno;
		if (!r->rb)
			ret = -errno;
		/* libbpf holds its own mapping of the ring; the fd is its too. */
		if (ret) {
			close(fd);
			snprintf(err, errlen, "%s: reading its samples: %s", names[i], strerror(-ret));
		}
		r->n++;
	}
	if (ret) {
		sxdp_sampler_close(r);
		return ret;
	}
	*out = r;
	return 0;
}

int sxdp_sampler_poll(struct sxdp_sampler *r, int timeout_ms)
{
	int ret = ring_buffer__poll(r->rb, timeout_ms);

	if (r->stop)
		return r->stop;
	return ret < 0 ? ret : 0;
}

void sxdp_sampler_close(struct sxdp_sampler *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	free(r);
}

uint64_t sxdp_sample_realtime_ns(uint64_t ktime_ns)
{
	struct timespec mono, real;
	uint64_t mono_ns, real_ns;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	mono_ns = mono.tv_sec * 1000000000ULL + mono.tv_nsec;
	real_ns = real.tv_sec * 1000000000ULL + real.tv_nsec;
	/* A sample is in the past: now minus its age. */
	return real_ns - (mono_ns > ktime_ns ? mono_ns - ktime_ns : 0);
}

const char *sxdp_sample_verdict(const struct sieve_xdp_sample *s)
{
	return s->verdict == XDP_DROP ? "drop" : s->verdict == XDP_PASS ? "pass" : "?";
}

const char *sxdp_sample_reason(const struct sieve_xdp_sample *s)
{
	switch (s->counter) {
	case SIEVE_XDP_DROP_SRC ... SIEVE_XDP_DROP_FLOW:
		return sxdp_kind_name(s->counter - SIEVE_XDP_DROP_SRC);
	case SIEVE_XDP_DROP_UNPARSED:
		return "unparsed";
	case SIEVE_XDP_DROP_MALFORMED:
		return "malformed";
	case SIEVE_XDP_ALLOWED:
		return "allowed";
	default:
		return "unknown";
	}
}

#define VLAN_DEPTH	2
#define V6_EXT_MAX	8

/* The offset of the L3 header past up to VLAN_DEPTH tags, and its ethertype; -1 if cut. */
static int l3_offset(const struct sieve_xdp_sample *s, uint16_t *proto)
{
	int off = 12, i;

	for (i = 0; i <= VLAN_DEPTH; i++) {
		if (off + 2 > s->cap_len)
			return -1;
		*proto = s->data[off] << 8 | s->data[off + 1];
		off += 2;
		if (*proto != ETH_P_8021Q && *proto != ETH_P_8021AD)
			return off;
		off += 2;
	}
	return -1;
}

/* The L4 protocol and its offset past the IPv6 extension headers the program walks. */
static int v6_l4(const struct sieve_xdp_sample *s, int off, uint8_t *next)
{
	int i;

	off += sizeof(struct ipv6hdr);
	for (i = 0; i < V6_EXT_MAX; i++) {
		uint8_t n = *next;

		if (n != 0 && n != 43 && n != 60 && n != 44)
			return off;
		if (off + 8 > s->cap_len)
			return -1;
		*next = s->data[off];
		off += n == 44 ? 8 : (s->data[off + 1] + 1) * 8;
	}
	return -1;
}

/* The source's bits past @key->prefix_len, cleared (as in a prefix key). */
static void mask_source(struct sieve_xdp_key *key)
{
	unsigned char *a = (unsigned char *)key->saddr;
	unsigned int i, len = key->prefix_len;

	for (i = 0; i < 16; i++, len = len > 8 ? len - 8 : 0)
		a[i] &= len >= 8 ? 0xff : (unsigned char)(0xff00 >> len);
}

/*
 * The addresses of the sample's frame into @key (family, saddr, daddr),
 * its L4 protocol in @next and the offset of its L4 header (-1 if past
 * what the sample holds): 0, or -EINVAL if the frame is cut short of them.
 */
static int parse_frame(const struct sieve_xdp_sample *s, struct sieve_xdp_key *key,
		       uint8_t *next, int *l4)
{
	uint16_t proto;
	int off = l3_offset(s, &proto);

	memset(key, 0, sizeof(*key));
	if (off < 0)
		return -EINVAL;
	if (proto == ETH_P_IP && off + (int)sizeof(struct iphdr) <= s->cap_len) {
		const struct iphdr *ip = (const void *)(s->data + off);

		key->family = SIEVE_XDP_V4;
		memcpy(&key->saddr[0], &ip->saddr, 4);
		memcpy(&key->daddr[0], &ip->daddr, 4);
		*next = ip->protocol;
		*l4 = off + ip->ihl * 4;
		return 0;
	}
	if (proto == ETH_P_IPV6 && off + (int)sizeof(struct ipv6hdr) <= s->cap_len) {
		const struct ipv6hdr *ip6 = (const void *)(s->data + off);

		key->family = SIEVE_XDP_V6;
		memcpy(key->saddr, &ip6->saddr, 16);
		memcpy(key->daddr, &ip6->daddr, 16);
		*next = ip6->nexthdr;
		*l4 = v6_l4(s, off, next);
		return 0;
	}
	return -EINVAL;
}

int sxdp_sample_source(const struct sieve_xdp_sample *s, struct sieve_xdp_key *key)
{
	uint8_t next;
	int l4, ret = parse_frame(s, key, &next, &l4);

	key->kind = SIEVE_XDP_SRC;
	key->prefix_len = key->family == SIEVE_XDP_V4 ? 32 : 128;
	memset(key->daddr, 0, sizeof(key->daddr));
	return ret;
}

int sxdp_sample_key(const struct sieve_xdp_sample *s, struct sieve_xdp_key *key)
{
	uint8_t next;
	int l4, ret;

	if (s->kind >= SIEVE_XDP_NR_KINDS)
		return -ENOENT;
	ret = parse_frame(s, key, &next, &l4);
	key->kind = s->kind;
	if (ret)
		return ret;
	if (s->kind == SIEVE_XDP_SRC || s->kind == SIEVE_XDP_PREFIX) {
		unsigned int bits = key->family == SIEVE_XDP_V4 ? 32 : 128;

		key->prefix_len = s->kind == SIEVE_XDP_SRC || !s->probe_len ? bits : s->probe_len;
		memset(key->daddr, 0, sizeof(key->daddr));
		mask_source(key);
		return 0;
	}
	if (l4 < 0 || l4 + 4 > s->cap_len)
		return -EINVAL;
	key->proto = next;
	memcpy(&key->dport, s->data + l4 + 2, 2);
	if (s->kind == SIEVE_XDP_FLOW)
		memcpy(&key->sport, s->data + l4, 2);
	else
		memset(key->saddr, 0, sizeof(key->saddr));
	return 0;
}
