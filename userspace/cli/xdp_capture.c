// SPDX-License-Identifier: GPL-2.0
/*
 * The `xdp capture` command's table (xdp_capture.h): sieve execs
 * sieve-agent to run it, sieve-agent runs it; the options fill struct
 * capture_opts.
 */
#include <errno.h>

#include "cli.h"
#include "xdp.h"
#include "xdp_capture.h"

static int set_file(void *opts, const char *arg)
{
	((struct capture_opts *)opts)->file = arg;
	return *arg ? 0 : -EINVAL;
}

static int set_iface(void *opts, const char *arg)
{
	((struct capture_opts *)opts)->iface = arg;
	return sxdp_ifname_ok(arg) ? 0 : -EINVAL;
}

static int set_count(void *opts, const char *arg)
{
	struct capture_opts *o = opts;

	return parse_u64(arg, &o->count) || !o->count ? -EINVAL : 0;
}

static int set_timeout(void *opts, const char *arg)
{
	struct capture_opts *o = opts;

	return parse_u32(arg, &o->timeout) || !o->timeout || o->timeout > 86400 ? -EINVAL : 0;
}

static const struct cli_option opt_write = {
	"write", 'w', "FILE", "write the samples to FILE as pcap (- for stdout)",
	.set = set_file, .accepts = "a file name or -",
};
static const struct cli_option opt_iface = {
	"iface", 'i', "IFACE", "one interface (default: every one with the blocklist)",
	.set = set_iface, .accepts = "an interface name",
};
static const struct cli_option opt_count = {
	"count", 'c', "N", "stop after N packets", .set = set_count, .accepts = "a count from 1",
};
static const struct cli_option opt_timeout = {
	"timeout", 0, "S", "stop after S seconds", .set = set_timeout,
	.accepts = "seconds, 1-86400",
};
static const struct cli_option opt_quiet = {
	"quiet", 'q', NULL, "no line per packet on stderr", CLI_FLAG(struct capture_opts, quiet),
};

const struct cli_command xdp_capture_command = {
	"xdp capture", "write the program's samples of dropped packets as pcap",
	.details = "  The program samples what it drops (sieve xdp attach --sample-rate, sieve\n"
		   "  xdp set IFACE sample-rate N; sample-allowed on adds what the allowlist let\n"
		   "  through): the first " CLI_STR(SIEVE_XDP_SAMPLE_BYTES) " bytes of each frame, written with libpcap\n"
		   "  (Ethernet, readable by tcpdump -r and Wireshark). What matched goes to\n"
		   "  stderr, a line per packet numbered as tcpdump -# numbers them:\n"
		   "  N IFACE VERDICT REASON/PROBE_LEN (libpcap writes no pcapng comments).\n"
		   "  Ends at -c, --timeout, SIGINT or SIGTERM; the count goes to stderr.\n"
		   "  The ring has one reader: a capture and a top at once split the samples.",
	.options = CLI_OPTIONS(&opt_write, &opt_iface, &opt_count, &opt_timeout, &opt_quiet),
	.max_args = 0,
	.run = xdp_capture_run,
};
