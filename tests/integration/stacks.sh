#!/bin/sh
# stacks.sh BUILD - call stacks under profil run (SPEC section 10), timer
# backend: tests/cli/stacks.c, a program with a known call structure
# (its own recursion, qsort calling back its comparator, zlib, two
# threads), has at least 99.5% of its stacks complete, with the callers
# it really has (tests/cli/stackcheck.c reads the file); --no-stacks
# writes none and the flat profile is the same kind of file; and the
# hostile cases (garbage rbp, makecontext stacks, a small sigaltstack,
# dlopen/dlclose in a loop, vfork children) end normally with their
# stacks kept.
# In the emulated pass (make test-emulated: PROFIL_TEST_EMULATOR and
# PROFIL_TEST_ARCH set), the same with that processor's library and
# program under qemu-user, read by this machine's command.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
emu=${PROFIL_TEST_EMULATOR:-}
xcc=cc
nm=nm
calls=calls
zlib=-lz
if [ -n "$emu" ]; then
	xcc=$PROFIL_TEST_ARCH-linux-gnu-gcc
	nm=$PROFIL_TEST_ARCH-linux-gnu-nm
	PROFIL_LIBRARY=$B/lib/libprofil.so
	export PROFIL_LIBRARY
	if ! echo 'int main(void) { return 0; }' | $xcc -x c -o /dev/null - -lz 2>/dev/null; then
		echo "zlib part left out: libz is not installed for $PROFIL_TEST_ARCH" \
			"(scripts/setup.sh installs no zlib1g-dev:arm64); dlopen's loop opens libm"
		calls=calls-nozlib
		zlib=-DSTACKS_NO_ZLIB
	fi
else
	case $(uname -m) in
	x86_64|aarch64) ;;
	*) echo "skip: stacks are recorded on x86-64 and arm64 only"; exit 0 ;;
	esac
fi

$xcc -O2 -g -pthread $san_cflags -o stacks "$root/tests/cli/stacks.c" $zlib || exit 1
cc -O1 -g -I"$root/src" -o stackcheck "$root/tests/cli/stackcheck.c" \
	"$root/src/format/profile.c" "$root/src/format/profile_guard.c" "$root/src/common/bins.c" || exit 1
$nm -S --defined-only stacks > stacks.nm

# The program's own file (vfork's children leave files of true(1)).
own() { ls "$1"/stacks.*.prof 2>/dev/null | head -n 1; }

prun --backend timer -o calls.prof $emu ./stacks calls 3 > /dev/null 2>&1 || no "calls: status $?"
f=$(own calls.prof)
./stackcheck "$f" stacks.nm $calls > calls.txt || { cat calls.txt; no "calls: see above"; }
sed -n 's/^complete/timer: complete/p' calls.txt
adds_up calls.prof || no "calls: the statistics do not add up"

prun --no-stacks --backend timer -o flat.prof $emu ./stacks calls 0.5 > /dev/null 2>&1 \
	|| no "--no-stacks: status $?"
./stackcheck "$(own flat.prof)" stacks.nm any > flat.txt 2>&1 && no "--no-stacks: a stack table"
grep -q "no stack table" flat.txt || { cat flat.txt; no "--no-stacks: not said"; }

for mode in garbage ucontext altstack dlopen vfork; do
	timeout 120 env PROFIL_BACKEND=timer $prun_cmd -o $mode.prof $emu ./stacks $mode 1 \
		> $mode.out 2>&1 || { tail -n 5 $mode.out; no "$mode: status $?"; continue; }
	./stackcheck "$(own $mode.prof)" stacks.nm any > $mode.txt \
		|| { cat $mode.txt; no "$mode: no stacks"; }
	kept=$(awk '/^stacks/ { print $2 }' $mode.txt)
	[ "${kept:-0}" -gt 0 ] || no "$mode: no stack kept"
done
# A handler on the program's small alternate stack is walked through to
# the interrupted frames on the thread's own stack (the samples left
# with their pc alone for want of room there, as under ASan's larger
# frames, aside).
awk '$1 == "complete" || $1 == "no-room" { p += $3 } END { exit !(p >= 99.5) }' altstack.txt \
	|| { cat altstack.txt; no "altstack: stacks through the signal frame not complete"; }
exit $fail
