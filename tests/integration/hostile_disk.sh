#!/bin/sh
# hostile_disk.sh BUILD - a full disk (issue 6, item 4): a tmpfs of 1 MiB
# mounted in a mount namespace of the test's own (unshare -m; -rm when
# not root).  Each kind of file - profil run's, a -pg program's gmon.out,
# monitor's mon.out - on a disk full from the start: one line naming the
# file and ENOSPC, no file and no temporary left, the program's output
# and status untouched.  A disk that fills while profil run's file is in
# use: the samples whose counters get no page are counted lost (the file
# says so, and libprofil in one line at exit), the rest are whole, and
# report reads the file (it used to die of SIGBUS on a full tmpfs).
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
build_hostile
lib="$B/lib"
cc -O2 -g -pthread -DWITH_LIBPROFIL -I"$root/include" $san_cflags -o mon "$root/tests/cli/hostile.c" \
	-L"$lib" -Wl,-rpath,"$lib" -lprofil || exit 1
cc -pg -O2 -pthread -I"$root/include" $san_cflags -o work "$root/tests/gmon/work.c" \
	-L"$lib" -Wl,-rpath,"$lib" -lprofil || exit 1
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1
jit=
[ "$(uname -m)" = x86_64 ] && cc -O2 -g -o jit "$root/tests/cli/jit.c" && jit=./jit
mkdir disk
san_env=
[ -n "$asan_pre" ] && san_env="LD_PRELOAD=$asan_pre ASAN_OPTIONS=detect_leaks=0"

# The cases, run inside the namespace; results in $tmp/result.
cat > cases.sh <<'CASES'
set -u
mount -t tmpfs -o size=1m hostile "$tmp/disk" || { echo "cannot mount a tmpfs" > result; exit 0; }
cd "$tmp"
: > result
no() { echo "not ok: $*" >> result; }
fill() { dd if=/dev/zero of=disk/fill bs=4096 2>/dev/null; }
leftovers() { ls -A disk | grep -v '^fill$' | tr '\n' ' '; }

# A disk filled while the file is in use.
$prun_cmd -o disk/mid.prof ./hostile fill disk/fill 60 > out 2> err
st=$?
[ $st -eq 0 ] && [ "$(cat out)" = "disk filled" ] || no "filling: status $st, output $(cat out)"
grep -q "^libprofil: [0-9]* samples lost: no room for the counters in $tmp/disk/mid.prof/hostile.[0-9]*.prof: No space left on device$" err ||
	no "filling: the loss not said: $(cat err)"
"$profil" report disk/mid.prof > rep 2> rep.err || no "filling: report failed: $(cat rep.err)"
grep -q "^1 process lost samples: the file system had no room" rep || no "filling: report does not say: $(head -n 4 rep)"
echo "filling: $(grep -c . err) line(s): $(head -n 1 err); $(sed -n 2p rep)" >> result
cp -r disk/mid.prof mid.prof
rm -rf disk/*

# JIT code (tests/cli/jit.c) on a disk full once the file is made: the
# outside table, where its pcs go, gets no page; the program, whose
# SIGBUS handler exits 99, never sees a fault, and its samples are still
# the JIT row (at no pc kept).
if [ -n "$jit" ]; then
	$prun_cmd -o disk/jit.prof $jit 300 fill disk/fill > out 2> err
	st=$?
	[ $st -eq 0 ] && grep -q '^jit [0-9]' out || no "jit on a full disk: status $st, output $(cat out) $(cat err)"
	"$profil" report --format csv disk/jit.prof > jit.csv 2> rep.err || no "jit on a full disk: report: $(cat rep.err)"
	row=$(awk -F, '$5 == "[JIT or anonymous code]" { print $1 }' jit.csv)
	[ -n "$row" ] || no "jit on a full disk: no JIT row: $(cat jit.csv)"
	echo "jit on a full disk: status $st, $(cat out), JIT row ${row}%" >> result
	rm -rf disk/*
fi

# Full from the start: profil run's file.
fill
PROFDIR=disk $prun_cmd ./spin 5 > out 2> err
st=$?
[ $st -eq 0 ] && [ ! -s out ] || no "profil run file: status $st, output $(cat out)"
[ "$(grep -c . err)" -eq 2 ] &&
	grep -q "^libprofil: cannot write profile $tmp/disk/profil.data/spin.[0-9]*.prof: No space left on device$" err &&
	grep -q "^profil: no profile was written: .*libprofil said why above$" err ||
	no "profil run file: not the two lines: $(cat err)"
[ -z "$(leftovers)" ] || no "profil run file: left behind: $(leftovers)"
echo "profil run file: $(head -n 1 err)" >> result

# Full from the start: a -pg program's gmon.out.
env $san_env PROFDIR=disk ./work return 0.05 > out 2> err
st=$?
[ $st -eq 0 ] && grep -q '^pid=' out || no "gmon.out: status $st, output $(cat out)"
[ "$(grep -c '^libprofil' err)" -eq 1 ] && grep -q "^libprofil: $tmp/disk/gmon.work.[0-9]*.out: No space left on device; profile not written$" err ||
	no "gmon.out: not one line: $(cat err)"
[ -z "$(leftovers)" ] || no "gmon.out: left behind: $(leftovers)"
echo "gmon.out: $(grep '^libprofil' err)" >> result

# Full from the start: mon.out, written at exit and by monitor(NULL).
(cd disk && env $san_env ../mon monitor 5) > out 2> err
st=$?
[ $st -eq 0 ] && [ "$(cat out)" = "5 opens" ] || no "mon.out at exit: status $st, output $(cat out)"
[ "$(grep -c . err)" -eq 1 ] && grep -q "^libprofil: mon.out not written: No space left on device$" err ||
	no "mon.out at exit: not one line: $(cat err)"
(cd disk && env $san_env ../mon monitor 5 stop) > out 2> err
[ "$(tail -n 1 out)" = "monitor(NULL): -1 No space left on device" ] && [ ! -s err ] ||
	no "monitor(NULL): '$(cat out)', '$(cat err)'"
[ -z "$(leftovers)" ] || no "mon.out: left behind: $(leftovers)"
echo "mon.out: at exit and monitor(NULL), ENOSPC" >> result
CASES

if [ "$(id -u)" -eq 0 ]; then ns="unshare -m"; else ns="unshare -rm"; fi
tmp=$tmp profil=$profil prun_cmd=$prun_cmd lib=$lib san_env=$san_env jit=$jit $ns sh cases.sh ||
	no "cannot make a mount namespace ($ns)"
if grep -q "cannot mount" result 2>/dev/null; then
	no "cannot mount a tmpfs here ($ns): the full disk is not tested"
fi
cat result
grep -q "^not ok" result && fail=1
# Out of the namespace: the file filled midway reads, adds up, and the
# samples that were not lost are where the time went.
if [ -d mid.prof ]; then
	adds_up mid.prof || no "filling: statistics do not add up: $("$profil" report mid.prof | sed -n 2p)"
	"$profil" report --format csv mid.prof > p.csv
	h=$(share p.csv hot hostile)
	within "$h" 75 25 || no "filling: hot() has $h% of the samples, want 50 to 100"
fi
[ $fail -eq 0 ] && echo "hostile_disk: all checks passed"
exit $fail
