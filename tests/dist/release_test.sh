#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The releases agree with each other (CHANGELOG.md's top says how they are
# made):
#  - VERSION is X.Y.Z;
#  - CHANGELOG.md's releases, `## X.Y.Z - YYYY-MM-DD - commit HASH`, newest
#    first, versions going down; VERSION is the newest of them, or newer
#    than all while an "Unreleased" section is there (the release commit);
#  - in a git checkout, each release's commit exists, VERSION at that
#    commit is the release's version, its date the commit's, and a tag
#    vX.Y.Z, where this clone has it, points at that commit;
#  - the upgrade test starts from the newest release (UPGRADE_FROM_REV in
#    tests/dist/upgrade.mk names its commit);
#  - with DEB_DIR (after `make deb`): the debian/changelog it wrote and the
#    packages carry VERSION, and name the commit built.
# Usage: release_test.sh TOP [DEB_DIR] [RESULT_FILE]
set -uo pipefail
top=${1:?usage: release_test.sh TOP [DEB_DIR] [RESULT_FILE]}
deb_dir=${2:-}
result_file=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
cd "$top" || exit 2

# newer A B: version A is newer than B (sort -V).
newer() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]; }

version=$(cat VERSION 2>/dev/null)
check "VERSION is X.Y.Z ('$version')" grep -qxE '[0-9]+\.[0-9]+\.[0-9]+' <<<"$version"

heads=$(grep '^## ' CHANGELOG.md 2>/dev/null)
check "CHANGELOG.md has release headings" test -n "$heads"
bad=$(grep -vxE '## Unreleased|## [0-9]+\.[0-9]+\.[0-9]+ - [0-9]{4}-[0-9]{2}-[0-9]{2} - commit [0-9a-f]{7,40}' <<<"$heads")
if [ -z "$bad" ]; then ok "every heading is 'Unreleased' or 'X.Y.Z - DATE - commit HASH'"; else
	not_ok "every heading is 'Unreleased' or 'X.Y.Z - DATE - commit HASH'" "$bad"; fi
check "'Unreleased', if there, is the first heading" \
	sh -c "! grep -n '^## Unreleased' CHANGELOG.md | grep -q . || [ \"\$(grep -m 1 '^## ' CHANGELOG.md)\" = '## Unreleased' ]"

releases=$(sed -nE 's/^## ([0-9.]+) - ([0-9-]+) - commit ([0-9a-f]+)$/\1 \2 \3/p' CHANGELOG.md)
newest=$(head -n 1 <<<"$releases" | cut -d' ' -f1)
newest_commit=$(head -n 1 <<<"$releases" | cut -d' ' -f3)
check "CHANGELOG.md names a release" test -n "$newest"
prev=
order_ok=1
while read -r v d c; do
	[ -z "$prev" ] || newer "$prev" "$v" || order_ok=0
	prev=$v
done <<<"$releases"
check "releases newest first, versions going down" test $order_ok = 1
if [ "$version" = "$newest" ]; then
	ok "VERSION $version is the newest release"
elif newer "$version" "$newest" && grep -qx '## Unreleased' CHANGELOG.md; then
	ok "VERSION $version is the release being made (newer than $newest, 'Unreleased' there)"
else
	not_ok "VERSION $version is the newest release ($newest) or the one being made"
fi

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	while read -r v d c; do
		if ! git rev-parse -q --verify "$c^{commit}" >/dev/null; then
			not_ok "release $v: commit $c is in this clone" "a shallow clone? git fetch --unshallow"
			continue
		fi
		check "release $v: VERSION at commit $c says $v" test "$(git show "$c:VERSION")" = "$v"
		check "release $v: dated as its commit ($d)" \
			test "$(TZ=UTC git show -s --date=format-local:%F --format=%cd "$c")" = "$d"
		if git rev-parse -q --verify "refs/tags/v$v" >/dev/null; then
			check "release $v: tag v$v points at $c" \
				test "$(git rev-parse "v$v^{commit}")" = "$(git rev-parse "$c^{commit}")"
		else
			echo "# release $v: no tag v$v in this clone (tags not fetched): not checked"
		fi
	done <<<"$releases"
else
	echo "# not a git checkout: the releases' commits are not checked"
fi
rev=$(sed -nE 's/^UPGRADE_FROM_REV \?= ([0-9a-f]+)$/\1/p' tests/dist/upgrade.mk)
check "the upgrade test starts from the newest release ($newest_commit; upgrade.mk: $rev)" \
	test -n "$rev" -a "$rev" = "$newest_commit"

if [ -n "$deb_dir" ]; then
	cl=$deb_dir/sieve-$version/debian/changelog
	check "make deb wrote $cl" test -f "$cl"
	check "debian/changelog's version is VERSION" \
		test "$(dpkg-parsechangelog -l "$cl" -S Version 2>/dev/null)" = "$version"
	check "debian/changelog names the commit built" \
		grep -q "Built from commit $(git rev-parse --short HEAD 2>/dev/null)\." "$cl"
	for f in "$deb_dir"/*.deb; do
		check "$(basename "$f") is version $version" test "$(dpkg-deb -f "$f" Version)" = "$version"
	done
fi

finish "$result_file"
