#!/bin/sh
# gmon_time.sh BUILD - the histogram of a -pg program measures its CPU
# time: two threads burn 0.5 s each in spin(); gprof says "Each sample
# counts as 0.001 seconds" (the sampler's 1000 Hz, not glibc's 100), and
# its total is the process's CPU time within the sampling error (samples
# the kernel never delivered, counted as lost, and samples outside the
# program's text, in libc, are allowed for).  Then moncontrol: a region
# between moncontrol(0) and moncontrol(1) shows neither calls nor time,
# and monstartup and _mcleanup called twice do no harm.
. "$(dirname "$0")/../gmon/lib.sh"

build work work.c
build work_nopie work.c -no-pie -fno-pie
cd "$tmp" || exit 1

# Samples land in the right function with and without PIE (the file
# holds link-time addresses either way).
for prog in work work_nopie; do
	"./$prog" exit 0.3 > out 2> err
	pid=$(sed -n 's/^pid=//p' out)
	s=$(seconds "$prog" "gmon.$prog.$pid.out" spin)
	awk -v s="$s" 'BEGIN { exit !(s >= 0.2 && s <= 0.4) }' ||
		fail "$prog: spin() has $s s of its 0.3"
	echo "$prog: spin() $s s of 0.3"
done

./work threads 0.5 > out 2> err || fail "work threads exited $?"
pid=$(sed -n 's/^pid=//p' out)
f=gmon.work.$pid.out
gprof -b -p work "$f" | grep -q 'Each sample counts as 0.001 seconds' ||
	fail "gprof does not read a 1000 Hz rate from $f"
t=$(total work "$f")
cpu=$(field cpu) lost=$(field lost) outside=$(field outside) hz=$(field hz)
echo "threads: gprof total $t s; process CPU $cpu s; lost $lost, outside $outside samples at $hz Hz"
# Sampling error: 6 standard errors of a count of cpu*hz samples, plus
# gprof's rounding to 10 ms and a period per thread at each end.
awk -v t="$t" -v c="$cpu" -v l="$lost" -v o="$outside" -v hz="$hz" 'BEGIN {
	n = c * hz; se = sqrt(n) / hz; slack = 6 * se + 0.01 + 4 / hz
	exit !(t <= c + slack && t >= c - (l + o) / hz - slack) }' ||
	fail "gprof total $t s is not the process CPU time $cpu s within the sampling error"
[ "$(calls work "$f" counted)" = 1000 ] || fail "threads: counted() not 1000 calls"

# PROFIL_HZ reaches a -pg program (monstartup runs before libprofil's
# constructors, from its _init): 500 Hz, so each sample is 2 ms.
PROFIL_HZ=500 ./work exit 0.1 > out 2> err
pid=$(sed -n 's/^pid=//p' out)
gprof -b -p work "gmon.work.$pid.out" | grep -q 'Each sample counts as 0.002 seconds' ||
	fail "PROFIL_HZ=500 is not the rate in gmon.work.$pid.out"

./work control 0.2 > out 2> err || fail "work control exited $?"
pid=$(sed -n 's/^pid=//p' out)
f=gmon.work.$pid.out
h=$(calls work "$f" hidden) hs=$(seconds work "$f" hidden)
v=$(calls work "$f" visible) s=$(seconds work "$f" spin)
echo "control: hidden() $h calls $hs s; visible() $v calls; spin() $s s"
[ "$h" = 0 ] && [ "$hs" = 0 ] || fail "moncontrol(0): hidden() shows $h calls, $hs s"
[ "$v" = 1000 ] || fail "moncontrol(1): visible() shows $v calls, not 1000"
# spin ran 0.2 s with profiling off and 0.2 s with it on: about 0.2 s.
awk -v s="$s" 'BEGIN { exit !(s >= 0.1 && s <= 0.3) }' ||
	fail "spin() shows $s s, not the 0.2 s run with profiling on"

rm -f gmon.*
./work twice > out 2> err || fail "work twice exited $?"
pid=$(sed -n 's/^pid=//p' out)
[ "$(ls gmon.*.out | wc -l)" = 1 ] || fail "twice: files $(ls gmon.*)"
[ "$(calls work "gmon.work.$pid.out" counted)" = 1000 ] || fail "twice: counted() not 1000 calls"
[ -s err ] && fail "twice: said something: $(cat err)"
done_testing
