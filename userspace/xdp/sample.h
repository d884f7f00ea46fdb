/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The program's samples ("Samples" in include/sieve_xdp.h): their
 * settings, and reading them from the interfaces' rings. `sieve xdp set`,
 * `capture` and `top` are built on this; attach writes the settings.
 *
 * A ring has one reader's position: two readers of one interface at once
 * (a capture and a top) each get part of its samples.
 */
#ifndef SXDP_SAMPLE_H
#define SXDP_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

#include "sieve_xdp.h"

/*
 * The settings of the instance pinned in the folder @dir (sxdp_pin_dir).
 * -EOPNOTSUPP: an older sieve's program, which has no samples.
 */
int sxdp_sample_cfg_get(const char *dir, struct sieve_xdp_sample_cfg *c);
int sxdp_sample_cfg_put(const char *dir, const struct sieve_xdp_sample_cfg *c);

/* What to change of an interface's settings: fields with their _given. */
struct sxdp_sample_change {
	bool rate_given, allowed_given;
	uint32_t rate;		/* at most SIEVE_XDP_SAMPLE_RATE_MAX */
	bool allowed;		/* SIEVE_XDP_SAMPLE_ALLOWED */
};

/* Applies @ch to the instance in @dir (the caller holds the interface's lock). */
int sxdp_sample_apply(const char *dir, const struct sxdp_sample_change *ch);
/* The same for @ifname of this namespace, taking its lock; @err says what failed. */
int sxdp_sample_set(const char *ifname, const struct sxdp_sample_change *ch, char *err,
		    size_t errlen);

/* Called for each sample read; a nonzero return stops the reading (returned). */
typedef int (*sxdp_sample_fn)(const char *ifname, const struct sieve_xdp_sample *s, void *ctx);

struct sxdp_sampler;

/* A reader of the rings of @n interfaces, calling @fn for each sample. */
int sxdp_sampler_open(char names[][IF_NAMESIZE], int n, sxdp_sample_fn fn, void *ctx,
		      struct sxdp_sampler **out, char *err, size_t errlen);
/*
 * Waits up to @timeout_ms for samples and hands each to the callback:
 * 0, the callback's nonzero return, or -errno (-EINTR: a signal came).
 */
int sxdp_sampler_poll(struct sxdp_sampler *r, int timeout_ms);
void sxdp_sampler_close(struct sxdp_sampler *r);

/* A sample's time (CLOCK_MONOTONIC, ns) as wall-clock time, ns since the epoch. */
uint64_t sxdp_sample_realtime_ns(uint64_t ktime_ns);
/* "drop" or "pass"; the reason: "src", "prefix", ..., "unparsed", "malformed", "allowed". */
const char *sxdp_sample_verdict(const struct sieve_xdp_sample *s);
const char *sxdp_sample_reason(const struct sieve_xdp_sample *s);

/*
 * The key of the entry kind that matched the sample, from its frame (the
 * source address, masked to @probe_len for a prefix; the service or the
 * flow), for attributing it: -ENOENT if no kind matched, -EINVAL if the
 * frame is cut short of it.
 */
int sxdp_sample_key(const struct sieve_xdp_sample *s, struct sieve_xdp_key *key);
/* The sample's source as a source key: 0, or -EINVAL if the frame is cut short of it. */
int sxdp_sample_source(const struct sieve_xdp_sample *s, struct sieve_xdp_key *key);

#endif /* SXDP_SAMPLE_H */
