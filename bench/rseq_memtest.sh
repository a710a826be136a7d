#!/bin/sh
# rseq_memtest.sh BUILD [RUNS] - how often the kernel kills a crash
# handler that tests memory in place with glibc's rseq area in it (issue
# 23; rseq_memtest.c says how): unprofiled, with the program's own
# CPU-time timer, and under profil(2) with each backend; then with
# glibc's rseq off, where nothing should die.  A killed handler is the
# kernel's doing (SIGSEGV with si_code SI_KERNEL when it next reads the
# area: at a preemption, a signal, or in recent kernels at a tick once
# the thread has run 100 ms unpreempted), not a fault of the program's or
# libprofil's.  Run it on a quiet machine: other work preempts the test.
set -u
B=$(cd "${1:-build}" && pwd)
RUNS=${2:-40}
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O1 -g -pthread -I"$root/include" -o "$tmp/rseq_memtest" "$root/bench/rseq_memtest.c" \
	-L"$B/lib" -Wl,-rpath,"$B/lib" -lprofil || exit 1

count() {	# ENV... -- ARGS...: "killed/runs"
	envs=
	while [ "$1" != -- ]; do envs="$envs $1"; shift; done
	shift
	killed=0
	i=0
	while [ $i -lt "$RUNS" ]; do
		env $envs "$tmp/rseq_memtest" "$@" > /dev/null 2>&1
		st=$?
		[ $st -eq 139 ] && killed=$((killed + 1))
		[ $st -ne 0 ] && [ $st -ne 139 ] && { echo "rseq_memtest $*: exit status $st" >&2; exit 1; }
		i=$((i + 1))
	done
	echo "$killed/$RUNS"
}

echo "Crash handlers killed by the kernel while their memory test had a pattern in glibc's rseq area"
printf "%-40s %10s %10s\n" "" "rseq on" "rseq off"
row() {	# LABEL ENV... -- ARGS...
	label=$1
	shift
	on=$(count "$@") || exit 1
	off=$(count GLIBC_TUNABLES=glibc.pthread.rseq=0 "$@") || exit 1
	printf "%-40s %10s %10s\n" "$label" "$on" "$off"
}
row "unprofiled" -- none
row "own CPU-time timer, 100 Hz" -- timer 100
row "own CPU-time timer, 1000 Hz" -- timer 1000
row "profil(2), perf backend, 1000 Hz" PROFIL_BACKEND=perf -- profil
row "profil(2), timer backend, 1000 Hz" PROFIL_BACKEND=timer -- profil
row "profil(2), timer backend, 100 Hz" PROFIL_BACKEND=timer PROFIL_HZ=100 -- profil
