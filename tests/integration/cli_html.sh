#!/bin/sh
# cli_html.sh BUILD - profil report --html: pages of the bundled example
# run in a process tree and of a C++ program, validated as HTML
# (html-validate), then opened in Debian's chromium (tests/html/
# browser.mjs): the table is the text report's, a function's hottest
# source line is the one report --lines names, sorting, filtering, the
# process selector, a screenshot that is not blank; the flame graph of a
# profile with stacks (made from folded stacks over the example's own
# functions, so its widths are known exactly), and the one line a page
# without stacks says instead.  Bad input gets one
# line.  The sanitizer build runs all but the browser: the command's
# writer is what it checks.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
modules="$root/tests/html/node_modules"
[ -d "$modules/playwright-core" ] && [ -d "$modules/html-validate" ] \
	|| { echo "tests/html/node_modules missing: run sh scripts/setup.sh"; exit 1; }

cd "$tmp" || exit 1

# expect WHAT TEXT COMMAND...: fails with one line on stderr holding TEXT.
expect() {
	what=$1 text=$2; shift 2
	"$@" > out.txt 2> err.txt && { no "$what: status 0"; return; }
	[ "$(wc -l < err.txt)" -eq 1 ] || no "$what: not one line: $(cat err.txt)"
	grep -qF -- "$text" err.txt || no "$what: '$(cat err.txt)' does not say '$text'"
	cat err.txt
}

