// SPDX-License-Identifier: GPL-2.0
/*
 * `sieve agent`: the main loop. One thread polls a signalfd (SIGHUP
 * reloads, SIGTERM and SIGINT stop), a timerfd for expiry, a timerfd for
 * the filters' snapshots and the rtnetlink socket; the store is opened
 * once. Start: settings, store, restore (restore.c), then READY=1 for
 * systemd (Type=notify). Nothing here is needed for enforcement: the
 * pinned programs and maps keep dropping when the agent stops or dies, and
 * the CLI works without it.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <systemd/sd-daemon.h>

#include "agent.h"
#include "agent_command.h"
#include "cli.h"
#include "escape.h"
#include "ops.h"

int64_t sagent_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Whether stderr is the journal (systemd says so in JOURNAL_STREAM=DEV:INODE). */
static bool stderr_is_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return e && sscanf(e, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
	       st.st_dev == dev && st.st_ino == ino;
}

void sagent_log(int level, const char *fmt, ...)
{
	static int journal = -1;
	const char *word = level <= SAGENT_ERR ? "error" :
			   level == SAGENT_WARNING ? "warning" : "info";
	char line[1024];
	va_list ap;

	if (journal < 0)
		journal = stderr_is_journal();
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/*
	 * The journal reads the <N> prefix as the priority; a terminal gets
	 * words. The message is escaped here, at the sink, whatever it holds
	 * (Redis members, feed lines, error strings): it stays one line at its
	 * own priority. One locked write, so threads' lines never interleave.
	 */
	flockfile(stderr);
	if (journal)
		fprintf(stderr, "<%d>%s: ", level, word);
	else
		fprintf(stderr, "sieve agent: %s: ", word);
	sieve_escape(stderr, line, strlen(line), SIEVE_ESC_LOG);
	fputc('\n', stderr);
	funlockfile(stderr);
}

/* ---- settings ---- */

/*
 * The settings in force: the command line, the environment, the file,
 * the defaults, in the order sieve's commands use too (settings.c).
 * -errno with the reason in @err.
 */
static int load_config(const struct agent_opts *o, struct sconf_config *c, char *err,
		       size_t errlen)
{
	return sconf_settings_resolve(&o->cl, SCONF_NEED_ALL, c, err, errlen);
}

/* ---- timers ---- */

static int timer_open(void)
{
	return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

/* Every @ms from now; 0 disarms. */
static void timer_every(int fd, uint64_t ms)
{
	struct itimerspec it = { 0 };

	it.it_value.tv_sec = ms / 1000;
	it.it_value.tv_nsec = ms % 1000 * 1000000;
	it.it_interval = it.it_value;
	timerfd_settime(fd, 0, &it, NULL);
}

static void timer_ack(int fd)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		sagent_log(SAGENT_WARNING, "reading a timer: %s", strerror(errno));
}

/* ---- expiry ---- */

/* One list: what was due goes, from each interface's live maps (or one rebuild). */
static int expire_list(struct sagent *ag, const char *list, char *err, size_t errlen)
{
	struct sxdp_op_result r;
	int64_t t0 = sagent_now_ns();
	int ret;

	ret = sxdp_op_expire(ag->store, list, time(NULL), &r, err, errlen);
	if (ret)
		return ret;
	if (!r.changed)
		return 0;
	atomic_fetch_add(&ag->stats.expired, r.changed);
	if (r.rebuilt) {
		atomic_fetch_add(&ag->stats.rebuilds, r.rebuilt);
		atomic_fetch_add(&ag->stats.rebuild_ns, sagent_now_ns() - t0);
	}
	sagent_log(SAGENT_INFO, "list %s: %zu entries expired; %zu interfaces in step, %zu rebuilt, "
		   "in %" PRId64 " ms", list, r.changed, r.ifaces, r.rebuilt,
		   (sagent_now_ns() - t0) / 1000000);
	return 0;
}

/*
 * Every list in the store (cheap when nothing is due: one indexed query
 * each, no lock). A failure is logged when it first happens, not at every
 * run after it, and its end is logged too.
 */
