#!/bin/sh
# cli_export.sh BUILD - profil merge and profil export, checked by the
# tools that read them: exported pprof files by `go tool pprof -top`,
# exported gmon.out files by GNU gprof and by profil report itself;
# merged profiles add up.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

cc -O2 -g -o spin "$root/tests/cli/spin.c"
prun -o a.prof ./spin 60 2>/dev/null || no "run a"
prun -o b.prof ./spin 60 2>/dev/null || no "run b"
"$profil" report --format csv a.prof > a.csv || no "report a"
a3=$(share a.csv spin_three spin)
samples() {	# CSV: the total of the samples column
	awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' "$1"
}

# merge: the counts of two runs add up, row by row and in total.
"$profil" merge -o ab.prof a.prof b.prof || no "merge: status $?"
"$profil" report --format csv b.prof > b.csv
"$profil" report --format csv ab.prof > ab.csv || no "report of the merged file"
[ "$(samples ab.csv)" -eq $(( $(samples a.csv) + $(samples b.csv) )) ] \
	|| no "merged samples $(samples ab.csv) != $(samples a.csv) + $(samples b.csv)"
row() { awk -F, -v fn="$2" 'NR > 1 && $5 == fn { s += $4 } END { print s + 0 }' "$1"; }
[ "$(row ab.csv spin_three)" -eq $(( $(row a.csv spin_three) + $(row b.csv spin_three) )) ] \
	|| no "merged spin_three does not add up"
"$profil" merge -o aa.prof ab.prof ab.prof || no "merge of merged files"
"$profil" report --format csv aa.prof > aa.csv || no "report aa"
[ "$(samples aa.csv)" \
	-eq $(( 2 * $(samples ab.csv) )) ] || no "a merged file merged again does not double"

# pprof: go tool pprof reads it and sees the same shares.
"$profil" export --format pprof -o a.pb.gz a.prof || no "export pprof: status $?"
gzip -t a.pb.gz || no "pprof export is not gzip"
if command -v go >/dev/null; then
	HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -top -symbolize=none a.pb.gz > top.txt 2>&1 \
		|| { cat top.txt; no "go tool pprof failed"; }
	cat top.txt
	p3=$(awk '$NF == "spin_three" { sub("%", "", $2); print $2 }' top.txt)
	within "${p3:-0}" "$a3" 0.5 || no "pprof: spin_three ${p3:-none}%, profil report $a3%"
	grep -q "Type: cpu" top.txt || no "pprof: sample type is not cpu"
	grep -q "Build ID:" top.txt || no "pprof: no build ID in the mapping"
	HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -raw -symbolize=none a.pb.gz > raw.txt 2>&1
	grep -q "samples/count cpu/nanoseconds" raw.txt || no "pprof: sample types"
	grep -Eq "spin_three .*spin.c:[0-9]+" raw.txt || no "pprof: no source line for spin_three"
	# Every mapping has its build ID.
	sed -n '/^Mappings/,$p' raw.txt | sed 1d | grep -Ev ' [0-9a-f]{40}( |$)' > nobid.txt
	[ -s nobid.txt ] && { cat nobid.txt; no "pprof: mappings without a build ID"; }
	# Inlined frames carry the lines of their calls: inner inlined into
	# middle at CALL-INNER's line, middle into outer at CALL-MIDDLE's;
	# pprof -list shows outer's source with the samples on that line.
	cc -O2 -g -o inl "$root/tests/cli/inlprog.c"
	prun -o inl.prof ./inl 100 2> /dev/null || no "run inl"
	"$profil" export --format pprof -o inl.pb.gz inl.prof || no "export inl"
	HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -raw -symbolize=none inl.pb.gz > inl.txt 2>&1
	li=$(grep -n "/\* CALL-INNER" "$root/tests/cli/inlprog.c" | cut -d: -f1)
	lm=$(grep -n "/\* CALL-MIDDLE" "$root/tests/cli/inlprog.c" | cut -d: -f1)
	grep -Eq "^ +middle .*inlprog.c:$li " inl.txt || { cat inl.txt; no "pprof: middle not at line $li"; }
	grep -Eq "^ +outer .*inlprog.c:$lm " inl.txt || no "pprof: outer not at line $lm"
	grep -Eq "inlprog.c:0 " inl.txt && no "pprof: an inlined frame at line 0"
	HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -list '^outer$' -symbolize=none inl.pb.gz > list.txt 2>&1
	grep -Eq "ms +$lm:.*CALL-MIDDLE" list.txt || { cat list.txt; no "pprof -list outer: no samples on line $lm"; }
