#!/bin/sh
# loops.sh BUILD [--quick] - what profiling costs a program that calls
# cheap library functions in a loop (getc, a 1-byte read, malloc/free),
# and a tree of 200 short processes, at 1000 samples a CPU-second: bare,
# under profil run with each backend, under perf record and under
# gperftools' libprofiler, interleaved, the least of RUNS runs each.
#   prog x  the program's own CPU time over bare (it prints its own
#           getrusage, so the profiler's processes are not in it)
#   tree x  the whole tree's, profil's and perf's own processes included
# The target for each loop under each of profil's backends is 1.03x.
set -u
B=$(cd "${1:-build}" && pwd)
QUICK=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
profil="$B/bin/profil"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
$CC -O2 -o "$tmp/loops" "$root/bench/loops.c" || exit 1
$CC -O2 -o "$tmp/treecpu" "$root/bench/treecpu.c" || exit 1
if [ -n "$QUICK" ]; then RUNS=1; SCALE=20; else RUNS=5; SCALE=1; fi

gperf=$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -n 1)
perf_ok=
command -v perf >/dev/null 2>&1 &&
	perf record -q -e cpu-clock -F 100 -o "$tmp/probe.data" -- true >/dev/null 2>&1 && perf_ok=1
perf_pf=
[ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)" -le 2 ] && perf_pf=1

cat > "$tmp/procs.sh" <<'SH'
i=0
while [ $i -lt 200 ]; do /bin/true; i=$((i + 1)); done
SH

# The workloads: name, then the command (about a CPU-second each bare).
work() {	# NAME: its command line
	case $1 in
	getc)	echo "$tmp/loops getc $((300000000 / SCALE))" ;;
	read)	echo "$tmp/loops read $((4000000 / SCALE))" ;;
	malloc)	echo "$tmp/loops malloc $((100000000 / SCALE))" ;;
	procs)	echo "sh $tmp/procs.sh" ;;
	esac
}

configs="bare timer"
[ -n "$perf_pf" ] && configs="$configs perf"
[ -n "$perf_ok" ] && configs="$configs record"
[ -n "$gperf" ] && configs="$configs gperf"
# The short processes also without stacks, and against perf record -g
# and --call-graph dwarf: profil's stacks, like perf's dwarf mode, are
# walked from a copy of the stack, so they are whole on Debian's
# libraries without frame pointers; -g follows frame pointers.
pconfigs="bare timer timer_ns"
[ -n "$perf_pf" ] && pconfigs="$pconfigs perf perf_ns"
[ -n "$perf_ok" ] && pconfigs="$pconfigs record record_g record_dwarf"
[ -n "$gperf" ] && pconfigs="$pconfigs gperf"

# Each run writes a new place, and nothing is removed until the end: on
# an ext4 without a journal (this project's machines) a new file skips
# every inode deleted in the last minutes, so removing one run's 200
# files before the next run made each of its files cost ~1 ms more.
one() {	# CONFIG NAME COMMAND...: "prog tree" seconds
	cfg=$1; out=out.$2; shift 2
	cd "$tmp" || exit 1
	case $cfg in
	bare)	set -- "$@" ;;
	timer)	set -- "$profil" run --backend timer -F 1000 -o $out "$@" ;;
	perf)	set -- "$profil" run --backend perf -F 1000 -o $out "$@" ;;
	timer_ns) set -- "$profil" run --backend timer --no-stacks -F 1000 -o $out "$@" ;;
	perf_ns) set -- "$profil" run --backend perf --no-stacks -F 1000 -o $out "$@" ;;
	record)	set -- perf record -q -e cpu-clock -F 1000 -o $out.data -- "$@" ;;
	record_g) set -- perf record -q -e cpu-clock -F 1000 -g -o $out.data -- "$@" ;;
	record_dwarf) set -- perf record -q -e cpu-clock -F 1000 --call-graph dwarf -o $out.data -- "$@" ;;
	gperf)	set -- env LD_PRELOAD="$gperf" CPUPROFILE=$out.prof CPUPROFILE_FREQUENCY=1000 "$@" ;;
	esac
	tree=$("$tmp/treecpu" "$@" 2> err) || { echo "- -"; return; }
	prog=$(grep -E '^[0-9]+\.[0-9]+$' err | tail -n 1)
	echo "${prog:--} $tree"
}

: > "$tmp/results"
for w in getc read malloc procs; do
	for r in $(seq $RUNS); do
		cs=$configs
		[ "$w" = procs ] && cs="$pconfigs"
		for c in $cs; do
			echo "$w $c $(one "$c" "$w.$r.$c" $(work "$w"))" >> "$tmp/results"
		done
	done
done

