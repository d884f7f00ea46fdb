# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash # sourced by bash scripts, after tests/lib.sh
# Sourced by the package tests of tests/dist/ (deb_test.sh,
# upgrade_test.sh): a start from nothing, and what a purge must leave.

# check_purged FILES DIR...: after a purge of $PACKAGES, none is
# installed, none of FILES (what `dpkg -L` listed before) is left but a
# folder another package owns, and no DIR exists.
check_purged() {
	local files=$1 p d left
	shift
	for p in $PACKAGES; do
		check "$p is gone, configuration and all" \
			sh -c "! dpkg-query -W -f='\${db:Status-Status}' $p 2>/dev/null | grep -qv '^not-installed$'"
	done
	# A folder they shared with other packages stays: it must have another owner.
	left=$(grep -vx "/." "$files" | while read -r f; do
		if [ -d "$f" ]; then
			dpkg-query -S "$f" >/dev/null 2>&1 || echo "$f"
		elif [ -e "$f" ] || [ -L "$f" ]; then
			echo "$f"
		fi
	done)
	# shellcheck disable=SC2086 # the files left: one argument each
	if [ -z "$left" ]; then ok "none of their files is left"; else not_ok "none of their files is left" $left; fi
	for d in "$@"; do
		check "no $d" test ! -e "$d"
	done
}

# purge_left_over: packages of $PACKAGES installed before the test (an
# earlier run that was killed) are purged first, with the caller's purge():
# the test starts from nothing.
purge_left_over() {
	local p
	for p in $PACKAGES; do
		if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
			echo "# $p was installed before the test: purging it first"
			purge
			return
		fi
	done
}
