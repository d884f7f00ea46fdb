#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Traffic for the e2e suite and the demo, between the suite's own network
namespaces only. Every loop is bounded in count and time.

  traffic.py udp-recv ADDR PORT SECONDS [STOP] count datagrams per source, print JSON
  traffic.py udp-send SRC SPORT DST DPORT N PPS [STOP]
                                               send N datagrams at PPS, print how many
  traffic.py udp-bytes N                       UDP payload bytes of the first N datagrams
STOP: a file whose existence ends the run early (within 0.1 s).
  traffic.py tcp-serve ADDR PORT SECONDS       accept connections for SECONDS
  traffic.py tcp-connect SRC SPORT DST DPORT   exit 0 if the handshake completes
"""
import json
import os
import socket
import sys
import time


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def stopped(stop):
    return stop is not None and os.path.exists(stop)


def udp_recv(addr, port, seconds, stop=None):
    s = socket.socket(family(addr), socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((addr, int(port)))
    counts = {}
    end = time.monotonic() + float(seconds)
    # Ready: the caller waits for this line before sending.
    print("ready", flush=True)
    # The stop file is looked at ten times a second, not per datagram: a
    # receiver that falls behind on a busy host must not fall further.
    checked = 0.0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if now - checked >= 0.1:
            if stopped(stop):
                break
            checked = now
        s.settimeout(min(end - now, 0.1))
        try:
            _, peer = s.recvfrom(2048)
        except socket.timeout:
            continue
        key = "%s:%d" % (peer[0], peer[1])
        counts[key] = counts.get(key, 0) + 1
    # What arrived before the stop but is still queued counts too (bounded).
    s.setblocking(False)
    for _ in range(1 << 20):
        try:
            _, peer = s.recvfrom(2048)
        except (BlockingIOError, InterruptedError):
            break
        key = "%s:%d" % (peer[0], peer[1])
        counts[key] = counts.get(key, 0) + 1
    print(json.dumps(counts), flush=True)


def payload(i):
    """Datagram i of udp-send: its length varies, so byte counts are exact sums."""
    return b"sieve e2e %d" % i


def udp_bytes(n):
    print(sum(len(payload(i)) for i in range(int(n))))


def udp_send(src, sport, dst, dport, n, pps, stop=None):
    s = socket.socket(family(dst), socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, int(sport)))
    gap = 1.0 / float(pps)
    start = time.monotonic()
    sent = 0
    for i in range(int(n)):
        # Checked every 10 datagrams: a stat() a datagram would slow the pace.
        if i % 10 == 0 and stopped(stop):
            break
        s.sendto(payload(i), (dst, int(dport)))
        sent += 1
        delay = start + (i + 1) * gap - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    print(sent, flush=True)


def tcp_serve(addr, port, seconds):
    s = socket.socket(family(addr), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, int(port)))
    s.listen(16)
    print("ready", flush=True)
    end = time.monotonic() + float(seconds)
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            c, _ = s.accept()
            c.close()
        except socket.timeout:
            break


def tcp_connect(src, sport, dst, dport):
    s = socket.socket(family(dst), socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, int(sport)))
    s.settimeout(2)
    try:
        s.connect((dst, int(dport)))
    except OSError:
        sys.exit(1)
    s.close()


def main():
    cmds = {"udp-recv": udp_recv, "udp-send": udp_send, "udp-bytes": udp_bytes,
            "tcp-serve": tcp_serve, "tcp-connect": tcp_connect}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    cmds[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
