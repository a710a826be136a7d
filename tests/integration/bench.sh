#!/bin/sh
# bench.sh BUILD - make bench runs and prints its table (on a tiny
# workload: this checks that the benchmark works, not what it measures).
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(sh "$root/bench/run.sh" "$B" --quick 2>&1)
echo "$out"
fail=0
rows="libprofil_timer:100 libprofil_timer:1000 libprofil_timer:10000 glibc_profil:fixed 2_thr._timer:1000"
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
if [ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ]; then
	rows="$rows bare_perf_ring:1000 bare_perf_ring:10000 bare_perf_ring:20000"
	rows="$rows libprofil_perf:1000 libprofil_perf:10000 libprofil_perf:20000 perf,_no_sys:1000 2_thr._perf:20000"
fi
# Rows as "tool:asked achieved ns x_floor prog tree lost err" (the tool
# is the first 16 columns).
table=$(echo "$out" | awk 'length($0) > 17 && $0 !~ /^(workload|load|tool |system-time)/ {
	tool = substr($0, 1, 16); sub(/ +$/, "", tool); gsub(/ /, "_", tool)
	rest = substr($0, 17); split(rest, f, " "); line = tool ":" f[1]
	for (i = 2; i in f; i++) line = line " " f[i]
	print line }')
for row in $rows; do
	echo "$table" | grep -q "^$row " || { echo "not ok: no row '$row'"; fail=1; }
done
# mcount: libprofil's records every call (tool, threads, recorded, calls).
for t in 1 2; do
	echo "$table" | awk -v t="$t" '$1 == "libprofil_mcount:" t { found = 1; if ($2 != $3) exit 1 }
		END { exit !found }' || { echo "not ok: mcount row for $t thread(s) missing or short of calls"; fail=1; }
done
# A numeric achieved rate in every row that ran, within reason where known.
echo "$table" | awk '$2 != "n/a" && $2 !~ /^[0-9]+$/ { print "not ok: row " $1 " says " $2; bad = 1 }
	$1 == "libprofil_perf:10000" && ($2 < 5000 || $2 > 15000) { print "not ok: perf 10 kHz achieved " $2; bad = 1 }
	$1 == "libprofil_timer:100" && ($2 < 20 || $2 > 150) { print "not ok: timer 100 Hz achieved " $2; bad = 1 }
	END { exit bad }' || fail=1
# The loops of bench/loops.sh: a ratio for each loop under each of
# profil's backends that this machine allows.
loops=$(sh "$root/bench/loops.sh" "$B" --quick 2>&1)
echo "$loops"
cols=3	# loop, bare prog, bare tree
echo "$loops" | grep -q "profil perf" && perf=1 || perf=
for w in getc read malloc procs; do
	echo "$loops" | awk -v w="$w" -v perf="$perf" '$1 == w { found = 1
		# timer: prog x, tree x; perf: the two after them
		n = perf ? 7 : 5
		for (i = 4; i <= n; i++) if ($i != "-" && $i !~ /^[0-9]+\.[0-9]+$/) exit 1
		if ($5 !~ /^[0-9]/ || (perf && $7 !~ /^[0-9]/)) exit 1 }
		END { exit !found }' || { echo "not ok: loops row $w missing or without ratios"; fail=1; }
done
exit $fail
