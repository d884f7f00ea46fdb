#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages that `make deb` left in DEB_DIR, on this machine
# (root: it installs them, then purges them):
#  - lintian finds no error and no warning that an override in debian/
#    does not justify;
#  - apt-get installs the four packages; the CLI runs, the unit is in
#    place and passes systemd-analyze verify, the configuration is a
#    conffile, the BPF object is one; a program built through pkg-config
#    links libsieve and runs; sieve-dkms's installation built and
#    installed sieve.ko through DKMS for each kernel whose headers are here;
#  - apt-get purge leaves nothing: no package, none of their files, no
#    /etc/sieve, /var/lib/sieve, /usr/src/sieve-*, /var/lib/dkms/sieve,
#    sieve.ko, systemd links;
#  - then deb_removal.sh: removal detaches what the CLI attached, and a
#    purge leaves a /var/lib/sieve that was there before the install.
# A kernel tree under /lib/modules that holds only the headers' links (no
# linux-image: this machine) gets depmod's indexes from the DKMS install;
# they are the kernel's, not the packages', and are removed again after
# the purge, so the machine is left as it was found.
# Usage: deb_test.sh DEB_DIR VERSION [RESULT_FILE]
set -uo pipefail
deb_dir=${1:?usage: deb_test.sh DEB_DIR VERSION [RESULT_FILE]}
version=${2:?usage: deb_test.sh DEB_DIR VERSION [RESULT_FILE]}
result_file=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
. "$here/purge.sh"

PACKAGES="sieve sieve-dkms libsieve0 libsieve-dev"
[ "$(id -u)" = 0 ] || { echo "deb_test.sh: needs root (it installs packages)" >&2; exit 2; }
export DEBIAN_FRONTEND=noninteractive

work=$(mktemp -d)
installed_here=0
# The sieve package's prerm detaches every attachment of the host's bpffs
# (sieve xdp detach --all; deb_removal.sh tests it): this purge runs with a
# bpffs of its own, so that others' attachments on this machine stay.
purge() {
	unshare -m --propagation private sh -c \
		"mount -t bpf bpf /sys/fs/bpf && apt-get purge -y -qq $PACKAGES" >"$work/purge.log" 2>&1
}
cleanup() {
	# The test's own mess, if it died between install and purge.
	[ "$installed_here" = 0 ] || purge
	rm -rf "$work"
}
at_exit cleanup

debs=()
for p in $PACKAGES; do
	f=$(ls "$deb_dir/${p}_${version}_"*.deb 2>/dev/null | head -n 1)
	check "make deb built $p $version" test -n "$f"
	[ -z "$f" ] || debs+=("$(realpath "$f")")
