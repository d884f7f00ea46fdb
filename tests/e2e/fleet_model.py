#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A hostile Redis against one follower, model-based (issue 20, items 7-10).

Runs in the Redis namespace of tests/e2e/fleet_lib.sh: a proxy on LISTEN in
front of the real redis-server at REDIS (the agent under test follows the
proxy), and a driver that publishes random sequences of changes on the
documented model: blocks, unblocks, allows, disallows, keys moving between
the allowlist and the blocklist in both orders, garbage members (not
entries, control characters, out of the host's limits), silent changes of
the sets followed by a disconnect (a forced resync), plain disconnects, and
phases in which the proxy makes every ZSCAN's cursor and every ZRANGE's
pages never end. After each
step the follower's store (`sieve xdp list` in the host's namespace) must
equal, within a bounded wait, what Redis holds: the allow set's valid
members allowed, the block set's others blocked, what the host's limits
refuse nowhere. Seeded; the seed is printed, and a failure names it.

  fleet_model.py --redis 127.0.0.1:6379 --listen ADDR:PORT --netns PATH
                 --state DIR --sieve PATH --list L --seed N --steps N
                 --agent-pid-file FILE

It prints "proxy ready" once the proxy listens, then waits (10 s at most)
for FILE to hold the agent's PID (the agent is started against the proxy).
Exit 0 when every step converged.

  fleet_model.py --redis 127.0.0.1:6379 --listen ADDR:PORT --proxy-only
                 [--pad-allow N] [--shift K]

