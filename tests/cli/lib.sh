# lib.sh - helpers of the command's tests, sourced with B (the build
# directory) and root (the source tree) set.  Gives profil (the command
# built there), tmp (removed at exit unless KEEP is set), fail and no().
B=$(cd "$B" && pwd)
profil="$B/bin/profil"
tmp=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
# Each test's own build-ID cache, never the user's (bidcache.h).
PROFIL_CACHE=$tmp/cache
export PROFIL_CACHE
fail=0
no() { echo "not ok: $*"; fail=1; }

# share CSV FUNCTION OBJECT: the self percent of a row of report --format csv
# (columns found by their names in the header row).
share() {
	awk -F, -v fn="$2" -v obj="$3" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ f = $col["function"]; n = split($col["object"], p, "/")
		  if ((f == fn || index(f, fn ".") == 1) && p[n] == obj) s += $1 }
		END { printf "%.2f\n", s + 0 }' "$1"
}

# within VALUE EXPECTED BOUND: |VALUE - EXPECTED| <= BOUND.
within() {
	awk -v v="$1" -v e="$2" -v b="$3" 'BEGIN { d = v - e; if (d < 0) d = -d; exit !(d <= b) }'
}

# prun ARGS: profil run.  A library built with the sanitizers needs
# their runtime first in the programs it is preloaded into, and those
# are not built to be leak-checked.
asan_pre=
san_cflags=
if readelf -d "$B/lib/libprofil.so" 2>/dev/null | grep -q libasan; then
	asan_pre=$(cc -print-file-name=libasan.so)
	san_cflags="-fsanitize=address,undefined"
fi
# prun_cmd: the same as words, for a program that runs it (unquoted).
prun_cmd="$profil run"
[ -n "$asan_pre" ] && prun_cmd="env LD_PRELOAD=$asan_pre ASAN_OPTIONS=detect_leaks=0 $profil run"
prun() {
	if [ -n "$asan_pre" ]; then
		env LD_PRELOAD="$asan_pre" ASAN_OPTIONS=detect_leaks=0 "$profil" run "$@"
	else
		"$profil" run "$@"
	fi
}

# adds_up PROFILE...: report's statistics add up as SPEC section 2 says
# (taken = counted + outside + saturated + lost), and something was taken.
adds_up() {
	"$profil" report --format json "$@" | tr ',{' '\n\n' | awk -F: '
		!($1 in v) { v[$1] = $2 }
		END { t = v["\"taken\""]; exit !(t > 0 && t == v["\"samples\""] + v["\"outside\""] \
			+ v["\"saturated\""] + v["\"lost\""]) }'
}

# hostile: tests/cli/hostile.c, built once into $tmp.
build_hostile() {
	cc -O2 -g -pthread -o "$tmp/hostile" "$root/tests/cli/hostile.c" || exit 1
}
