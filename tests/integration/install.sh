#!/bin/sh
# install.sh BUILD - the installed library as a user meets it:
# make install lays out the files SPEC section 1 names, named by VERSION,
# and man finds every page; a program built with pkg-config gets
# libprofil's profil instead of glibc's, and the example builds that way; only the
# public API is exported; the public header compiles with glibc's
# <unistd.h>, <sys/gmon.h> and <sys/profil.h> in C and C++; a program
# linked with the static library samples its threads too.
set -u
B=${1:-build}
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "not ok: $*"; fail=1; }

cd "$root" || exit 1
# A library built with the sanitizers needs their runtime in programs too.
san=
readelf -d "$B/lib/libprofil.so" | grep -q libasan && san="-fsanitize=address,undefined"
make -s install B="$B" PREFIX="$tmp/prefix" >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; no "make install"; }
make -s install B="$B" PREFIX=/usr DESTDIR="$tmp/dest" >>"$tmp/install.log" 2>&1 || no "make install DESTDIR"
for f in lib/libprofil.so.1.0.0 lib/libprofil.so.1 lib/libprofil.so lib/libprofil.a \
	 include/profil.h lib/pkgconfig/profil.pc share/man/man3/profil.3 bin/profil \
	 share/man/man1/profil.1 share/man/man5/profil.5 \
	 share/man/man3/sprofil.3 share/man/man5/mon.out.5; do
	[ -e "$tmp/prefix/$f" ] || no "PREFIX install lacks $f"
	[ -e "$tmp/dest/usr/$f" ] || no "DESTDIR install lacks $f"
done
grep -q "^prefix=/usr$" "$tmp/dest/usr/lib/pkgconfig/profil.pc" || no "profil.pc prefix under DESTDIR"
grep -q "^Version: $(cat VERSION)$" "$tmp/dest/usr/lib/pkgconfig/profil.pc" || no "profil.pc version is not VERSION's"
[ -e "$tmp/prefix/lib/libprofil.so.$(cat VERSION)" ] || no "library not named by VERSION"
[ "$("$tmp/prefix/bin/profil" --version)" = "profil $(cat VERSION)" ] || no "profil --version is not VERSION's"

