#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: initramfs.sh OUT INIT [SRC=DEST]...
#
# Writes a gzipped newc initramfs to OUT holding a static busybox (its
# applets are linked at boot by INIT), INIT as /init, and each SRC at the
# absolute path DEST. Programs that go in must be statically linked: the
# image has no C library.
set -euo pipefail

die() { echo "initramfs.sh: $*" >&2; exit 2; }

# $BUSYBOX if set (another machine's, e.g. arm64's), else the host's.
find_busybox() {
	local b

	for b in ${BUSYBOX:-} /bin/busybox /usr/bin/busybox; do
		if [ -x "$b" ] && ! is_dynamic "$b"; then
			echo "$b"
			return
		fi
	done
	die "no static busybox found: install busybox-static (make deps)"
}

# A dynamic ELF names its loader in a PT_INTERP header.
is_dynamic() {
	LC_ALL=C readelf -l "$1" 2>/dev/null | grep -q 'Requesting program interpreter'
}

# Copies SRC to ROOT/DEST, refusing dynamically linked executables.
add_file() {
	local root=$1 src=${2%%=*} dest=${2#*=}

	[ "$src" != "$2" ] && [ "${dest#/}" != "$dest" ] || die "bad entry '$2' (want SRC=/DEST)"
	[ -f "$src" ] || die "$src: no such file"
	if head -c 4 "$src" | grep -q 'ELF' && is_dynamic "$src"; then
		die "$src is dynamically linked; VM programs must be built with -static"
	fi
	mkdir -p "$root$(dirname "$dest")"
	cp "$src" "$root$dest"
}

main() {
	[ $# -ge 2 ] || die "usage: initramfs.sh OUT INIT [SRC=DEST]..."
	local out=$1 init=$2 root entry
	shift 2

	root=$(mktemp -d "${out}.root.XXXXXX")
	trap "rm -rf '$root'" EXIT
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,out}
	cp "$(find_busybox)" "$root/bin/busybox"
	ln -s busybox "$root/bin/sh"
	install -m 0755 "$init" "$root/init"
	for entry in "$@"; do
		add_file "$root" "$entry"
	done
	(cd "$root" && find . -print0 | LC_ALL=C sort -z |
		cpio --null -o -H newc -R 0:0 --quiet) | gzip -1 >"$out.tmp"
	mv "$out.tmp" "$out"
}

main "$@"
