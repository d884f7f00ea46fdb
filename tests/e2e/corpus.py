#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The adversarial packet corpus of corpus.sh, judged by what the kernel
delivers. Runs inside the suite's own namespaces only; every loop and wait
is bounded.

  corpus.py serve CONFIG   (server namespace) listening TCP sockets, UDP
                           sockets that log each datagram's payload; runs
                           until CONFIG's stop file appears (bounded)
  corpus.py run CONFIG     (client namespace) sends the corpus with scapy
                           on the client's veth end, prints a line per shape

CONFIG is a JSON file corpus.sh writes: interfaces, MACs, addresses, ports,
the command that prints the program's counters (`sieve xdp stats -j`).

Each shape (a way to build a SYN or a datagram: fragments, extension
chains, header lies, VLAN tags) is sent four times: to the blocked service,
as the blocked flow, from the blocked source, and last as a control to an
unblocked port from an unblocked source. Delivery is what the kernel did:
a SYN-ACK seen on the client's veth end (its ack names the SYN's sequence
number, unique per send), a datagram the server read (its payload names
the send). The rule: nothing sent to a blocked service, as a blocked flow
or from a blocked source is ever delivered. Each shape also says whether
its control must be delivered (where the kernel takes that shape and the
program can read its ports), so a harness that delivers nothing fails too.
Around each send the program's counters are read (`stats -j`), and those
that changed are printed with a failure (all of them with CORPUS_VERBOSE=1):
what the program did (dropped_service, dropped_unparsed, non_ip, malformed,
passed, ...) beside what the kernel did.
"""
import json
import os
import select
import socket
import subprocess
import sys
import threading
import time

import logging
logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
from scapy.all import (Dot1AD, Dot1Q, Ether, IP, IPOption, IPv6,  # noqa: E402
                       IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting, Raw, SCTP,
                       SCTPChunkInit, SCTPChunkInitAck, TCP, UDP, conf, raw)

conf.verb = 0

TARGETS = ("service", "flow", "source", "control")
PROTO = {"tcp": 6, "udp": 17, "sctp": 132}
ALL = ("tcp", "udp", "sctp")	# sctp runs where the kernel has it


def serve(cfg):
    """TCP listeners (the kernel answers SYNs with SYN-ACKs) and UDP readers."""
    socks = []
    udps = []
    for addr, fam in ((cfg["sv4"], socket.AF_INET), (cfg["sv6"], socket.AF_INET6)):
        for port in (cfg["tcp_blocked"], cfg["tcp_open"]):
            s = socket.socket(fam, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((addr, port))
            s.listen(128)
            socks.append(s)
        for port in (cfg["sctp_blocked"], cfg["sctp_open"]) if cfg["sctp"] else ():
            s = socket.socket(fam, socket.SOCK_STREAM, PROTO["sctp"])
            s.bind((addr, port))
            s.listen(128)
            socks.append(s)
        for port in (cfg["udp_blocked"], cfg["udp_open"]):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            s.bind((addr, port))
            s.setblocking(False)
            udps.append(s)
    log = open(cfg["udp_log"], "a", buffering=1)
    print("ready", flush=True)
    end = time.monotonic() + cfg["serve_seconds"]
    while time.monotonic() < end and not os.path.exists(cfg["stop"]):
        r, _, _ = select.select(udps + socks, [], [], 0.1)
        for s in r:
            if s.type == socket.SOCK_STREAM:
                # A handshake a client completed: nothing to say to it.
                try:
                    c, _ = s.accept()
                    c.close()
                except OSError:
                    pass
                continue
            for _ in range(256):
                try:
                    data, peer = s.recvfrom(4096)
                except (BlockingIOError, InterruptedError):
                    break
                log.write("%s %s\n" % (data.decode("ascii", "replace").split()[0], peer[0]))


class Sniffer(threading.Thread):
    """SYN-ACKs arriving at the client's veth end (their acks, seq + 1), and
    SCTP INIT-ACKs (their verification tags, the INIT's initiate tag)."""

    def __init__(self, iface):
        super().__init__(daemon=True)
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        self.s.bind((iface, 0))
        self.s.settimeout(0.1)
        self.acks = set()
        self.tags = set()
        self.lock = threading.Lock()
        self.done = False

    def run(self):
        while not self.done:
            try:
                frame, addr = self.s.recvfrom(65535)
            except socket.timeout:
                continue
            if addr[2] == socket.PACKET_OUTGOING:
                continue
            try:
                pkt = Ether(frame)
            except Exception:
                continue
            t = pkt.getlayer(TCP)
            if t is not None and (t.flags & 0x12) == 0x12:
                with self.lock:
                    self.acks.add(t.ack)
            c = pkt.getlayer(SCTP)
            if c is not None and pkt.haslayer(SCTPChunkInitAck):
                with self.lock:
                    self.tags.add(c.tag)

    def seen(self, ack):
        with self.lock:
            return ack in self.acks

    def seen_tag(self, tag):
        with self.lock:
            return tag in self.tags


def counters(cfg):
    """The program's packet counters (not the bytes), from `stats -j`."""
    out = subprocess.run(cfg["stats_cmd"], capture_output=True, text=True, timeout=20)
    d = json.loads(out.stdout)[0]
    return {k: v for k, v in d.items() if isinstance(v, int) and not k.endswith("_bytes")}


def counted(before, after):
    """What the program counted between two reads: its verdicts on the
    frames sent, and on whatever else crossed meanwhile (the client's
    kernel answers each SYN-ACK with a RST: to a blocked target, the
    program drops it)."""
    diff = [(k, after[k] - before.get(k, 0)) for k in sorted(after)
            if k not in ("packets", "bytes", "bloom_hits") and after[k] != before.get(k, 0)]
    return ", ".join("%s %d" % kv for kv in diff) or "nothing"


# --- building the corpus -----------------------------------------------------

class Pkt:
    """One send: family, protocol, addresses, ports, its unique number."""

    def __init__(self, fam, proto, src, dst, sport, dport, n):
        self.fam, self.proto, self.src, self.dst = fam, proto, src, dst
        self.sport, self.dport, self.n = sport, dport, n

    def l4(self, **lie):
        """The L4 header and payload, checksummed for src and dst (with
        the header fields in LIE, checksummed too)."""
        if self.proto == "tcp":
            # With 16 bytes of data (a SYN may carry some; the SYN-ACK
            # acks the SYN alone), so each split leaves a second fragment.
            l4 = TCP(sport=self.sport, dport=self.dport, flags="S", seq=self.n << 8,
                     window=8192, **lie) / Raw(b"sieve corpus syn")
        elif self.proto == "sctp":
            l4 = SCTP(sport=self.sport, dport=self.dport, tag=0) / SCTPChunkInit(
                init_tag=self.n, a_rwnd=65535, n_out_streams=1, n_in_streams=1, init_tsn=1)
        else:
            l4 = UDP(sport=self.sport, dport=self.dport, **lie) / Raw(b"c%d pad-pad-pad-pad-pad" % self.n)
        ip = IP(src=self.src, dst=self.dst) if self.fam == 4 else IPv6(src=self.src, dst=self.dst)
        return raw(ip / l4)[20 if self.fam == 4 else 40:]

    def ip4(self, **kw):
        return IP(src=self.src, dst=self.dst, proto=PROTO[self.proto], **kw)

    def ip6(self, nh, **kw):
        return IPv6(src=self.src, dst=self.dst, nh=nh, **kw)


def l4proto(p):
    return PROTO[p.proto]


def frag4(p, first, opts=None, overlap=None):
    """The L4 bytes in two fragments, the first carrying FIRST bytes of it
    (IP options in it if OPTS); OVERLAP: a third fragment (offset, bytes)."""
    l4 = p.l4()
    o = {"options": opts} if opts else {}
    fid = p.n & 0xffff
    frames = [p.ip4(id=fid, flags="MF", frag=0, **o) / Raw(l4[:first])]
    if overlap:
        off, data = overlap
        frames.append(p.ip4(id=fid, flags="MF", frag=off) / Raw(data))
    second = max(1, (first + 7) // 8)	# 0 bytes first: a hole to time out
    frames.append(p.ip4(id=fid, frag=second) / Raw(l4[second * 8:]))
    return frames


def dst(nh, size=8):
    """A destination-options header of SIZE bytes: one PadN in 8 (Linux
    refuses more than 7 bytes of padding in a row), else options of type
    0x1e (experimental, "skip if unknown"), at most 8 of them (Linux's
    max_dst_opts_number)."""
    body = b"\x01\x04" + bytes(4)
    if size != 8:
        left = size - 2
        body = b""
        while left:
            n = min(left, 257)
            body += bytes([0x1e, n - 2]) + bytes(n - 2)
            left -= n
    return Raw(bytes([nh, size // 8 - 1]) + body)


def chain6(p, hdrs):
    """IPv6, then HDRS (a list of (kind, size)), then L4. Kinds: dst, hbh, rt, frag (atomic)."""
    codes = {"dst": 60, "hbh": 0, "rt": 43, "frag": 44}
    nhs = [codes[k] for k, _ in hdrs] + [l4proto(p)]
    pkt = p.ip6(nhs[0])
    for i, (k, size) in enumerate(hdrs):
        nh = nhs[i + 1]
        if k == "dst":
            pkt = pkt / dst(nh, size)
        elif k == "hbh":
            pkt = pkt / IPv6ExtHdrHopByHop(nh=nh)
        elif k == "rt":
            pkt = pkt / IPv6ExtHdrRouting(nh=nh, type=0, segleft=0, addresses=[])
        else:
            pkt = pkt / IPv6ExtHdrFragment(nh=nh, offset=0, m=0, id=p.n)
    return [pkt / Raw(p.l4())]


def frag6(p, first, pre=0, post=0, overlap=None):
    """Fragments of PRE dst headers + L4 (after the fragment header, as the
    fragmentable part: POST dst headers before it), the first carrying FIRST
    bytes; OVERLAP: a fragment (offset, bytes) sent between them."""
    body = Raw(p.l4())
    nh = l4proto(p)
    for _ in range(post):
        body = dst(nh) / body
        nh = 60
    frag_bytes = raw(body)
    unfrag = p.ip6(60 if pre else 44)
    for i in range(pre):
        unfrag = unfrag / dst(60 if i < pre - 1 else 44)
    frames = [unfrag / IPv6ExtHdrFragment(nh=nh, offset=0, m=1, id=p.n) / Raw(frag_bytes[:first])]
    if overlap:
        off, data = overlap
        frames.append(unfrag / IPv6ExtHdrFragment(nh=nh, offset=off, m=1, id=p.n) / Raw(data))
    second = max(1, (first + 7) // 8)
    frames.append(unfrag / IPv6ExtHdrFragment(nh=nh, offset=second, m=0, id=p.n) /
                  Raw(frag_bytes[second * 8:]))
    return frames


def ports_of(p, dport):
    """The first 8 bytes of P's L4 header with its destination port DPORT."""
    l4 = bytearray(p.l4()[:8])
    l4[2:4] = dport.to_bytes(2, "big")
    return bytes(l4)


def ihl_lie(p, ihl):
    pkt = raw(p.ip4() / Raw(p.l4()))
    return [Raw(bytes([0x40 | ihl]) + pkt[1:])]


def tot_len_lie(p, delta):
    ip = p.ip4() / Raw(p.l4())
    ip.len = len(raw(ip)) + delta
    return [ip]


def l4_lie(p, **lie):
    return [(p.ip4() if p.fam == 4 else p.ip6(l4proto(p))) / Raw(p.l4(**lie))]


def plain(p):
    return [(p.ip4() if p.fam == 4 else p.ip6(l4proto(p))) / Raw(p.l4())]


OPTS = [IPOption(b"\x01" * 40)]	# 40 bytes of NOPs: ihl 15


# Each shape: (name, families, protocols, builder, control delivered?).
# "control delivered" (or a dict of it per protocol): True where the kernel
# takes the shape and the program can read its ports (the control to an
# unblocked port must then arrive), False where the kernel must not take it
# (the shape's comment says why), None where it is only recorded: the
# kernel takes it but the program cannot find the ports, so by issue 20's
# rule it may drop the control too (a service and a flow entry of each
# family exist), or the kernel's answer is not what this test is about.
def shapes():
    s = [("plain", (4, 6), ALL, plain, True)]
    # RFC 1858 tiny fragments: the first carries 16, 8, 4, 2 or 0 bytes of
    # L4, with and without 40 bytes of IP options. A fragment with MF
    # carries a multiple of 8 bytes: Linux rounds 4 and 2 down to 0, and
    # drops a fragment of 0 bytes with its queue (ip_frag_queue: end ==
    # offset); the second fragment starts at byte 8 then, so nothing
    # reassembles.
    for first in (16, 8, 4, 2, 0):
        # RFC 1858 (3.2) has a filter drop a TCP fragment at offset 1
        # (8 bytes), which follows a first fragment of 8 bytes only.
        want = {"tcp": first == 16 or None, "udp": first in (16, 8),
                "sctp": first in (16, 8)}
        s.append(("frag4_l4_%d" % first, (4,), ALL,
                  lambda p, f=first: frag4(p, f), want))
        s.append(("frag4_l4_%d_opts" % first, (4,), ALL,
                  lambda p, f=first: frag4(p, f, OPTS), want))
    # Overlaps: RFC 1858's offset-1 fragment (TCP flags; UDP payload), and
    # an offset-0 duplicate first fragment naming the other port. Linux
    # ignores a fragment inside what it holds (the first one wins) and
    # drops the datagram on any other overlap.
    s.append(("frag4_overlap_off1", (4,), ALL,
              lambda p: frag4(p, 16, overlap=(1, p.l4()[8:16])), None))
    s.append(("frag4_overlap_off0_ports", (4,), ALL,
              lambda p: frag4(p, 8, overlap=(0, ports_of(p, p.dport ^ 1))), None))
    # IPv6: 1..12 destination-options headers before the L4 header.
    for n in range(1, 13):
        s.append(("dst6_x%d" % n, (6,), ALL,
                  lambda p, n=n: chain6(p, [("dst", 8)] * n), True if n <= 8 else None))
    # Hop-by-hop + routing (type 0, segments left 0) + atomic fragment,
    # then destination options: 3 + k headers.
    for k in (0, 1, 5, 6, 9):
        s.append(("hbh_rt_frag_dst6_x%d" % k, (6,), ALL,
                  lambda p, k=k: chain6(p, [("hbh", 8), ("rt", 8), ("frag", 8)] +
                                       [("dst", 8)] * k), True if k <= 5 else None))
    # Wide headers: 1 KiB of options (hdrlen 127), within the frame.
    s.append(("dst6_wide_x1", (6,), ALL, lambda p: chain6(p, [("dst", 1024)]), True))
    # Oversized: a header whose length runs past the packet (dropped).
    s.append(("dst6_past_end", (6,), ALL,
              lambda p: [p.ip6(60) / Raw(bytes([l4proto(p), 255]) + bytes(6) + p.l4())], False))
    # Hop-by-hop not first (RFC 8200: only right after the IPv6 header).
    s.append(("hbh6_not_first", (6,), ALL,
              lambda p: chain6(p, [("dst", 8), ("hbh", 8)]), False))
    # A fragment header inside a fragment header's atomic datagram.
    s.append(("frag6_in_frag6", (6,), ALL,
              lambda p: chain6(p, [("frag", 8), ("frag", 8)]), None))
    # IPv6 tiny first fragments (RFC 7112: the first fragment must hold the
    # whole chain and the L4 header; Linux checks 20 bytes of TCP, 8 of
    # UDP, 1 of anything else, such as SCTP).
    for first in (16, 8, 0):
        s.append(("frag6_l4_%d" % first, (6,), ALL, lambda p, f=first: frag6(p, f),
                  {"tcp": False, "udp": first > 0, "sctp": first > 0}))
    # The chain itself split between fragments: destination options in the
    # first fragment, more of them and the L4 header in the second. Linux
    # drops a first fragment without the L4 header only when it can walk
    # the chain to it (ipv6frag_thdr_truncated): one cut inside the chain
    # passes, and reassembles.
    for post in (1, 2, 9):
        s.append(("frag6_chain_split_dst_x%d" % post, (6,), ALL,
                  lambda p, n=post: frag6(p, 8 * (n - 1) if n > 1 else 8, post=n),
                  False if post == 1 else None))
    # Eight destination-options headers before the fragment header.
    s.append(("frag6_behind_dst_x8", (6,), ALL,
              lambda p: frag6(p, 24, pre=8), None))
    # RFC 5722: an overlapping fragment rewriting the ports (the L4 header
    # behind a destination-options header, so at offset 1).
    s.append(("frag6_overlap_ports", (6,), ALL,
              lambda p: frag6(p, 24, post=1, overlap=(1, ports_of(p, p.dport ^ 1))), None))
    # A type 0 routing header with a segment left (RFC 5095 deprecates it:
    # Linux drops it) naming the server itself.
    s.append(("rt0_segleft1", (6,), ALL,
              lambda p: [p.ip6(43) / IPv6ExtHdrRouting(nh=l4proto(p), type=0, segleft=1,
                                                      addresses=[p.dst]) / Raw(p.l4())], False))
    # Tunnels: no tunnel device in the server's namespace takes them.
    s.append(("ipip4", (4,), ALL, lambda p: [IP(src=p.src, dst=p.dst, proto=4) / plain(p)[0]],
              False))
    s.append(("ip6ip6", (6,), ALL, lambda p: [p.ip6(41) / plain(p)[0]], False))
    # IPv4 header lies: ihl < 5, ihl past the packet, tot_len past the
    # frame, tot_len below the header, tot_len cutting the L4 header.
    s.append(("ihl4_4", (4,), ALL, lambda p: ihl_lie(p, 4), False))
    s.append(("ihl4_15_short", (4,), ALL, lambda p: ihl_lie(p, 15), False))
    s.append(("tot_len4_long", (4,), ALL, lambda p: tot_len_lie(p, 64), False))
    s.append(("tot_len4_below_ihl", (4,), ALL,
              lambda p: tot_len_lie(p, -len(raw(plain(p)[0])) + 12), False))
    s.append(("tot_len4_cuts_l4", (4,), ALL,
              lambda p: tot_len_lie(p, -len(p.l4()) + 4), False))
    # L4 header lies (checksums right): a TCP data offset of 0 or past the
    # segment; a UDP length of 0 (IPv6 takes it as a jumbogram's: the
    # packet's length) or 7.
    s.append(("tcp_doff_0", (4, 6), ("tcp",), lambda p: l4_lie(p, dataofs=0), False))
    s.append(("tcp_doff_15", (4, 6), ("tcp",), lambda p: l4_lie(p, dataofs=15), False))
    s.append(("udp_len_0", (4,), ("udp",), lambda p: l4_lie(p, len=0), False))
    s.append(("udp_len_0", (6,), ("udp",), lambda p: l4_lie(p, len=0), True))
    s.append(("udp_len_7", (4, 6), ("udp",), lambda p: l4_lie(p, len=7), False))
    # VLAN: the server's end has no VLAN device. Priority tags (VID 0) the
    # kernel strips, nested ones too, as many as there are
    # (__netif_receive_skb_core: check_vlan_id); a non-zero VID makes the
    # frame another host's (PACKET_OTHERHOST), which IP drops.
    for tags, want in (([(0x8100, 0)], True), ([(0x88a8, 0), (0x8100, 0)], True),
                       ([(0x8100, 0)] * 3, None), ([(0x8100, 0)] * 6, None),
                       ([(0x88a8, 5), (0x8100, 7)], False)):
        name = "vlan_" + "_".join("%s%d" % ("ad" if t == 0x88a8 else "q", v) for t, v in tags)
        s.append((name, (4, 6), ALL, ("vlan", tags, plain), want))
    return s


# --- running it --------------------------------------------------------------

class Runner:
    def __init__(self, cfg):
        self.cfg = cfg
        self.n = 0x1000
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
        self.sock.bind((cfg["iface"], 0))
        self.sniffer = Sniffer(cfg["iface"])
        self.sniffer.start()
        self.sent = []		# (case, proto, target, n) of every send
        self.flows = {}		# flow entries used, per (family, protocol)
        self.reported = set()	# (case, target) told as delivered
        self.passed = 0
        self.failed = 0

    def udp_seen(self):
        try:
            with open(self.cfg["udp_log"]) as f:
                return {line.split()[0] for line in f if line.strip()}
        except FileNotFoundError:
            return set()

    def delivered(self, proto, n):
        if proto == "tcp":
            return self.sniffer.seen(((n << 8) + 1) & 0xffffffff)
        if proto == "sctp":
            return self.sniffer.seen_tag(n)
        return "c%d" % n in self.udp_seen()

    def pkt(self, fam, proto, target):
        c = self.cfg
        f = str(fam)
        self.n += 1
        blocked_port, open_port = c[proto + "_blocked"], c[proto + "_open"]
        sport = 20000 + self.n % 20000
        src = c["a" + f]
        dport = open_port
        if target == "service":
            dport = blocked_port
        elif target == "flow":
            # A flow entry of its own each send: a SYN-ACK the client's RST
            # cannot take back (the program drops the RST, of the blocked
            # flow) leaves a request socket, which a second SYN of the same
            # flow would find.
            k = self.flows.get((fam, proto), 0)
            if k >= c["flow_ports"]:
                raise SystemExit("corpus.py: more flow sends than flow entries")
            self.flows[(fam, proto)] = k + 1
            src, sport = c["flow" + f], c["flow_sport"] + k
        elif target == "source":
            src = c["bs" + f]
        return Pkt(fam, proto, src, c["sv" + f], sport, dport, self.n)

    def send(self, fam, frames):
        """Each frame on the wire; the EtherType said, as a lie may be raw bytes."""
        etype = 0x0800 if fam == 4 else 0x86dd
        for f in frames:
            tags = []
            if isinstance(f, tuple):
                tags, f = f
            types = [t for t, _ in tags] + [etype]
            e = Ether(src=self.cfg["cl_mac"], dst=self.cfg["sv_mac"], type=types[0])
            for i, (_, vid) in enumerate(tags):
                cls = Dot1AD if types[i] == 0x88a8 else Dot1Q
                e = e / cls(vlan=vid, type=types[i + 1])
            self.sock.send(raw(e / f))

    def build(self, builder, p):
        """The shape's frames: L3 packets, or (VLAN tags, L3 packet)."""
        if isinstance(builder, tuple):
            _, tags, inner = builder
            return [(tags, f) for f in inner(p)]
        return builder(p)

    def one(self, name, fam, proto, builder, want):
        case = "e2e_corpus_v%d_%s_%s" % (fam, proto, name)
        if isinstance(want, dict):
            want = want[proto]
        results = {}
        before = counters(self.cfg)
        for target in TARGETS:
            p = self.pkt(fam, proto, target)
            frames = self.build(builder, p)
            self.send(fam, frames)
            # The control goes last: once it is delivered, what went before
            # it on the same path has been decided too.
            if target == "control":
                end = time.monotonic() + (3.0 if want else 0.4)
                while time.monotonic() < end and not self.delivered(proto, p.n):
                    time.sleep(0.02)
                time.sleep(0.05)
            # The program runs in the peer's NAPI poll, not in send():
            # wait (bounded) until it has counted as many packets.
            after = counters(self.cfg)
            end = time.monotonic() + 1.0
            while (after["packets"] - before["packets"] < len(frames) and
                   time.monotonic() < end):
                after = counters(self.cfg)
            results[target] = (p.n, len(frames), counted(before, after))
            before = after
            self.sent.append((case, proto, target, p.n))
        bad = []
        notes = []
        for target in TARGETS:
            n, nframes, prog = results[target]
            got = self.delivered(proto, n)
            what = "%s: kernel %s; %d frames sent, the program counted %s" % (
                target, "DELIVERED" if got else "did not deliver", nframes, prog)
            notes.append(what)
            if target != "control" and got:
                self.reported.add((case, target))
                bad.append("blocked %s delivered (%s)" % (target, what))
            if target == "control" and want is True and not got:
                bad.append("control not delivered: the kernel takes this shape (%s)" % what)
            if target == "control" and want is False and got:
                bad.append("control delivered, the test expects the kernel to drop it")
        self.report(case, bad, notes)

    def report(self, case, bad, notes):
        if bad:
            self.failed += 1
            print("FAIL %s" % case)
            for b in bad:
                print("    FAIL: %s" % b)
        else:
            self.passed += 1
            print("ok   %s" % case)
        if self.cfg.get("verbose") or bad:
            for note in notes:
                print("    note: %s" % note)
        sys.stdout.flush()

    def sweep(self):
        """Late deliveries: anything to a blocked target since its shape ran."""
        time.sleep(0.5)
        late = [(case, target) for case, proto, target, n in self.sent
                if target != "control" and (case, target) not in self.reported and
                self.delivered(proto, n)]
        return late


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("serve", "run"):
        sys.exit(__doc__)
    with open(sys.argv[2]) as f:
        cfg = json.load(f)
    if sys.argv[1] == "serve":
        serve(cfg)
        return
    r = Runner(cfg)
    flt = cfg.get("filter", "")
    for name, fams, protos, builder, want in shapes():
        for fam in fams:
            for proto in protos:
                if proto == "sctp" and not cfg["sctp"]:
                    continue
                if flt in "e2e_corpus_v%d_%s_%s" % (fam, proto, name):
                    r.one(name, fam, proto, builder, want)
    for case, target in r.sweep():
        print("FAIL %s: its blocked %s was delivered late" % (case, target))
        r.failed += 1
    r.sniffer.done = True
    with open(cfg["results"], "w") as f:
        f.write("%d %d\n" % (r.passed, r.failed))
    print("%d passed, %d failed" % (r.passed, r.failed))
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
