#!/bin/sh
# cli_attach_redis.sh BUILD - profil run -p on a real server (issue 18):
# Debian's redis-server on 127.0.0.1, loaded by redis-benchmark (a
# bounded count, loopback only), attached by profil and by perf record
# -p in turn, in interleaved rounds.  The hot functions' shares
# agree within sampling error; the server answers throughout and after,
# and its own statistics show no error.  Prints the figures of the
# closing note: shares, samples, lost, requests per second with and
# without profil attached.  Skipped (one line) without redis or perf.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
for p in redis-server redis-benchmark redis-cli perf; do
	command -v $p > /dev/null || { echo "skip: no $p (scripts/setup.sh installs it)"; exit 0; }
done
if ! perf record -q -e task-clock -o probe.data true > perf.log 2>&1; then
	echo "skip: perf record cannot run here: $(tail -n 1 perf.log)"
	exit 0
fi

# A free port: redis refuses one in use, and the next is tried.
rpid=
for try in 1 2 3 4 5 6 7 8; do
	port=$(awk -v s="$$$try" 'BEGIN { srand(s); print 20000 + int(rand() * 40000) }')
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --protected-mode yes --logfile "$tmp/redis.log" &
	rpid=$!
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
		kill -0 $rpid 2>/dev/null || break
		sleep 0.1
	done
	[ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ] && break
	kill $rpid 2>/dev/null
	wait $rpid 2>/dev/null
	rpid=
done
[ -n "$rpid" ] || { echo "not ok: redis-server would not start: $(tail -n 3 redis.log)"; exit 1; }
trap 'kill $rpid 2>/dev/null; wait $rpid 2>/dev/null; rm -rf "$tmp"' EXIT
bench() {	# COUNT: requests per second of GET (redis-benchmark's own figure)
	redis-benchmark -h 127.0.0.1 -p "$port" -n "$1" -c 20 -t get --csv 2>/dev/null |
		awk -F, '/GET/ { gsub("\"", "", $2); print $2 }'
}
# pinger OUT: a PING every 0.1 s until the file stop exists; one line each.
pinger() {
	while [ ! -e stop ]; do
		redis-cli -p "$port" ping > /dev/null 2>&1 && echo PONG >> "$1" || echo FAIL >> "$1"
		sleep 0.1
	done
}

# The cost: the same count of requests without, then with, profil
# attached (the same load, one after the other on the same server).
n=60000
without=$(bench $n)
"$profil" run -F 1000 -p $rpid -o cost > cost.out 2> cost.err &
ppid=$!
sleep 0.3
with=$(bench $n)
kill -INT $ppid
wait $ppid || no "cost: profil run -p exited $?: $(cat cost.err)"
echo "requests/s (GET, -c 20, $n requests): without profil $without, with profil attached $with"

# The comparison: load running, perf record -p and profil run -p
# attached in turn, never at once, for short rounds whose order
# alternates (the load drifts on a busy machine; the rounds interleave
# so that drift falls on both sides).  Two task-clock events sampling
# the same thread at the same time are not independent: the kernel
# restarts each one's timer when the thread is scheduled in, and the
# event attached first took 7 to 11 points more samples at sched-in
# (finish_task_switch, under epoll_wait) than the second, perf against
# perf as much as perf against profil.
# One kind of request only: SET then GET would change the server's
# profile halfway.
redis-benchmark -h 127.0.0.1 -p "$port" -n 5000000 -c 20 -t get -q > load.out 2>&1 &
lpid=$!
rm -f stop
pinger pings &
gpid=$!
sleep 0.5
rounds=4
perf_round() {
	perf record -q -e task-clock -c 500000 -g -p $rpid -o perf$1.data -- sleep 1 \
		> perf.log 2>&1
	[ -s perf$1.data ] || no "perf record -p failed: $(cat perf.log)"
}
profil_round() {
	"$profil" run -F 2000 -p $rpid --duration 1 -o att$1 > out 2> err ||
		no "profil run -p exited $?: $(cat err)"
}
for r in $(seq $rounds); do
	if [ $((r % 2)) -eq 1 ]; then
		perf_round $r
		profil_round $r
	else
		profil_round $r
		perf_round $r
	fi
done
touch stop
wait $gpid
kill $lpid 2>/dev/null
wait $lpid 2>/dev/null

