#!/bin/sh
# run_ends.sh BUILD - the end of the profile is kept however the process
# ends (audit F15): quick_exit (no destructor; it ends in _exit), two
# threads calling exit() at once, a raw exit_group (as Go's runtime
# ends), and exit() in a vfork child (the destructors run in the
# parent's memory: they must not stop the parent's session).  Each
# unprofiled and under profil run with each backend, under a kill
# timeout: the same status and output; the file holding the CPU time of
# the whole run, within sampling error; complete after quick_exit and
# the exit race.  After a raw exit_group, and after a vfork child's exit
# (glibc then runs no destructor in the parent: the child marked them
# run in its memory), no end of libprofil's ran: profil run saw the
# process exit and writes that into its file, and the report says so
# (counts whole, statistics of its last second may be missing), never
# "did not exit normally".
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
cc -O2 -g -pthread $san_cflags -o ends "$root/tests/cli/ends.c" || exit 1

# ends MODE SECONDS: the CPU time its process uses
for c in "quick 0.3" "race 0.4" "raw 0.3" "vfork 0.5"; do
	set -- $c
	timeout -s KILL 60 ./ends $1 > want 2> want.err
	want=$?
	for be in perf timer; do
		rm -rf p.prof p.prof.old
		timeout -s KILL 60 $prun_cmd --backend $be -o p.prof -- ./ends $1 > got 2> err
		st=$?
		[ $st -eq $want ] || no "$1 [$be]: status $st, unprofiled $want: $(tr '\n' '|' < err)"
		cmp -s want got || no "$1 [$be]: output '$(cat got)', unprofiled '$(cat want)'"
		"$profil" report p.prof > rep 2> rep.err || { no "$1 [$be]: report: $(cat rep.err)"; continue; }
		grep -q 'did not exit normally' rep && no "$1 [$be]: $(grep 'did not exit' rep)"
		# No exit handler ran: profil run saw the exit, the file says so.
		case $1 in raw|vfork)
			grep -q "^1 process exited (status $want) past libprofil's end: counts whole, statistics of up to 1 s before its end$" rep \
				|| no "$1 [$be]: the end profil run saw not said: $(sed -n 4,8p rep)" ;;
		esac
		# The file of the process that ran it all (a vfork child of ends
		# writes none of its own: it never starts).
		n=$("$profil" report --format csv p.prof | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
			$col["function"] ~ /^burn/ { s += $col["samples"] } END { print s + 0 }')
		# At 1 kHz: SECONDS*1000 samples, less start-up; 5 sigma of a
		# Poisson count and a 10% margin for a loaded machine's timers.
		min=$(awk -v s="$2" 'BEGIN { e = s * 1000; printf "%d\n", e * 0.9 - 5 * sqrt(e) }')
		[ "$n" -ge "$min" ] || no "$1 [$be]: burn() has $n samples, want at least $min"
		echo "$1 [$be]: status $st, burn() $n samples (at least $min)"
	done
done
[ $fail -eq 0 ] && echo "run_ends: all checks passed"
exit $fail
