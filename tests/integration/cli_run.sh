#!/bin/sh
# cli_run.sh BUILD - profil run and profil report on real programs: the
# example, a program whose work is in libraries it dlopens and dlcloses,
# a shell pipeline that forks and execs, a C++ program, one built
# without -g and one stripped.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"

cd "$tmp" || exit 1
cc -O2 -g -o spin "$root/tests/cli/spin.c"
cc -O2 -g -o dlmain "$root/tests/cli/dlmain.c" -ldl
cc -O2 -g -fPIC -shared -DNAME=lib_a_work -o liba.so "$root/tests/cli/dllib.c"
cc -O2 -g -fPIC -shared -DNAME=lib_b_work -o libb.so "$root/tests/cli/dllib.c"

# The example: its hot functions, the statistics, the file's mode.
prun "$B/examples/crunch" > crunch.out 2> crunch.err || no "crunch under profil run: status $?"
grep -q "round trip ok" crunch.out || no "crunch's work under profil run"
"$profil" report > report.txt 2> report.err || { cat report.err; no "report: status $?"; }
cat report.txt
for fn in fnv1a lz_compress lz_decompress merge_sort; do
	grep -Eq "%.* $fn +crunch$" report.txt || no "$fn not in the report"
done
grep -q "libc.so" report.txt || no "no sample in libc: shared objects are not profiled"
cp -p profil.data/crunch.*.prof crunch.prof	# the next run moves profil.data
f=crunch.prof
[ "$(stat -c %a "$f")" = 600 ] || no "profile mode $(stat -c %a "$f"), not 600"
awk '/^samples taken/ { if ($3 != $6 + $9 + $12) exit 1; ok = 1 } END { exit !ok }' report.txt \
	|| no "statistics do not add up"

# The exit status is the program's.
prun -o st.prof sh -c 'exit 7' 2>/dev/null; st=$?
[ $st -eq 7 ] || no "exit status $st, not 7"
[ -d st.prof ] && ls st.prof | grep -Eq "^(sh|dash|bash)\.[0-9]+\.prof$" || no "-o st.prof: not a run directory with sh's file: $(ls -l st.prof)"

# Libraries opened and closed: their samples keep their names; A worked
# twice as long as B.
prun -o dl.prof ./dlmain "$tmp/liba.so" "$tmp/libb.so" 150 2>/dev/null || no "dlmain: status $?"
"$profil" report --format csv dl.prof > dl.csv || no "report dl.prof"
a=$(share dl.csv lib_a_work liba.so); b=$(share dl.csv lib_b_work libb.so)
echo "dlopen: lib_a_work $a%, lib_b_work $b%"
within "$a" 66.7 10 || no "lib_a_work in liba.so: $a%, expected 66.7"
within "$b" 33.3 10 || no "lib_b_work in libb.so: $b%, expected 33.3"

# A library that opens its plugin by a bare name along its own RUNPATH
# ($ORIGIN/plugins) finds it under profil run too, and the plugin's
# samples carry its name.  (Not in the sanitizer build: ASan's own
# dlopen interceptor loses the caller's RUNPATH, with or without us.)
[ -z "$asan_pre" ] && mkdir -p rp/lib/plugins
if [ -d rp ]; then
	cc -O2 -g -fPIC -shared -DNAME=plug_work -o rp/lib/plugins/libplug.so "$root/tests/cli/dllib.c"
	cc -O2 -g -fPIC -shared -Wl,--enable-new-dtags,-rpath,'$ORIGIN/plugins' \
		-o rp/lib/libouter.so "$root/tests/cli/outer.c" -ldl
	cc -O2 -g -o rp/outermain "$root/tests/cli/outermain.c" -Lrp/lib -louter \
		-Wl,-rpath,"$tmp/rp/lib"
	prun -o rp.prof ./rp/outermain 60 2> rp.err \
		|| { cat rp.err; no "a plugin found by RUNPATH under profil run"; }
	"$profil" report --format csv rp.prof > rp.csv || no "report rp.prof"
	# All its work is plug_work's; libprofil's own start (a first write
	# to each page of its file costs ~0.5 ms on this disk, charged to
	# libc's syscall under libprofil) can take 8% of a 60 ms run.
	awk -v s="$(share rp.csv plug_work libplug.so)" 'BEGIN { exit !(s >= 85) }' \
		|| no "the plugin's samples: $(cat rp.csv)"
fi

# A pipeline: one file per process, and they add up.
prun sh -c "./spin 40 | cat | (sleep 0; ./spin 20 > /dev/null)" 2>/dev/null \
	|| no "pipeline: status $?"
ls profil.data > pipe.files
n=$(wc -l < pipe.files)
[ "$n" -ge 4 ] || no "pipeline: $n profiles, expected one per process (at least 4)"
grep -q "^spin\.[0-9]*\.prof$" pipe.files || no "pipeline: the exec'd spin wrote no file"
grep -q "^cat\.[0-9]*\.prof$" pipe.files || no "pipeline: cat wrote no file"
grep "gmon" pipe.files && no "pipeline: a file named as gprof's"
[ "$(cat .profil-last)" = "$tmp/profil.data" ] || no "pipeline: .profil-last says $(cat .profil-last)"
"$profil" report --format csv > pipe.csv || no "pipeline report"
s3=$(share pipe.csv spin_three spin)
within "$s3" 50 10 || no "pipeline: spin_three $s3%, expected 50"

