# SPDX-License-Identifier: GPL-2.0
#
# make test-e2e: the XDP blocklist on real traffic between network
# namespaces of its own (root): ping, UDP and TCP; every entry kind; load
# under traffic; detach; native and generic modes; the CLI's errors; the
# agent; the adversarial packet corpus (corpus.sh: crafted frames from
# scapy, judged by what the kernel delivers); then the fleet (fleet.sh: 4
# hosts following a redis-server of the suite's own); then CrowdSec
# (crowdsec.sh: the agent following Debian's crowdsec as an offline Local
# API of the suite's own); last, `make demo-xdp`'s script (demo.sh:
# enforced, cleaned up, fails when a block is not enforced). T=NAME (the
# top Makefile) runs only the cases whose name holds NAME (e2e_*; the
# corpus's are e2e_corpus_*, the fleet's e2e_fleet_*, CrowdSec's
# e2e_crowdsec_*, the demo's e2e_demo_*); a script with none sets nothing up.

$(if $(E2E_FILTER),$(error E2E_FILTER is gone: make test-e2e T=$(E2E_FILTER)))

# The upgrade cases replace the program of the commit before issue 20's
# packet fixes, attached by that commit's own CLI: built once from git
# history (git archive) into $(BUILD). Without the history (a tarball)
# the cases say loudly that they skip.
E2E_OLD_REV ?= 9fddb3c
E2E_OLD_DIR := $(BUILD)/e2e-old-$(E2E_OLD_REV)
E2E_OLD_SIEVE := $(E2E_OLD_DIR)/build/sieve

.PHONY: e2e-old-sieve
e2e-old-sieve:
	$(Q)if [ -x $(E2E_OLD_SIEVE) ]; then :; \
	elif git -C $(TOP) rev-parse -q --verify $(E2E_OLD_REV)^{commit} >/dev/null 2>&1; then \
		echo "  BUILD    sieve of $(E2E_OLD_REV) (the upgrade cases' old program)"; \
		rm -rf $(E2E_OLD_DIR) && mkdir -p $(E2E_OLD_DIR) && \
		git -C $(TOP) archive $(E2E_OLD_REV) | tar -x -C $(E2E_OLD_DIR) && \
		$(MAKE) -s -C $(E2E_OLD_DIR) $(E2E_OLD_SIEVE) >$(E2E_OLD_DIR).log 2>&1 || \
		{ echo "building the sieve of $(E2E_OLD_REV) failed: see $(E2E_OLD_DIR).log"; exit 1; }; \
	else \
		echo "WARNING: no commit $(E2E_OLD_REV) in this checkout: the upgrade cases will skip"; \
	fi

.PHONY: test-e2e
test-e2e: $(BUILD)/sieve $(XDP_BENCH_FLOOR) e2e-old-sieve
	$(call msg,TEST,e2e)
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/e2e $(RESULTS)/e2e.*
	$(Q)status=0; for s in e2e corpus fleet crowdsec demo; do \
		E2E_OLD_SIEVE=$(E2E_OLD_SIEVE) tests/e2e/$$s.sh $(BUILD)/sieve $(RESULTS)/e2e.$$s $(T) || status=1; \
		if [ ! -s $(RESULTS)/e2e.$$s ]; then \
			echo "$$s.sh died"; echo "0 1" > $(RESULTS)/e2e.$$s; \
		fi; \
	done; \
	cat $(RESULTS)/e2e.e2e $(RESULTS)/e2e.corpus $(RESULTS)/e2e.fleet $(RESULTS)/e2e.crowdsec \
		$(RESULTS)/e2e.demo | \
		awk '{ p += $$1; f += $$2 } END { print p, f }' > $(RESULTS)/e2e; \
	$(call t_result,e2e) exit $$status

SUITES += e2e
DEB_PACKAGES += iproute2 iputils-ping util-linux redis-server redis-tools git bpftool python3-scapy strace \
	fail2ban
