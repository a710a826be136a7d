# profil - GNU Makefile.  No generated build system: edit this file.
#
#   make                  the library and everything it needs
#   make check            every test, then again under ASan+UBSan, then
#                         the threaded ones under ThreadSanitizer
#   make install PREFIX=/usr/local DESTDIR=
#   make deb              Debian packages in build/deb/ (debian/)
#   make example          profile the bundled example and show its profile
#   make bench            measure sampling rates and overhead
#   make fuzz             run every fuzz target FUZZ_SECONDS (60) each
#   make bench-html       report --html on a profile of 100 000 functions
#   make bench-report     profil report against perf report on builds of 60 and 240 files,
#                         and on one clang process in libLLVM (a 110 MB library)
#
# Build trees live under B (build/ by default); SAN=1 builds one with
# AddressSanitizer and UndefinedBehaviorSanitizer, SAN=thread one with
# ThreadSanitizer.

PREFIX   ?= /usr/local
LIBDIR   ?= $(PREFIX)/lib
INCDIR   ?= $(PREFIX)/include
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
PKGDIR   ?= $(LIBDIR)/pkgconfig
DESTDIR  ?=

# ARCH: the processor libprofil is built for (uname -m's name).  Another
# than this machine's is a cross build with Debian's toolchain
# (ARCH-linux-gnu-gcc) in build/ARCH: the library, and its tests, which
# make check ARCH=aarch64 runs under qemu-user with the profil command
# built for this machine (it reads every processor's files).
# Only the command line sets it: kernel builds leave ARCH=arm64 and the
# like in environments.
HOST_ARCH := $(shell uname -m)
ARCH     := $(if $(filter command line,$(origin ARCH)),$(ARCH),$(HOST_ARCH))
ifneq ($(ARCH),$(HOST_ARCH))
CROSS    := $(ARCH)-linux-gnu-
ifeq ($(origin CC),default)
CC       := $(CROSS)gcc
endif
AR       := $(CROSS)ar
B        ?= build/$(ARCH)
# Debian's libcmocka-dev:ARCH (multiarch, from scripts/setup.sh) for the
# library; its header is this machine's own, alone in a directory.
CMOCKA    = -I$(B)/cross-include -L/usr/lib/$(ARCH)-linux-gnu -lcmocka
# The command is this machine's: it reads every processor's files, and
# the libraries it needs are not installed for ARCH.
CLI_BUILT :=
else
CMOCKA    = $$(pkg-config --cflags --libs cmocka)
CLI_BUILT  = $(PROFIL)
endif

CC       ?= cc
CFLAGS   ?= -O2 -g
B        ?= build
SAN      ?=

# The release, from one place: VERSION names the library's file
# (libprofil.so.1.0.0, soname libprofil.so.1), profil --version (the
# command is compiled with PROFIL_VERSION), profil.pc, and must match the
# top entry of debian/changelog (make deb checks).  The major number is
# the soname's: raise it only when the ABI breaks.
VERSION  := $(shell cat VERSION)
SOMAJOR  := $(firstword $(subst ., ,$(VERSION)))
SOVERSION := $(VERSION)

# float-cast-overflow: gcc's undefined leaves it out (clang's has it); a
# double out of an integer's range, from a hostile file's statistics, is
# undefined behaviour too (tests/fuzz/regress/merge).
ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=undefined,float-cast-overflow \
            -fno-omit-frame-pointer
endif
# FUZZ=1 (with CC=clang): everything instrumented for libFuzzer as well.
ifeq ($(FUZZ),1)
SANFLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined \
            -fno-omit-frame-pointer
endif
ifeq ($(SAN),thread)
# gcc says (-Wtsan) that TSan does not model atomic_thread_fence: the
# fences in stack_table.c order stores made in assembly (satadd), which
# TSan does not see either.
SANFLAGS := -fsanitize=thread -fno-omit-frame-pointer \
            $(shell $(CC) -Werror -Wno-tsan -E -x c /dev/null > /dev/null 2>&1 && echo -Wno-tsan)
endif

