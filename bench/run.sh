#!/bin/sh
# run.sh BUILD [--quick] - make bench: sampling rate and cost of each way
# of profiling, on one CPU-bound workload, in one run.
#
# Every configuration runs RUNS times, interleaved, and is compared with
# the bare workload measured in the same run.  Columns:
#   achieved   pcs observed (signals, ring records) per CPU-second
#   ns/sample  CPU time the program spent above bare, per observed pc
#   x floor    that cost over the bare perf ring's at the same rate: the
#              kernel's own cost of a sample, the least any perf sampler pays
#   prog %     the program's CPU time over bare
#   tree %     the whole process tree's (perf record's own process included)
#   lost       samples counted as lost (libprofil and the bare ring)
#   share err  two threads, one doing twice the work of the other: the
#              first's share of the samples less its share of the CPU time
# CPU times are the least of the runs (noise only adds), counts the
# medians.  Ratios are the figures that count; absolute times depend on
# the machine and on what else it runs.
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
sanitized=
if readelf -d "$B/lib/libprofil.so" 2>/dev/null | grep -q libasan; then
	flags="$flags -fsanitize=address,undefined"
	sanitized=1
fi
$CC $flags -DWITH_LIBPROFIL -I"$root/include" -o "$out/workload-profil" "$root/bench/workload.c" \
	-L"$B/lib" -Wl,-rpath,"$(cd "$B/lib" && pwd)" -lprofil || exit 1
$CC $flags -o "$out/workload-glibc" "$root/bench/workload.c" || exit 1
$CC $flags -DWITH_RING -o "$out/workload-ring" "$root/bench/workload.c" || exit 1
$CC -O2 -o "$out/treecpu" "$root/bench/treecpu.c" || exit 1
$CC -O2 -o "$out/gperf_count" "$root/bench/gperf_count.c" || exit 1

