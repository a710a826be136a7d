#!/bin/sh
# gmon_alone.sh BUILD - no thread of ours in the gmon runtime either (SPEC
# section 2, issue 15): a single-threaded -pg program
# (tests/cli/onethread.c) and its fork child stay single-threaded under
# each backend (/proc/self/task has one entry whenever they look,
# __libc_single_threaded stays 1), and both their profiles hold the CPU
# time they burned while they looked.
. "$(dirname "$0")/../gmon/lib.sh"

$CC $cflags -o "$tmp/onethread" "$root/tests/cli/onethread.c" \
	-L"$lib" -Wl,-rpath,"$lib" -lprofil || { echo "cannot build onethread" >&2; exit 1; }
cd "$tmp" || exit 1

backends=timer
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
{ [ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ]; } && backends="perf timer"
for be in $backends; do
	rm -f gmon.*
	PROFIL_BACKEND=$be timeout -s KILL 60 ./onethread 0.3 > out 2>&1 ||
		fail "$be: onethread: status $?: $(tr '\n' ' ' < out)"
	n=$(ls gmon.onethread.*.out 2>/dev/null | wc -l)
	[ "$n" = 2 ] || fail "$be: $n profiles, expected 2, parent's and child's (there are: $(ls))"
	for f in gmon.onethread.*.out; do
		[ -f "$f" ] || continue
		t=$(total onethread "$f")
		awk -v t="$t" 'BEGIN { exit !(t >= 0.2) }' || fail "$be: $f holds $t s, not about 0.3"
		echo "$be: $f: $t s"
	done
	echo "$be: $(tr '\n' ' ' < out)"
done
done_testing
