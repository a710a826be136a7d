#!/bin/sh
# hostile_files.sh BUILD - where profiles go when the place is hostile
# (issue 6, item 4; SPEC section 6).  PROFDIR a symbolic link (followed:
# the user named it), dangling, a regular file, missing, unwritable, or
# another user's directory; a name that is taken; a set-user-ID program.
# profil run checks PROFDIR and -o before it runs anything (one line,
# status 2); the runtime alone (preloaded, or a -pg program) says so in
# one line and uses the current directory, as for any bad variable.
# A file never replaces one that is there nor goes through a symbolic
# link; a set-user-ID program ignores every variable that names a path
# or turns profiling on.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
lib="$B/lib"
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1
cc -pg -O2 -pthread -I"$root/include" $san_cflags -o work "$root/tests/gmon/work.c" \
	-L"$lib" -Wl,-rpath,"$lib" -lprofil || exit 1
mkdir pd run
touch afile
ln -s "$tmp/pd" linkdir
ln -s "$tmp/nowhere" dangling

# refused WHAT PROFDIR: profil run says it in one line and runs nothing.
refused() {
	(cd run && PROFDIR=$2 prun ./../spin 1) > out 2> err
	st=$?
	[ $st -eq 2 ] && [ "$(grep -c . err)" -eq 1 ] &&
		grep -q "^profil: PROFDIR=$2: .*: no profile can be written there$" err ||
		no "$1: status $st, stderr: $(cat err)"
	[ -z "$(ls run)" ] || no "$1: files made: $(ls run)"
	echo "$1: $(cat err)"
}
refused "PROFDIR a regular file" "$tmp/afile"
refused "PROFDIR missing" "$tmp/missing"
refused "PROFDIR a dangling link" "$tmp/dangling"

# A link to a directory: the run's directory is made there, the link stays.
(cd run && PROFDIR=$tmp/linkdir prun ../spin 1) > out 2> err
[ -L linkdir ] && ls pd/profil.data | grep -q '^spin\.[0-9]*\.prof$' ||
	no "PROFDIR a link to a directory: no file there: $(cat err)"
