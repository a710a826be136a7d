#!/bin/sh
# emulate.sh PROGRAM [ARG...] - run a program built for PROFIL_TEST_ARCH
# (aarch64 by default) under qemu-user, with Debian's multiarch libc of
# that processor (libc6:arm64, which scripts/setup.sh installs with
# libcmocka0:arm64).  Not with qemu's -L and the cross toolchain's
# /usr/aarch64-linux-gnu: qemu 7.2's pthread_create never returns there.
# An LD_PRELOAD goes to the program, not to qemu: this machine's loader
# would refuse another processor's library with a line on stderr.  There
# is no binfmt_misc here, so a program that execs one of its own kind
# fails (ENOEXEC): tests/run.sh leaves those out.
arch=${PROFIL_TEST_ARCH:-aarch64}
if [ -n "${LD_PRELOAD:-}" ]; then
	pre=$LD_PRELOAD
	unset LD_PRELOAD
	set -- -E "LD_PRELOAD=$pre" "$@"
fi
exec "qemu-$arch" "$@"
