/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The filter backends behind one table of operations, as the kernel's map
 * types sit behind struct bpf_map_ops (kernel/bpf/bloom_filter.c) and the
 * module's filter types behind sieve_filter_ops: each backend is one file
 * (backend_bloom.c, backend_blocked.c, backend_filter.c) that fills in a
 * struct sxdp_backend_ops, and the loader picks the table once, from a
 * generation's config flags or the name --backend gives, then calls
 * through it. A fourth backend is a new file and an entry in sxdp_backends[].
 */
#ifndef SXDP_BACKEND_H
#define SXDP_BACKEND_H

#include "xdp.h"

/**
 * struct sxdp_backend_ops - what a filter backend does for the loader
 * @name: as --backend, status and the store name it ("filter" for filter:NAME)
 * @cfg_flag: its SIEVE_XDP_F_* bit in a config's flags (0: the default)
 * @limit: the largest filter @plan makes, as a refusal names it
 * @kfunc_prog: its filter is asked through sieve.ko's kfuncs, by the
 *	program's kfunc build (sieve_xdp_filter.bpf.o), which loads only
 *	where sieve.ko is: an interface switches to or from it by detaching
 * @named: its filter is one the attachment's record names (filter:NAME):
 *	a rebuild of the live generation fills that one again
 * @plan: sizes a filter for @capacity keys at @fpp_ppb (-EOPNOTSUPP: the
 *	backend sizes at @build, as the module does for filter:NAME)
 * @config: records @plan in @cfg's fields of the backend (sieve_xdp.h)
 * @create: an empty filter map for a generation of @plan; an fd or -errno
 * @fill: puts @keys into the filter map @fd of a generation @cfg (its
 *	digest key, k, seed); @live: the program may be reading it
 * @build: builds a generation from the whole list and swaps it in
 * @add_live: puts the entries @fresh into the live generation; 1: a
 *	rebuild instead; 2: needs @list (the whole list), call again with it
 * @remove_live: takes the entries @gone off the live generation, @list
 *	being what remains; NULL where the backend cannot (a Bloom filter's
 *	bits may be shared): the caller rebuilds
 * @fpr: the expected rate of a generation @cfg holding @keys keys; its
 *	filter's bits in *@nbits
 * @memory: the filter's bytes as @cfg planned them (0: kept elsewhere)
 * @describe: one line about the filter of @cfg for status; @kernel_bytes
 *	as the kernel charges it, @filter the filter backend's name
 * @outer_fd: the outer map of @h that holds its generations' filters, or
 *	-1 where the filter is not a map of the program's (filter:NAME)
 *
 * Every operation but @remove_live is set in every table (a unit test
 * checks it); one a backend cannot do returns -EOPNOTSUPP.
 */
struct sxdp_backend_ops {
	const char *name;
	uint32_t cfg_flag;
	const char *limit;
	bool kfunc_prog;
	bool named;
	int (*plan)(uint64_t capacity, uint32_t fpp_ppb, struct sxdp_plan *plan);
	int (*create)(const struct sxdp_plan *plan);
	void (*config)(struct sieve_xdp_config *cfg, const struct sxdp_plan *plan);
	int (*fill)(const struct sieve_xdp_config *cfg, int fd, const struct sieve_xdp_key *keys,
		    size_t n, bool live);
	int (*build)(struct sxdp_handle *h, const struct sxdp_build_spec *b, char *err,
		     size_t errlen);
	int (*add_live)(struct sxdp_handle *h, const struct sxdp_keys *fresh,
			const struct sxdp_keys *list, uint64_t store_version);
	int (*remove_live)(struct sxdp_handle *h, const struct sxdp_keys *gone,
			   const struct sxdp_keys *list, uint64_t store_version);
	double (*fpr)(const struct sieve_xdp_config *cfg, uint64_t keys, uint64_t *nbits);
	uint64_t (*memory)(const struct sieve_xdp_config *cfg);
	int (*describe)(const struct sieve_xdp_config *cfg, uint64_t kernel_bytes,
			const char *filter, char *buf, size_t len);
	int (*outer_fd)(const struct sxdp_handle *h);
};

extern const struct sxdp_backend_ops sxdp_bloom_ops;
extern const struct sxdp_backend_ops sxdp_blocked_ops;
extern const struct sxdp_backend_ops sxdp_filter_ops;

/* Every backend, the default first; NULL-terminated. */
extern const struct sxdp_backend_ops *const sxdp_backends[];

/* The backend of a config's (or build's) @cfg_flags. */
const struct sxdp_backend_ops *sxdp_backend_of(uint32_t cfg_flags);
/* Every backend's cfg_flag: the bits that choose a backend. */
uint32_t sxdp_backend_flags(void);
/* The backend named @name ("filter" for filter:NAME), or NULL. */
const struct sxdp_backend_ops *sxdp_backend_by_name(const char *name);

/* The generic generation of a filter map and an exact map (loader.c). */
int sxdp_gen_build(struct sxdp_handle *h, const struct sxdp_build_spec *b, char *err,
		   size_t errlen);
/* The generic live add into a filter map: @list is not needed (loader.c). */
int sxdp_gen_add_live(struct sxdp_handle *h, const struct sxdp_keys *fresh,
		      const struct sxdp_keys *list, uint64_t store_version);
/*
 * The inner map in @slot of the outer map @outer_fd, as a new fd (the
 * caller closes it); -ENOENT when the slot is empty, else -errno (loader.c).
 */
int sxdp_slot_map_fd(int outer_fd, uint32_t slot);

#endif /* SXDP_BACKEND_H */
