/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The XDP blocklist's loader: entries (text <-> flow keys), the bloom
 * sizing plan, and the maps of a running program, reached through pins
 * under SIEVE_XDP_PIN_ROOT/NETNS/IFACE/ so separate CLI runs act on it.
 * The list of record is the store (store.h); ops.h keeps the two in step.
 * Functions return 0 or -errno; messages are the CLI's business, except
 * where a function fills an err buffer because only it knows the detail.
 *
 * Words, each in one sense across the loader, the CLI and the agent:
 *
 * list		A named blocklist of the store ("default", --list NAME), with
 *		its allowlist; an interface enforces one. A list's or a feed's
 *		keys in memory are a struct sxdp_keys (sxdp_keys_*()), never
 *		called a list.
 * entry	What a person or a feed writes: an address, a prefix, a
 *		service (ADDR:PORT/PROTO) or a flow, one line, as
 *		sxdp_parse_entry() reads and sxdp_format_entry() writes it.
 * key		An entry parsed: struct sieve_xdp_key, of fixed size, what the
 *		maps are probed with. A list's keys are its entries; the maps
 *		hold more, since a prefix of an unusual length is expanded to
 *		keys of the lengths the program probes (expand.c).
 * digest	A key hashed under the host's digest key (secret.c,
 *		sieve_xdp_digest()): what a filter holds for a key. The same
 *		key digests alike in every generation of the host.
 * generation	One whole set of maps and their config (struct
 *		sieve_xdp_config): built from the store at a list's version,
 *		made live in one swap, so a packet sees one generation, never
 *		half of two (loader.c).
 * backend	How a generation's filter is built (backend.h): a bloom map,
 *		blocked bloom arrays, or a /dev/sieve filter.
 * filter	A generation's probabilistic part, of whichever backend, as in
 *		"the live filter" and its false-positive rate; "/dev/sieve
 *		filter" always says so, and is a filter of the module (the
 *		filter backend's is one). A "core" is a filter type of the
 *		module's (kmod/bloom.c ...), never this.
 * exact	The maps that hold the keys themselves (SIEVE_XDP_F_EXACT):
 *		a filter's hit is dropped only if they hold the key too.
 * origin	Who put an entry in a list: cli, fleet, a feed's name,
 *		crowdsec/ORIGIN, fail2ban/JAIL; what a refresh or an unblock
 *		--origin touches, and what per-origin drops are counted by.
 *
 * Two prefixes, two sides: sieve_xdp_ names what the BPF program shares
 * with userspace (include/: structs, flags, map and pin names, rules
 * compiled for both); sxdp_ names this loader's C API, userspace only.
 */
#ifndef SIEVE_XDP_LOADER_H
#define SIEVE_XDP_LOADER_H

#include "sample.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <net/if.h>

#include "sieve_xdp.h"
#include "sieve_xdp_blocked.h"

/* This process's network namespace: the inode of /proc/self/ns/net. */
uint64_t sxdp_netns(void);
/*
 * Where an interface's pins live: below a folder of its network namespace
 * ("netns-INODE"), since interface names are per namespace. @ifname NULL
 * gives the namespace's folder. sxdp_pin_dir: this namespace.
 */
void sxdp_pin_dir_ns(char *buf, size_t len, uint64_t netns, const char *ifname);
/*
 * Whether @name is a name Linux gives an interface (dev_valid_name): 1 to
 * IFNAMSIZ - 1 bytes, no '/', ':' or whitespace, not "." or "..". Every
 * path made of an interface name (pins, locks) is made of one that passed,
 * so "../x" never reaches another namespace's pins. The lock and the pin
 * functions refuse others with -EINVAL.
 */
bool sxdp_ifname_ok(const char *name);
#define SXDP_IFNAME_RULE	"1-15 bytes, no '/', ':' or whitespace, not '.' or '..'"
void sxdp_pin_dir(char *buf, size_t len, const char *ifname);

/* Defaults: see README "XDP blocklist". */
#define SXDP_DEFAULT_FPP_PPB	1000		/* 1e-6 */
#define SXDP_DEFAULT_CAPACITY	65536

/* ---- entries (entry.c) ---- */

/* A vector of keys: what a list, a feed or a change holds in memory. */
struct sxdp_keys {
	struct sieve_xdp_key *keys;
	size_t n, cap;
};

/* Parses one entry; on failure *why says what is wrong with it. */
int sxdp_parse_entry(const char *s, struct sieve_xdp_key *key, const char **why);
/* The canonical text of an entry (what `list` prints and the parser reads). */
void sxdp_format_entry(const struct sieve_xdp_key *key, char *buf, size_t len);
const char *sxdp_kind_name(unsigned int kind);
/*
 * An address with an optional port: ADDR, ADDR:PORT, IPV6 or [IPV6]:PORT;
 * the family (*@port 0 if none), or 0 with *@why saying what is wrong.
 */
int sxdp_parse_host(const char *s, __be32 addr[4], __be16 *port, const char **why);

int sxdp_keys_add(struct sxdp_keys *l, const struct sieve_xdp_key *key);
/* Sorts and drops duplicates; then find/remove work. */
void sxdp_keys_sort(struct sxdp_keys *l);
bool sxdp_keys_find(const struct sxdp_keys *l, const struct sieve_xdp_key *key);
bool sxdp_keys_remove(struct sxdp_keys *l, const struct sieve_xdp_key *key);
void sxdp_keys_free(struct sxdp_keys *l);

