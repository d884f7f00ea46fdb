# SPDX-License-Identifier: GPL-2.0
#
# userspace/agent: the daemon, the program sieve-agent that `sieve agent`
# execs, built on the XDP loader it drives (userspace/xdp/xdp.mk), the
# settings (userspace/conf/conf.mk), the fleet's Redis side
# (userspace/fleet/fleet.mk) and the sources (userspace/sources/sources.mk:
# HTTP), read before this file. Readiness is told to
# systemd with libsystemd's sd_notify, metrics served with libmicrohttpd.
# The sieve CLI links nothing of this folder: `sieve agent` and `--fleet`
# exec sieve-agent (userspace/cli/agent_exec.c).

AGENT_DIR := $(BUILD)/agent
AGENT_SRCS := $(wildcard userspace/agent/*.c)
AGENT_OBJS := $(patsubst userspace/agent/%.c,$(AGENT_DIR)/%.o,$(AGENT_SRCS))
AGENT_CFLAGS = $(FLEET_CFLAGS) -I$(TOP)/userspace/sources -I$(TOP)/userspace/agent -I$(TOP)/userspace/cli
# libpcap: `sieve xdp capture` runs here (capture.c, cli/xdp_capture.h).
AGENT_LDLIBS := -lmicrohttpd -lpthread -lpcap

$(AGENT_DIR)/%.o: userspace/agent/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(AGENT_CFLAGS) -c $< -o $@

# sieve-agent: the agent's objects, the settings', the fleet's, the
# sources', the loader's, and of the CLI its parser, help and messages
# (command.c, parse.c, json.c) and the agent command's table (agent_command.c).
AGENT_PROG := $(BUILD)/sieve-agent
AGENT_CLI_OBJS := $(BUILD)/cli/command.o $(BUILD)/cli/parse.o $(BUILD)/cli/json.o \
	$(BUILD)/cli/agent_command.o $(BUILD)/cli/xdp_capture.o
$(AGENT_PROG): $(AGENT_OBJS) $$(CONF_OBJS) $$(FLEET_OBJS) $$(SOURCES_OBJS) $$(XDP_OBJS) $(AGENT_CLI_OBJS) \
		$(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(XDP_LDLIBS) $(CONF_LDLIBS) $(FLEET_LDLIBS) \
		$(SOURCES_LDLIBS) -lsystemd $(AGENT_LDLIBS) -lm
user: $(AGENT_PROG)
INSTALL_PROGS += $(AGENT_PROG)

DEB_PACKAGES += libsystemd-dev libmicrohttpd-dev prometheus curl libpcap-dev tcpdump

# A server of the metrics alone, for tests/e2e (case metrics) and for
# timing a scrape: see tests/e2e/metrics_driver.c.
METRICS_DRIVER := $(AGENT_DIR)/metrics-driver
$(AGENT_DIR)/metrics_driver.o: tests/e2e/metrics_driver.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(AGENT_CFLAGS) -c $< -o $@
$(METRICS_DRIVER): $(AGENT_DIR)/metrics_driver.o $(AGENT_DIR)/metrics.o $(SOURCES_DIR)/feed_rules.o \
		$(SOURCES_DIR)/crowdsec.o $$(CONF_OBJS) $$(XDP_OBJS) $(BUILD)/libsieve.a
	$(call msg,LD,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(XDP_LDLIBS) $(CONF_LDLIBS) $(SOURCES_LDLIBS) \
		$(AGENT_LDLIBS) -lm
test-e2e: $(METRICS_DRIVER) $(AGENT_PROG)
# The fleet's benchmark runs an agent on each of its hosts.
bench-fleet: $(AGENT_PROG)

# The unit runner renders through metrics.c (tests/unit/metrics_test.c),
# so it links the rest of the loader too (the pins are read with libbpf;
# devfilter.c: the filter backend through libsieve).
UNIT_AGENT_OBJS := $(UNIT_DIR)/agent/metrics.o $(UNIT_DIR)/xdp/loader.o $(UNIT_DIR)/xdp/blocked.o \
	$(UNIT_DIR)/xdp/devfilter.o $(UNIT_DIR)/xdp/bloom_fill.o $(UNIT_DIR)/xdp/removed.o \
	$(UNIT_DIR)/xdp/report.o $(UNIT_DIR)/xdp/monitor.o \
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
$(UNIT_BIN): $(UNIT_AGENT_OBJS)
UNIT_LDLIBS += -lbpf -lelf -lz $(AGENT_LDLIBS)
