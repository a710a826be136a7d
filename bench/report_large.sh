#!/bin/sh
# report_large.sh BUILD [FUNCTIONS] - make bench-report: what profil
# report takes on one large profile (issue 22 item 3): clang, whose
# code is almost all in Debian's libLLVM (a 110 MB library), compiling
# a generated C file of FUNCTIONS functions (default 3500: about a
# minute of CPU here) at -O2 -g under profil run -F 10000.  Then the
# text report twice (the first reads libLLVM's symbols; the second may
# find what a cache keeps) and the HTML page, each with wall and CPU
# time (user + system, objdump's included) and peak resident memory;
# then the page's first render and a filter in headless chromium.
#   sh bench/report_large.sh build
# With REPORT_SCALE_KEEP=1 a profile already made is kept and reused.
set -eu
B=$(cd "${1:-build}" && pwd)
n=${2:-3500}
profil="$B/bin/profil"
out="$B/bench/large"
mkdir -p "$out"
out=$(cd "$out" && pwd)
clang=
for c in clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14; do
	command -v "$c" > /dev/null 2>&1 && { clang=$c; break; }
done
[ -n "$clang" ] || { echo "report_large.sh: no clang installed (apt-get install clang)" >&2; exit 1; }
llvm=$(ldd "$(command -v "$clang")" 2>/dev/null | awk '/libLLVM/ { print $3; exit }')
[ -n "$llvm" ] || llvm=$(ldd "$(readlink -f "$(command -v "$clang")")" | awk '/libLLVM/ { print $3; exit }')

measure() {
	/usr/bin/time -f "%e %U %S %M" -o "$out/time.txt" "$@" > "$out/cmd.out" 2> "$out/cmd.err" || {
		echo "report_large.sh: failed: $*" >&2
		tail -n 3 "$out/cmd.err" >&2
		exit 1
	}
	awk '{ printf "%6.2fs %5.2fs %4.0fMB\n", $1, $2 + $3, $4 / 1024 }' "$out/time.txt"
}

if [ "${REPORT_SCALE_KEEP:-0}" != 1 ] || [ ! -d "$out/run.prof" ]; then
	rm -rf "$out/run.prof"
	awk -v n="$n" 'BEGIN {
		for (i = 0; i < n; i++) {
			printf "unsigned g%d(const unsigned *v, int n)\n{\n\tunsigned h = %d;\n", i, i * 31
			printf "\tfor (int k = 0; k < n; k++) {\n\t\th = h * 33 + v[k];\n"
			printf "\t\tif (h & 1) h ^= h >> 7; else h += k * %d;\n", i % 7 + 3
			printf "\t\tswitch (h %% 5) { case 0: h += 1; break; case 1: h *= 3; break;\n"
			printf "\t\tcase 2: h ^= 0x5bd1e995; break; default: h -= k; }\n\t}\n\treturn h;\n}\n"
		}
	}' > "$out/big.c"
	( cd "$out" && "$profil" run -F 10000 -o "$out/run.prof" "$clang" -O2 -g -c big.c -o big.o )
	rm -f "$out/big.o"
fi
first=$(measure "$profil" report "$out/run.prof")
samples=$(awk '/^Flat profile/ { print $3; exit }' "$out/cmd.out")
second=$(measure "$profil" report "$out/run.prof")
html=$(measure "$profil" report --html "$out/run.html" "$out/run.prof")
printf "%s (%s, %s MB) compiling %s functions: %s files, %s samples\n" "$clang" "$llvm" \
	"$(($(stat -L -c %s "$llvm") >> 20))" "$n" "$(ls "$out/run.prof" | wc -l)" "$samples"
printf "%-28s %7s %6s %6s\n" "" wall cpu rss
printf "%-28s %s\n" "profil report (first)" "$first" "profil report (second)" "$second" \
	"profil report --html" "$html"
# The page in headless chromium (item 4): first render and a filter
# keystroke, when the page test's tools are installed.
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -d "$root/tests/html/node_modules/playwright-core" ] && command -v node > /dev/null; then
	printf "%-28s %s\n" "the page in chromium" \
		"$(node "$root/tests/html/render_time.mjs" "$out/run.html" llvm 2>&1 | tail -n 1)"
fi
echo "(CPU: user + system; load average $(cut -d' ' -f1-3 /proc/loadavg))"
