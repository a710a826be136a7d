#!/bin/sh
# cli_kill.sh BUILD - a process killed with SIGKILL under profil run
# leaves a profile that reads: the counts it took are all there, its
# statistics lag by at most about a second, and the report says the
# process did not exit.  profil run dies of the same signal.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

cc -O2 -g -o spin "$root/tests/cli/spin.c"
prun -o k.prof ./spin 100000 2>/dev/null &
runner=$!
# Wait for the file, then for about a second of samples.
i=0
while [ ! -s k.prof ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sleep 1.2
pkill -KILL -f "^\./spin 100000$"
wait "$runner"
st=$?
[ $st -eq 137 ] || no "profil run: status $st, not 137 (killed by SIGKILL)"
"$profil" report k.prof > k.txt 2>&1 || { cat k.txt; no "report of a killed process: status $?"; }
cat k.txt
grep -q "did not exit normally" k.txt || no "report does not say the process did not exit"
"$profil" report --format json k.prof > k.json || no "json"
counted=$(sed 's/^{"samples":\([0-9]*\).*/\1/' k.json)
[ "$counted" -ge 300 ] || no "only $counted samples kept of about a second of CPU"
"$profil" report --format csv k.prof > k.csv
within "$(share k.csv spin_three spin)" 50 12 || no "spin_three share after a kill"

[ $fail -eq 0 ] && echo "cli_kill: all checks passed"
exit $fail
