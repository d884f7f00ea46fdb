/* SPDX-License-Identifier: GPL-2.0 */
/* The XDP blocklist's filter backend in the VM (blocklist.c), for kfunc_test.c. */
#ifndef SIEVE_KFUNC_BLOCKLIST_H
#define SIEVE_KFUNC_BLOCKLIST_H

#include <stdio.h>

/* KTAP checks of the blocklist program asking /dev/sieve filters (device @fd). */
void blocklist_check(int fd);
/* Its ns per packet beside the bloom-map and blocked backends, into @out; 0 or -1. */
int blocklist_bench(int fd, FILE *out);
/* The median of five measurements (sorts @v): for a machine that is shared. */
double median5(double v[5]);

#endif /* SIEVE_KFUNC_BLOCKLIST_H */
