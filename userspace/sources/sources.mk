# SPDX-License-Identifier: GPL-2.0
#
# userspace/sources: where list changes come from (http.h), above the
# loader that applies them and below the agent that schedules them. The
# one HTTP client is libcurl's (http.c). Linked into sieve-agent
# (agent.mk); the sieve CLI links none of it, so a command starts without
# libcurl. Read after conf.mk, before agent.mk.

SOURCES_DIR := $(BUILD)/sources
SOURCES_SRCS := $(wildcard userspace/sources/*.c)
SOURCES_OBJS := $(patsubst userspace/sources/%.c,$(SOURCES_DIR)/%.o,$(SOURCES_SRCS))
SOURCES_CFLAGS = $(CONF_CFLAGS) -I$(TOP)/userspace/sources
SOURCES_LDLIBS := -lcurl -ljson-c

$(SOURCES_DIR)/%.o: userspace/sources/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(SOURCES_CFLAGS) -c $< -o $@

DEB_PACKAGES += libcurl4-openssl-dev libjson-c-dev crowdsec

# crowdsec (the Local API tests/e2e/crowdsec.sh follows) registers with
# CrowdSec's Central API from its postinst unless this file exists: made
# (if absent) before apt-get installs the package, so that nothing of
# `make deps` or the tests reaches outside the machine.
CROWDSEC_OPTOUT := /etc/crowdsec/online_api_credentials.yaml
.PHONY: crowdsec-optout
crowdsec-optout:
	$(Q)if [ ! -e $(CROWDSEC_OPTOUT) ]; then \
		sudo=""; [ "$$(id -u)" = 0 ] || sudo=sudo; \
		echo "  DEPS     $(CROWDSEC_OPTOUT) (no Central API registration)"; \
		$$sudo mkdir -p $(dir $(CROWDSEC_OPTOUT)) && \
		echo '# sieve: offline, the Central API is not used' | \
		$$sudo tee $(CROWDSEC_OPTOUT) >/dev/null || exit 2; \
	fi
deps: crowdsec-optout

# The HTTP client on file:// URLs (tests/unit/http_test.c): bounds,
# conditions and errors without a server; the Local API's replies, hostile
# ones included (tests/unit/crowdsec_test.c).
UNIT_SOURCES_OBJS := $(patsubst userspace/sources/%.c,$(UNIT_DIR)/sources/%.o,$(SOURCES_SRCS))
$(UNIT_DIR)/sources/%.o: userspace/sources/%.c
	$(call msg,CC,$< [unit])
	$(Q)mkdir -p $(@D) && $(CC) $(CFLAGS) $(SIEVE_CFLAGS) $(SOURCES_CFLAGS) $(UNIT_SANFLAGS) -c $< -o $@
$(UNIT_DIR)/http_test.o $(UNIT_DIR)/crowdsec_test.o: SIEVE_CFLAGS += $(SOURCES_CFLAGS)
$(UNIT_BIN): $(UNIT_SOURCES_OBJS)
UNIT_LDLIBS += $(SOURCES_LDLIBS)
