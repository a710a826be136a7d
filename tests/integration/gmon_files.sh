#!/bin/sh
# gmon_files.sh BUILD - where a -pg program's profile goes (SPEC section
# 6): gmon.PROGNAME.PID.out in the directory current at start (a later
# chdir does not move it), in PROFDIR, GMON_OUT_PREFIX.PID, PROFIL_OUT
# with %n and %p; mode 0600; one file per process of a fork, the child's
# holding only its own calls; a symbolic link or a file planted at the
# name is left untouched and the profile takes the next free name.
. "$(dirname "$0")/../gmon/lib.sh"

build work work.c
cd "$tmp" || exit 1
mkdir start elsewhere profdir prefix out

run() {	# DIR ENV... -- ARGS: run work in DIR with ENV, set $pid
	dir=$1
	shift
	(cd "$dir" && env "$@" > "$tmp/stdout" 2> "$tmp/stderr")
	pid=$(sed -n 's/^pid=//p' "$tmp/stdout")
}

expect() {	# FILE CALLS WHAT
	if [ ! -f "$1" ]; then
		fail "$3: no $1 (there are: $(ls "$(dirname "$1")"))"
		return
	fi
	mode=$(stat -c %a "$1")
	[ "$mode" = 600 ] || fail "$3: $1 has mode $mode, not 600"
	got=$(calls "$tmp/work" "$1" counted)
	[ "$got" = "$2" ] || fail "$3: counted() called $got times in $1, not $2"
	echo "$3: $1 (mode $mode, $got calls)"
}

run start "$tmp/work" exit 0.05
expect "start/gmon.work.$pid.out" 1000 "default"

run start "$tmp/work" chdir 0.05 "$tmp/elsewhere"
expect "start/gmon.work.$pid.out" 1000 "chdir after start"
[ -z "$(ls elsewhere)" ] || fail "chdir: files in the new directory: $(ls elsewhere)"

run start PROFDIR="$tmp/profdir" "$tmp/work" exit 0.05
expect "profdir/gmon.work.$pid.out" 1000 "PROFDIR"

run start GMON_OUT_PREFIX="$tmp/prefix/run" "$tmp/work" exit 0.05
expect "prefix/run.$pid" 1000 "GMON_OUT_PREFIX"

run start GMON_OUT_PREFIX=rel "$tmp/work" exit 0.05
expect "start/rel.$pid" 1000 "GMON_OUT_PREFIX relative"

run start PROFIL_OUT="$tmp/out/%n-%p.gmon" "$tmp/work" exit 0.05
expect "out/work-$pid.gmon" 1000 "PROFIL_OUT"

# An empty PROFDIR means no profile at all (OpenBSD).
rm -f start/*
run start PROFDIR= "$tmp/work" exit 0.05
[ -z "$(ls start)" ] || fail "PROFDIR empty: files written: $(ls start)"

# fork: two files, each with its own process's calls.
rm -f start/gmon.*
run start "$tmp/work" fork 0.05
child=$(sed -n 's/^child=//p' "$tmp/stdout")
expect "start/gmon.work.$pid.out" 250 "fork parent"
expect "start/gmon.work.$child.out" 100 "fork child"

# A link and a file planted at the name are left alone.
echo "victim" > victim
ln -s "$tmp/victim" out/planted.gmon
run start PROFIL_OUT="$tmp/out/planted.gmon" "$tmp/work" exit 0.05
[ -L out/planted.gmon ] || fail "planted link replaced"
[ "$(cat victim)" = victim ] || fail "planted link followed: victim changed"
expect "out/planted.gmon.1" 1000 "link planted at the name"
echo "mine" > out/taken.gmon
run start PROFIL_OUT="$tmp/out/taken.gmon" "$tmp/work" exit 0.05
[ "$(cat out/taken.gmon)" = mine ] || fail "planted file replaced"
expect "out/taken.gmon.1" 1000 "file planted at the name"

# A set-user-ID program ignores the variables that choose a path: run by
# nobody, a root-owned set-user-ID copy writes in its start directory,
# not in PROFDIR nor at GMON_OUT_PREFIX.  Needs root and setpriv.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && [ -z "$san" ]; then
	mkdir -m 755 suid suidout && chmod 777 suidout && chmod 755 "$tmp"
	cp work suid/work && chmod 4755 suid/work
	(cd suidout && PROFDIR="$tmp/profdir" GMON_OUT_PREFIX="$tmp/prefix/suid" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$tmp/suid/work" exit 0.05 \
		> "$tmp/stdout" 2> "$tmp/stderr")
	pid=$(sed -n 's/^pid=//p' "$tmp/stdout")
	if [ -n "$pid" ]; then
		[ -z "$(ls profdir | grep "\.$pid\.")$(ls prefix | grep "suid")" ] ||
			fail "set-user-ID: PROFDIR or GMON_OUT_PREFIX honoured: $(ls profdir prefix)"
		[ -f "suidout/gmon.work.$pid.out" ] ||
			fail "set-user-ID: no suidout/gmon.work.$pid.out (there are: $(ls suidout))"
		echo "set-user-ID: suidout/gmon.work.$pid.out, environment ignored"
	else
		echo "set-user-ID: skipped (the program did not run: $(cat "$tmp/stderr"))"
	fi
fi

# A directory that cannot be written: one line on stderr, the program
# carries on and exits as it would.
if [ "$(id -u)" -ne 0 ]; then
	mkdir ro && chmod 555 ro
	run ro "$tmp/work" exit 0.05
	[ "$(grep -c 'libprofil: .*profile not written' "$tmp/stderr")" = 1 ] ||
		fail "unwritable directory: not reported in one line: $(cat "$tmp/stderr")"
fi
done_testing