/* ---- files in the formats of feeds (feed.c) ---- */

enum sxdp_format {
	SXDP_FORMAT_AUTO,	/* sniffed from the file's head; plain if nothing shows */
	SXDP_FORMAT_PLAIN,	/* one entry a line, '#' comments: the list's own format */
	SXDP_FORMAT_NETSET,	/* FireHOL .netset/.ipset: addresses and prefixes */
	SXDP_FORMAT_DROP,	/* Spamhaus DROP/EDROP/DROPv6: "PREFIX ; SBLnnn", ';' comments */
	SXDP_FORMAT_IPSET,	/* `ipset save`: adds of hash:ip and hash:net sets */
};

/* What reading a file found. */
struct sxdp_feed_info {
	enum sxdp_format format;	/* the one read (auto resolved) */
	size_t skipped;			/* ipset adds to sets of other types */
};

/* "auto", "plain", ...; -EINVAL for another name. */
int sxdp_format_parse(const char *name, enum sxdp_format *fmt);
const char *sxdp_format_name(enum sxdp_format fmt);
/*
 * A blocklist file in format @fmt ("-": stdin): -EINVAL with
 * "FILE:LINE: reason" in err and @l untouched, or @l replaced by its
 * entries, sorted. @info may be NULL.
 */
int sxdp_feed_read(const char *path, enum sxdp_format fmt, struct sxdp_keys *l,
		   struct sxdp_feed_info *info, char *err, size_t errlen);
/*
 * The same of an open stream (a download in memory: fmemopen), @name the
 * FILE of the messages. The caller closes @f.
 */
int sxdp_feed_read_stream(FILE *f, const char *name, enum sxdp_format fmt,
			  struct sxdp_keys *l, struct sxdp_feed_info *info, char *err,
			  size_t errlen);
/*
 * The origin a load of @path gets by default: its base name, so that the
 * same feed loaded through another path (./drop.txt, /etc/sieve/drop.txt)
 * is the same origin. NULL for "-": stdin has no name to find it by at
 * the next refresh, the caller names it. Points into @path.
 */
const char *sxdp_feed_origin(const char *path);
/* A plain file: the list's own format (plan FILE). */
int sxdp_keys_read(const char *path, struct sxdp_keys *l, char *err, size_t errlen);

/* ---- sizing (plan.c) ---- */

/* A filter map's plan, of either backend (blocked: see blocked_plan.c). */
struct sxdp_plan {
	uint64_t capacity;	/* entries planned for */
	uint32_t fpp_ppb;	/* target false-positive rate */
	uint32_t nr_hashes;	/* the map's map_extra; blocked: bits per key */
	uint32_t max_entries;	/* the map's max_entries; blocked: 64-byte blocks */
	uint64_t nbits;		/* bitmap bits the kernel allocates */
	uint64_t bytes;		/* bitmap bytes */
	double fpr;		/* expected rate at capacity */
	bool blocked;		/* the blocked backend (SIEVE_XDP_F_BLOCKED) */
};

/* The bitmap size the kernel gives a bloom map (kernel/bpf/bloom_filter.c). */
uint64_t sxdp_kernel_bloom_bits(uint32_t max_entries, uint32_t nr_hashes);
/* Expected false-positive rate of m bits, k hashes, n entries. */
double sxdp_bloom_fpr(uint64_t nbits, uint32_t k, uint64_t n);
/* Fewest bits (then fewest hashes) that keep capacity entries under fpp. */
int sxdp_plan(uint64_t capacity, uint32_t fpp_ppb, struct sxdp_plan *plan);
/* Rough bytes a preallocated exact hash map takes per entry. */
double sxdp_exact_bytes_per_entry(uint64_t capacity);

/* ---- the blocked backend's sizing; either backend's names (blocked_plan.c) ---- */

/*
 * The fewest whole blocks, and their k, that keep capacity entries under
 * fpp by the bound of the module's blocked core. -EINVAL bad arguments,
 * -E2BIG past the module's limits (a GiB of blocks, or no k reaches fpp).
 */
int sxdp_plan_blocked(uint64_t capacity, uint32_t fpp_ppb, struct sxdp_plan *plan);
/* The plan of @cfg_flags' backend (its table's plan, backend.h). */
int sxdp_plan_for(uint32_t cfg_flags, uint64_t capacity, uint32_t fpp_ppb, struct sxdp_plan *plan);
/* The module's expected rate of nblocks blocks, k bits a key, n keys. */
double sxdp_blocked_fpr(uint32_t nblocks, uint32_t k, uint64_t n);
/* A generation's expected rate at @keys, of either backend; its bits in *nbits. */
double sxdp_config_fpr(const struct sieve_xdp_config *cfg, uint64_t keys, uint64_t *nbits);
/*
 * The backend's name ("bloom-map", "blocked", "filter"); parse gives the flag of
 * a backend --backend names alone (0 or SIEVE_XDP_F_BLOCKED; filter:NAME is sxdp_filter_parse's).
 */
const char *sxdp_backend_name(uint32_t cfg_flags);
int sxdp_backend_parse(const char *name, uint32_t *cfg_flag);

