#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: fetch.sh headers ABI CACHE
#        fetch.sh busybox CACHE
#
# What the arm64 build and VM need from Debian's arm64 archive, fetched
# with `apt-get download PKG:arm64` (dpkg --add-architecture arm64: make
# deps) and unpacked with `dpkg-deb -x`, never installed (installing them
# would replace the host's own linux-kbuild and busybox). Each prints the
# path of what it made; later runs only check that it is there.
#
# headers: linux-headers-ABI (e.g. 6.1.0-56-arm64) in CACHE/linux-headers-ABI,
#   a tree Kbuild cross-builds modules against (ARCH=arm64
#   CROSS_COMPILE=aarch64-linux-gnu-). The package's scripts/ and tools/
#   are arm64 programs (fixdep, modpost, genksyms): the tree's links to
#   them point at this host's own linux-kbuild-X.Y instead, the same
#   programs built for this machine, which read any architecture's objects.
#   Its Makefile includes the shared linux-headers-ABI-common tree by
#   absolute path: the one installed with the host's headers of the same
#   ABI (linux-headers-amd64), which is why ABI is taken from those.
# busybox: busybox-static's arm64 /bin/busybox, as CACHE/busybox.
set -euo pipefail

die() { echo "fetch.sh: $*" >&2; exit 2; }

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Downloads PKG:arm64 into DIR (package lists fetched once if missing).
download() {
	local pkg=$1 dir=$2

	chmod 0777 "$dir"	# apt downloads as _apt
	(cd "$dir" && apt-get download -q=2 "$pkg:arm64" >/dev/null 2>"$dir/apt.log") && return
	dpkg --print-foreign-architectures | grep -qx arm64 ||
		die "apt knows no arm64 packages: run 'make deps' (dpkg --add-architecture arm64)"
	echo "  APT      update" >&2
	as_root apt-get update -qq >/dev/null 2>&1 || true
	(cd "$dir" && apt-get download -q=2 "$pkg:arm64" >/dev/null 2>"$dir/apt.log") || {
		cat "$dir/apt.log" >&2
		die "cannot download $pkg:arm64"
	}
}

# Unpacks PKG:arm64 into a temporary folder, prints that folder.
unpack() {
	local pkg=$1 cache=$2 tmp

	tmp=$(mktemp -d "$cache/fetch.XXXXXX")
	echo "  FETCH    $pkg:arm64" >&2
	download "$pkg" "$tmp"
	dpkg-deb -x "$tmp"/"$pkg"_*.deb "$tmp/root"
	echo "$tmp"
}

fetch_headers() {
	local abi=$1 cache=$2 dest=$2/linux-headers-$1 common kbuild tmp tree

	[[ $abi == *-arm64 ]] || die "unexpected arm64 kernel ABI '$abi' (want e.g. 6.1.0-56-arm64)"
	common=/usr/src/linux-headers-${abi%-arm64}-common
	[ -f "$common/Makefile" ] ||
		die "$common is not installed: the arm64 headers share it with the host's ($abi)"
	kbuild=/usr/lib/linux-kbuild-$(echo "$abi" | cut -d. -f1,2)
	[ -x "$kbuild/scripts/mod/modpost" ] || die "$kbuild is not installed (linux-kbuild, make deps)"
	if [ ! -f "$dest/Module.symvers" ]; then
		tmp=$(unpack "linux-headers-$abi" "$cache")
		trap "rm -rf '$tmp'" EXIT
		tree=$tmp/root/usr/src/linux-headers-$abi
		grep -qx "include $common/Makefile" "$tree/Makefile" ||
			die "linux-headers-$abi does not include $common/Makefile"
		rm -f "$tree/scripts" "$tree/tools"
		ln -s "$kbuild/scripts" "$tree/scripts"
		ln -s "$kbuild/tools" "$tree/tools"
		rm -rf "$dest"
		mv "$tree" "$dest"
		rm -rf "$tmp"
		trap - EXIT
	fi
	echo "$dest"
}

fetch_busybox() {
	local cache=$1 tmp

	if [ ! -x "$cache/busybox" ]; then
		tmp=$(unpack busybox-static "$cache")
		trap "rm -rf '$tmp'" EXIT
		mv "$tmp/root/bin/busybox" "$cache/busybox"
		rm -rf "$tmp"
		trap - EXIT
	fi
	echo "$cache/busybox"
}

main() {
	case ${1:-} in
	headers) [ $# -eq 3 ] || die "usage: fetch.sh headers ABI CACHE"
		mkdir -p "$3" && fetch_headers "$2" "$(realpath "$3")" ;;
	busybox) [ $# -eq 2 ] || die "usage: fetch.sh busybox CACHE"
		mkdir -p "$2" && fetch_busybox "$(realpath "$2")" ;;
	*) die "usage: fetch.sh headers ABI CACHE | busybox CACHE" ;;
	esac
}

main "$@"
