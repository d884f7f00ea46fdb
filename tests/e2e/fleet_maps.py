#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What an interface's live maps hold, read from its pins with no side
effect: unlike `sieve xdp status`, which brings maps found behind the store
in step itself, this only looks. The fleet suite and bench use it to see
what an agent has put into the maps packets use.

  fleet_maps.py show PINDIR...                "ENTRIES STORE_VERSION GEN" per folder
  fleet_maps.py wait PINDIR ENTRIES SECONDS   ms until the live config holds ENTRIES
                                              entries (exit 1 and "never" past SECONDS)

PINDIR: /sys/fs/bpf/sieve/netns-INODE/IFACE. The live config is
sieve_cfg[sieve_active[0] & 1] (include/sieve_xdp.h); a live add writes its
keys into the maps before it publishes the config with the store's new
version, so a version seen here is enforced.
"""
import ctypes
import os
import platform
import struct
import sys
import time

BPF_MAP_LOOKUP_ELEM = 1
BPF_OBJ_GET = 7
BPF_OBJ_GET_INFO_BY_FD = 15
SYS_BPF = {"x86_64": 321, "aarch64": 280}[platform.machine()]
NR_GENS = 2

# struct sieve_xdp_config with SIEVE_XDP_MAX_PREFIX_LENS 16: the offsets of the fields it
# reads, and the size of the config that first had them (later ones append).
CONFIG_SIZE = 440
OFF_ENTRIES = 368
OFF_GEN_SEQ = 396
OFF_STORE_VERSION = 408

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def bpf(cmd, attr):
    ret = libc.syscall(SYS_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    if ret < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return ret


def obj_get(path):
    attr = ctypes.create_string_buffer(128)
    name = ctypes.create_string_buffer(path.encode())
    struct.pack_into("=Q", attr, 0, ctypes.addressof(name))
    return bpf(BPF_OBJ_GET, attr)


def value_size(fd):
    info = ctypes.create_string_buffer(96)
    attr = ctypes.create_string_buffer(128)
    struct.pack_into("=IIQ", attr, 0, fd, len(info), ctypes.addressof(info))
    bpf(BPF_OBJ_GET_INFO_BY_FD, attr)
    return struct.unpack_from("=I", info, 12)[0]


class LiveMaps:
    """The active and config maps of one interface, opened once."""

    def __init__(self, pin_dir):
        self.active = obj_get(os.path.join(pin_dir, "sieve_active"))
        self.cfg = obj_get(os.path.join(pin_dir, "sieve_cfg"))
        size = value_size(self.cfg)
        # Fields are only ever appended: a longer config reads as far as these go.
        if size < CONFIG_SIZE:
            raise SystemExit("%s: sieve_cfg values are %d bytes, this reader needs %d"
                             % (pin_dir, size, CONFIG_SIZE))
        self.key = ctypes.create_string_buffer(4)
        self.val = ctypes.create_string_buffer(size)
        self.attr = ctypes.create_string_buffer(128)

    def lookup(self, fd, key):
        struct.pack_into("=I", self.key, 0, key)
        struct.pack_into("=IIQQQ", self.attr, 0, fd, 0, ctypes.addressof(self.key),
                         ctypes.addressof(self.val), 0)
        bpf(BPF_MAP_LOOKUP_ELEM, self.attr)

    def config(self):
        """(entries, store_version, gen_seq) of the live generation."""
        self.lookup(self.active, 0)
        gen = struct.unpack_from("=I", self.val, 0)[0] & (NR_GENS - 1)
        self.lookup(self.cfg, gen)
        return (struct.unpack_from("=Q", self.val, OFF_ENTRIES)[0],
                struct.unpack_from("=Q", self.val, OFF_STORE_VERSION)[0],
                struct.unpack_from("=I", self.val, OFF_GEN_SEQ)[0])

    def version(self):
        return self.config()[1]


def show(dirs):
    for d in dirs:
        print(*LiveMaps(d).config())


def wait(pin_dir, entries, seconds):
    t0 = time.monotonic()
    end = t0 + float(seconds)
    maps = None
    while time.monotonic() < end:
        try:
            maps = maps or LiveMaps(pin_dir)
            if maps.config()[0] == int(entries):
                print(round((time.monotonic() - t0) * 1000))
                return 0
        except OSError:
            maps = None	# not attached yet, or its pins are being replaced
        time.sleep(0.005)
    print("never")
    return 1


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "show":
        show(sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "wait":
        sys.exit(wait(*sys.argv[2:]))
    else:
        sys.exit(__doc__)
