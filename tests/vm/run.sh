#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Usage: run.sh --kernel DIR --initrd FILE --out DIR [--timeout SECS]
#               [--check PROG]... [--results FILE] [--verbose] [--shell]
#               [--demo] [--append ARGS] [--arch x86|arm64]
#
# Boots DIR/vmlinuz (Debian's image from kernel.sh, or any bzImage put
# there, e.g. the debug kernel) with the initramfs FILE under
# qemu-system-x86_64 (--arch arm64: qemu-system-aarch64's virt machine)
# in software emulation, and judges the run:
#  - the KTAP reports of the VM's suites (see init.sh for the protocol);
#  - each --check PROG, run on the host as `PROG OUT/files` after the VM
#    has powered off, printing KTAP (e.g. parity: kernel vs userspace);
#  - the VM must run to completion within SECS (default 180);
#  - the kernel log must show no oops, BUG, WARNING, lockup, hung task...
# Prints the reports and `N passed, N failed`, writes "PASSED FAILED" to
# --results, and exits non-zero if anything failed. The console log, the
# VM's reports and its files are kept in OUT.
#
# --shell boots the same VM with an interactive shell on the console.
# --demo boots it to run /demo.sh (make demo) and shows only that session;
# exits non-zero if the session does not end with status 0.
# --append adds ARGS to the kernel command line (e.g. sieve.fuzz=N, read by
# the suites from /proc/cmdline).
set -euo pipefail

# What a clean kernel log never contains. Matched case-sensitively, so
# that e.g. "Spectre V2 : Vulnerable" or a driver's "warning" do not count;
# a WARN() prints "WARNING:", slab debugging "BUG kmalloc-64 ...", a
# failed allocation without __GFP_NOWARN a "Call Trace".
BAD_LOG_PATTERN='\bBUG\b|Oops|WARNING:|scheduling while atomic|blocked for more than'
BAD_LOG_PATTERN+='|soft lockup|hard LOCKUP|Call Trace|general protection|KASAN|UBSAN'
BAD_LOG_PATTERN+='|[Kk]ernel panic|rcu_.*detected stall|Unable to handle kernel'
BAD_LOG_PATTERN+='|list_(add|del) corruption|invoked oom-killer'
# The debug kernel's checkers: lockdep and RCU-lockdep splats (most also say
# "WARNING:" or "BUG:", named here in case a version words them otherwise),
# lockdep or kmemleak switching itself off (later bugs would go unseen).
# kmemleak's findings are judged by init.sh, which knows which objects are
# the suites'.
BAD_LOG_PATTERN+='|possible circular locking dependency|inconsistent lock state'
BAD_LOG_PATTERN+='|possible recursive locking|sleeping function called from invalid context'
BAD_LOG_PATTERN+='|suspicious RCU usage|lock held when returning to user space'
BAD_LOG_PATTERN+='|turning off the locking correctness validator'
BAD_LOG_PATTERN+='|kmemleak: .*disabled'

die() { echo "run.sh: $*" >&2; exit 2; }

# The comment at the top of this file, from its "Usage:" line.
usage() {
	awk '/^# Usage:/ { on = 1 } on && !/^#/ { exit } on { sub(/^# ?/, ""); print }' "$0" >&2
	exit 2
}

parse_args() {
	kernel="" initrd="" out="" timeout=180 results="" verbose=0 shell=0 demo=0 extra="" arch=x86
	checks=()
	while [ $# -gt 0 ]; do
		case $1 in
		--kernel) kernel=$2; shift 2 ;;
		--initrd) initrd=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		--timeout) timeout=$2; shift 2 ;;
		--check) checks+=("$2"); shift 2 ;;
		--results) results=$2; shift 2 ;;
		--verbose) verbose=1; shift ;;
		--shell) shell=1; shift ;;
		--demo) demo=1; shift ;;
		--append) extra+=" $2"; shift 2 ;;
		--arch) arch=$2; shift 2 ;;
		*) usage ;;
		esac
	done
	[ -n "$kernel" ] && [ -n "$initrd" ] && [ -n "$out" ] || usage
	[ -f "$kernel/vmlinuz" ] || die "$kernel/vmlinuz: no such file"
	[ -f "$initrd" ] || die "$initrd: no such file"
	[[ $timeout =~ ^[1-9][0-9]*$ ]] || die "bad timeout '$timeout'"
	case $arch in
	x86) qemu_bin=qemu-system-x86_64 qemu_pkg=qemu-system-x86 ;;
	arm64) qemu_bin=qemu-system-aarch64 qemu_pkg=qemu-system-arm ;;
	*) die "bad arch '$arch' (want x86 or arm64)" ;;
	esac
	command -v $qemu_bin >/dev/null || die "$qemu_bin not found: install $qemu_pkg (make deps)"
}

