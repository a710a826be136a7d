#!/bin/sh
# full_disk.sh BUILD - a full disk and a file size limit must not harm the
# program (issue 21, audit F7).  On a 64 KiB tmpfs (a mount namespace of
# the test's own), profil run with each backend of: busfault with a
# SIGBUS handler that calls _exit, one that returns, none; and zstd
# (which has a SIGBUS handler of its own) when installed.  Each must do
# what it does unprofiled: same status, same output, no hang (a kill
# timeout); the counter pages the disk refuses are lost samples, said in
# one line.  Then RLIMIT_FSIZE below the profile's size: no SIGXFSZ, one
# line saying the file is too large, the program's result unchanged.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
cc -O2 -g $san_cflags -o busfault "$root/tests/cli/busfault.c" || exit 1
head -c 3000000 /dev/urandom | od -An -tx1 | head -n 60000 > text
mkdir disk

cat > cases.sh <<'CASES'
set -u
mount -t tmpfs -o size=64k full "$tmp/disk" || { echo "cannot mount a tmpfs" > result; exit 0; }
cd "$tmp"
: > result
no() { echo "not ok: $*" >> result; }
# same NAME COMMAND...: COMMAND unprofiled, then under profil run with
# each backend, its profile on the full disk.
same() {
	name=$1; shift
	timeout -s KILL 60 "$@" > want 2> want.err
	want=$?
	for be in perf timer; do
		rm -rf disk/* disk/.[!.]* 2>/dev/null
		timeout -s KILL 60 $prun_cmd --backend $be -o disk/run -- "$@" > got 2> err
		st=$?
		[ $st -eq $want ] || no "$name [$be]: status $st, unprofiled $want: $(tr '\n' '|' < err)"
		cmp -s want got || no "$name [$be]: output differs from the unprofiled run's"
		grep -v '^libprofil: \|^profil: ' err > err.prog
		cmp -s want.err err.prog || no "$name [$be]: its stderr differs: $(tr '\n' '|' < err)"
		grep -q 'statically linked' err && no "$name [$be]: says statically linked: $(tr '\n' '|' < err)"
		echo "$name [$be]: status $st; $(grep -c '^libprofil' err) line(s) of libprofil: $(grep '^libprofil' err | head -n 1)" >> result
		grep -q 'samples lost: no room' err && echo lost >> lost.$name
	done
}
same exit ./busfault exit
same note ./busfault note
same none ./busfault none
if command -v zstd > /dev/null; then
	same zstd zstd -q -c -3 text
	[ -s lost.zstd ] || no "zstd: no counter page refused: the full disk was not reached"
fi

# RLIMIT_FSIZE: 8 KiB (not even the thread table) and 2 MiB (not every
# object's histogram).
rm -rf disk/* 2>/dev/null
umount "$tmp/disk"
for kb in 8 2048; do
	for be in perf timer; do
		rm -rf disk/* 2>/dev/null
		timeout -s KILL 60 prlimit --fsize=$((kb * 1024)) $prun_cmd --backend $be -o disk/run -- ./busfault exit > got 2> err
		st=$?
		[ $st -eq 0 ] && [ "$(cat got)" = done ] || no "ulimit -f $kb [$be]: status $st, output $(cat got): $(tr '\n' '|' < err)"
		grep -q '^libprofil: .*: File too large$' err || no "ulimit -f $kb [$be]: not said: $(tr '\n' '|' < err)"
		echo "ulimit -f $kb [$be]: status $st: $(grep '^libprofil' err | head -n 1)" >> result
	done
done
CASES

if [ "$(id -u)" -eq 0 ]; then ns="unshare -m"; else ns="unshare -rm"; fi
tmp=$tmp prun_cmd=$prun_cmd $ns sh cases.sh || no "cannot make a mount namespace ($ns)"
if grep -q "cannot mount" result 2>/dev/null; then
	no "cannot mount a tmpfs here ($ns): the full disk is not tested"
fi
cat result
grep -q "^not ok" result && fail=1
[ $fail -eq 0 ] && echo "full_disk: all checks passed"
exit $fail
