#!/bin/sh
# cli_errors.sh BUILD - every bad input to the command gives one line on
# standard error that names the file or argument and what is wrong, a
# non-zero status, and no crash: missing, empty, truncated, foreign and
# corrupt files, counts that do not add up, a binary missing or changed
# since the run, bad options and values.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1

# expect WHAT PATTERN COMMAND...: fails with one line matching PATTERN.
expect() {
	what=$1 pattern=$2
	shift 2
	"$@" > out 2> err
	st=$?
	if [ $st -eq 0 ] || [ $st -ge 128 ]; then
		no "$what: status $st"
	elif [ "$(wc -l < err)" -ne 1 ]; then
		no "$what: $(wc -l < err) lines on stderr"; cat err
	elif ! grep -Eq "^profil: .*$pattern" err; then
		no "$what: '$(cat err)' does not say '$pattern'"
	else
		echo "ok: $what: $(cat err)"
	fi
}

cc -O2 -g -o spin "$root/tests/cli/spin.c"
prun -o good.run ./spin 10 2>/dev/null || no "making a profile"
cp good.run/spin.*.prof packed.prof
# profil run packs each file (profil(5): PROFILE_F_PACKED, the pack table
# at byte 4096: size, extents, then at, end, from of each).  The pokes
# below are at offsets of the file as written: undo the packing, with dd.
u8() { od -An -tu8 -j"$2" -N8 "$1" | tr -d ' '; }	# FILE OFFSET
[ $(( $(od -An -tu1 -j48 -N1 packed.prof) & 16 )) -eq 16 ] || no "profil run's file is not packed"
n=$(u8 packed.prof 4104)
: > good.prof
i=0
while [ "$i" -lt "$n" ]; do
	at=$(u8 packed.prof $((4112 + 24 * i)))
	end=$(u8 packed.prof $((4120 + 24 * i)))
	from=$(u8 packed.prof $((4128 + 24 * i)))
	dd if=packed.prof of=good.prof bs=4096 skip=$((from / 4096)) seek=$((at / 4096)) \
		count=$(((end - at) / 4096)) conv=notrunc 2>/dev/null
	i=$((i + 1))
done
truncate -s "$(u8 packed.prof 4096)" good.prof
printf "\\$(printf %o $(( $(od -An -tu1 -j48 -N1 good.prof) & ~16 )))" |
	dd of=good.prof bs=1 seek=48 conv=notrunc 2>/dev/null
"$profil" report good.prof > unpacked.txt || no "the file unpacked is not read"
"$profil" report packed.prof > packed.txt || no "the packed file is not read"
cmp -s unpacked.txt packed.txt || no "the packed and unpacked files read differently"
size=$(stat -c %s good.prof)
[ "$(stat -c %s packed.prof)" -lt $((size / 10)) ] || no "packing did not shrink the file"

