#!/bin/sh
# mcount.sh BUILD [--quick] - make bench's mcount rows: the CPU cost of
# one call's mcount, libprofil's against glibc's, with 1 and 2 threads,
# and the calls each one recorded (glibc drops calls that meet in its
# mcount).  Cost = (CPU with -pg - CPU without) / calls, the least of
# RUNS interleaved runs.  Both -pg programs also sample (glibc at 100 Hz,
# libprofil at 1000 Hz), a cost below a thousandth of these figures.
set -u
B=${1:-build}
QUICK=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
lib=$(cd "$B/lib" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
CC=${CC:-cc}
flags="-std=gnu11 -O2 -pthread"
if readelf -d "$lib/libprofil.so" 2>/dev/null | grep -q libasan; then
	flags="$flags -fsanitize=address,undefined"
fi
$CC $flags -o "$tmp/bare" "$root/bench/mcount.c" || exit 1
$CC $flags -pg -o "$tmp/glibc" "$root/bench/mcount.c" || exit 1
$CC $flags -pg -o "$tmp/profil" "$root/bench/mcount.c" \
	-L"$lib" -Wl,-rpath,"$lib" -lprofil || exit 1
if [ -n "$QUICK" ]; then RUNS=1; N=2000000; else RUNS=5; N=100000000; fi

cd "$tmp" || exit 1
: > results
for r in $(seq 1 "$RUNS"); do
	for t in 1 2; do
		for v in bare glibc profil; do
			rm -f gmon.out gmon.*.out
			cpu=$("./$v" "$t" "$N") || exit 1
			rec=0
			case $v in
			glibc)	rec=$(gprof -b -p glibc gmon.out | awk '$NF == "leaf" { print $4 }') ;;
			profil)	rec=$(gprof -b -p profil gmon.profil.*.out | awk '$NF == "leaf" { print $4 }') ;;
			esac
			echo "$v $t $cpu ${rec:-0}" >> results
		done
	done
done
awk -v n="$N" '
{ k = $1 " " $2; if (!(k in cpu) || $3 < cpu[k]) cpu[k] = $3; rec[k] = $4 }
END {
	printf "\nworkload (mcount): leaf() called %d times by each thread; least CPU of the runs\n", n
	printf "%-16s %7s %12s %12s %9s\n", "tool", "threads", "recorded", "calls", "ns/call"
	for (t = 1; t <= 2; t++) {
		b = cpu["bare " t]
		split("glibc profil", v, " ")
		for (i = 1; i <= 2; i++) {
			k = v[i] " " t
			printf "%-16s %7d %12d %12d %9.2f\n", (v[i] == "glibc" ? "glibc mcount" : "libprofil mcount"),
			       t, rec[k], n * t, (cpu[k] - b) / (n * t) * 1e9
		}
	}
}' results