/* ---- prefix expansion (expand.c) ---- */

/* Probe lengths per family unless attach --max-probes says otherwise. */
#define SXDP_DEFAULT_MAX_PROBES	8
/* Histograms are indexed by prefix length, 0 to this. */
#define SXDP_CPE_MAX_LEN	128
/*
 * Keys expansion may add to a list (about 160 MB while a generation is
 * built, 16 MiB of bloom at 1e-6): a plan that needs more is refused.
 */
#define SXDP_MAX_EXTRA_KEYS	(1ULL << 22)

/*
 * The probe lengths (at most @max_probes, longest first) that leave the
 * fewest entries after expansion, for @hist[l] prefixes of length l
 * (1 <= l <= @maxlen); *entries is that number (UINT64_MAX: saturated).
 * -EINVAL for a bad @max_probes; -E2BIG if every plan saturates.
 */
int sxdp_cpe_choose(const uint64_t *hist, unsigned int maxlen, unsigned int max_probes,
		    uint8_t *lens, unsigned int *nlens, uint64_t *entries);
/* Entries after expanding @hist to @lens (ascending); UINT64_MAX if one does not fit. */
uint64_t sxdp_cpe_cost(const uint64_t *hist, unsigned int maxlen, const uint8_t *lens,
		       unsigned int nlens);
/* The probe length of a prefix of @len under @lens (longest first); 0 if none. */
unsigned int sxdp_cpe_target(const uint8_t *lens, unsigned int nlens, unsigned int len);
/* The keys the maps hold for @l under @cfg's probe lengths: see expand.c. */
int sxdp_expand(const struct sxdp_keys *l, const struct sieve_xdp_config *cfg,
		struct sxdp_keys *out);

/* ---- maps and programs (loader.c) ---- */

/* A running instance: the pinned maps of one interface. */
struct sxdp_origins;

struct sxdp_handle {
	char ifname[IF_NAMESIZE];
	uint64_t netns;		/* the interface's namespace (sxdp_netns) */
	int ifindex;		/* 0 for an interface of another namespace */
	int active_fd, cfg_fd, bloom_fd, exact_fd, stats_fd;
	int allow_fd;		/* -1: an instance from before the allowlist */
	int allow_none_fd;	/* -1: pinned by a sieve that always asks the allowlist */
	int blocked_fd;		/* -1: pinned by a sieve without the blocked backend */
	int removed_fd;		/* < 0: pinned by a sieve without live removals (removed.c) */
	/* < 0: pinned by a sieve without the IPv4 prefix table (v4table.c) */
	int v4top_fd, v4chunk_fd;
	int v4host_fd;		/* < 0: pinned by a sieve without the host bitmap */
	/*
	 * < 0: pinned by a sieve before per-origin drops, whose program does
	 * not read SIEVE_XDP_F_DRY_RUN either (monitor.c)
	 */
	int origins_fd;
	/*
	 * Exact mode: the origin of each key a build or live add writes to
	 * the exact maps (their values). NULL: SIEVE_XDP_ORIGIN_NONE. Set by
	 * ops.c around a change, which has the store; not owned.
	 */
	const struct sxdp_origins *origins;
	bool pinned;		/* from sxdp_open: changes take the interface's lock */
	bool stale;		/* from sxdp_open_reader: an older program's maps, read only */
};

/*
 * SIEVE_XDP_F_DRY_RUN is one of @cfg_flags like the others (a config
 * file's dry_run = yes sets it there and in @cfg_given): on an attached
 * interface, a change of it alone is switched live (sxdp_set_dry_run),
 * with no rebuild.
 */
struct sxdp_attach_opts {
	uint32_t xdp_flags;	/* XDP_FLAGS_SKB_MODE or XDP_FLAGS_DRV_MODE */
	uint32_t cfg_flags;	/* SIEVE_XDP_F_* */
	uint32_t cfg_given;	/* flags the caller set or cleared: on re-attach, only these change */
	uint32_t fpp_ppb;
	bool fpp_given;		/* on re-attach, the rate changes only if given */
	uint64_t capacity;
	unsigned int max_probes;	/* probe lengths per family; 0: not given */
	const char *filter;	/* SIEVE_XDP_F_FILTER: the /dev/sieve filter's name */
	bool force;		/* replace another XDP program */
	const char *list;	/* the list to enforce; NULL: the one it has, or "default" */
	/* Samples: given fields only; a new instance's rate is SIEVE_XDP_SAMPLE_RATE_DEFAULT. */
	struct sxdp_sample_change sample;
};

/* What attach found and did: UPGRADED, it replaced an older program. */
enum { SXDP_ATTACHED = 0, SXDP_ALREADY = 1, SXDP_UPGRADED = 2 };

int sxdp_ensure_bpffs(void);
/* mkdir -p, mode 0700. */
int sxdp_mkdir_p(const char *path);

/* The program an interface's link runs. */
struct sxdp_prog {
	uint32_t id;
	char tag[17];		/* the kernel's tag: a hash of its instructions, hex */
	uint64_t load_time_ns;	/* since boot */
};
/* -ENOENT: no link pinned, or it runs nothing. */
int sxdp_prog_running(uint64_t netns, const char *ifname, struct sxdp_prog *p);
void sxdp_tag_hex(const uint8_t tag[8], char out[17]);

