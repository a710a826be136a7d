#!/bin/sh
# cli_mixed.sh BUILD - files of runs of different programs summed into
# one profile are said so: report's header gives "2 runs of 2 programs"
# (and the JSON runs and programs), and report, export, merge and
# report --html warn in one line on standard error (the page among its
# warnings too).  Two runs of one
# program, or one run of several programs (a process tree), are summed
# without a warning.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1
cc -O2 -g -o sysmix "$root/tests/cli/sysmix.c" || exit 1
# profiles DIR: the profil files profil run left in DIR, found by content
# whatever the run's layout.
profiles() {
	find "$1" -type f | while read -r f; do
		[ "$(head -c 6 "$f")" = PROFIL ] && echo "$f"
	done | sort
}
# run DIR PROGRAM ARGS: profil run in a directory of its own.
run() {
	d=$1; shift
	mkdir -p "$d" && (cd "$d" && prun "$@" > /dev/null 2>&1) || no "run in $d: $*"
}
run z1 ../spin 5
run z2 ../spin 5
run l1 ../sysmix 0.05
run t1 sh -c '../spin 3; ../sysmix 0.03'
z1=$(profiles z1); z2=$(profiles z2); l1=$(profiles l1); t1=$(profiles t1)
[ -n "$z1" ] && [ -n "$z2" ] && [ -n "$l1" ] && [ "$(echo "$t1" | wc -l)" -ge 3 ] \
	|| { no "profiles missing: '$z1' '$z2' '$l1' '$t1'"; exit 1; }

# summed WHAT HEADER WARN FILES...: report's header says HEADER (or no
# runs at all for ''), and it warns iff WARN is 1.
summed() {
	what=$1 header=$2 warn=$3
	shift 3
	"$profil" report "$@" > out 2> err || { no "$what: status $?"; cat err; return; }
	line=$(head -1 out)
	if [ -n "$header" ]; then
		echo "$line" | grep -q "profiles ($header)," || no "$what: header '$line', not '$header'"
	else
		echo "$line" | grep -q "runs\? of" && no "$what: header '$line' speaks of runs"
	fi
	if [ "$warn" = 1 ]; then
		[ "$(wc -l < err)" -eq 1 ] && grep -q "^profil: warning: the files are $header (" err \
			|| no "$what: no one-line warning: '$(cat err)'"
	else
		[ -s err ] && no "$what: warned: $(cat err)"
	fi
	echo "ok: $what: $line$([ "$warn" = 1 ] && echo ", and a warning")"
}
summed "two runs of two programs" "2 runs of 2 programs" 1 $z1 $l1
summed "three runs of two programs" "3 runs of 2 programs" 1 $z1 $l1 $z2
summed "two runs of one program" "2 runs of 1 program" 0 $z1 $z2
summed "one run of a tree" "1 run of [34] programs" 0 $t1
summed "one file" "" 0 $z1
summed "a tree and another run" "2 runs of [34] programs" 1 $t1 $z1

"$profil" report --format json $z1 $l1 > j 2> /dev/null
grep -q '"runs":2,"programs":2,' j || no "json: no runs and programs: $(head -c 300 j)"
"$profil" report --threads --format json $z1 $l1 > j 2> /dev/null
grep -q '"runs":2,"programs":2,' j || no "threads json: no runs and programs"

for cmd in "export --format pprof -o x.pb.gz" "merge -o m.prof" "report --html p.html"; do
	"$profil" $cmd $z1 $l1 > out 2> err || no "$cmd: status $?"
	[ "$(wc -l < err)" -eq 1 ] && grep -q "^profil: warning: the files are 2 runs of 2 programs (spin, sysmix)" err \
		|| no "$cmd: no one-line warning: '$(cat err)'"
	"$profil" $cmd.2 $z1 $z2 > out 2> err || no "$cmd.2: status $?"
	[ -s err ] && no "$cmd of one program: warned: $(cat err)"
done
grep -q "the files are 2 runs of 2 programs, summed in this view" p.html \
	|| no "the page's warnings do not say 2 runs of 2 programs"
grep -q "summed in this view" p.html.2 && no "the page of one program's runs warns"
echo "ok: export, merge, report --html warn"

[ $fail -eq 0 ] && echo "cli_mixed: all checks passed"
exit $fail
