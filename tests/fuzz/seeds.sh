#!/bin/sh
# seeds.sh BUILD - make the fuzz corpora (tests/fuzz/corpus/TARGET/) anew
# from files the project really writes: profil run's profiles (of a
# process that exited and of one killed, cut down to their small
# segments by support/trim_profile.c), a merged one, gmon.out from a -pg
# program and from profil export, mon.out and a pcsample file from the
# classic calls, a load map out of that, a .profil-last, and command
# lines and environment values as the tests and manual pages use them.
# The corpora are checked in; run this only to renew them.
set -eu
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$B" && pwd)
profil="$B/bin/profil"
corpus="$root/tests/fuzz/corpus"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
link="-L$B/lib -Wl,-rpath,$B/lib -lprofil"

cc -O2 -g -D_GNU_SOURCE -I"$root/include" -o trim "$root/tests/fuzz/support/trim_profile.c" \
	"$root/src/format/profile.c" "$root/src/format/profile_guard.c" "$root/src/common/bins.c" 2>/dev/null
cc -O2 -g -o spin "$root/tests/cli/spin.c"
printf '%s\n' '#include <signal.h>' 'volatile unsigned long s;' \
	'int main(void) { for (unsigned long i = 0; i < 300000000; i++) s += i; raise(SIGKILL); }' \
	> killed.c
cc -O1 -o killed killed.c
"$profil" run -o spin.run ./spin 20 2>/dev/null
cp spin.run/*.prof spin.prof
# A list of files, as .profil-last was before run directories.
ls -d "$PWD"/spin.run/*.prof > runlist
"$profil" run -o killed.run ./killed 2>/dev/null || true
cp killed.run/*.prof killed.prof
"$profil" merge -o merged.prof spin.prof
# Call stacks (profil(5) version 4): a program of known calls.
cc -O2 -g -o callsprog "$root/tests/cli/calls.c"
"$profil" run --backend timer -o stacks.run ./callsprog 20 2>/dev/null
cp stacks.run/*.prof stacks.prof
./trim spin.prof spin.small
./trim killed.prof killed.small
./trim merged.prof merged.small
./trim stacks.prof stacks.small
"$profil" merge -o stacks-merged.prof stacks.prof
./trim stacks-merged.prof stacks-merged.small
./trim spin.prof self.small 1024 /proc/self/exe
"$profil" export --format gmon -o export.gmon spin.prof
cc -pg -O2 -pthread -I"$root/include" -o calls "$root/tests/gmon/calls.c" $link
./calls 2 20000
mv gmon.calls.*.out calls.gmon
cc -O2 -g -I"$root/include" -o classic "$root/tests/cli/classic.c" $link
./classic 5 > /dev/null
# The load map of work.pcs: its count (header bytes 24-31), its records
# (from byte 48 to the samples), as the loadmap target takes them.
nobj=$(od -An -t u8 -j 24 -N 8 work.pcs | tr -d ' ')
nsamples=$(od -An -t u8 -j 16 -N 8 work.pcs | tr -d ' ')
size=$(wc -c < work.pcs)
{ dd if=work.pcs bs=1 skip=24 count=8 2>/dev/null
  dd if=work.pcs bs=1 skip=48 count=$((size - 48 - 8 * nsamples)) 2>/dev/null; } > loadmap
[ "$nobj" -gt 0 ]

put() {	# TARGET NAME FILE
	mkdir -p "$corpus/$1"
	cp "$3" "$corpus/$1/$2"
}
for t in profile merge export; do
	put $t spin spin.small
	put $t killed killed.small
	put $t merged merged.small
	put $t stacks stacks.small
	put $t stacks-merged stacks-merged.small
done
put gmon calls calls.gmon
put merge calls-gmon calls.gmon
put gmon export export.gmon
put export calls-gmon calls.gmon
put export mon.out mon.out
put export work.pcs work.pcs
put monout mon.out mon.out
put pcsample work.pcs work.pcs
put loadmap work.pcs loadmap
put runlist profil-last runlist
./trim stacks.prof stacks-self.small 1024 /proc/self/exe
# report: the first byte picks the view (0 text, 3 csv, 5 call graph, 6 HTML,
# 7 tree, 8 callers); stacks-self only in those of stacks.
for v in 0 3 5 6 7 8; do
	for f in calls.gmon self.small stacks-self.small; do
		case $f$v in stacks-self.small[0356]|calls.gmon[78]|self.small[78]) continue ;; esac
		{ printf "\\$(printf %03o $v)"; cat $f; } > view
		put report "${f%.*}-$v" view
	done
done

# Environment: rate, backend, system time, PROFIL_OUT, program, buffer size.
args() {	# TARGET NAME ARG... - the arguments, each ended by a NUL byte
	t=$1 n=$2
	shift 2
	mkdir -p "$corpus/$t"
	printf '%s\0' "$@" > "$corpus/$t/$n"
}
args env default 1000 auto 1 'gmon.%n.%p.out' prog x
args env perf 20000 perf 0 '/tmp/out/%n-%p.gmon' work 'Z'
args env timer 100 timer 1 '%%p%q%' calls '~'
args env bad 0 perf2 yes '' '' ''
# Command lines: the first byte picks run (0), report (1), merge (2), export (3).
args cli run "$(printf '\060')-F" 5000 -o out.prof --backend timer -- ./spin 10
args cli report "$(printf '\061')--lines" --inline --threshold 0.5 --format csv --exe a.out spin.prof
args cli annotate "$(printf '\061')--annotate" spin_three -f json
args cli merge "$(printf '\062')-o" merged.prof a.prof b.prof
args cli export "$(printf '\063')--format" pprof -o out.pb.gz --object spin spin.prof
args cli help "$(printf '\063')-h"
ls -l "$corpus"/*
