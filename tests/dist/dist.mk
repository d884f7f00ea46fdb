# SPDX-License-Identifier: GPL-2.0
#
# The packaging's suites (dist/dist.mk builds what they judge):
#
#   make test-service  dist/systemd/sieve.service through systemd-analyze:
#                      verify, and security's exposure figure under a
#                      threshold (tests/dist/service_test.sh), ~2 s
#   make test-dkms     DKMS builds sieve.ko from the sieve-dkms tree for the
#                      VM's kernel (Debian's 6.1, VM_ABI) in a DKMS tree of
#                      its own (dkms_test.sh), then the VM boots with that
#                      module and nothing else of the VM suite, and runs a
#                      smoke of the CLI on it (dkms_vm.sh), ~2.5 min
#   make test-deb      make deb, then lintian, install, use, purge
#                      (deb_test.sh; root), ~5 min; the releases agree
#                      (release_test.sh); the upgrade from the previous
#                      release under traffic (upgrade.mk, upgrade_test.sh)
#
# Each writes "PASSED FAILED" to $(RESULTS)/<suite>. With T=NAME (the top
# Makefile): service and dkms are one case each (named so); deb runs those
# of its parts deb_test, release_test, upgrade_test whose name holds NAME.

DKMS_TEST := $(BUILD)/dkms/test
DKMS_KO := $(DKMS_TEST)/sieve.ko
DKMS_VM_INITRD := $(DKMS_TEST)/initramfs.cpio.gz

.PHONY: test-service test-dkms test-deb

test-service: $(BUILD)/sieve
	$(call msg,TEST,service)
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/service
	$(Q)$(call t_one_case,service,service) status=0; \
		tests/dist/service_test.sh dist/systemd/sieve.service $(BUILD)/sieve \
		$(RESULTS)/service || status=$$?; \
		if [ ! -s $(RESULTS)/service ]; then \
			echo "service_test.sh died (status $$status)"; echo "0 1" > $(RESULTS)/service; \
		fi; exit $$status

# The VM gets the DKMS-built module as its only module, the static CLI and
# dkms_vm.sh; init.sh loads /lib/sieve/sieve.ko as for every VM run. The
# host part and the VM's report are summed into one result.
test-dkms: vm-kernel $(CLI_STATIC)
	$(call msg,TEST,dkms)
	$(Q)$(call t_one_case,dkms,dkms) mkdir -p $(RESULTS) $(DKMS_TEST) && \
		rm -f $(RESULTS)/dkms $(DKMS_TEST)/host $(DKMS_TEST)/vm
	$(Q)$(MAKE) dkms-src DKMS_SRC=$(DKMS_TEST)/src/sieve-$(SIEVE_VERSION)
	$(Q)status=0; \
		$(if $(CROSS_COMPILE),DKMS_ARCH=$(TARGET_MACHINE) DKMS_KERNEL_SOURCE=$(VM_KDIR) \
			CROSS_COMPILE=$(CROSS_COMPILE)) \
		tests/dist/dkms_test.sh $(DKMS_TEST)/src/sieve-$(SIEVE_VERSION) $(VM_ABI) \
			$(DKMS_TEST)/work $(DKMS_KO) $(DKMS_TEST)/host || status=$$?; \
		if [ -f $(DKMS_KO) ]; then \
			$(if $(VM_BUSYBOX),BUSYBOX=$(VM_BUSYBOX)) \
			tests/vm/initramfs.sh $(DKMS_VM_INITRD) tests/vm/init.sh \
				$(DKMS_KO)=/lib/sieve/sieve.ko $(CLI_STATIC)=/tests/bin/sieve \
				$(foreach m,$(vm_kernel_modules),$(m)=/lib/sieve/$(notdir $(m))) \
				tests/dist/dkms_vm.sh=/tests/10-dkms.sh && \
			tests/vm/run.sh --kernel "$$($(vm_kernel))" --initrd $(DKMS_VM_INITRD) \
				--out $(DKMS_TEST)/run --timeout $(VM_TIMEOUT) --results $(DKMS_TEST)/vm \
				$(VM_VERBOSE) $(if $(VM_ARCH),--arch $(VM_ARCH)) || status=$$?; \
		fi; \
		passed=0; failed=0; \
		for part in host vm; do \
			if read p f < $(DKMS_TEST)/$$part 2>/dev/null; then \
				passed=$$((passed + p)); failed=$$((failed + f)); \
			else echo "dkms: the $$part part left no result"; failed=$$((failed + 1)); fi; \
		done; \
		echo "$$passed $$failed" > $(RESULTS)/dkms; \
		echo "dkms: $$passed passed, $$failed failed"; \
		[ "$$failed" -eq 0 ] && [ "$$status" -eq 0 ]

# Two runs that install the packages at once would purge them under each
# other (and dpkg's lock fails, not waits): both take this lock.
PACKAGES_TEST_LOCK := /run/lock/sieve-packages-test.lock

# Three parts, summed into $(RESULTS)/deb: deb_test.sh, release_test.sh
# (VERSION, CHANGELOG.md and the packages agree) and the upgrade from the
# previous release (upgrade.mk, upgrade_test.sh, ~40 s more, plus ~15 s
# once per UPGRADE_FROM_REV to build its packages).
# The packages are prerequisites (a recipe line that recurses runs under
# make -n, and tests/unit/t_test.sh dry-runs every suite).
test-deb: deb $(if $(T),$(if $(findstring $(T),upgrade_test),upgrade-old-deb),upgrade-old-deb)
	$(call msg,TEST,deb)
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/deb $(RESULTS)/deb.*
	$(Q)status=0; parts=; \
		wanted() { case $$1 in *'$(T)'*) parts="$$parts $$2";; *) return 1;; esac; }; \
		if wanted deb_test install; then flock -w 900 $(PACKAGES_TEST_LOCK) \
			tests/dist/deb_test.sh $(DEB_DIR) $(SIEVE_VERSION) $(RESULTS)/deb.install || status=$$?; fi; \
		if wanted release_test release; then \
			tests/dist/release_test.sh $(TOP) $(DEB_DIR) $(RESULTS)/deb.release || status=$$?; fi; \
		if wanted upgrade_test upgrade; then \
			tests/dist/upgrade_test.sh $(UPGRADE_OLD_DEBS) $(DEB_DIR) \
			$(UPGRADE_FROM_REV) $(RESULTS)/deb.upgrade || status=$$?; fi; \
		passed=0; failed=0; \
		for part in $$parts; do \
			if read p f < $(RESULTS)/deb.$$part 2>/dev/null; then \
				passed=$$((passed + p)); failed=$$((failed + f)); \
			else echo "deb: the $$part part left no result (status $$status)"; failed=$$((failed + 1)); fi; \
		done; \
		echo "$$passed $$failed" > $(RESULTS)/deb; $(call t_result,deb) \
		read passed failed < $(RESULTS)/deb; \
		echo "deb: $$passed passed, $$failed failed"; \
		[ "$$failed" -eq 0 ] && [ "$$status" -eq 0 ]

SUITES += service dkms deb
