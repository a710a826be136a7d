#!/bin/sh
# gmon_ends.sh BUILD - however a -pg program ends, its profile is written
# whole and gprof reads it: exit, return from main, _exit, SIGTERM,
# quick_exit, SIGSEGV, abort, exec; the signal still takes its course
# (same status).
# SIGKILL after 3 seconds loses at most the last second of samples, with
# no thread of libprofil's doing the snapshots (issue 15): the program's
# one thread is its only one, but for the perf backend's drain thread
# (named profil-drain) while that exists.
. "$(dirname "$0")/../gmon/lib.sh"

build work work.c
cd "$tmp" || exit 1
ulimit -c 0

check() {	# MODE STATUS
	rm -f gmon.*
	./work "$1" > out 2> err
	status=$?
	[ "$status" = "$2" ] || fail "$1: exit status $status, not $2"
	pid=$(sed -n 's/^pid=//p' out)
	f=gmon.work.$pid.out
	[ -f "$f" ] || { fail "$1: no $f (there are: $(ls))"; return; }
	got=$(calls work "$f" counted)
	[ "$got" = 1000 ] || fail "$1: counted() called $got times in $f, not 1000"
	t=$(seconds work "$f" spin)
	awk -v t="$t" 'BEGIN { exit !(t >= 0.2) }' || fail "$1: spin() has $t s, not about 0.3"
	leftover=$(ls | grep '\.tmp\.' || true)
	[ -z "$leftover" ] || fail "$1: temporary file left: $leftover"
	echo "$1: status $status, $f: counted() $got calls, spin() $t s"
}

check exit 4
check return 0
check _exit 3
check quick_exit 5
check term 143
# Under AddressSanitizer, SIGSEGV is the sanitizer's: it reports and exits.
[ -n "$san" ] || check segv 139
check abort 134
check exec 0

# SIGKILL: snapshots every second.  The CPU time used is read from /proc
# just before the kill; the file must hold all but the last second of it.
for be in perf timer; do
rm -f gmon.*
PROFIL_BACKEND=$be ./work kill > out 2> err &
pid=$!
sleep 3
threads=$(cat /proc/$pid/task/*/comm | grep -v '^profil-drain$' | wc -l)
[ "$threads" -eq 1 ] || fail "kill [$be]: $threads threads: $(cat /proc/$pid/task/*/comm | tr '\n' ' ')"
ticks=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
kill -KILL "$pid"
wait "$pid" 2>/dev/null
f=gmon.work.$pid.out
if [ -f "$f" ]; then
	cpu=$(awk -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { print t / hz }')
	t=$(total work "$f")
	c=$(calls work "$f" counted)
	echo "kill [$be]: $threads thread(s), $cpu s of CPU before SIGKILL, $t s in $f, counted() $c calls"
	awk -v t="$t" -v c="$cpu" 'BEGIN { exit !(t <= c + 0.05 && t >= c - 1.1 - 0.05 * c) }' ||
		fail "kill [$be]: $t s in the profile for $cpu s of CPU (at most 1 s may be lost)"
	[ "$c" -gt 0 ] || fail "kill [$be]: no calls in $f"
else
	fail "kill [$be]: no $f after 3 s"
fi
done
done_testing