# What the comparison needs, from Debian, when it can be had: gperftools'
# libprofiler and linux-perf.  (Not in --quick: make check stays offline.)
install() {	# package
	[ -z "$QUICK" ] && [ "$(id -u)" -eq 0 ] || return 1
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -qq "$1" >/dev/null 2>&1 ||
	{ apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "$1" >/dev/null 2>&1; }
}
gperf=$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -n 1)
if [ -z "$gperf" ] && install libgoogle-perftools4; then
	gperf=$(ls /usr/lib/*/libprofiler.so.0 2>/dev/null | head -n 1)
fi
# AddressSanitizer must be the first library loaded: none preloaded before it.
[ -n "$sanitized" ] && gperf=
command -v perf >/dev/null 2>&1 || install linux-perf
perf_ok=
if command -v perf >/dev/null 2>&1 &&
   perf record -q -e task-clock:u -F 100 -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
	perf_ok=1
fi
ring_ok=
"$out/workload-ring" 1000 ring 1000 >/dev/null 2>&1 && ring_ok=1

if [ -n "$QUICK" ]; then RUNS=1; N=20000000; else RUNS=7; N=1000000000; fi

# One run of a configuration: prints "cpu tree samples observed share cpu_share lost".
run() {	# name
	name=$1
	hz=${name##*-}
	case $name in
	bare)		set -- "$out/workload-glibc" $N none ;;
	ring-*)		set -- "$out/workload-ring" $N ring "$hz" ;;
	perf-*)		set -- env PROFIL_BACKEND=perf "$out/workload-profil" $N profil "$hz" ;;
	perfnosys-*)	set -- env PROFIL_BACKEND=perf PROFIL_SYSTEM_TIME=0 "$out/workload-profil" $N profil "$hz" ;;
	timer-*)	set -- env PROFIL_BACKEND=timer "$out/workload-profil" $N profil "$hz" ;;
	pthreads-*)	set -- env PROFIL_BACKEND=perf "$out/workload-profil" $((N / 3)) threads "$hz" ;;
	tthreads-*)	set -- env PROFIL_BACKEND=timer "$out/workload-profil" $((N / 3)) threads "$hz" ;;
	glibc)		set -- "$out/workload-glibc" $N profil ;;
	gperf-*)	rm -f "$tmp/g.prof"
			set -- env LD_PRELOAD="$gperf" CPUPROFILE="$tmp/g.prof" \
				CPUPROFILE_FREQUENCY="$hz" "$out/workload-glibc" $N none ;;
	record-*)	set -- perf record -q -e task-clock:u -F "$hz" -o "$tmp/p.data" -- \
				"$out/workload-glibc" $N none ;;
	esac
	tree=$("$out/treecpu" "$@" 2>"$tmp/line") || { echo "fail"; return; }
	line=$(grep '^cpu=' "$tmp/line")
	field() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
	cpu=$(field cpu); samples=$(field samples); observed=$(field observed)
	share=$(field share); cpu_share=$(field cpu_share); lost=$(field lost)
	case $name in
	gperf-*) samples=$("$out/gperf_count" "$tmp/g.prof" 2>/dev/null || echo 0)
		 observed=$samples; lost=- ;;
	record-*) samples=$(perf report -D -i "$tmp/p.data" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE')
		 observed=$samples; lost=- ;;
	glibc)	 lost=- ;;
	esac
	echo "$cpu $tree $samples $observed $share $cpu_share $lost"
}

configs="bare timer-100 timer-1000 timer-10000 glibc tthreads-1000"
[ -n "$ring_ok" ] && configs="$configs ring-1000 ring-10000 ring-20000 perf-1000 perf-10000 perf-20000 perfnosys-1000 pthreads-20000"
[ -n "$gperf" ] && configs="$configs gperf-1000 gperf-10000"
[ -n "$perf_ok" ] && configs="$configs record-1000 record-10000 record-20000"

echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 $RUNS); do
	for c in $configs; do
		echo "$c $(run "$c")" >> "$tmp/results"
	done
done
echo "load after:  $(cut -d' ' -f1-3 /proc/loadavg)"

awk -v runs=$RUNS -v gperf="$gperf" -v perf_ok="$perf_ok" -v ring_ok="$ring_ok" '
function sorted(name, field, v,    n, i, j, t) {
	n = 0
	for (i = 1; i <= total; i++) if (cfg[i] == name && val[i, field] != "-") v[++n] = val[i, field] + 0
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return n
}
function median(name, field,    n, v) { n = sorted(name, field, v); return n ? v[int((n + 1) / 2)] : 0 }
function least(name, field,    n, v) { n = sorted(name, field, v); return n ? v[1] : 0 }
function present(name,    i) { for (i = 1; i <= total; i++) if (cfg[i] == name) return 1; return 0 }
function cost(name,    o) { o = median(name, 4); return o && least(name, 1) > bare ? (least(name, 1) - bare) / o * 1e9 : 0 }
{ total++; cfg[total] = $1; for (f = 2; f <= 8; f++) val[total, f - 1] = $f }
END {
	bare = least("bare", 1); bare_tree = least("bare", 2)
	n = split("ring-1000 ring-10000 ring-20000 perf-1000 perf-10000 perf-20000 perfnosys-1000 timer-100 timer-1000 timer-10000 glibc gperf-1000 gperf-10000 record-1000 record-10000 record-20000 pthreads-20000 tthreads-1000", order, " ")
	tools["ring"] = "bare perf ring"; tools["perf"] = "libprofil perf"; tools["perfnosys"] = "perf, no sys"; tools["timer"] = "libprofil timer"
	tools["glibc"] = "glibc profil"; tools["gperf"] = "gperftools"; tools["record"] = "perf record"
	tools["pthreads"] = "2 thr. perf"; tools["tthreads"] = "2 thr. timer"
	printf "workload: %.2f s of CPU bare; %d runs of each, interleaved: least CPU, median counts\n\n", bare, runs
	printf "%-16s %6s %9s %9s %7s %7s %7s %7s %9s\n", "tool", "asked", "achieved", "ns/sample", "x floor", "prog %", "tree %", "lost", "share err"
	for (k = 1; k <= n; k++) {
		name = order[k]; tool = name; sub(/-.*/, "", tool); hz = name; sub(/.*-/, "", hz)
		asked = name == "glibc" ? "fixed" : hz
		if (!present(name)) {
			why = tool == "gperf" ? "libprofiler not installed or not usable here" : tool == "record" ? "perf not usable" : "perf events not allowed"
			printf "%-16s %6s  n/a (%s)\n", tools[tool], asked, why; continue
		}
		cpu = least(name, 1); tree = least(name, 2); o = median(name, 4)
		ns = cost(name)
		fl = present("ring-" hz) ? cost("ring-" hz) : 0
		xf = fl > 0 && tool != "ring" && tool !~ /threads/ ? sprintf("%.2f", ns / fl) : "-"
		lost = sorted(name, 7, tmpv) ? sprintf("%d", median(name, 7)) : "-"
		err = tool ~ /threads/ ? sprintf("%+.4f", median(name, 5) - median(name, 6)) : "-"
		printf "%-16s %6s %9.0f %9.0f %7s %7.2f %7.2f %7s %9s\n", tools[tool], asked, o / cpu, ns, xf,
		       (cpu / bare - 1) * 100, (tree / bare_tree - 1) * 100, lost, err
	}
	if (present("perf-1000") && present("perfnosys-1000"))
		printf "\nsystem-time timer (perf backend, 1000 Hz): %+.2f%% CPU against PROFIL_SYSTEM_TIME=0\n",
		       (least("perf-1000", 1) / least("perfnosys-1000", 1) - 1) * 100
}' "$tmp/results"

# The cost of mcount, libprofil's against glibc's (bench/mcount.sh).
sh "$root/bench/mcount.sh" "$B" $QUICK
