#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: kernel.sh FRAGMENT CACHE
#
# Makes sure CACHE/linux holds Debian's linux-source-6.1 configured as
# `make tinyconfig` plus FRAGMENT (every line of which must be in the final
# .config) and built: bzImage, vmlinux and Module.symvers, so that
# out-of-tree modules build against it with `make -C CACHE/linux M=...`.
# CACHE/boot/vmlinuz is the image (as tests/vm/run.sh --kernel wants it).
# Prints the tree's path (the only thing on stdout).
#
# The build is cached: it is redone only when FRAGMENT's settings (not its
# comments) or the installed source package's version change (a new version is unpacked afresh). It
# takes several minutes on 2 cores; its time is printed, its log kept in
# CACHE/build.log. Concurrent runs wait for each other (flock).
set -euo pipefail

SOURCE_PKG=linux-source-6.1
TARBALL=/usr/src/linux-source-6.1.tar.xz

die() { echo "kernel.sh: $*" >&2; exit 2; }

# Unpacks the source into CACHE/linux unless that version is there already.
unpack() {
	local cache=$1 version=$2 tmp

	if [ -f "$cache/linux/.sieve-source" ] &&
		[ "$(cat "$cache/linux/.sieve-source")" = "$version" ]; then
		return
	fi
	echo "  UNPACK   $SOURCE_PKG $version" >&2
	tmp=$(mktemp -d "$cache/unpack.XXXXXX")
	tar -xf "$TARBALL" -C "$tmp"
	rm -rf "${cache:?}/linux" "${cache:?}/boot"
	mv "$tmp/$SOURCE_PKG" "$cache/linux"
	rmdir "$tmp"
	echo "$version" >"$cache/linux/.sieve-source"
}

# The fragment's settings, without its comments: what the cache key hashes.
config_lines() {
	grep -E '^(CONFIG_|# CONFIG_[A-Za-z0-9_]+ is not set)' "$1"
}

# Every CONFIG_X=v and "# CONFIG_X is not set" line of the fragment that
# the final .config does not have (a dependency refused it).
missing_options() {
	local fragment=$1 config=$2 line opt

	config_lines "$fragment" | while read -r line; do
		if [[ $line == "# "* ]]; then
			opt=${line#\# }
			opt=${opt%% *}
			grep -q "^$opt=" "$config" && echo "$line"
		else
			grep -qxF "$line" "$config" || echo "$line"
		fi
	done
	true
}

configure() {
	local tree=$1 fragment=$2 log=$3/config.log missing

	# merge_config.sh warns about every choice the fragment overrides:
	# expected, so its output goes to the log, shown only on failure.
	{ make -C "$tree" -s tinyconfig &&
		"$tree/scripts/kconfig/merge_config.sh" -m -O "$tree" "$tree/.config" "$fragment" &&
		make -C "$tree" -s olddefconfig; } >"$log" 2>&1 ||
		{ cat "$log" >&2; die "configuring the kernel failed"; }
	missing=$(missing_options "$fragment" "$tree/.config")
	[ -z "$missing" ] || die "options of $fragment that did not make it into the .config" \
		"(a dependency is missing):"$'\n'"$missing"
}

build() {
	local tree=$1 cache=$2 start end

	start=$(date +%s)
	echo "  KERNEL   building $SOURCE_PKG with $(basename "$3") (several minutes; log in $cache/build.log)" >&2
	if ! make -C "$tree" -j"$(nproc)" bzImage modules >"$cache/build.log" 2>&1; then
		tail -n 40 "$cache/build.log" >&2
		die "kernel build failed (whole log: $cache/build.log)"
	fi
	[ -f "$tree/Module.symvers" ] || die "no Module.symvers after the build"
	mkdir -p "$cache/boot"
	cp "$tree/arch/x86/boot/bzImage" "$cache/boot/vmlinuz"
	cp "$tree/.config" "$cache/boot/config"
	end=$(date +%s)
	echo "  KERNEL   built in $((end - start)) s" >&2
}

main() {
	[ $# -eq 2 ] || die "usage: kernel.sh FRAGMENT CACHE"
	local fragment cache version key

	fragment=$(realpath "$1")
	cache=$(realpath -m "$2")
	[ -f "$fragment" ] || die "$fragment: no such file"
	version=$(dpkg-query -W -f='${Version}' "$SOURCE_PKG" 2>/dev/null) && [ -f "$TARBALL" ] ||
		die "$SOURCE_PKG is not installed (make deps)"
	mkdir -p "$cache"
	exec 9>"$cache/lock"
	flock 9
	key="$version $(config_lines "$fragment" | sha256sum | cut -d' ' -f1)"
	if [ -f "$cache/stamp" ] && [ "$(cat "$cache/stamp")" = "$key" ] &&
		[ -f "$cache/boot/vmlinuz" ] && [ -f "$cache/linux/Module.symvers" ]; then
		echo "$cache/linux"
		return
	fi
	rm -f "$cache/stamp"
	unpack "$cache" "$version"
	configure "$cache/linux" "$fragment" "$cache"
	build "$cache/linux" "$cache" "$fragment"
	echo "$key" >"$cache/stamp"
	echo "$cache/linux"
}

main "$@"
