#!/bin/sh
# package.sh BUILD - the Debian packages as a user gets them.  make deb
# builds libprofil1, libprofil-dev and profil from a copy of the sources
# (lintian must pass them: make deb checks); dpkg installs them into a
# scratch root; from that root alone, not from BUILD: profil run and
# profil report on the example, a program built with pkg-config against
# the packaged library, man -M finding profil(1), profil(3) and profil(5),
# and glibc's profil(3) moved aside while libprofil-dev is installed and
# given back when it is removed.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
no() { echo "not ok: $*"; fail=1; }
version=$(cat "$root/VERSION")

# The packages, from the sources alone (the build tree's objects are not
# in the copy make deb builds from).  This make's variables stay out.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$root" deb B="$tmp/b" > "$tmp/deb.log" 2>&1 \
	|| { cat "$tmp/deb.log"; echo "not ok: make deb"; exit 1; }
cat "$tmp/deb.log"
debs=$tmp/b/deb
for p in libprofil1 libprofil-dev profil; do
	[ -f "$debs/${p}_${version}_amd64.deb" ] || no "no package $p $version"
done
[ $fail -eq 0 ] || exit 1
dpkg-deb -f "$debs/libprofil1_${version}_amd64.deb" Multi-Arch | grep -qx same || no "libprofil1 not Multi-Arch: same"
dpkg-deb -f "$debs/profil_${version}_amd64.deb" Depends | grep -q "libprofil1 (= $version)" \
	|| no "profil does not depend on its libprofil1"

# A scratch root with its own dpkg database.  Maintainer scripts run
# outside it (--force-script-chrootless: the root has no shell), with
# DPKG_ROOT set, which dpkg-divert honours; the system's packages are
# not in that database, hence --force-depends.
sroot=$tmp/root
mkdir -p "$sroot/var/lib/dpkg/info" "$sroot/var/lib/dpkg/updates"
: > "$sroot/var/lib/dpkg/status"
: > "$sroot/var/lib/dpkg/available"
sdpkg() { dpkg --root="$sroot" --force-not-root --force-depends --force-script-chrootless "$@" \
	>> "$tmp/dpkg.log" 2>&1 || { cat "$tmp/dpkg.log"; no "dpkg $*"; }; }

# glibc's profil(3) as manpages-dev ships it, in a stand-in package.
mkdir -p "$tmp/glibc/DEBIAN" "$tmp/glibc/usr/share/man/man3"
printf 'Package: manpages-dev\nVersion: 0\nArchitecture: all\nMaintainer: test <test@localhost.localdomain>\nDescription: stand-in\n' \
	> "$tmp/glibc/DEBIAN/control"
printf '.TH PROFIL 3 "glibc stand-in"\n.SH NAME\nprofil \\- glibc stand-in\n' | gzip -9n \
	> "$tmp/glibc/usr/share/man/man3/profil.3.gz"
dpkg-deb -b --root-owner-group "$tmp/glibc" "$tmp/manpages-dev.deb" > /dev/null || no "stand-in package"
sdpkg -i "$tmp/manpages-dev.deb"
sdpkg -i "$debs/libprofil1_${version}_amd64.deb" "$debs/libprofil-dev_${version}_amd64.deb" \
	"$debs/profil_${version}_amd64.deb"
[ $fail -eq 0 ] || exit 1
man3=$sroot/usr/share/man/man3
zgrep -q "glibc stand-in" "$man3/profil.glibc.3.gz" 2>/dev/null || no "glibc's profil(3) not moved to profil.glibc.3.gz"
zgrep -q "glibc stand-in" "$man3/profil.3.gz" && no "profil.3.gz is still glibc's"

# Everything below runs from the root: its command, its library, its
# header, its pages.
unset PROFIL_LIBRARY PKG_CONFIG_PATH
libdir=$sroot/usr/lib/x86_64-linux-gnu
export PKG_CONFIG_LIBDIR="$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$sroot"
[ "$(pkg-config --modversion profil)" = "$version" ] || no "profil.pc version is not $version"
pkg-config --libs profil | grep -q rpath && no "profil.pc carries an rpath"

# A program built with pkg-config gets the packaged library's profil().
cat > "$tmp/which.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <profil.h>
static unsigned short buf[4096];
int main(void)
{
	Dl_info info;
	if (!dladdr((void *)profil, &info))
		return 1;
	puts(info.dli_fname);
	if (profil(buf, sizeof buf, 0, 2) != 0)
		return 2;
	struct profil_stats st;
	profil_get_stats(&st, sizeof st);
	return st.active == 1 ? 0 : 3;
}
C
cp "$root/examples/crunch.c" "$tmp/crunch.c"
(cd "$tmp" && cc -Wall -Wextra -o which which.c $(pkg-config --cflags --libs profil) \
	&& cc -O2 -rdynamic -o crunch crunch.c $(pkg-config --cflags --libs profil)) \
	|| no "building with pkg-config against the packaged library"
where=$(LD_LIBRARY_PATH="$libdir" "$tmp/which") || no "which: status $?"
[ "$where" = "$libdir/libprofil.so.1" ] || no "profil() came from '$where', not the package"

[ "$("$sroot/usr/bin/profil" --version)" = "profil $version" ] || no "profil --version is not $version"

# profil run finds the packaged library from its own bin/ (Debian's
# multiarch directory); the example's profile names its hot functions.
mkdir "$tmp/run"
(cd "$tmp/run" && LD_LIBRARY_PATH="$libdir" "$sroot/usr/bin/profil" run ../crunch) \
	> "$tmp/run.log" 2>&1 || { cat "$tmp/run.log"; no "profil run: status $?"; }
(cd "$tmp/run" && "$sroot/usr/bin/profil" report --threshold 1) > "$tmp/report.log" 2>&1 \
	|| { cat "$tmp/report.log"; no "profil report: status $?"; }
cat "$tmp/report.log"
for fn in fnv1a lz_compress merge_sort; do
	grep -Eq "%.* $fn " "$tmp/report.log" || no "$fn not in the report"
done

# The manual pages: profil is profil(1); sections 3 and 5 are ours.
mandir=$sroot/usr/share/man
for page in 1/profil 3/profil 5/profil 3/profil_stats 5/gmon.out; do
	found=$(man -M "$mandir" -w "${page%/*}" "${page#*/}" 2>/dev/null)
	[ "$found" = "$mandir/man${page%/*}/${page#*/}.${page%/*}.gz" ] || no "man -M: ${page#*/}(${page%/*}) is '$found'"
done
[ "$(man -M "$mandir" -w profil 2>/dev/null)" = "$mandir/man1/profil.1.gz" ] || no "man -M profil is not profil(1)"
man -M "$mandir" -P cat 3 profil 2>/dev/null | grep -q "glibc stand-in" && no "man 3 profil shows glibc's"
man -M "$mandir" -P cat 1 profil 2>/dev/null | grep -q "profil run" || no "profil(1) does not render"

# Removing libprofil-dev gives glibc's page its name back.
sdpkg -r libprofil-dev
zgrep -q "glibc stand-in" "$man3/profil.3.gz" 2>/dev/null || no "glibc's profil(3) not given back"
[ -e "$man3/profil.glibc.3.gz" ] && no "profil.glibc.3.gz left behind"
dpkg-divert --root="$sroot" --list | grep libprofil && no "diversion left after removal"

[ $fail -eq 0 ] && echo "package: all checks passed"
exit $fail
