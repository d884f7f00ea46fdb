/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the CLI says of recorded attachments that do not enforce their
 * list (xdp_enforce.c): after a change, and in status.
 */
#ifndef SIEVE_CLI_XDP_ENFORCE_H
#define SIEVE_CLI_XDP_ENFORCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops.h"

/* "IFACE", or "IFACE (netns N)" for another network namespace's. */
const char *xdp_iface_label(uint64_t netns, const char *ifname, char *buf, size_t len);
/*
 * After a change to @list: one line on standard error for each recorded
 * attachment it did not reach, and why. EXIT_NOT_ENFORCED if any, else
 * EXIT_OK.
 */
int xdp_report_unreached(const char *list, const struct sxdp_op_result *r);
/*
 * status of a recorded attachment whose maps cannot be read: one line (or
 * one JSON object) with its list and why it does not enforce it.
 */
void xdp_status_unenforced(bool json, uint64_t netns, const char *ifname, const char *list,
			   enum sxdp_enforce st, int err);

#endif /* SIEVE_CLI_XDP_ENFORCE_H */
