# SPDX-License-Identifier: GPL-2.0
# The filter cores: compiled unchanged into sieve.ko (kmod/Kbuild) and into
# userspace's libsieve and test runners (the top Makefile). One list, read
# by both.
SIEVE_CORES := filter bloom blocked_bloom cuckoo sizing layers snapshot create