# Every page of man/ installed where man finds it; `man profil` is
# profil(1), not glibc's profil(3), for a user with the prefix's bin/ on
# PATH (man-db derives its search path from PATH).
for page in man/man?/*.?; do
	name=${page##*/}; sec=${name##*.}; name=${name%.*}
	want=${page#man/}
	# A page that is a .so link opens the page it names.
	read -r first _ < "$page"; [ "$first" = .so ] && want=$(sed -n '1s/^\.so //p' "$page")
	found=$(man -M "$tmp/prefix/share/man" -w "$sec" "$name" 2>/dev/null)
	[ "$found" = "$tmp/prefix/share/man/$want" ] || no "man -M finds $name($sec) at '$found'"
done
found=$(PATH="$tmp/prefix/bin:$PATH" man -w profil 2>/dev/null)
[ "$found" = "$tmp/prefix/share/man/man1/profil.1" ] || no "man profil with the prefix on PATH: '$found'"
# uninstall takes back all it installed.
make -s uninstall B="$B" PREFIX=/usr DESTDIR="$tmp/dest" >>"$tmp/install.log" 2>&1 || no "make uninstall"
left=$(find "$tmp/dest" -type f -o -type l)
[ -z "$left" ] || no "uninstall left $left"

# Exports: the public API and the interposed libc calls, nothing else.
nm -D --defined-only "$tmp/prefix/lib/libprofil.so" | awk '{print $3}' | sort > "$tmp/exports"
cat > "$tmp/expected" <<LIST
_Exit
__fentry__
__monstartup
_exit
_mcleanup
_mcount
mcount
moncontrol
monstartup
chroot
dlclose
dlopen
execl
execle
execlp
execv
execve
execveat
execvp
execvpe
fexecve
monitor
pcsample
profil
profil_get_stats
profil_pcsample_save
profil_reset_stats
profil_set_backend
profil_set_hz
profil_set_stacks
pthread_create
clone
thrd_create
sprofil
sigaction
signal
bsd_signal
sysv_signal
__sysv_signal
sigprocmask
pthread_sigmask
sigwait
sigwaitinfo
sigtimedwait
signalfd
prctl
LIST
sort -o "$tmp/expected" "$tmp/expected"
diff "$tmp/expected" "$tmp/exports" > "$tmp/diff" || { cat "$tmp/diff"; no "exported symbols"; }
readelf -d "$tmp/prefix/lib/libprofil.so" | grep NEEDED | grep -v 'libc\.so' |
	{ [ -n "$san" ] && grep -Ev 'lib(a|ub)san' || cat; } | grep . && no "links more than libc"

# The header beside glibc's, in C and C++.
cat > "$tmp/headers.c" <<'C'
#include <unistd.h>
#include <sys/gmon.h>
#include <sys/profil.h>
#include <profil.h>
#include <unistd.h>
int main(void) { struct profil_stats st; return profil_get_stats(&st, sizeof st) + sprofil(NULL, 0, NULL, PROF_UINT); }
C
cp "$tmp/headers.c" "$tmp/headers.cc"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
cc -Wall -Wextra -Werror -c -o "$tmp/h.o" "$tmp/headers.c" $(pkg-config --cflags profil) || no "header in C"
if command -v c++ >/dev/null; then
	c++ -Wall -Wextra -Werror -c -o "$tmp/hh.o" "$tmp/headers.cc" $(pkg-config --cflags profil) || no "header in C++"
fi
if command -v clang >/dev/null; then
	clang -Wall -Wextra -Werror -c -o "$tmp/hc.o" "$tmp/headers.c" $(pkg-config --cflags profil) || no "header with clang"
fi

# pkg-config gives the program libprofil's profil.
cat > "$tmp/which.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <profil.h>
static unsigned short buf[4096];
int main(void)
{
	Dl_info info;
	if (!dladdr((void *)profil, &info) || !strstr(info.dli_fname, "libprofil"))
		return 1;
	if (profil(buf, sizeof buf, 0, 2) != 0)
		return 2;
	struct profil_stats st;
	profil_get_stats(&st, sizeof st);
	return st.active == 1 && st.hz == 1000 ? 0 : 3;
}
C
cc $san -o "$tmp/which" "$tmp/which.c" $(pkg-config --cflags --libs profil) || no "build with pkg-config"
"$tmp/which" || no "program built with pkg-config: status $?"

# The example builds from its source alone against the installed library,
# as the README says, and names its hot functions.
cp examples/crunch.c "$tmp/crunch.c"
(cd "$tmp" && cc $san -O2 -rdynamic -o crunch crunch.c $(pkg-config --cflags --libs profil)) \
	|| no "examples/crunch.c against the installed library"
"$tmp/crunch" > "$tmp/crunch.log" 2>&1 || { cat "$tmp/crunch.log"; no "installed crunch: status $?"; }
grep -Eq "^ *[0-9.]+% .* fnv1a$" "$tmp/crunch.log" || { cat "$tmp/crunch.log"; no "crunch's profile names fnv1a"; }

# The static library: threads made through pthread_create are sampled.
cc $san -std=gnu11 -O2 -pthread -I"$tmp/prefix/include" -o "$tmp/static_threads" \
	tests/integration/split_threads.c "$tmp/prefix/lib/libprofil.a" -lm || no "static link"
"$tmp/static_threads" > "$tmp/static.log" 2>&1 || { cat "$tmp/static.log"; no "split_threads linked statically"; }

# The installed command preloads the installed library.
if [ -z "$san" ]; then
	(cd "$tmp" && "$tmp/prefix/bin/profil" run -o inst.prof "$tmp/which" 2>/dev/null) \
		|| no "installed profil run: status $?"
	"$tmp/prefix/bin/profil" report "$tmp/inst.prof" > /dev/null || no "installed profil report"
fi

[ $fail -eq 0 ] && echo "install: all checks passed"
exit $fail
