#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: objtree.sh KDIR CACHE
#
# Prints the folder of a kernel objtree that builds sieve.ko with BTF (and
# so with its kfuncs) for the kernel of the headers tree KDIR, preparing it
# in CACHE/ABI/ first if needed (KDIR itself if it is a built tree with
# vmlinux and resolve_btfids); or, where BTF cannot be had, says why on
# stderr (one line) and exits 3.
#
# Kbuild gives a module BTF (`BTF [M]`) only if the kernel has
# CONFIG_DEBUG_INFO_BTF_MODULES and its objtree holds three things that
# Debian's linux-headers packages do not ship:
#  - vmlinux, whose .BTF the module's BTF is based on: extracted from the
#    image the kernel boots (scripts/extract-vmlinux), here Debian's
#    linux-image of KDIR's ABI as tests/vm/kernel.sh fetches it for the VM;
#    for the running kernel, /sys/kernel/btf/vmlinux (raw BTF) does too;
#  - tools/bpf/resolve_btfids/resolve_btfids, which fills the module's
#    .BTF_ids (the kfunc sets): built from Debian's linux-source-X.Y of
#    KDIR's version (~20 s);
#  - pahole (Debian package pahole) on PATH.
# KDIR itself is never changed: the objtree is a copy of it (3 MB; its
# Makefile includes the shared -common tree by absolute path), with those
# added. The copy is remade only when the headers, the image or the source
# package change (CACHE/ABI/stamp).
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)

# Said once per build, by the build that goes on without BTF.
no_btf() { echo "  BTF      none ($*): sieve.ko is built without kfuncs" >&2; exit 3; }
die() { echo "objtree.sh: $*" >&2; exit 2; }

# The Debian package that owns a path, with its version, or "-".
owner_version() {
	local pkg

	pkg=$(dpkg-query -S "$1" 2>/dev/null | head -n 1 | cut -d: -f1) || true
	[ -n "$pkg" ] || { echo "-"; return; }
	echo "$pkg $(dpkg-query -W -f='${Version}' "$pkg")"
}

# Writes DEST/vmlinux for the kernel of ABI; prints what it came from.
get_vmlinux() {
	local abi=$1 dest=$2 image

	if [ "$abi" = "$(uname -r)" ] && [ -r /sys/kernel/btf/vmlinux ]; then
		cp /sys/kernel/btf/vmlinux "$dest/vmlinux"
		echo "running kernel"
		return
	fi
	image=$("$TOP/tests/vm/kernel.sh" "$abi" "$TOP/build/vm/kernel") ||
		no_btf "cannot fetch linux-image-$abi to take vmlinux's BTF from"
	"$dest/src/scripts/extract-vmlinux" "$image/vmlinuz" >"$dest/vmlinux" ||
		no_btf "extract-vmlinux found no vmlinux in $image/vmlinuz"
	echo "$(cat "$image/version") $(sha256sum <"$image/vmlinuz" | cut -c1-16)"
}

# The parts of the kernel source that extract-vmlinux and resolve_btfids need.
unpack_source() {
	local dest=$1

	mkdir -p "$dest/src"
	tar -xJf "$SOURCE_TARBALL" -C "$dest/src" --strip-components=1 \
		"$SOURCE_DIR/tools" "$SOURCE_DIR/scripts" "$SOURCE_DIR/include" \
		"$SOURCE_DIR/arch/$SOURCE_ARCH/include" "$SOURCE_DIR/Makefile" ||
		no_btf "cannot unpack $SOURCE_TARBALL"
}

build_resolve_btfids() {
	local src=$1/src log=$1/resolve_btfids.log

	make -C "$src/tools/bpf/resolve_btfids" -j"$(nproc)" >"$log" 2>&1 ||
		{ tail -n 20 "$log" >&2; no_btf "building resolve_btfids failed (log: $log)"; }
}

