# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=dash # busybox sh, which dash's dialect matches: sourced by /init
#
# VM suite "agent_filters" (sourced by the VM's /init): the agent's
# persistent filters across a module reload. sieve_agent_filters_test save
# plays the agent at its stop (filters of each type, their answers noted,
# snapshots saved); the module is unloaded and loaded again; the restore
# run plays the agent's next start and checks that the filters came back
# answering as before. Each run prints its own KTAP report; the reload is
# one more.

af_state=/tmp/agent-filters.state
af_answers=/tmp/agent-filters.answers
rm -rf "$af_state" "$af_answers"

sieve_agent_filters_test save "$af_state" "$af_answers"
rc=$?
[ "$rc" -le 1 ] ||
	printf 'KTAP version 1\n1..1\nnot ok 1 sieve_agent_filters_test save exited with status %d\n' "$rc"

if rmmod sieve && insmod "$SIEVE_MODDIR/sieve.ko"; then
	printf 'KTAP version 1\n1..1\nok 1 agent_filters: rmmod sieve, insmod sieve.ko\n'
else
	printf 'KTAP version 1\n1..1\nnot ok 1 agent_filters: rmmod sieve, insmod sieve.ko\n'
fi

sieve_agent_filters_test restore "$af_state" "$af_answers"
rc=$?
[ "$rc" -le 1 ] ||
	printf 'KTAP version 1\n1..1\nnot ok 1 sieve_agent_filters_test restore exited with status %d\n' "$rc"

rm -rf "$af_state" "$af_answers"
true
