#!/bin/sh
# run.sh BUILD_DIR - run every test built in BUILD_DIR, one line each,
# and close with "N passed, N failed".  Results go to BUILD_DIR/results
# for summary.sh.
B=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$B/results"
mkdir -p "$B/logs"
# profil run keeps objects by build ID: in the build, not the user's cache.
PROFIL_CACHE=$(cd "$B" && pwd)/test-cache
export PROFIL_CACHE
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

# PROFIL_TEST_EMULATOR: a command that runs another processor's programs
# (tests/emulate.sh, from make test-emulated); it goes before each.
emu=${PROFIL_TEST_EMULATOR:-}
for t in "$B"/tests/unit/*; do
	[ -x "$t" ] && run_one "unit/${t##*/}" $emu "$t"
done
# Each integration program runs once per backend; PROFIL_BACKENDS
# narrows the list (the sanitizer build runs only the default one).
# PROFIL_TEST_PRELOAD: a library to preload into each (see test-tsan).
backends=${PROFIL_BACKENDS:-perf timer}
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ] || backends=$(echo "$backends" | sed 's/perf//')
if [ -n "$emu" ]; then
	echo "not run under emulation: the perf backend's tests (qemu-user has no perf_event_open;" \
		"the host's perf events would sample the emulator, not the program)"
	backends=$(echo "$backends" | sed 's/perf//')
fi
# What the emulated pass leaves out, and why.
emu_skip() {	# NAME: the reason, or nothing
	case $1 in
	exec|eintr|envvars|interfere)
		echo "it execs a program of its own processor: qemu-user cannot without binfmt_misc" ;;
	rawclone) echo "qemu-user refuses clone(CLONE_VM) without CLONE_THREAD" ;;
	sigprof) echo "qemu-user delivers a program's own ITIMER_PROF short, libprofil or not" ;;
	sprofil_threads) echo "its 5% bound on the overflow bin is native code's: under" \
		"qemu-user the code between the regions costs more (11%)" ;;
	pcsample) echo "its 95% bound on the pcs in the hot function is native code's:" \
		"under qemu-user one run in three has 90%" ;;
	single_thread) echo "qemu-user's own thread is in /proc/self/task" ;;
	systime) echo "its workload must be mostly system time: emulated user code is" \
		"slower, and the share fell to 0.49 on a busy machine" ;;
	stress_*) echo "minutes each under emulation at the stress tests' highest rates" ;;
	esac
}
# What the sanitizer build leaves out, and why.
san=
readelf -d "$B/lib/libprofil.so" 2>/dev/null | grep -q libasan && san=1
san_skip() {	# NAME: the reason, or nothing
	case $1 in
	crash_memtest) echo "it overwrites the thread's TLS mapping, where the sanitizers" \
		"keep state their code reads" ;;
	handler_alloc) echo "it interposes malloc, which the sanitizers' runtime owns" ;;
	esac
}
for t in "$B"/tests/integration/*; do
	[ -x "$t" ] || continue
	why=
	[ -z "$emu" ] || why=$(emu_skip "${t##*/}")
	if [ -n "$san" ] && [ -n "$(san_skip "${t##*/}")" ]; then
		echo "not run in this build: integration/${t##*/} ($(san_skip "${t##*/}"))"
		continue
	fi
	if [ -n "$why" ]; then
		echo "not run under emulation: integration/${t##*/} ($why)"
		continue
	fi
	for be in $backends; do
		run_one "integration/${t##*/}[$be]" env PROFIL_BACKEND="$be" \
			${PROFIL_TEST_PRELOAD:+LD_PRELOAD=$PROFIL_TEST_PRELOAD} $emu "$t"
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
# run in the plain build only.  (hostile_signals.sh runs in both: it
# turns ASan's SIGSEGV and SIGBUS handlers off itself.)
plain_only="valgrind.sh package.sh"
# PROFIL_SCRIPTS=none: only the programs built in B (the ThreadSanitizer
# pass builds a few of them and none of the command).
# PROFIL_SCRIPTS=a list of names: only those (the emulated pass).
scripts=${PROFIL_SCRIPTS:-all}
[ -n "$emu" ] && echo "not run under emulation: the scripts but $scripts" \
	"(they build and run this machine's programs)"
for t in "$root"/tests/integration/*.sh; do
	[ -f "$t" ] && [ "$scripts" != none ] || continue
	case " $scripts " in
	" all "|*" ${t##*/} "*) ;;
	*) continue ;;
	esac
	if [ "${t##*/}" = emulated_run.sh ] && [ -z "$emu" ]; then
		echo "not run in this build: integration/emulated_run.sh (make test-emulated runs it)"
		continue
	fi
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
