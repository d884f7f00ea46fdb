# SPDX-License-Identifier: GPL-2.0
#
# make bench-crowdsec (part of make bench, never of make test): sieve's
# agent ([crowdsec] in sieve.conf) and Debian's crowdsec-firewall-bouncer,
# ipset and nftables modes, following the same offline CrowdSec Local API
# in one run: start-up sync of BENCH_CROWDSEC_N decisions (default 10^4;
# the issue's size, 100000, takes the bouncer's nftables mode ~10 minutes),
# add and delete to enforcement (median, p99 of 20), RSS and CPU.
# BENCH_CROWDSEC_MODES="sieve ipset" skips a mode; tests/e2e/crowdsec_bench.py
# has the rest. Writes $(BUILD)/bench/crowdsec.txt and .json. Where others
# run the e2e suite: `flock /work/e2e.lock make bench-crowdsec`.
#
# Debian's crowdsec registers with CrowdSec's Central API from its postinst
# unless online_api_credentials.yaml is there first: the file goes in
# before the packages, so that nothing here reaches outside the machine.
BENCH_CROWDSEC_PACKAGES := crowdsec crowdsec-firewall-bouncer ipset nftables curl

.PHONY: bench-crowdsec crowdsec-deps
crowdsec-deps:
	$(Q)if ! dpkg-query -W -f='$${Status}' crowdsec 2>/dev/null | grep -q 'install ok installed'; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		$$sudo mkdir -p /etc/crowdsec && \
		{ [ -e /etc/crowdsec/online_api_credentials.yaml ] || \
		  echo '# offline: no Central API' | $$sudo tee /etc/crowdsec/online_api_credentials.yaml >/dev/null; }; \
	fi
	$(Q)$(call deps_install,$(BENCH_CROWDSEC_PACKAGES))

bench-crowdsec: deps crowdsec-deps $(BUILD)/sieve
	$(call msg,BENCH,$(BUILD)/bench/crowdsec.txt)
	$(Q)mkdir -p $(BUILD)/bench && tests/e2e/crowdsec_bench.py $(BUILD)/sieve $(BUILD)/bench/crowdsec

BENCHES += bench-crowdsec
