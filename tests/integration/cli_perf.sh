#!/bin/sh
# cli_perf.sh BUILD - profil run against perf record at the same rate on
# the same program: the functions' shares agree within sampling error.
# Skipped (with a line saying so) where perf cannot record.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

cc -O2 -g -o spin "$root/tests/cli/spin.c"
if [ -n "$asan_pre" ]; then
	echo "skip: the sanitizer build (the comparison is the plain build's)"
	exit 0
fi
units=200	# about 1.3 s of CPU time
if ! perf record -q -e cpu-clock -F 1000 -o perf.data ./spin $units > perf.log 2>&1; then
	echo "skip: perf record cannot run here: $(tail -n 1 perf.log)"
	exit 0
fi
perf report -i perf.data --stdio -n --sort symbol --percent-limit 0 2>/dev/null |
	awk '$3 == "[.]" { sub("%", "", $1); print $4 "," $1 "," $2 }' > perf.csv
prun -F 1000 -o p.prof ./spin $units 2>/dev/null || no "profil run: status $?"
"$profil" report --format csv p.prof | awk -F, 'NR > 1 { print $5 "," $1 }' > profil.csv
# Independent observations: perf's samples; profil's pc readings (the
# timer backend reads the pc at the kernel's tick and weighs each).
n_perf=$(awk -F, '{ s += $3 } END { print s + 0 }' perf.csv)
n_profil=$("$profil" report --format json p.prof | sed 's/.*"observed":\([0-9]*\).*/\1/')
echo "perf: $n_perf samples; profil: $n_profil observations"

# Shares of the program's three functions, each among the three (perf
# also counts time in the kernel, which profil charges to the user pc).
norm() {	# CSV FUNCTION
	awk -F, -v fn="$2" '
		{ sub(/\.constprop\.[0-9]+$/, "", $1) }
		$1 ~ /^spin_(one|two|three)$/ { all += $2; if ($1 == fn) s += $2 }
		END { printf "%.2f\n", all ? 100 * s / all : 0 }' "$1"
}
# With n observations a share p has a standard deviation of
# sqrt(p(1-p)/n); the difference of two independent shares has the root
# of the sum of their variances.  Four of those, and a point for the
# kernel's share that perf sees apart, is the bound.
bound() {	# SHARE
	awk -v p="$1" -v a="$n_perf" -v b="$n_profil" 'BEGIN {
		p /= 100; if (a < 1 || b < 1) { print 100; exit }
		printf "%.2f\n", 1 + 400 * sqrt(p * (1 - p) * (1 / a + 1 / b)) }'
}
worst=0
for fn in spin_three spin_two spin_one; do
	a=$(norm perf.csv $fn); b=$(norm profil.csv $fn)
	d=$(awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d; printf "%.2f", d }')
	lim=$(bound "$a")
	echo "$fn: perf $a%, profil $b%, difference $d points (bound $lim)"
	within "$b" "$a" "$lim" || no "$fn: profil $b%, perf $a%"
	worst=$(awk -v w="$worst" -v d="$d" 'BEGIN { print (d > w) ? d : w }')
done
echo "largest difference: $worst points"

[ $fail -eq 0 ] && echo "cli_perf: all checks passed"
exit $fail
