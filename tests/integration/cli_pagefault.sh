#!/bin/sh
# cli_pagefault.sh BUILD - kernel time spent in page faults lands on the
# faulting code (issue 21: "kernel time charged to a blocked wait").  A
# thread first-touches fresh mappings, one store a page, while the main
# thread blocks in pthread_join (tests/cli/pagefault.c): under each
# backend, at least 90% of the system samples are first_touch's (its
# mmap calls take the rest, and little: they touch nothing), and none
# are the blocked call's, which uses no CPU time.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
cc -O2 -g -pthread -o pagefault "$root/tests/cli/pagefault.c" || exit 1

backends=timer
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
{ [ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ]; } && backends="perf timer"
for be in $backends; do
	prun --backend "$be" -o "$be.prof" ./pagefault 1 > out 2> err || no "$be: status $?: $(cat err)"
	[ "$(cat out)" = touched ] || no "$be: output $(cat out)"
	"$profil" report --format csv "$be.prof" > "$be.csv" || no "$be: report --format csv"
	# first_touch's system samples, all the system samples, and those of
	# the blocked calls (glibc's futex wait and pthread_join).
	set -- $(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		{ s = $c["system_samples"]; all += s }
		$c["function"] == "first_touch" { ft += s }
		$c["function"] ~ /futex|pthread_join|clockjoin/ { blocked += s }
		END { print ft + 0, all + 0, blocked + 0 }' "$be.csv")
	echo "$be: first_touch $1 of $2 system samples, the blocked call $3"
	# Nearly all of the thread's time is the kernel's: some hundreds of
	# system samples.  90%: the mmap calls take less than 1% here.
	[ "$2" -ge 100 ] || no "$be: only $2 system samples"
	[ $(( $1 * 10 )) -ge $(( $2 * 9 )) ] || no "$be: first_touch has $1 of $2 system samples, want 90%"
	[ "$3" -eq 0 ] || no "$be: the blocked call has $3 system samples"
done
[ $fail -eq 0 ] && echo "cli_pagefault: all checks passed"
exit $fail
