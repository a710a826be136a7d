#!/bin/sh
# cli_stacks.sh BUILD - the views of call stacks, from a program of known
# call structure (tests/cli/calls.c: work_c called from from_a for 3
# units of work and from step_b, inlined in from_b, for 1) profiled for
# real under each backend: --callers and --callees with shares within the
# sampling error, main's total, --tree, folded stacks that parse and add
# up, pprof's -traces and -peek, merge (stacks summed), --tid.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

cc -O2 -g -o calls "$root/tests/cli/calls.c" || exit 1

# json_num FILE KEY: the first number of "KEY": in FILE.
json_num() {
	tr ',{' '\n\n' < "$1" | awk -F: -v k="\"$2\"" '$1 == k { print $2 + 0; exit }'
}

# edge JSON FUNCTION: the share_percent of FUNCTION among the callers or
# callees of report --callers/--callees --format json.
edge() {
	tr '{' '\n' < "$1" | awk -v f="\"function\":\"$2\"" '
		index($0, f) == 1 && /share_percent/ {
			sub(/.*"share_percent":/, ""); sub(/[^0-9.].*/, ""); print; exit }'
}

cc -O2 -g -pthread -o stacksprog "$root/tests/cli/stacks.c" -lz || exit 1
cc -O2 -g -o inlprog "$root/tests/cli/inlprog.c" || exit 1

