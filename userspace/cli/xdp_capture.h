/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdp_capture.c: the `xdp capture` command's table, linked into both sieve
 * and sieve-agent, as agent_command.c is: the pcap files are written with
 * libpcap, whose static build needs libraries the static CLI cannot take
 * (D-Bus, libsystemd), so sieve execs `sieve-agent __capture ARGS`
 * (agent_exec.c) and sieve-agent runs it (userspace/agent/capture.c).
 */
#ifndef SIEVE_CLI_XDP_CAPTURE_H
#define SIEVE_CLI_XDP_CAPTURE_H

#include <stdbool.h>
#include <stdint.h>

#define SXDP_CAPTURE_CMD	"__capture"

struct cli_command;
struct capture_opts {
	const char *file;	/* -w: a pcap file, "-" for stdout */
	const char *iface;	/* -i; NULL: every interface with the blocklist */
	uint64_t count;		/* -c: stop after this many packets; 0: no bound */
	uint32_t timeout;	/* --timeout: seconds; 0: until a signal */
	bool quiet;		/* -q: no line per packet on stderr */
};

extern const struct cli_command xdp_capture_command;
int xdp_capture_run(const struct cli_command *cmd, int argc, char **argv);

#endif /* SIEVE_CLI_XDP_CAPTURE_H */
