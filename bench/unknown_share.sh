#!/bin/sh
# unknown_share.sh BUILD [OLD_PROFIL] - the share of samples that profil
# report cannot name ("[unknown]") in Debian's stripped programs and
# libraries (issue 17 item 2): xz -6 and pigz on a generated 50 MB file,
# where installed (sh scripts/setup.sh does not install pigz: apt-get
# install pigz), and the hottest rows.  With OLD_PROFIL (another build's
# command), the same profiles are reported by it too, for a before and
# after.
#   sh bench/unknown_share.sh build /tmp/old/build/bin/profil
set -eu
B=$(cd "${1:-build}" && pwd)
old=${2:-}
profil="$B/bin/profil"
out="$B/bench/unknown"
mkdir -p "$out"
cd "$out"

# 50 MB that compresses as text does: lines of words from a small
# vocabulary, made by awk (nothing downloaded).
if [ ! -f data.txt ]; then
	awk 'BEGIN { srand(7); split("alpha beta gamma delta epsilon zeta eta theta iota kappa " \
		"lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega", w)
		n = 0; while (n < 50000000) { line = ""
		for (i = 0; i < 12; i++) line = line w[int(rand() * 24) + 1] " " int(rand() * 1000) " "
		print line; n += length(line) + 1 } }' > data.txt
fi

unknown() {	# PROFIL PROFILE: the share of [unknown] rows, in percent
	"$1" report --format csv "$2" 2>/dev/null | awk -F, 'NR > 1 && $5 == "[unknown]" { s += $1 }
		END { printf "%.1f", s + 0 }'
}

for prog in "xz -6 -T1 -c" "pigz -p 2 -c"; do
	name=${prog%% *}
	if ! command -v "$name" > /dev/null; then
		echo "$name: not installed"
		continue
	fi
	# shellcheck disable=SC2086
	"$profil" run -o "$name.prof" $prog data.txt > /dev/null 2>&1
	now=$(unknown "$profil" "$name.prof")
	before=
	[ -n "$old" ] && before=" (before: $(unknown "$old" "$name.prof")%)"
	echo "$prog: [unknown] $now%$before; hottest rows:"
	"$profil" report --format csv "$name.prof" 2>/dev/null | awk -F, 'NR > 1 && NR <= 6 {
		n = split($6, p, "/"); printf "    %6.2f%%  %s  %s\n", $1, $5, p[n] }'
done
