#!/bin/sh
# dl_locks.sh BUILD - dlopen and dlclose under profil run where glibc's
# loader lock is held (audit F2c, F3): a plugin whose constructor opens a
# helper and whose destructor closes it (200 times); that, in one
# thread, while another opens and closes the helper (200 times: an ABBA
# deadlock with the loader's lock, 12 of 12 before); a thread cancelled
# inside its loop of opening and closing the plugin, then main opens it
# (50 times).
# Each unprofiled and under profil run with each backend, under a kill
# timeout: the same output and status, and a profile that reads.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
src="$root/tests/cli/dlrace.c"
mkdir dl
cc -O2 -g -fPIC -shared -DPLUGIN_INNER -o dl/libinner.so "$src" || exit 1
cc -O2 -g -fPIC -shared -DPLUGIN_OUTER -o dl/libouter.so "$src" -ldl || exit 1
cc -O2 -g -pthread $san_cflags -o dlrace "$src" -ldl || exit 1

for c in "nested 200" "race 200" "cancel 50"; do
	set -- $c
	timeout -s KILL 120 ./dlrace $1 dl $2 > want 2> want.err
	want=$?
	[ $want -eq 0 ] || no "$1: unprofiled, status $want: $(cat want.err)"
	for be in perf timer; do
		rm -rf p.prof
		start=$(date +%s)
		timeout -s KILL 120 $prun_cmd --backend $be -o p.prof -- ./dlrace $1 dl $2 > got 2> err
		st=$?
		took=$(( $(date +%s) - start ))
		[ $st -eq $want ] || no "$1 [$be]: status $st (137: hung, killed), unprofiled $want: $(tail -n 3 err | tr '\n' '|')"
		cmp -s want got || no "$1 [$be]: output '$(cat got)', unprofiled '$(cat want)'"
		[ $st -ne 0 ] || "$profil" report p.prof > /dev/null 2> rep.err || no "$1 [$be]: report: $(cat rep.err)"
		echo "$1 [$be]: status $st in ${took}s"
	done
done
[ $fail -eq 0 ] && echo "dl_locks: all checks passed"
exit $fail
