#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# What `make install DESTDIR=ROOT PREFIX=PREFIX` put in ROOT: the files,
# and a program built against them through pkg-config, linked to the
# shared library and to the static one.
# Usage: install_test.sh ROOT PREFIX [RESULT_FILE]; writes "PASSED FAILED".
set -uo pipefail
. "$(dirname "$0")/../lib.sh"
work=$(mktemp -d) || exit 2
at_exit "rm -rf '$work'"
root=${1:?usage: install_test.sh ROOT PREFIX [RESULT_FILE]}
prefix=${2:?usage: install_test.sh ROOT PREFIX [RESULT_FILE]}
result_file=${3:-}
src=$(cd "$(dirname "$0")" && pwd)/install/use_libsieve.c

lib=$root$prefix/lib
for f in lib/libsieve.a lib/libsieve.so lib/libsieve.so.0 include/libsieve.h \
	include/linux/sieve.h lib/pkgconfig/sieve.pc bin/sieve bin/sieve-agent; do
	check "installed $f" test -e "$root$prefix/$f"
done
# fail2ban reads /etc/fail2ban only, whatever the prefix.
check "fail2ban's action is in /etc/fail2ban/action.d" \
	cmp -s "$root/etc/fail2ban/action.d/sieve-xdp.conf" "$(dirname "$0")/../../dist/fail2ban/sieve-xdp.conf"
check "the README is in share/doc/sieve, as sieve.conf(5) says" \
	cmp -s "$root$prefix/share/doc/sieve/README.md" "$(dirname "$0")/../../README.md"
check "libsieve.so.0 is a link to the versioned library" test -L "$lib/libsieve.so.0"
check "the shared library's soname is libsieve.so.0" \
	sh -c "readelf -d '$lib/libsieve.so' | grep -q 'SONAME.*\[libsieve.so.0\]'"
check "the shared library exports libsieve.h's API, not the cores" \
	sh -c "nm -D --defined-only '$lib/libsieve.so' | grep -q ' sieve_local_create' &&
		! nm -D --defined-only '$lib/libsieve.so' | grep -q ' sieve_filter_create'"

# pkg-config as a user of ROOT sees it: paths inside ROOT.
export PKG_CONFIG_LIBDIR=$lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root
cflags=$(pkg-config --cflags sieve) libs=$(pkg-config --libs sieve)
check "pkg-config knows sieve" test -n "$libs"
check "pkg-config points into the installed tree" grep -q -- "-L$lib" <<<"$libs"

# shellcheck disable=SC2046,SC2086 # pkg-config's flags: one word each
if cc $cflags -Wall -Werror -o "$work/dynamic" "$src" $libs 2>"$work/cc.err"; then
	ok "a program builds against the installed headers and shared library"
	check "it links libsieve.so.0" sh -c "readelf -d '$work/dynamic' | grep -q 'NEEDED.*libsieve.so.0'"
	check "it runs" sh -c "LD_LIBRARY_PATH='$lib' '$work/dynamic' '$work/d.snap' | grep -qx ok"
else
	not_ok "a program builds against the installed headers and shared library" "$(cat "$work/cc.err")"
fi
# shellcheck disable=SC2046,SC2086 # pkg-config's flags: one word each
if cc $cflags -Wall -Werror -static -o "$work/static" "$src" \
	$(pkg-config --libs --static sieve | sed 's/-lsieve/-l:libsieve.a/') 2>"$work/cc.err"; then
	ok "a program links the installed libsieve.a statically"
	check "the static one runs" sh -c "'$work/static' '$work/s.snap' | grep -qx ok"
	check "the two write the same snapshot" cmp -s "$work/d.snap" "$work/s.snap"
else
	not_ok "a program links the installed libsieve.a statically" "$(cat "$work/cc.err")"
fi
check "the installed CLI runs" sh -c "'$root$prefix/bin/sieve' size -t bloom -n 1k >/dev/null"
check "the installed CLI runs the installed agent beside it" \
	sh -c "'$root$prefix/bin/sieve' agent --check --config /dev/null | grep -q '^state_dir = '"

finish "$result_file"
