#!/bin/sh
# stacks_perf.sh BUILD - call stacks under the perf backend (SPEC section
# 10): tests/cli/stacks_perf_work.c (its own recursion, a qsort callback
# into its comparator, zlib, two threads) run under profil run with
# stacks on.  The stacks, walked from perf's copies of the stack, reach
# the outermost frame in at least 99.5% of the samples, every complete
# one has the callers the program really has (stacks_perf_check.c), both
# threads have theirs, the statistics' stop counts are those of the
# stack table, and no thread fell back to a timer; stacks.sh's hostile
# cases end normally under perf too.
#
# Then, where perf record works (not in the sanitizer build): the
# program under perf record --call-graph dwarf and under profil run, both
# at 5 kHz, and the shares of the samples that pass through each caller->callee edge of
# the program's functions agree within sampling error (4 standard
# deviations of the difference of two independent shares: about 2
# points at the 17 000 samples each takes here) and the share of
# profil's samples that were lost (2-5% at 5 kHz on a loaded machine,
# which is what makes differences past 2 points: 2.6 at 5.4% lost).
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

if ! prun --backend perf -o probe.prof true > probe.out 2>&1; then
	echo "skip: the perf backend cannot run here: $(head -n 1 probe.out)"
	exit 0
fi
cc -O2 -g -rdynamic -pthread $san_cflags -o work "$root/tests/cli/stacks_perf_work.c" -lz || exit 1
cc -O2 -g -o check "$root/tests/cli/stacks_perf_check.c" "$root/src/format/profile.c" "$root/src/format/profile_guard.c" \
	"$root/src/common/bins.c" || exit 1

# field NAME FILE: the number after NAME in check's output.
field() {
	tr ' ' '\n' < "$2" | awk -v n="$1" 'p { print; exit } $0 == n { p = 1 }'
}

# ASan's frames are larger (redzones), and some are in its fake stacks
# (never in the copy): there, a copy twice the default, and 98%.
copy=8192 want=0.995
[ -n "$asan_pre" ] && copy=16384 want=0.98
PROFIL_STACK_COPY=$copy PROFIL_BACKEND=perf prun -F 1000 -o p.prof ./work 0.3 syms > out 2> err ||
	no "profil run: status $?: $(cat err)"
