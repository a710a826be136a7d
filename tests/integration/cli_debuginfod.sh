#!/bin/sh
# cli_debuginfod.sh BUILD - debug info where it is kept apart from the
# program (issue 17 item 3): a stripped program whose -g build a real
# debuginfod server (Debian's package) serves on 127.0.0.1 gets its
# functions and lines back through DEBUGINFOD_URLS; with the server
# stopped, the report still works, by address, and says why in one
# line.  And a .gnu_debuglink beside the program is followed.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
command -v debuginfod > /dev/null && command -v debuginfod-find > /dev/null \
	|| { no "debuginfod is not installed (sh scripts/setup.sh --test installs it)"; exit 1; }

server=
stop_server() {
	[ -n "$server" ] || return 0
	kill "$server" 2>/dev/null
	wait "$server" 2>/dev/null
	server=
}
trap 'stop_server; rm -rf "$tmp"' EXIT
unset DEBUGINFOD_URLS DEBUGINFOD_PROGRESS DEBUGINFOD_VERBOSE
export DEBUGINFOD_TIMEOUT=10

mkdir src bin
cc -O2 -g -o src/stripped "$root/tests/cli/stripped.c" || exit 1
strip -o bin/stripped src/stripped || exit 1
id=$(readelf -n bin/stripped | awk '/Build ID/ { print $3 }')
[ -n "$id" ] || { no "no build ID in the program"; exit 1; }
hot_line=$(grep -n 'h = h \* 2654435761u' "$root/tests/cli/stripped.c" | cut -d: -f1)

# A free port: the kernel's choice, then given to the server (another
# process may take it meanwhile: then the next try).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' \
		2>/dev/null || echo $((20000 + $$ % 20000))
}
# The server: its own database, scanning src/ once (-F), no rescan or
# grooming; ended by timeout(1) if this script were killed.
url=
for try in 1 2 3; do
	port=$(free_port)
	timeout 300 debuginfod -p "$port" -d "$tmp/db.sqlite" -F -t 0 -g 0 "$tmp/src" \
		> server.log 2>&1 &
	server=$!
	# Ready once it serves the -g build's debug info (30 s at most).
	for i in $(seq 60); do
		if DEBUGINFOD_URLS="http://127.0.0.1:$port" DEBUGINFOD_CACHE_PATH="$tmp/poll$i" \
			DEBUGINFOD_TIMEOUT=2 timeout 10 debuginfod-find debuginfo "$id" > /dev/null 2>&1; then
			url="http://127.0.0.1:$port"
			break
		fi
		kill -0 "$server" 2>/dev/null || break
		sleep 0.5
	done
	[ -n "$url" ] && break
	stop_server
done
[ -n "$url" ] || { cat server.log; no "debuginfod did not start or serve $id"; exit 1; }

prun -o s.prof ./bin/stripped 150 > /dev/null 2>&1 || no "stripped: status $?"

# Served: the functions and their lines.
report() {	# CACHE ARGS...: profil report with the server's URL
	cache=$1; shift
	DEBUGINFOD_URLS="$url" DEBUGINFOD_CACHE_PATH="$tmp/$cache" timeout 120 "$profil" report "$@"
}
report c1 --format csv s.prof > s.csv 2> s.err || no "report with debuginfod: status $?"
[ -s s.err ] && no "report with debuginfod said: $(cat s.err)"
sa=$(share s.csv hot_a stripped)
sb=$(share s.csv hot_b stripped)
awk -v a="$sa" -v b="$sb" 'BEGIN { exit !(a > b && b > 15 && a + b > 90) }' \
	|| no "through debuginfod: hot_a $sa%, hot_b $sb%: $(cat s.csv)"
# The program's own rows (libc's internal functions in its stacks have
# names only where libc6-dbg is installed).
awk -F, 'NR > 1 && $5 ~ /\+0x/ && $6 ~ /\/stripped$/ { found = 1 } END { exit !found }' s.csv \
	&& no "through debuginfod: a function still named by address: $(cat s.csv)"
report c1 --lines s.prof > l.txt 2>&1 || no "report --lines with debuginfod: status $?"
grep -Eq "/stripped\.c:$hot_line +hot_a \(stripped\)" l.txt \
	|| no "through debuginfod: no line stripped.c:$hot_line of hot_a: $(cat l.txt)"

# Stopped: by address, and one line saying why.
stop_server
report c2 --format csv s.prof > d.csv 2> d.err || no "report, server stopped: status $?"
grep -q ",stripped+0x[0-9a-f]*," d.csv || no "server stopped: not by address: $(cat d.csv)"
[ "$(wc -l < d.err)" -eq 1 ] || no "server stopped: not one line: $(cat d.err)"
grep -q "stripped: no debug info from debuginfod ($url): Connection refused" d.err \
	|| no "server stopped: $(cat d.err)"
report c3 --lines s.prof > d.txt 2> d.err || no "report --lines, server stopped: status $?"
grep -q "?? .*stripped+0x" d.txt || no "--lines, server stopped: $(cat d.txt)"

# A debug link: the debug file beside the program, as Debian's -dbg
# packages once put them.
mkdir linked
objcopy --only-keep-debug src/stripped linked/stripped.debug || exit 1
strip -o linked/stripped src/stripped || exit 1
(cd linked && objcopy --add-gnu-debuglink=stripped.debug stripped) || exit 1
prun -o k.prof ./linked/stripped 60 > /dev/null 2>&1 || no "linked: status $?"
timeout 120 "$profil" report --lines k.prof > k.txt 2> k.err || no "report, debug link: status $?"
grep -Eq "/stripped\.c:$hot_line +hot_a \(stripped\)" k.txt \
	|| no "debug link: no line stripped.c:$hot_line of hot_a: $(cat k.txt)"

[ "$fail" -eq 0 ] && echo "debuginfod at $url: hot_a $sa%, hot_b $sb%; stopped: $(cat d.err)"
exit "$fail"
