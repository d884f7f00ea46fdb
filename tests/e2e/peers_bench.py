#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# make bench-peers: sieve's control plane beside the netfilter tools an
# operator uses today, measured in one run, each command a fresh process
# started through nsenter(1) into a network namespace of the tool's own
# (made here, named with this process's id), timed with a monotonic clock
# around the process, so process start is in every figure:
#
#   ipset  hash:ip set:     `ipset restore` of N adds (bulk), `ipset add`, `ipset del`
#   nft    ipv4_addr set:   `nft -f` of a table with the set and N elements,
#                           `nft add element`, `nft delete element`
#   sieve  each backend:    `sieve xdp load` of a file of N addresses into the
#          and [store] sync list a veth of the namespace enforces (attach
#                           first, not timed), `sieve xdp block`, `sieve xdp
#                           unblock`; the store in a state dir on disk,
#                           synced at every change (full) or at checkpoints
#                           (normal, SIEVE_STORE_SYNC; sieve.conf(5))
#
# N random distinct IPv4 hosts (a fixed seed), none in 192.0.2.0/24, from
# which the single adds and deletes take a different address each call
# (median of BENCH_PEERS_CALLS); `--version` of sieve, ipset and nft (median
# of 20) for what starting each costs. The table gives sieve's time over the
# faster peer's beside each sieve figure: below 1.0, sieve is faster.
#
# Usage: peers_bench.py SIEVE OUT
#   writes OUT.txt (the report), OUT.tsv (the table) and OUT.json (every sample)
# Environment: BENCH_PEERS_SIZES (default "10000 100000 1000000 10000000"),
# BENCH_PEERS_BACKENDS (default "bloom-map blocked", and filter:NAME when
# /dev/sieve exists), BENCH_PEERS_SYNCS (default "full normal": each
# backend once per [store] sync), BENCH_PEERS_CALLS (5), BENCH_PEERS_SEED (21),
# BENCH_PEERS_TMPDIR (/var/tmp: on disk), BENCH_PEERS_TIMEOUT (seconds a
# bulk load may take, 900), BENCH_PEERS_OP_TIMEOUT (any other command, 300).
# Root. Every namespace, veth, set, table, pin and file goes at the end, also
# on failure or a signal. A command that fails or times out is reported in
# its cell and in the report, the rest still runs, and the exit status is 1.

import json
import os
import random
import resource
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

SIZES = [int(x) for x in os.environ.get(
    "BENCH_PEERS_SIZES", "10000 100000 1000000 10000000").split()]
CALLS = int(os.environ.get("BENCH_PEERS_CALLS", "5"))
VERSION_CALLS = 20
SEED = int(os.environ.get("BENCH_PEERS_SEED", "21"))
LOAD_TIMEOUT = float(os.environ.get("BENCH_PEERS_TIMEOUT", "900"))
OP_TIMEOUT = float(os.environ.get("BENCH_PEERS_OP_TIMEOUT", "300"))
CLEANUP_TIMEOUT = 120  # a detach, a destroy: not measured
TAG = os.getpid()
SET = "peers%d" % TAG  # the ipset set
TABLE = "peers%d" % TAG  # the nft table (family ip), its set "s"
TEST_NET = "192.0.2."  # the single adds and deletes

HAVE_DEV = os.path.exists("/dev/sieve")
BACKENDS = os.environ.get("BENCH_PEERS_BACKENDS", "bloom-map blocked").split()
if HAVE_DEV and not os.environ.get("BENCH_PEERS_BACKENDS"):
    BACKENDS.append("filter:peers%d" % TAG)
SYNCS = os.environ.get("BENCH_PEERS_SYNCS", "full normal").split()
# What runs: each backend with each sync, named "BACKEND/SYNC"; a filter
# backend's filter gets a name of its own per sync.
VARIANTS = ["%s/%s" % (b, y) for b in BACKENDS for y in SYNCS]


def backend_of(v):
    b, y = v.rsplit("/", 1)
    return b + ("" if y == SYNCS[0] or not b.startswith("filter:") else y[0])


