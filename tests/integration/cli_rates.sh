#!/bin/sh
# cli_rates.sh BUILD - rates a backend cannot deliver, and lost samples by
# cause (issue 15 item 3), on real programs profiled for real:
#  - profil run refuses a -F above the perf backend's limit in one line
#    naming -F and the limit; --backend timer takes it;
#  - the preload mode lowers PROFIL_HZ to the limit, says so in one line,
#    and the file records both rates (report: "asked, used");
#  - under a kernel.perf_event_max_sample_rate of 2000 (bind-mounted over
#    the real one in a mount namespace of our own, where we may), the
#    same against the kernel's limit;
#  - a ring that cannot keep up (64 KiB stack copies) loses samples as
#    "ring full", and the causes add up to lost in report's JSON, its
#    text and the HTML page's data;
#  - a 4-thread program of 0.3 s CPU or more at 1 kHz, under each backend:
#    the causes add up, and the loss is printed (the issue's figure: under
#    1% on a quiet machine; this machine is shared, and one run in a few
#    dozen lost 19% there, so only a gross bound of 30% is asserted,
#    against the 34% of the original complaint);
#  - a file whose extension page claims more causes than there are is
#    refused in one line.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"

cd "$tmp" || exit 1
cc -O2 -g -pthread -o threads "$root/tests/cli/threads.c" || exit 1
cc -O2 -g -o spin "$root/tests/cli/spin.c" || exit 1
preload="$B/lib/libprofil.so"
[ -n "$asan_pre" ] && preload="$asan_pre:$preload"

perf_ok=0
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 3)
{ [ "$paranoid" -le 2 ] || [ "$(id -u)" -eq 0 ]; } && perf_ok=1
kernel=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2>/dev/null || echo 0)
limit=10000
[ "$kernel" -gt 0 ] && [ "$kernel" -lt $limit ] && limit=$kernel

# json FILE: report --format json's lost, and the sum of its causes.
causes() {
	"$profil" report --format json "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
b = d["lost_by"]
print(d["lost"], sum(b.values()), d["taken"], b["ring_full"], d["hz"], d["hz_asked"])'
}

# 1. -F above the limit: refused in one line by profil run.
over=$((limit * 5))
prun -F $over -o refused.prof ./spin 10 > out 2> err
st=$?
[ $st -eq 2 ] || no "-F $over: status $st, want 2"
[ "$(wc -l < err)" -eq 1 ] || no "-F $over: $(wc -l < err) lines on stderr: $(cat err)"
grep -q -- "-F $over: .*$limit" err || no "-F $over: the line names neither -F nor $limit: $(cat err)"
[ ! -e refused.prof ] || no "-F $over: ran anyway"
prun --backend timer -F $over -o timer.prof ./spin 10 > out 2> err \
	|| no "--backend timer -F $over: status $?: $(cat err)"
"$profil" report timer.prof > timer.txt || no "report timer.prof"
grep -q "^rate $over Hz asked, " timer.txt || no "timer: not at $over Hz: $(sed -n 3,4p timer.txt)"
prun -F $limit -o at.prof ./spin 10 > out 2> err || no "-F $limit (the limit): status $?: $(cat err)"

# 2. The preload mode lowers a PROFIL_HZ above the limit, in one line.
if [ $perf_ok -eq 1 ]; then
	env LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 PROFIL_RUN=1 PROFIL_OUT=low.prof \
		PROFIL_BACKEND=perf PROFIL_HZ=$over ./spin 20 > out 2> err || no "PROFIL_HZ=$over: status $?"
	[ "$(grep -c libprofil err)" -eq 1 ] || no "PROFIL_HZ=$over: want one line: $(cat err)"
	grep -q "^libprofil: rate $over Hz: above what the perf backend delivers here (.*$limit.*); using $limit Hz$" err \
		|| no "PROFIL_HZ=$over: $(cat err)"
	"$profil" report low.prof > low.txt || no "report low.prof"
	grep -q "^rate $over Hz asked, $limit Hz used (the backend's limit)" low.txt \
		|| no "low.prof: $(sed -n 3,4p low.txt)"
	set -- $(causes low.prof)
	[ "$5" = $limit ] && [ "$6" = $over ] || no "low.prof: JSON hz $5, hz_asked $6"
	# profil(5): cpu time stands at the rate used (a sample is 1/limit s).
	grep -q "each sample $(awk -v l=$limit 'BEGIN { printf "%.3f", 1000 / l }') ms" low.txt \
		|| no "low.prof: samples not at 1/$limit s: $(sed -n 1p low.txt)"
else
	echo "skip: the perf backend's limit (perf events not allowed here)"
fi

# 3. The kernel's limit, in a mount namespace where it reads 2000.
if [ $perf_ok -eq 1 ] && [ "$(id -u)" -eq 0 ] && command -v unshare > /dev/null \
   && unshare -m true 2> /dev/null; then
	echo 2000 > fake_rate
	cat > ns.sh <<EOF
