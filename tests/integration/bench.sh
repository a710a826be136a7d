#!/bin/sh
# bench.sh BUILD - make bench runs and prints its table (on a tiny
# workload: this checks that the benchmark works, not what it measures).
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(sh "$root/bench/run.sh" "$B" --quick 2>&1)
echo "$out"
fail=0
for row in "libprofil timer      100" "libprofil timer     1000" "libprofil timer    10000" \
	   "glibc profil       fixed" "two threads"; do
	echo "$out" | grep -q "^$row" || { echo "not ok: no row '$row'"; fail=1; }
done
# The timer backend at 10 000 Hz takes about 10 000 samples a CPU-second.
echo "$out" | awk '/^libprofil timer    10000/ { if ($5 < 5000 || $5 > 15000) exit 1 }' ||
	{ echo "not ok: 10 kHz row says $(echo "$out" | grep 'timer    10000')"; fail=1; }
exit $fail
