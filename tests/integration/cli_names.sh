#!/bin/sh
# cli_names.sh BUILD - how report names what it shows: Rust names (legacy
# and v0) demangled and usable with --annotate; long C++ names shortened
# in text and whole with --full-names; --annotate of a name several
# functions have (a function and its [clone .cold], a template's
# instances) and of a template function; --lines with one canonical
# name per source file, and file and line apart in CSV and JSON.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

# ---- Rust names, from a C program whose symbols rustc named.
cc -O2 -g -o rustnames "$root/tests/cli/rustnames.c" || exit 1
prun -o r.prof ./rustnames 60 2>/dev/null || no "rustnames: status $?"
"$profil" report --format csv r.prof > r.csv || no "report rustnames"
for f in "names::legacy::burn" "spin::work::hot_loop" "<spin::work::Acc<u64>>::grind"; do
	awk -F, -v f="$f" 'NR > 1 && $5 == f { ok = 1 } END { exit !ok }' r.csv \
		|| no "Rust name $f not shown: $(cat r.csv)"
done
grep -Eq '_ZN5names|_RNv' r.csv && no "a mangled Rust name is shown"
# In the ratio 3:2:1: about 600 samples, 16 points apart, each within 2.
# The program's Rust names only: under the sanitizer build, libasan's
# C++ functions (__asan::...) may show on a stack too.
order=$(awk -F, 'NR > 1 && $5 ~ /^<?(names|spin)::/ { printf "%s;", $5 }' r.csv)
[ "$order" = "names::legacy::burn;spin::work::hot_loop;<spin::work::Acc<u64>>::grind;" ] \
	|| no "Rust functions not in the order of their work: $order"
for f in "names::legacy::burn" "<spin::work::Acc<u64>>::grind"; do
	"$profil" report --annotate "$f" r.prof > ann.txt 2>&1 || { cat ann.txt; no "--annotate '$f'"; }
	head -1 ann.txt | grep -qF "$f in " || no "--annotate '$f': $(head -1 ann.txt)"
	grep -Eq '^ *[0-9.]+% +[0-9]+ ' ann.txt || no "--annotate '$f': no instruction with samples"
done

# A real Rust program, where rustc is installed (scripts/setup.sh does
# not install it: the test above covers the names without it).
if command -v rustc >/dev/null; then
	for v in legacy v0; do
		flag=
		[ "$v" = v0 ] && flag="-C symbol-mangling-version=v0"
		# shellcheck disable=SC2086
		rustc -O -g $flag --crate-name spin -o "rust_$v" "$root/tests/cli/rustspin.rs" 2>rustc.err \
			|| { cat rustc.err; no "rustc $v"; continue; }
		prun -o "rust_$v.prof" "./rust_$v" 100 > /dev/null 2>&1 || no "rust $v: status $?"
		"$profil" report --format csv "rust_$v.prof" > "rust_$v.csv"
		grep -q ',spin::work::hot_loop,' "rust_$v.csv" || no "rust $v: hot_loop not demangled"
		grep -q 'grind,' "rust_$v.csv" || no "rust $v: grind not demangled"
		grep -Eq ',_(ZN|R)[A-Za-z0-9_$]*spin' "rust_$v.csv" && no "rust $v: a mangled name shown"
		"$profil" report --annotate spin::work::hot_loop "rust_$v.prof" > ann.txt 2>&1 \
			|| { cat ann.txt; no "rust $v: --annotate spin::work::hot_loop"; }
	done
else
	echo "rustc not installed: the real Rust program is not run"
fi

# ---- C++.
c++ -O2 -g -o cxxnames "$root/tests/cli/cxxnames.cc" || exit 1
if ! nm -C cxxnames | grep -q 'checksum(.*) \[clone \.cold\]'; then
	no "the compiler made no [clone .cold] of checksum"
