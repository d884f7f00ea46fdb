# SPDX-License-Identifier: GPL-2.0
#
# userspace/conf: sieve.conf(5), the settings sieve and sieve-agent share
# (conf.h): the table of settings and the order of their sources
# (settings.c), the file's reader (config.c, inih). Built on the XDP
# loader's headers (store.h: list names, keys), so read after xdp.mk.

CONF_DIR := $(BUILD)/conf
CONF_SRCS := $(wildcard userspace/conf/*.c)
CONF_OBJS := $(patsubst userspace/conf/%.c,$(CONF_DIR)/%.o,$(CONF_SRCS))
CONF_CFLAGS = $(XDP_CFLAGS) -I$(TOP)/userspace/conf
CONF_LDLIBS := -linih

$(CONF_DIR)/%.o: userspace/conf/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(CONF_CFLAGS) -c $< -o $@

# The CLI reads the settings too: the store its commands change is the
# one the agent restores (xdp.c, xdp_removal.c), and the agent's options
# are its table (agent_command.c).
CONF_CLI_OBJS := $(BUILD)/cli/agent_command.o $(BUILD)/cli/agent_exec.o $(BUILD)/cli/xdp.o \
	$(BUILD)/cli/xdp_removal.o
$(CONF_CLI_OBJS): SIEVE_CFLAGS += $(CONF_CFLAGS)
CLI_EXTRA_OBJS += $(CONF_OBJS)
CLI_LDLIBS += $(CONF_LDLIBS)
DEB_PACKAGES += libinih-dev

# The order of a setting's sources (tests/unit/settings_test.c), and the
# fleet's rules read from them (fleet.mk).
UNIT_CONF_OBJS := $(patsubst userspace/conf/%.c,$(UNIT_DIR)/conf/%.o,$(CONF_SRCS))
$(UNIT_DIR)/conf/%.o: userspace/conf/%.c
	$(call msg,CC,$< [unit])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(CONF_CFLAGS) $(UNIT_SANFLAGS) -c $< -o $@
$(UNIT_DIR)/settings_test.o: SIEVE_CFLAGS += $(CONF_CFLAGS)
$(UNIT_BIN): $(UNIT_CONF_OBJS)
UNIT_LDLIBS += $(CONF_LDLIBS)
