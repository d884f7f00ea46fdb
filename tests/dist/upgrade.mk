# SPDX-License-Identifier: GPL-2.0
#
# The upgrade from the previous release, for real (included by the top
# Makefile; part of `make test-deb`, which runs it after deb_test.sh, on
# the packages it built):
#
#   make test-upgrade  the packages of release UPGRADE_FROM_REV installed,
#                      attached and blocking under traffic, then `dpkg -i` of
#                      this tree's packages over them, the new agent and
#                      commands run: not one blocked datagram arrives, the
#                      store keeps everything (upgrade_test.sh; root)
#
# The old packages are built once per revision, from a local clone of this
# repository checked out at UPGRADE_FROM_REV (make deb needs a git work
# tree), and cached in $(UPGRADE_OLD_DIR): later runs only install them.
# The revision is a commit, not a tag: a CI clone may not fetch tags, and
# CHANGELOG.md names each release's commit. A checkout without that commit
# (a shallow clone) fails the suite loudly: `git fetch --unshallow`.

UPGRADE_FROM_REV ?= 2cd13f8
UPGRADE_OLD_DIR := $(BUILD)/upgrade-old-$(UPGRADE_FROM_REV)
UPGRADE_OLD_DEBS := $(UPGRADE_OLD_DIR)/src/build/deb

.PHONY: upgrade-old-deb test-upgrade

upgrade-old-deb:
	$(Q)if ls $(UPGRADE_OLD_DEBS)/sieve_*.deb >/dev/null 2>&1; then :; \
	elif git -C $(TOP) rev-parse -q --verify $(UPGRADE_FROM_REV)^{commit} >/dev/null 2>&1; then \
		echo "  DEB      the packages of $(UPGRADE_FROM_REV) (the upgrade's old release)"; \
		rm -rf $(UPGRADE_OLD_DIR) && mkdir -p $(UPGRADE_OLD_DIR) && \
		{ git clone -q --no-checkout $(TOP) $(UPGRADE_OLD_DIR)/src && \
		  git -C $(UPGRADE_OLD_DIR)/src checkout -q --detach $(UPGRADE_FROM_REV) && \
		  nice $(MAKE) -C $(UPGRADE_OLD_DIR)/src deb; } >$(UPGRADE_OLD_DIR)/build.log 2>&1 || \
		{ echo "building the packages of $(UPGRADE_FROM_REV) failed: see $(UPGRADE_OLD_DIR)/build.log"; \
		  rm -rf $(UPGRADE_OLD_DEBS); exit 1; }; \
	else \
		echo "test-upgrade: no commit $(UPGRADE_FROM_REV) in this checkout (a shallow clone?" \
			"git fetch --unshallow)" >&2; exit 1; \
	fi

# Alone, it builds this tree's packages first (make deb, ~15 s); test-deb
# runs upgrade_test.sh on those it has just built.
test-upgrade: upgrade-old-deb deb
	$(call msg,TEST,upgrade)
	$(Q)$(call t_one_case,upgrade,upgrade) mkdir -p $(RESULTS) && rm -f $(RESULTS)/upgrade
	$(Q)status=0; \
		tests/dist/upgrade_test.sh $(UPGRADE_OLD_DEBS) $(DEB_DIR) $(UPGRADE_FROM_REV) \
			$(RESULTS)/upgrade || status=$$?; \
		if [ ! -s $(RESULTS)/upgrade ]; then \
			echo "upgrade_test.sh failed (status $$status)"; echo "0 1" > $(RESULTS)/upgrade; \
		fi; exit $$status
