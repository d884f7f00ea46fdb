#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: kernel.sh ABI CACHE
#
# Makes sure Debian's kernel image for ABI (e.g. 6.1.0-56-amd64 or
# 6.1.0-56-arm64: the ABI of the linux-headers tree the VM modules are
# built against; its last word is the flavour, which names the Debian
# architecture the package is fetched for) is unpacked in
# CACHE/ABI/ and prints that folder. The package is fetched with
# `apt-get download` and unpacked with `dpkg-deb -x`, never installed. The
# first run costs ~70 MB of download; later runs only check the stamp.
#
# The folder holds vmlinuz, config, System.map and lib/modules/ABI/ (in-tree
# modules, for suites that need one in the VM).
set -euo pipefail

die() { echo "kernel.sh: $*" >&2; exit 2; }

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# The package of a foreign architecture's kernel (arm64's on an amd64 host)
# is asked for as PKG:ARCH, which apt knows once that architecture is added
# (dpkg --add-architecture; tests/arm64/arm64.mk's deps).
download() {
	local pkg="linux-image-$1"

	[ "$3" = "$(dpkg --print-architecture)" ] || pkg+=":$3"
	(cd "$2" && apt-get download -q=2 "$pkg" >/dev/null 2>"$2/apt.log")
}

# Fetches and unpacks into a temporary folder, then renames it into place,
# so an interrupted run never leaves a half-unpacked kernel behind.
fetch_image() {
	local abi=$1 dest=$2 arch tmp deb

	arch=$(deb_arch "$abi")
	tmp=$(mktemp -d "$dest.tmp.XXXXXX")
	trap "rm -rf '$tmp'" EXIT
	echo "  FETCH    linux-image-$abi" >&2
	# apt drops privileges to _apt for downloads: give it a folder it may write.
	chmod 0777 "$tmp"
	if ! download "$abi" "$tmp" "$arch"; then
		# Package lists may be missing (a slimmed container): fetch them once.
		echo "  APT      update" >&2
		as_root apt-get update -qq >/dev/null 2>&1 || true
		download "$abi" "$tmp" "$arch" || {
			cat "$tmp/apt.log" >&2
			die "cannot download linux-image-$abi. The VM must boot the kernel whose" \
			    "headers the module is built against; if apt no longer has that image," \
			    "upgrade the headers (apt-get install linux-headers-$arch) and retry."
		}
	fi
	deb=$(ls "$tmp"/linux-image-"$abi"_*.deb)
	dpkg-deb -x "$deb" "$tmp/root"
	mkdir -p "$tmp/out/lib/modules"
	mv "$tmp/root/boot/vmlinuz-$abi" "$tmp/out/vmlinuz"
	mv "$tmp/root/boot/config-$abi" "$tmp/out/config"
	mv "$tmp/root/boot/System.map-$abi" "$tmp/out/System.map"
	mv "$tmp/root/lib/modules/$abi" "$tmp/out/lib/modules/$abi"
	dpkg-deb -f "$deb" Version >"$tmp/out/version"
	rm -rf "$dest"
	mv "$tmp/out" "$dest"
	rm -rf "$tmp"
	trap - EXIT
}

# Debian's architecture of a flavour: the ABI's last word.
deb_arch() {
	case ${1##*-} in
	amd64 | arm64) echo "${1##*-}" ;;
	*) die "unexpected kernel ABI '$1' (want e.g. 6.1.0-56-amd64 or 6.1.0-56-arm64)" ;;
	esac
}

main() {
	[ $# -eq 2 ] || die "usage: kernel.sh ABI CACHE"
	local abi=$1 cache=$2

	deb_arch "$abi" >/dev/null
	mkdir -p "$cache"
	if [ ! -f "$cache/$abi/vmlinuz" ] || [ ! -f "$cache/$abi/version" ]; then
		fetch_image "$abi" "$cache/$abi"
	fi
	echo "$cache/$abi"
}

main "$@"