WARN     := -Wall -Wextra
BASE     := -std=gnu11 $(WARN) -pthread -Iinclude -Isrc/runtime $(SANFLAGS)
LIBFLAGS := $(BASE) -fPIC -fvisibility=hidden -fno-delete-null-pointer-checks

RUNTIME_SRC := $(wildcard src/runtime/*/*.c) src/common/bins.c src/common/preloadable.c src/common/rates.c \
	src/format/gmon.c
# The writers of the runtime's own formats (their readers are the command's).
RUNTIME_SRC += src/format/loadmap.c src/format/pcsfile.c src/format/monout.c
RUNTIME_ASM := $(wildcard src/runtime/arch/*_$(ARCH).S)
RUNTIME_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(RUNTIME_SRC)) \
               $(patsubst %.S,$(B)/obj/%.o,$(RUNTIME_ASM))

SONAME   := libprofil.so.$(SOMAJOR)
SHLIB    := $(B)/lib/libprofil.so.$(SOVERSION)
STLIB    := $(B)/lib/libprofil.a

# Tests: every tests/unit/*.c is a cmocka program; every
# tests/integration/*.c a program that profiles itself for real and
# exits 0 when what it checks holds.  tests/integration/*.sh drive
# programs from outside (exec, fork trees, environment).
UNIT_SRC  := $(wildcard tests/unit/*.c)
UNIT_BIN  := $(patsubst tests/unit/%.c,$(B)/tests/unit/%,$(UNIT_SRC))
INTEG_SRC := $(wildcard tests/integration/*.c)
INTEG_BIN := $(patsubst tests/integration/%.c,$(B)/tests/integration/%,$(INTEG_SRC))
TEST_LINK := -L$(B)/lib -Wl,-rpath,$(abspath $(B)/lib) -lprofil

EXAMPLE   := $(B)/examples/crunch

# The command: elfutils for symbols, libiberty's demangler (C++, Rust
# legacy and v0, D), zlib and protobuf-c for pprof.
# run -p walks the copies of a target's stacks with the runtime's own
# unwinder (src/runtime/unwind; walk.h's fault-tolerant load is in the
# arch's satadd, which the copy mode never calls).
CLI_SRC  := $(wildcard src/cli/*.c) $(wildcard src/format/*.c) src/common/bins.c \
	src/common/preloadable.c src/common/rates.c $(wildcard src/runtime/unwind/*.c)
CLI_OBJ  := $(patsubst %.c,$(B)/cli/%.o,$(CLI_SRC)) $(B)/cli/gen/pprof.pb-c.o \
            $(B)/cli/gen/html_assets.o $(B)/cli/src/runtime/arch/satadd_$(ARCH).o
CLI_LIBS := $$(pkg-config --libs libdw libelf libdebuginfod zlib libprotobuf-c) -liberty -lm
PROFIL   := $(B)/bin/profil
# The version for --version, and where profil run looks for libprofil.so.1
# from its bin/ (LIBDIR below PREFIX: lib, or Debian's lib/x86_64-linux-gnu;
# the build tree's ../lib is tried as well).
CLI_DEFS := -DPROFIL_VERSION='"$(VERSION)"' \
            -DPROFIL_LIBSUBDIR='"$(patsubst $(PREFIX)/%,%,$(LIBDIR))"'

.PHONY: all lib check stress-long test-run test-tsan test-emulated host-profil deps install uninstall deb example bench bench-html bench-report clean fuzz fuzz-targets

all: lib $(CLI_BUILT) $(EXAMPLE)

lib: $(SHLIB) $(STLIB) $(B)/lib/libprofil.so

$(B)/obj/%.o: %.c $(wildcard include/*.h src/*/*.h src/runtime/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(LIBFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/obj/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(LIBFLAGS) $(CFLAGS) -c -o $@ $<

# -z nodelete: a dlclose must not unmap a signal handler that timers
# may still call.  -z now: no lazy binding in what a handler reaches (the
# loader's resolver saves the vector registers on the stack: 3 KiB more,
# too much for a PTHREAD_STACK_MIN thread or a small sigaltstack).
# libprofil.ld: .bss as file contents, not anonymous memory (it says why).
$(SHLIB): $(RUNTIME_OBJ) src/runtime/libprofil.map src/runtime/libprofil.ld
	@mkdir -p $(dir $@)
	$(CC) $(LIBFLAGS) $(CFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=src/runtime/libprofil.map -Wl,-z,defs -Wl,-z,nodelete \
		-Wl,-z,now -Wl,-T,src/runtime/libprofil.ld -o $@ $(RUNTIME_OBJ)

$(B)/lib/libprofil.so: $(SHLIB)
	ln -sf libprofil.so.$(SOVERSION) $(B)/lib/$(SONAME)
	ln -sf libprofil.so.$(SOVERSION) $@

$(STLIB): $(RUNTIME_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	$(AR) rcs $@ $(RUNTIME_OBJ)

$(B)/cli/%.o: %.c $(wildcard include/*.h src/*/*.h src/runtime/*/*.h) $(B)/gen/pprof.pb-c.h VERSION
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CLI_DEFS) $(CFLAGS) -I$(B)/gen $$(pkg-config --cflags libdw libprotobuf-c) -c -o $@ $<

$(B)/cli/%.o: %.S
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -c -o $@ $<

# pprof's profile.proto, compiled by protoc-c.
$(B)/gen/pprof.pb-c.c $(B)/gen/pprof.pb-c.h: src/format/pprof.proto
	@mkdir -p $(B)/gen
	protoc-c --c_out=$(B)/gen --proto_path=src/format pprof.proto

$(B)/cli/gen/pprof.pb-c.o: $(B)/gen/pprof.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -I$(B)/gen $$(pkg-config --cflags libprotobuf-c) -c -o $@ $<

# The HTML page's files (report --html), compiled in as C arrays by a
# tool built here for the purpose.
HTML_ASSETS := page=src/cli/html/page.html style=src/cli/html/page.css \
               script=src/cli/html/page.js flame_style=src/cli/html/flame.css \
               flame_script=src/cli/html/flame.js

$(B)/gen/embed: src/cli/html/embed.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -o $@ $<

$(B)/gen/html_assets.c: $(B)/gen/embed $(foreach a,$(HTML_ASSETS),$(lastword $(subst =, ,$(a))))
	$(B)/gen/embed $(HTML_ASSETS) > $@.tmp && mv $@.tmp $@

$(B)/cli/gen/html_assets.o: $(B)/gen/html_assets.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -c -o $@ $<

$(PROFIL): $(CLI_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -o $@ $(CLI_OBJ) $(CLI_LIBS)

# Tests --------------------------------------------------------------

deps:
	@sh scripts/setup.sh --test

# Unit tests link the static library, so they reach its internal
# (hidden) functions too.
$(B)/tests/unit/%: tests/unit/%.c $(STLIB) $(B)/obj/src/format/gmon_read.o
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -o $@ $< $(B)/obj/src/format/gmon_read.o $(UNIT_OBJ) $(STLIB) \
		$(CMOCKA) -lm
# test_satadd checks that sigaction, interposed, keeps libprofil's fault
# handler in the kernel.  With -fsanitize=address, libasan comes first on
# the link line and defines sigaction and signal itself, so the archive's
# signals.o would never be linked (and the test would check libasan's):
# named as an object, it always is.
$(B)/tests/unit/test_satadd: UNIT_OBJ := $(B)/obj/src/runtime/core/signals.o
$(B)/tests/unit/test_satadd: $(B)/obj/src/runtime/core/signals.o

# Unit tests of the command's own code link its objects instead (and
# only where the command is built: not in a cross build).
CLI_UNIT  := $(B)/tests/unit/test_stacks $(B)/tests/unit/test_symtab $(B)/tests/unit/test_disasm \
             $(B)/tests/unit/test_profile_map
CLI_UNIT_WITH := $(filter-out $(B)/cli/src/cli/main.o,$(CLI_OBJ)) \
                 $(B)/obj/src/runtime/core/env.o $(B)/obj/src/runtime/files/outname.o
ifdef CROSS
UNIT_BIN  := $(filter-out $(CLI_UNIT),$(UNIT_BIN))
endif

$(CLI_UNIT): $(B)/tests/unit/%: tests/unit/%.c $(CLI_UNIT_WITH)
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -I$(B)/gen -o $@ $< $(CLI_UNIT_WITH) $(CLI_LIBS) $(CMOCKA)

# Integration tests compile in the bin arithmetic and the readers of the
# runtime's own file formats, to read back what they wrote.
INTEG_WITH := src/common/bins.c src/common/rates.c src/format/loadmap_read.c src/format/pcsfile_read.c \
              src/format/monout_read.c

$(B)/tests/integration/%: tests/integration/%.c tests/integration/check.h tests/integration/stress.h tests/cli/refuse_perf.h $(INTEG_WITH) lib
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -o $@ $< $(INTEG_WITH) $(TEST_LINK) -lm

# Fuzz targets (tests/fuzz/*.c, one libFuzzer entry point each) link the
# command's code without its main.  FUZZ=1 links libFuzzer's driver;
# otherwise support/replay.c runs the checked-in corpus and regression
# files through them, which make check does in both passes.
FUZZ_SRC   := $(wildcard tests/fuzz/*.c)
FUZZ_BIN   := $(patsubst tests/fuzz/%.c,$(B)/tests/fuzz/%,$(FUZZ_SRC))
FUZZ_WITH  := $(filter-out $(B)/cli/src/cli/main.o,$(CLI_OBJ)) $(B)/obj/src/runtime/core/env.o \
              $(B)/obj/src/runtime/files/outname.o $(B)/fuzz-support/fuzzdir.o
ifeq ($(FUZZ),1)
FUZZ_MAIN  := -fsanitize=fuzzer
else
FUZZ_WITH  += $(B)/fuzz-support/replay.o
endif
FUZZ_SECONDS ?= 60

# Kept, not removed as intermediate files after each link.
.PRECIOUS: $(B)/fuzz-support/%.o

$(B)/fuzz-support/%.o: tests/fuzz/support/%.c tests/fuzz/support/fuzz.h
	@mkdir -p $(dir $@)
	$(CC) $(BASE) -D_GNU_SOURCE $(CFLAGS) -c -o $@ $<

$(B)/tests/fuzz/%: tests/fuzz/%.c tests/fuzz/support/fuzz.h $(FUZZ_WITH)
	@mkdir -p $(dir $@)
	$(CC) $(BASE) -D_GNU_SOURCE $(CFLAGS) -o $@ $< $(FUZZ_WITH) $(FUZZ_MAIN) $(CLI_LIBS)

fuzz-targets: $(FUZZ_BIN)

# Each target for FUZZ_SECONDS from its corpus; a table of executions and
# crashes at the end (tests/fuzz/run.sh).
fuzz: deps
	$(MAKE) fuzz-targets B=build/fuzz CC=clang FUZZ=1 CFLAGS="-O1 -g"
	@sh tests/fuzz/run.sh build/fuzz $(FUZZ_SECONDS)

# What the stress tests use: a library to dlopen, and a checker of the
# profile files they leave under profil run.
STRESS_AUX := $(B)/tests/stress/libdlwork.so $(B)/tests/stress/profcheck

$(B)/tests/stress/libdlwork.so: tests/stress/dlwork.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -fPIC -shared -o $@ $<

$(B)/tests/stress/profcheck: tests/stress/profcheck.c src/format/profile.c src/format/profile_guard.c src/common/bins.c
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -o $@ $^

# The audit's racy cases, N times each (issue 24 item 3): minutes, not
# part of make check.  make stress-long N=1000 for the closing figures.
N ?= 200
stress-long: lib $(PROFIL)
	sh tests/stress/long.sh $(B) $(N)

# BACKENDS: which backends each integration program runs under (default
# every one the machine allows; the sanitizer build runs the default).
test-run: lib $(PROFIL) $(UNIT_BIN) $(INTEG_BIN) $(EXAMPLE) $(FUZZ_BIN) $(STRESS_AUX)
	@PROFIL_BACKENDS="$(BACKENDS)" sh tests/run.sh $(B)

# ThreadSanitizer: the library and the tests that run threads against
# each other (and against the sampling path), under both backends.
# libprofil is preloaded: TSan's pthread_create calls the next one in
# the search order, and a libprofil linked after libtsan would run its
# trampoline in a thread TSan does not know yet (it crashes there).
# Preloaded, libprofil's comes first and calls TSan's, as under
# profil run (only into the test: preloaded into an uninstrumented
# program such as timeout(1), libtsan crashes it).  Not here: fork tests (TSan does not support threads
# made after a multi-threaded fork) and raw clone threads (they share
# their parent's TLS, and with it TSan's state of the parent thread).
TSAN_UNIT  := test_sink test_gmon_arcs
TSAN_INTEG := split_threads churn sprofil_threads stress_threads stress_signals

test-tsan: lib $(patsubst %,$(B)/tests/unit/%,$(TSAN_UNIT)) \
		$(patsubst %,$(B)/tests/integration/%,$(TSAN_INTEG))
	@PROFIL_BACKENDS="$(BACKENDS)" PROFIL_SCRIPTS=none \
		PROFIL_TEST_PRELOAD=$(abspath $(B))/lib/libprofil.so sh tests/run.sh $(B)

ifdef CROSS
check: deps test-emulated
else
check: deps
	$(MAKE) test-run
	$(MAKE) test-run B=build/san SAN=1 CFLAGS="-O1 -g" BACKENDS=auto
	$(MAKE) test-tsan B=build/tsan SAN=thread CFLAGS="-O1 -g"
	$(foreach a,$(EMULATED),$(MAKE) test-emulated ARCH=$(a) &&) true
	@sh tests/summary.sh build build/san build/tsan $(EMULATED:%=build/%)
endif

# Another processor's build, tested under qemu-user (make check
# ARCH=aarch64, and make check on x86-64 after its own passes): the unit
# tests, the integration programs but those below, and the scripts
# written for the emulated pass, with the timer backend and the profil
# command built for this machine (HOST_B).  tests/run.sh says what is
# not run there and why.
EMULATED   := $(filter-out $(HOST_ARCH),aarch64)
HOST_B     ?= build
EMU_SCRIPTS := emulated_run.sh gmon_calls.sh stacks.sh

# The x86-64 command under the cross build's name, so that the scripts
# find it where they look ($B/bin/profil).
host-profil:
	$(MAKE) ARCH=$(HOST_ARCH) B=$(HOST_B) $(HOST_B)/bin/profil
	@mkdir -p $(B)/bin
	ln -sf $(abspath $(HOST_B))/bin/profil $(B)/bin/profil

ifdef CROSS
$(B)/cross-include/cmocka.h:
	@mkdir -p $(dir $@)
	ln -sf /usr/include/cmocka.h $@

$(UNIT_BIN): | $(B)/cross-include/cmocka.h
endif

test-emulated: lib $(UNIT_BIN) $(INTEG_BIN) host-profil
	@PROFIL_TEST_EMULATOR="sh $(abspath tests/emulate.sh)" PROFIL_TEST_ARCH=$(ARCH) \
		PROFIL_BACKENDS=timer PROFIL_SCRIPTS="$(EMU_SCRIPTS)" sh tests/run.sh $(B)

# Example ------------------------------------------------------------

# The example uses only the public API, as a program built against the
# installed library does; -rdynamic lets dladdr name its functions.
$(EXAMPLE): examples/crunch.c lib
	@mkdir -p $(dir $@)
	$(CC) $(BASE) $(CFLAGS) -rdynamic -o $@ examples/crunch.c $(TEST_LINK)

# The whole process, under profil run, from a directory of its own.
example: all
	@mkdir -p $(B)/example-run
	cd $(B)/example-run && $(abspath $(PROFIL)) run $(abspath $(EXAMPLE)) \
		&& $(abspath $(PROFIL)) report --threshold 0.5

bench: lib $(PROFIL)
	@sh bench/run.sh $(B)
	@sh bench/loops.sh $(B)
	@sh bench/stacks.sh $(B)

# The HTML page of a made-up profile of 100 000 functions and 1 000 000
# addresses: its size, and chromium's time to show it.
bench-html: $(PROFIL)
	@sh bench/html.sh $(B)

# profil report and report --html on the profile of a make -j2 of a
# generated C project, against perf report --stdio on perf record's of
# the same build: time and peak memory, as ratios (FILES: the sizes).
FILES ?= 60 240
bench-report: lib $(PROFIL)
	@sh bench/report_scale.sh $(B) $(FILES)
	@sh bench/report_large.sh $(B)

# Install ------------------------------------------------------------

# profil.pc is written at install time: it names the installed paths.
# A LIBDIR outside the loader's search path needs the rpath; Debian's
# rules set PC_RPATH= (its multiarch directory is searched already).
PC_RPATH ?= -Wl,-rpath,$${libdir}

install: lib $(CLI_BUILT)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) $(DESTDIR)$(PKGDIR) \
		$(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(BINDIR)
	$(if $(CLI_BUILT),install -m 755 $(PROFIL) $(DESTDIR)$(BINDIR)/profil,@echo "install: the profil command is not cross-built: this machine's reads $(ARCH)'s files")
	install -m 644 include/profil.h $(DESTDIR)$(INCDIR)/profil.h
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libprofil.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf libprofil.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libprofil.so
	install -m 644 $(STLIB) $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCDIR@|$(INCDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    -e 's|@RPATH@|$(if $(PC_RPATH),$(PC_RPATH) )|' \
	    profil.pc.in > $(DESTDIR)$(PKGDIR)/profil.pc
	chmod 644 $(DESTDIR)$(PKGDIR)/profil.pc
	for page in man/man3/*.3; do \
		install -m 644 $$page $(DESTDIR)$(MANDIR)/man3/; done
	install -m 644 man/man1/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 man/man5/*.5 $(DESTDIR)$(MANDIR)/man5/

# Debian packages (debian/): libprofil1, libprofil-dev and profil, built
# by dpkg-buildpackage in a copy of the tree ($(B)/deb/profil-VERSION, so
# that nothing is written into the tree), then checked by lintian, which
# must find no error and no warning.  The .deb files land in $(B)/deb/.
# MAKEFLAGS is not passed on: this make's B= or CFLAGS= would reach the
# package's own build.
DEB_DIR  := $(B)/deb
DEB_TREE := Makefile VERSION LICENSE README.md profil.pc.in include src man examples debian

deb:
	@for t in dpkg-buildpackage dh lintian; do command -v $$t >/dev/null || \
		{ echo "make deb: $$t is missing (sh scripts/setup.sh --test installs it)" >&2; exit 1; }; done
	@v=$$(dpkg-parsechangelog -l debian/changelog -S Version) && [ "$$v" = "$(VERSION)" ] || \
		{ echo "debian/changelog: its top entry is $$v but VERSION says $(VERSION): add an entry (dch -v $(VERSION))" >&2; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/profil-$(VERSION)
	tar -cf - $(DEB_TREE) | tar -xf - -C $(DEB_DIR)/profil-$(VERSION)
	cd $(DEB_DIR)/profil-$(VERSION) && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
		dpkg-buildpackage -b -us -uc -j2 > ../build.log 2>&1 || { tail -n 40 ../build.log; exit 1; }
	lintian --fail-on error,warning $(DEB_DIR)/profil_$(VERSION)_*.changes
	@echo "lintian: no error, no warning"
	@ls -l $(DEB_DIR)/*.deb

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/profil.h $(DESTDIR)$(LIBDIR)/libprofil.* \
	      $(DESTDIR)$(PKGDIR)/profil.pc $(DESTDIR)$(BINDIR)/profil
	for page in man/man1/*.1 man/man3/*.3 man/man5/*.5; do \
		rm -f $(DESTDIR)$(MANDIR)/$${page#man/}; done

clean:
	rm -rf build
