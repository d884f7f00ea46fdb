# SPDX-License-Identifier: GPL-2.0
#
# make test-bpf: the XDP blocklist under BPF_PROG_TEST_RUN on this host's
# kernel (root): crafted packets for every entry kind, encapsulation,
# fragments, truncations, swaps under traffic, false-positive rates.
# T=NAME (the top Makefile) runs only the cases whose name holds NAME.

BPF_TEST_DIR := $(BUILD)/test-bpf
BPF_TEST_BIN := $(BPF_TEST_DIR)/sieve-xdp-test
BPF_TEST_SRCS := $(wildcard tests/bpf/*.c)
BPF_TEST_OBJS := $(patsubst tests/bpf/%.c,$(BPF_TEST_DIR)/%.o,$(BPF_TEST_SRCS))
$(if $(BPF_TEST_FILTER),$(error BPF_TEST_FILTER is gone: make test-bpf T=$(BPF_TEST_FILTER)))

$(BPF_TEST_DIR)/%.o: tests/bpf/%.c $$(XDP_SKEL)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(XDP_CFLAGS) -c $< -o $@

# libsieve: the module's sizing, which the blocked backend's plan uses.
$(BPF_TEST_BIN): $(BPF_TEST_OBJS) $$(XDP_OBJS) $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) -o $@ $^ $(XDP_LDLIBS) -lpthread -lm

.PHONY: test-bpf
test-bpf: $(BPF_TEST_BIN)
	$(call msg,TEST,bpf)
	$(Q)mkdir -p $(RESULTS) && rm -f $(RESULTS)/bpf
	$(Q)status=0; $(BPF_TEST_BIN) -r $(RESULTS)/bpf $(T) || status=$$?; \
		if [ ! -s $(RESULTS)/bpf ]; then \
			echo "sieve-xdp-test died (status $$status)"; echo "0 1" > $(RESULTS)/bpf; \
		fi; $(call t_result,bpf) exit $$status

SUITES += bpf
