// SPDX-License-Identifier: GPL-2.0
/*
 * The agent's metrics without the agent, for tests and timing.
 *
 *   metrics-driver serve STATE_DIR ADDR PORT SECONDS
 *	sagent_metrics_start() on ADDR:PORT (0: a free port), prints
 *	"port N" once it listens, serves until SIGTERM or SIGINT, or for
 *	SECONDS at most, then stops the server.
 *   metrics-driver render STATE_DIR [ROUNDS]
 *	sagent_metrics_render() ROUNDS times (1 by default); each round's
 *	time on stderr, the last exposition on stdout.
 *
 * The agent's own counters are all zero here. Exit 0, or 2 with a message.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "metrics.h"

static int usage(void)
{
	fprintf(stderr, "usage: metrics-driver serve STATE_DIR ADDR PORT SECONDS\n"
		"       metrics-driver render STATE_DIR [ROUNDS]\n");
	return 2;
}

static void config(struct sconf_config *c, const char *state_dir)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", state_dir);
	c->metrics_on = true;
	snprintf(c->metrics_addr, sizeof(c->metrics_addr), "127.0.0.1");
	c->metrics_port = 9477;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int serve(const struct sconf_config *c, const struct sagent_stats *st, long seconds)
{
	struct timespec limit = { .tv_sec = seconds };
	struct sagent_metrics *m;
	char err[512];
	sigset_t set;
	int ret, sig;

	/* Blocked before the server's thread starts, so only sigtimedwait takes them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	ret = sagent_metrics_start(c, st, &m, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "metrics-driver: %s\n", err);
		return 2;
	}
	printf("port %u\n", sagent_metrics_port(m));
	fflush(stdout);
	sig = sigtimedwait(&set, NULL, &limit);
	sagent_metrics_stop(m);
	if (sig < 0 && errno == EAGAIN)
		fprintf(stderr, "metrics-driver: stopped after %ld s\n", seconds);
	return 0;
}

static int render(const struct sconf_config *c, const struct sagent_stats *st, long rounds)
{
	char *text = NULL;
	size_t len = 0;
	double t0;
	long i;
	int ret;

	for (i = 0; i < rounds; i++) {
		free(text);
		t0 = now_s();
		ret = sagent_metrics_render(c, st, &text, &len);
		if (ret) {
			fprintf(stderr, "metrics-driver: render: %s\n", strerror(-ret));
			return 2;
		}
		fprintf(stderr, "scrape %ld: %.3f ms, %zu bytes\n", i + 1, (now_s() - t0) * 1e3, len);
	}
	fwrite(text, 1, len, stdout);
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	static struct sagent_stats st;
	struct sconf_config c;
	char *end;
	long n;

	if (argc < 3)
		return usage();
	config(&c, argv[2]);
	if (!strcmp(argv[1], "serve") && argc == 6) {
		snprintf(c.metrics_addr, sizeof(c.metrics_addr), "%s", argv[3]);
		n = strtol(argv[4], &end, 10);
		if (*end || n < 0 || n > 65535)
			return usage();
		c.metrics_port = n;
		n = strtol(argv[5], &end, 10);
		if (*end || n <= 0)
			return usage();
		return serve(&c, &st, n);
	}
	if (!strcmp(argv[1], "render") && argc <= 4) {
		n = argc == 4 ? strtol(argv[3], &end, 10) : 1;
		if ((argc == 4 && *end) || n <= 0)
			return usage();
		return render(&c, &st, n);
	}
	return usage();
}
