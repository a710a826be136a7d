#!/bin/sh
# cli_run_signals.sh BUILD - SIGTERM, SIGHUP, SIGINT and SIGQUIT sent to
# profil run go to the program (issue 21): profil waits for it, every
# sample the program took is in its file, and profil ends as the program
# did.  A program the signal kills leaves its file as SIGKILL does
# (cli_kill.sh: the report says which signal killed it, as profil run
# saw, and that the header's statistics may lag by up to a second, the
# counts being whole); one that handles it and exits
# leaves a complete file.  Before, a
# SIGTERM killed profil and left the program running on, its file
# "running"; SIGINT was ignored.  Each signal under each backend, with
# profil in a session of its own (setsid), as a supervisor would run it.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1
backends=${PROFIL_BACKENDS:-perf timer}
[ -n "$asan_pre" ] && backends=auto

for be in $backends; do
	for sig in TERM HUP INT QUIT; do
		d=$be.$sig
		# A background job of sh has SIGINT and SIGQUIT ignored; env
		# gives profil (and so the program) the default actions.
		setsid env --default-signal $prun_cmd --backend "$be" -o "$d" ./spin 1000000 \
			> "$d.out" 2> "$d.err" &
		runner=$!
		i=0
		while ! ls "$d" 2>/dev/null | grep -q '^spin\.[0-9]*\.prof$' && [ $i -lt 200 ]; do
			sleep 0.05; i=$((i + 1))
		done
		sleep 0.5
		[ "$(cat /proc/$runner/comm 2>/dev/null)" = profil ] || no "$d: $runner is not profil"
		pid=$(ls "$d" | sed -n 's/^spin\.\([0-9]*\)\.prof$/\1/p')
		kill -"$sig" "$runner"
		wait "$runner"
		st=$?
		case $sig in TERM) n=15 ;; HUP) n=1 ;; INT) n=2 ;; QUIT) n=3 ;; esac
		want=$((128 + n))
		[ "$st" -eq "$want" ] || no "$d: profil ended with status $st, not $want"
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
			no "$d: the program $pid runs on"
			kill -KILL "$pid"
		fi
		"$profil" report "$d" > "$d.txt" 2>&1 || no "$d: report: $(cat "$d.txt")"
		grep -q "^1 process was killed by signal $n ([A-Z][a-z ]*): counts whole, statistics of up to 1 s before its end$" "$d.txt" \
			|| no "$d: the report does not say the program was killed by signal $n: $(head -n 6 "$d.txt")"
		grep -q "did not exit normally" "$d.txt" && no "$d: a kill profil run saw reported as not known"
		grep -q " spin_three " "$d.txt" || no "$d: no samples of spin_three: $(head -n 3 "$d.txt")"
		grep -q "^profil: wrote " "$d.err" || no "$d: profil said $(cat "$d.err")"
		echo "$d: status $st, $(head -n 1 "$d.txt")"
	done
done

# A program that takes SIGTERM and exits on its own: its status is
# profil's, and profil is still there to report it.
printf '%s\n' '#include <signal.h>' '#include <unistd.h>' \
	'static void bye(int s) { (void)s; _exit(42); }' \
	'volatile unsigned long n;' \
	'int main(void) { signal(SIGTERM, bye); for (;;) n++; }' > term.c
cc -O2 -o term term.c
setsid $prun_cmd -o handled ./term 2> handled.err &
runner=$!
i=0
while ! ls handled 2>/dev/null | grep -q '\.prof$' && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
sleep 0.2
kill -TERM "$runner"
wait "$runner"
st=$?
[ $st -eq 42 ] || no "a program that handles SIGTERM: profil's status $st, not 42"
"$profil" report handled > handled.txt 2>&1 || no "handled: report: $(cat handled.txt)"
grep -q "did not exit normally" handled.txt && no "handled: the file is not complete"

[ $fail -eq 0 ] && echo "cli_run_signals: all checks passed"
exit $fail
