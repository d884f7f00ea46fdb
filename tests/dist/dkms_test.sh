#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# DKMS builds sieve.ko from the tree sieve-dkms installs (make dkms-src):
# `dkms add` and `dkms build -k KERNEL` in a DKMS tree of its own (the
# machine's /var/lib/dkms is left alone, and so is its signing key: the
# module is signed with a key made for the run), then checks the module it
# built. Copies it to OUT_KO for the VM (make test-dkms boots it).
# Usage: dkms_test.sh SRC_DIR KERNEL WORK_DIR OUT_KO [RESULT_FILE]
#
# For another machine's kernel (tests/arm64/arm64.mk), DKMS_ARCH names it
# (dkms -a, e.g. aarch64), DKMS_KERNEL_SOURCE its headers tree, and
# CROSS_COMPILE, in the environment, reaches Kbuild through dkms's make.
set -uo pipefail
src=${1:?usage: dkms_test.sh SRC_DIR KERNEL WORK_DIR OUT_KO [RESULT_FILE]}
kernel=${2:?usage: dkms_test.sh SRC_DIR KERNEL WORK_DIR OUT_KO [RESULT_FILE]}
work=${3:?usage: dkms_test.sh SRC_DIR KERNEL WORK_DIR OUT_KO [RESULT_FILE]}
out_ko=${4:?usage: dkms_test.sh SRC_DIR KERNEL WORK_DIR OUT_KO [RESULT_FILE]}
. "$(dirname "$0")/../lib.sh"

src=$(realpath "$src")
name=${src##*/}			# sieve-VERSION
version=${name#sieve-}
rm -rf "$work" "$out_ko" && mkdir -p "$work/tree" "$work/key"
# dkms takes the signing key's paths from its framework configuration,
# or, where that sets none (Debian's sets none), from the environment.
export mok_signing_key=$work/key/mok.key mok_certificate=$work/key/mok.pub
dkms_opts=(-m sieve -v "$version" --dkmstree "$work/tree" --sourcetree "$(dirname "$src")")
build_opts=(-k "$kernel")
[ -z "${DKMS_ARCH:-}" ] || build_opts+=(-a "$DKMS_ARCH")
[ -z "${DKMS_KERNEL_SOURCE:-}" ] || build_opts+=(--kernelsourcedir "$DKMS_KERNEL_SOURCE")

check_out "dkms add sieve/$version" dkms add "${dkms_opts[@]}"
if dkms build "${dkms_opts[@]}" "${build_opts[@]}" >"$work/build.out" 2>&1; then
	ok "dkms build sieve/$version for $kernel"
else
	not_ok "dkms build sieve/$version for $kernel" "$(tail -n 20 "$work/build.out")" \
		"$(tail -n 30 "$work/tree/sieve/$version/build/make.log" 2>/dev/null)"
fi
check_out "dkms status says built" sh -c "dkms status ${dkms_opts[*]} -k $kernel | grep -q ': built'"
ko=$(ls "$work/tree/sieve/$version/$kernel"/*/module/sieve.ko* 2>/dev/null | head -n 1)
check "the built module is sieve.ko" test -n "$ko"
if [ -n "$ko" ]; then
	check "its vermagic is $kernel's" sh -c "modinfo -F vermagic '$ko' | grep -q '^$kernel '"
	check "it is GPL" sh -c "modinfo -F license '$ko' | grep -qx GPL"
	check "it is signed with the run's key" sh -c "modinfo -F signer '$ko' | grep -q 'DKMS module signing key'"
	mkdir -p "$(dirname "$out_ko")" && cp "$ko" "$out_ko"
fi
check "nothing of it in /var/lib/dkms" test ! -e /var/lib/dkms/sieve
check_out "dkms remove sieve/$version" dkms remove "${dkms_opts[@]}" --all

finish "${5:-}"
