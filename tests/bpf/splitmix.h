/* SPDX-License-Identifier: GPL-2.0 */
/* A seeded, repeatable random stream for the BPF tests and benchmarks. */
#ifndef SIEVE_TEST_SPLITMIX_H
#define SIEVE_TEST_SPLITMIX_H

#include <stdint.h>

/*
 * splitmix64: the next value of the stream whose state is *state. Each
 * caller keeps its own state (its own seed), so one stream's draws never
 * shift another's and a run is the same every time.
 */
static inline uint64_t splitmix64_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif /* SIEVE_TEST_SPLITMIX_H */
