#!/bin/sh
# cli_run_files.sh BUILD - where profil run puts a run (SPEC section 6b,
# issue 21): one directory per run (profil.data, or -o DIR), the
# previous one kept as NAME.old, files not named gmon.*.out, and
# .profil-last pointing at it for report, merge and export.  A run that
# writes nothing (program not found, statically linked, a library
# missing, a name that is not a run) leaves the previous run and the
# pointer as they were; a static program is refused before it runs.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1

# state: what a run that writes nothing must leave as it was.
state() { ls -a | grep profil; ls profil.data profil.data.old 2>&1; cat .profil-last 2>&1; }

# The default directory, and the pointer at it.
prun ./spin 2 2> err || no "first run: status $?"
first=$(ls profil.data)
echo "$first" | grep -Eq "^spin\.[0-9]+\.prof$" || no "first run: profil.data holds '$first'"
grep -qx "profil: wrote $tmp/profil.data (1 process); see profil report" err \
	|| no "first run said: $(cat err)"
[ "$(cat .profil-last)" = "$tmp/profil.data" ] || no ".profil-last: $(cat .profil-last)"
[ "$(stat -c %a "profil.data/$first")" = 600 ] || no "a profile of mode $(stat -c %a "profil.data/$first")"
"$profil" report > r1.txt 2>&1 && grep -q " spin_three " r1.txt || no "report of the last run: $(cat r1.txt)"

# The second run keeps the first as profil.data.old; the third replaces
# that, and leaves nothing aside.
prun ./spin 1 2>/dev/null || no "second run: status $?"
second=$(ls profil.data)
[ "$(ls profil.data.old)" = "$first" ] || no "second run: profil.data.old holds '$(ls profil.data.old)'"
[ "$second" != "$first" ] || no "second run: the same file name as the first"
prun ./spin 1 2>/dev/null || no "third run: status $?"
[ "$(ls profil.data.old)" = "$second" ] || no "third run: profil.data.old holds '$(ls profil.data.old)'"
[ "$(ls -A | grep -c profil.data)" -eq 2 ] || no "third run: left $(ls -A)"
# No run of the name, but a .old: it stays.
mkdir keep1 && prun -o keep1/r ./spin 1 2>/dev/null && mv keep1/r keep1/r.old
prun -o keep1/r ./spin 1 2>/dev/null
[ -n "$(ls keep1/r.old)" ] && [ -n "$(ls keep1/r)" ] || no "a .old without its run: $(ls -R keep1)"
"$profil" report profil.data.old > old.txt 2>&1 && grep -q " spin_three " old.txt \
	|| no "report of a .old directory: $(cat old.txt)"

# Runs that write nothing change nothing.
before=$(state)
prun nosuchprogram 2> err; st=$?
[ $st -eq 127 ] && [ "$(grep -c . err)" -eq 1 ] && grep -q "nosuchprogram: command not found" err \
	|| no "a program not found: status $st: $(cat err)"
[ "$(state)" = "$before" ] || no "a program not found changed the runs: $(state)"
# Statically linked: refused before it runs (it would make "ran").
printf '%s\n' '#include <stdio.h>' 'int main(void) { fclose(fopen("ran", "w")); return 0; }' > st.c
if cc -static -O2 -o static st.c 2>/dev/null; then
	prun ./static 2> err; st=$?
	[ $st -eq 2 ] && [ "$(grep -c . err)" -eq 1 ] && grep -q "^profil: ./static: statically linked" err \
		|| no "a static program: status $st: $(cat err)"
	[ -e ran ] && no "a static program ran"
	[ "$(state)" = "$before" ] || no "a static program changed the runs: $(state)"
	printf '#!%s/static\n' "$tmp" > script && chmod +x script
	prun ./script 2> err
	grep -q "^profil: ./script: a script run by $tmp/static: statically linked" err \
		|| no "a script of a static interpreter: $(cat err)"
	echo "static: $(cat err)"
else
	echo "no static libc here: the static program is not tested"
