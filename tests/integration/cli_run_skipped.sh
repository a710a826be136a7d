#!/bin/sh
# cli_run_skipped.sh BUILD - the processes of a tree that profil run
# cannot follow (issue 23): a statically linked program and a set-ID one
# exec'd inside the tree are each named in the run's summary (a note in
# the run's directory, PROGRAM.PID.skipped), and so is a program run
# after chroot, where libprofil's path does not exist, which gets no
# "cannot be preloaded" line from the loader.  The programs' output is byte for byte what it is
# without profil.  Each backend.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1
printf '%s\n' '#include <stdio.h>' \
	'int main(int argc, char **argv) { printf("%s ran\n", argv[0]); fprintf(stderr, "%d args\n", argc); return 3; }' \
	> say.c
cc -O2 -o say say.c || exit 1
static=
cc -static -O2 -o say_static say.c 2>/dev/null && static=1
backends=${PROFIL_BACKENDS:-perf timer}
[ -n "$asan_pre" ] && backends=auto

if [ -n "$static" ]; then
	sh -c './say_static a; ./spin 1; ./say_static b c' > plain.out 2> plain.err
	for be in $backends; do
		d=static.$be
		prun --backend "$be" -o "$d" sh -c './say_static a; ./spin 1; ./say_static b c' \
			> "$d.out" 2> "$d.err"
		st=$?
		[ $st -eq 3 ] || no "$d: status $st, not 3"
		cmp -s plain.out "$d.out" || no "$d: the output differs: $(cat "$d.out")"
		grep -v "^profil: " "$d.err" | cmp -s plain.err - || no "$d: stderr: $(cat "$d.err")"
		n=$(grep -c "^profil: process [0-9]* not profiled: ./say_static: statically linked" "$d.err")
		[ "$n" -eq 2 ] || no "$d: $n static processes named, not 2: $(cat "$d.err")"
		[ "$(ls "$d" | grep -c '^say_static\.[0-9]*\.skipped$')" -eq 2 ] || no "$d: notes: $(ls "$d")"
		"$profil" report "$d" > "$d.txt" 2>&1 || no "$d: report: $(head -n 3 "$d.txt")"
		grep -q "samples in 2 profiles" "$d.txt" || no "$d: report read $(head -n 1 "$d.txt")"
		echo "$d: $(grep 'not profiled' "$d.err" | head -n 1)"
	done
	# sh execs a static program: sh's profile and a note, a run that the
	# next one of the name keeps as .old.
	prun -o only sh -c 'exec ./say_static' > /dev/null 2>&1
	ls only | grep -q '\.skipped$' || no "sh execs a static program: $(ls only)"
	prun -o only ./spin 1 2>/dev/null || no "a run over a run with notes: status $?"
	ls only.old | grep -q '\.skipped$' || no "a run with notes not kept as .old: $(ls -a)"
else
	echo "no static libc here: static programs in a tree not tested"
fi

if [ "$(id -u)" -eq 0 ] && command -v setpriv > /dev/null && [ -z "$san_cflags" ]; then
	# Set-user-ID root, run by nobody inside a tree.
	chmod 755 "$tmp"
	mkdir -m 755 suid && cp say suid/say && chmod 4755 suid/say
	mkdir -m 777 home
	(cd home && setpriv --reuid=65534 --regid=65534 --clear-groups sh -c '../suid/say x') \
		> plain.out 2> plain.err
	(cd home && setpriv --reuid=65534 --regid=65534 --clear-groups \
		$prun_cmd sh -c '../suid/say x') > suid.out 2> suid.err
	st=$?
	[ $st -eq 3 ] || no "set-user-ID in a tree: status $st"
	cmp -s plain.out suid.out || no "set-user-ID in a tree: output $(cat suid.out)"
	grep -q "^profil: process [0-9]* not profiled: ../suid/say: set-user-ID or set-group-ID" suid.err \
		|| no "set-user-ID in a tree: not named: $(cat suid.err)"
	echo "set-user-ID: $(grep 'not profiled' suid.err)"

	# chroot into a tree where libprofil's path does not exist.
	mkdir -p jail/bin && cp say jail/bin/
	for l in $(ldd say | grep -o '/[^ ]*'); do
		mkdir -p "jail$(dirname "$l")" && cp "$l" "jail$l"
	done
	if chroot jail /bin/say in > plain.out 2> plain.err; [ $? -eq 3 ]; then
		for be in $backends; do
			prun --backend "$be" -o "chroot.$be" chroot jail /bin/say in > c.out 2> c.err
			st=$?
			[ $st -eq 3 ] || no "chroot [$be]: status $st"
			cmp -s plain.out c.out || no "chroot [$be]: output $(cat c.out)"
			grep -v "^profil: " c.err | cmp -s plain.err - || no "chroot [$be]: stderr: $(cat c.err)"
			grep -q "^profil: process [0-9]* not profiled: /bin/say: run after chroot(), where libprofil cannot be reached" c.err \
				|| no "chroot [$be]: not named: $(cat c.err)"
		done
	else
		echo "chroot does not work here: not tested"
	fi
else
	echo "not root (or a sanitizer build): set-ID and chroot in a tree not tested"
fi

[ $fail -eq 0 ] && echo "cli_run_skipped: all checks passed"
exit $fail
