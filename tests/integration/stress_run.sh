#!/bin/sh
# stress_run.sh BUILD - the stress programs of the preload mode under
# profil run, at the highest rate of each backend: 10 000 threads,
# 250 forks (a quarter exec, half _exit) and 10 000 dlopen/dlclose.
# Each exits 0 (its own checks of descriptors, timers, threads and
# memory pass), every process leaves one complete profile file whose
# statistics add up and whose counters hold what it says it counted
# (profcheck), and dlopen in a loop does not pile up segments.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
check="$B/tests/stress/profcheck"
export PROFIL_TEST_BUILD="$B"

backends="perf timer"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ] || backends=timer
# The sanitizer build runs the default backend only (as tests/run.sh).
[ -n "$asan_pre" ] && backends=auto

# stress BACKEND PROGRAM [ARG]: run it in a directory of its own; its output
# in $tmp/PROGRAM.BACKEND.out, its files in profil.data there.
stress() {
	d="$tmp/$2.$1"
	mkdir -p "$d"
	# The perf backend's fastest (profil(1): -F), the timer's.
	hz=10000
	k=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 0)
	[ "$k" -gt 0 ] && [ "$k" -lt $hz ] && hz=$k
	[ "$1" = timer ] && hz=100000
	start=$(date +%s)
	# prun, under a timeout: a deadlock fails the test, never hangs it.
	(cd "$d" && PROFIL_BACKEND="$1" timeout 300 env \
		${asan_pre:+LD_PRELOAD=$asan_pre ASAN_OPTIONS=detect_leaks=0} \
		"$profil" run -F $hz -- "$B/tests/integration/$2" run ${3:-} > "$d.out" 2>&1)
	st=$?
	[ $st -eq 0 ] || { sed 's/^/    /' "$d.out" | tail -n 20; no "$2 under profil run [$1]: status $st"; }
	echo "$2 [$1]: $(($(date +%s) - start)) s; $(grep -h "while sampling" "$d.out")"
	(cd "$d" && ls -d profil.data/* | xargs "$check") > "$d.check" \
		|| { head -n 20 "$d.check"; no "$2 [$1]: profile files"; }
	tail -n 1 "$d.check"
}

# files BACKEND PROGRAM N: N profile files.
files() {
	n=$(ls "$tmp/$2.$1/profil.data" | wc -l)
	[ "$n" -eq "$3" ] || no "$2 [$1]: $n profile files, expected $3"
}

for be in $backends; do
	stress "$be" stress_threads
	files "$be" stress_threads 1

	stress "$be" stress_dlopen
	files "$be" stress_dlopen 1
	# The program, its libraries, libprofil, the vDSO and libdlwork.so:
	# with system counts, a dozen segments, not one per dlopen.
	segs=$(awk '{ print $NF }' "$tmp/stress_dlopen.$be.check")
	[ "$segs" -le 20 ] || no "stress_dlopen [$be]: $segs segments in the file"

	# One file per process: the parent, each child, each exec'd image.
	# 250 forks, 313 files: the linked test makes the full 1 000, and
	# each process here costs its file's creation and checking besides
	# (the sanitizer pass's size is a tenth of 1 000 anyway).
	forks=250
	[ -n "$asan_pre" ] && forks=100
	stress "$be" stress_fork $forks
	n=$(awk '/ forks, .* execs$/ { print 1 + $1 + $3 }' "$tmp/stress_fork.$be.out")
	files "$be" stress_fork "${n:-0}"
done
exit $fail
