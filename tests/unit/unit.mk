# SPDX-License-Identifier: GPL-2.0
#
# tests/unit: the filter cores in userspace under cmocka. Every shared case
# of tests/cases/core_cases.c plus the tests only userspace can afford
# (millions of keys, statistics against libm), and libsieve's local filters
# and snapshot files, one cmocka test each; then the sieve CLI on local
# filters and snapshot files (cli_test.sh), its bash completion
# (completion_test.sh), the man pages against the CLI's table and
# libsieve.h (man_test.sh), what a command loads and reads before it works
# (startup_test.sh: none of the agent's libraries; a bounded log after a
# bulk load), libsieve installed with `make install` into a scratch
# root, used through pkg-config (install_test.sh), VERSION against
# CHANGELOG.md's releases (tests/dist/release_test.sh), and the folders'
# includes pointing only down (layers_test.sh), and T= reaching every
# suite (t_test.sh).
#
# The runner links its own copy of the cores built with AddressSanitizer and
# UBSan, so an overrun, a leak or an undefined shift in a core fails the
# suite; `make test-unit UNIT_SANITIZE=` builds them without. Either way the
# runner's cores are its own build, which counts its whole-table reads
# (SIEVE_COUNT_SCANS, see userspace/lib/sieve_env.h) where libsieve's
# cores do not.
# T=NAME (the top Makefile) runs only the cmocka tests and the shell parts
# (cli_test, man_test, ...) whose name holds NAME; UNIT_CLI= skips the
# shell parts. UNIT_FILTER is internal: the runner's filter
# ("substring... !substring...", T by default; tests/arm64's list).
# UNIT_RUN= is put before the runner's path: an emulator for a runner
# built for another machine (tests/arm64/arm64.mk: qemu-aarch64).

UNIT_SANITIZE ?= address,undefined
UNIT_FILTER ?= $(T)
UNIT_RUN ?=
UNIT_DIR := $(BUILD)/unit/$(if $(UNIT_SANITIZE),san,plain)
UNIT_SANFLAGS := $(if $(UNIT_SANITIZE),-fsanitize=$(UNIT_SANITIZE) \
	-fno-sanitize-recover=all -fno-omit-frame-pointer)