echo "Cost of profiling cheap calls in a loop and 200 short processes, 1000 Hz"
echo "(CPU time over bare, the least of $RUNS runs each; prog: the program's own, tree: all processes)"
awk -v configs="$configs" '
	function least(k) { return k in best ? best[k] : -1 }
	{ for (f = 3; f <= 4; f++) if ($f != "-") { k = $1 SUBSEP $2 SUBSEP f
		if (!(k in best) || $f < best[k]) best[k] = $f } }
	END {
		n = split(configs, cf, " ")
		name["bare"] = "bare s"; name["timer"] = "profil timer"; name["perf"] = "profil perf"
		name["record"] = "perf record"; name["gperf"] = "gperftools"
		printf "%-8s", "loop"
		for (i = 1; i <= n; i++) printf " %18s", name[cf[i]]
		printf "\n%-8s", ""
		for (i = 1; i <= n; i++) printf " %18s", i == 1 ? "prog   tree" : "prog x  tree x"
		printf "\n"
		split("getc read malloc procs", ws, " ")
		for (j = 1; j <= 4; j++) {
			w = ws[j]; printf "%-8s", w
			bp = least(w SUBSEP "bare" SUBSEP 3); bt = least(w SUBSEP "bare" SUBSEP 4)
			for (i = 1; i <= n; i++) {
				p = least(w SUBSEP cf[i] SUBSEP 3); t = least(w SUBSEP cf[i] SUBSEP 4)
				if (i == 1) { printf " %8s %9.3f", w == "procs" ? "-" : sprintf("%.3f", bp), bt; continue }
				ps = (p > 0 && bp > 0 && w != "procs") ? sprintf("%.3f", p / bp) : "-"
				ts = (t > 0 && bt > 0) ? sprintf("%.3f", t / bt) : "-"
				printf " %8s %9s", ps, ts
			}
			printf "\n"
		}
	}' "$tmp/results"

# The host's drift between runs (the least bare malloc run took 1.18 s in
# one bench and 1.46 s in the next) is larger than the target: each run's
# ratio to the bare run made just before it, the median of them, varies
# less than the ratio of the least of each.
echo
echo "The same, as the median over the $RUNS runs of each run's ratio to its own bare run"
awk -v configs="$configs" '
	function median(list,   a, m, i, j, t) {
		m = split(list, a, " ")
		for (i = 2; i <= m; i++)
			for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
		return m == 0 ? -1 : m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
	}
	$1 != "procs" {
		run = $1 SUBSEP $2
		if ($2 == "bare") { bare[$1] = $3; next }
		if ($3 != "-" && ($1 in bare) && bare[$1] > 0)
			r[$1 SUBSEP $2] = r[$1 SUBSEP $2] " " $3 / bare[$1]
	}
	END {
		n = split(configs, cf, " ")
		name["timer"] = "profil timer"; name["perf"] = "profil perf"
		name["record"] = "perf record"; name["gperf"] = "gperftools"
		printf "%-8s", "loop"
		for (i = 2; i <= n; i++) printf " %14s", name[cf[i]]
		printf "\n"
		split("getc read malloc", ws, " ")
		for (j = 1; j <= 3; j++) {
			printf "%-8s", ws[j]
			for (i = 2; i <= n; i++) {
				k = ws[j] SUBSEP cf[i]
				printf " %14s", k in r ? sprintf("%.3f", median(r[k])) : "-"
			}
			printf "\n"
		}
	}' "$tmp/results"

# The short processes: what the whole tree costs, per process over bare,
# and against perf record (issue 15's target: at most 1.00x, perf's own
# process counted).
echo
echo "200 short processes (sh, /bin/true): the whole tree's CPU time, the least of $RUNS runs"
awk -v configs="$pconfigs" '
	$1 == "procs" && $4 != "-" { k = $2; if (!(k in best) || $4 < best[k]) best[k] = $4 }
	END {
		name["bare"] = "bare"; name["timer"] = "profil timer"; name["perf"] = "profil perf"
		name["timer_ns"] = "profil timer --no-stacks"; name["perf_ns"] = "profil perf --no-stacks"
		name["record"] = "perf record"; name["record_g"] = "perf record -g"
		name["record_dwarf"] = "perf record --call-graph dwarf"; name["gperf"] = "gperftools"
		printf "%-30s %8s %12s %10s\n", "", "tree s", "ms/process", "x record"
		n = split(configs, cf, " ")
		for (i = 1; i <= n; i++) {
			c = cf[i]
			if (!(c in best)) continue
			ms = ("bare" in best) ? sprintf("%.2f", (best[c] - best["bare"]) * 1000 / 200) : "-"
			xr = ("record" in best && best["record"] > 0) ? sprintf("%.2f", best[c] / best["record"]) : "-"
			printf "%-30s %8.3f %12s %10s\n", name[c], best[c], ms, xr
		}
	}' "$tmp/results"
