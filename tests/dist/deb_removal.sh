#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Removal of the sieve package (issue 22, item 7), on this machine (root):
#  - a /var/lib/sieve that was there before the install (someone's store)
#    is marked by the preinst and left, with its files, by the purge;
#  - `apt-get remove sieve` takes down the XDP program the CLI attached
#    (the prerm's `sieve xdp detach --all`): no XDP on the interface, no
#    pins left. `ip link set dev X xdp off` cannot do it for a pinned link.
# The prerm detaches every attachment of the host's bpffs, and the store
# of the test is not the machine's: so this runs in a mount namespace of
# its own, with a bpffs of its own at /sys/fs/bpf and a folder of its own
# mounted over /var/lib/sieve (made for the mount, if absent, and removed).
# deb_test.sh runs it after its own purge (the packages are not installed).
# Usage: deb_removal.sh SIEVE_DEB LIBSIEVE0_DEB [RESULT_FILE]
set -uo pipefail
usage="usage: deb_removal.sh SIEVE_DEB LIBSIEVE0_DEB [RESULT_FILE]"
sieve_deb=$(realpath "${1:?$usage}")
lib_deb=$(realpath "${2:?$usage}")
result_file=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "deb_removal.sh: needs root (it installs packages)" >&2; exit 2; }

if [ -z "${SIEVE_DEB_REMOVAL_ISOLATED:-}" ]; then
	made=
	[ -e /var/lib/sieve ] || { mkdir -m 0700 /var/lib/sieve && made=1; }
	SIEVE_DEB_REMOVAL_ISOLATED=1 unshare -m --propagation private "$0" "$@"
	rc=$?
	[ -z "$made" ] || rmdir /var/lib/sieve
	exit $rc
fi

. "$here/../lib.sh"
export DEBIAN_FRONTEND=noninteractive
T=$$
NS=sieve-debrm-$T
work=$(mktemp -d /tmp/sieve-deb-removal.XXXXXX)
cleanup() {
	dpkg --purge sieve libsieve0 >/dev/null 2>&1
	ip netns del $NS 2>/dev/null
	umount /var/lib/sieve 2>/dev/null
	rm -rf "$work"
}
at_exit cleanup

mount -t bpf bpf /sys/fs/bpf || { not_ok "a bpffs of our own"; finish "$result_file"; exit 1; }
mkdir -m 0700 "$work/foreign"
echo "someone's store" >"$work/foreign/theirs.db"
mount --bind "$work/foreign" /var/lib/sieve ||
	{ not_ok "a folder of our own over /var/lib/sieve"; finish "$result_file"; exit 1; }

if apt-get install -y -qq --no-install-recommends "$sieve_deb" "$lib_deb" >"$work/install.log" 2>&1; then
	ok "apt-get installs sieve and libsieve0 over a /var/lib/sieve already there"
else
	not_ok "apt-get installs sieve and libsieve0" "$(tail -n 20 "$work/install.log")"
fi
check "the preinst marked it to be kept (.keep-on-purge)" test -e /var/lib/sieve/.keep-on-purge

ip netns add $NS && ip -n $NS link add dra$T type veth peer name drb$T &&
	ip -n $NS link set dra$T up && ip -n $NS link set drb$T up ||
	not_ok "a namespace with a veth pair"
SIEVE_STATE_DIR=$work/state nsenter --net=/run/netns/$NS /usr/bin/sieve xdp attach dra$T \
	>"$work/attach.log" 2>&1 || not_ok "sieve xdp attach dra$T" "$(cat "$work/attach.log")"
check "XDP is on dra$T" sh -c "ip -n $NS link show dev dra$T | grep -q xdp"

if apt-get remove -y -qq sieve >"$work/remove.log" 2>&1; then
	ok "apt-get remove sieve"
else
	not_ok "apt-get remove sieve" "$(tail -n 20 "$work/remove.log")"
fi
check "the removal took XDP off dra$T" sh -c "! ip -n $NS link show dev dra$T | grep -q xdp"
check "no pin folder is left" sh -c "! ls -d /sys/fs/bpf/sieve/netns-* 2>/dev/null | grep -q ."

if apt-get purge -y -qq sieve libsieve0 >"$work/purge.log" 2>&1; then
	ok "apt-get purge sieve libsieve0"
else
	not_ok "apt-get purge sieve libsieve0" "$(tail -n 20 "$work/purge.log")"
fi
check "the purge left the store that was there before" test -f /var/lib/sieve/theirs.db

finish "$result_file"
