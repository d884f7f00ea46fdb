#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench-fleet: publish to enforcement on every host, one entry at a time.

  fleet_latency.py HOST PORT LIST N PINDIR...

For each of N new sources (100.64.0.0/10 on), one at a time: the documented
change (MULTI, ZADD, XADD, EXEC) is sent to Redis at HOST:PORT over one
connection, and each host's live maps are polled (fleet_maps.py: the config
packets use, read with two bpf() lookups, no process started) until they
hold a newer version of the store than before the publish: a live add puts
the keys into the maps before that version, so the entry is enforced from
then on. Latency to a host: that moment minus the moment before the send;
to the fleet: the slowest host's. Between entries a pause of 10-30 ms lets
the agents wait in XREAD BLOCK again, as for a lone ban. Each entry waits at
most 10 s (then it counts as missed). Prints the report's lines.
"""
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fleet_maps import LiveMaps  # noqa: E402

TIMEOUT_NS = 10 * 10**9


def resp(*words):
    out = [b"*%d\r\n" % len(words)]
    for w in words:
        w = w.encode() if isinstance(w, str) else w
        out.append(b"$%d\r\n%s\r\n" % (len(w), w))
    return b"".join(out)


class Replies:
    """Just enough of RESP2 to read EXEC's answer."""

    def __init__(self, sock):
        self.f = sock.makefile("rb")

    def read(self):
        line = self.f.readline()
        kind, rest = line[:1], line[1:-2]
        if kind in (b"+", b":"):
            return rest
        if kind == b"-":
            raise SystemExit("redis: %s" % rest.decode())
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.f.read(n + 2)[:-2]
        if kind == b"*":
            return [self.read() for _ in range(int(rest))]
        raise SystemExit("redis: unexpected reply %r" % line)


def percentile(sorted_ms, p):
    """Nearest rank."""
    rank = max(1, -(-len(sorted_ms) * p // 100))
    return sorted_ms[int(rank) - 1]


def summary(ms):
    s = sorted(ms)
    return "p50 %.2f ms, p99 %.2f ms, max %.2f ms, mean %.2f ms" % (
        percentile(s, 50), percentile(s, 99), s[-1], sum(s) / len(s))


def main(host, port, list_, n, *pin_dirs):
    n = int(n)
    maps = [LiveMaps(d) for d in pin_dirs]
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    replies = Replies(sock)
    zkey, lkey = "sieve:{%s}:block" % list_, "sieve:{%s}:log" % list_
    fleet_ms, exec_ms, missed = [], [], 0
    host_ms = [[] for _ in maps]
    rnd = random.Random(12)
    for i in range(n):
        a = (100 << 24) | (64 << 16) | (i + 1)
        entry = "%d.%d.%d.%d" % (a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255)
        before = [m.version() for m in maps]
        msg = (resp("MULTI") + resp("ZADD", zkey, "+inf", entry) +
               resp("XADD", lkey, "MAXLEN", "~", "1000000", "*", "op", "block", "entry", entry,
                    "expires", "+inf", "origin", "bench") + resp("EXEC"))
        t0 = time.monotonic_ns()
        sock.sendall(msg)
        for _ in range(3):
            replies.read()
        if len(replies.read()) != 2:
            raise SystemExit("EXEC of %s did not run both commands" % entry)
        exec_ms.append((time.monotonic_ns() - t0) / 1e6)
        done = [None] * len(maps)
        while None in done and time.monotonic_ns() - t0 < TIMEOUT_NS:
            for h, m in enumerate(maps):
                if done[h] is None and m.version() > before[h]:
                    done[h] = time.monotonic_ns()
            if None in done:
                time.sleep(0.0002)
        if None in done:
            missed += 1
        else:
            for h, t in enumerate(done):
                host_ms[h].append((t - t0) / 1e6)
            fleet_ms.append((max(done) - t0) / 1e6)
        time.sleep(rnd.uniform(0.010, 0.030))
    print("entries published: %d, enforced on all %d hosts: %d, missed (10 s): %d"
          % (n, len(maps), len(fleet_ms), missed))
    if fleet_ms:
        print("publish -> enforced on all %d hosts: %s" % (len(maps), summary(fleet_ms)))
        for h, ms in enumerate(host_ms):
            print("  host %d alone: %s" % (h + 1, summary(ms)))
    print("MULTI..EXEC round trip (AOF fsync included): %s" % summary(exec_ms))
    return 1 if missed else 0


if __name__ == "__main__":
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
