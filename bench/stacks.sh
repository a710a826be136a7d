#!/bin/sh
# stacks.sh BUILD [RUNS] - make bench: what call stacks cost under the
# perf backend, against perf record at the same rate, and how complete
# they are at the default copy (8192 bytes).
#
# Cost: bench/stackspin.c, fixed work 20 calls deep, at 10 kHz (RUNS
# interleaved runs, the least CPU of each configuration):
#   prog us/sample  the program's own CPU above bare, per sample (its CPU
#                   times the rate: every tool samples CPU time)
#   tree us/sample  the same for the whole tree (perf record's process)
# Completeness: profil run on tests/cli/stacks_perf_work.c (own
# recursion, qsort callback, zlib, 2 threads) and on CPython (a loop
# calling functions), at 1 kHz: report's stacks line.
set -u
B=$(cd "${1:-build}" && pwd)
RUNS=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
profil="$B/bin/profil"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
cc -O2 -g -o stackspin "$root/bench/stackspin.c" || exit 1
cc -O2 -g -rdynamic -pthread -o work "$root/tests/cli/stacks_perf_work.c" -lz || exit 1
cc -O2 -o treecpu "$root/bench/treecpu.c" || exit 1
N=${STACKS_BENCH_N:-400000000}
HZ=10000
if ! "$profil" run --backend perf -o probe.prof true > probe.out 2>&1; then
	echo "stacks bench: perf backend not usable here: $(head -n 1 probe.out)"
	exit 0
fi
perf_ok=
perf record -q -e task-clock:u -F 100 -o probe.data true > /dev/null 2>&1 && perf_ok=1

run() {	# NAME: "prog tree"
	rm -rf p.prof
	case $1 in
	bare)		set -- ./stackspin $N 20 ;;
	nostacks)	set -- "$profil" run --backend perf --no-stacks -F $HZ -o p.prof ./stackspin $N 20 ;;
	stacks)		set -- "$profil" run --backend perf --stacks -F $HZ -o p.prof ./stackspin $N 20 ;;
	record)		set -- perf record -q -e task-clock:u -F $HZ -o p.data ./stackspin $N 20 ;;
	record-g)	set -- perf record -q -e task-clock:u -F $HZ -g -o p.data ./stackspin $N 20 ;;
	dwarf)		set -- perf record -q -e task-clock:u -F $HZ --call-graph dwarf -o p.data ./stackspin $N 20 ;;
	esac
	tree=$(./treecpu "$@" 2> line) || { echo "fail fail"; return; }
	echo "$(sed -n 's/^cpu=//p' line | tail -n 1) $tree"
}
configs="bare nostacks stacks"
[ -n "$perf_ok" ] && configs="$configs record record-g dwarf"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$RUNS"); do
	for c in $configs; do
		echo "$c $(run "$c")" >> results
	done
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v hz=$HZ '
	{ if (!($1 in prog) || $2 < prog[$1]) prog[$1] = $2; if (!($1 in tree) || $3 < tree[$1]) tree[$1] = $3; seen[$1] = 1 }
	END {
		printf "stackspin, 20 calls deep, %d Hz: %.2f s of CPU bare, least of the runs\n", hz, prog["bare"]
		printf "%-34s %15s %15s\n", "configuration", "prog us/sample", "tree us/sample"
		n = split("nostacks stacks record record-g dwarf", order, " ")
		name["nostacks"] = "profil run, perf, --no-stacks"; name["stacks"] = "profil run, perf, stacks (8 KiB)"
		name["record"] = "perf record"
		name["record-g"] = "perf record -g"; name["dwarf"] = "perf record --call-graph dwarf"
		for (k = 1; k <= n; k++) {
			c = order[k]; if (!(c in seen)) continue
			s = prog[c] * hz
			printf "%-34s %15.2f %15.2f\n", name[c], (prog[c] - prog["bare"]) / s * 1e6, (tree[c] - tree["bare"]) / s * 1e6
		}
	}' results

# Completeness at the default copy.
"$profil" run --backend perf -F 1000 -o c.prof ./work 0.5 syms > /dev/null 2>&1
echo "C program (stacks_perf_work, 2 threads, perf backend): $("$profil" report c.prof 2> /dev/null | grep '^stacks:')"
py=$(command -v python3)
if [ -n "$py" ]; then
	"$profil" run --backend perf -F 1000 -o py.prof "$py" -c '
def f(n):
    return n if n < 2 else f(n - 1) + f(n - 2)
def g():
    s = 0
    for i in range(1500):
        s += f(18) + len(sorted(str(j) for j in range(2000)))
    return s
print(g())' > /dev/null 2>&1
	# About 1.5 s: the interpreter's start (imports, 0.1 s) has deeper
	# stacks than its steady state, and a 0.5 s run is a third start
	# (89% complete there, 98% over 1.5 s, on this machine).
	echo "CPython ($("$py" -V 2>&1), perf backend): $("$profil" report py.prof 2> /dev/null | grep '^stacks:')"
fi
