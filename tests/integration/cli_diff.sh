#!/bin/sh
# cli_diff.sh BUILD - report --diff of a real change: tests/cli/diffprog.c
# rebuilt so that work_a does twice its work.  work_a comes first, its
# time about doubled (ratio 1.5 to 2.6) and its share up by about 16.7
# points (2/3 against 1/2, within 8: 4 standard errors of ~900 samples,
# and the machine's own noise); work_b's time about the same (ratio 0.7
# to 1.3) though its share fell.  The base's binary is the old build,
# read from the build-ID cache: functions are matched by name across the
# rebuild.  csv, json and the HTML page say the same; bad uses are one line.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

cc -O1 -g -o prog "$root/tests/cli/diffprog.c" || exit 1
prun -o base ./prog 300 2> run.err || { cat run.err; no "run of the base"; }
cc -O1 -g -DA_TIMES=2 -o prog "$root/tests/cli/diffprog.c" || exit 1
prun -o new ./prog 300 2> run.err || { cat run.err; no "run of the new build"; }

"$profil" report --diff base new > diff.txt 2> diff.err || { cat diff.err; no "report --diff"; }
cat diff.txt
"$profil" report --diff base new --format csv > diff.csv || no "--diff --format csv"
"$profil" report --diff base --format json > diff.json || no "--diff (NEW: the last run) --format json"

# field CSV FUNCTION COLUMN: a column of a function's row, by the header's names.
field() {
	awk -F, -v fn="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$1 == fn { print $col[c] }' "$1"
}
in_range() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "" && v >= lo && v <= hi) }'; }
first=$(awk -F, 'NR == 2 { print $1 }' diff.csv)
[ "$first" = work_a ] || no "the largest change is $first, not work_a"
ra=$(field diff.csv work_a ratio) rb=$(field diff.csv work_b ratio)
pa=$(field diff.csv work_a percent_change) pb=$(field diff.csv work_b percent_change)
ca=$(field diff.csv work_a seconds_change) ea=$(field diff.csv work_a seconds_error)
echo "work_a: ratio $ra, share $pa points, $ca s +- $ea; work_b: ratio $rb, share $pb points"
in_range "$ra" 1.5 2.6 || no "work_a's time x$ra, not about x2"
in_range "$rb" 0.7 1.3 || no "work_b's time x$rb, not about the same"
in_range "$pa" 8.7 24.7 || no "work_a's share changed by $pa points, not about +16.7"
in_range "$pb" -24.7 -8.7 || no "work_b's share changed by $pb points, not about -16.7"
awk -v c="$ca" -v e="$ea" 'BEGIN { exit !(c > e) }' || no "work_a's change $ca within its error $ea"
grep -q '"rows":\[{"function":"work_a"' diff.json || no "json: work_a not first"
grep -q "^ .*work_a" diff.txt || no "text: no work_a row"

"$profil" report --diff base new --html diff.html || no "--diff --html"
grep -q "<td class=\"f\">work_a</td>" diff.html || no "the diff page has no work_a row"
# The differential flame graph: work_a's frame under main gained about
# what its row did, work_b's lost it; red for the gain, blue for the loss.
grep -q '<svg id="flame"' diff.html || no "the diff page has no flame graph"
frame() {	# frame FUNCTION: "change,red,blue" of its frame under main
	tr '\n' ' ' < diff.html | sed 's/<g>/\n<g>/g' | awk -v fn="$1" '
		index($0, "<title>" fn " (prog): ") {
			sub(/<\/g>.*/, "")
			t = $0; sub(/.*, /, "", t); sub(/ points.*/, "", t)
			c = $0; sub(/.*fill="rgb\(/, "", c); sub(/\).*/, "", c); split(c, rgb, ",")
			print t "," rgb[1] "," rgb[3]; exit }'
}
fa=$(frame work_a) fb=$(frame work_b)
echo "flame graph: work_a $fa, work_b $fb (change, red, blue)"
IFS=, read -r da ra ba <<EOF2
$fa
EOF2
IFS=, read -r db rb2 bb <<EOF2
$fb
EOF2
in_range "${da:-}" 8.7 24.7 && [ "${ra:-0}" -gt "${ba:-255}" ] || no "work_a's frame: $fa, not a red gain of about 16.7 points"
in_range "${db:-}" -24.7 -8.7 && [ "${bb:-0}" -gt "${rb2:-255}" ] || no "work_b's frame: $fb, not a blue loss of about 16.7 points"
prun --no-stacks -o flat ./prog 50 2> run.err || no "run without stacks"
"$profil" report --diff flat new --html flat.html || no "--diff --html, a base without stacks"
grep -q "None: the base profile was recorded without call stacks" flat.html ||
	no "the diff page of a base without stacks does not say why it has no flame graph"

# One line for each mistake.
"$profil" report --diff base --lines > /dev/null 2> bad.err && no "--diff --lines accepted"
grep -q "\-\-diff and --lines" bad.err || no "--diff --lines: $(cat bad.err)"
"$profil" report --diff nowhere new > /dev/null 2> bad.err && no "--diff nowhere accepted"
[ "$(wc -l < bad.err)" -eq 1 ] && grep -q nowhere bad.err || no "--diff nowhere: $(cat bad.err)"
exit $fail
