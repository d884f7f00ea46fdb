# SPDX-License-Identifier: GPL-2.0
#
# `make demo-xdp`: the XDP blocklist demo alone (userspace/xdp/demo.sh),
# without the VM of `make demo`: two network namespaces of its own, real
# pings, every verdict checked (exit 1 if a block is not enforced), all of
# it removed at the end, also on failure. Root. It installs only the
# packages the CLI and the demo need (DEPS_XDP), builds only the CLI, and
# takes about 16 s on a fresh clone (the packages there), 9 s once built.

DEPS_XDP := make gcc libc6-dev clang llvm libbpf-dev libelf-dev zlib1g-dev pkg-config \
	libsqlite3-dev bpftool iproute2 iputils-ping util-linux

.PHONY: deps-xdp demo-xdp
deps-xdp:
	$(Q)$(call deps_install,$(DEPS_XDP))

demo-xdp: deps-xdp
	$(Q)$(MAKE) $(BUILD)/sieve
	$(Q)userspace/xdp/demo.sh $(BUILD)/sieve
