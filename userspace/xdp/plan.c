// SPDX-License-Identifier: GPL-2.0
/*
 * Sizing a BPF bloom-filter map. The kernel gives a map of max_entries n
 * and k hash functions (map_extra, 1-15, 0 meaning 5) a bitmap of
 * (n * k / 5 * 7) bits in u32 arithmetic, rounded up to a power of two,
 * at least 64, and 2^32 bits when the product overflows or passes 2^31
 * (kernel/bpf/bloom_filter.c, bloom_map_alloc()). So the bitmap is always
 * a power of two: the plan picks the smallest power of two and the k that
 * keep `capacity` entries under the target rate (the fewest hashes that do:
 * a probe costs one hash each, and a sparser bitmap turns a foreign key
 * away sooner), then the max_entries that makes the kernel allocate
 * exactly that.
 */
#include <errno.h>
#include <math.h>

#include "xdp.h"

#define BLOOM_MAX_HASHES	15
#define BLOOM_MAX_BITS		(1ULL << 32)

uint64_t sxdp_kernel_bloom_bits(uint32_t max_entries, uint32_t nr_hashes)
{
	uint64_t nr = (uint64_t)max_entries * (nr_hashes ? nr_hashes : 5);
	uint64_t pow = 64;

	/* check_mul_overflow() on u32, twice, then the 2^31 cap. */
	if (nr > UINT32_MAX)
		return BLOOM_MAX_BITS;
	nr = nr / 5 * 7;
	if (nr > UINT32_MAX || nr > (1ULL << 31))
		return BLOOM_MAX_BITS;
	while (pow < nr)
		pow <<= 1;
	return pow;
}

/* (1 - (1 - 1/m)^(kn))^k, with log1p so that huge m keeps its precision. */
double sxdp_bloom_fpr(uint64_t nbits, uint32_t k, uint64_t n)
{
	double fill = -expm1((double)k * (double)n * log1p(-1.0 / (double)nbits));

	return pow(fill, k);
}

/* The largest max_entries the kernel turns into exactly nbits bits. */
static uint32_t max_entries_for(uint64_t nbits, uint32_t k)
{
	uint64_t t, me;

	if (nbits >= BLOOM_MAX_BITS)
		return UINT32_MAX / k;
	/* floor(me * k / 5) * 7 <= nbits  <=>  me * k <= 5 * floor(nbits / 7) + 4 */
	t = nbits / 7;
	me = (5 * t + 4) / k;
	if (me > UINT32_MAX)
		me = UINT32_MAX;
	while (me > 1 && sxdp_kernel_bloom_bits((uint32_t)me, k) > nbits)
		me--;
	return me ? (uint32_t)me : 1;
}

int sxdp_plan(uint64_t capacity, uint32_t fpp_ppb, struct sxdp_plan *plan)
{
	double target = fpp_ppb / 1e9, best_fpr = 2;
	uint64_t nbits, best_bits = 0;
	uint32_t k, best_k = 0;

	if (!capacity || !fpp_ppb || fpp_ppb >= 1000000000)
		return -EINVAL;
	for (k = 1; k <= BLOOM_MAX_HASHES; k++) {
		for (nbits = 64; nbits <= BLOOM_MAX_BITS; nbits <<= 1) {
			double fpr = sxdp_bloom_fpr(nbits, k, capacity);

			if (fpr > target)
				continue;
			if (!best_bits || nbits < best_bits) {
				best_bits = nbits;
				best_k = k;
				best_fpr = fpr;
			}
			break;
		}
	}
	if (!best_bits)
		return -E2BIG;	/* 2^32 bits and 15 hashes are not enough */
	plan->capacity = capacity;
	plan->fpp_ppb = fpp_ppb;
	plan->nr_hashes = best_k;
	plan->nbits = best_bits;
	plan->bytes = best_bits / 8;
	plan->fpr = best_fpr;
	plan->max_entries = max_entries_for(best_bits, best_k);
	plan->blocked = false;
	if (sxdp_kernel_bloom_bits(plan->max_entries, best_k) != best_bits)
		return -ERANGE;	/* the model and the search disagree: a bug */
	return 0;
}

/*
 * A preallocated hash map: one element per entry (a 48-byte header, the
 * 40-byte key, the value rounded to 8) plus a power of two of 16-byte
 * buckets. An estimate; `status` shows what the kernel reports.
 */
double sxdp_exact_bytes_per_entry(uint64_t capacity)
{
	uint64_t buckets = 1;

	while (buckets < capacity)
		buckets <<= 1;
	return 48 + sizeof(struct sieve_xdp_key) + 8 + 16.0 * buckets / capacity;
}
