/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether a recorded attachment enforces its list, and if not, why
 * (enforce.c): what a change says of the attachments it could not reach
 * (ops.c), and what status says of every attachment the store records.
 */
#ifndef SIEVE_XDP_ENFORCE_H
#define SIEVE_XDP_ENFORCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <net/if.h>

enum sxdp_enforce {
	SXDP_ENFORCING,		/* its program runs, its maps at the store's version */
	SXDP_BEHIND,		/* its program runs maps of an older version of the list */
	SXDP_NO_BPFFS,		/* no BPF filesystem at /sys/fs/bpf in this mount namespace */
	SXDP_PINS_GONE,		/* no pins: a reboot, or removed outside sieve */
	SXDP_OLDER_PROG,	/* an older sieve's program, with maps of another layout */
	SXDP_DETACHED,		/* pins, but their link runs on no interface */
	SXDP_UNREADABLE,	/* its pins cannot be opened (an errno) */
};

/* A recorded attachment a change did not reach. */
struct sxdp_unreached {
	uint64_t netns;
	char iface[IF_NAMESIZE];
	enum sxdp_enforce state;
	int err;		/* SXDP_UNREADABLE: the -errno */
};

/* The most a result names; the count goes on past it. */
#define SXDP_UNREACHED_MAX	16

/* Whether /sys/fs/bpf is the BPF filesystem in this mount namespace. */
bool sxdp_bpffs_here(void);
/*
 * What the pins of @ifname in @netns allow, without the maps: NO_BPFFS,
 * PINS_GONE, DETACHED (no link pinned, or one whose interface went), or
 * ENFORCING (its link runs: the caller compares versions and layouts).
 */
enum sxdp_enforce sxdp_pins_state(uint64_t netns, const char *ifname, int *err);
/* The state's word for JSON: "enforcing", "behind" or "not-enforcing". */
const char *sxdp_enforce_word(enum sxdp_enforce st);
/*
 * Why @ifname in state @st does not enforce, for one line, in @buf (@err:
 * SXDP_UNREADABLE's -errno). SXDP_WHY_MAX is room for any.
 */
#define SXDP_WHY_MAX	192
const char *sxdp_enforce_why(enum sxdp_enforce st, const char *ifname, int err, char *buf,
			     size_t len);

#endif /* SIEVE_XDP_ENFORCE_H */
