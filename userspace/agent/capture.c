// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve xdp capture`, run by sieve-agent (userspace/cli/xdp_capture.h):
 * the program's samples as pcap, written by libpcap. libpcap 1.10 writes
 * pcap only (pcap_dump has no pcapng writer, so no per-packet comment):
 * what matched each packet goes to stderr instead, one line per packet,
 * numbered as tcpdump -# numbers the file's packets.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pcap/pcap.h>

#include "cli.h"
#include "xdp.h"
#include "xdp_capture.h"

#define POLL_MS		200

static volatile sig_atomic_t exiting;

static void on_signal(int sig)
{
	exiting = sig;
}

struct capture {
	const struct capture_opts *o;
	pcap_dumper_t *dumper;
	uint64_t packets;
};

static int write_sample(const char *ifname, const struct sieve_xdp_sample *s, void *ctx)
{
	struct capture *c = ctx;
	uint64_t ns = sxdp_sample_realtime_ns(s->ktime_ns);
	struct pcap_pkthdr hdr = {
		.ts = { .tv_sec = ns / 1000000000ULL, .tv_usec = ns % 1000000000ULL / 1000 },
		.caplen = s->cap_len, .len = s->frame_len,
	};

	pcap_dump((u_char *)c->dumper, &hdr, s->data);
	/* A pipe's reader sees each packet as it comes. */
	if (pcap_dump_flush(c->dumper))
		return -EIO;
	c->packets++;
	if (!c->o->quiet) {
		/* Probe length 0: a port kind, or the IPv4 prefix table's (no length). */
		if (s->kind < SIEVE_XDP_NR_KINDS && s->probe_len)
			fprintf(stderr, "%llu %s %s %s/%u\n", (unsigned long long)c->packets, ifname,
				sxdp_sample_verdict(s), sxdp_sample_reason(s), s->probe_len);
		else
			fprintf(stderr, "%llu %s %s %s\n", (unsigned long long)c->packets, ifname,
				sxdp_sample_verdict(s), sxdp_sample_reason(s));
	}
	return c->o->count && c->packets >= c->o->count;
}

static int capture_loop(struct sxdp_sampler *r, const struct capture_opts *o)
{
	struct timespec start, now;
	int ret = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (!exiting) {
		ret = sxdp_sampler_poll(r, POLL_MS);
		if (ret == -EINTR)
			ret = 0;
		if (ret)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (o->timeout && now.tv_sec - start.tv_sec >= (time_t)o->timeout)
			break;
	}
	return ret > 0 ? 0 : ret;
}

static int capture(const struct capture_opts *o, char names[][IF_NAMESIZE], int n)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct capture c = { .o = o };
	struct sxdp_sampler *r;
	char err[512] = "";
	pcap_t *p;
	int ret;

	ret = sxdp_sampler_open(names, n, write_sample, &c, &r, err, sizeof(err));
	if (ret)
		return cli_error("%s", err);
	p = pcap_open_dead(DLT_EN10MB, SIEVE_XDP_SAMPLE_BYTES);
	c.dumper = p ? pcap_dump_open(p, o->file) : NULL;
	if (!c.dumper) {
		ret = cli_error("%s: %s", o->file, p ? pcap_geterr(p) : "pcap_open_dead failed");
		goto out_close;
	}
	/* No SA_RESTART: a signal ends the wait in the ring's epoll. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = capture_loop(r, o);
	if (ret)
		ret = cli_error("reading the samples: %s", strerror(-ret));
	else
		fprintf(stderr, "%llu packets captured\n", (unsigned long long)c.packets);
	pcap_dump_close(c.dumper);
out_close:
	if (p)
		pcap_close(p);
	sxdp_sampler_close(r);
	return ret ? EXIT_ERROR : EXIT_OK;
}

int xdp_capture_run(const struct cli_command *cmd, int argc, char **argv)
{
	char names[64][IF_NAMESIZE];
	struct capture_opts o = { 0 };
	struct cli_args a;
	int ret = cli_parse(cmd, argc, argv, &o, &a), n;

	if (ret >= 0)
		return ret;
	if (!o.file)
		return cli_usage_error(cmd, "-w FILE is required (- for stdout)");
	if (geteuid())
		return cli_error("sieve xdp capture needs root (BPF maps)");
	if (o.iface) {
		snprintf(names[0], IF_NAMESIZE, "%s", o.iface);
		n = 1;
	} else {
		n = sxdp_list_ifaces(names, 64);
		if (n <= 0)
			return cli_error("the blocklist is attached to no interface");
	}
	return capture(&o, names, n);
}
