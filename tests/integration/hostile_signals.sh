#!/bin/sh
# hostile_signals.sh BUILD - what programs do to signals, stacks, faults
# and sandboxes (issue 24, runtime-audit F4b, F5, F6, F8, F9, F10, F11,
# F12, F4a; issue 23's runtimes that own every signal): each mode of
# tests/cli/sigprog.c runs unprofiled, linked (profil() on from the
# start) and under profil run, with each backend, under a kill timeout;
# each must print what the unprofiled run prints and end with its status.
# Then the full disk of issue 21: profil run of a program whose SIGBUS
# handler calls _exit, on a 64 KiB tmpfs (its counters' pages fault),
# must finish as it does unprofiled, not die of SIGBUS or spin.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
lib="$B/lib"
# -z now: the loader's lazy binding saves the vector registers on the
# stack (3 KiB more with AVX-512), which a PTHREAD_STACK_MIN thread of
# the sanitizers' bigger frames (tinystack) has not to spare, profiled
# or not.
cc -O2 -g -pthread -Wl,-z,now -o plain "$root/tests/cli/sigprog.c" || exit 1
cc -O2 -g -pthread -DWITH_LIBPROFIL -I"$root/include" $san_cflags -Wl,-z,now -o linked \
	"$root/tests/cli/sigprog.c" -L"$lib" -Wl,-rpath,"$lib" -lprofil || exit 1
# No lazy binding in what a handler reaches (F9): the loader's resolver
# needs 3 KiB more stack than a small sigaltstack or thread has to spare.
readelf -d "$lib/libprofil.so" | grep -q "BIND_NOW" || no "libprofil.so is not linked with -z now"
# Under ASan (libasan preloaded or linked), its own SIGSEGV and SIGBUS
# handlers would turn kill -SEGV and kill -BUS into its DEADLYSIGNAL
# report and status 1: they are left to the program, as without ASan.
san_env=
if [ -n "$asan_pre" ]; then
	asan_opts=detect_leaks=0:handle_segv=0:handle_sigbus=0
	san_env="LD_PRELOAD=$asan_pre ASAN_OPTIONS=$asan_opts"
	prun_cmd="env $san_env $profil run"
fi
backends=${PROFIL_BACKENDS:-perf timer}
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
[ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ] || backends=$(echo "$backends" | sed 's/perf//')
limit=${SIGPROG_LIMIT:-60}	# seconds: each run takes well under one

# same WHAT MODE: the last run (got.out, $st) against the unprofiled one.
same() {
	if [ "$st" -eq 137 ]; then
		no "$2, $1: killed after ${limit}s (hung)"
	elif [ "$st" -ne "$want" ] || ! cmp -s want.out got.out; then
		no "$2, $1: status $st, output '$(cat got.out)'; unprofiled: status $want, '$(cat want.out)'; stderr: $(head -c 600 got.err)"
	fi
}

for mode in fault_exit fault_longjmp own_fault kill_segv kill_bus kill_handled \
	    async_cancel tinystack altstack reset_all catchall sigwait_all raw_replace \
	    seccomp_kill seccomp_trap seccomp_eperm seccomp_strict sig_profil exec_in_fork; do
	timeout -s KILL $limit ./plain $mode > want.out 2> want.err
	want=$?
	for be in $backends; do
		case "$asan_pre:$mode" in
		?*:altstack)
			# The sample handler, ASan-instrumented, has bigger
			# frames: 192 (timer) and 296 (perf) bytes written
			# below the 4 KiB sigaltstack, whatever ASan's options.
			echo "not run: $mode with ASan (its instrumented sample handler's frames)"
			continue ;;
		*)	env $san_env PROFIL_BACKEND=$be timeout -s KILL $limit ./linked $mode > got.out 2> got.err
			st=$?
			same "linked, $be" $mode ;;
		esac
		timeout -s KILL $limit $prun_cmd --backend $be -o run.prof ./plain $mode > got.out 2> got.err
		st=$?
		same "profil run, $be" $mode
		rm -rf run.prof
	done
	echo "$mode: status $want, $(tr '\n' ' ' < want.out)"
