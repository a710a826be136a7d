#!/bin/sh
# cli_threads.sh BUILD - counts per thread (profil(5)'s thread table) and
# report --threads, --tid, --comm, under each backend.  Threads "small",
# "medium" and "large" spin 1:2:3 in functions of their own: each
# thread's share of the samples matches the share of CPU time it says it
# used, within the sampling error; the threads' samples add up to the
# process's exactly; a thread's own flat profile holds its function and
# no other thread's.  A pool of threads larger than the table (run
# --threads 4) still adds up, the rest under "[other threads]"; merge
# keeps the threads.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"

cd "$tmp" || exit 1
cc -O2 -g -pthread -o threads "$root/tests/cli/threads.c" || exit 1

# col CSV NAME FIELD: a field of the --threads row of that name.
col() { awk -F, -v n="$2" -v f="$3" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
	NR > 1 && $5 == n { print $c[f]; exit }' "$1"; }
# sum CSV: the samples of every row.
sum() { awk -F, 'NR > 1 { s += $3 } END { print s + 0 }' "$1"; }
# json FILE KEY: a number of report --format json's header (before the rows;
# the first: the stacks object has samples too).
json() { sed 's/"rows":.*//' "$1" | grep -o "\"$2\":[0-9]*" | head -n 1 | cut -d: -f2; }

backends=timer
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
{ [ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ]; } && backends="perf timer"
for be in $backends; do
	prun --backend "$be" -F 2000 -o "$be.prof" ./threads "$be.cpu" 100 2>/dev/null \
		|| no "$be: threads: status $?"
	"$profil" report --threads --format csv "$be.prof" > "$be.csv" || no "$be: report --threads"
	"$profil" report --threads "$be.prof" || no "$be: report --threads, text"
	"$profil" report --format json "$be.prof" > "$be.json" || no "$be: report --format json"
	counted=$(json "$be.json" samples); observed=$(json "$be.json" observed)

	# Every counted sample is in exactly one thread.
	[ "$(sum "$be.csv")" = "$counted" ] \
		|| no "$be: the threads hold $(sum "$be.csv") samples, the process counted $counted"

	# Shares of the program's four threads against their CPU time; the
	# bound is four standard errors of a share of the pc reads made.
	cpu=$(awk '{ s += $3 } END { print s }' "$be.cpu")
	all=0
	for t in small medium large threads; do
		all=$((all + $(col "$be.csv" $t samples)))
	done
	for t in small medium large threads; do
		name=$t; [ $t = threads ] && name=main
		n=$(col "$be.csv" $t samples)
		tid=$(col "$be.csv" $t tid)
		[ "$tid" = "$(awk -v n=$name '$1 == n { print $2 }' "$be.cpu")" ] \
			|| no "$be: $t: tid $tid, the program says $(awk -v n=$name '$1 == n { print $2 }' "$be.cpu")"
		awk -v n="$n" -v all="$all" -v c="$(awk -v n=$name '$1 == n { print $3 }' "$be.cpu")" \
		    -v cpu="$cpu" -v obs="$observed" -v t="$be: $t" 'BEGIN {
			s = n / all; e = c / cpu; b = 4 * sqrt(e * (1 - e) / obs) + 0.01
			printf "%s: share of samples %.4f, of CPU time %.4f, bound %.4f\n", t, s, e, b
			exit !(s - e <= b && e - s <= b) }' || no "$be: $t: share of samples off"
	done

	# Each thread's own flat profile: its function, no other's.
	for t in small medium large; do
		"$profil" report --tid "$(col "$be.csv" $t tid)" --format csv "$be.prof" > "$be.$t.csv" \
			|| no "$be: report --tid for $t"
		own=$(share "$be.$t.csv" spin_$t threads)
		awk -v v="$own" 'BEGIN { exit !(v >= 90) }' || no "$be: $t: spin_$t has $own% of its samples"
		for o in small medium large main; do
			[ $o = $t ] && continue
			! grep -q ",spin_$o," "$be.$t.csv" || no "$be: $t: samples in spin_$o"
		done
	done
	# A name pattern keeps the workers; the flat profile is theirs alone.
	"$profil" report --comm '[sml]*' --format json "$be.prof" > "$be.comm.json" || no "$be: --comm"
	kept=$(json "$be.comm.json" kept_samples)
	w=$(( $(col "$be.csv" small samples) + $(col "$be.csv" medium samples) + $(col "$be.csv" large samples) ))
	[ "$kept" = "$w" ] || no "$be: --comm '[sml]*' kept $kept samples, the three workers have $w"
	! grep -q '"function":"spin_main"' "$be.comm.json" || no "$be: --comm kept spin_main"
	"$profil" report --comm 'large' --lines "$be.prof" | grep -q "threads.c:" \
		|| no "$be: --comm with --lines"
	"$profil" report --comm 'large' --annotate spin_large "$be.prof" > "$be.ann" \
		|| no "$be: --comm with --annotate"
	grep -q "of the threads kept" "$be.ann" || no "$be: --annotate does not say it is of the threads kept"
