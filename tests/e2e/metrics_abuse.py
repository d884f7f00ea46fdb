#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""HTTP abuse of the agent's metrics endpoint (issue 20, item 11).

Usage: metrics_abuse.py PORT SLOW ADDRS SECONDS INTERVAL_S

An attacker holds SLOW connections from loopback addresses 127.0.0.2 ...
(ADDRS of them: every 127/8 address is local), each sending a request one
byte a second (so no idle timeout ends it) and opening a new one whenever
one is dropped. Meanwhile, for SECONDS, a real scraper from 127.0.0.1 GETs
/metrics once a second: each must answer 200 within 2 s. Then a burst of
rapid scrapes on one keep-alive connection: the snapshot's refreshes
(sieve_agent_metrics_refreshes_total) during the burst must be at most
ceil(T / INTERVAL_S) + 1. Prints what it measured; exit 1 on a failure.
"""
import http.client
import math
import re
import socket
import sys
import time

port, slow, naddrs, seconds, interval = (int(a) for a in sys.argv[1:6])
REQ = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4096


class Slow:
    def __init__(self, i):
        self.addr = "127.0.0.%d" % (2 + i % naddrs)
        self.open()

    def open(self):
        self.s = socket.socket()
        self.s.settimeout(2)
        self.s.bind((self.addr, 0))
        self.s.connect(("127.0.0.1", port))
        self.s.setblocking(False)
        self.sent = 0

    def trickle(self):
        """One more byte; a new connection if this one was dropped."""
        try:
            if self.s.recv(1) == b"":
                raise ConnectionError
        except BlockingIOError:
            pass
        except OSError:
            self.s.close()
            self.open()
            return 1
        try:
            self.s.send(REQ[self.sent % len(REQ):][:1])
            self.sent += 1
        except OSError:
            self.s.close()
            self.open()
            return 1
        return 0


def scrape(conn=None):
    c = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=2,
                                           source_address=("127.0.0.1", 0))
    c.request("GET", "/metrics")
    r = c.getresponse()
    body = r.read().decode()
    if not conn:
        c.close()
    return r.status, body


def refreshes(body):
    m = re.search(r"^sieve_agent_metrics_refreshes_total (\d+)$", body, re.M)
    return int(m.group(1)) if m else None


fails = 0
try:
    attackers = [Slow(i) for i in range(slow)]
except OSError as e:
    print("opening %d connections: %s" % (slow, e))
    sys.exit(1)
reopened, worst, scrapes = 0, 0.0, 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    for a in attackers:
        try:
            reopened += a.trickle()
        except OSError:
            pass    # refused: tried again next round
    t0 = time.monotonic()
    try:
        status, _ = scrape()
    except OSError as e:
        status = "error: %s" % e
    took = time.monotonic() - t0
    worst = max(worst, took)
    scrapes += 1
    if status != 200 or took > 2:
        print("scrape %d under %d slow connections: %s after %.3f s" % (scrapes, slow, status, took))
        fails += 1
    time.sleep(max(0, 1 - took))
print("slow connections %d from %d addresses: %d scrapes, the slowest %.3f s; "
      "%d slow connections dropped and reopened" % (slow, naddrs, scrapes, worst, reopened))
for a in attackers:
    a.s.close()

# The burst: rapid scrapes on one connection, the counter read by the first and the last.
try:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    t0 = time.monotonic()
    first = refreshes(scrape(conn)[1])
    n = 1
    while time.monotonic() - t0 < 2.5 * interval:
        scrape(conn)
        n += 1
    last = refreshes(scrape(conn)[1])
    t = time.monotonic() - t0
    n += 1
    conn.close()
except OSError as e:
    print("the burst of scrapes: %s" % e)
    sys.exit(1)
if first is None or last is None:
    print("no sieve_agent_metrics_refreshes_total in the scrape")
    sys.exit(1)
bound = math.ceil(t / interval) + 1
print("%d scrapes in %.2f s: %d refreshes (at most %d)" % (n, t, last - first, bound))
if last - first > bound:
    fails += 1
sys.exit(1 if fails else 0)
