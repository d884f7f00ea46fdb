# SPDX-License-Identifier: GPL-2.0
#
# tests/faultinj: allocation failures through /dev/sieve (included by
# tests/debug/debug.mk; runs on the debug kernel only, the one with
# failslab, fail_page_alloc and fail-nth).
#
# sieve_faultinj_test sweeps "fail the Nth allocation" (fail-nth, this task
# only) over CREATE of each type, single and batched ADD, QUERY and DELETE,
# the growth of scalable filters, IMPORT, EXPORT, INFO, MERGE and CLEAR,
# until every allocation point on each path has failed once: each failed
# call must return -ENOMEM and leave nothing half-done, the known keys of
# two filters stay present, and the call then succeeds without injection.
# It prints the injection points per operation; its filters are destroyed
# at the end, so the kmemleak scan after the suites sees any leak.

FAULTINJ_DIR := $(BUILD)/faultinj
FAULTINJ_PROG := $(FAULTINJ_DIR)/sieve_faultinj_test

DEBUG_VM_PROGS += $(FAULTINJ_PROG)
DEBUG_VM_SCRIPTS += tests/faultinj/faultinj.sh

$(FAULTINJ_PROG): tests/faultinj/faultinj_test.c tests/device/dev.c $(DEV_HDRS)
	$(call msg,LD,$@)
	$(Q)mkdir -p $(@D) && $(CC) $(DEV_CFLAGS) -I$(TOP)/tests/device -o $@ $< tests/device/dev.c