expect "no such file" "missing.prof: No such file" "$profil" report missing.prof
: > empty.prof
expect "empty file" "empty.prof: empty" "$profil" report empty.prof
head -c 100 good.prof > short.prof
expect "truncated header" "short.prof: truncated" "$profil" report short.prof
head -c $((size - 4096)) good.prof > cut.prof
expect "truncated counters" "cut.prof: truncated" "$profil" report cut.prof
cp "$root/README.md" foreign.prof
expect "foreign file" "foreign.prof: not a profil profile" "$profil" report foreign.prof
# Corrupt header fields, in place (offsets from src/format/profile.h).
poke() {	# FILE OFFSET BYTES(printf escapes)
	printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
# A packed file cut short, and one whose pack table is corrupt.
head -c $(($(stat -c %s packed.prof) - 4096)) packed.prof > pcut.prof
expect "truncated packed file" "pcut.prof: truncated" "$profil" report pcut.prof
cp packed.prof ptable.prof; poke ptable.prof 4104 '\377\377\377\377'
expect "bad pack table" "ptable.prof: corrupt pack table" "$profil" report ptable.prof
cp packed.prof pext.prof; poke pext.prof 4128 '\001\0\0\0'
expect "bad pack extent" "pext.prof: corrupt pack table: extent 0" "$profil" report pext.prof
cp good.prof version.prof; poke version.prof 8 '\011\0\0\0'
expect "bad version" "version.prof: format version 9" "$profil" report version.prof
cp good.prof state.prof; poke state.prof 12 '\077\0\0\0'
expect "bad state" "state.prof: corrupt header" "$profil" report state.prof
cp good.prof segs.prof; poke segs.prof 20 '\377\377\0\0'
expect "too many segments" "segs.prof: corrupt header" "$profil" report segs.prof
cp good.prof cmdline.prof; poke cmdline.prof 464 '\377\377\0\0'
expect "command line too long" "cmdline.prof: corrupt header: a command line" \
	"$profil" report cmdline.prof
cp good.prof stats.prof; poke stats.prof 88 '\001\002\003\004'
expect "statistics that do not add up" "stats.prof: statistics do not add up" "$profil" report stats.prof
# The first segment comes after the thread table (threads_size at 176)
# and the outside table (outside_pcs at 4064, 16 bytes a slot).
seg=$((4096 + $(od -An -tu8 -j176 -N8 good.prof) + 16 * $(od -An -tu8 -j4064 -N8 good.prof)))
# Version 4: the extension page (ext_at at 200) and its stack table
# (the page's first field, size) come before it.
ext=$(od -An -tu8 -j200 -N8 good.prof)
[ "$ext" -eq 0 ] || seg=$((ext + $(od -An -tu8 -j"$ext" -N8 good.prof)))
# A counter raised: the counters no longer hold what the header says.
cp good.prof counts.prof; poke counts.prof $((seg + 4104)) '\001\001\001\001'
expect "counts that do not add up" "counts.prof: counts do not add up" "$profil" report counts.prof
cp good.prof width.prof; poke width.prof $((seg + 68)) '\003\0\0\0'
expect "bad counter width" "width.prof: corrupt segment" "$profil" report width.prof
# The thread table: its size (thread_entries at 160), and its counts
# (entry 0's samples at 4096 + 24).
# The outside table: its size (outside_pcs at 4064), not a power of two.
cp good.prof osize.prof; poke osize.prof 4064 '\003\0\0\0'
expect "bad outside table" "osize.prof: corrupt header: an outside table" "$profil" report osize.prof
cp good.prof tsize.prof; poke tsize.prof 160 '\377\377\377\0'
expect "bad thread table" "tsize.prof: corrupt header: a thread table" "$profil" report tsize.prof
cp good.prof tcount.prof; poke tcount.prof $((4096 + 24)) '\001\001\001\001'
expect "thread counts that do not add up" "tcount.prof: thread counts do not add up" \
	"$profil" report tcount.prof

# The binary gone, or rebuilt, since the run, and no build-ID cache
# (cli_buildid.sh: with one).
cp spin spin.keep
rm spin
expect "binary missing" "spin: cannot read" env PROFIL_CACHE=off "$profil" report good.prof
cc -O1 -g -o spin "$root/tests/cli/spin.c"
expect "binary changed" "spin: changed since the run" env PROFIL_CACHE=off "$profil" report good.prof
mv spin.keep spin

# Options and values.
expect "bad -F" "-F 'fast'" prun -F fast ./spin 1
expect "-F 0" "-F '0'" prun -F 0 ./spin 1
expect "bad backend" "--backend 'gpu'" prun --backend gpu ./spin 1
expect "unknown run option" "unknown option '--frobnicate'" prun --frobnicate ./spin 1
expect "no program" "no program given" prun
expect "program not found" "no-such-program: No such file" prun ./no-such-program
expect "unknown report option" "unknown option '--frobnicate'" "$profil" report --frobnicate good.prof
expect "bad threshold" "--threshold 'lots'" "$profil" report --threshold lots good.prof
expect "bad format" "--format 'xml'" "$profil" report --format xml good.prof
expect "bad --tid" "--tid '12,x'" "$profil" report --tid 12,x good.prof
expect "--tid 0" "--tid '0'" "$profil" report --tid 0 good.prof
expect "export --tid" "--tid 'x'" "$profil" export --format pprof -o x.pb.gz --tid x good.prof
expect "bad run --threads" "--threads 'many'" prun --threads many ./spin 1
expect "unknown command" "unknown command 'frob'" "$profil" frob
expect "annotate unknown function" "--annotate 'no_such_fn'" "$profil" report --annotate no_such_fn good.prof
mkdir empty && cd empty
expect "no file and no run" "no file given" "$profil" report
cd ..

[ $fail -eq 0 ] && echo "cli_errors: all checks passed"
exit $fail
