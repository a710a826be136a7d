#!/bin/sh
# hostile_limits.sh BUILD - resource limits at their least (issue 6,
# item 4).  RLIMIT_NOFILE 4, the least a dynamically linked program runs
# with: the program still opens its files as without the profiler
# (libprofil keeps no descriptor in the top quarter of the limit), perf
# is passed over with one line, and the profile adds up and finds the hot
# function.  A few descriptors, or RLIMIT_MEMLOCK 0 for a user that
# perf_event_mlock_kb does not cover, and many threads: the threads
# without a perf event are sampled by timer, and profil run says so.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
build_hostile

# check WHAT PROFILE: it adds up, and hot() has nearly all the samples.
check() {
	adds_up "$2" || no "$1: statistics do not add up: $("$profil" report "$2" | sed -n 2p)"
	"$profil" report --format csv "$2" > p.csv
	h=$(share p.csv hot hostile)
	within "$h" 100 10 || no "$1: hot() has $h% of the samples, want nearly all"
	echo "$1: hot() $h%; $("$profil" report "$2" | sed -n 3p)"
}

# RLIMIT_NOFILE 4.  The sanitizers' runtime needs descriptors of its own.
if [ -z "$asan_pre" ]; then
	(ulimit -n 4 && ./hostile open 50) > bare.out 2>&1 || no "nofile 4 without profil: $(cat bare.out)"
	(ulimit -n 4 && "$profil" run -o nofile.prof ./hostile open 50) > out 2> err
	st=$?
	[ $st -eq 0 ] && cmp -s out bare.out || no "nofile 4: status $st, output '$(cat out)' (without profil: '$(cat bare.out)')"
	grep -q "^profil: perf events refused (EMFILE: no file descriptor to spare (RLIMIT_NOFILE)): the timer backend sampled instead$" err ||
		no "nofile 4: not said: $(cat err)"
	check "nofile 4" nofile.prof
	# The gmon runtime of a -pg program and monitor(3) hold no
	# descriptor either: the directory is opened again to write.
	lib="$B/lib"
	cc -pg -O2 -pthread -I"$root/include" -o pg "$root/tests/cli/hostile.c" \
		-L"$lib" -Wl,-rpath,"$lib" -lprofil || exit 1
	cc -O2 -pthread -DWITH_LIBPROFIL -I"$root/include" -o mon "$root/tests/cli/hostile.c" \
		-L"$lib" -Wl,-rpath,"$lib" -lprofil || exit 1
	mkdir pgdir mondir
	(cd pgdir && ulimit -n 4 && ../pg open 20) > out 2>&1
	[ $? -eq 0 ] && [ "$(cat out)" = "20 opens" ] && [ -s pgdir/gmon.pg.*.out ] ||
		no "nofile 4, -pg: $(cat out); files: $(ls pgdir)"
	(cd mondir && ulimit -n 4 && ../mon monitor 20) > out 2>&1
	[ $? -eq 0 ] && [ "$(cat out)" = "20 opens" ] && [ -s mondir/mon.out ] ||
		no "nofile 4, monitor: $(cat out); files: $(ls mondir)"
	echo "nofile 4: a -pg program and monitor(3) open every file and write $(ls pgdir) and $(ls mondir)"
fi

# RLIMIT_NOFILE 12 and 16 threads: every number is the program's
# (fds.c keeps none under 22), so the timer backend samples, said so.
(ulimit -n 12 && prun -o threads12.prof ./hostile threads 16 5) > out 2> err
st=$?
[ $st -eq 0 ] && [ "$(cat out)" = "16 threads" ] || no "nofile 12: status $st, output '$(cat out)'"
grep -q "^profil: perf events refused (EMFILE: no file descriptor to spare (RLIMIT_NOFILE)): the timer backend sampled instead$" err ||
	no "nofile 12: the timer backend not said: $(cat err)"
check "nofile 12, 16 threads" threads12.prof

# RLIMIT_NOFILE 48 and 40 threads: libprofil keeps descriptors 18 to 35
# only, so some threads have no perf event.
(ulimit -n 48 && prun -o threads.prof ./hostile threads 40 5) > out 2> err
st=$?
[ $st -eq 0 ] && [ "$(cat out)" = "40 threads" ] || no "nofile 48: status $st, output '$(cat out)'"
grep -q "^profil: [0-9]* threads had no perf event (RLIMIT_NOFILE, RLIMIT_MEMLOCK): sampled by timer instead$" err ||
	no "nofile 48: the threads sampled by timer not said: $(cat err)"
check "nofile 48, 40 threads" threads.prof

# RLIMIT_MEMLOCK 0 and 40 threads, as a user without CAP_IPC_LOCK: the
# rings beyond perf_event_mlock_kb shrink, then the threads fall back.
mkdir -m 777 nobody
if [ "$(id -u)" -eq 0 ]; then
	chmod 755 "$tmp"
	as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
else
	as_user=
fi
(cd nobody && $as_user sh -c "ulimit -l 0 && $prun_cmd -o memlock.prof ../hostile threads 40 2") > out 2> err
st=$?
[ $st -eq 0 ] && [ "$(cat out)" = "40 threads" ] || no "memlock 0: status $st, output '$(cat out)', $(cat err)"
grep -q "^profil: [0-9]* threads had no perf event" err || no "memlock 0: the fallback not said: $(cat err)"
check "memlock 0, 40 threads" nobody/memlock.prof

[ $fail -eq 0 ] && echo "hostile_limits: all checks passed"
exit $fail
