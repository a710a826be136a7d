#!/bin/sh
# unwind_cache_bad.sh BUILD - a run's cached unwind tables (.unwind, the
# tables one process builds and the run's later ones map, unwcache.c)
# are not read through at load; a table whose rows name rules it does
# not have must still cost the program nothing.  Between two processes
# of a run, every table's row rule indices are set to 0xffff (a copy
# renamed over each, as the runtime writes them): the later process,
# walking its stacks in our handler (timer) or in its drains (perf),
# runs to its end, its walks stop where the rules end, and its profile
# reads.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1

# The file: an 8-byte magic, then nrows (u32); the row rule indices,
# 2 bytes a row, end it.
cat > spoil.sh <<'SH'
n=0
for f in "$1"/.unwind/*; do
	[ -f "$f" ] || continue
	rows=$(od -An -tu4 -j8 -N4 "$f" | tr -d ' ')
	size=$(stat -c %s "$f")
	cp "$f" "$f.new" || exit 1
	head -c $((2 * rows)) /dev/zero | tr '\0' '\377' |
		dd of="$f.new" bs=4096 oflag=seek_bytes seek=$((size - 2 * rows)) conv=notrunc 2>/dev/null || exit 1
	mv "$f.new" "$f" || exit 1
	n=$((n + 1))
done
echo "$n" > spoiled
SH

for be in timer perf; do
	d=run.$be
	rm -f spoiled
	prun --backend "$be" --stacks -o "$d" sh -c "./spin 5 && sh spoil.sh $d && ./spin 60; echo \$? > status" \
		> out 2>&1 || no "$be: profil run said $? ($(tail -n 2 out))"
	[ "$(cat status 2>/dev/null)" = 0 ] || no "$be: the second spin ended with '$(cat status 2>/dev/null)'"
	n=$(cat spoiled 2>/dev/null || echo 0)
	[ "$n" -ge 2 ] || no "$be: $n tables spoiled, not the program's and libc's at least"
	# The later spin is the one of 60 units, not 5: the profile with
	# more samples.  The files' times are not their order: as the run
	# ends, profil run sizes each profile to what it holds.
	n_spin=0 second= most=-1
	for f in "$d"/spin.*.prof; do
		[ -f "$f" ] || continue
		n_spin=$((n_spin + 1))
		s=$("$profil" report "$f" 2>/dev/null | sed -n 's/^Flat profile: \([0-9]*\) samples.*/\1/p')
		[ "${s:-0}" -gt "$most" ] && most=${s:-0} second=$f
	done
	[ "$n_spin" = 2 ] || { no "$be: $n_spin profiles of spin, not two"; continue; }
	"$profil" report "$second" > rep 2> err || no "$be: report: $(cat err)"
	# "stacks: N samples with a stack (...), P% of them complete": the
	# walks with the spoiled tables stop at their first frame.
	complete=$(sed -n 's/^stacks: .*, \([0-9.]*\)% of them complete.*/\1/p' rep)
	[ -n "$complete" ] || no "$be: no stacks line in the report"
	[ -n "$complete" ] && ! within "$complete" 100 1 \
		|| no "$be: $complete% of the walks complete with spoiled tables"
	echo "$be: $n tables spoiled; the later process ended with status $(cat status 2>/dev/null), $complete% of its walks complete"
done
exit $fail