# The example in a tree of processes: sh, crunch, cat.
prun sh -c "$B/examples/crunch | cat > /dev/null" 2>/dev/null || no "crunch under profil run: status $?"
crunch=$(ls profil.data/crunch.*.prof)
pid=${crunch##*crunch.}; pid=${pid%%.*}
nproc=$(ls profil.data | wc -l)
"$profil" report --html crunch.html 2> html.err || { cat html.err; no "report --html: status $?"; }
[ -s html.err ] && { cat html.err; no "report --html wrote to stderr"; }
"$profil" report --format csv > crunch.csv || no "report csv"
"$profil" report --lines --format csv > crunch-lines.csv || no "report --lines csv"
"$profil" report --format csv "$crunch" > crunch1.csv || no "report csv of crunch"
"$profil" report --lines --format csv "$crunch" > crunch1-lines.csv || no "report --lines of crunch"
grep -q '<meta charset="utf-8">' crunch.html || no "no charset in the page"
if grep -Eq '(src|href)="(https?:)?//' crunch.html; then no "the page loads something from outside"; fi

# C++: demangled names, inlined code; arguments to quote and escape.
c++ -O2 -g -o cxxwork "$root/tests/cli/cxxwork.cc"
prun -o cxx.prof -- ./cxxwork 4 'arg with space' x '<i>&amp;</i>' 2>/dev/null || no "cxxwork: status $?"
"$profil" report --html cxx.html cxx.prof || no "report --html cxx: status $?"
"$profil" report --format csv cxx.prof > cxx.csv
"$profil" report --lines --format csv cxx.prof > cxx-lines.csv
grep -q 'geometry::Grid<double>::relax(int)' cxx.csv || no "C++ names not demangled: $(cat cxx.csv)"

# gmon.out with call arcs (a -pg program linked with libprofil).
cc -pg -O2 -g -pthread $san_cflags -I"$root/include" -o graph "$root/tests/gmon/graph.c" \
	-L"$B/lib" -Wl,-rpath,"$B/lib" -lprofil
./graph 2 2>/dev/null || no "graph: status $?"
gmon=$(ls gmon.graph.*.out)
"$profil" report --html graph.html "$gmon" || no "report --html of gmon.out: status $?"
"$profil" report --format csv "$gmon" > graph.csv
"$profil" report --lines --format csv "$gmon" > graph-lines.csv
grep -q '"cg":{"calls":\[' graph.html || no "no call graph in the page of a gmon.out"

# Stacks of a known shape over the example's functions: fnv1a called by
# lz_compress (600 samples) and compress_slice (200); main only a caller.
# A second process has only lz_decompress (600): the page is of both.
cc -std=gnu11 -O2 -o folded_profile "$root/tests/html/folded_profile.c" || no "folded_profile"
cat > stacks.folded <<EOF
_start;main;lz_compress 300
_start;main;lz_compress;fnv1a 600
_start;main;merge_sort;merge_sort;record_less 100
_start;main;lz_decompress 200
_start;main;compress_slice;fnv1a 200
EOF
./folded_profile "$B/examples/crunch" stacks.prof < stacks.folded > /dev/null || no "folded_profile: status $?"
echo "_start;main;lz_decompress 600" | ./folded_profile "$B/examples/crunch" stacks2.prof > /dev/null \
	|| no "folded_profile: status $?"
"$profil" report --html stacks.html stacks.prof stacks2.prof || no "report --html of stacks: status $?"
"$profil" report --format csv stacks.prof stacks2.prof > stacks.csv
"$profil" report --lines --format csv stacks.prof stacks2.prof > stacks-lines.csv
grep -q 'id="profil-stacks">\[{"n":2000,' stacks.html || no "no call tree of 2000 samples in the page of the stacks"
grep -q 'id="profil-stacks">\[{"why":' graph.html || no "the page of a gmon.out does not say why it has no flame graph"

# Stacks profiled for real, once profil run records them: tests/cli/calls.c
# calls work_c from from_a for 3 units of work and from step_b (inlined in
# from_b) for 1.  Widths are checked against report's totals of the same
# file; the callers' shares against 75/25 within 6 standard errors and 3
# points, as cli_stacks.sh does.
calls_spec=
if "$profil" run --help 2>/dev/null | grep -q -- '--no-stacks'; then
	cc -O2 -g -o calls "$root/tests/cli/calls.c"
	# The perf backend where it may: the timer backend's signals come at
	# the kernel's 4 ms tick, and calls' cycle (12 ms in from_a, 4 in
	# from_b) can lock to it: a fresh-clone run saw 63.59/36.41.
	cbe=timer
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
	{ [ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ]; } && cbe=perf
	prun --backend $cbe -o calls.prof ./calls 250 2>/dev/null || no "calls under profil run: status $?"
	"$profil" report --html calls.html calls.prof || no "report --html of calls: status $?"
	"$profil" report --format csv calls.prof > calls.csv
	"$profil" report --lines --format csv calls.prof > calls-lines.csv
	total() { awk -F, -v fn="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$col["function"] == fn { print $col["total_samples"] }' calls.csv; }
	wc=$(total work_c)
	ctol=$(awk -v n="${wc:-1}" 'BEGIN { printf "%.2f", 600 * sqrt(0.75 * 0.25 / n) + 3 }')
	echo "calls: work_c in $wc samples' stacks, callers' bound $ctol points"
	calls_spec=",
  { \"html\": \"$tmp/calls.html\", \"csv\": \"$tmp/calls.csv\", \"lines\": \"$tmp/calls-lines.csv\",
    \"functions\": [\"work_c\"], \"filter\": \"from_\",
    \"flame\": { \"tol\": 0.005, \"ctol\": $ctol,
      \"known\": [{ \"name\": \"work_c\", \"total\": $wc }, { \"name\": \"from_a\", \"total\": $(total from_a) },
                { \"name\": \"from_b\", \"total\": $(total from_b) }],
      \"search\": { \"text\": \"WORK_C\", \"name\": \"work_c\" },
      \"zoom\": { \"name\": \"from_a\", \"total\": $(total from_a), \"callee\": \"work_c\", \"share\": 1, \"tol\": 0.05 },
      \"callers\": [{ \"function\": \"work_c\", \"callers\": [{ \"name\": \"from_a\", \"share\": 75 },
                                                     { \"name\": \"step_b\", \"share\": 25 }] }] } }"
else
	echo "calls: skipped, this profil run records no call stacks yet"
fi

"$modules/.bin/html-validate" -c "$root/tests/html/.htmlvalidate.json" crunch.html cxx.html graph.html stacks.html \
	|| no "the pages are not valid HTML"
ls -l crunch.html cxx.html graph.html stacks.html

# Bad input: one line, non-zero status, no page.
expect "a directory that does not exist" "nodir/p.html" "$profil" report --html nodir/p.html cxx.prof
[ -e nodir ] && no "a page in a directory that did not exist"
expect "an unwritable place" "/proc/p.html" "$profil" report --html /proc/p.html cxx.prof
: > empty.prof
expect "an empty file" "empty.prof: empty" "$profil" report --html e.html empty.prof
prun -F 1 -o idle.prof sleep 0.3 2>/dev/null
expect "a profile without samples" "no samples, no page written" "$profil" report --html e.html idle.prof
expect "--html with --annotate" "--annotate" "$profil" report --html e.html --annotate main cxx.prof
[ -e e.html ] && no "a page written from bad input"
ls e.html.* 2>/dev/null && no "a temporary file left behind"

# The browser: not under the sanitizers (chromium is not built for them).
if [ -z "$asan_pre" ]; then
	cat > spec.json <<EOF
{ "pages": [
  { "html": "$tmp/crunch.html", "csv": "$tmp/crunch.csv", "lines": "$tmp/crunch-lines.csv",
    "functions": ["fnv1a", "lz_compress"], "filter": "lz_", "screenshot": "$tmp/crunch.png",
    "process": { "count": $nproc, "label": "crunch [$pid]", "pid": "$pid",
                 "csv": "$tmp/crunch1.csv", "lines": "$tmp/crunch1-lines.csv" } },
  { "html": "$tmp/cxx.html", "csv": "$tmp/cxx.csv", "lines": "$tmp/cxx-lines.csv",
    "functions": ["geometry::scale(double, int)", "geometry::Grid<double>::relax(int)"],
    "filter": "geometry", "inlined": true,
    "command": "./cxxwork 4 'arg with space' x '<i>&amp;</i>'" },
  { "html": "$tmp/graph.html", "csv": "$tmp/graph.csv", "lines": "$tmp/graph-lines.csv",
    "functions": ["burn"], "filter": "is_", "noflame": true,
    "graph": { "function": "leaf", "callee": "burn", "spontaneous": "compare",
               "ratio": [{ "name": "one_side", "times": 3 }, { "name": "other_side", "times": 1 }] } },
  { "html": "$tmp/stacks.html", "csv": "$tmp/stacks.csv", "lines": "$tmp/stacks-lines.csv",
    "functions": ["fnv1a"], "filter": "lz_",
    "flame": { "samples": 2000, "tol": 0,
      "known": [{ "name": "lz_compress", "total": 900 }, { "name": "fnv1a", "total": 800 },
                { "name": "lz_decompress", "total": 800 }, { "name": "compress_slice", "total": 200 },
                { "name": "main", "total": 2000 }],
      "search": { "text": "FNV", "share": 40 },
      "zoom": { "name": "lz_compress", "total": 900, "callee": "fnv1a", "share": 0.6667 },
      "callers": [{ "function": "fnv1a", "callers": [{ "name": "lz_compress", "share": 75 },
                                                    { "name": "compress_slice", "share": 25 }],
                    "callees": [{ "name": "[itself: the last frame]", "share": 100 }] },
                  { "function": "merge_sort", "callers": [{ "name": "main", "share": 100 },
                                                         { "name": "merge_sort", "share": 100 }],
                    "callees": [{ "name": "merge_sort", "share": 100 },
                                { "name": "record_less", "share": 100 }] },
                  { "function": "main", "callers": [{ "name": "_start", "share": 100 }],
                    "callees": [{ "name": "lz_compress", "share": 45 },
                                { "name": "lz_decompress", "share": 40 },
                                { "name": "compress_slice", "share": 10 },
                                { "name": "merge_sort", "share": 5 }] }],
      "proc": { "index": 2, "samples": 600, "full": "lz_decompress", "absent": "fnv1a" } } }$calls_spec
] }
EOF
	node "$root/tests/html/browser.mjs" spec.json || no "the pages in chromium"
fi

[ $fail -eq 0 ] && echo "cli_html: all checks passed"
exit $fail
