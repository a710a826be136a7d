#!/bin/sh
# cli_stripped.sh BUILD - stripped code still has names (issue 17 item
# 2): the samples of a stripped program's functions, which no symbol
# covers, are grouped by the function ranges of its .eh_frame and named
# PROGRAM+0xSTART (the start the -g build's symbol has) in every output
# (text, --lines, csv, json, html, pprof); --annotate takes such a name.
# The -g build of the same program is named by its symbols as before.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

cc -O2 -g -o stripped_g "$root/tests/cli/stripped.c" || exit 1
strip -o stripped stripped_g || exit 1
readelf -S stripped | grep -q '\.symtab' && no "strip left a symbol table"
a=$(nm stripped_g | awk '$3 == "hot_a" { sub(/^0+/, "", $1); print $1 }')
b=$(nm stripped_g | awk '$3 == "hot_b" { sub(/^0+/, "", $1); print $1 }')
[ -n "$a" ] && [ -n "$b" ] || { no "no hot_a, hot_b in the -g build: $(nm stripped_g)"; exit 1; }

prun -o s.prof ./stripped 150 > /dev/null 2>&1 || no "stripped: status $?"
"$profil" report --format csv s.prof > s.csv || no "report csv: status $?"
sa=$(share s.csv "stripped+0x$a" stripped)
sb=$(share s.csv "stripped+0x$b" stripped)
unknown=$(share s.csv "[unknown]" stripped)
# hot_a does twice hot_b's work: about 67% and 33% of some 400 samples
# (2.4 points of sampling error each); far apart whatever the load.
awk -v a="$sa" -v b="$sb" 'BEGIN { exit !(a > b && b > 15 && a + b > 90) }' \
	|| no "stripped+0x$a $sa%, stripped+0x$b $sb%: $(cat s.csv)"
awk -v u="$unknown" 'BEGIN { exit !(u < 1) }' || no "[unknown] $unknown% of a stripped program"

"$profil" report s.prof > s.txt || no "report: status $?"
grep -q " stripped+0x$a  *stripped$" s.txt || no "text: no stripped+0x$a row: $(cat s.txt)"
"$profil" report --lines s.prof > l.txt || no "report --lines: status $?"
grep -q "stripped+0x$a (stripped)" l.txt || no "--lines: no stripped+0x$a: $(cat l.txt)"
"$profil" report --format json s.prof > s.json || no "report json: status $?"
grep -q "\"stripped+0x$a\"" s.json || no "json: no stripped+0x$a"
"$profil" report --html s.html s.prof || no "report --html: status $?"
grep -q "stripped+0x$a" s.html || no "html: no stripped+0x$a"
"$profil" export --format pprof -o s.pb.gz s.prof || no "export pprof: status $?"
gzip -dc s.pb.gz | grep -aq "stripped+0x$a" || no "pprof: no function stripped+0x$a"

# --annotate by that name: hot_a's instructions, with its samples.
"$profil" report --annotate "stripped+0x$a" s.prof > ann.txt 2>&1 \
	|| { cat ann.txt; no "--annotate stripped+0x$a: status $?"; }
head -1 ann.txt | grep -q "^stripped+0x$a in .*/stripped: [0-9]* samples" \
	|| no "--annotate stripped+0x$a: $(head -1 ann.txt)"
grep -Eq "^ [ 0-9.%]*$a:" ann.txt || no "--annotate: hot_a's first instruction not listed"
grep -Eq '^ *[0-9.]+% +[0-9]+ ' ann.txt || no "--annotate: no instruction with samples"
"$profil" report --annotate "stripped+0x$(printf %x $((0x$a + 1)))" s.prof > /dev/null 2>&1 \
	&& no "--annotate of an address inside the function, not its start, was taken"

# Not stripped: its symbols name it.
prun -o g.prof ./stripped_g 60 > /dev/null 2>&1 || no "stripped_g: status $?"
"$profil" report --format csv g.prof > g.csv || no "report -g build"
grep -q ',hot_a,' g.csv || no "the -g build's hot_a not named: $(cat g.csv)"
# Its own rows: stacks pass through libc's internal functions, which
# Debian's libc names only with libc6-dbg installed.
awk -F, 'NR > 1 && $5 ~ /\+0x/ && $6 ~ /stripped_g$/ { found = 1 } END { exit !found }' g.csv \
	&& no "the -g build has a +0x row: $(cat g.csv)"

[ "$fail" -eq 0 ] && echo "stripped: hot_a $sa%, hot_b $sb%, [unknown] $unknown%"
exit "$fail"