./check p.prof/*.prof syms > res 2> wrong || no "check: $(cat res wrong)"
cat res
n=$(field samples res); complete=$(field complete res); wrong=$(field wrong res)
[ "${n:-0}" -ge 1000 ] || no "$n samples with stacks, want at least 1000"
awk -v c="$complete" -v n="$n" -v w=$want 'BEGIN { exit !(n > 0 && c >= w * n) }' ||
	no "$complete of $n stacks complete, want $want of them"
[ "$wrong" = 0 ] || no "$wrong complete stacks with callers the program does not have: $(head -n 3 wrong)"
# Each thread runs the same phases: neither has less than a third.
for t in main other; do
	v=$(field $t res)
	awk -v v="$v" -v n="$complete" 'BEGIN { exit !(v >= n / 3) }' ||
		no "the $t thread has $v of the $complete complete stacks"
done
[ "$(field backend res)" = 1 ] || no "backend $(field backend res), not perf"
[ "$(field fallback res)" = 0 ] || no "$(field fallback res) threads fell back to a timer"
[ "$(field copy res)" = $copy ] || no "stack copy $(field copy res) in the file, want $copy"
# The statistics' walks by stop reason are the stack table's samples by
# stop reason, and they add up to the samples with stacks.
stop=$(sed -n 's/^stop: //p' res); slots=$(sed -n 's/^slots by stop: //p' res)
[ "$stop" = "$slots" ] || no "stop counts $stop, the table's $slots"
sum=$(echo "$stop" | tr ' ' '\n' | awk '{ s += $1 } END { print s + 0 }')
[ "$sum" = "$(field stacks res)" ] || no "stop counts add up to $sum, stacks $(field stacks res)"
# Every sample has its stack, the system time the drain timers charge
# too (walked from the timer signal's context).
[ "$(field counted res)" = "$(field stacks res)" ] ||
	no "counted $(field counted res) != stacks $(field stacks res) (system $(field system res))"

# stacks.sh's hostile cases under the perf backend (garbage rbp,
# makecontext stacks, a handler on a small sigaltstack, dlopen/dlclose
# in a loop, vfork children): they end normally, with stacks kept.  The
# walk reads only the copy: from a sigaltstack it ends there (COPY), as
# it does from garbage registers (NO_OBJECT).
cc -O2 -g -pthread $san_cflags -o stacks "$root/tests/cli/stacks.c" -lz || exit 1
cc -O1 -g -I"$root/src" -o stackcheck "$root/tests/cli/stackcheck.c" \
	"$root/src/format/profile.c" "$root/src/format/profile_guard.c" "$root/src/common/bins.c" || exit 1
nm -S --defined-only stacks > stacks.nm
for mode in garbage ucontext altstack dlopen vfork; do
	timeout 120 $prun_cmd --backend perf -o $mode.prof ./stacks $mode 1 > $mode.out 2>&1 ||
		{ tail -n 5 $mode.out; no "$mode: status $?"; continue; }
	./stackcheck "$(ls $mode.prof/stacks.*.prof | head -n 1)" stacks.nm any > $mode.txt ||
		{ cat $mode.txt; no "$mode: no stacks"; }
	kept=$(awk '/^stacks/ { print $2 }' $mode.txt)
	[ "${kept:-0}" -gt 0 ] || no "$mode: no stack kept"
	echo "$mode: $kept stacks, $(sed -n 2p $mode.txt | awk '{ print $1, $3 }')"
done

if [ -n "$asan_pre" ]; then
	echo "skip: perf record comparison (the plain build's)"
elif ! perf record -q -e task-clock:u -F 100 -o probe.data true > perf.log 2>&1; then
	echo "skip: perf record cannot run here: $(tail -n 1 perf.log)"
else
	# Two runs: perf record's dwarf unwinding of a program under profil
	# run stops after the first frame in libc in most runs (perf 6.1),
	# and the program's shares are set by its CPU time, not by the run.
	PROFIL_BACKEND=perf prun -F 5000 -o q.prof ./work 0.6 qsyms > out 2> err ||
		no "profil run: status $?: $(cat err)"
	perf record -q -e task-clock:u -F 5000 --call-graph dwarf,4096 -o perf.data \
		./work 0.6 psyms > out 2> err || no "perf record: status $?: $(tail -n 2 err)"
	./check q.prof/*.prof qsyms --folded > profil.folded
	./check q.prof/*.prof qsyms > qres
	sed -n 2p qres
	# Samples lost (rings the kernel found full, throttling) may all be
	# of one edge: their share is added to the bound.
	lost=$(awk -v t="$(field taken qres)" -v l="$(field lost qres)" \
		'BEGIN { printf "%.2f", (t > 0 ? 100 * l / t : 100) }')
	fns=$(awk '$1 == "fn" { printf "%s%s", s, $2; s = " " }' qsyms)
	# perf script's frames, innermost first, folded as check names them;
	# only complete stacks on either side (perf's libdw unwinding stops
	# early in a few percent of the samples of some runs).
	perf script -i perf.data -F comm,ip,sym,dso --no-inline 2> /dev/null | awk -v fns="$fns" '
		BEGIN { split(fns, f, " "); for (i in f) own[f[i]] = 1 }
		function flush(   i, s) {
			if (keep && n && (last == "_start" || last == "clone3")) { s = name[n]; for (i = n - 1; i >= 1; i--) s = s ";" name[i]; print s " 1" }
			n = 0
		}
		/^[^ \t]/ { flush(); keep = $1 == "work"; next }
		NF >= 2 { dso = $NF; sym = last = $2
			  name[++n] = (sym in own) && dso ~ /\/work\)$/ ? sym : dso ~ /\/libc\.so/ ? "libc" : dso ~ /\/libz\.so/ ? "libz" : "other" }
		END { flush() }' > perf.folded
	# edges FOLDED: "caller>callee SHARE%" for each edge between the
	# program's functions (library frames between them skipped), then
	# "total N".
	edges() {
		awk -v fns="$fns" '
			BEGIN { split(fns, f, " "); for (i in f) own[f[i]] = 1 }
			{ c = $NF; total += c; m = split($1, fr, ";"); prev = ""; delete seen
			  for (i = 1; i <= m; i++) {
				if (!(fr[i] in own)) continue
				if (prev != "" && !((prev ">" fr[i]) in seen)) { seen[prev ">" fr[i]] = 1; e[prev ">" fr[i]] += c }
				prev = fr[i] } }
			END { for (k in e) printf "%s %.4f\n", k, 100 * e[k] / total; print "total", total }' "$1"
	}
	edges profil.folded > profil.edges
	edges perf.folded > perf.edges
	a=$(awk '$1 == "total" { print $2 }' perf.edges); b=$(awk '$1 == "total" { print $2 }' profil.edges)
	echo "complete stacks: perf record $a, profil $b"
	[ "${a:-0}" -ge 5000 ] && [ "${b:-0}" -ge 5000 ] || no "too few samples: perf $a, profil $b"
	awk -v a="$a" -v b="$b" -v lost="$lost" '
		FNR == 1 { file++ }
		$1 != "total" { s[$1, file] = $2; k[$1] = 1 }
		END {
			bad = 0; worst = 0
			for (e in k) {
				p = s[e, 1] + 0; q = s[e, 2] + 0
				if (p < 1 && q < 1) continue
				x = p / 100; lim = 400 * sqrt(x * (1 - x) * (1 / a + 1 / b)) + lost
				d = p - q; if (d < 0) d = -d; if (d > worst) worst = d
				printf "%-24s perf %6.2f%%  profil %6.2f%%  difference %.2f (bound %.2f)\n", e, p, q, d, lim
				if (d > lim) { print "not ok: edge " e ": perf " p "%, profil " q "%"; bad = 1 }
			}
			printf "largest difference: %.2f points\n", worst
			exit bad
		}' perf.edges profil.edges || fail=1
fi

[ $fail -eq 0 ] && echo "stacks_perf: all checks passed"
exit $fail