static void run_expiry(struct sagent *ag)
{
	static char last[512];
	char **lists = NULL, err[512] = "";
	size_t n = 0, i;
	int ret;

	atomic_fetch_add(&ag->stats.expire_runs, 1);
	ret = sxdp_store_lists(ag->store, &lists, &n, err, sizeof(err));
	for (i = 0; !ret && i < n; i++) {
		ret = expire_list(ag, lists[i], err, sizeof(err));
		if (ret && !err[0])
			snprintf(err, sizeof(err), "list %s: %s", lists[i], strerror(-ret));
	}
	sxdp_store_names_free(lists, n);
	if (ret) {
		if (!err[0])
			snprintf(err, sizeof(err), "%s", strerror(-ret));
		atomic_fetch_add(&ag->stats.errors, 1);
		if (strcmp(err, last))
			sagent_log(SAGENT_ERR, "expiry: %s", err);
		snprintf(last, sizeof(last), "%s", err);
	} else if (last[0]) {
		sagent_log(SAGENT_INFO, "expiry works again");
		last[0] = '\0';
	}
}

/* ---- the filters and the metrics: the calls into filters.c and metrics.c ---- */

static void filters_restore(struct sagent *ag)
{
	if (ag->cfg.nr_persistent)
		sagent_filters_restore(&ag->cfg, &ag->stats);
}

static void filters_save(struct sagent *ag)
{
	if (ag->cfg.nr_persistent)
		sagent_filters_save(&ag->cfg, &ag->stats);
}

static int metrics_start(struct sagent *ag, const struct sconf_config *c)
{
	char err[512] = "";
	int ret;

	if (!c->metrics_on)
		return 0;
	ret = sagent_metrics_start(c, &ag->stats, &ag->metrics, err, sizeof(err));
	if (ret)
		sagent_log(SAGENT_ERR, "metrics on %s port %u: %s", c->metrics_addr,
			   c->metrics_port, err[0] ? err : strerror(-ret));
	return ret;
}

static void metrics_stop(struct sagent *ag)
{
	if (ag->metrics)
		sagent_metrics_stop(ag->metrics);
	ag->metrics = NULL;
}

/* ---- the fleet: fleet.c's thread ---- */

static void fleet_start(struct sagent *ag)
{
	char err[512] = "";

	if (sagent_fleet_start(ag, &ag->fleet, err, sizeof(err))) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "fleet: %s", err);
	}
}

static void fleet_stop(struct sagent *ag)
{
	sagent_fleet_stop(ag->fleet);
	ag->fleet = NULL;
}

/* The lists followed are the first start's (the metrics read them unlocked). */
static void fleet_reload(struct sagent *ag, struct sconf_config *next)
{
	struct sconf_fleet_config *a = &ag->cfg.fleet, *b = &next->fleet;

	if (ag->stats.fleet.on && (a->nr_lists != b->nr_lists ||
				   memcmp(a->lists, b->lists, sizeof(a->lists)))) {
		sagent_log(SAGENT_WARNING, "fleet: the lists followed change at the next start");
		b->nr_lists = a->nr_lists;
		memcpy(b->lists, a->lists, sizeof(b->lists));
	}
	if (!memcmp(a, b, sizeof(*a)))
		return;
	fleet_stop(ag);
	ag->cfg.fleet = *b;
	fleet_start(ag);
}

/* ---- the feeds: feeds.c's thread ---- */

static void feeds_start(struct sagent *ag)
{
	char err[512] = "";

	/*
	 * No thread, and no second store connection, while sieve.conf names
	 * no feed. With one open, a metrics scrape after a re-attach from the
	 * store read "disk I/O error" (e2e agent_enforcement_check), not yet
	 * understood. A reload that adds the first feed starts it.
	 */
	if (ag->feeds || !ag->cfg.nr_feeds)
		return;

	if (sagent_feeds_start(ag, &ag->feeds, err, sizeof(err))) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "feeds: %s", err);
	}
}

static void feeds_stop(struct sagent *ag)
{
	sagent_feeds_stop(ag->feeds);
	ag->feeds = NULL;
}

/* ---- CrowdSec: crowdsec.c's thread ---- */

static void crowdsec_start(struct sagent *ag)
{
	char err[512] = "";

	if (sagent_crowdsec_start(ag, &ag->crowdsec, err, sizeof(err))) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "crowdsec: %s", err);
	}
}

static void crowdsec_stop(struct sagent *ag)
{
	sagent_crowdsec_stop(ag->crowdsec);
	ag->crowdsec = NULL;
}

/* A changed [crowdsec] starts the follower again: a resync under the new settings. */
static void crowdsec_reload(struct sagent *ag, struct sconf_config *next)
{
	if (!memcmp(&ag->cfg.crowdsec, &next->crowdsec, sizeof(next->crowdsec)))
		return;
	crowdsec_stop(ag);
	ag->cfg.crowdsec = next->crowdsec;
	crowdsec_start(ag);
}

/* ---- the loop ---- */

