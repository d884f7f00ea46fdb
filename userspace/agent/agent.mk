# SPDX-License-Identifier: GPL-2.0
#
# userspace/agent: `sieve agent`, linked into the sieve CLI beside the XDP
# loader it drives (userspace/xdp/xdp.mk). Settings are read with inih,
# readiness told to systemd with libsystemd's sd_notify.

AGENT_DIR := $(BUILD)/agent
AGENT_SRCS := $(wildcard userspace/agent/*.c)
AGENT_OBJS := $(patsubst userspace/agent/%.c,$(AGENT_DIR)/%.o,$(AGENT_SRCS))
# xdp.mk is read after this file ($(sort) of the fragments): XDP_* are
# expanded late, in the recipe and (with .SECONDEXPANSION) the prerequisites.
AGENT_CFLAGS = $(XDP_CFLAGS) -I$(TOP)/userspace/agent -I$(TOP)/userspace/cli
AGENT_HDRS = userspace/agent/agent.h userspace/cli/cli.h $(XDP_HDRS)

$(AGENT_DIR)/%.o: userspace/agent/%.c $$(AGENT_HDRS) $(CORE_HDRS)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(AGENT_CFLAGS) -c $< -o $@

CLI_EXTRA_OBJS += $(AGENT_OBJS)
CLI_LDLIBS += -linih -lsystemd
DEB_PACKAGES += libinih-dev libsystemd-dev
