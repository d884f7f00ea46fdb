# SPDX-License-Identifier: GPL-2.0
#
# make test-e2e: the XDP blocklist on real traffic between network
# namespaces of its own (root): ping, UDP and TCP; every entry kind; load
# under traffic; detach; native and generic modes; the CLI's errors.
# E2E_FILTER=substring runs only the matching cases.

E2E_FILTER ?=

.PHONY: test-e2e
test-e2e: $(BUILD)/sieve $(BUILD)/bpf/floor.bpf.o
	$(call msg,TEST,e2e)
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/e2e
	$(Q)status=0; tests/e2e/e2e.sh $(BUILD)/sieve $(RESULTS)/e2e $(E2E_FILTER) || status=$$?; \
		if [ ! -s $(RESULTS)/e2e ]; then \
			echo "e2e.sh died (status $$status)"; echo "0 1" > $(RESULTS)/e2e; \
		fi; exit $$status

SUITES += e2e
DEB_PACKAGES += iproute2 iputils-ping util-linux
