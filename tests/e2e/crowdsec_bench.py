#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# make bench-crowdsec (issue 25): sieve's agent and Debian's
# crowdsec-firewall-bouncer (ipset and nftables modes) following the same
# CrowdSec Local API in one run. The LAPI runs offline (its SQLite in the
# run's folder, no Central API), bound to 127.0.0.1 in a network namespace
# made here; each follower runs in it too, one after the other, with the
# same update_frequency (BENCH_CROWDSEC_POLL, default 1s):
#
#   start-up sync  N decisions imported (`cscli decisions import`) before
#                  the follower starts; the time from its start until its
#                  set (ipset list -t / nft list set) or sieve's list holds
#                  all N, its peak RSS (VmHWM) and CPU time (utime+stime)
#                  at that point;
#   add            `cscli decisions add -i IP` -> the IP in the set
#                  (`ipset test`, `nft get element`; for sieve, real
#                  packets: a ping from IP, in a client namespace, across
#                  the veth whose XDP enforces the list, gets no reply),
#                  median and p99 of BENCH_CROWDSEC_CALLS (20);
#   delete         `cscli decisions delete -i IP` -> gone from it (for sieve:
#                  the ping is answered again).
#
# The clock starts before cscli starts (cscli's own time, about 0.1-0.3 s,
# is in every add and delete figure, as an operator sees it) and each probe
# is a fresh process every BENCH_CROWDSEC_PROBE_MS (20 ms).
#
# Usage: crowdsec_bench.py SIEVE OUT   (writes OUT.txt and OUT.json)
# Environment: BENCH_CROWDSEC_N (10000; the size is 100000: the
# bouncer's nftables mode then takes about 10 minutes),
# BENCH_CROWDSEC_MODES ("sieve ipset nftables": leave one out to skip it),
# BENCH_CROWDSEC_POLL, BENCH_CROWDSEC_CALLS, BENCH_CROWDSEC_TIMEOUT (seconds
# a start-up sync may take, 1200). Root. The namespace, processes, sets,
# tables, pins and files go at the end, also on failure or a signal.

import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

SIEVE = os.path.realpath(sys.argv[1])
OUT = sys.argv[2]
N = int(os.environ.get("BENCH_CROWDSEC_N", "10000"))
MODES = os.environ.get("BENCH_CROWDSEC_MODES", "sieve ipset nftables").split()
POLL = os.environ.get("BENCH_CROWDSEC_POLL", "1s")
CALLS = int(os.environ.get("BENCH_CROWDSEC_CALLS", "20"))
TIMEOUT = float(os.environ.get("BENCH_CROWDSEC_TIMEOUT", "1200"))
PROBE = int(os.environ.get("BENCH_CROWDSEC_PROBE_MS", "20")) / 1000
NS = "sieve-csb-%d" % os.getpid()
PORT = 18090
KEYS = {"sieve": "a" * 32, "ipset": "b" * 32, "nftables": "c" * 32}
SET = "crowdsec-blacklists"
LIST = "crowdsec"
WORK = tempfile.mkdtemp(prefix="sieve-csbench.")
CFG = os.path.join(WORK, "config.yaml")
procs = []
errors = []


def ns(*cmd, **kw):
    return subprocess.run(["nsenter", "--net=/run/netns/" + NS, *cmd],
                          capture_output=True, text=True, **kw)


def cscli(*args, timeout=600):
    # Inside the namespace: the LAPI listens on its loopback.
    r = subprocess.run(["nsenter", "--net=/run/netns/" + NS, "cscli", "-c", CFG, "--error",
                        *args], capture_output=True, text=True, timeout=timeout)
    if r.returncode:
        raise RuntimeError("cscli %s: %s" % (" ".join(args[:2]), r.stderr.strip()[-300:]))
    return r