fi
prun -o c.prof ./cxxnames 40 2>/dev/null || no "cxxnames: status $?"
"$profil" report c.prof > c.txt || no "report cxxnames"
grep -q '  Table<\.\.\.>::scan(\.\.\.)' c.txt || no "the long name is not shortened: $(grep scan c.txt)"
long=$(awk 'length > 160' c.txt | wc -l)
[ "$long" -eq 0 ] || no "$long lines of the text report are longer than 160 characters"
"$profil" report --full-names c.prof | grep -q 'Table<std::.*char_traits.*>::scan(std::vector<' \
	|| no "--full-names: not the whole name"
"$profil" report --format csv c.prof | grep -q 'Table<std::.*char_traits.*>::scan(std::vector<' \
	|| no "csv: not the whole name"
grep -q 'double accumulate_n<double>(double, long)' c.txt || no "a template function's name"

# A function and its cold clone: the one with samples is annotated.
"$profil" report --annotate checksum c.prof > ann.txt 2>&1 || { cat ann.txt; no "--annotate checksum"; }
grep -q "^2 functions match 'checksum'; the one with samples" ann.txt || no "--annotate checksum: $(head -1 ann.txt)"
grep -Eq '^ +0 samples +checksum\(.*\) \[clone \.cold\]' ann.txt || no "--annotate checksum: the cold clone not listed"
grep -q '^checksum(unsigned char const\*, long, int) in .*: [1-9][0-9]* samples' ann.txt \
	|| no "--annotate checksum: not the function with samples: $(grep ' in /' ann.txt)"
# A template function, by its name with and without its arguments.
"$profil" report --annotate 'accumulate_n<double>' c.prof > ann.txt 2>&1 \
	|| { cat ann.txt; no "--annotate 'accumulate_n<double>'"; }
head -1 ann.txt | grep -q '^double accumulate_n<double>(double, long) in ' \
	|| no "--annotate 'accumulate_n<double>': $(head -1 ann.txt)"
"$profil" report --annotate accumulate_n c.prof > ann.txt 2>&1 || { cat ann.txt; no "--annotate accumulate_n"; }
[ "$(grep -c '^[a-z]* accumulate_n<[a-z]*>([a-z]*, long) in .*: [1-9][0-9]* samples' ann.txt)" -eq 2 ] \
	|| no "--annotate accumulate_n: not both instances annotated: $(grep ' in /' ann.txt)"
"$profil" report --annotate no_such_function c.prof > ann.txt 2>&1 && no "--annotate of no function succeeded"
grep -q "no function of that name" ann.txt || no "--annotate of no function: $(cat ann.txt)"

# ---- --lines: the line table names the file sub//x/../sub/lines.c
# relative to the compilation directory; report names it once, whole.
mkdir -p sub/x && cp "$root/tests/cli/spin.c" sub/lines.c
cc -O2 -g -o lines sub//x/../lines.c || exit 1
prun -o l.prof ./lines 30 2>/dev/null || no "lines: status $?"
here=$(pwd -P)
"$profil" report --lines l.prof > l.txt || no "report --lines"
grep -q " $here/sub/lines.c:[0-9]* *spin_three " l.txt || no "--lines: not the canonical name: $(sed -n 7p l.txt)"
grep -Eq '//|/\./|/\.\./' l.txt && no "--lines: a name with //, /./ or /../: $(grep -E '//|/\.\.?/' l.txt | head -1)"
"$profil" report --lines --format csv l.prof > l.csv || no "report --lines csv"
head -1 l.csv | grep -q '^self_percent,cumulative_percent,self_seconds,samples,file,line,function,object,' \
	|| no "--lines csv header: $(head -1 l.csv)"
awk -F, -v f="$here/sub/lines.c" 'NR > 1 && $5 == f && $6 ~ /^[0-9]+$/ && $7 == "spin_three" { ok = 1 }
	END { exit !ok }' l.csv || no "--lines csv: no row of file and line apart: $(sed -n 2p l.csv)"
"$profil" report --lines --format json l.prof | grep -q "\"file\":\"$here/sub/lines.c\",\"line_number\":[0-9]" \
	|| no "--lines json: no file and line_number"
exit $fail