fi
# A library missing: the loader says so, nothing else is said wrong.
cc -O2 -fPIC -shared -o libgone.so "$root/tests/cli/dllib.c" -DNAME=gone_work
printf '%s\n' 'void gone_work(unsigned long);' 'int main(void) { gone_work(1); return 0; }' > gone.c
cc -O2 -o gone gone.c -L. -lgone -Wl,-rpath,"$tmp" && rm libgone.so
prun ./gone 2> err; st=$?
[ $st -eq 127 ] && ! grep -q "statically" err || no "a library missing: status $st: $(cat err)"
[ "$(state)" = "$before" ] || no "a library missing changed the runs: $(state)"

# -o: a directory of that name, pointed at; the same rules.
prun -o runs/a ./spin 1 2>/dev/null && no "-o in a directory that does not exist: ran"
mkdir runs
prun -o runs/a ./spin 1 2> err || no "-o runs/a: status $?: $(cat err)"
ls runs/a | grep -Eq "^spin\.[0-9]+\.prof$" || no "-o runs/a: holds $(ls runs/a)"
[ "$(cat .profil-last)" = "$tmp/runs/a" ] || no "-o: .profil-last says $(cat .profil-last)"
"$profil" report --format csv > a.csv && grep -q spin_three a.csv || no "report after -o"
"$profil" export --format gmon -o a.gmon || no "export of the last run"
"$profil" merge -o a.merged || no "merge of the last run"
"$profil" report runs/a/ > /dev/null || no "report DIR/"
# Not a run: a directory of the user's, a file, a .old that is not a run.
mkdir src && echo 'int x;' > src/x.c
before=$(state; ls -R src)
prun -o src ./spin 1 2> err; st=$?
[ $st -eq 2 ] && [ "$(grep -c . err)" -eq 1 ] && grep -q "^profil: $tmp/src: a directory that holds x.c, not a profile: not a profil run, left alone" err \
	|| no "-o over a source directory: status $st: $(cat err)"
[ "$(state; ls -R src)" = "$before" ] || no "-o over a source directory changed something"
mkdir keep && echo mine > keep.old
prun -o keep ./spin 1 2> err; st=$?
[ $st -eq 2 ] && [ "$(cat keep.old)" = mine ] && grep -q "keep.old: a file that is not a profile" err \
	|| no "-o with a .old of the user's: status $st: $(cat err)"
echo "not a run: $(cat err)"

# A tree of many processes: one directory, nothing loose beside it.
mkdir tree && cd tree
prun sh -c 'for i in $(seq 150); do /bin/true; done' 2> err || no "a tree: status $?"
n=$(ls profil.data | wc -l)
[ "$n" -ge 151 ] || no "a tree: $n files, expected 151"
[ "$(ls -A)" = "$(printf '.profil-last\nerr\nprofil.data')" ] || no "a tree: left $(ls -A)"
ls profil.data | grep -q "^gmon\..*\.out$" && no "a tree: files named as gprof's"
grep -qx "profil: wrote $tmp/tree/profil.data ($n processes, a profile each); see profil report" err \
	|| no "a tree said: $(cat err)"
"$profil" report > tree.txt 2>&1 || no "a tree: report: $(head -n 3 tree.txt)"
grep -q "samples in $n profiles" tree.txt || no "a tree: report read $(head -n 1 tree.txt)"
cd ..

# A .profil-last of a profil before run directories (a list of files)
# still reads.
cp profil.data/*.prof one.prof && cp profil.data.old/*.prof two.prof
printf '%s\n' "$tmp/one.prof" "$tmp/two.prof" > .profil-last
"$profil" report 2>&1 | grep -q "samples in 2 profiles" || no "an older .profil-last: $("$profil" report 2>&1 | head -n 1)"
# None at all: the default directory here, else one line.
rm .profil-last
"$profil" report > /dev/null 2>&1 || no "report without .profil-last, with profil.data"
mkdir empty && cd empty
"$profil" report > out 2> err && no "report with nothing to read: status 0"
[ "$(grep -c . err)" -eq 1 ] || no "report with nothing to read: $(cat err)"
cd ..

[ $fail -eq 0 ] && echo "cli_run_files: all checks passed"
exit $fail
