#!/bin/sh
# classic_report.sh BUILD - profil report reads what the classic calls
# write: a pcsample file saved by profil_pcsample_save and the mon.out
# monitor writes, each with the work in the proportion it was done
# (spin_three 3 : spin_one 1); both together add up; a file cut short
# or corrupt gets one line naming it and a non-zero status.  Samples in
# the vDSO (vdso.pcs) are reported under [vdso], no file looked for.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"

san=
readelf -d "$B/lib/libprofil.so" | grep -q libasan && san="-fsanitize=address,undefined"
cd "$tmp" || exit 1
cc $san -O2 -g -I"$root/include" -o classic "$root/tests/cli/classic.c" \
	-L"$B/lib" -Wl,-rpath,"$B/lib" -lprofil || { echo "not ok: build"; exit 1; }
ASAN_OPTIONS=detect_leaks=0 ./classic 250 || no "classic: status $?"

for f in work.pcs mon.out; do
	"$profil" report "$f" > "$f.txt" 2> "$f.err" || { cat "$f.err"; no "report $f: status $?"; }
	cat "$f.txt"
	"$profil" report --format csv "$f" > "$f.csv" || no "report --format csv $f"
	three=$(share "$f.csv" spin_three classic); one=$(share "$f.csv" spin_one classic)
	echo "$f: spin_three $three%, spin_one $one%"
	within "$three" 75 10 || no "$f: spin_three $three%, expected 75"
	within "$one" 25 10 || no "$f: spin_one $one%, expected 25"
	awk '/^samples taken/ { if ($3 != $6 + $9 + $12) exit 1; ok = 1 } END { exit !ok }' "$f.txt" \
		|| no "$f: statistics do not add up"
done
n1=$(awk '/^samples taken/ { print $3 }' work.pcs.txt)
n2=$(awk '/^samples taken/ { print $3 }' mon.out.txt)
"$profil" report work.pcs mon.out > both.txt || no "report of both"
awk -v n=$((n1 + n2)) '/^samples taken/ { if ($3 != n) exit 1; ok = 1 } END { exit !ok }' both.txt \
	|| no "both files do not add up to $n1 + $n2"

"$profil" report --format csv vdso.pcs > vdso.csv 2> vdso.err || { cat vdso.err; no "report vdso.pcs: status $?"; }
vdso=$(awk -F, 'NR > 1 && $5 == "[vdso]" { s += $1 } END { printf "%.0f\n", s + 0 }' vdso.csv)
echo "vdso.pcs: [vdso] $vdso%"
[ "$vdso" -ge 30 ] || { cat vdso.csv; no "vdso.pcs: [vdso] $vdso%, expected most of the time"; }

# Cut short, or with the footer's histogram size changed: one line, status 1.
head -c 100 work.pcs > short.pcs
size=$(wc -c < mon.out)
{ head -c $((size - 40)) mon.out; printf 'XXXX'; tail -c 36 mon.out; } > bad.out
for f in short.pcs bad.out; do
	"$profil" report "$f" > out.txt 2> err.txt && no "report $f succeeded"
	[ "$(wc -l < err.txt)" -eq 1 ] && grep -q "$f" err.txt || { cat err.txt; no "report $f: not one line naming it"; }
	cat err.txt
done
[ $fail -eq 0 ] && echo "classic_report: all checks passed"
exit $fail