def sync_of(v):
    return v.rsplit("/", 1)[1]


class Failed(Exception):
    pass


def die(msg):
    print("bench-peers: " + msg, file=sys.stderr)
    sys.exit(2)


# ---- the namespaces and everything in them ----

class Bench:
    def __init__(self, sieve, out):
        self.sieve = sieve
        self.out = out
        self.report = open(out + ".txt", "w")
        self.work = tempfile.mkdtemp(prefix="sieve-bench-peers.",
                                     dir=os.environ.get("BENCH_PEERS_TMPDIR", "/var/tmp"))
        self.namespaces = []
        self.pins = []  # /sys/fs/bpf/sieve/netns-INO of ours
        self.attached = {}  # backend -> state dir while attached
        self.results = {}  # (n, op, tool) -> median seconds or None
        self.samples = {}  # (n, op, tool) -> [seconds]
        self.errors = []
        self.rss = {}  # (n, tool) -> the load's peak RSS, bytes

    def say(self, line=""):
        print(line, flush=True)
        self.report.write(line + "\n")
        self.report.flush()

    def ns_name(self, tool):
        return "peers-%s-%d" % (tool.replace(":", "-").replace("/", "-"), TAG)

    def iface(self, i):
        return "pb%d%c" % (TAG, "abcdefgh"[i])

    def setup(self):
        for tool in ["ipset", "nft"] + ["sieve-" + v for v in VARIANTS]:
            ns = self.ns_name(tool)
            subprocess.run(["ip", "netns", "add", ns], check=True)
            self.namespaces.append(ns)
            subprocess.run(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
        for i, v in enumerate(VARIANTS):
            ns, a = self.ns_name("sieve-" + v), self.iface(i)
            z = a[:-1] + a[-1].upper()
            subprocess.run(["ip", "-n", ns, "link", "add", a, "type", "veth",
                            "peer", "name", z], check=True)
            subprocess.run(["ip", "-n", ns, "addr", "add", "198.18.%d.1/24" % i,
                            "dev", a], check=True)
            for d in (a, z):
                subprocess.run(["ip", "-n", ns, "link", "set", d, "up"], check=True)
            ino = os.stat("/run/netns/" + ns).st_ino
            self.pins.append("/sys/fs/bpf/sieve/netns-%d" % ino)

    def sieve_env(self, state, v):
        env = dict(os.environ)
        env["SIEVE_STATE_DIR"] = state
        env["SIEVE_STORE_SYNC"] = sync_of(v)
        return env

    def detach(self, i, v):
        state = self.attached.pop(v, None)
        if state is None:
            return
        b = backend_of(v)
        subprocess.run(["nsenter", "--net=/run/netns/" + self.ns_name("sieve-" + v),
                        self.sieve, "xdp", "detach", self.iface(i)],
                       env=self.sieve_env(state, v), stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=CLEANUP_TIMEOUT)
        if b.startswith("filter:"):
            subprocess.run([self.sieve, "filter", "destroy", b[7:]],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=CLEANUP_TIMEOUT)
        shutil.rmtree(state, ignore_errors=True)

    def cleanup(self):
        for i, v in enumerate(VARIANTS):
            try:
                self.detach(i, v)
            except Exception as e:
                print("bench-peers: detach %s: %s" % (v, e), file=sys.stderr)
        # What a detach cut short left; while the namespaces exist, so
        # that no other namespace has their inode numbers yet.
        for p in self.pins:
            shutil.rmtree(p, ignore_errors=True)
        # A namespace takes its sets, tables and veths with it.
        for ns in self.namespaces:
            subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL,
                           timeout=CLEANUP_TIMEOUT)
        self.namespaces = []
        shutil.rmtree(self.work, ignore_errors=True)

    # ---- timing ----

    # Seconds of one fresh process in the tool's namespace, nsenter and
    # process start included; Failed if it fails or outlives its timeout.
    def timed(self, tool, argv, timeout, env=None, stdin_path=None):
        ns = self.ns_name(tool)
        log = os.path.join(self.work, "last.out")
        cmd = ["nsenter", "--net=/run/netns/" + ns] + argv
        with open(log, "w") as out, \
             open(stdin_path or os.devnull) as inp:
            t0 = time.perf_counter()
            p = subprocess.Popen(cmd, stdin=inp, stdout=out, stderr=subprocess.STDOUT,
                                 env=env)
            # Woken by the exit itself: Popen.wait(timeout) polls with
            # sleeps that double from 0.5 ms, which would round every
            # time up to the next step.
            fd = os.pidfd_open(p.pid)
            try:
                poll = select.poll()
                poll.register(fd, select.POLLIN)
                done = poll.poll(timeout * 1000)
                t = time.perf_counter() - t0
                if not done:
                    p.kill()
                    p.wait()
                    raise Failed("%s: timed out after %g s" % (" ".join(argv[:4]),
                                                               timeout))
                # Reaped here for its rusage: nsenter execs the
                # tool, so ru_maxrss is the tool's peak, or this
                # process's RSS when higher (exec keeps the max of
                # the memory it replaces, here ours).
                _, status, usage = os.wait4(p.pid, 0)
                p.returncode = os.waitstatus_to_exitcode(status)
                self.last_rss = usage.ru_maxrss * 1024
            except BaseException:
                if p.poll() is None:  # a signal: the child goes too
                    p.kill()
                    p.wait()
                raise
            finally:
                os.close(fd)
        with open(log) as f:
            self.last_out = f.read().strip()
        if p.returncode != 0:
            raise Failed("%s: exit %d: %s" % (" ".join(argv[:4]), p.returncode,
                                              self.last_out[-300:]))
        return t

    def record(self, n, op, tool, times):
        self.samples[(n, op, tool)] = times
        self.results[(n, op, tool)] = statistics.median(times) if times else None

    # One tool at one size: bulk load, CALLS single adds, CALLS single
    # deletes (the addresses added), each recorded as it is measured.
    def measure(self, n, tool, load, add, delete):
        try:
            self.record(n, "load", tool, [self.timed(tool, *load)])
            self.load_out = self.last_out
            self.rss[(n, tool)] = self.last_rss
            # The load's writeback, out of the single ops' fsyncs.
            subprocess.run(["sync"], timeout=CLEANUP_TIMEOUT)
            for op, fn in (("add", add), ("delete", delete)):
                times = []
                for i in range(1, CALLS + 1):
                    times.append(self.timed(tool, *fn(TEST_NET + str(i))))
                self.record(n, op, tool, times)
        except Failed as e:
            msg = "%s at %d: %s" % (tool, n, e)
            self.errors.append(msg)
            self.say("  FAILED: " + msg)

    # ---- the tools ----

    def run_ipset(self, n, files):
        self.measure(n, "ipset",
                     (["ipset", "restore"], LOAD_TIMEOUT, None, files["ipset"]),
                     lambda a: (["ipset", "add", SET, a], OP_TIMEOUT),
                     lambda a: (["ipset", "del", SET, a], OP_TIMEOUT))
        subprocess.run(["nsenter", "--net=/run/netns/" + self.ns_name("ipset"),
                        "ipset", "destroy", SET], stderr=subprocess.DEVNULL,
                       timeout=CLEANUP_TIMEOUT)

    def run_nft(self, n, files):
        elem = lambda a: "{ %s }" % a
        self.measure(n, "nft",
                     (["nft", "-f", files["nft"]], LOAD_TIMEOUT),
                     lambda a: (["nft", "add", "element", "ip", TABLE, "s", elem(a)], OP_TIMEOUT),
                     lambda a: (["nft", "delete", "element", "ip", TABLE, "s", elem(a)],
                                OP_TIMEOUT))
        subprocess.run(["nsenter", "--net=/run/netns/" + self.ns_name("nft"),
                        "nft", "delete", "table", "ip", TABLE], stderr=subprocess.DEVNULL,
                       timeout=CLEANUP_TIMEOUT)

    def run_sieve(self, n, i, v, files):
        tool, ifc, b = "sieve-" + v, self.iface(i), backend_of(v)
        state = os.path.join(self.work, "state-%d" % i)
        env = self.sieve_env(state, v)
        self.attached[v] = state
        try:
            self.timed(tool, [self.sieve, "xdp", "attach", ifc, "--backend", b],
                       OP_TIMEOUT, env)
        except Failed as e:
            msg = "%s at %d: attach: %s" % (tool, n, e)
            self.errors.append(msg)
            self.say("  FAILED: " + msg)
            self.record(n, "load", tool, [])
            self.detach(i, v)
            return
        self.measure(n, tool,
                     ([self.sieve, "xdp", "load", "-i", ifc, "--origin", "feed",
                       files["list"]], LOAD_TIMEOUT, env),
                     lambda a: ([self.sieve, "xdp", "block", "-i", ifc, a], OP_TIMEOUT, env),
                     lambda a: ([self.sieve, "xdp", "unblock", "-i", ifc, a], OP_TIMEOUT, env))
        if (n, "load", tool) in self.samples:
            self.say("  %s load: %s" % (v, self.load_out.replace("\n", "; ")))
        self.detach(i, v)

    def versions(self):
        try:
            true = [self.timed("ipset", ["true"], OP_TIMEOUT) for _ in range(VERSION_CALLS)]
            self.say("  the floor, nsenter and /bin/true: median %.2f ms" %
                     (statistics.median(true) * 1000))
        except Failed as e:
            self.errors.append(str(e))
            self.say("  FAILED: " + str(e))
        for tool, argv in (("ipset", ["ipset", "--version"]), ("nft", ["nft", "--version"]),
                           ("sieve-" + VARIANTS[0], [self.sieve, "--version"])):
            try:
                times = [self.timed(tool, argv, OP_TIMEOUT) for _ in range(VERSION_CALLS)]
            except Failed as e:
                self.errors.append(str(e))
                self.say("  FAILED: " + str(e))
                times = []
            if tool.startswith("sieve-"):
                for v in VARIANTS:
                    self.record(0, "--version", "sieve-" + v, times)
            else:
                self.record(0, "--version", tool, times)

    # ---- the lists: the same N addresses in each tool's format ----

    # The files are written by a child: the 10^7 addresses take GBs
    # that this process would keep (and pass on as the floor of every
    # ru_maxrss) once freed.
    def gen(self, n):
        files = {k: os.path.join(self.work, "%s-%d" % (k, n)) for k in ("list", "ipset", "nft")}
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                write_lists(n, files)
                code = 0
            except BaseException as e:
                print("bench-peers: writing the lists: %s" % e, file=sys.stderr)
            finally:
                os._exit(code)  # never this process's cleanup
        try:
            status = os.waitpid(pid, 0)[1]
        except BaseException:  # a signal: the child goes too
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise
        if os.waitstatus_to_exitcode(status) != 0:
            raise Failed("writing the lists of %d addresses" % n)
        return files

    # ---- the table ----

    def cell(self, n, op, tool):
        v = self.results.get((n, op, tool))
        if v is None:
            return "FAIL" if (n, op, tool) in self.results or self.ran(n, tool) else "-"
        return "%.3f s" % v if op == "load" else "%.1f ms" % (v * 1000)

    def ran(self, n, tool):
        return any(k[0] == n and k[2] == tool for k in self.results)

    def ratio(self, n, op, v):
        s = self.results.get((n, op, "sieve-" + v))
        peers = [self.results.get((n, op, t)) for t in ("ipset", "nft")]
        peers = [p for p in peers if p]
        return s / min(peers) if s and peers else None

    def rows(self):
        for n in [0] + SIZES:
            for op in (("--version",) if n == 0 else ("load", "add", "delete")):
                yield n, op

    def table(self):
        head = "| N | operation (ipset / nft / sieve) | ipset | nft |"
        rule = "|---|---|---|---|"
        for v in VARIANTS:
            head += " sieve %s | ratio |" % v
            rule += "---|---|"
        self.say(head)
        self.say(rule)
        for n, op in self.rows():
            name = {"load": "restore / -f / load", "add": "add / add element / block",
                    "delete": "del / delete element / unblock",
                    "--version": "--version"}[op]
            line = "| %s | %s | %s | %s |" % ("%d" % n if n else "-", name,
                                              self.cell(n, op, "ipset"), self.cell(n, op, "nft"))
            for v in VARIANTS:
                r = self.ratio(n, op, v)
                line += " %s | %s |" % (self.cell(n, op, "sieve-" + v),
                                        "%.2f" % r if r is not None else "-")
            self.say(line)
        with open(self.out + ".tsv", "w") as f:
            cols = ["n", "operation", "ipset_s", "nft_s"]
            for v in VARIANTS:
                cols += ["sieve_%s_s" % v, "ratio_%s" % v]
            f.write("\t".join(cols) + "\n")
            for n, op in self.rows():
                val = lambda t: self.results.get((n, op, t))
                fmt = lambda v: "%.6f" % v if v is not None else "NA"
                row = [str(n) if n else "-", op,
                       fmt(val("ipset")), fmt(val("nft"))]
                for v in VARIANTS:
                    row += [fmt(val("sieve-" + v)), fmt(self.ratio(n, op, v))]
                f.write("\t".join(row) + "\n")
        with open(self.out + ".json", "w") as f:
            json.dump({"meta": self.meta, "errors": self.errors,
                       "load_peak_rss_bytes": [{"n": n, "tool": t, "bytes": v}
                                               for (n, t), v in sorted(self.rss.items())],
                       "samples": [{"n": n, "operation": op, "tool": t, "seconds": s,
                                    "median": self.results.get((n, op, t))}
                                   for (n, op, t), s in sorted(self.samples.items())]},
                      f, indent=1)

    def main(self):
        self.setup()
        ver = subprocess.run([self.sieve, "--version"], capture_output=True,
                             text=True).stdout.strip()
        top = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
        commit = subprocess.run(["git", "-C", top, "describe", "--always", "--dirty"],
                                capture_output=True, text=True).stdout.strip() or "?"
        self.meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "commit": commit,
                     "sieve": ver, "kernel": os.uname().release, "nproc": os.cpu_count(),
                     "sizes": SIZES, "calls": CALLS, "seed": SEED, "backends": BACKENDS, "syncs": SYNCS,
                     "ipset": subprocess.run(["ipset", "--version"], capture_output=True,
                                             text=True).stdout.strip(),
                     "nft": subprocess.run(["nft", "--version"], capture_output=True,
                                           text=True).stdout.strip()}
        self.say("sieve bench-peers, %s, commit %s, %s" % (self.meta["date"], commit, ver))
        load = " ".join(open("/proc/loadavg").read().split()[:3])
        self.say("machine: nproc %d, kernel %s, load average %s" % (
            os.cpu_count(), os.uname().release, load))
        self.say("peers: %s; %s" % (self.meta["ipset"], self.meta["nft"]))
        self.say("each command a fresh process: nsenter --net=/run/netns/peers-TOOL-%d CMD, "
                 "timed around it (time.perf_counter)" % TAG)
        fs = subprocess.run(["stat", "-f", "-c", "%T", self.work], capture_output=True,
                            text=True).stdout.strip()
        self.say("files and state dirs in %s (%s)" % (self.work, fs))
        self.say("lists: N random distinct IPv4 hosts (seed %d), none in %s0/24; add/block and "
                 "delete/unblock: %s1-%d, median of %d; --version: median of %d" % (
                     SEED, TEST_NET, TEST_NET, CALLS, CALLS, VERSION_CALLS))
        self.say("ipset: create %s hash:ip family inet maxelem max(65536, 2N) (default hashsize) "
                 "+ N adds through `ipset restore`; nft: `nft -f` of table ip %s { set s { type "
                 "ipv4_addr; elements = { N } } }" % (SET, TABLE))
        self.say("sieve: attach --backend B on a veth in its namespace (not timed), `sieve xdp "
                 "load -i IF --origin feed FILE` into the empty list, block/unblock -i IF; "
                 "columns B/SYNC: SIEVE_STORE_SYNC=SYNC ([store] sync: full syncs the store's "
                 "log at every change, normal at checkpoints)")
        if not HAVE_DEV:
            self.say("no /dev/sieve on this host (sieve.ko not loaded): the filter:NAME backend "
                     "is not measured")
        self.say()
        self.say("--version, %d calls each" % VERSION_CALLS)
        self.versions()
        self.say("  a load's peak RSS below: the process's ru_maxrss, never below this runner's "
                 "RSS (%.0f MB), which the child had before its exec" %
                 (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3))
        for n in SIZES:
            self.say()
            self.say("== N = %d" % n)
            t0 = time.perf_counter()
            try:
                files = self.gen(n)
            except Failed as e:
                self.errors.append(str(e))
                self.say("  FAILED: " + str(e))
                continue
            self.say("  lists written in %.1f s" % (time.perf_counter() - t0))
            self.run_ipset(n, files)
            self.run_nft(n, files)
            for i, v in enumerate(VARIANTS):
                self.run_sieve(n, i, v, files)
            for tool in ["ipset", "nft"] + ["sieve-" + v for v in VARIANTS]:
                cells = "  ".join("%s %s" % (op, self.cell(n, op, tool))
                                  for op in ("load", "add", "delete"))
                rss = self.rss.get((n, tool))
                self.say("  %-16s %s%s" % (tool, cells, "  (load's peak RSS %.0f MB)" % (rss / 1e6)
                                           if rss is not None else ""))
            for f in files.values():
                os.unlink(f)
        self.say()
        self.say("sieve's time / the faster peer's (ipset or nft) in the ratio columns: "
                 "below 1.0, sieve is faster")
        self.table()
        for e in self.errors:
            self.say("FAILED: " + e)
        self.say("written: %s.txt, %s.tsv, %s.json" % (self.out, self.out, self.out))
        return 1 if self.errors else 0