else
	no "go is not installed (scripts/setup.sh installs golang-go)"
fi

# gmon: gprof reads the exported file and sees the same shares;
# profil report reads it back with the same counts.
"$profil" export --format gmon -o gmon.out a.prof || no "export gmon: status $?"
gprof -b -p ./spin gmon.out > gprof.txt 2>&1 || { cat gprof.txt; no "gprof failed"; }
cat gprof.txt
g3=$(awk '$NF == "spin_three" { print $1 }' gprof.txt)
# gprof's percentages are of the program's samples only.
prog=$("$profil" report --objects --format csv a.prof | awk -F, 'NR > 1 { n = split($5, p, "/"); if (p[n] == "spin") print $1 }')
within "${g3:-0}" "$(awk -v a="$a3" -v p="$prog" 'BEGIN { print 100 * a / p }')" 0.5 \
	|| no "gprof: spin_three ${g3:-none}%, profil report $a3% of $prog%"
"$profil" report --format csv gmon.out > g.csv 2>&1 && no "a gmon.out without its program was read"
"$profil" report --format csv --exe ./spin gmon.out > g.csv || no "report of gmon.out"
[ "$(row g.csv spin_three)" -eq "$(row a.csv spin_three)" ] || no "gmon round trip: spin_three"

# The gmon.out a -pg program linked with libprofil writes at exit: report
# finds the program beside it by the file's name, gprof agrees.
cc $san_cflags -O2 -g -pg -o spin_pg "$root/tests/cli/spin.c" -L"$B/lib" -Wl,-rpath,"$B/lib" -lprofil
ASAN_OPTIONS=detect_leaks=0 ./spin_pg 60 || no "spin_pg: status $?"
pg=$(ls gmon.spin_pg.*.out 2>/dev/null | head -n 1)
if [ -n "$pg" ]; then
	"$profil" report --format csv "$pg" > pg.csv || no "report of a -pg program's $pg"
	within "$(share pg.csv spin_three spin_pg)" 50 10 || { cat pg.csv; no "-pg: spin_three share"; }
	gprof -b -p spin_pg "$pg" > pg.txt 2>&1 || no "gprof $pg"
	# gprof's percentages are of the samples in the program's functions;
	# profil's also count those outside it (the .stats file beside).
	in_prog=$(awk -F, 'NR > 1 && $6 ~ /\/spin_pg$/ { s += $4 } END { print s + 0 }' pg.csv)
	g3=$(awk '$NF == "spin_three" { print $1 }' pg.txt)
	p3=$(awk -v t="$(row pg.csv spin_three)" -v p="$in_prog" 'BEGIN { if (p > 0) printf "%.2f\n", 100 * t / p }')
	within "${g3:-0}" "${p3:-0}" 0.5 || { cat pg.csv pg.txt; no "-pg: gprof spin_three ${g3:-none}%, profil ${p3:-none}% of the program's samples"; }
else
	no "spin_pg wrote no gmon.spin_pg.PID.out"
fi

# Bad uses.
"$profil" export -o x a.prof 2>err && no "export without --format"
grep -q "no --format" err || no "export without --format: $(cat err)"
"$profil" export --format svg -o x a.prof 2>err && no "export --format svg"
"$profil" merge a.prof 2>err && no "merge without -o"
head -c 5000 a.prof/spin.*.prof > cut.prof
"$profil" merge -o bad.prof a.prof cut.prof 2>err && no "merge of a truncated file"
grep -q "cut.prof: truncated" err || no "merge of a truncated file: $(cat err)"
[ -e bad.prof ] && no "merge left an output behind after an error"
"$profil" export --format pprof -o bad.pb.gz cut.prof 2>err && no "export of a truncated file"
ls | grep -q "tmp\." && no "a temporary file was left behind"

[ $fail -eq 0 ] && echo "cli_export: all checks passed"
exit $fail