struct loop {
	int sig_fd, expire_fd, save_fd, nl_fd;
	const struct agent_opts *o;
};

static void arm_timers(struct sagent *ag, struct loop *L)
{
	timer_every(L->expire_fd, ag->cfg.expire_interval_ms);
	timer_every(L->save_fd, (uint64_t)ag->cfg.save_interval_s * 1000);
}

static bool same_metrics(const struct sconf_config *a, const struct sconf_config *b)
{
	return a->metrics_on == b->metrics_on && a->metrics_port == b->metrics_port &&
	       a->metrics_refresh_ms == b->metrics_refresh_ms &&
	       !strcmp(a->metrics_addr, b->metrics_addr);
}

/*
 * SIGHUP: the file again. A bad one leaves everything as it ran. Then a
 * restore pass: attachments recorded meanwhile, pins removed by hand.
 */
static void reload(struct sagent *ag, struct loop *L)
{
	struct sagent_restore_result r;
	struct sconf_config next;
	char err[512] = "";

	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, (uint64_t)sagent_now_ns() / 1000);
	if (load_config(L->o, &next, err, sizeof(err))) {
		atomic_fetch_add(&ag->stats.errors, 1);
		sagent_log(SAGENT_ERR, "%s; keeping the running settings", err);
		sd_notify(0, "READY=1");
		return;
	}
	if (strcmp(next.state_dir, ag->cfg.state_dir)) {
		sagent_log(SAGENT_WARNING, "state_dir %s: the agent keeps %s until it restarts",
			   next.state_dir, ag->cfg.state_dir);
		snprintf(next.state_dir, sizeof(next.state_dir), "%s", ag->cfg.state_dir);
	}
	/* The store's connections (the loop's, the fleet thread's) were opened with it. */
	if (next.store_sync != ag->cfg.store_sync) {
		sagent_log(SAGENT_WARNING, "[store] sync %s: the agent keeps %s until it restarts",
			   next.origin[SCONF_STORE_SYNC].text[0] ?
			   next.origin[SCONF_STORE_SYNC].text : "full",
			   ag->cfg.store_sync == SXDP_STORE_SYNC_FULL ? "full" : "normal");
		next.store_sync = ag->cfg.store_sync;
	}
	if (!same_metrics(&next, &ag->cfg)) {
		metrics_stop(ag);
		metrics_start(ag, &next);
	}
	fleet_reload(ag, &next);
	sagent_feeds_reload(ag->feeds, &next);
	crowdsec_reload(ag, &next);
	ag->cfg = next;
	feeds_start(ag);
	arm_timers(ag, L);
	sagent_restore_all(ag, false, &r);
	sagent_attach_declared(ag, NULL);
	sagent_log(SAGENT_INFO, "reloaded %s", next.file.path);
	sd_notify(0, "READY=1");
}

/* 1: stop; 0: go on. */
static int on_signal(struct sagent *ag, struct loop *L)
{
	struct signalfd_siginfo si;

	while (read(L->sig_fd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGHUP) {
			sagent_log(SAGENT_INFO, "%s: stopping", strsignal(si.ssi_signo));
			return 1;
		}
		reload(ag, L);
	}
	return 0;
}

static int run_loop(struct sagent *ag, struct loop *L)
{
	struct pollfd p[] = {
		{ .fd = L->sig_fd, .events = POLLIN }, { .fd = L->expire_fd, .events = POLLIN },
		{ .fd = L->save_fd, .events = POLLIN }, { .fd = L->nl_fd, .events = POLLIN },
	};

	for (;;) {
		if (poll(p, sizeof(p) / sizeof(p[0]), -1) < 0) {
			if (errno == EINTR)
				continue;
			sagent_log(SAGENT_ERR, "poll: %s", strerror(errno));
			return -errno;
		}
		if (p[0].revents && on_signal(ag, L))
			return 0;
		if (p[3].revents)
			sagent_netlink_read(ag, L->nl_fd);
		if (p[1].revents) {
			timer_ack(L->expire_fd);
			run_expiry(ag);
			sagent_check_all(ag);
			sagent_attach_declared(ag, NULL);
		}
		if (p[2].revents) {
			timer_ack(L->save_fd);
			filters_save(ag);
		}
	}
}

/* ---- start and stop ---- */