def lapi_up():
    os.makedirs(WORK + "/data")
    with open(CFG, "w") as f:
        f.write(f"""common:
  daemonize: false
  log_media: file
  log_dir: {WORK}/
  log_level: warning
config_paths:
  config_dir: {WORK}/
  data_dir: {WORK}/data/
db_config:
  type: sqlite
  db_path: {WORK}/data/crowdsec.db
  use_wal: true
api:
  client:
    credentials_path: {WORK}/local_api_credentials.yaml
  server:
    listen_uri: 127.0.0.1:{PORT}
    profiles_path: /etc/crowdsec/profiles.yaml
""")
    # No online_client section: the Central API is off.
    subprocess.run(["ip", "netns", "add", NS], check=True)
    ns("ip", "link", "set", "lo", "up")
    cscli("machines", "add", "bench", "--password", "benchpassword", "-f",
          WORK + "/local_api_credentials.yaml", "--url", "http://127.0.0.1:%d" % PORT)
    for name, key in KEYS.items():
        cscli("bouncers", "add", name, "-k", key)
    p = subprocess.Popen(["nsenter", "--net=/run/netns/" + NS, "crowdsec", "-c", CFG, "-no-cs"],
                         stdout=subprocess.DEVNULL, stderr=open(WORK + "/lapi.err", "w"))
    procs.append(p)
    wait(lambda: ns("curl", "-sf", "-o", "/dev/null",
                    "http://127.0.0.1:%d/health" % PORT).returncode == 0, 30, "LAPI health")


def wait(cond, secs, what, proc=None):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        # The time the probe that showed it started (a dropped ping waits).
        t = time.monotonic()
        if cond():
            return t
        if proc and proc.poll() is not None:
            raise RuntimeError("%s: the follower exited with %d (its log: %s)"
                               % (what, proc.returncode, log_tail(proc)))
        time.sleep(PROBE)
    raise RuntimeError("%s: not within %g s" % (what, secs))


def log_tail(proc):
    try:
        with open(proc.err_path) as f:
            return f.read().strip().splitlines()[-1][-200:]
    except (OSError, IndexError, AttributeError):
        return "none"


def addr(i):
    return "10.%d.%d.%d" % (i >> 16 & 255, i >> 8 & 255, i & 255)


def import_decisions():
    path = WORK + "/decisions.csv"
    with open(path, "w") as f:
        f.write("duration,scope,value,reason,type\n")
        for i in range(N):
            f.write("12h,ip,%s,bench,ban\n" % addr(i + 1))
    t = time.monotonic()
    cscli("decisions", "import", "-i", path, timeout=TIMEOUT)
    return time.monotonic() - t


# Each follower: start(), count() -> entries held, has(ip) -> bool, stop().
class Bouncer:
    def __init__(self, mode):
        self.mode = mode
        self.p = None

    def start(self):
        conf = WORK + "/bouncer-%s.yaml" % self.mode
        size = 1 << max(17, (2 * N).bit_length())
        with open(conf, "w") as f:
            f.write(f"""mode: {self.mode}
update_frequency: {POLL}
daemonize: true
pid_dir: {WORK}/
log_mode: file
log_dir: {WORK}/
log_level: info
api_url: http://127.0.0.1:{PORT}/
api_key: {KEYS[self.mode]}
disable_ipv6: true
supported_decisions_types:
  - ban
ipset_size: {size}
blacklists_ipv4: {SET}
nftables:
  ipv4:
    enabled: true
    set-only: false
    table: crowdsec
    chain: crowdsec-chain
  ipv6:
    enabled: false
prometheus:
  enabled: false
""")
        if self.mode == "ipset":
            # The ipset mode fills a set it does not make.
            ns("ipset", "create", SET, "hash:net", "timeout", "300", "maxelem", str(size),
               "-exist")
        err = WORK + "/bouncer-%s.err" % self.mode
        self.p = subprocess.Popen(["nsenter", "--net=/run/netns/" + NS,
                                   "crowdsec-firewall-bouncer", "-c", conf],
                                  stdout=subprocess.DEVNULL, stderr=open(err, "w"))
        self.p.err_path = err
        procs.append(self.p)
        return self.p.pid

    def count(self):
        if self.mode == "ipset":
            r = ns("ipset", "list", "-t", SET)
            for line in r.stdout.splitlines():
                if line.startswith("Number of entries:"):
                    return int(line.split(":")[1])
            return 0
        r = ns("nft", "-j", "list", "set", "ip", "crowdsec", SET)
        if r.returncode:
            return 0
        for o in json.loads(r.stdout)["nftables"]:
            if "set" in o:
                return len(o["set"].get("elem", []))
        return 0

    def has(self, ip):
        if self.mode == "ipset":
            return ns("ipset", "test", SET, ip).returncode == 0
        return ns("nft", "get", "element", "ip", "crowdsec", SET, "{ %s }" % ip).returncode == 0

    def stop(self):
        stop_proc(self.p)
        # 0.0.25 may leave its set or table behind.
        if self.mode == "ipset":
            ns("ipset", "destroy", SET)
        else:
            ns("nft", "delete", "table", "ip", "crowdsec")
            ns("nft", "delete", "table", "ip6", "crowdsec6")