mount --bind "$tmp/fake_rate" /proc/sys/kernel/perf_event_max_sample_rate || exit 9
$prun_cmd -F 5000 -o k.prof ./spin 10 > k.out 2> k.err; echo \$? > k.status
env LD_PRELOAD="$preload" ASAN_OPTIONS=detect_leaks=0 PROFIL_RUN=1 PROFIL_OUT=k2.prof PROFIL_BACKEND=perf PROFIL_HZ=5000 ./spin 10 > k2.out 2> k2.err
EOF
	unshare -m sh ns.sh
	case $? in
	9) echo "skip: the kernel's limit (no bind mount over /proc/sys here)" ;;
	*)
		[ "$(cat k.status)" = 2 ] || no "kernel limit 2000, -F 5000: status $(cat k.status)"
		grep -q -- "-F 5000: above kernel.perf_event_max_sample_rate (2000)" k.err \
			|| no "kernel limit: $(cat k.err)"
		grep -q "^libprofil: rate 5000 Hz: above what the perf backend delivers here (kernel.perf_event_max_sample_rate is 2000); using 2000 Hz$" k2.err \
			|| no "kernel limit, preload: $(cat k2.err)"
		"$profil" report k2.prof | grep -q "^rate 5000 Hz asked, 2000 Hz used" \
			|| no "kernel limit, preload: $("$profil" report k2.prof | sed -n 3,4p)" ;;
	esac
	# The real limit is untouched outside the namespace.
	[ "$(cat /proc/sys/kernel/perf_event_max_sample_rate)" = "$kernel" ] \
		|| no "perf_event_max_sample_rate changed outside the namespace"
else
	echo "skip: the kernel's limit (needs root, perf events and unshare -m)"
fi

# 4. A ring that cannot keep up: 64 KiB stack copies at the limit.
if [ $perf_ok -eq 1 ]; then
	PROFIL_STACK_COPY=65528 prun --backend perf -F $limit -o full.prof ./threads full.cpu 20 \
		2> err || no "ring full: status $?: $(cat err)"
	set -- $(causes full.prof)
	echo "ring full: lost $1 of $3 taken, $4 ring full; causes add up to $2"
	[ "$1" = "$2" ] || no "ring full: lost $1, the causes add up to $2"
	[ "$4" -gt 0 ] || no "ring full: no sample lost as ring full (lost $1)"
	"$profil" report full.prof > full.txt || no "report full.prof"
	grep -q "^lost $1 (.*ring full $4" full.txt || no "ring full: $(sed -n 2,3p full.txt)"
	"$profil" report --html full.html full.prof > /dev/null 2>&1 || no "report --html"
	grep -q "\"ring_full\":$4," full.html || no "the HTML page's data has no ring_full $4"
	grep -q "ring full $4" full.html || no "the HTML page does not warn of ring full $4"
fi

# 5. Four threads, 0.3 s of CPU or more, 1 kHz.
backends=timer
[ $perf_ok -eq 1 ] && backends="perf timer"
for be in $backends; do
	prun --backend "$be" -o "$be.prof" ./threads "$be.cpu" 60 2> err \
		|| no "$be: threads: status $?: $(cat err)"
	cpu=$(awk '{ s += $3 } END { printf "%.3f", s / 1e9 }' "$be.cpu")
	set -- $(causes "$be.prof")
	pct=$(awk -v l="$1" -v t="$3" 'BEGIN { printf "%.2f", t ? 100 * l / t : 0 }')
	echo "$be: 4 threads, $cpu s of CPU: lost $1 of $3 ($pct%): $("$profil" report "$be.prof" | sed -n 's/^lost [0-9]* ([^)]*): //p')"
	[ "$1" = "$2" ] || no "$be: lost $1, the causes add up to $2"
	awk -v c="$cpu" 'BEGIN { exit !(c >= 0.3) }' || no "$be: only $cpu s of CPU"
	awk -v p="$pct" 'BEGIN { exit !(p < 30) }' || no "$be: lost $pct%"
done

# 6. A corrupt count of causes: refused in one line.
prun --backend timer -o corrupt.prof ./spin 10 2> err || no "corrupt.prof: status $?: $(cat err)"
set -- corrupt.prof/*.prof
[ $# -eq 1 ] && cp "$1" bad.prof || no "corrupt.prof: $# files"
# lost_kinds is at byte 204 of the extension page, in the file as written:
# a packed file (flag 16, profil(5)) has its pages elsewhere.
kinds=$(python3 - bad.prof <<'EOF'
import struct, sys
with open(sys.argv[1], 'r+b') as f:
    d = f.read()
    flags, = struct.unpack_from('<I', d, 48)
    ext, = struct.unpack_from('<Q', d, 200)
    at = ext + 204
    if ext and flags & 16:
        n, = struct.unpack_from('<Q', d, 4104)
        for i in range(n):
            a, e, fr = struct.unpack_from('<QQQ', d, 4112 + 24 * i)
            if a <= at < e:
                at = fr + at - a
                break
        else:
            at = None
    if not ext or at is None:
        print('none')
    else:
        f.seek(at)
        f.write(struct.pack('<I', 9))
        print(9)
EOF
)
if [ "$kinds" = 9 ]; then
	"$profil" report bad.prof > out 2> err && no "a file with 9 causes of loss was read"
	grep -q "bad.prof: corrupt extension page: 9 causes of loss, at most 8" err \
		|| no "corrupt causes: $(cat err)"
else
	no "corrupt.prof: no extension page to corrupt ($kinds)"
fi

[ $fail -eq 0 ] && echo "cli_rates: all checks passed"
exit $fail
