#!/bin/sh
# cli_notes.sh BUILD - what report says about the threads and processes
# it shows, under each backend: --threads says how many threads had no
# sample and so no row (idle threads of tests/cli/idle.c); under --tid
# or --comm the header gives the CPU time of the threads kept (their
# samples times the time of one), beside the process's; a process whose
# file is still open is "still running when read", and once killed
# "did not exit normally", as is a live process that started after the
# file did (a pid reused).
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

cc -O2 -g -pthread -o idle "$root/tests/cli/idle.c" || exit 1
cc -O2 -g -pthread -o threads "$root/tests/cli/threads.c" || exit 1
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1
# json FILE KEY: a number of report's JSON object.
json() {
	tr ',{' '\n\n' < "$1" | awk -F: -v k="\"$2\"" '$1 == k { print $2; exit }'
}

for be in perf timer; do
	# Three idle threads: each either has a row (a sample while it
	# started) or is in the note; at least one is in the note.
	prun --backend "$be" -o "idle.$be.prof" ./idle 3 20 2>/dev/null || no "$be: idle: status $?"
	"$profil" report --threads "idle.$be.prof" > "idle.$be.txt" || no "$be: report --threads"
	"$profil" report --threads --format json "idle.$be.prof" > "idle.$be.json"
	silent=$(sed -n 's/^\([0-9]*\) more threads\? had no sample (asleep or waiting all along): not shown$/\1/p' \
		"idle.$be.txt")
	rows=$(grep -c ' idle[0-9] *$' "idle.$be.txt")
	if [ -z "$silent" ] || [ $((silent + rows)) -ne 3 ]; then
		cat "idle.$be.txt"; no "$be: idle threads: note '${silent:-none}' + $rows rows, not 3"
	else
		echo "ok: $be: $(tail -1 "idle.$be.txt")"
	fi
	[ "$(json "idle.$be.json" threads_without_samples)" = "${silent:-x}" ] \
		|| no "$be: json threads_without_samples $(json "idle.$be.json" threads_without_samples)"
	"$profil" report --threads "idle.$be.prof" --comm 'idle*' | grep -q "had no sample" \
		&& no "$be: the note under --comm, which cannot tell names"

	# --comm large: the CPU time of the threads kept, by their samples.
	prun --backend "$be" -o "thr.$be.prof" ./threads "thr.$be.cpu" 30 2>/dev/null || no "$be: threads: status $?"
	"$profil" report --comm large --format json "thr.$be.prof" > "large.$be.json" || no "$be: --comm json"
	"$profil" report --comm large "thr.$be.prof" > "large.$be.txt" || no "$be: --comm text"
	line=$(head -1 "large.$be.txt")
	kept=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) s of CPU time in the threads kept (\([0-9.]*\) s in all),.*/\1 \2/p')
	set -- $kept
	all=$(json "large.$be.json" cpu_seconds) taken=$(json "large.$be.json" taken)
	ks=$(json "large.$be.json" kept_samples) kc=$(json "large.$be.json" kept_cpu_seconds)
	if [ $# -ne 2 ]; then
		no "$be: header '$line' gives no CPU time of the threads kept"
	elif ! within "$1" "$(awk -v s="$ks" -v a="$all" -v t="$taken" 'BEGIN { print s * a / t }')" 0.0015 \
		|| ! within "$1" "$kc" 0.0015 || ! within "$2" "$all" 0.0015; then
		no "$be: '$line': kept $1 s, expected $ks samples of $taken in $all s (json $kc)"
	elif ! awk -v k="$1" -v a="$2" 'BEGIN { exit !(k > 0 && k < a) }'; then
		no "$be: '$line': the threads kept have not less than all"
	else
		echo "ok: $be: $line"
	fi
done

# A process at work: still running when read; killed, it did not exit
# normally.
preload=$B/lib/libprofil.so
[ -n "$asan_pre" ] && preload=$asan_pre:$preload
env LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 PROFIL_RUN=1 PROFIL_OUT=live.prof \
	./spin 1000000 &
pid=$!
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	[ -s live.prof ] && break
	sleep 0.25
done
sleep 0.5
"$profil" report live.prof > live.txt || no "report of a live process: status $?"
"$profil" report --format json live.prof > live.json
grep -q "^1 process was still running when read (pid $pid): the profile is of its samples so far$" live.txt \
	&& ! grep -q "did not exit normally" live.txt || { cat live.txt; no "live: not said to be running"; }
[ "$(json live.json still_running)" = 1 ] && [ "$(json live.json unfinished)" = 1 ] \
	|| no "live: json still_running $(json live.json still_running), unfinished $(json live.json unfinished)"
# The same pid, in a copy whose pid is that of a spin started after it
# (a second later: report allows half a second for clocks).
sleep 1
./spin 1000000 &
later=$!
cp live.prof reused.prof
# The pid field (offset 32, src/format/profile.h), little-endian.
printf "$(printf '\\%03o\\%03o\\%03o\\%03o' $((later & 255)) $((later >> 8 & 255)) \
	$((later >> 16 & 255)) $((later >> 24 & 255)))" | dd of=reused.prof bs=1 seek=32 conv=notrunc 2>/dev/null
[ "$(od -An -td4 -j32 -N4 reused.prof | tr -d ' ')" = "$later" ] || no "reused: the pid was not written"
"$profil" report reused.prof > reused.txt || no "report reused: status $?"
grep -q "still running" reused.txt && no "a pid reused by a later process: said to be running"
grep -q "^1 process did not exit normally" reused.txt || { cat reused.txt; no "reused: not 'did not exit normally'"; }
kill -KILL $pid $later
wait $pid $later 2>/dev/null
"$profil" report live.prof > dead.txt || no "report of a killed process: status $?"
grep -q "still running" dead.txt && no "killed: still said to be running"
grep -q "^1 process did not exit normally" dead.txt && echo "ok: live, reused and killed" \
	|| { cat dead.txt; no "killed: not 'did not exit normally'"; }

[ $fail -eq 0 ] && echo "cli_notes: all checks passed"
exit $fail