done

# A sigaltstack just larger than the kernel's signal frame (which is 1 to
# 4 KiB on x86-64, by the processor's vector registers): the handler
# finds too little below its frame, writes nothing past the stack, and
# the timer backend counts the samples lost as "short of stack".  With
# 6 KiB more, every sample is taken on it.  Not under ASan, whose
# instrumented handler has bigger frames.
if [ -z "$asan_pre" ]; then
	for extra in 512 6144; do
		timeout -s KILL $limit ./plain altstack_min $extra > want.out 2> want.err
		want=$?
		for be in $backends; do
			env PROFIL_BACKEND=$be timeout -s KILL $limit ./linked altstack_min $extra > got.out 2> got.err
			st=$?
			same "linked, $be" "altstack_min $extra"
			timeout -s KILL $limit $prun_cmd --backend $be -o run.prof ./plain altstack_min $extra \
				> got.out 2> got.err
			st=$?
			same "profil run, $be" "altstack_min $extra"
			[ "$be" = timer ] || { rm -rf run.prof; continue; }
			head=$("$profil" report run.prof 2>&1 | sed -n 2,3p)
			taken=$(echo "$head" | sed -n 's/^samples taken \([0-9]*\) = counted \([0-9]*\).*/\1/p')
			counted=$(echo "$head" | sed -n 's/^samples taken \([0-9]*\) = counted \([0-9]*\).*/\2/p')
			short=$(echo "$head" | sed -n 's/.*short of stack \([0-9]*\).*/\1/p')
			if [ -z "$taken" ] || [ "$taken" -lt 200 ]; then
				no "altstack_min $extra, timer: not a whole run's samples: $head"
			elif [ $extra -eq 512 ] && [ $((${short:-0} * 10)) -lt $((taken * 9)) ]; then
				no "altstack_min $extra, timer: under 90% of $taken taken counted short of stack: $head"
			elif [ $extra -ne 512 ] && [ $((counted * 20)) -lt $((taken * 19)) ]; then
				no "altstack_min $extra, timer: under 95% of $taken taken counted: $head"
			fi
			rm -rf run.prof
		done
		echo "altstack_min $extra: status $want, $(tr '\n' ' ' < want.out)"
	done
fi

# Under a filter that refuses perf_event_open, auto samples with timers
# and says why perf was not used.
$prun_cmd -o run.prof ./plain seccomp_eperm > got.out 2> got.err
grep -q "^profil: perf events refused (EPERM, as from a seccomp filter)" got.err ||
	no "seccomp_eperm under profil run: perf's refusal not said: $(cat got.err)"
rm -f run.prof

# The full disk, in a mount namespace of our own.
timeout -s KILL $limit ./plain bus_exit > want.out 2> want.err
want=$?
cat > disk.sh <<'DISK'
mkdir full && mount -t tmpfs -o size=64k full full || { echo cannot; exit 0; }
cd full
for be in $backends; do
	timeout -s KILL $limit $prun_cmd --backend $be ../plain bus_exit > ../got.$be.out 2> ../got.$be.err
	echo $? > ../st.$be
done
DISK
if [ "$(id -u)" -eq 0 ]; then ns="unshare -m"; else ns="unshare -rm"; fi
r=$(backends=$backends limit=$limit prun_cmd=$prun_cmd $ns sh disk.sh 2>&1)
if [ "$r" = cannot ] || [ ! -f "st.$(echo $backends | cut -d' ' -f1)" ]; then
	no "cannot mount a tmpfs in a mount namespace ($ns): the full disk is not tested: $r"
else
	for be in $backends; do
		st=$(cat st.$be)
		cp got.$be.out got.out
		cp got.$be.err got.err
		same "profil run on a full disk, $be" bus_exit
		echo "bus_exit on a full disk, $be: status $st, $(tr '\n' ' ' < got.out)$(head -n 2 got.err | tr '\n' ' ')"
	done
fi
[ $fail -eq 0 ] && echo "hostile_signals: all checks passed"
exit $fail
