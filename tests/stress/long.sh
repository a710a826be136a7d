#!/bin/sh
# long.sh BUILD [N] - the racy cases of the runtime audit (issue 24 item
# 3), each N times (default 200, or PROFIL_STRESS_ITER), linked and
# under profil run with each backend, each run under a kill timeout;
# a run fails when its status or output differs from the unprofiled
# run's, or (the exit race) its file was left running.  Prints each
# case's failures and their rate per 1000 runs; exits 1 if any failed.
# make stress-long runs it; make check does not (minutes, not seconds).
# PROFIL_STRESS_CASES names the cases to run (default all) and
# PROFIL_STRESS_BACKENDS the backends, and PROFIL_STRESS_WAYS "linked"
# or "run" (default both) for the first three cases, so that a long
# count can be split across processes.
#
#   exec_in_fork  F4a: a SIGHUP handler that execs, inside fork
#   async_cancel  F5: threads cancelled asynchronously in the handler
#   fault_exit    F10: the program's SIGSEGV handler calls _exit while
#                 our counters fault (linked only: profil() on a buffer)
#   exit_race     F15: two threads call exit() at once (profil run only:
#                 the file must be complete)
#   dl_race       F3: dlopen/dlclose in a constructor while another
#                 thread opens and closes (profil run only)
#   dl_cancel     F2c: a thread cancelled inside dlopen (profil run only)
set -u
B=${1:-build}
N=${2:-${PROFIL_STRESS_ITER:-200}}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
lib="$B/lib"
cc -O2 -g -pthread -o plain "$root/tests/cli/sigprog.c" || exit 1
cc -O2 -g -pthread -DWITH_LIBPROFIL -I"$root/include" $san_cflags -o linked \
	"$root/tests/cli/sigprog.c" -L"$lib" -Wl,-rpath,"$lib" -lprofil || exit 1
cc -O2 -g -pthread -o ends "$root/tests/cli/ends.c" || exit 1
mkdir dl
src="$root/tests/cli/dlrace.c"
cc -O2 -g -fPIC -shared -DPLUGIN_INNER -o dl/libinner.so "$src" || exit 1
cc -O2 -g -fPIC -shared -DPLUGIN_OUTER -o dl/libouter.so "$src" -ldl || exit 1
cc -O2 -g -pthread -o dlrace "$src" -ldl || exit 1
san_env=
[ -n "$asan_pre" ] && san_env="LD_PRELOAD=$asan_pre ASAN_OPTIONS=detect_leaks=0"
backends="perf timer"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ] || backends=timer
[ -z "${PROFIL_STRESS_BACKENDS:-}" ] || backends=$PROFIL_STRESS_BACKENDS
limit=60
total=0
cases=${PROFIL_STRESS_CASES:-exec_in_fork async_cancel fault_exit exit_race dl_race dl_cancel}
chosen() { case " $cases " in *" $1 "*) return 0 ;; esac; return 1; }

# tally NAME FAILED: one line of the case's figures.
tally() {
	echo "$1: $2 of $N failed ($(awk -v f="$2" -v n="$N" 'BEGIN { printf "%.1f", 1000 * f / n }') per 1000)"
	[ "$2" -eq 0 ] || total=$((total + $2))
}

# same: the last run (got, $st) is the unprofiled one (want, $want).
same() { [ "$st" -eq "$want" ] && cmp -s want got; }

for mode in exec_in_fork async_cancel fault_exit; do
	chosen $mode || continue
	timeout -s KILL $limit ./plain $mode > want 2> /dev/null
	want=$?
	for be in $backends; do
		f=0
		case " ${PROFIL_STRESS_WAYS:-linked run} " in *" linked "*) ;; *) N_linked=0 ;; esac
		for i in $(seq "${N_linked:-$N}"); do
			env $san_env PROFIL_BACKEND=$be timeout -s KILL $limit ./linked $mode > got 2> /dev/null
			st=$?
			same || f=$((f + 1))
		done
		[ "${N_linked:-$N}" -eq 0 ] || tally "$mode, linked, $be" $f
		[ $mode = fault_exit ] && continue
		case " ${PROFIL_STRESS_WAYS:-linked run} " in *" run "*) ;; *) continue ;; esac
		f=0
		for i in $(seq "$N"); do
			rm -rf r.prof
			timeout -s KILL $limit $prun_cmd --backend $be -o r.prof ./plain $mode > got 2> /dev/null
			st=$?
			same || f=$((f + 1))
		done
		tally "$mode, profil run, $be" $f
	done
done

timeout -s KILL $limit ./ends race > want 2> /dev/null
want=$?
chosen exit_race || backends_race=
for be in ${backends_race-$backends}; do
	f=0
	for i in $(seq "$N"); do
		rm -rf r.prof
		timeout -s KILL $limit $prun_cmd --backend $be -o r.prof ./ends race > got 2> /dev/null
		st=$?
		if ! same || "$profil" report r.prof 2>&1 | grep -q "did not exit normally"; then
			f=$((f + 1))
		fi
	done
	tally "exit_race, profil run, $be" $f
done

for c in "race dl_race" "cancel dl_cancel"; do
	set -- $c
	chosen $2 || continue
	timeout -s KILL $limit ./dlrace $1 dl 50 > want 2> /dev/null
	want=$?
	for be in $backends; do
		f=0
		for i in $(seq "$N"); do
			rm -rf r.prof
			timeout -s KILL $limit $prun_cmd --backend $be -o r.prof -- ./dlrace $1 dl 50 \
				> got 2> /dev/null
			st=$?
			same || f=$((f + 1))
		done
		tally "$2, profil run, $be" $f
	done
done
echo "long.sh: $total failed runs in all"
[ $total -eq 0 ]