class SieveAgent:
    """
    sieve-agent with [crowdsec]: the list is enforced on a veth of the
    namespace whose peer is in a client namespace holding the probed
    addresses: an entry is enforced when a ping from it gets no reply.
    """
    mode = "sieve"
    CL = NS + "-cl"

    def __init__(self):
        self.p = None
        self.env = dict(os.environ, SIEVE_STATE_DIR=WORK + "/state")

    def sieve(self, *args):
        return subprocess.run(["nsenter", "--net=/run/netns/" + NS, SIEVE, *args],
                              capture_output=True, text=True, env=self.env)

    def start(self):
        keyf = WORK + "/sieve.key"
        with open(os.open(keyf, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(KEYS["sieve"] + "\n")
        subprocess.run(["ip", "netns", "add", self.CL], check=True)
        ns("ip", "link", "add", "csb0", "type", "veth", "peer", "name", "csb1", "netns", self.CL)
        ns("ip", "addr", "add", "192.0.2.1/24", "dev", "csb0")
        ns("ip", "link", "set", "csb0", "up")
        for i in range(CALLS):
            self.cl("ip", "addr", "add", "192.0.2.%d/24" % (i + 10), "dev", "csb1")
        self.cl("ip", "link", "set", "csb1", "up")
        r = self.sieve("xdp", "attach", "csb0", "--list", LIST, "--capacity", str(2 * N + 1024))
        if r.returncode:
            raise RuntimeError("sieve xdp attach: " + r.stderr.strip())
        conf = WORK + "/sieve.conf"
        with open(conf, "w") as f:
            f.write(f"[agent]\nstate_dir = {WORK}/state\n[crowdsec]\n"
                    f"lapi_url = http://127.0.0.1:{PORT}\napi_key_file = {keyf}\n"
                    f"lists = {LIST}\nupdate_frequency = {POLL}\n")
        r = self.sieve("agent", "--check", "--config", conf)
        if r.returncode:
            raise RuntimeError("sieve agent --check: this sieve has no [crowdsec] source yet "
                               "(h-crowdsec): " + r.stderr.strip()[-200:])
        self.p = subprocess.Popen(["nsenter", "--net=/run/netns/" + NS, SIEVE, "agent",
                                   "--config", conf], env=self.env, stdout=subprocess.DEVNULL,
                                  stderr=open(WORK + "/agent.err", "w"))
        self.p.err_path = WORK + "/agent.err"
        procs.append(self.p)
        return self.p.pid

    def count(self):
        r = self.sieve("xdp", "status", "-j", "-i", "csb0")
        try:
            return int(json.loads(r.stdout)[0]["entries"])
        except (ValueError, KeyError, IndexError):
            return 0

    def cl(self, *cmd):
        return subprocess.run(["nsenter", "--net=/run/netns/" + self.CL, *cmd],
                              capture_output=True, text=True)

    def has(self, ip):
        return self.cl("ping", "-n", "-q", "-c", "1", "-W", "0.3", "-I", ip,
                       "192.0.2.1").returncode != 0

    def stop(self):
        stop_proc(self.p)
        self.sieve("xdp", "detach", "csb0")
        ns("ip", "link", "del", "csb0")
        subprocess.run(["ip", "netns", "del", self.CL], stderr=subprocess.DEVNULL)


def stop_proc(p):
    if p and p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def usage(pid):
    """Peak RSS (MB) and CPU seconds of pid so far."""
    with open("/proc/%d/status" % pid) as f:
        hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tck = os.sysconf("SC_CLK_TCK")
    return hwm / 1024, (int(fields[11]) + int(fields[12])) / tck


def child_pid(pid):
    """The follower under nsenter (nsenter execs, so it is the same pid)."""
    return pid


def run_mode(f):
    res = {"mode": f.mode}
    t0 = time.monotonic()
    pid = child_pid(f.start())
    t1 = wait(lambda: f.count() >= N, TIMEOUT, f.mode + ": start-up sync of %d" % N, f.p)
    res["sync_s"] = t1 - t0
    res["rss_mb"], res["cpu_s"] = usage(pid)
    adds, dels = [], []
    for i in range(CALLS):
        ip = "192.0.2.%d" % (i + 10)
        wait(lambda: not f.has(ip), 10, f.mode + ": " + ip + " before its add", f.p)
        t = time.monotonic()
        cscli("decisions", "add", "-i", ip, "-d", "1h", "-R", "bench")
        adds.append(wait(lambda: f.has(ip), 60, f.mode + ": add of " + ip, f.p) - t)
        t = time.monotonic()
        cscli("decisions", "delete", "-i", ip)
        dels.append(wait(lambda: not f.has(ip), 60, f.mode + ": delete of " + ip, f.p) - t)
    res["rss_mb_end"], res["cpu_s_end"] = usage(pid)
    res["add"], res["delete"] = adds, dels
    f.stop()
    return res


def p99(v):
    s = sorted(v)
    return s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))]


