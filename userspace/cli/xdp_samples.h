/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_samples.c: `sieve xdp set` (an attachment's sample settings, live)
 * and `sieve xdp top` (the samples attributed through the store).
 */
#ifndef SIEVE_CLI_XDP_SAMPLES_H
#define SIEVE_CLI_XDP_SAMPLES_H

struct cli_command;
struct sxdp_store;

extern const struct cli_command xdp_set_command, xdp_top_command;

/* The store by --state-dir, $SIEVE_STATE_DIR, the settings (xdp.c); a reported error. */
int xdp_open_store(const char *state_dir, const char *config, const char *cmd,
		   struct sxdp_store **s);

#endif /* SIEVE_CLI_XDP_SAMPLES_H */