done

# export of one thread: gmon.out for gprof holds its samples alone.
be=${backends##* }
"$profil" export --format gmon --tid "$(col "$be.csv" large tid)" -o large.gmon "$be.prof" \
	|| no "export --tid"
"$profil" report --exe ./threads --format csv large.gmon > large.gmon.csv || no "report of large.gmon"
mine=$(awk -F, -v c=4 'NR > 1 && $5 == "spin_large" { print $4 }' "$be.large.csv")
[ "$(awk -F, 'NR > 1 && $5 == "spin_large" { print $4 }' large.gmon.csv)" = "$mine" ] \
	|| no "export --tid: spin_large has $(awk -F, 'NR > 1 && $5 == "spin_large" { print $4 }' large.gmon.csv) samples, the thread $mine"
! grep -q "spin_small\|spin_medium\|spin_main" large.gmon.csv || no "export --tid: other threads' functions"

# A pool of 40 threads, a table of 4: the rest are "other threads", and
# it all still adds up.
prun --threads 4 -o pool.prof ./threads pool.cpu 10 40 2>/dev/null || no "pool: status $?"
"$profil" report --threads --format csv pool.prof > pool.csv || no "pool: report --threads"
"$profil" report --format json pool.prof > pool.json || no "pool: report --format json"
cat pool.csv
[ "$(sum pool.csv)" = "$(json pool.json samples)" ] \
	|| no "pool: the threads hold $(sum pool.csv) samples, the process counted $(json pool.json samples)"
[ "$(awk -F, 'NR > 1 && $4 != ""' pool.csv | wc -l)" -le 4 ] || no "pool: more than 4 threads"
[ "$(col pool.csv '[other threads]' samples)" -gt 0 ] 2>/dev/null || no "pool: no other threads"

# merge: a file merged with itself has each thread twice over.
"$profil" merge -o twice.prof "$be.prof" "$be.prof" || no "merge"
"$profil" report --threads --format csv twice.prof > twice.csv || no "report of the merged file"
for t in small medium large threads; do
	[ "$(col twice.csv $t samples)" = $((2 * $(col "$be.csv" $t samples))) ] \
		|| no "merged: $t has $(col twice.csv $t samples), expected twice $(col "$be.csv" $t samples)"
done
"$profil" report --tid "$(col "$be.csv" large tid)" --format csv twice.prof > twice.large.csv
[ "$(share twice.large.csv spin_large threads)" = "$(share "$be.large.csv" spin_large threads)" ] \
	|| no "merged: the per-thread profile changed"

# The files of several processes: each row says its pid and program, and
# the threads of the two programs are told apart.
rm -rf .profil-last profil.data
prun sh -c './threads a.cpu 5 && ./threads b.cpu 5' 2>/dev/null || no "tree: status $?"
"$profil" report --threads > tree.txt || no "tree: report --threads"
cat tree.txt
grep -q "  pid  program$" tree.txt || no "tree: no pid and program columns"
for f in a.cpu b.cpu; do
	pid=$(awk '$1 == "main" { print $2 }' $f)
	grep -Eq " large +$pid +threads$" tree.txt || no "tree: no row of large in process $pid"
done

# A file without a thread table still reads, as one row.
prun --threads 0 -o none.prof ./threads none.cpu 5 2>/dev/null || no "--threads 0: status $?"
"$profil" report --threads none.prof | grep -q "\[no per-thread counts\]" || no "--threads 0: no row"

[ $fail -eq 0 ] && echo "cli_threads: all checks passed"
exit $fail