backends=${PROFIL_BACKENDS:-}
[ -n "$backends" ] || backends="timer perf"
for be in $backends; do
	[ "$be" = auto ] && be=timer
	if [ "$be" = perf ] && ! prun --backend perf -o probe.prof true 2>/dev/null; then
		echo "perf events refused here: the perf backend is not tested"
		continue
	fi
	rm -rf "$be.prof"
	# The timer backend's signals come at the kernel's tick, each one
	# standing for ~4 periods at 1 kHz: four times the work gives it as
	# many walks, which are what the shares' error depends on.
	units=250
	[ "$be" = timer ] && units=1000
	prun --backend "$be" -o "$be.prof" ./calls $units 2>/dev/null || { no "$be: run"; continue; }
	"$profil" report --format json "$be.prof" > "$be.json" || no "$be: report json"
	n=$(json_num "$be.json" samples)
	# "stacks":{"samples":N,...,"complete":C,...}: N, and C of the walks
	# (one walk can stand for several samples under the timer backend).
	grep -o '"stacks":{[^}]*}' "$be.json" | sed 's/"stacks"://' | tr -d '{}' | tr ',' '\n' \
		> stacks.txt
	with=$(awk -F: '$1 == "\"samples\"" { print $2 }' stacks.txt)
	complete=$(awk -F: '$1 == "\"complete\"" { print $2 }' stacks.txt)
	walks=$(awk -F: '$1 != "\"samples\"" && $1 != "\"not_kept\"" { s += $2 } END { print s + 0 }' \
		stacks.txt)
	if [ -z "$with" ] || [ "$n" -lt 200 ]; then
		no "$be: $n samples, stacks '$with': too few to test"
		continue
	fi
	# The samples taken in our own handler (the perf backend's drain):
	# the kernel's 8 KiB copy of the stack is spent on the handler's
	# frames and the signal frame, and ends in work_c.  A few in the
	# plain build; under the sanitizers, whose frames are larger and
	# whose drain is slower, up to 5% of the samples.  The program's
	# own stacks are what is tested.
	"$profil" export --format folded -o "$be.folded" "$be.prof" || no "$be: export folded"
	own=$(awk '/;\[signal handler called\];on_sample;/ { s += $NF } END { print s + 0 }' \
		"$be.folded")
	own_pct=$(awk -v o="$own" -v n="$n" 'BEGIN { printf "%.2f", 100 * o / n }')

	# Complete stacks: the issue's bar is 99.5%; 97% here, under load
	# and the sanitizers.
	awk -v c="$complete" -v w="$walks" -v o="$own" 'BEGIN { exit !(w > o && c >= 0.97 * (w - o)) }' \
		|| no "$be: $complete of $walks walks complete ($own in our handler)"

	# Callers of work_c: 75% from_a, 25% step_b (an inlined frame is a
	# frame).  The bound: 6 standard errors of a share of the walks (a
	# walk weighted by a timer's overrun is one observation, not several:
	# with n samples in its place a signal late under load moved the
	# share 11 points, 4 such errors), and 3 points for the timer's bias
	# at loop edges.
	"$profil" report --callers work_c --format json "$be.prof" > callers.json \
		|| no "$be: --callers"
	a=$(edge callers.json from_a)
	b=$(edge callers.json step_b)
	bound=$(awk -v n="$n" -v w="$walks" \
		'BEGIN { if (w > 0 && w < n) n = w; printf "%.2f", 600 * sqrt(0.75 * 0.25 / n) + 3 }')
	within "${a:-0}" 75 "$bound" || no "$be: from_a's share of work_c ${a:-none}, not 75 +- $bound"
	within "${b:-0}" 25 "$bound" || no "$be: step_b's share of work_c ${b:-none}, not 25 +- $bound"
	within "$(awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN { print a + b }')" 100 \
		"$(awk -v o="$own_pct" 'BEGIN { print 3 + o }')" \
		|| no "$be: work_c's callers add up to $a + $b ($own_pct% in our handler)"
	"$profil" report --callers step_b --format json "$be.prof" > stepb.json
	within "$(edge stepb.json from_b)" 100 3 || no "$be: step_b not called from from_b"
	"$profil" report --callees main --format json "$be.prof" > callees.json \
		|| no "$be: --callees"
	within "$(edge callees.json from_a)" 75 "$bound" || no "$be: main's callee from_a"

	# main is in (nearly) every stack: its total, in the flat profile.
	"$profil" report --format csv "$be.prof" > "$be.csv"
	main_total=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["function"] == "main" { print $col["total_percent"] }' "$be.csv")
	awk -v t="${main_total:-0}" -v o="$own_pct" 'BEGIN { exit !(t >= 97 - o && t <= 100) }' \
		|| no "$be: main's total ${main_total:-none}%, not about 100% ($own_pct% in our handler)"
	"$profil" report "$be.prof" > "$be.txt"
	grep -q '^stacks: ' "$be.txt" || no "$be: no stacks line in the header"
	grep -q 'total%' "$be.txt" || no "$be: no total% column"

	# A handler's frames sit on a signal trampoline's, whose unwind
	# entry starts a byte early for unwinders that look at pc - 1: the
	# caller is [signal handler called], not libc.so.6+0x... (Debian's
	# libc names nothing there) nor __restore_rt (its debug file does).
	prun --backend "$be" -o "$be.sig.prof" ./stacksprog altstack 1 2>/dev/null || no "$be: run altstack"
	"$profil" report --callers busy_handler "$be.sig.prof" > sig.txt 2>&1
	grep -q '\[signal handler called\]' sig.txt || no "$be: busy_handler's caller: $(cat sig.txt)"

	# A function's total is never below its own samples, also where
	# samples have no stack: time in the kernel (reads of /dev/zero).
	prun --backend "$be" -o "$be.sys.prof" dd if=/dev/zero of=/dev/null bs=64k count=200000 \
		2>/dev/null || no "$be: run dd"
	"$profil" report --format csv "$be.sys.prof" | awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		/"/ { next }	# a quoted name with commas (C++, ASan): no split by commas
		$col["total_samples"] + 0 < $col["samples"] + 0 {
			print "not ok: '"$be"': " $col["function"] ": total " $col["total_samples"] \
				" below its own " $col["samples"]; bad = 1 }
		END { exit bad }' || fail=1

	# Nor above the samples counted: outer's samples are all in code
	# inlined into it, whose innermost frame is the inlined function
	# (outer's total was 199.66% before stackprint.c counted them).
	prun --backend "$be" -o "$be.inl.prof" ./inlprog 400 2>/dev/null || no "$be: run inlprog"
	"$profil" report --format csv "$be.inl.prof" | awk -F, '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		/"/ { next }
		$col["total_percent"] + 0 > 100 {
			print "not ok: '"$be"': " $col["function"] ": total " $col["total_percent"] "%"; bad = 1 }
		$col["function"] == "outer" { seen = 1 }
		END { if (!seen) print "not ok: '"$be"': no row for outer"; exit bad || !seen }' || fail=1

	# The tree: main, then from_a and from_b under it, work_c under both.
	"$profil" report --tree "$be.prof" > tree.txt || no "$be: --tree"
	awk '$NF == "(calls)" && $(NF - 1) == "main" { m = 1 }
	     m && $(NF - 1) == "from_a" { a = 1 } m && $(NF - 1) == "step_b" { b = 1 }
	     END { exit !(a && b) }' tree.txt || { cat tree.txt; no "$be: --tree"; }

	# Folded stacks: each line "a;b;c COUNT", outermost first, adding up
	# to the samples with a stack; main;from_b;step_b;work_c among them.
	awk '!/^[^ ;][^;]*(;[^;]+)* [0-9]+$/ { bad = 1 } END { exit bad }' "$be.folded" \
		|| no "$be: folded lines that do not parse"
	sum=$(awk '{ s += $NF } END { print s + 0 }' "$be.folded")
	[ "$sum" -eq "$with" ] || no "$be: folded stacks add up to $sum, not $with"
	grep -q ';main;from_b;step_b;work_c [0-9]*$' "$be.folded" \
		|| no "$be: no folded stack main;from_b;step_b;work_c"

	# pprof: whole stacks, the inlined frame a line of from_b's location.
	"$profil" export --format pprof -o "$be.pb.gz" "$be.prof" || no "$be: export pprof"
	if command -v go >/dev/null; then
		HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -traces -symbolize=none "$be.pb.gz" \
			> traces.txt 2>&1 || no "$be: pprof -traces"
		awk '$1 ~ /ms$/ && $2 == "work_c" { s = 1; next }
		     s == 1 && $1 == "step_b" && $2 == "(inline)" { s = 2; next }
		     s == 2 && $1 == "from_b" { s = 3; next }
		     s == 3 && $1 == "main" { ok = 1 } { s = 0 } END { exit !ok }' traces.txt \
			|| { head -40 traces.txt; no "$be: pprof -traces has no work_c, step_b, from_b, main"; }
		HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -peek '^work_c$' -symbolize=none \
			"$be.pb.gz" > peek.txt 2>&1 || no "$be: pprof -peek"
		grep -q '| *from_a$' peek.txt || { cat peek.txt; no "$be: pprof -peek: from_a"; }
		HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -tags -symbolize=none "$be.pb.gz" \
			> tags.txt 2>&1
		grep -q '(  100%): calls$' tags.txt || { cat tags.txt; no "$be: pprof -tags: no thread calls"; }
		HOME=$tmp GOCACHE=$tmp/gocache go tool pprof -top -symbolize=none "$be.pb.gz" \
			> top.txt 2>&1
		p=$(awk '$NF == "work_c" { sub("%", "", $2); print $2 }' top.txt)
		flat=$(share "$be.csv" work_c calls)
		within "${p:-0}" "$flat" 0.6 \
			|| no "$be: pprof's flat work_c ${p:-none}%, not the flat profile's $flat%"
	fi

	# merge: a file merged with itself has every stack twice.
	"$profil" merge -o "$be.2.prof" "$be.prof" "$be.prof" || no "$be: merge"
	"$profil" export --format folded -o "$be.2.folded" "$be.2.prof" || no "$be: folded of merged"
	awk 'NR == FNR { n[substr($0, 1, length($0) - length($NF) - 1)] += $NF; next }
	     { k = substr($0, 1, length($0) - length($NF) - 1); if ($NF != 2 * n[k]) bad = 1; seen++ }
	     END { exit bad || !seen }' "$be.folded" "$be.2.folded" \
		|| no "$be: merged stacks are not the input's twice"

	# Two processes, loaded at different addresses (ASLR): their stacks
	# add up, function by function.
	prun --backend "$be" -o "$be.b.prof" ./calls 50 2>/dev/null || no "$be: run b"
	"$profil" export --format folded -o "$be.b.folded" "$be.b.prof" || no "$be: folded b"
	"$profil" merge -o "$be.ab.prof" "$be.prof" "$be.b.prof" || no "$be: merge a b"
	"$profil" export --format folded -o "$be.ab.folded" "$be.ab.prof" || no "$be: folded ab"
	awk 'FILENAME != last { f++; last = FILENAME }
	     { k = substr($0, 1, length($0) - length($NF) - 1) }
	     f < 3 { n[k] += $NF; next }
	     { if ($NF != n[k]) bad = 1; delete n[k] }
	     END { for (k in n) bad = 1; exit bad }' "$be.folded" "$be.b.folded" "$be.ab.folded" \
		|| no "$be: the stacks of two processes merged are not their sum"

	# --tid: the stacks of the thread kept (the only one) are all there.
	tid=$("$profil" report --threads --format csv "$be.prof" | awk -F, 'NR == 2 { print $4 }')
	"$profil" report --tid "$tid" --callers work_c --format json "$be.prof" > tid.json
	[ "$(json_num tid.json total_samples)" = "$(json_num callers.json total_samples)" ] \
		|| no "$be: --tid $tid: work_c's stacks differ"
	"$profil" report --tid 1 --callers work_c "$be.prof" > /dev/null 2>&1 \
		&& no "$be: --tid of no thread: work_c's callers shown"
done

# Without stacks: one line naming the option.
prun --no-stacks -o none.prof ./calls 5 2>/dev/null || no "run --no-stacks"
err=$("$profil" report --callers work_c none.prof 2>&1 >/dev/null)
case $err in
"profil: --callers: the profile has no call stacks"*) ;;
*) no "--callers without stacks said: $err" ;;
esac
"$profil" export --format folded -o none.folded none.prof 2>/dev/null \
	&& no "export --format folded without stacks succeeded"
[ -e none.folded ] && no "export --format folded without stacks left a file"
"$profil" report none.prof | grep -q '^stacks:' && no "a stacks line without stacks"
exit $fail
