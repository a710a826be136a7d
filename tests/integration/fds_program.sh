#!/bin/sh
# fds_program.sh BUILD - our descriptors are ours (runtime audit F1,
# issue 23 "Descriptors the program closes"): a program that closes
# every descriptor (closefrom), dup2s onto 3, 4 and 5 before an exec,
# writes through fd 4 for a while, or lowers RLIMIT_NOFILE
# (tests/cli/fdprog.c) prints the same, byte for byte, and exits the
# same, unprofiled, linked (calling profil()) and under profil run, under
# each backend; each run under a kill timeout (a hang fails).
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"

cd "$tmp" || exit 1
cc -O2 -g -pthread -o plain "$root/tests/cli/fdprog.c" || exit 1
cc -O2 -g -pthread -DLINKED $san_cflags -I"$root/include" -o linked "$root/tests/cli/fdprog.c" \
	-L"$B/lib" -Wl,-rpath,"$B/lib" -lprofil || exit 1

backends=timer
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
{ [ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ]; } && backends="perf timer"
# The sanitizers' runtime needs descriptors of its own: no nofile there.
cases="pipe file block dup2 seek"
[ -n "$asan_pre" ] || cases="$cases nofile"
for what in $cases; do
	mkdir "bare.$what" && (cd "bare.$what" && timeout -s KILL 30 ../plain "$what" > out 2> err; echo "status $?" >> out)
	grep -q "status 0" "bare.$what/out" || no "$what: fails unprofiled: $(cat "bare.$what/out")"
	for be in $backends; do
		for how in run linked; do
			d="$how.$be.$what"
			mkdir "$d" && cd "$d" || exit 1
			if [ "$how" = run ]; then
				timeout -s KILL 30 $prun_cmd --backend "$be" -o run ../plain "$what" > out 2> err
			else
				PROFIL_BACKEND=$be timeout -s KILL 30 ../linked "$what" > out 2> err
			fi
			echo "status $?" >> out
			cd ..
			cmp -s "bare.$what/out" "$d/out" \
				|| no "$d: output differs from the unprofiled run: $(diff "bare.$what/out" "$d/out" | head -5)"
		done
	done
done
exit $fail
