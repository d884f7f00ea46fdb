/* SPDX-License-Identifier: GPL-2.0 */
/* What kfunc_test.bpf.c and kfunc_test.c agree on. */
#ifndef SIEVE_KFUNC_TEST_H
#define SIEVE_KFUNC_TEST_H

/* Bytes of key at the start of each test packet. */
#define KEY_LEN		16
/* Queries xdp_hold_long makes while it holds the filter. */
#define HOLD_QUERIES	64
/* The measurements: map sizes, and flow keys asked per packet. */
#define BENCH_MAP_ENTRIES	100000
#define BENCH_KEYS_PER_PACKET	4

#endif /* SIEVE_KFUNC_TEST_H */