/*
 * The lock of one interface's state: its pins and its generations. Every
 * change holds it from reading the live generation to the last write;
 * readers (list, status, stats) do not take it. It is an flock on the
 * interface's pin folder, so the kernel drops it with a killed holder.
 * sxdp_attach and sxdp_detach take it themselves, and so do the
 * operations of ops.h; it is not recursive: never call them holding it.
 * @create makes the folder (attach); otherwise -ENOENT means the
 * interface has no blocklist. Returns the lock's fd. Taken before the
 * store's write transaction, never while holding it (ops.h).
 */
int sxdp_lock(const char *ifname, bool create);
int sxdp_lock_ns(uint64_t netns, const char *ifname, bool create);
void sxdp_unlock(int lock_fd);
/*
 * Finishes or undoes a program upgrade that was cut short (attach.c), with
 * the interface's lock held: 0 nothing to do or undone, 1 finished (the
 * interface's folder is another one now: lock again), or -errno.
 */
int sxdp_upgrade_recover(uint64_t netns, const char *ifname);
/* Where an upgrade builds the new instance of @ifname (NULL: the namespace's folder). */
void sxdp_staging_dir(char *buf, size_t len, uint64_t netns, const char *ifname);
/* Unpins whatever the staging folder @dir holds, then removes it. */
void sxdp_remove_staged(const char *dir);
/* The pin @name in @dir, as a new fd, or -1. */
int sxdp_pin_get(const char *dir, const char *name);
/* The ifindex the XDP link pinned in the folder @dir runs on; 0 if defunct or none. */
int sxdp_link_ifindex_in(const char *dir);
/* The id of program @fd, or of the program link @fd runs; 0 if none. */
uint32_t sxdp_prog_id(int fd);
uint32_t sxdp_link_prog_id(int fd);
/* The program's pin beside the link's in a staged instance (and after it). */
#define SXDP_PROG_PIN	"prog"
/* Interfaces with a sieve instance, from the pin folders. */
int sxdp_list_ifaces(char names[][IF_NAMESIZE], int max);

/*
 * prune.c: which namespace an interface folder belongs to, and taking
 * down what outlived it. SXDP_NETNS_PIN holds the identity (cookie and
 * inode) of the namespace that made the folder.
 */
#define SXDP_NETNS_PIN	"netns"
struct sxdp_store;
/* This namespace's cookie (SO_NETNS_COOKIE); 0 where the kernel has none. */
uint64_t sxdp_netns_cookie(void);
/* Pins this namespace's identity in the interface folder @dir. */
int sxdp_netns_mark(const char *dir);
/* Whether @dir's recorded identity is another namespace's (one reusing the inode). */
bool sxdp_netns_foreign(const char *dir);
/* Removes the folder netns-@netns if it is empty. */
void sxdp_tidy_netns(uint64_t netns);
/* One interface taken down, for the caller to report. */
struct sxdp_removed {
	uint64_t netns;
	char iface[IF_NAMESIZE];
	const char *why;	/* "detached", "its namespace is gone", ... */
	bool linked;		/* its link ran on an interface */
	bool record;		/* its attachment was removed from the store */
	/*
	 * Set: this one failed, and why (iface "" when a namespace's folder
	 * or the store failed). The walk goes on with the others.
	 */
	const char *error;
};
typedef void (*sxdp_removed_fn)(const struct sxdp_removed *r, void *arg);
/*
 * prune: the pins (and, when the namespace is gone or another's, the
 * store's attachments) of namespaces that are gone, of another namespace
 * with the same inode, and of interfaces that are gone. detach_all: every
 * interface folder of every namespace under the pin root, and every
 * attachment in @s (NULL: the pins only). Root. Each interface is
 * reported to @fn, a failure too (->error); one does not stop the others.
 * 0, or the first failure's -errno, with its message in @err.
 */
int sxdp_prune(struct sxdp_store *s, sxdp_removed_fn fn, void *arg, char *err, size_t errlen);
int sxdp_detach_all(struct sxdp_store *s, sxdp_removed_fn fn, void *arg, char *err,
		    size_t errlen);

int sxdp_open(const char *ifname, struct sxdp_handle *h);
int sxdp_open_ns(uint64_t netns, const char *ifname, struct sxdp_handle *h);
/*
 * The pins in @dir (an upgrade's staging folder, or an interface's).
 * -ESTALE: maps of another layout than this sieve's, an older program's
 * (`sieve xdp attach` replaces it, maps and all).
 */
int sxdp_open_dir(const char *dir, uint64_t netns, const char *ifname, struct sxdp_handle *h);
/*
 * For reading only (status, stats): an older program's maps too, with
 * h->stale set. Its config reads into this sieve's struct as far as it
 * goes (fields are only ever appended), its counters by their own size.
 */
int sxdp_open_reader(const char *ifname, struct sxdp_handle *h);
/* The same, of @ifname in namespace @netns (status: every recorded attachment). */
int sxdp_open_reader_ns(uint64_t netns, const char *ifname, struct sxdp_handle *h);
/* Whether the map holds values of @value_size: this sieve's layout. */
bool sxdp_layout_current(int map_fd, size_t value_size);
void sxdp_close(struct sxdp_handle *h);
int sxdp_read_config(struct sxdp_handle *h, struct sieve_xdp_config *cfg, uint32_t *gen);
int sxdp_read_stats(struct sxdp_handle *h, struct sieve_xdp_stats *sum);
/* The same, of the stats map @stats_fd (why's private one too). */
int sxdp_read_stats_fd(int stats_fd, struct sieve_xdp_stats *sum);
/* ---- monitor mode and per-origin drops (monitor.c, origin.c) ---- */

