#!/bin/sh
# cli_kill.sh BUILD - a process killed with SIGKILL under profil run
# leaves a profile that reads: the counts it took are all there, its
# statistics lag by at most about a second, and the report says so
# (its stacks, whole too, are counted from the slots):
# profil run saw the signal that killed it, and the file says which.
# profil run dies of the same signal.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

cc -O2 -g -o spin "$root/tests/cli/spin.c"
prun -o k.prof ./spin 100042 2>/dev/null &
runner=$!
# Wait for the process's file in the run directory, then for about a
# second of the program's CPU time (wall time is no measure on a busy
# machine).
i=0
while ! ls k.prof/*.prof >/dev/null 2>&1 && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
pid=$(pgrep -f "^\./spin 100042$" | head -n 1)
i=0
while [ -n "$pid" ] && [ $i -lt 600 ]; do
	ticks=$(awk '{print $14}' /proc/$pid/stat 2>/dev/null || echo 0)
	[ "${ticks:-0}" -ge $(( $(getconf CLK_TCK) * 6 / 5 )) ] && break
	sleep 0.05; i=$((i + 1))
done
# By its own id only: other tests on the machine may run a spin too.
[ -n "$pid" ] && kill -KILL "$pid"
wait "$runner"
st=$?
[ $st -eq 137 ] || no "profil run: status $st, not 137 (killed by SIGKILL)"
"$profil" report k.prof > k.txt 2>&1 || { cat k.txt; no "report of a killed process: status $?"; }
cat k.txt
grep -q "^1 process was killed by signal 9 (Killed): counts whole, statistics of up to 1 s before its end$" k.txt \
	|| no "report does not say the process was killed by SIGKILL"
grep -q "did not exit normally" k.txt && no "a kill profil run saw reported as not known"
# The stack slots are whole too, though the statistics that count them
# lag: the stacks line counts the slots (it said 1.1% for a crash after
# 0.09 s, its statistics published once).
grep -Eq "^stacks: [0-9]+ samples with a stack \((99\.[0-9]|100\.0)% of those counted\)" k.txt \
	|| no "stacks after a kill: $(grep '^stacks:' k.txt)"
"$profil" merge -o m.prof k.prof 2>/dev/null || no "merge of a killed process's profile"
"$profil" report m.prof 2>/dev/null | grep -Eq "^stacks: [0-9]+ samples with a stack \((99\.[0-9]|100\.0)% of those counted\)" \
	|| no "stacks after a kill, merged: $("$profil" report m.prof 2>&1 | grep '^stacks:')"
"$profil" report --format json k.prof > k.json || no "json"
counted=$(sed 's/^{"samples":\([0-9]*\).*/\1/' k.json)
[ "$counted" -ge 300 ] || no "only $counted samples kept of about a second of CPU"
"$profil" report --format csv k.prof > k.csv
within "$(share k.csv spin_three spin)" 50 12 || no "spin_three share after a kill"

[ $fail -eq 0 ] && echo "cli_kill: all checks passed"
exit $fail
