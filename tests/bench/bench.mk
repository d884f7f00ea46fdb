# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: the filter cores, compiled for userspace from the same
# sources as the module (CORE_SRCS), timed at 1M and 64M keys. Built with
# -O2 whatever CFLAGS says, into $(BUILD)/bench/, so the figures always
# describe optimised code. Every operation is timed both as one call per
# key and through the batch calls (add_batch, contains_batch). Writes the
# report to $(BUILD)/bench/cores.txt too. Takes about 5-7 minutes on a
# 2-core VM and under 300 MB of memory; BENCH_ARGS=-s runs only the 1M-key
# half.

BENCH_DIR := $(BUILD)/bench
BENCH_CFLAGS := -O2 -g
BENCH_CORE_OBJS := $(patsubst kmod/%.c,$(BENCH_DIR)/core/%.o,$(CORE_SRCS))
BENCH_ARGS ?=

# Other parts add their benchmark targets to BENCHES; `make bench` runs all.
.PHONY: bench bench-cores
bench: bench-cores $$(BENCHES)
bench-cores: $(BENCH_DIR)/bench
	$(call msg,BENCH,$(BENCH_DIR)/cores.txt)
	$(Q)$(BENCH_DIR)/bench -o $(BENCH_DIR)/cores.txt $(BENCH_ARGS)

$(BENCH_DIR)/core/%.o: kmod/%.c $(CORE_HDRS)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(BENCH_CFLAGS) $(SIEVE_CFLAGS) -c $< -o $@

$(BENCH_DIR)/bench.o: tests/bench/bench.c $(CORE_HDRS)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(BENCH_CFLAGS) $(SIEVE_CFLAGS) -c $< -o $@

$(BENCH_DIR)/bench: $(BENCH_DIR)/bench.o $(BENCH_CORE_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) $(BENCH_CFLAGS) -o $@ $^ -lm