# The machine for --arch, and where init.sh sends its reports. x86: the
# second 8250 port (ttyS1). arm64's virt machine has one PL011 UART (the
# console), so the reports go to a virtio console (hvc0), whose modules
# init.sh loads from /lib/sieve (vm.mk's VM_KERNEL_MODULES).
# The arguments after the machine's take the reports' chardev's spec
# ("file:PATH" or "null").
qemu_machine() {
	local reports=$1

	case $arch in
	x86) machine=(qemu-system-x86_64 -accel tcg -m 1G -smp 2)
		console=ttyS0 report_dev=(-serial "$reports") ;;
	arm64) machine=(qemu-system-aarch64 -M virt -cpu cortex-a57 -accel tcg -m 1G -smp 2)
		console=ttyAMA0
		# shellcheck disable=SC2054 # a qemu option's value, its commas its own
		report_dev=(-device virtio-serial-device -device virtconsole,chardev=reports)
		case $reports in
		file:*) report_dev+=(-chardev "file,id=reports,path=${reports#file:}") ;;
		*) report_dev+=(-chardev "null,id=reports") ;;
		esac ;;
	esac
}

# Software emulation on purpose (-accel tcg): the suite must behave the
# same on machines without KVM. panic=-1 with -no-reboot makes a panic end
# qemu at once; an oops does not panic, so the VM goes on, dumps the whole
# kernel log and the run fails on it. loglevel=5 puts warnings and worse
# on the console too, in case the VM never gets to that dump. slub_debug
# catches slab overruns and use-after-free in the modules.
# qemu_cmd REPORTS: REPORTS is the reports port's chardev spec (see
# qemu_machine); the console is on stdio or where the caller adds it.
qemu_cmd() {
	local append

	qemu_machine "$1"
	append="console=$console,115200 loglevel=5 panic=-1 slub_debug=FZPU"
	[ "$arch" = arm64 ] && append+=" sieve.results=hvc0"
	[ "$shell" = 1 ] && append+=" sieve.shell"
	[ "$demo" = 1 ] && append+=" sieve.demo quiet"
	append+=$extra
	qemu=("${machine[@]}" -nodefaults -nographic
		-no-reboot -kernel "$kernel/vmlinuz" -initrd "$initrd"
		-append "$append" -serial "${2:-stdio}" "${report_dev[@]}")
}

# The console from the demo's first line on, as it comes.
boot_demo() {
	local rc

	qemu_cmd null
	mkdir -p "$out"
	set +e
	timeout -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 |
		tr -d '\r' | tee "$out/demo.log" |
		awk '!on && /=== sieve:/ { sub(/.*=== sieve:/, "=== sieve:"); on = 1 }
		     on && !/^sieve-demo: / && !/^\[ *[0-9]+\.[0-9]+\] /'
	set -e
	rc=$(sed -n 's/^sieve-demo: exit status //p' "$out/demo.log")
	[ "$rc" = 0 ] || die "the demo did not finish cleanly (status '${rc:-none}'; see $out/demo.log)"
}

boot_shell() {
	qemu_cmd null mon:stdio
	exec "${qemu[@]}"
}

# Boots the VM; the console goes to OUT/console.log (and the terminal with
# --verbose), the reports to OUT/results.log. Sets vm_status.
boot() {
	local start end

	rm -rf "$out" && mkdir -p "$out/files"
	qemu_cmd "file:$out/results.log"
	start=$(date +%s%N)
	set +e
	if [ "$verbose" = 1 ]; then
		timeout -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 | tee "$out/console.log"
		vm_status=${PIPESTATUS[0]}
	else
		timeout -k 10 "$timeout" "${qemu[@]}" </dev/null >"$out/console.log" 2>&1
		vm_status=$?
	fi
	set -e
	end=$(date +%s%N)
	vm_seconds=$(( (end - start) / 1000000000 )).$(( (end - start) / 100000000 % 10 ))
	touch "$out/results.log"
	tr -d '\r' <"$out/results.log" >"$out/results.txt"
}

# Splits results.txt: each suite's report into OUT/suites/NAME.ktap and
# its exit status into OUT/suites/NAME.rc, each file into OUT/files/NAME.
split_results() {
	mkdir -p "$out/suites"
	awk -v dir="$out" '
	/^SIEVE-VM: suite / { close(dest); name = $3; dest = dir "/suites/" name ".ktap";
			      printf "" > dest; print name > (dir "/suites/order"); next }
	/^SIEVE-VM: end /   { close(dest); split($4, rc, "="); printf "%s\n", rc[2] > (dir "/suites/" $3 ".rc");
			      close(dir "/suites/" $3 ".rc"); dest = ""; next }
	/^SIEVE-VM: file /  { close(dest); dest = dir "/files/" $3; printf "" > dest; next }
	/^SIEVE-VM: endfile / { close(dest); dest = ""; next }
	/^SIEVE-VM: done/   { print "done" > (dir "/done"); next }
	dest != ""          { print > dest }
	' "$out/results.txt"
}

