#!/bin/sh
# cli_jit.sh BUILD - samples in code outside every object (JIT code,
# anonymous executable memory) are a row of their own in every view,
# and every share is of all the samples; a perf map the program writes
# (/tmp/perf-PID.map) names them.  tests/cli/jit.c runs a loop it
# copied into an anonymous mapping and times the share itself.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
case $(uname -m) in x86_64) ;; *) echo "skip: tests/cli/jit.c is x86-64 code"; exit 0 ;; esac

cc -O2 -g -o jit "$root/tests/cli/jit.c" || exit 1
# csv_share CSV NAME: the self percent of the rows of that function.
csv_share() {
	awk -F, -v fn="$2" 'NR > 1 && $5 == fn { s += $1 } END { printf "%.2f\n", s + 0 }' "$1"
}
json_field() {	# json_field FILE KEY: the first value of "KEY"
	tr ',{' '\n\n' < "$1" | awk -F: -v k="\"$2\"" '$1 == k { print $2; exit }'
}

# bound JSON: 4.5 sampling errors of a share near one half, in points,
# over the times the pc was read (the timer backend reads it at the
# kernel's tick, which may be fewer than the samples), and one more.
bound() {
	awk -v n="$(json_field "$1" observed)" 'BEGIN { printf "%.1f\n", 450 * sqrt(0.25 / (n > 0 ? n : 1)) + 1 }'
}