# KDIR copied, its relative links (scripts, tools) made absolute, tools a
# folder of its own that adds resolve_btfids beside Debian's objtool.
copy_objtree() {
	local kdir=$1 tmp=$2 link target

	cp -a "$kdir" "$tmp/objtree"
	for link in "$tmp/objtree"/*; do
		[ -L "$link" ] || continue
		target=$(realpath "$kdir/$(basename "$link")")
		rm "$link"
		ln -s "$target" "$link"
	done
	if [ -L "$tmp/objtree/tools" ]; then
		target=$(readlink "$tmp/objtree/tools")
		rm "$tmp/objtree/tools"
		cp -a "$target" "$tmp/objtree/tools"
	fi
	mkdir -p "$tmp/objtree/tools/bpf/resolve_btfids"
	cp "$tmp/src/tools/bpf/resolve_btfids/resolve_btfids" \
		"$tmp/objtree/tools/bpf/resolve_btfids/"
	mv "$tmp/vmlinux" "$tmp/objtree/vmlinux"
}

main() {
	[ $# -eq 2 ] || die "usage: objtree.sh KDIR CACHE"
	local kdir cache abi key from tmp

	kdir=$(realpath "$1")
	cache=$(realpath -m "$2")
	[ -f "$kdir/.config" ] || no_btf "$kdir has no .config"
	grep -q '^CONFIG_DEBUG_INFO_BTF_MODULES=y' "$kdir/.config" ||
		no_btf "the kernel has no CONFIG_DEBUG_INFO_BTF_MODULES"
	command -v pahole >/dev/null || no_btf "pahole is not installed (make deps)"
	# A tree built from source (the debug kernel's) has them already.
	if [ -f "$kdir/vmlinux" ] && [ -x "$kdir/tools/bpf/resolve_btfids/resolve_btfids" ]; then
		echo "$kdir"
		return
	fi
	# Debian's kernel.release says 6.1.192; the ABI is in utsrelease.h.
	abi=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"$/\1/p' \
		"$kdir/include/generated/utsrelease.h" 2>/dev/null) && [ -n "$abi" ] ||
		no_btf "$kdir has no include/generated/utsrelease.h"
	# vmlinux comes from the running kernel's BTF or x86's bzImage: arm64's
	# Image (Debian's vmlinuz) holds no ELF to extract.
	SOURCE_ARCH=arm64
	grep -q '^CONFIG_X86_64=y' "$kdir/.config" && SOURCE_ARCH=x86
	[ "$SOURCE_ARCH" = x86 ] || { [ "$abi" = "$(uname -r)" ] && [ -r /sys/kernel/btf/vmlinux ]; } ||
		no_btf "Debian's $SOURCE_ARCH image holds no ELF vmlinux to take BTF from"
	SOURCE_DIR=linux-source-$(echo "$abi" | cut -d. -f1,2)
	SOURCE_TARBALL=/usr/src/$SOURCE_DIR.tar.xz
	[ -f "$SOURCE_TARBALL" ] || no_btf "$SOURCE_DIR is not installed (make deps)"
	mkdir -p "$cache"
	exec 9>"$cache/lock"
	flock 9
	key="$(owner_version "$kdir/.config") $(owner_version "$SOURCE_TARBALL")"
	key+=" $(pahole --version)"
	if [ -f "$cache/$abi/stamp" ] && [ "$(head -n 1 "$cache/$abi/stamp")" = "$key" ] &&
		[ -x "$cache/$abi/objtree/tools/bpf/resolve_btfids/resolve_btfids" ]; then
		echo "$cache/$abi/objtree"
		return
	fi
	echo "  BTF      preparing an objtree for $abi with vmlinux and resolve_btfids" >&2
	tmp=$(mktemp -d "$cache/prepare.XXXXXX")
	trap "rm -rf '$tmp'" EXIT
	unpack_source "$tmp"
	from=$(get_vmlinux "$abi" "$tmp")
	build_resolve_btfids "$tmp"
	copy_objtree "$kdir" "$tmp"
	printf '%s\nvmlinux: %s\n' "$key" "$from" >"$tmp/stamp"
	rm -rf "$cache/$abi"
	mkdir -p "$cache/$abi"
	mv "$tmp/objtree" "$tmp/stamp" "$cache/$abi/"
	echo "$cache/$abi/objtree"
}

main "$@"