# C++: demangled names.
if command -v c++ >/dev/null; then
	c++ -O2 -g -o cxxwork "$root/tests/cli/cxxwork.cc"
	prun -o cxx.prof ./cxxwork 4 2>/dev/null || no "cxxwork: status $?"
	"$profil" report cxx.prof > cxx.txt || no "report cxx"
	grep -q "geometry::Grid<double>::relax(int)" cxx.txt || { cat cxx.txt; no "C++ method not demangled"; }
	grep -q "geometry::scale(double, int)" cxx.txt || no "C++ function not demangled"
fi

# Without -g: functions from the symbol table, no lines.  Stripped: the
# samples are still there, each function a row of its own, named by the
# program and the start its .eh_frame gives (cli_stripped.sh).
cc -O2 -o spin_nog "$root/tests/cli/spin.c"
prun -o nog.prof ./spin_nog 100 2>/dev/null || no "spin_nog"
"$profil" report --format csv nog.prof > nog.csv || no "report nog"
s3=$(share nog.csv spin_three spin_nog); s1=$(share nog.csv spin_one spin_nog)
within "$s3" 50 10 || { cat nog.csv; no "no -g: spin_three $s3%, expected 50"; }
within "$s1" 16.7 8 || { cat nog.csv; no "no -g: static spin_one $s1%, expected 16.7"; }
"$profil" report --lines nog.prof | grep -q "??" || no "no -g: --lines has lines"
cp spin_nog spin_stripped && strip spin_stripped
prun -o strip.prof ./spin_stripped 60 2>/dev/null || no "spin_stripped"
"$profil" report --format csv strip.prof > strip.csv || no "report stripped"
three=$(nm spin_nog | awk '$3 == "spin_three" { sub(/^0+/, "", $1); print $1 }')
s3=$(share strip.csv "spin_stripped+0x$three" spin_stripped)
within "$s3" 50 10 || { cat strip.csv; no "stripped: spin_stripped+0x$three $s3%, expected 50"; }
within "$(share strip.csv '[unknown]' spin_stripped)" 0 1 || no "stripped: [unknown] in the program"

# --lines and --annotate on the example.
"$profil" report --lines "$f" | grep -Eq "crunch\.c:[0-9]+ +lz_compress" || no "--lines"
"$profil" report --annotate lz_compress "$f" > ann.txt || no "--annotate"
grep -Eq "^ *[0-9.]+% +[0-9]+ +[0-9a-f]+:" ann.txt || no "--annotate has no counts"
"$profil" report --objects "$f" | grep -q "libc.so" || no "--objects"
"$profil" report --format json "$f" | grep -q '"function":"fnv1a"' || no "--format json"

# -F and --backend reach the runtime, and the file says what was used.
prun -F 200 --backend timer -o t.prof ./spin 20 2>/dev/null || no "-F 200 --backend timer"
"$profil" report t.prof > t.txt || no "report t.prof"
grep -q "rate 200 Hz asked" t.txt || no "-F 200 not recorded: $(sed -n 3p t.txt)"
grep -q "backend timer" t.txt || no "--backend timer not recorded: $(sed -n 3p t.txt)"

# The whole command line, each argument as a shell would need it; in
# json too.  One too long for the header page is cut, and says so.
prun -o args.prof -- ./spin 1 'arg with space' x 2>/dev/null || no "spin with arguments"
"$profil" report args.prof > args.txt || no "report args.prof"
want="command: ./spin 1 'arg with space' x"
grep -qxF "$want" args.txt || no "the header does not say '$want': $(grep command args.txt)"
"$profil" report --format json args.prof | grep -qF '"command":"./spin 1 '"'arg with space'"' x"' \
	|| no "json has no command line"
long=$(head -c 5000 /dev/zero | tr '\0' a)
prun -o long.prof ./spin 1 "$long" 2>/dev/null || no "spin with a long argument"
# 3584 bytes kept: "./spin", "1" and 3575 a's, each NUL-terminated but the last.
want="command: ./spin 1 $(head -c 3575 /dev/zero | tr '\0' a) [...]"
"$profil" report long.prof | grep -qxF "$want" || no "a long command line not cut as said"
# A file of a profil before the command line (its bytes zero): argv[0].
cp args.prof/spin.*.prof old.prof
dd if=/dev/zero of=old.prof bs=1 seek=464 count=3592 conv=notrunc 2>/dev/null
"$profil" report old.prof > old.txt || no "a file without a command line: status $?"
grep -qx "command: spin" old.txt || no "a file without a command line: $(grep command old.txt)"
# Several files: the first one's; merged: the first one's too.
"$profil" report old.prof args.prof long.prof 2>/dev/null | grep -qxF "command: spin (the first of 3 processes)" \
	|| no "three files: not the first one's command line"
"$profil" merge -o merged.prof args.prof long.prof || no "merge: status $?"
"$profil" report merged.prof | grep -qxF "command: ./spin 1 'arg with space' x" \
	|| no "merge did not keep the first command line"

[ $fail -eq 0 ] && echo "cli_run: all checks passed"
exit $fail
