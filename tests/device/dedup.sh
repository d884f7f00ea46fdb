# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "dedup" (sourced by the VM's /init): the example module
# sieve_dedup.ko on a filter made through /dev/sieve. Records with known
# duplicates go through its debugfs feed (in writes that split lines), its
# stats must count them exactly on a cuckoo filter (IF_ABSENT adds: a set)
# and within false positives on a Bloom filter; while it holds a filter,
# `rmmod sieve` is refused and destroying the filter's name does not pull
# the filter from under it.

# shellcheck disable=SC2034 # read by ktap_result (tests/vm/init.sh)
ktap_prefix="dedup: "
dd_dbg=/sys/kernel/debug/sieve_dedup
SIEVE=sieve

# The value of one line of the stats: dd_stat records.
dd_stat() {
	awk -v k="$1" '$1 == k { print $2 }' "$dd_dbg/stats"
}

# 1000 distinct records, then 500 of them again, interleaved.
i=0
while [ $i -lt 1000 ]; do
	echo "record-$i"
	[ $((i % 2)) = 1 ] && echo "record-$((i - 1))"
	i=$((i + 1))
done >/tmp/dedup.in
# A record longer than a key may be (4096 bytes): an error, not a record.
head -c 5000 /dev/zero | tr '\0' 'x' >/tmp/dedup.long
echo >>/tmp/dedup.long

dd_feed() {
	# Split writes: 700 bytes at a time, so lines cross write boundaries.
	dd if=/tmp/dedup.in of="$dd_dbg/feed" bs=700 2>/dev/null &&
	cat /tmp/dedup.long >"$dd_dbg/feed" &&
	# a last line without a newline counts at close
	printf 'record-tail' >"$dd_dbg/feed"
}

# 16-bit fingerprints and a fixed seed: no false positive among these
# records, so the counts are exact.
ktap_step "create the cuckoo filter dedup.cuckoo" \
	"$SIEVE" filter create dedup.cuckoo --type cuckoo --capacity 5000 --fpr 0.0002 --seed 1
if insmod "$SIEVE_MODDIR/sieve_dedup.ko" filter=dedup.cuckoo; then
	ktap_result OK "insmod sieve_dedup.ko filter=dedup.cuckoo"
	ktap_step "feed 1501 records and a too-long one" dd_feed
	ktap_step "stats: filter dedup.cuckoo" [ "$(dd_stat filter)" = dedup.cuckoo ]
	ktap_step "stats: records 1501 ($(dd_stat records))" [ "$(dd_stat records)" = 1501 ]
	ktap_step "stats: unique 1001 ($(dd_stat unique))" [ "$(dd_stat unique)" = 1001 ]
	ktap_step "stats: duplicates 500 ($(dd_stat duplicates))" [ "$(dd_stat duplicates)" = 500 ]
	ktap_step "stats: errors 1, the too-long line ($(dd_stat errors))" [ "$(dd_stat errors)" = 1 ]
	"$SIEVE" filter info dedup.cuckoo -j >/tmp/dedup.info 2>&1
	ktap_step "the filter counts 1001 inserted" grep -q -E '"inserted": *1001\b' /tmp/dedup.info
	ktap_step "rmmod sieve refused while sieve_dedup holds a filter" sh -c '! rmmod sieve 2>/dev/null'
	ktap_step "destroy dedup.cuckoo's name while the module holds it" \
		"$SIEVE" filter destroy dedup.cuckoo
	echo record-1 >"$dd_dbg/feed"
	echo record-new >"$dd_dbg/feed"
	ktap_step "the held filter still works: record-1 duplicate, record-new unique" \
		[ "$(dd_stat duplicates)" = 501 -a "$(dd_stat unique)" = 1002 ]
	ktap_step "rmmod sieve_dedup" rmmod sieve_dedup
else
	ktap_result FAIL "insmod sieve_dedup.ko filter=dedup.cuckoo"
fi

ktap_step "create the Bloom filter dedup.bloom" \
	"$SIEVE" filter create dedup.bloom --type bloom --capacity 5000 --seed 1
if insmod "$SIEVE_MODDIR/sieve_dedup.ko" filter=dedup.bloom; then
	ktap_result OK "insmod sieve_dedup.ko filter=dedup.bloom"
	ktap_step "feed the same records" dd_feed
	u=$(dd_stat unique) d=$(dd_stat duplicates)
	# A Bloom filter's false positives turn a few unique records into duplicates.
	ktap_step "Bloom: unique $u (990..1001) + duplicates $d = 1501" \
		[ "$u" -ge 990 -a "$u" -le 1001 -a $((u + d)) = 1501 ]
	ktap_step "rmmod sieve_dedup" rmmod sieve_dedup
else
	ktap_result FAIL "insmod sieve_dedup.ko filter=dedup.bloom"
fi
ktap_step "destroy dedup.bloom" "$SIEVE" filter destroy dedup.bloom
ktap_step "insmod sieve_dedup.ko with no such filter: feed counts errors, no crash" \
	sh -c "insmod $SIEVE_MODDIR/sieve_dedup.ko filter=no.such.filter &&
	       { echo x >$dd_dbg/feed; true; } && rmmod sieve_dedup"
rm -f /tmp/dedup.in /tmp/dedup.long /tmp/dedup.info

ktap_print
true
