#!/bin/sh
# run.sh BUILD [--quick] - make bench: sampling rate and cost of each way
# of profiling, on one CPU-bound workload, in one run.
#
# Every configuration runs RUNS times, interleaved, and the medians are
# compared with the bare workload measured in the same run: overhead of
# the program (its own CPU time) and of the whole process tree (the
# profiler's own processes included, for perf record).  Ratios against
# the bare run are the figures that count; the absolute times depend on
# the machine.  "us/obs" is the CPU time added per observation of a pc
# (a signal or a record), the true cost of a sample; below the run-to-run
# noise (a few tenths of a percent here) it reads as about 0.
set -u
B=${1:-build}
QUICK=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$B/bench"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

CC=${CC:-cc}
flags="-std=gnu11 -O2 -pthread"
# A library built with the sanitizers needs its runtime in the program too.
if readelf -d "$B/lib/libprofil.so" 2>/dev/null | grep -q libasan; then
	flags="$flags -fsanitize=address,undefined"
fi
$CC $flags -DWITH_LIBPROFIL -I"$root/include" -o "$out/workload-profil" "$root/bench/workload.c" \
	-L"$B/lib" -Wl,-rpath,"$(cd "$B/lib" && pwd)" -lprofil || exit 1
$CC $flags -o "$out/workload-glibc" "$root/bench/workload.c" || exit 1
$CC -O2 -o "$out/treecpu" "$root/bench/treecpu.c" || exit 1
$CC -O2 -o "$out/gperf_count" "$root/bench/gperf_count.c" || exit 1

# gperftools' libprofiler, from Debian, when it can be had.
gperf=$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -n 1)
if [ -z "$gperf" ] && [ -z "$QUICK" ] && [ "$(id -u)" -eq 0 ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgoogle-perftools4 >/dev/null 2>&1 ||
	{ apt-get update -qq >/dev/null 2>&1 &&
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libgoogle-perftools4 >/dev/null 2>&1; }
	gperf=$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -n 1)
fi
perf_ok=
if command -v perf >/dev/null 2>&1 &&
   perf record -q -e cpu-clock -F 100 -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
	perf_ok=1
fi

if [ -n "$QUICK" ]; then RUNS=1; N=20000000; else RUNS=7; N=1000000000; fi

# One run of a configuration: prints "cpu tree samples observed share cpu_share".
run() {	# name
	name=$1
	case $name in
	bare)		set -- "$out/workload-glibc" $N none ;;
	timer-*)	set -- env PROFIL_BACKEND=timer "$out/workload-profil" $N profil "${1#timer-}" ;;
	threads)	set -- env PROFIL_BACKEND=timer "$out/workload-profil" $((N / 3)) threads 1000 ;;
	glibc)		set -- "$out/workload-glibc" $N profil ;;
	gperf-*)	rm -f "$tmp/g.prof"
			set -- env LD_PRELOAD="$gperf" CPUPROFILE="$tmp/g.prof" \
				CPUPROFILE_FREQUENCY="${1#gperf-}" "$out/workload-glibc" $N none ;;
	perf-*)		set -- perf record -q -e cpu-clock -F "${1#perf-}" -o "$tmp/p.data" -- \
				"$out/workload-glibc" $N none ;;
	esac
	tree=$("$out/treecpu" "$@" 2>"$tmp/line") || { echo "fail"; return; }
	line=$(grep '^cpu=' "$tmp/line")
	cpu=$(echo "$line" | sed 's/.*cpu=\([^ ]*\).*/\1/')
	samples=$(echo "$line" | sed 's/.*samples=\([^ ]*\).*/\1/')
	observed=$(echo "$line" | sed 's/.*observed=\([^ ]*\).*/\1/')
	share=$(echo "$line" | sed 's/.*share=\([^ ]*\) .*/\1/')
	cpu_share=$(echo "$line" | sed 's/.*cpu_share=\([^ ]*\).*/\1/')
	case $name in
	gperf-*) samples=$("$out/gperf_count" "$tmp/g.prof" 2>/dev/null || echo 0); observed=$samples ;;
	perf-*)	 samples=$(perf report -D -i "$tmp/p.data" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE')
		 observed=$samples ;;
	esac
	echo "$cpu $tree $samples $observed $share $cpu_share"
}

configs="bare timer-100 timer-1000 timer-10000 glibc threads"
[ -n "$gperf" ] && configs="$configs gperf-1000 gperf-10000"
[ -n "$perf_ok" ] && configs="$configs perf-1000 perf-10000"

for r in $(seq 1 $RUNS); do
	for c in $configs; do
		echo "$c $(run "$c")" >> "$tmp/results"
	done
done

# Medians per configuration, then the table.
awk -v runs=$RUNS -v gperf="$gperf" -v perf_ok="$perf_ok" '
function sorted(name, field, v,    n, i, j, t) {
	n = 0
	for (i = 1; i <= total; i++) if (cfg[i] == name) v[++n] = val[i, field]
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return n
}
function median(name, field,    n, v) { n = sorted(name, field, v); return n ? v[int((n + 1) / 2)] : 0 }
# CPU time: noise only ever adds to it, so the least of the runs is the
# best estimate of what the configuration costs.
function least(name, field,    n, v) { n = sorted(name, field, v); return n ? v[1] : 0 }
{ total++; cfg[total] = $1; for (f = 2; f <= 7; f++) val[total, f - 1] = $f }
END {
	bare = least("bare", 1); bare_tree = least("bare", 2)
	split("timer-100 timer-1000 timer-10000 glibc gperf-1000 gperf-10000 perf-1000 perf-10000", order, " ")
	split("100 1000 10000 100 1000 10000 1000 10000", asked, " ")
	tools["timer"] = "libprofil timer"; tools["glibc"] = "glibc profil"
	tools["gperf"] = "gperftools"; tools["perf"] = "perf record"
	printf "workload: %.2f s of CPU bare; %d runs of each, interleaved: least CPU, median samples\n\n", bare, runs
	printf "%-16s %7s %10s %10s %8s %10s %10s\n", "tool", "asked", "observed/s", "samples/s", "us/obs", "CPU x bare", "tree x bare"
	for (k = 1; k <= 8; k++) {
		name = order[k]; tool = name; sub(/-.*/, "", tool)
		if (name ~ /^gperf/ && gperf == "") { printf "%-16s %7s %10s\n", tools[tool], asked[k], "n/a (libprofiler not installed)"; continue }
		if (name ~ /^perf/ && perf_ok == "") { printf "%-16s %7s %10s\n", tools[tool], asked[k], "n/a (perf not usable)"; continue }
		cpu = least(name, 1); tree = least(name, 2); s = median(name, 3); o = median(name, 4)
		us = o && cpu > bare ? (cpu - bare) / o * 1e6 : 0
		printf "%-16s %7s %10.0f %10.0f %8.1f %10.4f %10.4f\n", tools[tool], (name == "glibc" ? "fixed" : asked[k]),
		       o / cpu, s / cpu, us, cpu / bare, tree / bare_tree
	}
	printf "\ntwo threads, one doing twice the work (libprofil timer, 1000 Hz): sample share %.3f, CPU share %.3f, error %.3f\n",
	       median("threads", 5), median("threads", 6), median("threads", 5) - median("threads", 6)
}' "$tmp/results"