done
[ ${#debs[@]} -eq 4 ] || { finish "$result_file"; exit 1; }

# lintian: every tag left is an error or warning to fix, or one overridden
# with its reason in debian/*.lintian-overrides.
changes=$(ls "$deb_dir"/sieve_"$version"_*.changes | head -n 1)
if lintian --fail-on error,warning --info --display-info "$changes" >"$work/lintian" 2>&1; then
	ok "lintian: no error or warning left"
else
	not_ok "lintian: no error or warning left" "$(grep -v 'root privileges' "$work/lintian")"
fi
sed -n 's/^\([EWIP]: .*\)/# lintian: \1/p' "$work/lintian"
lintian --no-tag-display-limit --show-overrides --display-info "$changes" 2>/dev/null | sed -n 's/^O: /# lintian (overridden): /p'

# Someone's store would be kept by the purge (deb_removal.sh tests that), not purged.
if [ -e /var/lib/sieve ]; then
	not_ok "no /var/lib/sieve before the test (someone's store: move it away)"
fi

purge_left_over

# The kernels DKMS should build for: those whose headers are here.
kernels=$(for d in /lib/modules/*/build; do [ -e "$d/Makefile" ] && basename "$(dirname "$d")"; done)
for k in $kernels; do find "/lib/modules/$k" -mindepth 1 -maxdepth 1 -printf '%P\n' | sort >"$work/before.$k"; done

installed_here=1
if apt-get install -y -qq --no-install-recommends "${debs[@]}" >"$work/install.log" 2>&1; then
	ok "apt-get installs the four packages"
else
	not_ok "apt-get installs the four packages" "$(tail -n 30 "$work/install.log")"
fi
for p in $PACKAGES; do
	check "$p is installed" sh -c "dpkg-query -W -f='\${Status}' $p | grep -qx 'install ok installed'"
done

# sieve
check "sieve --version says $version" sh -c "/usr/bin/sieve --version | grep -q '^sieve $version '"
check "the bash completion is installed" test -f /usr/share/bash-completion/completions/sieve
check "the README is in /usr/share/doc/sieve, where sieve.conf(5) points" \
	sh -c "zcat /usr/share/doc/sieve/README.md.gz | cmp -s - '$here/../../README.md'"
for page in man8/sieve.8 man8/sieve-xdp.8 man8/sieve-filter.8 man8/sieve-agent.8 man5/sieve.conf.5 man3/libsieve.3; do
	check "man page $page is installed" test -f /usr/share/man/$page.gz
done
check_out "sieve sizes a filter" /usr/bin/sieve size -t bloom -n 1k
check "sieve-agent is installed beside sieve" test -x /usr/bin/sieve-agent
check_out "sieve agent runs it (--check)" sh -c "/usr/bin/sieve agent --check | grep -q '^state_dir = '"
check "sieve loads none of the agent's libraries (inih, which reads sieve.conf, aside)" \
	sh -c "! ldd /usr/bin/sieve | grep -Eq 'libmicrohttpd|libsystemd|libhiredis'"
unit=/lib/systemd/system/sieve.service
check "the unit is at $unit" test -f "$unit"
check_out "systemd-analyze verify accepts the installed unit" systemd-analyze verify "$unit"
check "the unit is enabled (multi-user.target.wants)" test -L /etc/systemd/system/multi-user.target.wants/sieve.service
check "/etc/sieve/sieve.conf is a conffile" \
	sh -c "dpkg-query -W -f='\${Conffiles}' sieve | grep -q ' /etc/sieve/sieve.conf '"
check "fail2ban's action is a conffile" \
	sh -c "dpkg-query -W -f='\${Conffiles}' sieve | grep -q ' /etc/fail2ban/action.d/sieve-xdp.conf '"
check "the BPF object is one (ELF for Linux BPF)" \
	sh -c "LC_ALL=C readelf -h /usr/lib/sieve/sieve_xdp.bpf.o | grep -q 'Machine:.*Linux BPF'"

# libsieve0 and libsieve-dev: a user's program, through pkg-config.
cflags=$(pkg-config --cflags sieve 2>"$work/pc.err") libs=$(pkg-config --libs sieve 2>>"$work/pc.err")
check_out "pkg-config knows sieve" pkg-config --exists sieve
# shellcheck disable=SC2046,SC2086 # pkg-config's flags: one word each
if cc $cflags -Wall -Werror -o "$work/use" "$here/../unit/install/use_libsieve.c" $libs 2>"$work/cc.err"; then
	ok "a program builds with \$(pkg-config --cflags --libs sieve)"
	check "it links the packaged libsieve.so.0" \
		sh -c "ldd '$work/use' | grep -q 'libsieve.so.0 => /.*lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/libsieve.so.0 '"
	check_out "it runs" sh -c "'$work/use' '$work/d.snap' | grep -qx ok"
else
	not_ok "a program builds with \$(pkg-config --cflags --libs sieve)" "$(cat "$work/pc.err" "$work/cc.err")"
fi
# shellcheck disable=SC2046,SC2086 # pkg-config's flags: one word each
if cc $cflags -Wall -Werror -static -o "$work/use-static" "$here/../unit/install/use_libsieve.c" \
	$(pkg-config --libs --static sieve | sed 's/-lsieve/-l:libsieve.a/') 2>"$work/cc.err"; then
	ok "a program links the packaged libsieve.a"
	check_out "the static one runs" sh -c "'$work/use-static' '$work/s.snap' | grep -qx ok"
else
	not_ok "a program links the packaged libsieve.a" "$(cat "$work/cc.err")"
fi

# sieve-dkms: the postinst's dkms add, build, install.
check "the DKMS sources are in /usr/src/sieve-$version" test -f "/usr/src/sieve-$version/dkms.conf"
check "no '#MODULE_VERSION#' is left in dkms.conf" sh -c "! grep -q MODULE_VERSION /usr/src/sieve-$version/dkms.conf"
[ -n "$kernels" ] || not_ok "kernel headers to build sieve.ko against (make deps installs linux-headers-$(dpkg --print-architecture))"
for k in $kernels; do
	check_out "dkms status: sieve/$version installed for $k" \
		sh -c "dkms status -m sieve -v $version -k $k | grep -q ': installed'"
	ko=/lib/modules/$k/updates/dkms/sieve.ko
	check "DKMS put $ko in place" test -f "$ko"
	check "its vermagic is $k's" sh -c "modinfo -F vermagic '$ko' | grep -q '^$k '"
done

# What dpkg installed, to look for after the purge.
for p in $PACKAGES; do dpkg -L "$p" 2>/dev/null; done | sort -u >"$work/files"

if purge; then ok "apt-get purge removes the four packages"; else not_ok "apt-get purge removes the four packages" "$(tail -n 30 "$work/purge.log")"; fi
installed_here=0
check_purged "$work/files" /etc/sieve /var/lib/sieve /usr/lib/sieve "/usr/src/sieve-$version" \
	/var/lib/dkms/sieve
check "no sieve.ko under /lib/modules" sh -c "! find /lib/modules -name 'sieve.ko*' | grep -q ."
check "no systemd link or state for sieve.service" \
	sh -c "! find /etc/systemd /var/lib/systemd -name 'sieve.service*' 2>/dev/null | grep -q ."

# Removal and purge beside someone's store, in a mount namespace of its own.
"$here/deb_removal.sh" "${debs[0]}" "${debs[2]}" "$work/removal.result" || true
if read -r p f <"$work/removal.result" 2>/dev/null; then
	passed=$((passed + p)) failed=$((failed + f))
else
	not_ok "deb_removal.sh reported its results"
fi

# depmod's indexes in a kernel tree that had none (see the top).
for k in $kernels; do
	find "/lib/modules/$k" -mindepth 1 -maxdepth 1 -printf '%P\n' | sort >"$work/after.$k"
	new=$(comm -13 "$work/before.$k" "$work/after.$k")
	other=$(grep -v '^modules\.' <<<"$new" | grep -v '^updates$' || true)
	check "only depmod's indexes were added to /lib/modules/$k" test -z "$other"
	for f in $new; do
		case $f in
		modules.*) rm -f "/lib/modules/$k/$f" ;;
		updates) find "/lib/modules/$k/updates" -depth -type d -empty -delete ;;
		esac
	done
	[ -z "$new" ] || echo "# removed depmod's indexes from /lib/modules/$k (no linux-image here)"
done

finish "$result_file"