def report(rows, import_s):
    lines = ["bench-crowdsec: %d IPv4 decisions, update_frequency %s, %d adds/deletes; "
             "cscli decisions import took %.1f s" % (N, POLL, CALLS, import_s),
             "%-10s %10s %8s %8s %12s %10s %12s %10s" % (
                 "follower", "sync s", "RSS MB", "CPU s", "add med ms", "add p99",
                 "del med ms", "del p99")]
    for r in rows:
        if "error" in r:
            lines.append("%-10s %s" % (r["mode"], r["error"]))
            continue
        lines.append("%-10s %10.2f %8.1f %8.2f %12.0f %10.0f %12.0f %10.0f" % (
            r["mode"], r["sync_s"], r["rss_mb"], r["cpu_s"],
            1000 * statistics.median(r["add"]), 1000 * p99(r["add"]),
            1000 * statistics.median(r["delete"]), 1000 * p99(r["delete"])))
    lines.append("RSS and CPU at the end of the start-up sync (the follower's own process).")
    text = "\n".join(lines)
    print(text)
    with open(OUT + ".txt", "w") as f:
        f.write(text + "\n")
    with open(OUT + ".json", "w") as f:
        json.dump({"n": N, "poll": POLL, "import_s": import_s, "rows": rows}, f)


def cleanup(*_):
    for p in procs:
        stop_proc(p)
    for n in (SieveAgent.CL, NS):
        subprocess.run(["ip", "netns", "del", n], stderr=subprocess.DEVNULL)
    shutil.rmtree(WORK, ignore_errors=True)


def main():
    if os.geteuid():
        sys.exit("bench-crowdsec needs root (namespaces, ipset, nftables, XDP)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    rows = []
    try:
        lapi_up()
        import_s = import_decisions()
        for m in MODES:
            f = SieveAgent() if m == "sieve" else Bouncer(m)
            print("  %s: following %d decisions..." % (m, N), flush=True)
            try:
                rows.append(run_mode(f))
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                rows.append({"mode": m, "error": "not measured: %s" % e})
                errors.append(m)
                f.stop()
        report(rows, import_s)
    finally:
        cleanup()
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
