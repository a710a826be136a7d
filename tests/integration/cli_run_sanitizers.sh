#!/bin/sh
# cli_run_sanitizers.sh BUILD - programs built with -fsanitize=address
# (libasan linked dynamically) and -fsanitize=thread run under profil
# run and are profiled, under each backend (TSan: perf only) (issue 23: ASan refused to
# start, "ASan runtime does not come first in initial library list", and
# profil then blamed static linking).  A real error is still ASan's to
# report, with ASan's exit status.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
backends=${PROFIL_BACKENDS:-perf timer}
[ -n "$asan_pre" ] && backends=auto

for san in address thread; do
	if ! cc -O1 -g -fsanitize=$san -o spin_$san "$root/tests/cli/spin.c" 2>/dev/null; then
		echo "no -fsanitize=$san here: not tested"
		continue
	fi
	# The sanitizer build of libprofil runs with libasan preloaded:
	# TSan cannot start beside it.
	[ $san = thread ] && [ -n "$asan_pre" ] && continue
	for be in $backends; do
		d=$san.$be
		# TSan holds an asynchronous signal back until the thread next
		# enters its runtime at a point it deems safe: a loop of plain
		# computation gets 2 of the timer's ~1000 signals.  Not ours to fix.
		[ $san.$be = thread.timer ] && { echo "$d: not tested (TSan defers the timer's signal)"; continue; }
		units=60 stacks=
		[ $san = thread ] && units=10	# each access checked: 10 times slower
		# It holds the perf backend's drain signal back as well: a ring
		# of samples with stacks (8 KiB each, about 24 to a ring) fills,
		# and 97% are lost as "ring full" (profil(1) BUGS); without
		# stacks a ring holds 2048.
		[ $san = thread ] && stacks=--no-stacks
		prun --backend "$be" $stacks -o "$d" ./spin_$san $units > "$d.out" 2> "$d.err" \
			|| no "$d: status $?: $(cat "$d.err")"
		grep -q "^profil: wrote " "$d.err" || no "$d: $(cat "$d.err")"
		grep -v "^profil: wrote " "$d.err" | grep . && no "$d: more on stderr"
		"$profil" report --format csv "$d" > "$d.csv" 2>&1 || no "$d: report: $(cat "$d.csv")"
		adds_up "$d" || no "$d: the statistics do not add up"
		s=$(share "$d.csv" spin_three spin_$san)
		if [ $san = address ]; then
			within "$s" 50 12 || no "$d: spin_three has $s%, expected 50"
		else	# most of the time is TSan's checking of each access
			t=$(awk -F, 'NR > 1 && $6 ~ /libtsan/ { s += $1 } END { print s + 0 }' "$d.csv")
			awk -v s="$s" -v t="$t" 'BEGIN { exit !(s > 0 && t > 50) }' \
				|| no "$d: spin_three $s%, libtsan $t%: $(head -n 5 "$d.csv")"
		fi
		echo "$d: spin_three $s%"
	done
done

# A use after free: ASan reports it (its report on stderr, its status 1),
# and the profile is there.
printf '%s\n' '#include <stdlib.h>' '#include <stdio.h>' \
	'int main(void) { char *volatile p = malloc(10); free(p); p[0] = 1; puts("not reached"); return 0; }' > uaf.c
if cc -O0 -g -fsanitize=address -o uaf uaf.c 2>/dev/null; then
	prun -o uaf.run ./uaf > uaf.out 2> uaf.err; st=$?
	[ $st -eq 1 ] || no "use after free: status $st, not ASan's 1"
	grep -q "ERROR: AddressSanitizer: heap-use-after-free" uaf.err || no "use after free: not reported: $(head -n 3 uaf.err)"
	grep -q "not reached" uaf.out && no "use after free: went on"
fi

[ $fail -eq 0 ] && echo "cli_run_sanitizers: all checks passed"
exit $fail
