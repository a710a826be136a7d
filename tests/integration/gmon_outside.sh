#!/bin/sh
# gmon_outside.sh BUILD - a -pg program linked with libprofil records
# what gmon.out cannot hold, in NAME.stats beside it: the process's CPU
# time and the samples outside the text.  half.c spends about half its
# CPU time in libc and libm (measured by the program itself); the
# report's outside share is that half within the sampling error, its CPU
# time the process's, its kernel time the companion's, gprof still
# reads the gmon.out, and report gmon.* takes the companion as part of
# the gmon.out beside it, not as a profile of its own.  A gmon.out
# from glibc's own runtime has no companion: the report says "not
# recorded", never "outside 0".  Both backends.
. "$(dirname "$0")/../gmon/lib.sh"

profil=$(cd "$B/bin" && pwd)/profil
# build() puts its flags before the source, where -lm does not reach.
$CC $cflags -o "$tmp/half" "$root/tests/gmon/half.c" -L"$lib" -Wl,-rpath,"$lib" -lprofil -lm ||
	{ echo "cannot build half" >&2; exit 1; }
$CC -pg -O2 -o "$tmp/half_glibc" "$root/tests/gmon/half.c" -lm ||
	{ echo "cannot build half_glibc" >&2; exit 1; }
cd "$tmp" || exit 1

for be in perf timer; do
	rm -f gmon.*
	PROFIL_BACKEND=$be ./half 0.4 > out 2> err || fail "[$be] half exited $?"
	pid=$(field pid) lib=$(field lib) total=$(field total)
	f=gmon.half.$pid.out
	[ -f "$f.stats" ] || { fail "[$be] no $f.stats: $(ls)"; continue; }
	gprof -b -p half "$f" > gp 2> gperr && grep -q ' mine$' gp ||
		fail "[$be] gprof does not read $f: $(cat gperr)"
	"$profil" report "$f" > rep 2> reperr || fail "[$be] report: $(cat reperr)"
	line=$(grep '^samples taken' rep)
	counted=$(echo "$line" | sed -n 's/.*counted \([0-9]*\) .*/\1/p')
	outside=$(echo "$line" | sed -n 's/.* outside \([0-9]*\) .*/\1/p')
	cpu=$(sed -n 's/.*, \([0-9.]*\) s of CPU time,.*/\1/p' rep)
	echo "[$be] $line"
	echo "[$be] report: $cpu s of CPU; the program measured $total s, $lib s in libc and libm"
	[ -n "$counted" ] && [ -n "$outside" ] && [ -n "$cpu" ] ||
		{ fail "[$be] report header: $(head -3 rep)"; continue; }
	# The library's share of the samples placed (counted + outside) is a
	# binomial proportion: 6 standard errors, plus 0.05 for what the
	# program's clock cannot split (the loops around the calls are in
	# the text; the clock reads themselves in libc).
	awk -v c="$counted" -v o="$outside" -v l="$lib" -v t="$total" 'BEGIN {
		n = c + o; if (n < 100) exit 1
		p = l / t; q = o / n; se = sqrt(p * (1 - p) / n)
		exit !(q >= p - 6 * se - 0.05 && q <= p + 6 * se + 0.05) }' ||
		fail "[$be] outside $outside of $((counted + outside)) samples; the library had $lib of $total s"
	# The companion's CPU time is the process's clock at the last write
	# (after the program's own reading, before exit ends); the report's,
	# by the samples at 1/rate each as gprof counts them, is that within
	# 6 standard errors of the count.
	# The kernel time the companion counted is the report's, and gmon.*
	# (the gmon.out and its companion) is the same one profile.
	sys=$(sed -n 's/^system //p' "$f.stats")
	echo "$line" | grep -q "; $sys for time in the kernel$" ||
		fail "[$be] the report's kernel time is not the companion's $sys: $line"
	"$profil" report gmon.* > glob 2> globerr || fail "[$be] report gmon.*: $(cat globerr)"
	cmp -s rep glob || fail "[$be] report gmon.* differs from report $f: $(head -2 glob)"
	clock=$(sed -n 's/^cpu_ns //p' "$f.stats")
	awk -v c="$clock" -v t="$total" 'BEGIN { c /= 1e9; exit !(c >= t - 0.001 && c <= t * 1.1 + 0.05) }' ||
		fail "[$be] $f.stats says $clock ns of CPU; the process used $total s"
	awk -v c="$cpu" -v t="$total" 'BEGIN { se = sqrt(t * 1000) / 1000
		exit !(c >= t - 6 * se - 0.01 && c <= t * 1.1 + 6 * se + 0.05) }' ||
		fail "[$be] report says $cpu s of CPU; the process used $total s"
done

# glibc's runtime: no companion, the figures are not known.
rm -f gmon.*
./half_glibc 0.2 > out 2> err || fail "half_glibc exited $?"
"$profil" report --exe half_glibc gmon.out > rep 2> reperr || fail "glibc: report: $(cat reperr)"
head -2 rep
grep -q '^samples taken not recorded = counted [0-9]* + outside not recorded' rep ||
	fail "glibc gmon.out: outside not said to be not recorded: $(head -3 rep)"
grep -q 'CPU time not recorded' rep || fail "glibc gmon.out: CPU time given: $(head -1 rep)"
grep -q 'outside 0' rep && fail "glibc gmon.out: outside 0"
"$profil" report --exe half_glibc --format json gmon.out | grep -q '"outside":null' ||
	fail "glibc gmon.out: JSON outside is not null"

# A companion that is not one: one line naming it, the counts still.
./half 0.05 > out 2> err
f=gmon.half.$(field pid).out
echo "cpu_ns 12" > "$f.stats"
"$profil" report "$f" > rep 2> reperr || fail "bad companion: report failed: $(cat reperr)"
grep -q "$f.stats: not a profil-gmon-stats 1 file" reperr ||
	fail "bad companion: said $(cat reperr)"
grep -q 'outside not recorded' rep || fail "bad companion: $(sed -n 2p rep)"
done_testing
