#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What systemd's Type=notify sees of a service, for the e2e suite: binds a
datagram socket at PATH (the service's NOTIFY_SOCKET) and prints each line
of each message it gets, after the wall-clock time it came in, in ns:

  notify.py PATH SECONDS [STOP]      "1700000000123456789 READY=1"

Bounded: ends after SECONDS, or within 0.1 s once the file STOP exists.
"""
import os
import socket
import sys
import time


def main(path, seconds, stop=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if os.path.exists(path):
        os.unlink(path)
    s.bind(path)
    end = time.monotonic() + float(seconds)
    print("ready", flush=True)
    while time.monotonic() < end and not (stop and os.path.exists(stop)):
        s.settimeout(0.1)
        try:
            msg = s.recv(4096)
        except socket.timeout:
            continue
        now = time.time_ns()
        for line in msg.decode(errors="replace").splitlines():
            print(now, line, flush=True)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


if __name__ == "__main__":
    main(*sys.argv[1:])
