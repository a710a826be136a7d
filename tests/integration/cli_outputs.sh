#!/bin/sh
# cli_outputs.sh BUILD - SPEC 6b: report --html, merge -o and export -o
# never write over a file they read, a profile of any kind (profil's,
# gmon.out, pcsample, mon.out: known by content, whatever the name), the
# run list, the program or a directory, however the name is given
# (-o F, -oF, --output F, --output=F, an abbreviation, a symbolic or
# hard link, ./F), nor into a run directory they read: one line naming
# the option, status 2, every file as it was and no temporary file left.
# An ordinary file is still replaced.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
mkdir "$tmp/w" && cd "$tmp/w" || exit 1

cc -O2 -g -o spin "$root/tests/cli/spin.c"
# Profiles made by the preload directly, whatever profil run's layout.
preload=$B/lib/libprofil.so
[ -n "$asan_pre" ] && preload=$asan_pre:$preload
profile() {	# NAME
	env LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 PROFIL_RUN=1 PROFIL_OUT="$1" ./spin 5
}
profile a.prof && profile b.prof || no "making profiles"
printf '%s\n' "$tmp/w/a.prof" > .profil-last
"$profil" export --format gmon -o g.out a.prof || no "export gmon"
cc $san_cflags -O2 -g -I"$root/include" -o classic "$root/tests/cli/classic.c" \
	-L"$B/lib" -Wl,-rpath,"$B/lib" -lprofil || no "build classic"
ASAN_OPTIONS=detect_leaks=0 ./classic 20 || no "classic: status $?"
# The profiles under names that say nothing of what they are.
cp a.prof plain.dat; cp g.out gmon.dat; cp work.pcs pcs.dat; cp mon.out mon.dat
mkdir dir
ln -s a.prof link.prof
ln b.prof hard.prof
echo "not a profile" > notes.txt

sums() { cksum a.prof b.prof plain.dat gmon.dat pcs.dat mon.dat spin .profil-last; ls -a . run1 2>/dev/null; }
sums > ../before

# refused WHAT PATTERN COMMAND...: one line matching PATTERN, status 2,
# nothing changed.
refused() {
	what=$1 pattern=$2
	shift 2
	"$@" > ../out 2> ../err
	st=$?
	sums > ../after
	if [ $st -ne 2 ]; then
		no "$what: status $st"; cat ../err
	elif [ "$(wc -l < ../err)" -ne 1 ]; then
		no "$what: $(wc -l < ../err) lines on stderr"; cat ../err
	elif ! grep -Eq "^profil: .*$pattern" ../err; then
		no "$what: '$(cat ../err)' does not say '$pattern'"
	elif ! cmp -s ../before ../after; then
		no "$what: files changed"; diff ../before ../after
	else
		echo "ok: $what: $(cat ../err)"
	fi
}

P=$profil
refused "html over its input" "--html 'a.prof': a file this command reads" $P report --html a.prof a.prof
refused "html over the last run's file" "--html '$tmp/w/a.prof': a file this command reads" \
	$P report --html "$(cat .profil-last)"
refused "--html=F" "--html '$tmp/w/a.prof'" $P report --html="$tmp/w/a.prof"
refused "html over another profile" "--html 'b.prof': a profil profile" $P report --html b.prof a.prof
refused "html over a renamed profile" "'plain.dat': a profil profile" $P report --html plain.dat a.prof
refused "html over a directory" "--html 'dir': a directory" $P report --html dir a.prof
refused "html over the run list" "the list of the last profil run" $P report --html .profil-last
refused "html over the program" "'spin': .*spin, an object the profile is of" \
	$P report --html spin a.prof
refused "export -o F" "-o 'a.prof': a file this command reads" $P export --format pprof -o a.prof a.prof
refused "export -oF" "-o 'a.prof'" $P export --format pprof -oa.prof a.prof
refused "export --output F" "-o 'a.prof'" $P export --format pprof --output a.prof a.prof
refused "export --output=F" "-o 'a.prof'" $P export --format pprof --output=a.prof a.prof
refused "export --out F" "-o 'a.prof'" $P export --format gmon --out a.prof a.prof
refused "export ./F" "-o './a.prof': the same file as a.prof" \
	$P export --format pprof -o ./a.prof a.prof
refused "export over a symbolic link" "-o 'link.prof': the same file as a.prof" \
	$P export --format pprof -o link.prof a.prof
refused "export over a hard link" "-o 'hard.prof': the same file as b.prof" \
	$P export --format pprof -o hard.prof b.prof
refused "export over the last run's file" "a file this command reads" \
	$P export --format pprof -o "$tmp/w/a.prof"
refused "export over gmon.out" "-o 'gmon.dat': a gmon.out profile" \
	$P export --format gmon -o gmon.dat a.prof
refused "export over pcsample" "-o 'pcs.dat': a pcsample profile" \
	$P export --format pprof -o pcs.dat a.prof
refused "export over mon.out" "-o 'mon.dat': a mon.out profile" \
	$P export --format pprof -o mon.dat a.prof
refused "export over the program" "-o 'spin': .*spin, an object the profile is of" \
	$P export --format gmon -o spin a.prof
refused "export over --exe" "-o 'spin': the program named by --exe" \
	$P export --format gmon --exe spin -o spin gmon.dat
refused "export over a directory" "-o 'dir/': a directory" $P export --format pprof -o dir/ a.prof
refused "export over ." "-o '.': a directory" $P export --format pprof -o . a.prof
refused "export over a device" "-o '/dev/null': not a regular file" \
	$P export --format pprof -o /dev/null a.prof
refused "merge over an input" "-o 'b.prof': a file this command reads" $P merge -o b.prof a.prof b.prof
refused "merge over a profile" "-o 'b.prof': a profil profile" $P merge -o b.prof a.prof
refused "merge gmon over a gmon.out" "-o 'gmon.dat': a gmon.out profile" $P merge -o gmon.dat g.out
refused "merge over the run list" "the list of the last profil run" $P merge -o .profil-last
refused "merge over a directory" "-o 'dir': a directory" $P merge -o dir a.prof
refused "empty name" "-o '': an empty file name" $P merge -o '' a.prof
# Nor into a run directory it reads: the output would be read with the
# run next time (a page fails every report, a profile counts twice).
prun -o run1 ./spin 2 2>/dev/null || no "profil run -o run1"
sums > ../before
refused "merge into the run it reads" "-o 'run1/sum.prof': in run1, a run this command reads" \
	$P merge -o run1/sum.prof
refused "html into the run it reads" "--html 'run1/p.html': in run1, a run" $P report --html run1/p.html
refused "export into a run given" "-o 'run1/x.pb.gz': in run1, a run" \
	$P export --format pprof -o run1/x.pb.gz run1
ls | grep -q '\.tmp\.\|\.html\.' && no "temporary files left: $(ls)"

# What may be written still is, and an ordinary file is replaced.
"$profil" report --html page.html a.prof && "$profil" report --html page.html a.prof \
	|| no "report --html over its own earlier page"
"$profil" export --format pprof -o notes.txt a.prof && gzip -t notes.txt \
	|| no "export over an ordinary file"
"$profil" merge -o sum.prof a.prof b.prof || no "merge to a new name"
"$profil" merge -o run1.sum.prof run1 || no "merge of a run beside it"

[ $fail -eq 0 ] && echo "cli_outputs: all checks passed"
exit $fail