# The server answered throughout and after, without error.
fails=$(grep -c FAIL pings)
pongs=$(grep -c PONG pings)
[ "$fails" -eq 0 ] && [ "$pongs" -gt 10 ] || no "the server missed $fails of $((fails + pongs)) pings while attached"
[ "$(redis-cli -p "$port" ping)" = PONG ] || no "the server does not answer after"
redis-cli -p "$port" info stats > stats
errors=$(awk -F: '/^total_error_replies:/ { print $2 + 0 }' stats)
rejected=$(awk -F: '/^rejected_connections:/ { print $2 + 0 }' stats)
[ "${errors:-1}" -eq 0 ] && [ "${rejected:-1}" -eq 0 ] ||
	no "the server counts errors: total_error_replies $errors, rejected_connections $rejected"
echo "server: $pongs pings answered while attached, $fails missed; errors $errors, rejected $rejected"
for r in $(seq $rounds); do
	adds_up att$r || no "round $r: the statistics do not add up"
done

# Both sides by function, a kernel sample charged to the user pc where
# the thread entered the kernel (the first user frame of perf's chain).
# glibc's aliases (__GI___libc_write, __write, write) as one name.
canon='{ while (sub(/^(_|GI_|libc_)/, "", f)) ; sub(/\.(constprop|isra|part|cold)\..*$/, "", f) }'
for r in $(seq $rounds); do
	perf script -i perf$r.data -F ip,sym,dso --no-inline 2> /dev/null
	echo
done | awk '
	/^[ \t]*$/ { if (insample && !found) none++; insample = 0; found = 0; next }
	{ insample = 1 }
	found || /\[kernel\.kallsyms\]\)$/ { next }
	{ f = $2; sub(/\+0x[0-9a-f]+$/, "", f); '"$canon"' n[f]++; found = 1 }
	END { for (f in n) print f "," n[f]; if (none) print "[kernel only]," none }' > perf.csv
for r in $(seq $rounds); do
	"$profil" report --format csv att$r
done | awk -F, '$1 != "self_percent" { f = $5; '"$canon"' n[f] += $4 }
	END { for (f in n) print f "," n[f] }' > profil.csv
n_perf=$(awk -F, '{ s += $2 } END { print s + 0 }' perf.csv)
n_profil=$(awk -F, '{ s += $2 } END { print s + 0 }' profil.csv)
lost_perf=0
lost_profil=0
for r in $(seq $rounds); do
	l=$(perf report -i perf$r.data --stdio 2>/dev/null | awk -F: '/Total Lost Samples/ { print $2 + 0; exit }')
	lost_perf=$((lost_perf + ${l:-0}))
	l=$("$profil" report --format json att$r | tr ',{' '\n\n' | awk -F: '$1 == "\"lost\"" { print $2; exit }')
	lost_profil=$((lost_profil + ${l:-0}))
done
echo "samples: perf $n_perf (lost ${lost_perf:-?}), profil $n_profil (lost $lost_profil)"
[ "$n_perf" -gt 200 ] && [ "$n_profil" -gt 200 ] || no "too few samples to compare: perf $n_perf, profil $n_profil"

# The functions of 3% or more on either side.  A share p of n samples
# has a deviation of sqrt(p(1-p)/n); the two sides sample different
# (interleaved) rounds of the same load, independently: four deviations
# of the difference, and three points for the load itself: on two cores
# the server's idle share (epoll_wait) moves with how much CPU the load
# generator gets beside the profiler's own process, which perf record
# and profil run spend differently (a fresh-clone run saw epoll_wait at
# 14.05% against 17.79%, bound 2.9).
worst=0
awk -F, -v a="$n_perf" -v b="$n_profil" '
	NR == FNR { pp[$1] = 100 * $2 / a; next }
	{ pf[$1] = 100 * $2 / b }
	END {
		for (f in pp) all[f] = 1
		for (f in pf) all[f] = 1
		for (f in all) {
			x = pp[f] + 0; y = pf[f] + 0
			if (x < 3 && y < 3) continue
			p = (x + y) / 200
			lim = 3 + 400 * sqrt(p * (1 - p) * (1 / a + 1 / b))
			d = x - y; if (d < 0) d = -d
			printf "%s %.2f %.2f %.2f %.2f\n", f, x, y, d, lim
		}
	}' perf.csv profil.csv | sort -k2 -nr > compare
[ -s compare ] || no "no function has 3% of the samples"
while read -r f x y d lim; do
	echo "$f: perf $x%, profil $y%, difference $d points (bound $lim)"
	awk -v d="$d" -v l="$lim" 'BEGIN { exit !(d <= l) }' || no "$f: perf $x%, profil $y%"
	worst=$(awk -v w="$worst" -v d="$d" 'BEGIN { print (d > w) ? d : w }')
done < compare
echo "largest difference: $worst points"

[ $fail -eq 0 ] && echo "cli_attach_redis: all checks passed"
exit $fail
