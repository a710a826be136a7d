#!/bin/sh
# html.sh BUILD [FUNCTIONS [PER]] - make bench-html: the size of the
# page report --html writes for a large profile, the time the command
# takes to write it, and the time chromium takes to show it (first
# render, a click on the hottest function, a filter).  The profile is
# made up (bench/html_profile.c) over a real program of FUNCTIONS
# functions (default 100000) built with -g, with PER distinct addresses
# counted in each (default 10: a million in all).  Then the same for a
# profile with STACKS distinct stacks (default 100000, 8 to 40 deep,
# tests/html/folded_profile.c) over the same functions: the flame
# graph's first render, a search and a zoom too.
set -eu
B=${1:-build}
N=${2:-100000}
PER=${3:-10}
STACKS=${4:-100000}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$B/bench/html"
mkdir -p "$out"
B=$(cd "$B" && pwd)
out=$(cd "$out" && pwd)
cd "$out"

# The program: N functions in files of 10000, each long enough for PER
# addresses at -O0.
if [ ! -x big ] || [ "$(cat big.n 2>/dev/null)" != "$N" ]; then
	rm -f big_*.c
	awk -v n="$N" 'BEGIN {
		for (i = 0; i < n; i++) {
			if (i % 10000 == 0) { f = sprintf("big_%03d.c", i / 10000); printf "" > f }
			printf "__attribute__((noinline, used)) int f_%06d(int x)\n{\n", i >> f
			printf "\tx = x * 3 + %d;\n\tx ^= x >> 3;\n\tx = x * 5 + 7;\n", i >> f
			printf "\tx ^= x << 2;\n\tx = x * 9 + 11;\n\treturn x + 1;\n}\n\n" >> f
		}
		print "int main(void) { return 0; }" > "big_main.c"
	}'
	echo "compiling $N functions"
	for f in big_*.c; do echo "${f%.c}.o"; done | xargs -P 2 -I{} sh -c \
		'cc -O0 -g -c -o {} "$(basename {} .o).c"'
	cc -o big big_*.o
	echo "$N" > big.n
fi
cc -O2 -o html_profile "$root/bench/html_profile.c"
./html_profile ./big big.prof "$PER"

# page NAME: NAME.html from NAME.prof, its size, the time to write it
# and to show it.
page() {
	start=$(date +%s.%N)
	"$B/bin/profil" report --html "$1.html" "$1.prof"
	end=$(date +%s.%N)
	size=$(stat -c %s "$1.html")
	gz=$(gzip -c "$1.html" | wc -c)
	echo "$1.html: $size bytes ($gz gzipped), written in $(echo "$end $start" | awk '{ printf "%.2f", $1 - $2 }') s"
	node "$root/tests/html/render_time.mjs" "$out/$1.html" f_01234
}
page big

# Stacks: a random tree of calls from f_000000, each function's callees
# a few of the next ones (the first the likeliest), deep and bushy.
awk -v n="$N" -v s="$STACKS" 'BEGIN {
	srand(1)
	for (k = 0; k < s; k++) {
		d = 8 + int(rand() * 33); f = 0; line = "f_000000"
		for (j = 1; j < d; j++) {
			r = rand(); f = (f * 31 + 1 + int(r * r * r * 8) + j) % n
			line = line sprintf(";f_%06d", f)
		}
		print line, 1 + int(1000 / (1 + k % 997))
	}
}' > big.folded
cc -O2 -o folded_profile "$root/tests/html/folded_profile.c"
./folded_profile ./big bigstacks.prof < big.folded
page bigstacks