# Counts a KTAP report (one or more documents) on stdin: prints
# "PASSED FAILED SKIPPED". Results a plan promised but that never came are
# failures; so is a report with no plan at all.
ktap_count() {
	awk '
	function finish() {
		if (!indoc) return
		if (plan < 0) failed++
		else if (seen < plan) failed += plan - seen
		indoc = 0
	}
	/^(KTAP version|TAP version)/ { finish(); indoc = 1; plan = -1; seen = 0; docs++; next }
	!indoc { next }
	/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0; next }
	/^ok [0-9]+/ { seen++; if ($0 ~ /# *SKIP/) skipped++; else passed++; next }
	/^not ok [0-9]+/ { seen++; failed++; next }
	END { finish(); if (!docs) failed++; printf "%d %d %d\n", passed, failed, skipped }
	'
}

passed=0
failed=0
skipped=0

# Adds one report to the totals and prints it under a heading.
account() {
	local title=$1 report=$2 p f s

	read -r p f s < <(ktap_count <"$report")
	if [ "$s" = 0 ]; then
		echo "# $title: $p passed, $f failed"
	else
		echo "# $title: $p passed, $f failed, $s skipped"
	fi
	sed 's/^/    /' "$report"
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

# A host-side verdict that is not a KTAP report of its own.
verdict() {
	if [ "$1" = 0 ]; then
		echo "ok - $2"
		passed=$((passed + 1))
	else
		echo "not ok - $2"
		failed=$((failed + 1))
	fi
}

judge_suites() {
	local name rc

	[ -f "$out/suites/order" ] || return 0
	while read -r name; do
		account "vm suite $name" "$out/suites/$name.ktap"
		rc=$(cat "$out/suites/$name.rc" 2>/dev/null || echo "none")
		if [ "$rc" != 0 ]; then
			verdict 1 "suite $name script exit status ($rc)"
		fi
	done <"$out/suites/order"
}

judge_checks() {
	local check report rc before

	for check in "${checks[@]}"; do
		report="$out/$(basename "$check").ktap"
		set +e
		"$check" "$out/files" >"$report" 2>&1
		rc=$?
		set -e
		before=$failed
		account "host check $(basename "$check")" "$report"
		# A check that fails (or crashes) after printing only "ok" lines.
		if [ "$rc" != 0 ] && [ "$failed" = "$before" ]; then
			verdict 1 "host check $(basename "$check") exit status ($rc)"
		fi
	done
}

# The VM ran to its end: no timeout, no panic, every report sent.
judge_completion() {
	if [ "$vm_status" = 124 ] || [ "$vm_status" = 137 ]; then
		verdict 1 "VM finished within ${timeout}s (killed: raise VM_TIMEOUT if the machine is just slow)"
	elif [ ! -f "$out/done" ]; then
		verdict 1 "VM ran to completion (qemu exited $vm_status before the end; see the console)"
	else
		verdict 0 "VM ran to completion in ${vm_seconds}s"
	fi
}

judge_kernel_log() {
	local dmesg="$out/files/dmesg.txt" console="$out/console.txt" bad shown

	tr -d '\r' <"$out/console.log" >"$console"
	[ -f "$dmesg" ] || dmesg=/dev/null
	bad=$(cat "$dmesg" "$console" | grep -E -c "$BAD_LOG_PATTERN" || true)
	if [ "$bad" = 0 ]; then
		verdict 0 "kernel log clean (no oops, BUG, WARNING, lockup or hung task)"
		return
	fi
	verdict 1 "kernel log clean"
	# The whole log if the VM got to dump it, else what reached the console.
	shown=$dmesg
	grep -E -q "$BAD_LOG_PATTERN" "$shown" || shown=$console
	echo "    # first report in $shown:"
	grep -E -A 30 -m 1 "$BAD_LOG_PATTERN" "$shown" | sed 's/^/    # /'
	echo "    # $bad matching lines; every log in $out"
}

# On a run that did not finish, the end of the console tells why.
show_console_tail() {
	[ -f "$out/done" ] && return
	[ "$verbose" = 1 ] && return
	echo "# last lines of the console ($out/console.log):"
	tail -n 25 "$out/console.txt" | sed 's/^/    /'
}

main() {
	parse_args "$@"
	[ "$shell" = 1 ] && boot_shell
	if [ "$demo" = 1 ]; then
		boot_demo
		return
	fi
	boot
	split_results
	judge_suites
	judge_checks
	judge_completion
	judge_kernel_log
	show_console_tail
	[ "$skipped" = 0 ] || echo "($skipped skipped, not counted)"
	echo "$passed passed, $failed failed"
	if [ -n "$results" ]; then
		mkdir -p "$(dirname "$results")"
		echo "$passed $failed" >"$results"
	fi
	[ "$failed" = 0 ]
}

main "$@"
