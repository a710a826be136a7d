#!/bin/sh
# cli_buildid.sh BUILD - a profile outlives its build (SPEC 6b): profil
# run keeps the objects it sampled by build ID (with a library's separate
# debug file), and report, export and --html name the old functions and
# lines after the program is rebuilt with other names, after it is
# removed, and after its library is overwritten in place by another
# build (cp, as a careless upgrade does) and its debug file removed.
# --exe and --symfs find the old build for run files without the cache;
# --no-cache, PROFIL_CACHE=off, the size limit and profil cache --trim.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

# build NAME: prog and lib/libbid.so whose functions are NAME_prog and
# NAME_lib; the library's DWARF only in its debug file (debuglink).
build() {
	mkdir -p lib
	cc -O1 -g -fPIC -shared -DLIB_WORK="$1_lib" -o lib/libbid.so "$root/tests/cli/bidlib.c" &&
	objcopy --only-keep-debug lib/libbid.so lib/libbid.so.debug &&
	objcopy --strip-debug --add-gnu-debuglink=lib/libbid.so.debug lib/libbid.so lib/s.so &&
	cp lib/s.so lib/libbid.so.new && rm lib/s.so &&
	# In place, as cp over an installed library writes it.
	cat lib/libbid.so.new > lib/libbid.so && rm lib/libbid.so.new &&
	cc -O1 -g -DPROG_WORK="$1_prog" -DLIB_WORK="$1_lib" -o prog "$root/tests/cli/bidprog.c" \
		-Llib -lbid -Wl,-rpath,"$tmp/lib" || exit 1
}
# names CSV: the functions of a report --format csv, sorted, one line.
names() { awk -F, 'NR > 1 { print $6 }' "$1" | sort | tr '\n' ' '; }

build old
readelf -S lib/libbid.so | grep -q debug_info && no "lib/libbid.so still has its DWARF"
prun -o run1 ./prog 150 2> run.err || { cat run.err; no "profil run"; }
[ -s run.err ] && grep -v "^profil: wrote" run.err && no "profil run said more than it wrote"
"$profil" report --format csv run1 > before.csv || no "report before the rebuild"
"$profil" report --lines --format csv run1 > before_lines.csv || no "report --lines"
grep -q "bidlib.c" before_lines.csv || no "no line of bidlib.c before the rebuild"
for f in old_prog old_lib; do
	grep -q ",$f," before.csv || { cat before.csv; no "$f not in the report"; }
done

# The cache: the program, the library and its debug file, by build ID.
"$profil" cache > list.txt || no "profil cache"
cat list.txt
id=$(readelf -n prog | sed -n 's/.*Build ID: //p')
libid=$(readelf -n lib/libbid.so | sed -n 's/.*Build ID: //p')
dir=$(echo "$id" | cut -c1-2) rest=$(echo "$id" | cut -c3-)
cmp -s prog "$tmp/cache/.build-id/$dir/$rest" || no "prog not in the cache as .build-id/$dir/$rest"
ldir=$(echo "$libid" | cut -c1-2) lrest=$(echo "$libid" | cut -c3-)
cmp -s lib/libbid.so.debug "$tmp/cache/.build-id/$ldir/$lrest.debug" ||
	no "the library's debug file not in the cache"
grep -q "$id .*$tmp/prog" list.txt || no "profil cache does not list prog"
grep -q "$libid .*$tmp/lib/libbid.so" list.txt || no "profil cache does not list libbid.so"
cp prog prog.old
mkdir -p "symfs$tmp/lib"
cp prog "symfs$tmp/prog"
cp lib/libbid.so lib/libbid.so.debug "symfs$tmp/lib/"
# A cache with the library only, for --exe.
cp -r cache libonly && rm "libonly/.build-id/$dir/$rest"* || no "cannot copy the cache"

# Rebuilt with other names: other build IDs.
build new
[ "$(readelf -n prog | sed -n 's/.*Build ID: //p')" != "$id" ] || no "the rebuild kept the build ID"
rm lib/libbid.so.debug
"$profil" report --format csv run1 > after.csv 2> after.err || { cat after.err; no "report after the rebuild"; }
[ "$(names after.csv)" = "$(names before.csv)" ] ||
	no "after the rebuild: $(names after.csv), not $(names before.csv)"
