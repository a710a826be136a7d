#!/bin/sh
# report_scale.sh BUILD [FILES...] - make bench-report: what profil report
# takes on the profile of a build, against perf report on perf record's
# profile of the same build (issue 22).  For each size (default 60 240),
# a C project of that many generated files (nothing downloaded) is built
# with make -j2 under profil run and again under perf record; then the
# wall time and peak resident memory of `profil report` (text), of
# `profil report --html` and of `perf report --stdio`, one table row per
# size, with profil's figures as ratios to perf report's.
#   sh bench/report_scale.sh build 60 240 960
# With REPORT_SCALE_KEEP=1 the profiles of a size already made are kept
# and reused, so the report alone can be measured again.
set -eu
B=$(cd "${1:-build}" && pwd)
shift || true
[ $# -gt 0 ] || set -- 60 240
profil="$B/bin/profil"
out="$B/bench/report"
mkdir -p "$out"
out=$(cd "$out" && pwd)
command -v perf > /dev/null || { echo "report_scale.sh: perf is not installed" >&2; exit 1; }

# A project of N files of 12 functions each, enough for cc1 to work a
# while on each, and one main calling one function of each file.
project() {	# DIR N
	rm -rf "$1"
	mkdir -p "$1"
	awk -v n="$2" -v dir="$1" 'BEGIN {
		for (i = 0; i < n; i++) {
			f = sprintf("%s/u%04d.c", dir, i)
			printf "#include <string.h>\n" > f
			for (j = 0; j < 12; j++) {
				printf "static unsigned g%d_%d(const unsigned *v, int n)\n{\n", i, j >> f
				printf "\tunsigned h = %d;\n\tfor (int k = 0; k < n; k++) {\n", i * 31 + j >> f
				printf "\t\th = h * 33 + v[k];\n\t\tif (h & 1) h ^= h >> 7; else h += k * %d;\n", j + 3 >> f
				printf "\t\tswitch (h %% 5) { case 0: h += 1; break; case 1: h *= 3; break;\n" >> f
				printf "\t\tcase 2: h ^= 0x5bd1e995; break; default: h -= k; }\n\t}\n\treturn h;\n}\n" >> f
			}
			printf "unsigned f%d(const unsigned *v, int n)\n{\n\tunsigned s = 0;\n", i >> f
			for (j = 0; j < 12; j++)
				printf "\ts += g%d_%d(v, n);\n", i, j >> f
			printf "\treturn s;\n}\n" >> f
			close(f)
		}
		m = dir "/main.c"
		printf "#include <stdio.h>\n" > m
		for (i = 0; i < n; i++)
			printf "unsigned f%d(const unsigned *, int);\n", i >> m
		printf "int main(void)\n{\n\tunsigned v[64] = { 1 }, s = 0;\n" >> m
		for (i = 0; i < n; i++)
			printf "\ts += f%d(v, 64);\n", i >> m
		printf "\tprintf(\"%%u\\n\", s);\n\treturn 0;\n}\n" >> m
		close(m)
	}'
	cat > "$1/Makefile" <<'MK'
SRC := $(wildcard *.c)
prog: $(SRC:.c=.o)
	$(CC) -o $@ $^
%.o: %.c
	$(CC) -O2 -g -c -o $@ $<
clean:
	rm -f *.o prog
MK
}

# COMMAND...: wall seconds, CPU seconds (user + system, children
# waited for included: objdump) and peak resident MB of it, "S S MB".
measure() {
	/usr/bin/time -f "%e %U %S %M" -o "$out/time.txt" "$@" > "$out/cmd.out" 2> "$out/cmd.err" || {
		echo "report_scale.sh: failed: $*" >&2
		tail -n 3 "$out/cmd.err" >&2
		exit 1
	}
	awk '{ printf "%.2f %.2f %.0f\n", $1, $2 + $3, $4 / 1024 }' "$out/time.txt"
}

printf "%6s %6s %8s | %21s | %21s %13s | %21s %13s\n" files procs samples \
	"perf report" "profil report" "ratio" "report --html" "ratio"
printf "%6s %6s %8s | %21s | %21s %13s | %21s %13s\n" "" "" "" "wall   cpu    rss" \
	"wall   cpu    rss" "wall  cpu" "wall   cpu    rss" "wall  cpu"
for n in "$@"; do
	dir="$out/p$n"
	if [ "${REPORT_SCALE_KEEP:-0}" != 1 ] || [ ! -d "$out/run$n.prof" ] ||
	   [ ! -s "$out/perf$n.data" ]; then
		rm -rf "$out/run$n.prof" "$out/perf$n.data"
		project "$dir" "$n"
		( cd "$dir" && "$profil" run -o "$out/run$n.prof" make -s -j2 > /dev/null 2>&1 )
		( cd "$dir" && make -s clean && perf record -q -e cpu-clock -F 1000 \
			-o "$out/perf$n.data" make -s -j2 > /dev/null 2>&1 )
	fi
	procs=$(ls "$out/run$n.prof" | wc -l)
	perf=$(measure perf report -i "$out/perf$n.data" --stdio)
	text=$(measure "$profil" report "$out/run$n.prof")
	samples=$(awk '/^Flat profile/ { print $3; exit }' "$out/cmd.out")
	html=$(measure "$profil" report --html "$out/run$n.html" "$out/run$n.prof")
	echo "$n $procs $samples $perf $text $html" | awk '
		function r(a, b) { return a / (b > 0.01 ? b : 0.01) }
		{ printf "%6d %6d %8s | %6.2fs %5.2fs %4dMB | %6.2fs %5.2fs %4dMB x%5.1f x%5.1f |" \
		  " %6.2fs %5.2fs %4dMB x%5.1f x%5.1f\n", $1, $2, $3, $4, $5, $6, $7, $8, $9,
		  r($7, $4), r($8, $5), $10, $11, $12, r($10, $4), r($11, $5) }'
	[ "${REPORT_SCALE_KEEP:-0}" = 1 ] || rm -rf "$dir"
done
echo "(wall and CPU time, peak RSS; ratios: profil's over perf report --stdio's;" \
	"load average $(cut -d' ' -f1-3 /proc/loadavg))"
