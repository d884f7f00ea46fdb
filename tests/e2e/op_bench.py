#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# What one `sieve xdp block` / `unblock` costs above process start, at one
# list size, beside `ipset add` / `del` and /bin/true: each command a fresh
# process through nsenter(1) into a namespace made here (names with this
# process's id), timed around the process, median of CALLS; then
# `strace -c` of one block and one unblock (if strace is there). For the
# floor of item 4 of issue 21; not part of make test.
#
# Usage: op_bench.py SIEVE [N [CALLS]]   (root; N: list size, 100000)
# Environment: OP_BENCH_BACKEND (blocked), OP_BENCH_TMPDIR (/var/tmp: on
# disk), OP_BENCH_BASE (another build of sieve, an older one: its block and
# unblock are timed too, interleaved with this one's on the same store, so
# that a before/after comparison sees the same machine load). Everything
# made goes at the end, also on failure.

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

TAG = "ob%d" % os.getpid()
NS = "opbench-" + TAG
IFC = TAG + "a"


def sh(*argv, **kw):
    return subprocess.run(list(argv), check=True, **kw)


def main():
    sieve = os.path.realpath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 15
    backend = os.environ.get("OP_BENCH_BACKEND", "blocked")
    base = os.environ.get("OP_BENCH_BASE")
    base = os.path.realpath(base) if base else None
    work = tempfile.mkdtemp(prefix="op-bench-", dir=os.environ.get("OP_BENCH_TMPDIR", "/var/tmp"))
    env = dict(os.environ, SIEVE_STATE_DIR=os.path.join(work, "state"))
    inns = ["nsenter", "--net=/run/netns/" + NS]
    pin = None
    try:
        sh("ip", "netns", "add", NS)
        pin = "/sys/fs/bpf/sieve/netns-%d" % os.stat("/run/netns/" + NS).st_ino
        sh("ip", "-n", NS, "link", "set", "lo", "up")
        sh("ip", "-n", NS, "link", "add", IFC, "type", "veth", "peer", "name", TAG + "b")
        for d in (IFC, TAG + "b"):
            sh("ip", "-n", NS, "link", "set", d, "up")
        r, keys = random.Random(21), set()
        while len(keys) < n:
            a = r.getrandbits(32)
            if a >> 8 != 0xc00002:  # 192.0.2.0/24: the single ops
                keys.add(a)
        feed = os.path.join(work, "feed.txt")
        with open(feed, "w") as f:
            f.write("".join("%d.%d.%d.%d\n" % (a >> 24, a >> 16 & 255, a >> 8 & 255, a & 255)
                            for a in keys))
        quiet = dict(env=env, stdout=subprocess.DEVNULL)
        sh(*inns, sieve, "xdp", "attach", IFC, "--backend", backend, **quiet)
        sh(*inns, sieve, "xdp", "load", "-i", IFC, "--origin", "feed", feed, **quiet)
        sh(*inns, "ipset", "create", TAG, "hash:ip")

        def timed(argv):
            t = time.monotonic()
            sh(*inns, *argv, **quiet)
            return time.monotonic() - t

        res = {k: [] for k in ("true", "--version", "ipset add", "ipset del", "block",
                               "unblock") + (("block base", "unblock base") if base else ())}
        for i in range(calls):
            a = "192.0.2.%d" % (1 + i % 250)
            res["true"].append(timed(["/bin/true"]))
            res["--version"].append(timed([sieve, "--version"]))
            res["ipset add"].append(timed(["ipset", "add", TAG, a]))
            res["ipset del"].append(timed(["ipset", "del", TAG, a]))
            res["block"].append(timed([sieve, "xdp", "block", "-i", IFC, a]))
            res["unblock"].append(timed([sieve, "xdp", "unblock", "-i", IFC, a]))
            if base:
                b = "192.0.2.%d" % (1 + (i + 125) % 250)
                res["block base"].append(timed([base, "xdp", "block", "-i", IFC, b]))
                res["unblock base"].append(timed([base, "xdp", "unblock", "-i", IFC, b]))
        print("%d entries, backend %s, median of %d (ms)%s:" % (
            n, backend, calls, ", base " + base if base else ""))
        med = {k: statistics.median(v) for k, v in res.items()}
        for k, v in res.items():
            peer = "ipset add" if k.startswith("block") else \
                "ipset del" if k.startswith("unblock") else None
            print("  %-12s %6.2f  (min %.2f)%s" % (
                k, med[k] * 1000, min(v) * 1000,
                "  %.2fx %s" % (med[k] / med[peer], peer) if peer else ""))
        if shutil.which("strace"):
            for op in ("block", "unblock"):
                out = os.path.join(work, "strace-" + op)
                sh(*inns, "strace", "-f", "-c", "-o", out, sieve, "xdp", op, "-i", IFC,
                   "192.0.2.251", **quiet)
                lines = open(out).read().splitlines()
                tot = [x for x in lines if x.rstrip().endswith("total")]
                sync = [x.split()[3] for x in lines if x.split()[-1:] in (["fdatasync"], ["fsync"])]
                print("  strace -c %s: %s; fsync/fdatasync calls: %s" % (
                    op, " ".join(tot[0].split()[3:4]) + " syscalls" if tot else "?",
                    "+".join(sync) or "0"))
    finally:
        if pin:
            subprocess.run(inns + [sieve, "xdp", "detach", IFC], env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            shutil.rmtree(pin, ignore_errors=True)
        subprocess.run(["ip", "netns", "del", NS], stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
