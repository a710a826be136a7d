#!/bin/sh
# run_sizes.sh BUILD - profil run's files are sized to what they hold
# (issue 15): a tree of 200 short processes, under each backend, with
# stacks and without, leaves 203 files that each pack into a few pages
# (a sparse 19 MB each before, 3.7 GB in all), every one read whole by
# report; a process killed hard leaves one too, packed once it is gone,
# and read; the run's unwind tables (RUN_CACHE_DIR) and the spare file
# packing reuses (profile_pack.c) are gone at the end.
# Deterministic: sizes, not times (make bench has the CPU time).
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

# Bounds: a short process's file holds its header, the pack table, a
# page of thread table, the extension page, and the heads of its
# objects' segments (ten here): 13 pages, 52 KiB, and a few pages more
# for each counter page a sample or two of its reached.  128 KiB for
# each /bin/true, 1 MiB for the shells that ran the loop and seq (the
# loop's shell takes samples: 140 KiB), 16 MiB in all: 150, 19 and 230
# times under the sparse 19 MB each and 3.7 GB in all.
each_max=$((128 * 1024))
other_max=$((1024 * 1024))
all_max=$((16 * 1024 * 1024))
# ASan's runtime, preloaded beside us, is ten more segments in each file:
# 19.2 MB in all in the sanitizer pass.
[ -n "$asan_pre" ] && all_max=$((24 * 1024 * 1024))
killed_max=$((1024 * 1024))
for be in perf timer; do
	for st in --stacks --no-stacks; do
		d="loop.$be$st"
		prun --backend "$be" $st -o "$d" sh -c 'for i in $(seq 200); do /bin/true; done' \
			2>/dev/null || no "$be $st: status $?"
		n=$(ls "$d" | grep -c '\.prof$')
		[ "$n" -eq 203 ] || no "$be $st: $n files, not 203"
		[ -e "$d/.unwind" ] && no "$be $st: the unwind tables were left in the run"
		# The emptied file profile_pack reuses for each next copy is
		# gone at the end, and nothing else is in the run.
		left=$(ls -A "$d" | grep -v '\.prof$')
		[ -z "$left" ] && [ "$(ls -A "$d" | wc -l)" -eq 203 ] \
			|| no "$be $st: left in the run besides its profiles: $left"
		all=0
		for f in "$d"/*.prof; do
			sz=$(stat -c %s "$f")
			all=$((all + sz))
			max=$other_max
			case ${f##*/} in true.*) max=$each_max ;; esac
			[ "$sz" -le "$max" ] || no "$be $st: ${f##*/}: $sz bytes, over $max"
			"$profil" report "$f" > /dev/null 2> err || no "$be $st: ${f##*/}: $(cat err)"
		done
		[ "$all" -le "$all_max" ] || no "$be $st: $all bytes in all, over $all_max"
		echo "$be $st: $n files, $all bytes in all"
	done
done

# Killed hard: its file was left running, and is packed once it is gone.
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1
prun -o killed sh -c './spin 1000 & sleep 0.5; kill -9 $!; wait' 2>/dev/null
f=$(ls killed/spin.*.prof 2>/dev/null | head -n 1)
if [ -z "$f" ]; then
	no "killed: no file"
else
	sz=$(stat -c %s "$f")
	[ "$sz" -le "$killed_max" ] || no "killed: $sz bytes, over $killed_max"
	# Flags at byte 48: PROFILE_F_PACKED is 16; state at 12: 1, running.
	[ $(( $(od -An -tu1 -j48 -N1 "$f") & 16 )) -eq 16 ] || no "killed: not packed"
	[ "$(od -An -tu4 -j12 -N4 "$f" | tr -d ' ')" -eq 1 ] || no "killed: not left running"
	"$profil" report "$f" > killed.txt 2>&1 || no "killed: report: $(cat killed.txt)"
	grep -q 'spin' killed.txt || no "killed: no row of spin"
fi

[ "$fail" -eq 0 ] && echo "run_sizes: all checks passed"
exit "$fail"
