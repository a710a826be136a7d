#!/bin/sh
# hostile_perf.sh BUILD - perf events forbidden (issue 6, item 4): a
# seccomp filter makes perf_event_open fail with EPERM (container
# runtimes) or EACCES (what an unprivileged process sees under
# perf_event_paranoid 3: the tests run as root, where paranoid does not
# bind, and no global sysctl is changed).  profil run's default backend
# (auto) falls back to the timer backend, and says so: one line from
# profil run, the file's backend, report's header.  The profile is whole.
# Asked for by name, perf fails with one line and the program runs.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
build_hostile
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1

for case in "1 EPERM, as from a seccomp filter" "13 EACCES, as under perf_event_paranoid 3"; do
	err=${case%% *} why=${case#* }
	./hostile noperf "$err" $prun_cmd -o "p$err.prof" ./spin 100 > out 2> err
	st=$?
	[ $st -eq 0 ] || no "errno $err: profil run exited $st: $(cat err)"
	grep -q "^profil: perf events refused ($why): the timer backend sampled instead$" err ||
		no "errno $err: profil run did not say it fell back: $(cat err)"
	[ "$(grep -c . err)" -eq 2 ] || no "errno $err: $(grep -c . err) lines on stderr, want 2 (fallback, wrote)"
	"$profil" report "p$err.prof" > rep 2>&1 || no "errno $err: report failed: $(cat rep)"
	grep -q "; backend timer (perf events refused: $why)" rep ||
		no "errno $err: report's header does not say so: $(sed -n 3p rep)"
	adds_up "p$err.prof" || no "errno $err: statistics do not add up"
	"$profil" report --format csv "p$err.prof" > p.csv
	# spin_three burns half of 1 s of CPU: ~250 pc readings at the tick
	# (250 Hz), a standard error of 3.2 points; 6 of them, and a little.
	s3=$(share p.csv spin_three spin)
	within "$s3" 50 20 || no "errno $err: spin_three has $s3% of the samples, want 50"
	echo "errno $err: $(head -n 1 err); spin_three $s3%"

	# Asked for by name: one line, no profile, the program's own status.
	./hostile noperf "$err" $prun_cmd --backend perf -o "q$err.prof" ./spin 1 > out 2> err
	st=$?
	[ $st -eq 0 ] || no "errno $err, --backend perf: exited $st"
	grep -q "^libprofil: cannot start sampling for spin: " err ||
		no "errno $err, --backend perf: not said: $(cat err)"
done
# A filter the program adds itself once profiling has started, which
# kills the process at perf_event_open (systemd's default action): the
# perf backend opens a thread's event at its first sample, and opens
# none once the program has more filters than when sampling began.  The
# threads stay on their timers; the program runs to its end.
./hostile killperf 2 40 > /dev/null 2>&1 && killable=1 || killable=
if [ -n "$killable" ]; then
	$prun_cmd --backend perf -o k.prof ./hostile killperf 2 40 > out 2> err
	st=$?
	[ $st -eq 0 ] || no "killperf: exited $st: $(cat err)"
	grep -qx "2 threads" out || no "killperf: said $(cat out)"
	"$profil" report --format csv k.prof > k.csv 2>&1 || no "killperf: report: $(cat k.csv)"
	adds_up k.prof || no "killperf: statistics do not add up"
	h=$(share k.csv hot hostile)
	within "$h" 100 5 || no "killperf: hot has $h% of the samples, want 100"
	echo "killperf: status $st, hot $h%"
else
	echo "killperf: no seccomp filter here: not tested"
fi
[ $fail -eq 0 ] && echo "hostile_perf: all checks passed"
exit $fail
