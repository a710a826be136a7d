#!/bin/sh
# cli_options.sh BUILD - the command line as Unix users expect it:
# --version gives the VERSION file's; --help (top level, run, report,
# merge, export) lists every option the manual gives, one line each,
# and nothing the manual does not; a missing value names the option as
# it was written (-a, --annotate); an ambiguous abbreviation, a value
# given to a flag, an option taken for a value, a value option given
# twice and options that cannot go together are refused in one line,
# status 2, before any file is read.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/cli/lib.sh"
cd "$tmp" || exit 1
man=$root/man/man1/profil.1

# expect WHAT PATTERN COMMAND...: status 2, one line matching PATTERN.
expect() {
	what=$1 pattern=$2
	shift 2
	"$@" > out 2> err
	st=$?
	if [ $st -ne 2 ]; then
		no "$what: status $st"; cat err
	elif [ "$(wc -l < err)" -ne 1 ]; then
		no "$what: $(wc -l < err) lines on stderr"; cat err
	elif ! grep -Eq -- "^profil: .*$pattern" err; then
		no "$what: '$(cat err)' does not say '$pattern'"
	else
		echo "ok: $what: $(cat err)"
	fi
}

version=$(sed -n 's/^VERSION *:= *//p' "$root/Makefile")
[ -f "$root/VERSION" ] && version=$(cat "$root/VERSION")
for v in --version -V; do
	[ "$("$profil" $v)" = "profil $version" ] || no "$v: '$("$profil" $v)', not 'profil $version'"
done

"$profil" --help > top.txt || no "--help: status $?"
"$profil" help > help.txt && cmp -s top.txt help.txt || no "profil help differs from --help"
for c in run report merge export; do
	grep -Eq "^  $c " top.txt || no "--help does not list the command $c"
done

# The long options the manual's synopsis gives a command.
synopsis() {
	awk -v cmd="$1" '
		/^\.Sh SYNOPSIS/ { on = 1; next }
		/^\.Sh / { on = 0 }
		on && /^\.Nm/ { mine = 0 }
		on && /^\.Cm / { mine = ($2 == cmd) }
		on && mine { for (i = 1; i < NF; i++) if ($i == "Fl" || $i == ".Fl") print $(i + 1) }' "$man" |
		sed -n 's/^-\([a-z][a-z-]*\).*/\1/p; s/^\([a-zA-Z]\)$/\1/p' | sort -u
}
for c in run report merge export; do
	"$profil" $c --help > $c.help || no "$c --help: status $?"
	"$profil" help $c | cmp -s - $c.help || no "profil help $c differs from $c --help"
	head -1 $c.help | grep -q "^usage: profil $c \[OPTION\.\.\.\] " || no "$c --help: no usage line"
	awk 'length > 80 { exit 1 }' $c.help || no "$c --help: a line over 80 columns"
	# One line per option: each --NAME starts one line, once.
	sed -n 's/^  \(-., \|    \)--\([a-z-]*\).*/\2/p' $c.help | sort > $c.listed
	[ "$(uniq -d < $c.listed)" = "" ] || no "$c --help: an option listed twice"
	for o in $(synopsis $c); do
		case $o in
		?) grep -Eq "^  -$o, --" $c.help || no "$c --help: no -$o";;
		*) grep -qx -- "$o" $c.listed || no "$c --help does not list --$o, which profil(1) gives";;
		esac
	done
	for o in $(cat $c.listed); do
		[ "$o" = help ] && continue
		s=$(sed -n "s/^  -\(.\), --$o.*/\1/p" $c.help)
		synopsis $c | grep -qx -- "$o\|$s" \
			|| no "$c --help lists --$o, which profil(1)'s synopsis does not"
		grep -q "^\.It Fl -$o\|Fl -$o" "$man" || no "--$o is not described in profil(1)"
	done
	echo "ok: $c --help: $(wc -l < $c.listed) options: $(tr '\n' ' ' < $c.listed)"
	# A missing value names the option, long or short, as written.
	for o in $(sed -n 's/^  \(-., \|    \)--\([a-z-]*\) [^ ].*/\2/p' $c.help); do
		expect "$c --$o without its value" "$c: --$o needs a value" "$profil" $c --$o
		s=$(sed -n "s/^  -\(.\), --$o .*/\1/p" $c.help)
		[ -n "$s" ] && expect "$c -$s without its value" "$c: -$s needs a value" "$profil" $c -$s
	done
done

P=$profil
expect "unknown option" "report: unknown option '--frobnicate'" $P report --frobnicate
expect "unknown short option" "report: unknown option '-Z'" $P report -Z
expect "ambiguous" "report: '--th' is ambiguous: --threads, --threshold" $P report --th 3
expect "abbreviation taken" "--threshold 'x': not a percentage" $P report --thres x
expect "a value to a flag" "report: --lines takes no value" $P report --lines=3
expect "an option taken for a value" "report: --html needs a value \\(FILE\\): '--lines' is taken for an option" \
	$P report --html --lines
expect "short option taken for a value" "export: -o needs a value \\(FILE\\): '-f' is taken" \
	$P export -o -f pprof
expect "--format twice" "report: --format given twice \\('csv', then 'json'\\)" \
	$P report --format csv --format json
expect "--tid twice" "report: --tid given twice" $P report --tid 1 --tid=2
expect "export -o twice" "export: -o given twice" $P export --format pprof -o a -o b
expect "merge -o twice" "merge: --output given twice" $P merge -o a --output b
expect "--lines --objects" "report: --lines and --objects: one view at a time" $P report --lines --objects
expect "--threads --lines" "report: --lines and --threads: one view at a time" $P report --threads --lines
expect "--annotate --callgraph" "report: --annotate and --callgraph" $P report --annotate f --callgraph
expect "--html --objects" "report: --objects and --html" $P report --html p.html --objects
expect "--annotate csv" "report: --annotate and --format csv: the annotation is text only" \
	$P report --annotate main --format csv
expect "--annotate json" "report: --annotate and --format json" $P report --format json -a main
expect "--html --format" "report: --html and --format" $P report --html p.html --format text
expect "--html --tid" "report: --html and --tid" $P report --html p.html --tid 3
expect "--html --comm" "report: --html and --comm" $P report --html p.html --comm 'w*'
expect "--inline --objects" "report: --inline and --objects" $P report --inline --objects
expect "--inline --threads" "report: --inline and --threads" $P report --inline --threads
expect "--threshold --annotate" "report: --threshold and --annotate" $P report -t 1 -a main
expect "--callgraph csv" "report: --callgraph and --format csv" $P report -q -f csv
expect "export --object pprof" "export: --object and --format pprof" \
	$P export --format pprof --object x -o a
expect "run -F without its value" "run: -F needs a value \\(HZ\\): '-o' is taken for an option" \
	$P run -F -o x ./prog
expect "run -o twice" "run: -o given twice" $P run -o a -o b ./prog
expect "no command" "unknown option '--frob'" $P --frob
expect "help of no command" "help: unknown command 'frob'" $P help frob
# What may go together still does (these fail only for want of a file).
mkdir empty && cd empty
for args in "--tid 1 --comm w" "--lines --inline" "--callgraph --format json" \
	"--format csv --format csv" "--threads --threshold 1" "--annotate=-x"; do
	$P report $args > out 2> err
	grep -q "no file given" err || no "report $args: $(cat err)"
done

[ $fail -eq 0 ] && echo "cli_options: all checks passed"
exit $fail
