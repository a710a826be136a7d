#!/bin/sh
# single_thread_run.sh BUILD - no thread of ours under profil run (SPEC
# section 2): a single-threaded program (tests/cli/onethread.c) and its
# fork child stay single-threaded under each backend (/proc/self/task
# has one entry whenever they look, __libc_single_threaded stays 1),
# and their samples were counted (the profiles hold CPU time).  So
# unshare(CLONE_NEWUSER), which a multi-threaded process is refused
# (runtime audit F14), works under profil run as it does without it.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"

cd "$tmp" || exit 1
cc -O2 -g -o onethread "$root/tests/cli/onethread.c" || exit 1

backends=timer
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
{ [ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ]; } && backends="perf timer"
for be in $backends; do
	mkdir "$be" && cd "$be" || exit 1
	timeout -s KILL 60 $prun_cmd --backend "$be" -o run ../onethread 0.3 \
		|| no "$be: onethread: status $? (more than one thread?)"
	n=$(ls run/*.prof 2>/dev/null | wc -l)
	[ "$n" = 2 ] || no "$be: $n profiles, expected 2 (parent and child)"
	for f in run/*.prof; do
		adds_up "$f" || no "$be: $f: statistics do not add up, or nothing taken"
	done
	cd ..
	if unshare -U true 2>/dev/null; then
		timeout -s KILL 60 $prun_cmd --backend "$be" -o "ns.$be" unshare -U true \
			|| no "$be: unshare -U true: status $?"
	fi
done
exit $fail