/* Signals go to the signalfd only, in every thread started after this. */
static int signals_open(char *err, size_t errlen)
{
	sigset_t set;
	int fd;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);
	/*
	 * A write to a socket the peer (or the fleet's stop, by shutdown())
	 * closed is an EPIPE to handle, not a death: hiredis writes with
	 * write(), without MSG_NOSIGNAL.
	 */
	signal(SIGPIPE, SIG_IGN);
	fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (fd < 0)
		snprintf(err, errlen, "signalfd: %s", strerror(errno));
	return fd < 0 ? -errno : fd;
}

/* The fds of the loop; netlink before the restore, so no event in between is missed. */
static int loop_open(struct loop *L, char *err, size_t errlen)
{
	L->sig_fd = signals_open(err, errlen);
	if (L->sig_fd < 0)
		return L->sig_fd;
	L->nl_fd = sagent_netlink_open(err, errlen);
	if (L->nl_fd < 0)
		return L->nl_fd;
	L->expire_fd = timer_open();
	L->save_fd = timer_open();
	if (L->expire_fd < 0 || L->save_fd < 0) {
		snprintf(err, errlen, "timerfd: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static void loop_close(struct loop *L)
{
	int fds[] = { L->sig_fd, L->nl_fd, L->expire_fd, L->save_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* Enforcement back, then READY=1: what systemd's Type=notify waits for. */
static void restore_at_start(struct sagent *ag)
{
	struct sagent_restore_result r;

	sagent_prune(ag);
	sagent_restore_all(ag, true, &r);
	sagent_attach_declared(ag, NULL);
	filters_restore(ag);
	sagent_log(SAGENT_INFO, "enforcing: %u adopted, %u attached from the store, %u waited "
		   "for, %u failed; %" PRId64 " ms after start", r.adopted, r.reattached,
		   r.waiting, r.failed, (sagent_now_ns() - ag->start_ns) / 1000000);
	sd_notify(0, "READY=1");
}

static int run(struct sagent *ag, const struct agent_opts *o)
{
	struct loop L = { .sig_fd = -1, .expire_fd = -1, .save_fd = -1, .nl_fd = -1, .o = o };
	char err[512] = "";
	int ret;

	ret = loop_open(&L, err, sizeof(err));
	if (!ret)
		ret = sxdp_store_open_sync(ag->cfg.state_dir, ag->cfg.store_sync, &ag->store, err,
					   sizeof(err));
	if (!ret)
		ret = metrics_start(ag, &ag->cfg);
	if (ret) {
		if (err[0])
			sagent_log(SAGENT_ERR, "%s", err);
		goto out;
	}
	sagent_log(SAGENT_INFO, "starting: store %s, expiry every %u ms",
		   sxdp_store_path(ag->store), ag->cfg.expire_interval_ms);
	restore_at_start(ag);
	/* After READY=1: enforcement never waits for Redis, a feed's server or the LAPI. */
	fleet_start(ag);
	feeds_start(ag);
	crowdsec_start(ag);
	arm_timers(ag, &L);
	ret = run_loop(ag, &L);
	sd_notify(0, "STOPPING=1");
	crowdsec_stop(ag);
	feeds_stop(ag);
	fleet_stop(ag);
	filters_save(ag);
	sagent_log(SAGENT_INFO, "stopped; the XDP programs keep enforcing");
out:
	metrics_stop(ag);
	sxdp_store_close(ag->store);
	loop_close(&L);
	return ret;
}

/* ---- the command (its table: userspace/cli/agent_command.c) ---- */

static int sagent_main(int argc, char **argv)
{
	static struct sagent ag;	/* stats are read by the metrics thread: not on a stack */
	struct agent_opts o = { 0 };
	struct cli_args a;
	char err[512] = "";
	int ret = cli_parse(&agent_command, argc, argv, &o, &a);

	if (ret >= 0)
		return ret;
	ag.start_ns = sagent_now_ns();
	ag.stats.started_at = time(NULL);
	pthread_mutex_init(&ag.stats.feeds.lock, NULL);
	if (load_config(&o, &ag.cfg, err, sizeof(err))) {
		sagent_log(SAGENT_ERR, "%s", err);
		return EXIT_ERROR;
	}
	if (o.check) {
		sconf_settings_print(stdout, &ag.cfg);
		return EXIT_OK;
	}
	if (geteuid()) {
		sagent_log(SAGENT_ERR, "the agent needs root (BPF maps and programs)");
		return EXIT_ERROR;
	}
	return run(&ag, &o) ? EXIT_ERROR : EXIT_OK;
}

/* sieve-agent's agent_command runs the agent (agent_command.h). */
int sagent_run(const struct cli_command *cmd, int argc, char **argv)
{
	return sagent_main(argc, argv);
}
