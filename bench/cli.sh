#!/bin/sh
# cli.sh BUILD - what profil run costs and what profil report takes:
# CPU time (user + system, the whole process tree) of a program bare,
# under profil run and under perf record at the same rate, interleaved,
# the least of ROUNDS runs each; then profil report's time on the
# profile made, and the share of the hottest functions against perf's.
#   sh bench/cli.sh build [ROUNDS]
set -u
B=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
profil="$B/bin/profil"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
py=$(command -v /usr/bin/python3 || command -v python3)
cat > work.py <<'PY'
import json, re, hashlib, zlib
data = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i % 7)]} for i in range(60000)]
for _ in range(6):
    text = json.dumps(data)
    back = json.loads(text)
    words = re.findall(r"item\d+", text)
    digest = hashlib.sha256(zlib.compress(text.encode(), 6)).hexdigest()
print(len(back), len(words), digest[:8])
PY

cpu() {	# COMMAND...: user+system seconds of the tree
	/usr/bin/time -f "%U %S" -o t.out "$@" > /dev/null 2>&1
	awk '{ printf "%.3f\n", $1 + $2 }' t.out
}
least() { sort -n | head -n 1; }

measure() {	# NAME COMMAND...
	name=$1; shift
	: > bare; : > prof; : > perf
	for r in $(seq "$rounds"); do
		cpu "$@" >> bare
		cpu "$profil" run -F 1000 -o p.prof "$@" >> prof
		cpu perf record -q -e cpu-clock -F 1000 -o perf.data "$@" >> perf
	done
	b=$(least < bare); p=$(least < prof); f=$(least < perf)
	printf "%-10s bare %7.3f s  profil run %7.3f s (x%.3f)  perf record %7.3f s (x%.3f)\n" \
		"$name" "$b" "$p" "$(echo "$p $b" | awk '{ print $1 / $2 }')" \
		"$f" "$(echo "$f $b" | awk '{ print $1 / $2 }')"
	start=$(date +%s.%N)
	"$profil" report p.prof > report.txt
	end=$(date +%s.%N)
	printf "%-10s profil report: %.2f s for %s samples, %s bytes of profile (%s on disk)\n" "$name" \
		"$(echo "$end $start" | awk '{ print $1 - $2 }')" \
		"$(awk '/^Flat profile/ { print $3 }' report.txt)" "$(stat -c %s p.prof)" \
		"$(du -h p.prof | cut -f1)"
	# Shares of the ten hottest user functions, profil against perf.
	"$profil" report --format csv p.prof | awk -F, 'NR > 1 { print $5 "," $1 }' > a.csv
	perf report -i perf.data --stdio --sort symbol --percent-limit 0 2>/dev/null |
		awk '$2 == "[.]" { sub("%", "", $1); print $3 "," $1 }' > b.csv
	awk -F, 'NR == FNR { a[$1] += $2; next } { b[$1] += $2 }
		END { for (f in a) { ta += a[f] }; for (f in b) { tb += b[f] }
		      n = 0; for (f in a) if (f in b) { d = 100 * a[f] / ta - 100 * b[f] / tb
		      if (d < 0) d = -d; if (d > worst) worst = d; n++ }
		      printf "%-10s largest difference of a function'"'"'s share against perf: %.2f points (%d functions)\n", "'"$name"'", worst, n }' a.csv b.csv
}

measure crunch "$B/examples/crunch"
measure python "$py" work.py
