# SPDX-License-Identifier: GPL-2.0
#
# dist/: what a distribution needs beside the build (included by the top
# Makefile): the systemd unit (dist/systemd/), the DKMS configuration
# (dist/dkms/), the agent's default configuration (dist/sieve.conf), and
# the Debian packages (debian/).
#
#   make deb        sieve, sieve-dkms, libsieve0 and libsieve-dev, built by
#                   dpkg-buildpackage from a copy of the tree in
#                   $(DEB_DIR)/sieve-VERSION; the .debs land in $(DEB_DIR)
#   make dkms-src   the source tree sieve-dkms installs as
#                   /usr/src/sieve-VERSION, laid out in DKMS_SRC
#
# The version is the project's, SIEVE_VERSION, from the file VERSION; the
# packages' debian/changelog is written from it (and the commit built) by
# `make deb`, so there is no second copy of it to keep in step.

DEB_DIR := $(BUILD)/deb
DEB_SRC := $(DEB_DIR)/sieve-$(SIEVE_VERSION)
DKMS_SRC ?= $(BUILD)/dkms/src/sieve-$(SIEVE_VERSION)
DEB_MAINTAINER := sieve maintainers <maintainers@users.noreply.a-seed-0ddfe756.example>

.PHONY: deb dkms-src

# What a DKMS build needs: the module's sources (kmod/, with its example
# user of the in-kernel API, which modpost wants beside it) and the headers
# they include, plus dkms.conf with the version filled in.
dkms-src:
	$(call msg,DKMS,$(DKMS_SRC))
	$(Q)rm -rf $(DKMS_SRC) && mkdir -p $(DKMS_SRC)
	$(Q)find kmod include/uapi include/linux -type f \( -name '*.[ch]' -o -name Kbuild -o -name cores.mk \) \
		! -name '*.mod.c' -print0 | cpio -pdm0 --quiet $(DKMS_SRC)
	$(Q)sed 's/#MODULE_VERSION#/$(SIEVE_VERSION)/g' dist/dkms/dkms.conf > $(DKMS_SRC)/dkms.conf

# The copy holds what git tracks or would track (the work tree as it is,
# uncommitted changes included, nothing git ignores): dpkg-buildpackage
# cleans and builds in its own tree, never in this one. The changelog's
# date is the commit's, so two builds of one commit are the same.
deb:
	$(call msg,DEB,$(DEB_DIR))
	$(Q)git rev-parse --is-inside-work-tree >/dev/null 2>&1 || \
		{ echo "make deb: needs a git work tree (it packages the files git tracks)" >&2; exit 2; }
	$(Q)rm -rf $(DEB_DIR) && mkdir -p $(DEB_SRC)
	$(Q)git ls-files -z --cached --others --exclude-standard | \
		xargs -0 sh -c 'for f; do [ ! -e "$$f" ] || printf "%s\0" "$$f"; done' sh | \
		cpio -pdm0 --quiet $(DEB_SRC)
	$(Q){ printf 'sieve (%s) unstable; urgency=medium\n\n' '$(SIEVE_VERSION)'; \
		printf '  * Built from commit %s.\n\n' "$$(git rev-parse --short HEAD)"; \
		printf ' -- %s  %s\n' '$(DEB_MAINTAINER)' "$$(date -R -u -d @$$(git log -1 --format=%ct))"; \
	} > $(DEB_SRC)/debian/changelog
	$(Q)cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b \
		>$(if $(filter 1,$(V)),/dev/stderr,$(DEB_DIR)/build.log) 2>&1 || \
		{ echo "make deb: dpkg-buildpackage failed: see $(DEB_DIR)/build.log" >&2; exit 1; }
	$(Q)ls $(DEB_DIR)/*.deb | sed 's|^$(TOP)/|  built    |'

# dpkg-buildpackage and debhelper with its DKMS addon build the packages;
# lintian judges them; dkms builds the module (make test-dkms, and the
# sieve-dkms package on install); systemd-analyze judges the unit.
DEB_PACKAGES += dpkg-dev debhelper dh-dkms dkms build-essential fakeroot lintian systemd git
