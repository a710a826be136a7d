#!/bin/sh
# run.sh BUILD SECONDS - make fuzz: every target built in BUILD/tests/fuzz
# (with libFuzzer) for SECONDS each, from a copy of its checked-in corpus
# (what it finds new stays in BUILD/fuzz-work/TARGET/corpus), then a
# table of executions and crashes.  A crash's input is left in
# BUILD/fuzz-work/TARGET/ as crash-*, leak-*, timeout-* or oom-*; it
# belongs, once fixed, in tests/fuzz/regress/TARGET/.
B=$(cd "${1:-build/fuzz}" && pwd) || exit 1
seconds=${2:-60}
root=$(cd "$(dirname "$0")/../.." && pwd)
# Scratch files of the targets in memory, where there is such a place.
[ -z "${TMPDIR:-}" ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
table=""
status=0
for t in "$B"/tests/fuzz/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=${t##*/}
	work="$B/fuzz-work/$name"
	mkdir -p "$work/corpus"
	rm -f "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* "$work"/slow-unit-*
	cp "$root/tests/fuzz/corpus/$name"/* "$work/corpus/" 2>/dev/null
	[ -d "$root/tests/fuzz/regress/$name" ] && cp "$root/tests/fuzz/regress/$name"/* "$work/corpus/"
	echo "fuzz: $name for ${seconds}s"
	# -close_fd_mask=3: the targets' own messages (one line per bad file)
	# would drown the fuzzer's; crash reports still come through.
	"$t" -max_total_time="$seconds" -print_final_stats=1 -close_fd_mask=3 \
		-rss_limit_mb=2048 -timeout=20 -artifact_prefix="$work/" "$work/corpus" \
		> "$work/log" 2>&1
	st=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -n 1)
	crashes=$(ls "$work" | grep -c -E '^(crash|leak|timeout|oom|slow-unit)-')
	[ $st -eq 0 ] || { status=1; tail -n 30 "$work/log"; }
	table="$table$(printf '| %-9s | %12s | %7s | %s |' "$name" "${execs:-?}" "$crashes" \
		"$( [ $st -eq 0 ] && echo ok || echo "FAILED, see $work/log")")
"
done
echo
echo "| target    |   executions | crashes | result |"
echo "| --- | ---: | ---: | --- |"
printf '%s' "$table"
exit $status