for backend in perf timer; do
	# Without a map: one row, "[JIT or anonymous code]", its share that
	# of the program's own clock, and the shares of every row add up
	# to 100.
	prun --backend "$backend" -o a.prof ./jit 2000 > a.out 2>/dev/null || no "$backend: run"
	want=$(awk '{ print $2 }' a.out)
	"$profil" report --format csv a.prof > a.csv || no "$backend: report"
	"$profil" report --format json a.prof > a.json
	got=$(csv_share a.csv "[JIT or anonymous code]")
	within "$got" "${want:-0}" "$(bound a.json)" \
		|| no "$backend: JIT row ${got}%, the program spent ${want}% (bound $(bound a.json))"
	sum=$(awk -F, 'NR > 1 { s += $1 } END { printf "%.0f\n", s }' a.csv)
	[ "$sum" -eq 100 ] || no "$backend: the shares add up to ${sum}%, not 100"
	rows=$(awk -F, 'NR > 1 { s += $4 } END { print s + 0 }' a.csv)
	[ "$rows" -eq $(( $(json_field a.json samples) + $(json_field a.json outside) )) ] \
		|| no "$backend: the rows hold $rows samples, not counted + outside"
	adds_up a.prof || no "$backend: the statistics do not add up"
	"$profil" report a.prof | grep -q '^ *[0-9.]*% .*\[JIT or anonymous code\] ' \
		|| no "$backend: no JIT row in the text report"
	"$profil" report --objects --format csv a.prof | grep -q ',\[JIT or anonymous code\],' \
		|| no "$backend: no JIT row by object"
	# JIT samples have no thread: a view of threads leaves them out and
	# says how many.
	tid=$("$profil" report --threads --format csv a.prof | awk -F, 'NR == 2 { print $4 }')
	for view in "--tid $tid" "--comm jit"; do
		"$profil" report $view a.prof > t.txt 2>&1 || no "$backend: report $view: $(cat t.txt)"
		grep -q "; the $(json_field a.json outside) samples outside every object (JIT code) left out: they have no thread$" t.txt \
			|| no "$backend: $view does not say the JIT samples are left out: $(sed -n 2,3p t.txt)"
		grep -q 'JIT or anonymous code' t.txt && no "$backend: $view has a JIT row"
	done
	"$profil" report --annotate '[JIT or anonymous code]' a.prof > ann.txt 2>&1 \
		&& no "$backend: --annotate of JIT code succeeded"

	# With the map: the same samples, under its name, in perf-PID.map.
	prun --backend "$backend" -o b.prof ./jit 2000 map > b.out 2>/dev/null || no "$backend: run map"
	want=$(awk '{ print $2 }' b.out)
	"$profil" report --format csv b.prof > b.csv || no "$backend: report map"
	"$profil" report --format json b.prof > b.json
	got=$(csv_share b.csv jit_loop)
	within "$got" "${want:-0}" "$(bound b.json)" \
		|| no "$backend: jit_loop ${got}%, the program spent ${want}% (bound $(bound b.json))"
	grep -q "^[^,]*,[^,]*,[^,]*,[^,]*,jit_loop,/tmp/perf-[0-9]*.map," b.csv \
		|| no "$backend: jit_loop is not in the perf map's object"
	# The map names JIT frames in the stacks too: c_spin, called from
	# the copied thunk jit_call, has jit_call as its caller in every
	# stack (a walk stops there: JIT code has no unwind entry), without
	# the map an unnamed JIT frame.  Samples in JIT code itself have no
	# stack: only samples counted in an object's histogram do.
	"$profil" export --format folded -o b.folded b.prof || no "$backend: export folded"
	n_spin=$(awk -F, '$5 == "c_spin" { s += $4 } END { print s + 0 }' b.csv)
	n_fold=$(awk '$1 ~ /(^|;)jit_call;c_spin$/ { s += $NF } END { print s + 0 }' b.folded)
	[ "$n_fold" -eq "$n_spin" ] && [ "$n_spin" -gt 0 ] \
		|| no "$backend: with the map, $n_fold stacks of c_spin under jit_call, c_spin has $n_spin samples"
	grep -q 'JIT or anonymous code' b.folded && no "$backend: a JIT frame left unnamed in the stacks"
	"$profil" export --format folded -o - b.prof | cmp -s - b.folded \
		|| no "$backend: export -o - is not the same as to a file"
	[ -e ./- ] && no "$backend: export -o - made a file named -"
	"$profil" report --callers c_spin b.prof | grep -q 'jit_call' \
		|| no "$backend: --callers c_spin does not name jit_call"
	"$profil" export --format folded -o a.folded a.prof || no "$backend: export folded, no map"
	n_spin=$(awk -F, '$5 == "c_spin" { s += $4 } END { print s + 0 }' a.csv)
	n_fold=$(awk '{ n = $NF; sub(/ [0-9]+$/, "") } /(^|;)\[JIT or anonymous code\];c_spin$/ { s += n }
		END { print s + 0 }' a.folded)
	[ "$n_fold" -eq "$n_spin" ] && [ "$n_spin" -gt 0 ] \
		|| no "$backend: without the map, $n_fold stacks of c_spin under the JIT frame, c_spin has $n_spin samples"
	"$profil" report --html b.html b.prof || no "$backend: --html"
	grep -q 'jit_loop' b.html || no "$backend: jit_loop not on the page"
	"$profil" export --format pprof -o b.pb.gz b.prof || no "$backend: export pprof"
	if command -v go >/dev/null; then
		HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -top -symbolize=none b.pb.gz > top.txt 2>&1
		p=$(awk '$NF == "jit_loop" { sub("%", "", $2); print $2 }' top.txt)
		within "${p:-0}" "$got" 0.5 || no "$backend: pprof jit_loop ${p:-none}%, report ${got}%"
	fi
	# Merged, the outside table is kept: one file (or one file twice)
	# keeps its process, so the map still names the same samples; two
	# processes' JIT pcs stay in the JIT row, all of them.
	rm -f m.prof m2.prof ab.prof
	"$profil" merge -o m.prof b.prof || no "$backend: merge"
	"$profil" report --format csv m.prof > m.csv || no "$backend: report merged"
	[ "$(csv_share m.csv jit_loop)" = "$got" ] \
		|| no "$backend: merged, jit_loop $(csv_share m.csv jit_loop)%, not ${got}%"
	"$profil" merge -o m2.prof b.prof b.prof || no "$backend: merge twice"
	"$profil" report --format csv m2.prof > m2.csv
	[ "$(csv_share m2.csv jit_loop)" = "$got" ] \
		|| no "$backend: merged twice, jit_loop $(csv_share m2.csv jit_loop)%, not ${got}%"
	"$profil" merge -o ab.prof a.prof b.prof 2>/dev/null || no "$backend: merge a b"
	"$profil" report --format csv ab.prof > ab.csv
	jit=$(awk -F, 'NR > 1 && $6 ~ /^\[JIT|^\/tmp\/perf-/ { s += $4 } END { print s + 0 }' ab.csv)
	out=$(( $(json_field a.json outside) + $(json_field b.json outside) ))
	[ "$jit" -eq "$out" ] || no "$backend: merged a b: $jit samples in JIT rows, not $out"
	"$profil" report --format csv ab.prof | grep -q ',jit_loop,' \
		&& no "$backend: two processes merged, their pcs named by one's map"
	adds_up ab.prof || no "$backend: merged a b: the statistics do not add up"
	# A map older than the process is another process's: not used.
	map=$(awk -F, '$5 == "jit_loop" { print $6; exit }' b.csv)
	if [ -n "$map" ]; then
		touch -d '2000-01-01' "$map"
		"$profil" report --format csv b.prof | grep -q ',jit_loop,' \
			&& no "$backend: a stale perf map was used"
		rm -f "$map"
	fi
done
exit $fail
