# lib.sh - what the gmon tests share; sourced by tests/integration/gmon_*.sh
# with the build directory as $1.
#
# The test programs are real -pg programs built here against the freshly
# built library, and their profiles are read by GNU gprof (binutils).
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
lib=$(cd "$B/lib" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
CC=${CC:-cc}
GPROF=gprof
# The emulated pass (make test-emulated): programs of PROFIL_TEST_ARCH,
# built by its cross compiler, run by $emu, read by its gprof.
emu=${PROFIL_TEST_EMULATOR:-}
if [ -n "$emu" ]; then
	CC=$PROFIL_TEST_ARCH-linux-gnu-gcc
	GPROF=$PROFIL_TEST_ARCH-linux-gnu-gprof
fi
cflags="-pg -O2 -pthread -I$root/include"
san=
# A library built with the sanitizers needs their runtime in the program.
if readelf -d "$lib/libprofil.so" | grep -q libasan; then
	cflags="$cflags -fsanitize=address,undefined"
	san=1
fi

fail() {
	echo "not ok: $*" >&2
	failures=$((failures + 1))
}

done_testing() {
	[ "$failures" -eq 0 ] && echo "$(basename "$0"): ok" && exit 0
	echo "$(basename "$0"): $failures check(s) failed" >&2
	exit 1
}

# build NAME SOURCE [cc flags...] - a -pg program linked with libprofil
build() {
	name=$1 src=$2
	shift 2
	$CC $cflags "$@" -o "$tmp/$name" "$root/tests/gmon/$src" \
		-L"$lib" -Wl,-rpath,"$lib" -lprofil || { echo "cannot build $name" >&2; exit 1; }
}

# calls PROGRAM FILE FUNCTION - the calls gprof's flat profile gives FUNCTION
calls() {
	$GPROF -b -p "$1" "$2" | awk -v f="$3" '
		$NF == f { n = NF >= 7 ? $4 : 0 } END { print n + 0 }'
}

# seconds PROGRAM FILE FUNCTION - its self seconds
seconds() {
	$GPROF -b -p "$1" "$2" | awk -v f="$3" '
		$NF == f { s = $3 } END { print s + 0 }'
}

# total PROGRAM FILE - the seconds gprof accounts for in all
total() {
	$GPROF -b -p "$1" "$2" | awk '$1 ~ /^[0-9.]+$/ { t = $2 } END { print t + 0 }'
}

# field NAME - a "name=value" from the program's figures in $tmp/err
field() {
	tr ' ' '\n' < "$tmp/err" | sed -n "s/^$1=//p" | tail -n 1
}