only proxies (until killed), adding to each page of an allowlist's
ZSCAN (and ZRANGE) N members the follower's limits refuse (an allow of a
service): a scan whose pages take long to judge, so that a stop lands while the
follower judges one (the stop_mid_resync case); with --shift, removing
(ZREMRANGEBYRANK, no stream record) a blocklist's K lowest members just
before each connection's second ZRANGE page of it (the range_shift case).
"""
import argparse
import collections
import os
import random
import socket
import subprocess
import sys
import threading
import time

# ---- RESP ----


class RespError(Exception):
    pass


def encode(*args):
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def read_raw(f):
    """One reply (or command) as its raw bytes and its value."""
    line = f.readline()
    if not line.endswith(b"\r\n"):
        raise EOFError
    t, rest = line[:1], line[1:-2]
    if t == b"+":
        return line, rest
    if t == b"-":
        return line, RespError(rest.decode(errors="replace"))
    if t == b":":
        return line, int(rest)
    if t == b"$":
        n = int(rest)
        if n < 0:
            return line, None
        data = f.read(n + 2)
        if len(data) != n + 2:
            raise EOFError
        return line + data, data[:-2]
    if t == b"*":
        n = int(rest)
        if n < 0:
            return line, None
        raws, vals = [line], []
        for _ in range(n):
            r, v = read_raw(f)
            raws.append(r)
            vals.append(v)
        return b"".join(raws), vals
    raise EOFError


class Client:
    def __init__(self, host, port):
        self.s = socket.create_connection((host, port), timeout=30)
        self.f = self.s.makefile("rb")

    def cmd(self, *args):
        self.s.sendall(encode(*args))
        v = read_raw(self.f)[1]
        if isinstance(v, RespError):
            raise v
        return v

    def pipeline(self, cmds):
        self.s.sendall(b"".join(encode(*c) for c in cmds))
        return [read_raw(self.f)[1] for _ in cmds]


# ---- the proxy ----


class Names(collections.deque):
    zscans = 0
    blocks = 0		# ZRANGEs of a blocklist
    zranges = None	# (a deque) the requested (first, last) of each ZRANGE in flight


def endless_range(first, last):
    """A ZRANGE reply as long as asked whose last pair is always the same:
    the follower's anchor is found in every page, so its pages never end.
    Its members are garbage (skipped)."""
    n = max(0, min(last - first + 1, 200000))
    pair = b"$7\r\nendless\r\n$3\r\ninf\r\n"
    return b"*%d\r\n" % (2 * n) + pair * n


class Proxy:
    """Forwards every connection to Redis; in endless mode every ZSCAN
    reply's cursor 0 becomes 7, so a scan never ends, and every ZRANGE
    reply is endless_range()'s."""

    def __init__(self, listen, upstream, pad_allow=0, shift=0):
        self.upstream = upstream
        self.shift = shift
        self.pad = (b"$17\r\ntcp:192.0.2.10:22\r\n$3\r\ninf\r\n" * pad_allow, pad_allow)
        self.endless = False
        self.endless_ranges = 0	# ZRANGE replies made endless
        self.conns = []
        self.gave_up = []	# ZSCANs of each connection its client closed
        self.lock = threading.Lock()
        self.ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(listen)
        self.ls.listen(16)
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            c, _ = self.ls.accept()
            try:
                u = socket.create_connection(self.upstream, timeout=10)
                u.settimeout(None)
            except OSError:
                c.close()
                continue
            with self.lock:
                self.conns.append((c, u))
            names = Names()
            names.zranges = collections.deque()
            threading.Thread(target=self.up, args=(c, u, names), daemon=True).start()
            threading.Thread(target=self.down, args=(c, u, names), daemon=True).start()

    def close(self, c, u):
        for s in (c, u):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        with self.lock:
            if (c, u) in self.conns:
                self.conns.remove((c, u))

    def up(self, c, u, names):
        f = c.makefile("rb")
        try:
            while True:
                raw, val = read_raw(f)
                names.append(val[0].upper() if isinstance(val, list) and val else b"")
                if names[-1] in (b"ZSCAN", b"ZRANGE") and len(val) > 1 and \
                        val[1].endswith(b":allow"):
                    names[-1] += b"-ALLOW"
                if names[-1].startswith(b"ZRANGE"):
                    try:
                        names.zranges.append((int(val[2]), int(val[3])))
                    except (IndexError, ValueError):
                        names.zranges.append((0, -1))
                    names.blocks += names[-1] == b"ZRANGE"
                    if self.shift and names.blocks == 2:
                        # Before the blocklist's second page: its lowest members go, silently.
                        Client(*self.upstream).cmd("ZREMRANGEBYRANK", val[1], 0, self.shift - 1)
                names.zscans += names[-1].startswith(b"ZSCAN")
                u.sendall(raw)
        except EOFError:
            with self.lock:
                self.gave_up.append(names.zscans)
            self.close(c, u)
        except (OSError, ValueError):
            self.close(c, u)

    def down(self, c, u, names):
        f = u.makefile("rb")
        try:
            while True:
                raw, val = read_raw(f)
                name = names.popleft() if names else b""
                rng = names.zranges.popleft() if name.startswith(b"ZRANGE") else None
                if self.endless and rng and isinstance(val, list):
                    raw = endless_range(*rng)
                    with self.lock:
                        self.endless_ranges += 1
                if (self.pad[1] and name == b"ZRANGE-ALLOW" and isinstance(val, list)):
                    raw = b"*%d\r\n" % (len(val) + 2 * self.pad[1]) + \
                        raw[len(b"*%d\r\n" % len(val)):] + self.pad[0]
                if (self.endless and name.startswith(b"ZSCAN") and isinstance(val, list) and
                        len(val) == 2 and val[0] == b"0"):
                    raw = b"*2\r\n$1\r\n7\r\n" + raw[len(b"*2\r\n$1\r\n0\r\n"):]
                if (self.pad[1] and name == b"ZSCAN-ALLOW" and isinstance(val, list) and
                        len(val) == 2 and isinstance(val[1], list)):
                    head = b"*2\r\n" + encode(val[0])[len(b"*1\r\n"):]
                    body = raw[len(head):]
                    n = len(val[1])
                    rest = body[len(b"*%d\r\n" % n):]
                    raw = head + b"*%d\r\n" % (n + 2 * self.pad[1]) + rest + self.pad[0]
                c.sendall(raw)
        except (EOFError, OSError, ValueError, IndexError):
            self.close(c, u)

    def drop_all(self):
        with self.lock:
            conns = list(self.conns)
        for c, u in conns:
            self.close(c, u)


# ---- the model ----

# Entries (canonical text) and what the host's limits say of them:
# never_block of the test's config is 198.51.100.99; the default
# broadest_block /8 and broadest_allow /16 refuse the /1 and the /12 allow.
GOOD = ["198.51.100.%d" % i for i in range(10, 22)] + [
    "203.0.113.0/24", "2001:db8::5", "2001:db8:1::/48", "tcp:192.0.2.10:22"]
REFUSED_BLOCK = {"198.51.100.99", "0.0.0.0/1"}
REFUSED_ALLOW = {"0.0.0.0/1", "10.0.0.0/12", "tcp:192.0.2.10:22"}
LIMITED = ["198.51.100.99", "0.0.0.0/1", "10.0.0.0/12"]
# Members that are no entry at all: skipped wherever they are.
GARBAGE = ["not-an-entry", "198.51.100.300", "x\n<0>injected", "\x01\x1b[31m\x7f",
           "198.51.100.7\x00.1", "203.0.113.1/24", "é", "9" * 200]


def valid(member, allow):
    if member not in GOOD and member not in LIMITED:
        return False
    return member not in (REFUSED_ALLOW if allow else REFUSED_BLOCK)