/*
 * Switches @h's dry run on or off in its live config, in place: no
 * rebuild, and each packet is judged by one mode or the other. Holding
 * the interface's lock. 0 (also when it is so already); -EOPNOTSUPP for
 * an older sieve's program, which would not read the flag (attach
 * upgrades it); -errno.
 */
int sxdp_set_dry_run(struct sxdp_handle *h, bool on);
/*
 * Drops per origin slot, summed over the CPUs, into @out
 * (SIEVE_XDP_ORIGIN_SLOTS of them, zeroed first): -ENOENT for an older
 * sieve's program, which has none.
 */
int sxdp_read_origin_drops(struct sxdp_handle *h, struct sieve_xdp_count *out);
/* An upgrade's: the old instance's drops per origin into the new one's, CPU by CPU. */
int sxdp_carry_origin_drops(int old_fd, int new_fd);

/* A list's entries with their origin ids (origin.c): what exact values come from. */
struct sxdp_origin_entry {
	struct sieve_xdp_key key;	/* first: the entries sort by it */
	uint32_t id;
};
struct sxdp_origins {
	struct sxdp_origin_entry *v;
	size_t n, cap;
	bool sorted;		/* sxdp_origins_sort() since the last add: lookups work */
};
int sxdp_origins_add(struct sxdp_origins *o, const struct sieve_xdp_key *key, uint32_t id);
void sxdp_origins_sort(struct sxdp_origins *o);
void sxdp_origins_free(struct sxdp_origins *o);
/*
 * The exact map's value of @key, a key of the maps: the id of the entry
 * that made it, or of the longest prefix entry covering an expanded one;
 * SIEVE_XDP_ORIGIN_NONE without @o or such an entry.
 */
uint32_t sxdp_origin_of(const struct sxdp_origins *o, const struct sieve_xdp_key *key);

/*
 * Exact mode: the keys of @entries (expanded as the live config probes
 * them) that the live exact map holds take their origin in h->origins, in
 * place: an add that moved entries to another origin. A key a live add
 * left at another length keeps its id until the next rebuild. 0, 1 to
 * rebuild instead, or -errno.
 */
int sxdp_exact_reorigin(struct sxdp_handle *h, const struct sxdp_keys *entries);

/* Each CPU's counters of a stats map, of this program or an older one. */
int sxdp_read_stats_percpu(int stats_fd, struct sieve_xdp_stats *per, int ncpus);
/* "native" or "generic" (or "none"). */
const char *sxdp_mode(struct sxdp_handle *h);
/*
 * Kernel-reported memory of the live filter (either backend, with its
 * removed map) / exact maps (0 if none).
 */
int sxdp_live_memory(struct sxdp_handle *h, uint64_t *bloom_bytes, uint64_t *exact_bytes);

/* cfg's max_probes, or the default when it has none. */
unsigned int sxdp_max_probes(const struct sieve_xdp_config *cfg);
/*
 * Config for a list: kinds, and the probe lengths (at most cfg's
 * max_probes per family) that leave the fewest keys after expansion;
 * entries. -E2BIG: the best plan adds more than
 * SXDP_MAX_EXTRA_KEYS keys.
 */
int sxdp_config_fill(struct sieve_xdp_config *cfg, const struct sxdp_keys *l);
/*
 * sxdp_config_fill, then sxdp_expand into @keys; on failure err says why
 * in the operator's words.
 */
int sxdp_plan_keys(const struct sxdp_keys *l, struct sieve_xdp_config *cfg,
		   struct sxdp_keys *keys, char *err, size_t errlen);
/* The live config, extended for a live add of @fresh: see expand.c. */
int sxdp_config_extend(struct sieve_xdp_config *cfg, const struct sxdp_keys *fresh);

/*
 * The IPv4 prefix table (v4table.c, include/sieve_xdp_v4table.h). Callers
 * hold the interface's lock. 0 or -errno (-ENOSPC: more /24s hold
 * prefixes longer than /24 than the chunk map takes).
 */
/* Whether @h's program has the table (pins of an older sieve do not). */
bool sxdp_v4table_on(const struct sxdp_handle *h);
/* Whether the table holds @k (an IPv4 prefix /1-/31) where a config says so. */
bool sxdp_v4table_entry(const struct sieve_xdp_key *k);
/* The table made what the IPv4 prefixes of @l say (a build; the rest of @l is skipped). */
int sxdp_v4table_sync(struct sxdp_handle *h, const struct sxdp_keys *l);
/*
 * The IPv4 prefixes of @fresh set in the table (a live block); -ENOSPC,
 * nothing written, if the /24s with a chunk would pass half the map.
 */