echo "PROFDIR a link: $(cat err)"
rm -rf pd/* run/.profil-last

# The runtime alone, preloaded: one line, the current directory.
(cd run && env LD_PRELOAD="${asan_pre:+$asan_pre:}$lib/libprofil.so" \
	PROFIL_RUN=1 PROFDIR="$tmp/afile" ../spin 1) > out 2> err
[ "$(grep -c . err)" -eq 1 ] && grep -q "^libprofil: PROFDIR=$tmp/afile: not a directory that can be opened; using the current directory$" err &&
	ls run | grep -q '^gmon\.spin\.[0-9]*\.out$' || no "preloaded, PROFDIR a file: $(cat err); files: $(ls run)"
echo "preloaded, PROFDIR a file: $(cat err)"
rm -f run/*
# A -pg program: the same line, from the gmon runtime.
(cd run && PROFDIR="$tmp/missing" ../work return 0.05) > out 2> err
[ "$(grep -c . err)" -eq 1 ] && grep -q "^libprofil: PROFDIR=$tmp/missing: not a directory that can be opened; using the current directory$" err &&
	ls run | grep -q '^gmon\.work\.[0-9]*\.out$' || no "-pg, PROFDIR missing: $(cat err); files: $(ls run)"
echo "-pg, PROFDIR missing: $(cat err)"
rm -f run/*

# A name that is taken by something not a run: -o leaves it alone and
# runs nothing (one line, status 2), a symbolic link too.
echo old > run/taken.prof
(cd run && prun -o taken.prof ../spin 1) 2> err
st=$?
[ $st -eq 2 ] && [ "$(cat run/taken.prof)" = old ] && [ "$(grep -c . err)" -eq 1 ] &&
	grep -q "^profil: $tmp/run/taken.prof: a file that is not a profile: not a profil run, left alone" err ||
	no "-o over a file of the user's: status $st: $(cat err)"
echo victim > victim
ln -s "$tmp/victim" run/link.prof
(cd run && prun -o link.prof ../spin 1) 2> err
st=$?
[ $st -eq 2 ] && [ -L run/link.prof ] && [ "$(cat victim)" = victim ] &&
	grep -q "^profil: $tmp/run/link.prof: a symbolic link: not a profil run, left alone" err ||
	no "-o at a symbolic link: status $st: $(cat err); $(ls -l run)"
[ -e run/link.prof.old ] && no "-o at a symbolic link: kept as .old"
echo "-o at a symbolic link: $(cat err)"
# PROFIL_OUT taken, preloaded: the next free name.
echo mine > run/out.prof
(cd run && env LD_PRELOAD="${asan_pre:+$asan_pre:}$lib/libprofil.so" PROFIL_RUN=1 \
	PROFIL_OUT="$tmp/run/out.prof" ../spin 1) 2> err
[ "$(cat run/out.prof)" = mine ] && [ -f run/out.prof.1 ] && [ ! -s err ] ||
	no "PROFIL_OUT taken: $(cat err); $(ls run)"
rm -f run/*

# As another user (the tests run as root; setpriv drops to nobody).
if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null; then
	as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	chmod 755 "$tmp"
	mkdir -m 555 ro
	mkdir -m 1777 sticky
	mkdir -m 777 home
	# Unwritable, and owned by another user (root): one line.
	(cd home && PROFDIR=$tmp/ro $as_nobody $prun_cmd ../spin 1) > out 2> err
	st=$?
	[ $st -eq 2 ] && grep -q "^profil: PROFDIR=$tmp/ro: Permission denied: no profile can be written there$" err ||
		no "PROFDIR unwritable: status $st: $(cat err)"
	echo "PROFDIR another user's, unwritable: $(cat err)"
	(cd home && PROFDIR=$tmp/ro $as_nobody ../work return 0.05) > out 2> err
	[ "$(grep -c . err)" -eq 1 ] && grep -q "^libprofil: $tmp/ro/gmon.work.[0-9]*.out: Permission denied; profile not written$" err ||
		no "-pg, PROFDIR unwritable: $(cat err)"
	echo "-pg, PROFDIR unwritable: $(cat err)"
	# Another user's world-writable sticky directory (like /tmp), with
	# root's file at the name: not replaced, not followed; ours is 0600.
	echo root > sticky/s.prof
	(cd home && $as_nobody $prun_cmd -o "$tmp/sticky/s.prof" ../spin 1) > out 2> err
	[ $? -eq 2 ] && [ "$(cat sticky/s.prof)" = root ] ||
		no "sticky directory: $(cat err); $(ls -l sticky)"
	echo "another user's sticky directory, name taken: $(cat err)"
	(cd home && $as_nobody $prun_cmd -o "$tmp/sticky/n.prof" ../spin 1) > out 2> err
	[ "$(stat -c '%u %a' sticky/n.prof/spin.*.prof 2>&1)" = "65534 600" ] ||
		no "sticky directory, a new name: $(cat err); $(ls -lR sticky)"

	# Set-user-ID: a root-owned copy linked with libprofil, run by
	# nobody (AT_SECURE): PROFIL_RUN, PROFDIR, PROFIL_OUT ignored.
	if [ -z "$san_cflags" ]; then
		mkdir -m 755 suid && mkdir -m 777 suid/out
		cc -O2 -o suid/spin "$root/tests/cli/spin.c" -Wl,--no-as-needed \
			-L"$lib" -Wl,-rpath,"$lib" -lprofil || exit 1
		chmod 4755 suid/spin
		(cd suid/out && $as_nobody env PROFIL_RUN=1 PROFDIR="$tmp/home" \
			PROFIL_OUT="$tmp/home/suid.prof" ../spin 1) > out 2> err
		st=$?
		[ $st -eq 0 ] && [ -z "$(find home suid/out -type f ! -name .profil-last)" ] && [ ! -s err ] ||
			no "set-user-ID, linked: status $st: $(cat err); files: $(find home suid/out -type f ! -name .profil-last)"
		(cd home && $as_nobody $prun_cmd ../suid/spin 1) > out 2> err
		st=$?
		[ $st -eq 2 ] && [ "$(grep -c . err)" -eq 1 ] && [ ! -s out ] &&
			grep -q "^profil: ../suid/spin: set-user-ID or set-group-ID" err ||
			no "set-user-ID under profil run: status $st: $(cat err)"
		[ -z "$(ls home)" ] || no "set-user-ID under profil run: files: $(ls home)"
		echo "set-user-ID: $(cat err)"
	fi
fi

[ $fail -eq 0 ] && echo "hostile_files: all checks passed"
exit $fail
