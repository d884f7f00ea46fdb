# SPDX-License-Identifier: GPL-2.0
#
# userspace/agent: `sieve agent`, the program sieve-agent, built with the
# XDP loader it drives (userspace/xdp/xdp.mk's variables, expanded late:
# the two are read in either order).
# Settings are read with inih, readiness told to systemd with libsystemd's
# sd_notify, metrics served with libmicrohttpd, the fleet followed and
# published to with hiredis. The sieve CLI links none of these but inih:
# the command's table (command.c), and the settings' reader (config.c)
# with the order of their sources (settings.c), so that it finds the store
# the agent uses; `sieve agent` and `--fleet` exec sieve-agent
# (userspace/cli/agent_exec.c, agent.h).

AGENT_DIR := $(BUILD)/agent
AGENT_SRCS := $(wildcard userspace/agent/*.c)
AGENT_OBJS := $(patsubst userspace/agent/%.c,$(AGENT_DIR)/%.o,$(AGENT_SRCS))
AGENT_CFLAGS = $(XDP_CFLAGS) -I$(TOP)/userspace/agent -I$(TOP)/userspace/cli
AGENT_LDLIBS := -lmicrohttpd -lpthread

$(AGENT_DIR)/%.o: userspace/agent/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(AGENT_CFLAGS) -c $< -o $@

# sieve-agent: the agent's objects, the loader's, and of the CLI its
# parser, help and messages (command.c, parse.c, json.c).
AGENT_PROG := $(BUILD)/sieve-agent
AGENT_CLI_OBJS := $(BUILD)/cli/command.o $(BUILD)/cli/parse.o $(BUILD)/cli/json.o
$(AGENT_PROG): $(AGENT_OBJS) $$(XDP_OBJS) $(AGENT_CLI_OBJS) $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(XDP_LDLIBS) -linih -lsystemd -lhiredis \
		$(AGENT_LDLIBS) -lm
user: $(AGENT_PROG)
INSTALL_PROGS += $(AGENT_PROG)

CLI_EXTRA_OBJS += $(AGENT_DIR)/command.o $(AGENT_DIR)/config.o $(AGENT_DIR)/settings.o
CLI_LDLIBS += -linih
$(BUILD)/cli/agent_exec.o: SIEVE_CFLAGS += $(AGENT_CFLAGS)
DEB_PACKAGES += libinih-dev libsystemd-dev libmicrohttpd-dev libhiredis-dev prometheus curl

# A server of the metrics alone, for tests/e2e (case metrics) and for
# timing a scrape: see tests/e2e/metrics_driver.c.
METRICS_DRIVER := $(AGENT_DIR)/metrics-driver
$(AGENT_DIR)/metrics_driver.o: tests/e2e/metrics_driver.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(AGENT_CFLAGS) -c $< -o $@
$(METRICS_DRIVER): $(AGENT_DIR)/metrics_driver.o $(AGENT_DIR)/metrics.o $$(XDP_OBJS) $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(XDP_LDLIBS) $(AGENT_LDLIBS) -lm
test-e2e: $(METRICS_DRIVER) $(AGENT_PROG)
# The fleet's benchmark runs an agent on each of its hosts.
bench-fleet: $(AGENT_PROG)

# The unit runner renders through metrics.c (tests/unit/metrics_test.c),
# so it links the rest of the loader too (the pins are read with libbpf;
# devfilter.c: the filter backend through libsieve).
UNIT_AGENT_OBJS := $(UNIT_DIR)/agent/metrics.o $(UNIT_DIR)/xdp/loader.o $(UNIT_DIR)/xdp/blocked.o \
	$(UNIT_DIR)/xdp/devfilter.o $(UNIT_DIR)/xdp/bloom_fill.o $(UNIT_DIR)/xdp/removed.o \
	$(UNIT_DIR)/xdp/v4table.o \
	$(patsubst userspace/xdp/%.c,$(UNIT_DIR)/xdp/%.o,$(wildcard userspace/xdp/backend*.c))
$(UNIT_DIR)/agent/metrics.o: userspace/agent/metrics.c
	$(call msg,CC,$< [unit])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(AGENT_CFLAGS) $(UNIT_SANFLAGS) -c $< -o $@
$(UNIT_DIR)/xdp/loader.o: UNIT_XDP_CFLAGS += -I$(XDP_DIR)
$(UNIT_DIR)/xdp/loader.o: $$(XDP_SKEL)
$(UNIT_DIR)/xdp/bloom_fill.o: UNIT_XDP_CFLAGS += -I$(XDP_DIR)
$(UNIT_DIR)/xdp/bloom_fill.o: $$(XDP_FILL_SKEL)
$(UNIT_DIR)/metrics_test.o: SIEVE_CFLAGS += $(AGENT_CFLAGS)
# The fleet's rules and the settings they come from (tests/unit/fleet_test.c);
# float-cast-overflow too, which -fsanitize=undefined leaves out: a score
# converted out of int64_t's range fails the suite.
UNIT_AGENT_OBJS += $(UNIT_DIR)/agent/fleet_rules.o $(UNIT_DIR)/agent/config.o \
	$(UNIT_DIR)/agent/settings.o
$(UNIT_DIR)/agent/fleet_rules.o: UNIT_SANFLAGS += $(if $(UNIT_SANITIZE),-fsanitize=float-cast-overflow)
$(UNIT_DIR)/agent/%.o: userspace/agent/%.c
	$(call msg,CC,$< [unit])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(AGENT_CFLAGS) $(UNIT_SANFLAGS) -c $< -o $@
$(UNIT_DIR)/fleet_test.o: SIEVE_CFLAGS += $(AGENT_CFLAGS)
# The order of a setting's sources (tests/unit/settings_test.c).
$(UNIT_DIR)/settings_test.o: SIEVE_CFLAGS += $(AGENT_CFLAGS)
$(UNIT_BIN): $(UNIT_AGENT_OBJS)
UNIT_LDLIBS += -lbpf -lelf -lz -linih $(AGENT_LDLIBS)

# `sieve xdp block ... --fleet` publishes through sieve-agent (agent.h's constants).
$(BUILD)/cli/xdp.o $(BUILD)/cli/xdp_removal.o: SIEVE_CFLAGS += -I$(TOP)/userspace/agent