int sxdp_v4table_add(struct sxdp_handle *h, const struct sxdp_keys *fresh);
/* -ENOSPC if @l's /24s holding prefixes longer than /24 pass half the chunk map. */
int sxdp_v4table_fits(const struct sxdp_keys *l);
/* The IPv4 prefixes of @l, a list sxdp_v4table_fits, set (a build, before its swap). */
int sxdp_v4table_build_add(struct sxdp_handle *h, const struct sxdp_keys *l);
/*
 * The /24s the IPv4 prefixes of @gone spanned, recomputed from @remaining
 * (the list after the change; only its IPv4 prefixes are read, so it may
 * hold just those): a live unblock.
 */
int sxdp_v4table_remove(struct sxdp_handle *h, const struct sxdp_keys *gone,
			const struct sxdp_keys *remaining);
/*
 * The host bitmap (sieve_xdp_v4table.h), where @h has it: its bits follow
 * the table's calls (sync, add, build_add: the IPv4 sources of the list);
 * a live unblock clears the bit of each gone source's /24 in which
 * @has_host (the list after the change) finds none left.
 */
bool sxdp_v4host_on(const struct sxdp_handle *h);
int sxdp_v4host_remove(struct sxdp_handle *h, const struct sxdp_keys *gone,
		       int (*has_host)(void *ctx, uint32_t slot, bool *found), void *ctx);
/* /24s covered whole, /24s with a chunk, and the kernel's bytes for its maps, now. */
int sxdp_v4table_counts(struct sxdp_handle *h, uint64_t *covered, uint64_t *chunks,
			uint64_t *bytes);
/* What the kernel charges the map @fd ("memlock:" in its fdinfo; 0 if unknown). */
uint64_t sxdp_map_memlock(int fd);
/* A grace period: no packet still runs on what it read before (loader.c). */
void sxdp_wait_for_packets(void);
/*
 * New maps sized by plan, filled with l; exact_fd -1 unless exact. The
 * filter is the plan's backend: *bloom_fd is a blocked array if
 * plan->blocked (and sxdp_swap puts it in sieve_blocked, by cfg's flag).
 * The digests are @cfg's: its digest_key (and blocked_seed).
 */
int sxdp_gen_create(const struct sxdp_plan *plan, const struct sieve_xdp_config *cfg, bool exact,
		    const struct sxdp_keys *l, const struct sxdp_origins *origins, int *bloom_fd,
		    int *exact_fd);
/*
 * Into either map, or both; an fd of -1 is skipped. The bloom-map
 * backend; its digests under @secret (a config's digest_key). The exact
 * map's values are the keys' origins in @origins (NULL: none).
 */
int sxdp_gen_insert(int bloom_fd, int exact_fd, const __u64 secret[2],
		    const struct sieve_xdp_key *keys, size_t n, const struct sxdp_origins *origins);

/* ---- the bloom map's fill (bloom_fill.c) ---- */

/* How a bloom map is filled: AUTO picks the fast fill for all but a few keys. */
enum sxdp_fill_mode {
	SXDP_FILL_AUTO = 0,
	SXDP_FILL_FAST,		/* bpf/bloom_fill.bpf.c, a batch per run; no fallback */
	SXDP_FILL_SLOW,		/* one bpf() update per key */
};
/* Not AUTO: forces a mode (tests); else SIEVE_XDP_FILL=fast|slow does. */
extern enum sxdp_fill_mode sxdp_fill_mode;
/* Tests: the fast fill's run that would pass this many keys fails (0: none does). */
extern size_t sxdp_fill_fail_at;
/*
 * The digests of @keys under @secret into the bloom map @bloom_fd, many
 * per syscall where the fill program loads; falls back to one update per
 * key (said once on stderr) where it does not, or for the rest of @keys
 * if a run fails part-way (in AUTO mode). *@used (may be NULL): the mode
 * that filled it, or the last of them.
 */
int sxdp_bloom_fill(int bloom_fd, const __u64 secret[2], const struct sieve_xdp_key *keys,
		    size_t n, enum sxdp_fill_mode *used);
/* ---- the blocked backend's maps (blocked.c) ---- */

/* An empty array of plan->max_entries blocks, mmapable, for a generation. */
int sxdp_blocked_create(const struct sxdp_plan *plan);
/*
 * Sets the bits of @keys in the blocked array @fd through mmap, no syscall
 * per key, by @cfg's k, digest key and seed; @live: the program may be
 * reading it, so atomic ORs.
 */
int sxdp_blocked_insert(int fd, const struct sieve_xdp_config *cfg,
			const struct sieve_xdp_key *keys, size_t n, bool live);
/*
 * sxdp_gen_insert for a generation @cfg of either backend (its flags say
 * which; its k, digest key and seed): exact first, then the filter @filter_fd.
 */
int sxdp_filter_insert(const struct sieve_xdp_config *cfg, int filter_fd, int exact_fd,
		       const struct sieve_xdp_key *keys, size_t n, bool live,
		       const struct sxdp_origins *origins);

/* A kill -9 here if the environment's @var is @step: the e2e suite's. */
void sxdp_test_kill(const char *var, const char *step);
/*
 * Puts maps and config in the idle slot, then flips the live one.
 * sxdp_swap, sxdp_build, sxdp_rebuild* and sxdp_add_live need the
 * interface's lock held (or a handle no one else has, as in tests).
 */
int sxdp_swap(struct sxdp_handle *h, const struct sieve_xdp_config *cfg, int bloom_fd,
	      int exact_fd);

