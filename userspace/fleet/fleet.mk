# SPDX-License-Identifier: GPL-2.0
#
# userspace/fleet: the fleet's lists in Redis (fleet.h), hiredis. Linked
# into sieve-agent (agent.mk), which follows the lists and publishes for
# `sieve xdp ... --fleet`; the CLI sees fleet.h's words for that (xdp.c)
# and links none of it. Read after conf.mk.

FLEET_DIR := $(BUILD)/fleet
FLEET_SRCS := $(wildcard userspace/fleet/*.c)
FLEET_OBJS := $(patsubst userspace/fleet/%.c,$(FLEET_DIR)/%.o,$(FLEET_SRCS))
FLEET_CFLAGS = $(CONF_CFLAGS) -I$(TOP)/userspace/fleet
FLEET_LDLIBS := -lhiredis

$(FLEET_DIR)/%.o: userspace/fleet/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(FLEET_CFLAGS) -c $< -o $@

$(BUILD)/cli/xdp.o: SIEVE_CFLAGS += -I$(TOP)/userspace/fleet
$(BUILD)/cli/xdp.o: userspace/fleet/fleet.h
DEB_PACKAGES += libhiredis-dev

# The fleet's rules (tests/unit/fleet_test.c); float-cast-overflow too,
# which -fsanitize=undefined leaves out: a score converted out of
# int64_t's range fails the suite.
UNIT_FLEET_OBJS := $(UNIT_DIR)/fleet/rules.o
$(UNIT_DIR)/fleet/rules.o: UNIT_SANFLAGS += $(if $(UNIT_SANITIZE),-fsanitize=float-cast-overflow)
$(UNIT_DIR)/fleet/%.o: userspace/fleet/%.c
	$(call msg,CC,$< [unit])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(FLEET_CFLAGS) $(UNIT_SANFLAGS) -c $< -o $@
$(UNIT_DIR)/fleet_test.o: SIEVE_CFLAGS += $(FLEET_CFLAGS)
$(UNIT_BIN): $(UNIT_FLEET_OBJS)