UNIT_DEFS := -DSIEVE_COUNT_SCANS
UNIT_BIN := $(UNIT_DIR)/sieve-unit
# Libraries that fragments linking more into the runner add (the agent's).
UNIT_LDLIBS ?=

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst tests/unit/%.c,$(UNIT_DIR)/%.o,$(UNIT_SRCS)) \
	$(patsubst tests/cases/%.c,$(UNIT_DIR)/%.o,$(wildcard tests/cases/*.c))
UNIT_CORE_OBJS := $(patsubst kmod/%.c,$(UNIT_DIR)/core/%.o,$(CORE_SRCS))
# libsieve (userspace/lib) too, for its local filters and snapshot files.
UNIT_LIB_OBJS := $(if $(UNIT_SANITIZE),$(patsubst userspace/lib/%.c,$(UNIT_DIR)/lib/%.o,$(LIB_SRCS)),$(LIB_OBJS))
# The blocklist's entry and feed parsers, its prefix-expansion planner and
# its store, and both backends' sizing (userspace/xdp/), which need no
# libbpf (the store needs SQLite).
UNIT_XDP_OBJS := $(UNIT_DIR)/xdp/entry.o $(UNIT_DIR)/xdp/feed.o $(UNIT_DIR)/xdp/expand.o \
	$(UNIT_DIR)/xdp/store.o $(UNIT_DIR)/xdp/plan.o $(UNIT_DIR)/xdp/blocked_plan.o \
	$(UNIT_DIR)/xdp/secret.o $(UNIT_DIR)/xdp/origin.o
UNIT_XDP_CFLAGS = -I$(TOP)/include -I$(TOP)/userspace/xdp

$(UNIT_DIR)/xdp/%.o: userspace/xdp/%.c
	$(call msg,CC,$< [unit])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(UNIT_XDP_CFLAGS) $(UNIT_SANFLAGS) -c $< -o $@

UNIT_XDP_TESTS := $(UNIT_DIR)/feed_test.o $(UNIT_DIR)/cpe_test.o $(UNIT_DIR)/store_test.o \
	$(UNIT_DIR)/build_test.o \
	$(UNIT_DIR)/blocked_test.o $(UNIT_DIR)/digest_test.o
$(UNIT_XDP_TESTS): SIEVE_CFLAGS += $(UNIT_XDP_CFLAGS)

$(UNIT_DIR)/core/%.o: kmod/%.c
	$(call msg,CC,$< [unit])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(UNIT_SANFLAGS) $(UNIT_DEFS) -c $< -o $@

$(UNIT_DIR)/lib/%.o: userspace/lib/%.c
	$(call msg,CC,$< [unit])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(UNIT_SANFLAGS) $(UNIT_DEFS) -c $< -o $@

$(UNIT_DIR)/%.o: tests/unit/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(UNIT_SANFLAGS) $(UNIT_DEFS) -c $< -o $@

$(UNIT_DIR)/%.o: tests/cases/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(UNIT_SANFLAGS) $(UNIT_DEFS) -c $< -o $@

$(UNIT_BIN): $(UNIT_OBJS) $(UNIT_LIB_OBJS) $(UNIT_CORE_OBJS) $(UNIT_XDP_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(UNIT_SANFLAGS) -o $@ $^ -lcmocka -lsqlite3 $(UNIT_LDLIBS) -lm

# The suite is six parts: the runner's cmocka cases, then the CLI on local
# filters (tests/unit/cli_test.sh against $(BUILD)/sieve), its completion
# and its man pages (completion_test.sh, man_test.sh), its start
# (startup_test.sh), then libsieve as `make install` puts it
# (tests/unit/install_test.sh), then the releases
# (tests/dist/release_test.sh, without packages). Each writes its
# own "PASSED FAILED"; $(RESULTS)/unit holds their sum, and the last line
# printed is the sum too. A part that dies (a sanitizer report, a crash)
# leaves no result: it then counts as one failure.
UNIT_PARTS := $(UNIT_DIR)/results
# `make install` into this root, then a program built against it (install_test.sh).
UNIT_INSTALL := $(UNIT_DIR)/install-root
UNIT_CLI ?= 1
# The shell parts, by the names T= picks them with, and those to run.
UNIT_SHELL_PARTS := cli_test completion_test man_test startup_test install_test release_test layers_test \
	t_test
UNIT_RUN_PARTS = $(strip $(if $(UNIT_CLI),$(if $(T),$(foreach p,$(UNIT_SHELL_PARTS),$(if $(findstring $(T),$(p)),$(p))),$(UNIT_SHELL_PARTS))))

# libsieve as `make install` puts it, for install_test: a target of its
# own, so that no recipe line of the suite both recurses and runs a test
# (make -n runs such lines: tests/unit/t_test.sh dry-runs every suite).
.PHONY: unit-install
unit-install:
	$(Q)rm -rf $(UNIT_INSTALL)
	$(Q)$(MAKE) install DESTDIR=$(UNIT_INSTALL) PREFIX=/usr/local >/dev/null

.PHONY: test-unit
test-unit: $(UNIT_BIN) $(if $(UNIT_RUN_PARTS),$(BUILD)/sieve $(BUILD)/sieve-agent $(COMPLETION)) \
		$(if $(filter install_test,$(UNIT_RUN_PARTS)),unit-install)
	$(call msg,TEST,unit)
	$(Q)mkdir -p $(RESULTS) $(UNIT_PARTS) && rm -f $(RESULTS)/unit $(UNIT_PARTS)/*
	$(Q)status=0; \
		wanted() { case " $(UNIT_RUN_PARTS) " in *" $$1 "*) ;; *) return 1;; esac; }; \
		died() { [ -s $(UNIT_PARTS)/$$1 ] || { echo "$$1 died (status $$status)"; echo "0 1" > $(UNIT_PARTS)/$$1; }; }; \
		UBSAN_OPTIONS=print_stacktrace=1 $(UNIT_RUN) $(UNIT_BIN) -r $(UNIT_PARTS)/cmocka \
			$(if $(and $(T),$(UNIT_RUN_PARTS)),-n) $(UNIT_FILTER) || status=$$?; \
		died cmocka; \
		if wanted cli_test; then \
			tests/unit/cli_test.sh $(BUILD)/sieve $(UNIT_PARTS)/cli_test || status=$$?; died cli_test; fi; \
		if wanted completion_test; then \
			tests/unit/completion_test.sh $(BUILD)/sieve $(COMPLETION) $(UNIT_PARTS)/completion_test || status=$$?; \
			died completion_test; fi; \
		if wanted man_test; then \
			tests/unit/man_test.sh $(BUILD)/sieve doc/man $(UNIT_PARTS)/man_test || status=$$?; died man_test; fi; \
		if wanted startup_test; then \
			SIEVE_CLI_SHARED=$(filter-out 1,$(CLI_STATIC_XDP)) \
				tests/unit/startup_test.sh $(BUILD)/sieve $(UNIT_PARTS)/startup_test || status=$$?; \
			died startup_test; fi; \
		if wanted install_test; then \
			tests/unit/install_test.sh $(UNIT_INSTALL) /usr/local $(UNIT_PARTS)/install_test || status=$$?; \
			died install_test; fi; \
		if wanted release_test; then \
			tests/dist/release_test.sh $(TOP) "" $(UNIT_PARTS)/release_test || status=$$?; died release_test; fi; \
		if wanted layers_test; then \
			tests/unit/layers_test.sh $(TOP) $(UNIT_PARTS)/layers_test || status=$$?; died layers_test; fi; \
		if wanted t_test; then \
			tests/unit/t_test.sh $(TOP) $(UNIT_BIN) $(UNIT_PARTS)/t_test || status=$$?; died t_test; fi; \
		passed=0; failed=0; \
		for part in $(UNIT_PARTS)/*; do \
			read p f < $$part; passed=$$((passed + p)); failed=$$((failed + f)); \
		done; \
		if [ "$$status" -ne 0 ] && [ "$$failed" -eq 0 ]; then \
			echo "a part exited $$status after counting no failure"; failed=1; \
		fi; \
		echo "$$passed $$failed" > $(RESULTS)/unit; \
		$(call t_result,unit) \
		read passed failed < $(RESULTS)/unit; \
		echo "$$passed passed, $$failed failed"; \
		[ "$$failed" -eq 0 ] && [ "$$status" -eq 0 ]
