#!/bin/sh
# cli_dlopen.sh BUILD - dlopen under profil run finds what it finds
# without it when the name or the caller's search path has dynamic
# string tokens (ld.so(8)): a library whose DT_RUNPATH, or DT_RPATH, is
# $ORIGIN/$LIB/plugins opens its plugin by a bare name; names with
# $ORIGIN or ${ORIGIN} (at the start or further in) and $PLATFORM or
# ${PLATFORM}.  Each plugin is found and its samples carry its name
# (at least 80% of the run's: the rest is start-up and loading).
# (Not in the sanitizer build: AddressSanitizer's own dlopen interceptor
# makes itself the caller, so $ORIGIN and RUNPATH are its own, with or
# without profil.)
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
if [ -n "$asan_pre" ]; then
	echo "cli_dlopen: not under AddressSanitizer (see above)"
	exit 0
fi

# What glibc expands $LIB and $PLATFORM to here ($PLATFORM is glibc's,
# a CPU name on some x86 machines, not always AT_PLATFORM): the shortest
# of the directories it searches for a DT_RUNPATH made of each.
echo 'int main(void) { return 0; }' > probe.c
cc -o probe probe.c -Wl,--enable-new-dtags,-rpath,'/probe-lib/$LIB:/probe-platform/$PLATFORM'
LD_DEBUG=libs ./probe 2> probe.txt
token() {
	sed -n 's/.*search path=\([^	 ]*\).*/\1/p' probe.txt | tr ':' '\n' | sed -n "s|^/$1/||p" \
		| awk 'NR == 1 || length($0) < length(best) { best = $0 } END { print best }'
}
lib=$(token probe-lib)
platform=$(token probe-platform)
echo "\$LIB is $lib, \$PLATFORM is $platform"
[ -n "$lib" ] && [ -n "$platform" ] || { cat probe.txt; no "cannot tell what \$LIB and \$PLATFORM are"; exit 1; }

mkdir -p a/lib/"$lib"/plugins b/lib/"$lib"/plugins a/lib/"$platform"
cc -O2 -g -fPIC -shared -DNAME=plug_work -o a/lib/"$lib"/plugins/libplug.so "$root/tests/cli/dllib.c"
cp a/lib/"$lib"/plugins/libplug.so b/lib/"$lib"/plugins/
cc -O2 -g -fPIC -shared -DNAME=plat_work -o a/lib/"$platform"/libplat.so "$root/tests/cli/dllib.c"
cc -O2 -g -fPIC -shared -Wl,--enable-new-dtags,-rpath,'$ORIGIN/$LIB/plugins' \
	-o a/lib/libouter.so "$root/tests/cli/outer.c" -ldl
cc -O2 -g -fPIC -shared -Wl,--disable-new-dtags,-rpath,'${ORIGIN}/${LIB}/plugins' \
	-o b/lib/libouter.so "$root/tests/cli/outer.c" -ldl
for d in a b; do
	cc -O2 -g -o $d/main "$root/tests/cli/outermain.c" -L$d/lib -louter -Wl,-rpath,'$ORIGIN/lib'
done
readelf -d a/lib/libouter.so | grep -q 'RUNPATH.*\$ORIGIN/\$LIB' || no "a/lib/libouter.so has no \$LIB RUNPATH"
readelf -d b/lib/libouter.so | grep -q 'RPATH.*\${ORIGIN}/\${LIB}' || no "b/lib/libouter.so has no \${LIB} RPATH"

# case DESCRIPTION PROGRAM NAME FUNCTION LIBRARY
n=0
case_() {
	n=$((n + 1))
	./"$2" 30 "$3" "$4" 2> plain.err || { cat plain.err; no "$1: fails without profil"; return; }
	prun -o $n.prof ./"$2" 30 "$3" "$4" 2> run.err || { cat run.err; no "$1: fails under profil run"; return; }
	"$profil" report --format csv $n.prof > $n.csv || no "$1: report"
	s=$(share $n.csv "$4" "$5")
	echo "$1: $4 in $5: $s%"
	within "$s" 90 10 || { cat $n.csv; no "$1: $4's samples in $5: $s%"; }
}
case_ "RUNPATH \$ORIGIN/\$LIB/plugins, bare name" a/main libplug.so plug_work libplug.so
case_ "RPATH \${ORIGIN}/\${LIB}/plugins, bare name" b/main libplug.so plug_work libplug.so
case_ "\$ORIGIN/\$PLATFORM/libplat.so" a/main '$ORIGIN/$PLATFORM/libplat.so' plat_work libplat.so
case_ "\${ORIGIN} further in" a/main '/.${ORIGIN}/${PLATFORM}/libplat.so' plat_work libplat.so
case_ "\$ORIGIN/../lib/\$LIB" a/main '$ORIGIN/../lib/$LIB/plugins/libplug.so' plug_work libplug.so
case_ "an absolute name with \$PLATFORM" a/main "$tmp/a/lib/\$PLATFORM/libplat.so" plat_work libplat.so
# Not a token: $ORIGINAL is left alone, and not found, as without profil.
./a/main 1 '$ORIGINAL/libplat.so' plat_work 2> plain.err && no "\$ORIGINAL was found without profil"
prun -o x.prof ./a/main 1 '$ORIGINAL/libplat.so' plat_work 2> run.err && no "\$ORIGINAL found under profil"
grep -q 'outer: \$ORIGINAL/libplat.so' run.err || no "\$ORIGINAL: $(cat run.err)"

[ $fail -eq 0 ] && echo "cli_dlopen: all checks passed"
exit $fail
