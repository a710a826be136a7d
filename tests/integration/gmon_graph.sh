#!/bin/sh
# gmon_graph.sh BUILD - profil report --callgraph against gprof -q on a
# real -pg program (tests/gmon/graph.c): a tree, direct recursion, mutual
# recursion (two cycles) and a qsort comparator libc calls back.  Every
# entry's calls, self and children, and every caller and callee line's
# count and times agree with gprof's (times within the rounding of the
# last digit); the calls from outside the text, which gprof drops, are a
# <spontaneous> caller with the right count.
. "$(dirname "$0")/../gmon/lib.sh"
profil=$(cd "$B" && pwd)/bin/profil

# In source order in the text: two cycles interleave there (graph.c).
build graph graph.c -g -fno-toplevel-reorder
cd "$tmp" || exit 1
./graph 2 2> err || fail "graph exited $?"
f=$(ls gmon.graph.*.out 2>/dev/null)
[ -f "$f" ] || { fail "no gmon.graph.PID.out"; done_testing; }
gprof -b -q graph "$f" > gprof.txt || fail "gprof -q"
"$profil" report --callgraph "$f" > ours.txt || fail "profil report --callgraph: status $?"

# One record per number of an entry: "ENTRY ROLE OTHER FIELD VALUE", ROLE
# being self (the entry's own line), caller or callee; names without
# their [index] and <cycle N>; gprof's bare <spontaneous> line left out.
records() {
	awk '
	function clean(s) { sub(/ \[[0-9]+\]$/, "", s); sub(/ <cycle [0-9]+>$/, "", s); return s }
	function flush(  i) {
		for (i = 1; i <= n; i++) {
			split(pending[i], p, SUBSEP)
			print entry, p[1], p[2], p[3]
		}
		n = 0
	}
	/^-----/ { for (i = 1; i <= m; i++) print entry, "callee", after[i]; m = 0; entry = ""; next }
	/Index by function name/ { exit }
	/^index/ || /^$/ || /Call graph/ || /^granularity/ { next }
	/^ *<spontaneous>$/ { next }
	/^\[/ {	# the entry: [N] %time self children called name
		name = $0; sub(/^\[[0-9]+\] +[0-9.]+ +[0-9.]+ +[0-9.]+ +/, "", name)
		called = name; sub(/ .*/, "", called)
		if (called ~ /^[0-9+]+$/) sub(/^[0-9+]+ +/, "", name); else called = "-"
		entry = clean(name)
		print entry, "self", entry, "self", $3
		print entry, "self", entry, "children", $4
		print entry, "self", entry, "called", called
		flush()
		next
	}
	{	# a caller (before the entry) or callee line
		if ($1 ~ /^[0-9]+$/ && $2 !~ /^[0-9.]+$/) {	# count only
			other = $0; sub(/^ *[0-9]+ +/, "", other)
			r[1] = "count " $1; k = 1
		} else {
			other = $0; sub(/^ *[0-9.]+ +[0-9.]+ +[0-9]+\/[0-9]+ +/, "", other)
			split($3, c, "/")
			r[1] = "self " $1; r[2] = "children " $2; r[3] = "count " c[1]; r[4] = "total " c[2]
			k = 4
		}
		other = clean(other)
		for (i = 1; i <= k; i++) {
			split(r[i], v, " ")
			if (entry == "") { n++; pending[n] = "caller" SUBSEP other SUBSEP v[1] " " v[2] }
			else { m++; after[m] = other " " v[1] " " v[2] }
		}
	}' "$1" | sort
}
records gprof.txt > g.rec
records ours.txt > o.rec
[ "$(wc -l < g.rec)" -gt 60 ] || { cat gprof.txt; fail "gprof's call graph has too few lines"; }

# Join on "ENTRY ROLE OTHER FIELD"; numbers equal, times within 0.01.
awk '
	NR == FNR { k = $1 " " $2 " " $3 " " $4; want[k] = $5; next }
	{ k = $1 " " $2 " " $3 " " $4; got[k] = $5 }
	END {
		for (k in want) {
			if (!(k in got)) { print "not in profil report: " k " = " want[k]; bad++; continue }
			split(k, f, " ")
			if (f[4] == "self" || f[4] == "children") {
				d = got[k] - want[k]; if (d < 0) d = -d
				if (d > 0.0101) { print k ": profil " got[k] ", gprof " want[k]; bad++ }
			} else if (got[k] != want[k] && !(f[3] ~ /^(main|compare)$/ && want[k] == "-")) {
				print k ": profil " got[k] ", gprof " want[k]; bad++
			}
		}
		for (k in got)
			if (!(k in want) && k !~ /<spontaneous>/) { print "only in profil report: " k; bad++ }
		exit bad > 0
	}' g.rec o.rec || fail "the call graphs differ (above)"

# What gprof leaves out: calls from outside the text.
compares=$(sed -n 's/^compares=//p' err)
grep -q "^compare caller <spontaneous> count $compares\$" o.rec \
	|| fail "compare: no <spontaneous> caller with $compares calls"
grep -q "^compare self compare called $compares\$" o.rec || fail "compare: not called $compares times"
grep -q "^main caller <spontaneous> count 1\$" o.rec || fail "main: not called once from outside"
# The cycles as gprof shows them, numbered as gprof numbers them (the
# comparison above has their names): ping's first, though is_even has the
# lowest address of all.
grep -q "<cycle 2 as a whole> self <cycle 2 as a whole> called 200+19900" o.rec \
	|| fail "the cycle of is_even and is_odd is not cycle 2, called 200+19900 times"
grep -q "<cycle 1 as a whole> self <cycle 1 as a whole> called 50+1225" o.rec \
	|| fail "the cycle of ping and pong is not cycle 1, called 50+1225 times"
grep -q "^fib self fib called 1+" o.rec || fail "fib's recursion is not its self calls"
echo "call graph: $(wc -l < o.rec) records, $(wc -l < g.rec) from gprof"

# The same graph as JSON: valid, and with the text's numbers.
"$profil" report --callgraph --format json "$f" > cg.json || fail "--callgraph --format json"
node -e '
	const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
	const by = {}; for (const n of d.nodes) by[n.name] = n;
	const name = i => i === null ? "<spontaneous>" : d.nodes[i - 1].name;
	for (const n of d.nodes) {
		const called = n.calls || n.self_calls ? n.calls + (n.self_calls ? "+" + n.self_calls : "") : "-";
		console.log(n.name, "self", n.name, "called", called);
		for (const e of n.callers || []) console.log(n.name, "caller", name(e.index), "count", e.count);
	}' < cg.json | sort > j.rec || fail "--callgraph --format json is not JSON"
grep -E " (called|count) " o.rec | grep -v " callee " | sort > oc.rec
cmp -s oc.rec j.rec || { diff oc.rec j.rec | head; fail "--format json and the text differ"; }
# --threshold leaves out the entries below it.
"$profil" report --callgraph --threshold 10 "$f" > t.txt || fail "--callgraph --threshold 10"
grep -q '^\[1\] .* burn \[1\]$' t.txt || fail "--threshold 10 left out burn (100%)"
grep -q '^\[[0-9]*\] .* leaf \[' t.txt && fail "--threshold 10 kept other_side (0%)"

# The flat profile: calls equal to gprof -p's, self and total ms/call
# within the rounding of its last digit (in the unit gprof chose).
gprof -b -p graph "$f" > flat.txt || fail "gprof -p"
"$profil" report --format csv "$f" > flat.csv || fail "profil report --format csv"
awk -F, '
	NR == FNR {
		if ($0 ~ /\/call/) { u = $0; sub(/\/call.*/, "", u); sub(/.* /, "", u)
			ms = u == "s" ? 1000 : u == "ms" ? 1 : u == "us" ? 0.001 : 0.000001 }
		split($0, w, " ")
		if (w[1] ~ /^[0-9.]+$/ && w[7] != "") { calls[w[7]] = w[4]; self[w[7]] = w[5]; tot[w[7]] = w[6] }
		next
	}
	FNR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	{ fn = $c["function"]; got[fn] = $c["calls"]; gs[fn] = $c["self_ms_per_call"]; gt[fn] = $c["total_ms_per_call"] }
	function off(a, b) { d = a - b; return d < 0 ? -d : d }
	END {
		for (fn in calls) {
			n++
			if (got[fn] != calls[fn]) { print fn ": " got[fn] " calls, gprof " calls[fn]; bad++ }
			if (off(gs[fn], self[fn] * ms) > 0.0051 * ms || off(gt[fn], tot[fn] * ms) > 0.0051 * ms) {
				print fn ": " gs[fn] " and " gt[fn] " ms/call, gprof " self[fn] " and " tot[fn] " x " ms; bad++
			}
		}
		if (n < 7) { print "gprof -p lists " n " functions with calls"; bad++ }
		if (got["compare"] == "" || got["main"] != 1) { print "compare and main: no calls from outside the text"; bad++ }
		exit bad > 0
	}' flat.txt flat.csv || fail "the flat profiles differ (above)"

# merge sums what gprof -s sums: gprof reads the same from both sums.
mkdir two && cd two || exit 1
../graph 1 2> /dev/null && ../graph 1 2> /dev/null || fail "graph exited $?"
set -- gmon.graph.*.out
[ $# -eq 2 ] || fail "two runs made $# files"
"$profil" merge -o merged.out "$@" || fail "profil merge of gmon.out files: status $?"
gprof -s ../graph "$@" || fail "gprof -s"
gprof -b ../graph gmon.sum > sum.txt
gprof -b ../graph merged.out > merged.txt || fail "gprof cannot read the merged file"
cmp -s sum.txt merged.txt || { diff sum.txt merged.txt | head; fail "profil merge and gprof -s differ"; }
[ "$(calls ../graph merged.out is_even)" -eq 20000 ] || fail "merged: is_even not called 2 x 10000 times"
# export writes the arcs back: gprof reads the same as from the original.
"$profil" export --format gmon --exe ../graph -o exported.out merged.out || fail "export: $?"
gprof -b ../graph exported.out > exported.txt || fail "gprof cannot read the exported file"
cmp -s merged.txt exported.txt || { diff merged.txt exported.txt | head; fail "export changed the profile"; }
# Files that are not of one program, or not gmon.out files.
printf 'not a profile' > junk
"$profil" merge -o bad.out "$1" junk 2> err && fail "gmon.out merged with junk"
grep -q "junk: not a gmon.out file" err || fail "merge with junk: $(cat err)"
cd .. || exit 1
build calls calls.c
./calls 1 1000 || fail "calls exited $?"
"$profil" merge -o bad.out "$f" gmon.calls.*.out 2> err && fail "two programs' gmon.out merged"
grep -q "not a profile of the same program" err || fail "merge of two programs: $(cat err)"
[ -e bad.out ] || [ -e two/bad.out ] && fail "a failed merge left its output"
done_testing
