#!/bin/sh
# setup.sh [--test] - install what profil needs from Debian's packages,
# when it is missing.  Run before make exists on a fresh machine:
#
#   sh scripts/setup.sh && make example        what building and running need
#   sh scripts/setup.sh --test && make check   that, and every test tool
#
# Prints one line when everything is already there.
set -e

# Building libprofil and the command, and running profil run: the
# compiler, elfutils (symbols, lines; libdebuginfod: debug files from
# DEBUGINFOD_URLS), zlib and protobuf-c (pprof), libiberty (Rust and
# C++ names).
PACKAGES="make gcc libc6-dev pkg-config binutils
	libdw-dev libelf-dev libdebuginfod-dev zlib1g-dev libprotobuf-c-dev
	protobuf-c-compiler libiberty-dev"

# --test adds the test tools.  chromium: the browser tests of report
# --html (tests/html/, driven by playwright-core, from npm).
# libclang-rt-14-dev: libFuzzer for make fuzz; valgrind:
# tests/integration/valgrind.sh.  dpkg-dev, debhelper and lintian: make
# deb (debian/control's Build-Depends are among these packages);
# man-db: the tests find the installed manual pages with man -M.
# zstd: a program with a SIGBUS handler of its own, in
# tests/integration/full_disk.sh.  redis-server, redis-tools: the real
# server profil run -p attaches to (tests/integration/cli_attach_redis.sh).
# debuginfod: the real server tests/integration/cli_debuginfod.sh serves
# debug files from.
# golang-go: go tool pprof reads the exports; linux-perf and
# libgoogle-perftools4: make bench's comparisons with perf record and
# gperftools' libprofiler.  The arm64 pass (make ARCH=aarch64, make
# test-emulated): the cross compiler and binutils (aarch64-linux-gnu-gprof),
# qemu-user to run the programs, and from Debian's arm64 archive
# (multiarch) cmocka for the unit tests, which brings the arm64 libc that
# qemu-user runs them with.
tests=
case "${1:-}" in
--test) tests=1 ;;
"") ;;
*) echo "setup: unknown argument '$1' (--test adds the test tools)" >&2; exit 2 ;;
esac
if [ -n "$tests" ]; then
	PACKAGES="$PACKAGES clang libcmocka-dev g++
	golang-go linux-perf libgoogle-perftools4 chromium libclang-rt-14-dev valgrind libtsan2
	dpkg-dev debhelper lintian man-db zstd redis-server redis-tools debuginfod"
	if [ "$(uname -m)" = x86_64 ]; then
		PACKAGES="$PACKAGES gcc-aarch64-linux-gnu libc6-dev-arm64-cross
		binutils-aarch64-linux-gnu qemu-user libcmocka-dev:arm64"
	fi
fi

# A package installed for two architectures (libcmocka-dev) is known
# to dpkg by its qualified name only.
native=$(dpkg --print-architecture)
missing=""
for p in $PACKAGES; do
	dpkg -s "$p" >/dev/null 2>&1 || dpkg -s "$p:$native" >/dev/null 2>&1 \
		|| missing="$missing $p"
done
# Node.js and npm (the browser tests), from Debian unless some other
# install provides them.
if [ -n "$tests" ]; then
	command -v node >/dev/null 2>&1 || missing="$missing nodejs"
	command -v npm >/dev/null 2>&1 || missing="$missing npm"
fi

# The npm packages of tests/html, exactly as its package-lock.json says
# (npm ci writes node_modules/.package-lock.json).
root=$(cd "$(dirname "$0")/.." && pwd)
npm_current() {
	[ -z "$tests" ] && return 0
	[ -f "$root/tests/html/node_modules/.package-lock.json" ] \
		&& [ ! "$root/tests/html/package-lock.json" -nt "$root/tests/html/node_modules/.package-lock.json" ]
}
npm_ci() {
	npm_current && return 0
	echo "setup: npm ci in tests/html"
	(cd "$root/tests/html" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}

if [ -z "$missing" ]; then
	if npm_current; then
		echo "setup: all ${tests:+build and test }dependencies present"
		exit 0
	fi
	npm_ci
	echo "setup: done"
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	as_root=""
elif command -v sudo >/dev/null 2>&1; then
	as_root="sudo"
else
	echo "setup: missing packages:$missing (run as root: apt-get install$missing)" >&2
	exit 1
fi
echo "setup: installing$missing"
export DEBIAN_FRONTEND=noninteractive
case "$missing" in
*:arm64*) dpkg --print-foreign-architectures | grep -qx arm64 \
		|| $as_root dpkg --add-architecture arm64 ;;
esac
$as_root apt-get update -qq
# shellcheck disable=SC2086
$as_root apt-get install -y -qq --no-install-recommends $missing >/dev/null
npm_ci
echo "setup: done"