grep -q "new_" after.csv && no "the new build's names in the old profile"
"$profil" report --lines --format csv run1 > after_lines.csv || no "report --lines after"
grep -q "bidlib.c" after_lines.csv || no "the library's lines lost with its debug file"
"$profil" report --annotate old_prog run1 > ann.txt 2>&1 || { cat ann.txt; no "--annotate old_prog"; }
"$profil" report --html page.html run1 || no "--html after the rebuild"
grep -q old_prog page.html || no "the page does not name old_prog"
"$profil" export --format pprof -o p.pb.gz run1 || no "export after the rebuild"
if command -v go > /dev/null 2>&1; then
	go tool pprof -top p.pb.gz 2> /dev/null | grep -q old_prog || no "pprof does not name old_prog"
fi

# Removed.
rm prog
"$profil" report --format csv run1 > gone.csv || no "report with the program removed"
[ "$(names gone.csv)" = "$(names before.csv)" ] || no "removed: $(names gone.csv)"

# Without the program in the cache: --exe and --symfs for run files;
# else one line.
PROFIL_CACHE=$tmp/libonly "$profil" report --format csv --exe prog.old run1 > exe.csv 2> exe.err ||
	{ cat exe.err; no "report --exe prog.old"; }
grep -q ",old_prog," exe.csv || no "--exe prog.old: no old_prog"
PROFIL_CACHE=off "$profil" report --format csv --symfs symfs run1 > symfs.csv 2> symfs.err ||
	{ cat symfs.err; no "report --symfs"; }
[ "$(names symfs.csv)" = "$(names before.csv)" ] || no "--symfs: $(names symfs.csv)"
PROFIL_CACHE=off "$profil" report --lines --format csv --symfs symfs run1 > symfs_lines.csv ||
	no "report --lines --symfs"
grep -q "bidlib.c" symfs_lines.csv || no "--symfs: the library's lines not from symfs's debug file"
mkdir -p other && cc -O1 -o other/prog "$root/tests/cli/spin.c"
PROFIL_CACHE=$tmp/libonly "$profil" report --exe other/prog run1 > /dev/null 2> wrong.err && no "--exe of another program accepted"
grep -q "exe other/prog: not the program profiled" wrong.err || { cat wrong.err; no "--exe another: $(cat wrong.err)"; }
PROFIL_CACHE=off "$profil" report --objects run1 > /dev/null 2> off.err && no "no cache, no program: report succeeded"
[ "$(wc -l < off.err)" -eq 1 ] && grep -q "prog: cannot read.*cache is off" off.err ||
	{ cat off.err; no "no cache, no program: not one line saying so"; }
"$profil" report --symfs nowhere run1 > /dev/null 2> sym.err && no "--symfs nowhere accepted"
grep -q "symfs 'nowhere'" sym.err || no "--symfs nowhere: $(cat sym.err)"

# --no-cache and PROFIL_CACHE=off keep nothing; a small limit keeps
# nothing too big, in one line each; --trim and --clear.
build third
PROFIL_CACHE=$tmp/c2 prun --no-cache -o run2 ./prog 5 2> /dev/null || no "run --no-cache"
[ -e "$tmp/c2" ] && no "--no-cache made a cache"
PROFIL_CACHE=off prun -o run3 ./prog 5 2> /dev/null || no "run with PROFIL_CACHE=off"
# 30: the program's own work (~20 ms) is sure to be sampled, also by the
# CPU timer a thread starts on, which fires at the kernel's tick.
PROFIL_CACHE=$tmp/c3 PROFIL_CACHE_SIZE=4k prun -o run4 ./prog 30 2> small.err || no "run, 4k cache"
grep -q "prog (.* MiB) not kept by build ID: above a quarter" small.err || { cat small.err; no "small cache: no note"; }
[ -n "$(find "$tmp/c3" -type f -size +1k 2> /dev/null)" ] && no "a 4k cache holds more"
n=$(PROFIL_CACHE=$tmp/c3 "$profil" cache | sed -n '1s/.*: \([0-9]*\) object.*/\1/p')
[ "$n" = 0 ] || no "a 4k cache lists $n objects"
before=$("$profil" cache | sed -n '1s/.*: \([0-9]*\) object.*/\1/p')
"$profil" cache --trim 1 > trim.txt || no "cache --trim"
after=$("$profil" cache | sed -n '1s/.*: \([0-9]*\) object.*/\1/p')
[ "$after" = 0 ] && [ "$before" -ge 2 ] || no "--trim 1: $before objects then $after"
"$profil" cache --trim lots 2> bad.err && no "--trim lots accepted"
grep -q "trim 'lots': not a size" bad.err || no "--trim lots: $(cat bad.err)"
prun -o run5 ./prog 5 2> /dev/null && "$profil" cache --clear > /dev/null || no "--clear"
[ -z "$(find "$tmp/cache" -type f)" ] || no "--clear left $(find "$tmp/cache" -type f)"
exit $fail
