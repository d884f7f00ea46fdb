# SPDX-License-Identifier: GPL-2.0
#
# make test-e2e: the XDP blocklist on real traffic between network
# namespaces of its own (root): ping, UDP and TCP; every entry kind; load
# under traffic; detach; native and generic modes; the CLI's errors; the
# agent; the adversarial packet corpus (corpus.sh: crafted frames from
# scapy, judged by what the kernel delivers); then the fleet (fleet.sh: 4
# hosts following a redis-server of the suite's own). E2E_FILTER=substring
# runs only the matching cases (the corpus's are named e2e_corpus_*, the
# fleet's e2e_fleet_*).

E2E_FILTER ?=

.PHONY: test-e2e
test-e2e: $(BUILD)/sieve $(BUILD)/bpf/floor.bpf.o
	$(call msg,TEST,e2e)
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/e2e $(RESULTS)/e2e.*
	$(Q)status=0; for s in e2e corpus fleet; do \
		tests/e2e/$$s.sh $(BUILD)/sieve $(RESULTS)/e2e.$$s $(E2E_FILTER) || status=1; \
		if [ ! -s $(RESULTS)/e2e.$$s ]; then \
			echo "$$s.sh died"; echo "0 1" > $(RESULTS)/e2e.$$s; \
		fi; \
	done; \
	cat $(RESULTS)/e2e.e2e $(RESULTS)/e2e.corpus $(RESULTS)/e2e.fleet | \
		awk '{ p += $$1; f += $$2 } END { print p, f }' > $(RESULTS)/e2e; exit $$status

SUITES += e2e
DEB_PACKAGES += iproute2 iputils-ping util-linux redis-server redis-tools python3-scapy