# N random distinct hosts (a seed of their own per N) in 1.0.0.0 to
# 223.255.255.255, without 127/8 and the single ops' 192.0.2.0/24, in each
# tool's format.
def write_lists(n, files):
    rng = random.Random(SEED * 1000003 + n)
    draw = rng.sample(range(1 << 24, 224 << 24), n + n // 64 + 64)
    keep = [a for a in draw if a >> 24 != 127 and a >> 8 != 0xc00002][:n]
    if len(keep) < n:
        raise Failed("drew too few addresses")
    addrs = ["%d.%d.%d.%d" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255)
             for a in keep]
    del draw, keep
    with open(files["list"], "w") as f:
        f.write("# sieve bench-peers: %d random IPv4 hosts, seed %d\n" % (n, SEED))
        f.writelines(a + "\n" for a in addrs)
    with open(files["ipset"], "w") as f:
        f.write("create %s hash:ip family inet maxelem %d\n" % (SET, max(65536, 2 * n)))
        f.writelines("add %s %s\n" % (SET, a) for a in addrs)
    with open(files["nft"], "w") as f:
        f.write("table ip %s {\n\tset s {\n\t\ttype ipv4_addr\n\t\telements = {\n" % TABLE)
        f.writelines("\t\t\t%s,\n" % a for a in addrs)
        f.write("\t\t}\n\t}\n}\n")


def on_signal(sig, frame):
    raise SystemExit(128 + sig)


def main():
    if len(sys.argv) != 3:
        die("usage: peers_bench.py SIEVE OUT")
    if os.getuid() != 0:
        die("needs root (network namespaces, XDP)")
    for t in ("ipset", "nft", "nsenter", "ip"):
        if not shutil.which(t):
            die("needs %s (make deps installs ipset, nftables, util-linux, iproute2)" % t)
    sieve = os.path.realpath(sys.argv[1])
    if not os.access(sieve, os.X_OK):
        die("no sieve at " + sieve)
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    bench = Bench(sieve, sys.argv[2])
    try:
        status = bench.main()
    except subprocess.CalledProcessError as e:
        print("bench-peers: setting up: %s" % e, file=sys.stderr)
        status = 2
    finally:
        bench.cleanup()
    sys.exit(status)


if __name__ == "__main__":
    main()
