#!/bin/sh
# valgrind.sh BUILD - valgrind's memcheck on the command: report (by
# function, by line, annotated, csv, json), merge, export (pprof, gmon)
# and a bad input, each with no memory error and no definite leak, and
# each still doing its job (its output checked).  Only in the plain
# build: valgrind cannot run a program built with AddressSanitizer
# (tests/run.sh leaves this test out of the sanitizer pass, and says so).
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
command -v valgrind >/dev/null || { no "valgrind is not installed (scripts/setup.sh)"; exit 1; }

cc -O2 -g -o spin "$root/tests/cli/spin.c"
prun -o a.prof ./spin 30 2>/dev/null || no "run a"
prun -o b.prof ./spin 30 2>/dev/null || no "run b"

# No suppressions: libdw, libelf, zlib and protobuf-c are clean here.
# Reachable blocks at exit (stdio's buffers) are not leaks.
vg() {	# NAME EXPECTED_STATUS PROFIL_ARGS... - stdout to NAME.out
	name=$1 want=$2
	shift 2
	valgrind -q --error-exitcode=99 --leak-check=full --show-leak-kinds=definite \
		--errors-for-leak-kinds=definite --log-file="$name.vg" \
		"$profil" "$@" > "$name.out" 2> "$name.err"
	st=$?
	if [ -s "$name.vg" ] || [ $st -eq 99 ]; then
		cat "$name.vg"
		no "$name: memcheck found errors or definite leaks (status $st)"
	elif [ $st -ne "$want" ]; then
		cat "$name.err"
		no "$name: status $st, not $want"
	else
		echo "ok: $name clean under memcheck"
	fi
}

vg report 0 report a.prof
grep -q spin_three report.out || no "report: no spin_three row"
vg lines 0 report --lines a.prof
grep -q 'spin\.c:' lines.out || no "report --lines: no line of spin.c"
vg annotate 0 report --annotate spin_three a.prof
[ "$(wc -l < annotate.out)" -gt 3 ] || no "annotate: no disassembly"
vg csv 0 report --format csv a.prof
grep -q ',spin_three,' csv.out || no "csv: no spin_three row"
vg json 0 report --format json a.prof
grep -q '"spin_three"' json.out || no "json: no spin_three"
vg merge 0 merge -o ab.prof a.prof b.prof
"$profil" report ab.prof > /dev/null || no "merge: its output does not read"
vg pprof 0 export --format pprof -o a.pb.gz a.prof
gzip -t a.pb.gz || no "export pprof: not gzip"
vg gmon 0 export --format gmon -o a.gmon a.prof
head -c 4 a.gmon | grep -q gmon || no "export gmon: no gmon header"
head -c 10000 a.prof > short.prof
vg bad 1 report short.prof
[ "$(wc -l < bad.err)" -eq 1 ] && grep -q short.prof bad.err \
	|| { cat bad.err; no "bad input: not one line naming the file"; }

[ $fail -eq 0 ] && echo "valgrind: all checks passed"
exit $fail
