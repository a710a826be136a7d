#!/bin/sh
# setup.sh - install what profil needs to build and test, from Debian's
# packages, when it is missing.  Run before make exists on a fresh
# machine: `sh scripts/setup.sh && make check`.  Prints one line when
# everything is already there.
set -e

# Debian package names; add new needs here.
PACKAGES="make gcc clang libc6-dev pkg-config libcmocka-dev binutils
	libdw-dev libelf-dev zlib1g-dev libprotobuf-c-dev protobuf-c-compiler g++
	golang-go linux-perf"

missing=""
for p in $PACKAGES; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "setup: all build and test dependencies present"
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
$as_root apt-get update -qq
# shellcheck disable=SC2086
$as_root apt-get install -y -qq --no-install-recommends $missing >/dev/null
echo "setup: done"