class Model:
    def __init__(self, a, rng, proxy):
        self.a, self.rng, self.proxy = a, rng, proxy
        host, port = a.redis.rsplit(":", 1)
        self.r = Client(host, int(port))
        self.set = {False: "sieve:{%s}:block" % a.list, True: "sieve:{%s}:allow" % a.list}
        self.log = "sieve:{%s}:log" % a.list
        self.steps = 0

    # Publishing: one MULTI/EXEC of the set's change and the stream's record.
    def change(self, op, member, silent=False):
        allow = op in ("allow", "disallow")
        add = op in ("block", "allow")
        score = "+inf" if self.rng.random() < 0.8 else str(int(time.time()) + 3600)
        cmds = [("MULTI",)]
        cmds.append(("ZADD", self.set[allow], score, member) if add else
                    ("ZREM", self.set[allow], member))
        if not silent:
            rec = ["XADD", self.log, "MAXLEN", "~", "100000", "*", "op", op, "entry", member]
            if add:
                rec += ["expires", score]
            cmds.append(tuple(rec + ["origin", "model"]))
        cmds.append(("EXEC",))
        out = self.r.pipeline(cmds)
        if any(isinstance(v, RespError) for v in out) or not isinstance(out[-1], list):
            raise RuntimeError("publishing %s %r: %r" % (op, member, out))

    def members(self, allow):
        return {m.decode("utf-8", "surrogateescape"): s for m, s in
                zip(*[iter(self.r.cmd("ZRANGE", self.set[allow], 0, -1, "WITHSCORES"))] * 2)}

    def expected(self):
        now = time.time()

        def live(allow):
            return {m for m, s in self.members(allow).items()
                    if valid(m, allow) and float(s) > now}
        allowed = live(True)
        return allowed, live(False) - allowed

    def store(self):
        env = dict(os.environ, SIEVE_STATE_DIR=self.a.state)
        out = subprocess.run(["nsenter", "--net=" + self.a.netns, self.a.sieve, "xdp", "list",
                              "--list", self.a.list], capture_output=True, text=True,
                             env=env, timeout=30)
        allowed, blocked = set(), set()
        for line in out.stdout.splitlines():
            f = line.split("\t")
            if len(f) >= 4 and f[3] == "fleet":
                (allowed if f[1].startswith("allow") else blocked).add(f[2])
        return allowed, blocked

    def alive(self):
        try:
            os.kill(self.a.agent_pid, 0)
            return True
        except OSError:
            return False

    def converged(self, what, secs=15):
        """Equal within @secs, and still equal 0.3 s later: a change that
        should leave the store alone (garbage, a refused entry) is given
        the time to do harm before the next step."""
        end = time.monotonic() + secs
        settled = None
        while True:
            want, got = self.expected(), self.store()
            if want == got and settled and time.monotonic() >= settled:
                return
            if want == got and not settled:
                settled = time.monotonic() + 0.3
            elif want != got:
                settled = None
            if time.monotonic() > end or not self.alive():
                raise AssertionError(
                    "step %d (%s), seed %d: the store is not what Redis holds after %d s%s:\n"
                    "  allowed: store %s, Redis %s\n  blocked: store %s, Redis %s" %
                    (self.steps, what, self.a.seed, secs,
                     "" if self.alive() else " (the agent died)",
                     sorted(got[0]), sorted(want[0]), sorted(got[1]), sorted(want[1])))
            time.sleep(0.1)

    def disconnect(self):
        self.r.cmd("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
        self.proxy.drop_all()

    # One random step; its name.
    def step(self):
        rng = self.rng
        k = rng.choice(GOOD + LIMITED)
        x = rng.random()
        if x < 0.30:
            op = rng.choice(["block", "unblock", "allow", "disallow"])
            self.change(op, k)
            return "%s %s" % (op, k)
        if x < 0.50:
            # A move between the lists, in either order of its two changes.
            seq = rng.choice([("disallow", "block"), ("block", "disallow"),
                              ("unblock", "allow"), ("allow", "unblock")])
            for op in seq:
                self.change(op, k)
            return "move %s: %s" % (k, " then ".join(seq))
        if x < 0.60:
            g = rng.choice(GARBAGE)
            self.change(rng.choice(["block", "allow"]), g)
            return "garbage %r" % g
        if x < 0.70:
            # Changes the stream does not carry, then a reconnection: a resync.
            for _ in range(rng.randint(1, 4)):
                self.change(rng.choice(["block", "unblock", "allow", "disallow"]),
                            rng.choice(GOOD + LIMITED), silent=True)
            self.disconnect()
            return "silent changes, disconnect"
        if x < 0.80:
            self.disconnect()
            op = rng.choice(["block", "allow", "unblock", "disallow"])
            self.change(op, k)
            return "disconnect, %s %s" % (op, k)
        if x < 0.85:
            self.r.cmd("XTRIM", self.log, "MAXLEN", "0")
            self.change("unblock", k, silent=True)
            self.disconnect()
            return "stream trimmed, unblock %s silently, disconnect" % k
        if x < 0.92:
            # A hostile score straight into the set: past (nothing), or far future.
            sc = rng.choice(["-inf", "-1e300", "1e300", "-9.3e18"])
            self.r.cmd("ZADD", self.set[rng.random() < 0.5], sc, k)
            self.disconnect()
            return "score %s for %s, disconnect" % (sc, k)
        return self.endless_phase(k)

    def endless_phase(self, k):
        """ZSCAN never ends: the follower must give up the scan, store
        nothing of it, stay alive; then converge once scans end again."""
        before = self.store()
        with self.proxy.lock:
            self.proxy.gave_up = []
            self.proxy.endless_ranges = 0
        self.proxy.endless = True
        self.change("block", k, silent=True)
        self.change("disallow", k, silent=True)
        self.disconnect()
        # The follower gives such a scan up (1000 pages for a small set): it closes.
        end = time.monotonic() + 20
        while time.monotonic() < end and not any(n >= 1000 for n in self.proxy.gave_up):
            time.sleep(0.1)
        if not any(n >= 1000 for n in self.proxy.gave_up):
            raise AssertionError("seed %d: a ZSCAN without end was not given up in 20 s "
                                 "(connections closed after %s ZSCANs)" %
                                 (self.a.seed, self.proxy.gave_up))
        if not self.proxy.endless_ranges:
            raise AssertionError("seed %d: no ZRANGE read during the endless phase" % self.a.seed)
        if not self.alive():
            raise AssertionError("seed %d: the agent died on a ZSCAN without end" % self.a.seed)
        if self.store() != before:
            raise AssertionError("seed %d: a ZSCAN without end changed the store" % self.a.seed)
        self.proxy.endless = False
        self.disconnect()
        return "endless ZSCAN, then %s blocked silently" % k

    def run(self):
        self.r.cmd("DEL", self.set[False], self.set[True], self.log)
        self.change("block", GOOD[0])
        self.converged("the first block")
        # Once each whatever the seed: what the limits refuse, garbage, an endless scan.
        for op, m in (("allow", "0.0.0.0/1"), ("block", "0.0.0.0/1"),
                      ("allow", "tcp:192.0.2.10:22"), ("block", "198.51.100.99"),
                      ("block", "x\n<0>injected"), ("block", "9" * 200)):
            self.change(op, m)
            self.converged("%s %r" % (op, m))
        self.endless_phase(GOOD[1])
        self.converged("the endless scan's end")
        for self.steps in range(1, self.a.steps + 1):
            what = self.step()
            self.converged(what)
        print("fleet_model: seed %d: %d steps converged" % (self.a.seed, self.a.steps))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--redis", required=True)
    p.add_argument("--listen", required=True)
    p.add_argument("--netns")
    p.add_argument("--state")
    p.add_argument("--sieve")
    p.add_argument("--list", default="edge")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--agent-pid-file")
    p.add_argument("--proxy-only", action="store_true")
    p.add_argument("--pad-allow", type=int, default=0)
    p.add_argument("--shift", type=int, default=0)
    a = p.parse_args()
    lh, lp = a.listen.rsplit(":", 1)
    uh, up = a.redis.rsplit(":", 1)
    proxy = Proxy((lh, int(lp)), (uh, int(up)), a.pad_allow, a.shift)
    print("proxy ready", flush=True)
    while a.proxy_only:
        time.sleep(3600)	# until killed
    end = time.monotonic() + 10
    a.agent_pid = 0
    while not a.agent_pid and time.monotonic() < end:
        try:
            with open(a.agent_pid_file) as f:
                a.agent_pid = int(f.read().strip() or 0)
        except (OSError, ValueError):
            time.sleep(0.1)
    if not a.agent_pid:
        print("fleet_model: FAIL: no agent PID in %s" % a.agent_pid_file, flush=True)
        return 1
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 31)
    print("fleet_model: seed %d (FLEET_SEED=%d repeats it)" % (a.seed, a.seed), flush=True)
    try:
        Model(a, random.Random(a.seed), proxy).run()
    except (AssertionError, RuntimeError, RespError, OSError, EOFError) as e:
        print("fleet_model: FAIL: %s" % e, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
