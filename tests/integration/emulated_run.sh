#!/bin/sh
# emulated_run.sh BUILD - a run made on another processor, read here.
# Only in the emulated pass (make test-emulated: PROFIL_TEST_ARCH's
# library and programs under qemu-user, this machine's profil command).
# profil run's default backend takes the timer (qemu-user has no perf
# events: auto must not pick perf there); report finds the functions of
# the other processor's object in the shares they burn; export's pprof
# and gmon.out are read by go tool pprof and by that processor's gprof;
# a -pg program's gmon.out from 2 and 4 threads holds every call, and
# report reads the arm64 .plt that -pg calls go through as such.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
arch=${PROFIL_TEST_ARCH:?set by make test-emulated}
emu=${PROFIL_TEST_EMULATOR:?set by make test-emulated}
xcc=$arch-linux-gnu-gcc
cd "$tmp" || exit 1

# The machine's own loader, starting the emulator, says once that it
# cannot preload the other processor's library: that line is not ours.
ours() { grep -v 'from LD_PRELOAD cannot be preloaded' "$1"; }

$xcc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1
PROFIL_LIBRARY="$B/lib/libprofil.so" "$profil" run -o spin.prof $emu ./spin 60 2>err \
	|| { ours err; no "profil run: status $?"; }
"$profil" report spin.prof > report.txt 2>&1 || no "report: status $?"
cat report.txt
grep -q "backend timer (perf events refused" report.txt || no "auto did not take the timer under qemu"
"$profil" report --format csv spin.prof > spin.csv || no "report --format csv"
n=$(awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' spin.csv)
[ "$n" -ge 500 ] || no "only $n samples"
# 3:2:1, within five standard deviations of a share of n samples.
for f in spin_three:50 spin_two:33.33 spin_one:16.67; do
	got=$(share spin.csv "${f%%:*}" spin)
	bound=$(awk -v p="${f#*:}" -v n="$n" 'BEGIN { printf "%.2f\n", 5 * 100 * sqrt(p / 100 * (1 - p / 100) / n) }')
	within "$got" "${f#*:}" "$bound" || no "${f%%:*}: $got%, want ${f#*:}% within $bound"
done
adds_up spin.prof || no "statistics do not add up"
"$profil" report --objects --format csv spin.prof | grep -q ",$tmp/spin," || no "report --objects: no spin"
a3=$(share spin.csv spin_three spin)

# pprof, read by go tool pprof.
"$profil" export --format pprof -o spin.pb.gz spin.prof || no "export pprof: status $?"
if command -v go >/dev/null; then
	HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -top -symbolize=none spin.pb.gz > top.txt 2>&1 \
		|| { cat top.txt; no "go tool pprof failed"; }
	p3=$(awk '$NF == "spin_three" { sub("%", "", $2); print $2 }' top.txt)
	within "${p3:-0}" "$a3" 0.5 || no "pprof: spin_three ${p3:-none}%, profil report $a3%"
else
	no "go is not installed (scripts/setup.sh installs golang-go)"
fi

# gmon.out, read by the processor's gprof (percentages of the program's
# own samples).
"$profil" export --format gmon -o gmon.out spin.prof || no "export gmon: status $?"
"$arch-linux-gnu-gprof" -b -p ./spin gmon.out > gprof.txt 2>&1 || { cat gprof.txt; no "gprof"; }
g3=$(awk '$NF == "spin_three" { print $1 }' gprof.txt)
prog=$("$profil" report --objects --format csv spin.prof | awk -F, 'NR > 1 { n = split($5, p, "/"); if (p[n] == "spin") print $1 }')
within "${g3:-0}" "$(awk -v a="$a3" -v p="$prog" 'BEGIN { print 100 * a / p }')" 0.5 \
	|| no "gprof: spin_three ${g3:-none}%, profil report $a3% of $prog%"

# A -pg program: every call counted, from 2 and 4 threads, as report
# reads the file (its calls column).
$xcc -pg -O2 -pthread -o calls "$root/tests/gmon/calls.c" -L"$B/lib" -Wl,-rpath,"$B/lib" -lprofil \
	|| exit 1
for t in 2 4; do
	rm -f gmon.calls.*.out
	$emu ./calls $t 500000 || no "calls $t: status $?"
	f=$(ls gmon.calls.*.out 2>/dev/null | head -n 1)
	[ -n "$f" ] || { no "calls $t: no gmon.calls.PID.out"; continue; }
	"$profil" report --format csv "$f" > calls.csv || no "report $f"
	got=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["function"] == "leaf" { print $col["calls"] }' calls.csv)
	[ "$got" = $((t * 500000)) ] || no "$t threads: report says leaf was called ${got:-no} times, not $((t * 500000))"
	echo "$arch, $t threads: report reads $got of $((t * 500000)) calls"
	"$profil" report "$f" | grep -q '\$x' && no "report names a mapping symbol (\$x) as a function"
done

[ $fail -eq 0 ] && echo "emulated_run: all checks passed"
exit $fail
