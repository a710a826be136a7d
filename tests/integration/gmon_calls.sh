#!/bin/sh
# gmon_calls.sh BUILD - a -pg program linked with libprofil records every
# call: THREADS threads each call leaf() 2 000 000 times, and gprof reads
# exactly THREADS x 2 000 000, for 1, 2, 4 and 16 threads (glibc's mcount
# drops calls that meet in it).  Also with -mfentry, without PIE, and with
# libprofil preloaded into a program linked against glibc's gmon.
# In the emulated pass (arm64 under qemu-user) the same, but -mfentry
# (x86 only) and clang.
. "$(dirname "$0")/../gmon/lib.sh"

build calls calls.c
build calls_nopie calls.c -no-pie -fno-pie
[ -z "$emu" ] && build calls_fentry calls.c -mfentry
cd "$tmp" || exit 1

check() {	# PROGRAM THREADS
	rm -f gmon.*
	$emu "./$1" "$2" || fail "$1 $2 exited $?"
	set -- "$1" "$2" gmon.$1.*.out
	[ -f "$3" ] || { fail "$1 $2: no gmon.$1.PID.out"; return; }
	got=$(calls "$1" "$3" leaf)
	want=$(($2 * 2000000))
	[ "$got" = "$want" ] || fail "$1 with $2 threads: gprof says leaf was called $got times, not $want"
	echo "$1: $2 threads: $got of $want calls"
}

# clang's -pg calls mcount after the prologue too.
if command -v clang >/dev/null && [ -z "$san" ] && [ -z "$emu" ]; then
	CC=clang build calls_clang calls.c
fi
for n in 1 2 4 16; do
	check calls $n
done
check calls_nopie 2
[ -x calls_fentry ] && check calls_fentry 2
[ -x calls_clang ] && check calls_clang 2

# Preloaded into a program built against glibc's gmon: ours runs, not
# glibc's (no gmon.out), and loses nothing either.
if [ -z "$san" ]; then
	$CC -pg -O2 -pthread -o calls_glibc "$root/tests/gmon/calls.c" || exit 1
	rm -f gmon.*
	LD_PRELOAD="$lib/libprofil.so" $emu ./calls_glibc 4 || fail "preloaded calls_glibc exited $?"
	[ -f gmon.out ] && fail "glibc's gmon.out was written under LD_PRELOAD"
	f=$(ls gmon.calls_glibc.*.out 2>/dev/null)
	got=$(calls calls_glibc "$f" leaf)
	[ "$got" = 8000000 ] || fail "preloaded: leaf called $got times, not 8000000"
	echo "preloaded: 4 threads: $got of 8000000 calls"
fi
done_testing