/* Headroom: capacity planned for a list of @n keys. */
uint64_t sxdp_capacity_for(uint64_t n);

/*
 * The store_version a generation is swapped in at while the IPv4 prefix
 * table still holds what its list lost (sxdp_build): no store's version,
 * so maps left so read as behind.
 */
#define SXDP_VERSION_TABLE_PENDING	UINT64_MAX

/* What a generation is built from. */
struct sxdp_build_spec {
	const struct sxdp_keys *list;	/* the whole blocklist, sorted */
	uint32_t flags;			/* SIEVE_XDP_F_* */
	uint32_t fpp_ppb;
	uint64_t capacity;		/* keys; grown to fit the list */
	unsigned int max_probes;	/* 0: the default */
	uint64_t store_version;		/* the store's version of the list */
	const char *filter;		/* SIEVE_XDP_F_FILTER: the filter's name */
	/*
	 * The host's digest key (sxdp_store_secret); NULL: the live
	 * generation's, if it has one of SIEVE_XDP_DIGEST (tests).
	 */
	const __u64 *secret;
	/*
	 * SIEVE_XDP_F_FILTER: fill a filter of its own beside NAME and point
	 * the config at it, never touching NAME: an upgrade's staged
	 * instance, while the older program still reads NAME under its digest.
	 */
	bool beside;
};

/*
 * Whether @cfg's filter holds digests of SIEVE_XDP_DIGEST under @secret:
 * else its maps are rebuilt from the store before anything else is done
 * with them (live adds and deletes would mix two digests).
 */
bool sxdp_digest_current(const struct sieve_xdp_config *cfg, const __u64 secret[2]);
/*
 * A new generation's digest fields: @b's secret (or the live one, see
 * sxdp_build_spec) and a fresh random blocked_seed. -ENOKEY: no secret.
 */
int sxdp_config_keyed(struct sieve_xdp_config *cfg, struct sxdp_handle *h,
		      const struct sxdp_build_spec *b, char *err, size_t errlen);

/* A new generation for @b, swapped in. */
int sxdp_build(struct sxdp_handle *h, const struct sxdp_build_spec *b, char *err, size_t errlen);
/* The same with the live generation's store version ... */
int sxdp_rebuild_probes(struct sxdp_handle *h, const struct sxdp_keys *l, uint32_t flags,
			uint32_t fpp_ppb, uint64_t capacity, unsigned int max_probes, char *err,
			size_t errlen);
/* ... and probe budget. */
int sxdp_rebuild(struct sxdp_handle *h, const struct sxdp_keys *l, uint32_t flags,
		 uint32_t fpp_ppb, uint64_t capacity, char *err, size_t errlen);
/*
 * Adds @fresh (entries not on the list yet) into the live maps, in
 * O(|fresh|), and records @store_version. 1: they need a rebuild instead
 * (the probe lengths or the capacity run out, or the filter backend,
 * whose live adds are sxdp_filter_add_live); nothing changed then.
 */
int sxdp_add_live(struct sxdp_handle *h, const struct sxdp_keys *fresh, uint64_t store_version);
/* Records that the live maps hold @store_version (a change they need not see). */
int sxdp_set_version(struct sxdp_handle *h, uint64_t store_version);
/*
 * The live config becomes @next: in place when packets would see no
 * change, else a swap to @bloom_fd and @exact_fd (-1: none).
 */
int sxdp_publish_config(struct sxdp_handle *h, const struct sieve_xdp_config *next,
			int bloom_fd, int exact_fd);

/* ---- removals without a rebuild (removed.c) ---- */

/*
 * Whether a remaining entry @entry is on the list (the caller's: ops.c asks
 * the store, one indexed lookup): 0 and *@found, or -errno.
 */
typedef int (*sxdp_has_fn)(void *ctx, const struct sieve_xdp_key *entry, bool *found);

/* Records in @next the probe lengths it has and @cur has not (a live add's). */
void sxdp_note_live_lens(const struct sieve_xdp_config *cur, struct sieve_xdp_config *next);
/* Digests a generation's removed map may hold before a command rebuilds it. */
uint32_t sxdp_removed_max(const struct sieve_xdp_config *cfg);
/*
 * Whether @cfg's removed keys are past the lower mark (half the bound)
 * at which the agent rebuilds the generation in the background, so that
 * commands seldom meet the bound and pay the rebuild themselves.
 */
bool sxdp_removed_due(const struct sieve_xdp_config *cfg);
/*
 * Removes the entries @gone (no longer on the list) from @h's live
 * generation in O(|gone|), whatever the list's size, and records
 * @store_version: the keys they expand to that no remaining entry makes
 * (@has asked once per prefix length that expands to a key's probe
 * length) go into the generation's removed map, or out of its exact map
 * in exact mode. The map is written before the version: killed in
 * between, the maps are behind the store and the next command rebuilds.
 * 1: a rebuild instead (nothing changed): the filter backend, an
 * instance without the removed map, an older digest, past
 * sxdp_removed_max(), or a prefix removal after a live add moved the
 * probe lengths.
 */
int sxdp_remove_live(struct sxdp_handle *h, const struct sxdp_keys *gone, sxdp_has_fn has,
		     void *ctx, uint64_t store_version);
