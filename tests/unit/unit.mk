# SPDX-License-Identifier: GPL-2.0
#
# tests/unit: the filter cores in userspace under cmocka. Every shared case
# of tests/cases/core_cases.c plus the tests only userspace can afford
# (millions of keys, statistics against libm), one cmocka test each.
#
# The runner links its own copy of the cores built with AddressSanitizer and
# UBSan, so an overrun, a leak or an undefined shift in a core fails the
# suite; `make test-unit UNIT_SANITIZE=` links the plain $(CORE_OBJS)
# instead. UNIT_FILTER=substring runs only the matching tests.

UNIT_SANITIZE ?= address,undefined
UNIT_FILTER ?=
UNIT_DIR := $(BUILD)/unit/$(if $(UNIT_SANITIZE),san,plain)
UNIT_SANFLAGS := $(if $(UNIT_SANITIZE),-fsanitize=$(UNIT_SANITIZE) \
	-fno-sanitize-recover=all -fno-omit-frame-pointer)
UNIT_BIN := $(UNIT_DIR)/sieve-unit

UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst tests/unit/%.c,$(UNIT_DIR)/%.o,$(UNIT_SRCS)) $(UNIT_DIR)/core_cases.o
UNIT_CORE_OBJS := $(if $(UNIT_SANITIZE),$(patsubst kmod/%.c,$(UNIT_DIR)/core/%.o,$(CORE_SRCS)),$(CORE_OBJS))
UNIT_HDRS := $(CORE_HDRS) tests/cases/harness.h tests/unit/unit.h

$(UNIT_DIR)/core/%.o: kmod/%.c $(CORE_HDRS)
	$(call msg,CC,$< [unit])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(UNIT_SANFLAGS) -c $< -o $@

$(UNIT_DIR)/%.o: tests/unit/%.c $(UNIT_HDRS)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(UNIT_SANFLAGS) -c $< -o $@

$(UNIT_DIR)/core_cases.o: tests/cases/core_cases.c $(UNIT_HDRS)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(UNIT_SANFLAGS) -c $< -o $@

$(UNIT_BIN): $(UNIT_OBJS) $(UNIT_CORE_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(UNIT_SANFLAGS) -o $@ $^ -lcmocka -lm

# A runner that dies (a sanitizer report, a crash) leaves no result: the
# suite then counts as one failure.
.PHONY: test-unit
test-unit: $(UNIT_BIN)
	$(call msg,TEST,unit)
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/unit
	$(Q)UBSAN_OPTIONS=print_stacktrace=1 $(UNIT_BIN) -r $(RESULTS)/unit $(UNIT_FILTER); \
		status=$$?; \
		if [ ! -s $(RESULTS)/unit ]; then \
			echo "sieve-unit died (status $$status)"; echo "0 passed, 1 failed"; \
			echo "0 1" > $(RESULTS)/unit; status=1; \
		fi; \
		exit $$status
