#!/bin/sh
# run.sh BUILD_DIR - run every test built in BUILD_DIR, one line each,
# and close with "N passed, N failed".  Results go to BUILD_DIR/results
# for summary.sh.
B=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$B/results"
mkdir -p "$B/logs"
: > "$out"
passed=0
failed=0
failed_names=""

run_one() {	# name command...
	name=$1; shift
	log="$B/logs/$(echo "$name" | tr '/' '_').log"
	start=$(date +%s)
	if PROFIL_TEST_ROOT="$root" PROFIL_TEST_BUILD="$B" timeout 600 "$@" > "$log" 2>&1; then
		passed=$((passed + 1))
		echo "ok      $name ($(( $(date +%s) - start ))s)"
		echo "pass $name" >> "$out"
	else
		failed=$((failed + 1))
		failed_names="$failed_names $name"
		echo "FAILED  $name ($(( $(date +%s) - start ))s); its output:"
		sed 's/^/    /' "$log" | tail -n 40
		echo "fail $name" >> "$out"
	fi
}

for t in "$B"/tests/unit/*; do
	[ -x "$t" ] && run_one "unit/${t##*/}" "$t"
done
# Each integration program runs once per backend; PROFIL_BACKENDS
# narrows the list (the sanitizer build runs only the default one).
# PROFIL_TEST_PRELOAD: a library to preload into each (see test-tsan).
backends=${PROFIL_BACKENDS:-perf timer}
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ] || backends=$(echo "$backends" | sed 's/perf//')
for t in "$B"/tests/integration/*; do
	[ -x "$t" ] || continue
	for be in $backends; do
		run_one "integration/${t##*/}[$be]" env PROFIL_BACKEND="$be" \
			${PROFIL_TEST_PRELOAD:+LD_PRELOAD=$PROFIL_TEST_PRELOAD} "$t"
	done
done
# The fuzz targets replay their checked-in corpus and every input that
# ever crashed them (tests/fuzz/regress).
for t in "$B"/tests/fuzz/*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	n=${t##*/}
	regress="$root/tests/fuzz/regress/$n"
	[ -d "$regress" ] || regress=
	run_one "fuzz/$n" "$t" "$root/tests/fuzz/corpus/$n" $regress
done
# valgrind cannot run a program built with AddressSanitizer, and the
# Debian packages are built with Debian's flags whatever the pass: these
# run in the plain build only.
plain_only="valgrind.sh package.sh"
san=
readelf -d "$B/lib/libprofil.so" 2>/dev/null | grep -q libasan && san=1
# PROFIL_SCRIPTS=none: only the programs built in B (the ThreadSanitizer
# pass builds a few of them and none of the command).
for t in "$root"/tests/integration/*.sh; do
	[ -f "$t" ] && [ "${PROFIL_SCRIPTS:-all}" != none ] || continue
	case " $plain_only " in
	*" ${t##*/} "*) if [ -n "$san" ]; then
			echo "not run in this build: integration/${t##*/} (the plain build runs it)"
			continue
		fi ;;
	esac
	run_one "integration/${t##*/}" sh "$t" "$B"
done

echo "$B: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