/*
 * After a live add of @keys (expanded, already in the filter): their
 * digests leave the live removed map, and @next->removed counts down.
 * Nothing to do when @next->removed is 0.
 */
int sxdp_removed_forget(struct sxdp_handle *h, struct sieve_xdp_config *next,
			const struct sxdp_keys *keys);
/*
 * For sxdp_swap: the removed map the idle slot gets for @next, a new fd
 * (the live slot's when @next keeps the same filter and counts removals),
 * or -1 for none.
 */
int sxdp_removed_carry(struct sxdp_handle *h, const struct sieve_xdp_config *next,
		       uint32_t live);

/* ---- the filter backend: a /dev/sieve filter (devfilter.c) ---- */

/* How the store records the backend: "filter:NAME". */
#define SXDP_FILTER_PREFIX	"filter:"
/* NAME of a recorded "filter:NAME" backend, or NULL for another backend. */
const char *sxdp_backend_filter(const char *backend);
/* "filter:NAME": 0 and *@name; 1 another backend; -EINVAL a bad NAME. */
int sxdp_filter_parse(const char *arg, const char **name);
/*
 * sxdp_build for the filter backend: @b->filter (created as a cuckoo
 * filter if absent) gets the digests of the list's keys, each once, by a
 * lapse-free rebuild.
 */
int sxdp_filter_build(struct sxdp_handle *h, const struct sxdp_build_spec *b, char *err,
		      size_t errlen);
/*
 * The filter's set: the digests of @keys under @secret, sorted, each
 * once, in a new array *@d (free() it) of *@n.
 */
int sxdp_filter_digests(const struct sxdp_keys *keys, const __u64 secret[2], uint64_t **d,
			size_t *n);
/*
 * A live add of @fresh (entries new to the list) to @h's filter:
 * the digests of their keys that no other entry of @list (the whole
 * blocklist, @fresh included) makes, and @store_version recorded. 1: a
 * rebuild instead (a new probe length, past capacity, full); 2: @list is
 * NULL and the filter may hold one of the digests already: call again
 * with the list. Nothing changed on either.
 */
int sxdp_filter_add_live(struct sxdp_handle *h, const struct sxdp_keys *fresh,
			 const struct sxdp_keys *list, uint64_t store_version);
/*
 * Deletes the digests of the entries @gone that no entry of @list (the
 * blocklist without them) still makes, and records @store_version; 1:
 * rebuild instead (not a cuckoo filter, or a digest was missing).
 */
int sxdp_filter_remove_live(struct sxdp_handle *h, const struct sxdp_keys *gone,
			    const struct sxdp_keys *list, uint64_t store_version);
/* The name of filter @id. */
int sxdp_filter_name_of(uint32_t id, char *name, size_t len);
/*
 * Whether @cfg is of the filter backend and its /dev/sieve filter is gone
 * (destroyed, or sieve.ko unloaded): the program then matches nothing, so
 * the interface enforces nothing until a rebuild makes the filter again.
 */
bool sxdp_filter_gone(const struct sieve_xdp_config *cfg);
/* Filter @id's rate as the module estimates it now (0 if unknown); its table bits in *@nbits. */
double sxdp_filter_fpr(uint32_t id, uint64_t *nbits);

/* ---- the host's digest key (secret.c) ---- */

/* Beside the store, in its folder. */
#define SXDP_SECRET_FILE	"digest.key"
/*
 * The host's 128-bit digest secret from @state_dir/digest.key, made there
 * at first use (getrandom, mode 0600, written whole or not at all). A file
 * of another mode (-EPERM) or size or type (-EINVAL) is refused, err says
 * what to do; it is never overwritten.
 */
int sxdp_secret_load(const char *state_dir, __u64 secret[2], char *err, size_t errlen);

/* ---- the allowlist (allow.c) ---- */

/*
 * Sources and prefixes a source or prefix entry never drops: see "The
 * allowlist" in sieve_xdp.h. Entries are sieve_xdp_keys of kind
 * SIEVE_XDP_SRC or SIEVE_XDP_PREFIX as sxdp_parse_entry makes them (host
 * bits and other fields zero); any other is -EINVAL and nothing changes.
 * The trie is live: there is no generation to swap. The callers hold the
 * interface's lock (sxdp_lock), as for every change; these functions do
 * not take it. -EOPNOTSUPP: the instance predates the allowlist (detach
 * and attach again).
 *
 * update: inserts @add, then deletes @del (either may be NULL); an entry
 * in both stays, and one in @del that is not there is no error. On
 * another error (-ENOSPC: SIEVE_XDP_ALLOW_MAX reached) part of the change
 * may be made: sxdp_allow_sync from the list of record repairs it.
 * sync: makes the trie hold exactly @all, inserting before deleting and
 * never removing an entry of @all, so traffic of a source that stays
 * allowed is never dropped while it runs.
 * read: the entries in the trie into @out (replaced), sorted.
 */
int sxdp_allow_update(struct sxdp_handle *h, const struct sxdp_keys *add,
		      const struct sxdp_keys *del);
int sxdp_allow_sync(struct sxdp_handle *h, const struct sxdp_keys *all);
int sxdp_allow_read(struct sxdp_handle *h, struct sxdp_keys *out);

#endif /* SIEVE_XDP_LOADER_H */
