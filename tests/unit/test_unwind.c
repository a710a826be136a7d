/*
 * The unwinder (src/runtime/unwind): tables built from the loaded
 * objects' in-memory .eh_frame, and walks of known call chains of this
 * program (built -O2, so without frame pointers) through its own
 * recursion, a qsort callback and zlib, from getcontext() and from a
 * real SIGPROF's ucontext, each ending at _start.
 *
 * Every chain function records its own return address: the walk must
 * give those return addresses, innermost first, in order (other frames,
 * libc's or libz's, may sit between them).  This program is not linked
 * -rdynamic, so dladdr names only the libraries' functions; its own are
 * checked by these exact addresses instead.
 *
 * On arm64 (make test-emulated runs it under qemu-user) the same, and
 * walks that start in a PLT stub, which has no CFI there.
 *
 * The figures (build time and size per object, cost per frame) are
 * printed for the record; the bounds asserted are loose on purpose: the
 * machine is shared.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <zlib.h>

#include "../../src/runtime/sinks/fault.h"
#include "../../src/runtime/sinks/satadd.h"
#include "../../src/runtime/unwind/table.h"
#include "../../src/runtime/unwind/unwind.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define NOINLINE __attribute__((noinline))
/* Keep a call from becoming a jump or a loop. */
#define KEEP(x) __asm__ volatile("" : "+r"(x) : : "memory")

extern void _start(void);

/* ---- fault handler, kept across cmocka's per-test handlers ---------- */

static int installed_here;
static struct sigaction ours_segv, ours_bus;

static void faults_recovered(void)
{
	if (!installed_here) {
		assert_int_equal(fault_install(), 0);
		assert_int_equal(sigaction(SIGSEGV, NULL, &ours_segv), 0);
		assert_int_equal(sigaction(SIGBUS, NULL, &ours_bus), 0);
		installed_here = 1;
	} else {
		assert_int_equal(sigaction(SIGSEGV, &ours_segv, NULL), 0);
		assert_int_equal(sigaction(SIGBUS, &ours_bus, NULL), 0);
	}
}

static uintptr_t stack_lo, stack_hi;

static void find_stack(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	assert_int_equal(pthread_getattr_np(pthread_self(), &a), 0);
	assert_int_equal(pthread_attr_getstack(&a, &addr, &size), 0);
	pthread_attr_destroy(&a);
	stack_lo = (uintptr_t)addr;
	stack_hi = (uintptr_t)addr + size;
}

static int setup(void **state)
{
	(void)state;
	find_stack();
	assert_int_equal(unwind_tables_update(), 0);
	return 0;
}

/* ---- the chains ---------------------------------------------------- */

enum { MAX_ANCHORS = 512 };
static uintptr_t anchors[MAX_ANCHORS];	/* outermost first */
static int nanchors;
static uintptr_t frames[UNWIND_MAX_DEPTH];
static int nframes;
static enum unwind_stop stop;

static void anchor(void *ra)
{
	if (nanchors < MAX_ANCHORS)
		anchors[nanchors++] = (uintptr_t)ra;
}

static void walk_uc(const ucontext_t *uc, int max)
{
	struct unwind_regs r;
	assert_int_equal(unwind_regs_from_context(uc, &r), 0);
	struct unwind_mem m = { stack_lo, stack_hi, NULL };
	nframes = unwind_walk(&r, &m, frames, max, &stop);
}

static int depth_limit = UNWIND_MAX_DEPTH;

NOINLINE static void capture(void)
{
	anchor(__builtin_return_address(0));
	ucontext_t uc;
	getcontext(&uc);
	walk_uc(&uc, depth_limit);
}

NOINLINE static int rec(int n)
{
	anchor(__builtin_return_address(0));
	int r = n;
	if (n == 0)
		capture();
	else
		r = rec(n - 1);
	KEEP(r);
	return r + 1;
}

static int captured_in_cmp;

NOINLINE static int cmp(const void *a, const void *b)
{
	if (!captured_in_cmp) {
		captured_in_cmp = 1;
		anchor(__builtin_return_address(0));
		capture();
	}
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

NOINLINE static int chain_qsort(void)
{
	anchor(__builtin_return_address(0));
	int v[64];
	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	qsort(v, 64, sizeof v[0], cmp);
	int r = v[0];
	KEEP(r);
	return r;
}

static int captured_in_alloc;

NOINLINE static void *zalloc(void *opaque, unsigned items, unsigned size)
{
	(void)opaque;
	if (!captured_in_alloc) {
		captured_in_alloc = 1;
		anchor(__builtin_return_address(0));
		capture();
	}
	return calloc(items, size);
}

static void zfree(void *opaque, void *p)
{
	(void)opaque;
	free(p);
}

NOINLINE static int chain_zlib(void *libz)
{
	anchor(__builtin_return_address(0));
	int (*init)(z_streamp, int, const char *, int) = (int (*)(z_streamp, int, const char *, int))dlsym(libz, "deflateInit_");
	int (*end)(z_streamp) = (int (*)(z_streamp))dlsym(libz, "deflateEnd");
	assert_non_null(init);
	assert_non_null(end);
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	zs.zalloc = zalloc;
	zs.zfree = zfree;
	int r = init(&zs, 6, ZLIB_VERSION, (int)sizeof zs);
	KEEP(r);
	end(&zs);
	return r;
}

/* ---- checks -------------------------------------------------------- */

static const char *object_of(uintptr_t pc)
{
	Dl_info di;
	if (!dladdr((void *)pc, &di) || !di.dli_fname)
		return "";
	return di.dli_fname;
}

/*
 * qemu-user's signal trampoline is in no object, and has no CFI: the
 * arm64 walk knows it by its code (mov x8, #139; svc #0).  Only a frame
 * the walk went on from is read here: the walk read its code already.
 */
static int sigreturn_code(uintptr_t pc)
{
#if defined(__aarch64__)
	const uint32_t *p = (const uint32_t *)pc;
	return !(pc & 3) && p[0] == 0xd2801168u && p[1] == 0xd4000001u;
#else
	(void)pc;
	return 0;
#endif
}

/* The anchors, innermost first, appear in order among frames[1..]. */
static void assert_chain(void)
{
	int f = 1;
	for (int a = nanchors - 1; a >= 0; a--) {
		while (f < nframes && frames[f] != anchors[a])
			f++;
		if (f >= nframes)
			fail_msg("anchor %d (%#lx) of %d not among the %d frames", a,
				 (unsigned long)anchors[a], nanchors, nframes);
		f++;
	}
	for (int i = 0; i < nframes; i++)
		if (!*object_of(frames[i] - (i > 0)) && !(i < nframes - 1 && sigreturn_code(frames[i])))
			fail_msg("frame %d (%#lx) in no object", i, (unsigned long)frames[i]);
}

static void assert_complete(void)
{
	assert_int_equal(stop, UNWIND_COMPLETE);
	uintptr_t last = frames[nframes - 1];
	assert_true(last - (uintptr_t)_start < 64);
}

static void test_recursion(void **state)
{
	(void)state;
	nanchors = 0;
	int r = rec(20);
	assert_int_equal(r, 21);
	assert_int_equal(nanchors, 22);
	assert_chain();
	assert_complete();
}

static void test_qsort_callback(void **state)
{
	(void)state;
	nanchors = 0;
	captured_in_cmp = 0;
	chain_qsort();
	assert_int_equal(nanchors, 3);
	assert_chain();
	assert_complete();
	/* cmp's return address into libc, then libc's frames up to qsort's
	 * return into chain_qsort.  Under ASan, libasan's qsort interceptor
	 * and comparator wrapper sit at both ends. */
	int i = 0;
	while (frames[i] != anchors[1])
		i++;
	int j = i, in_libc = 0;
	for (; j < nframes; j++) {
		const char *obj = object_of(frames[j] - 1);
		if (strstr(obj, "libc.so"))
			in_libc++;
		else if (!strstr(obj, "libasan") && !strstr(obj, "libubsan"))
			break;
	}
	/* msort's recursion and qsort itself; libasan's interceptor calls
	 * cmp directly first, to check the comparator. */
	assert_true(in_libc >= 2 || UNDER_ASAN);
	assert_true(j < nframes);
	assert_true(frames[j] - (uintptr_t)chain_qsort < 4096);	/* back in this program */
}

static void test_zlib(void **state)
{
	(void)state;
	void *libz = dlopen("libz.so.1", RTLD_NOW);
	if (!libz) {
		/* The emulated pass: Debian's zlib1g:arm64 is not installed. */
		print_message("zlib chain not walked: no libz.so.1 for this processor\n");
		skip();
	}
	assert_int_equal(unwind_tables_update(), 0);
	nanchors = 0;
	captured_in_alloc = 0;
	chain_zlib(libz);
	assert_int_equal(nanchors, 3);
	assert_chain();
	assert_complete();
	/* zalloc's return address is in libz (deflateInit2_), which
	 * deflateInit_ called. */
	assert_true(strstr(object_of(anchors[1] - 1), "libz.so"));
	int i = 0;
	while (frames[i] != anchors[1])
		i++;
	assert_true(strstr(object_of(frames[i + 1] - 1), "libz.so"));
	Dl_info di;
	assert_true(dladdr((void *)(frames[i + 1] - 1), &di));
	assert_non_null(di.dli_sname);
	assert_string_equal(di.dli_sname, "deflateInit_");
	dlclose(libz);
}

static void test_depth_limit(void **state)
{
	(void)state;
	nanchors = 0;
	rec(200);
	assert_int_equal(nframes, UNWIND_MAX_DEPTH);
	assert_int_equal(stop, UNWIND_DEPTH);
	/* The innermost frames are the ones kept. */
	assert_int_equal(frames[1], anchors[nanchors - 1]);
	assert_int_equal(frames[2], anchors[nanchors - 2]);
	depth_limit = 5;
	nanchors = 0;
	rec(10);
	depth_limit = UNWIND_MAX_DEPTH;
	assert_int_equal(nframes, 5);
	assert_int_equal(stop, UNWIND_DEPTH);
}

/* ---- a real signal ------------------------------------------------- */

static volatile sig_atomic_t sig_armed, sig_done;
static uintptr_t sig_frames[UNWIND_MAX_DEPTH], via_frames[UNWIND_MAX_DEPTH];
static int sig_n, via_n;
static enum unwind_stop sig_stop, via_stop;
static uintptr_t spin_ra;

static void on_prof(int sig, siginfo_t *info, void *context)
{
	(void)sig;
	(void)info;
	if (!sig_armed || sig_done)
		return;
	struct unwind_regs r;
	unwind_regs_from_context(context, &r);
	struct unwind_mem m = { stack_lo, stack_hi, NULL };
	sig_n = unwind_walk(&r, &m, sig_frames, UNWIND_MAX_DEPTH, &sig_stop);
	/* And from inside the handler, through the kernel's signal frame. */
	ucontext_t uc;
	getcontext(&uc);
	unwind_regs_from_context(&uc, &r);
	via_n = unwind_walk(&r, &m, via_frames, UNWIND_MAX_DEPTH, &via_stop);
	sig_done = 1;
}

static volatile uint64_t sink;

NOINLINE static void spin(void)
{
	spin_ra = (uintptr_t)__builtin_return_address(0);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sig_armed = 1;
	do {
		for (int i = 0; i < 100000 && !sig_done; i++)
			sink = sink * 31 + (uint64_t)i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!sig_done && t.tv_sec - t0.tv_sec < 20);
	sig_armed = 0;
}

NOINLINE static int sig_rec(int n)
{
	anchor(__builtin_return_address(0));
	int r = n;
	if (n == 0)
		spin();
	else
		r = sig_rec(n - 1);
	KEEP(r);
	return r + 1;
}

static void test_signal(void **state)
{
	(void)state;
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	assert_int_equal(sigaction(SIGPROF, &sa, &old), 0);
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
	sig_done = 0;
	nanchors = 0;
	assert_int_equal(setitimer(ITIMER_PROF, &it, NULL), 0);
	sig_rec(8);
	setitimer(ITIMER_PROF, &off, NULL);
	sigaction(SIGPROF, &old, NULL);
	assert_true(sig_done);

	anchor((void *)spin_ra);
	/* The handler's own walk: handler, __restore_rt, then the chain. */
	memcpy(frames, via_frames, sizeof frames);
	nframes = via_n;
	stop = via_stop;
	assert_chain();
	assert_complete();
	/* From the ucontext: the interrupted pc in spin (or in
	 * clock_gettime, the vDSO), then the chain. */
	memcpy(frames, sig_frames, sizeof frames);
	nframes = sig_n;
	stop = sig_stop;
	assert_chain();
	assert_complete();
	assert_true(nframes < via_n);
}

/* ---- bad input ----------------------------------------------------- */

static void test_garbage(void **state)
{
	(void)state;
	faults_recovered();	/* cmocka put its own handlers in after setup */
	uint64_t before[UNWIND_STOP_COUNT], after[UNWIND_STOP_COUNT];
#if defined(__aarch64__)
	/* At a function's entry arm64 reads nothing (the return address is
	 * in x30): a pc past rec's prologue, where it is on the stack. */
	nanchors = 0;
	rec(0);
	uintptr_t good_pc = anchors[1];
#else
	uintptr_t good_pc = (uintptr_t)rec + 1;
#endif
	unwind_stop_counts(before);
	uintptr_t pcs[UNWIND_MAX_DEPTH];
	enum unwind_stop why;
	struct unwind_mem all = { 0, UINTPTR_MAX, NULL };

	/* A pc in no object. */
	struct unwind_regs r = { 0x1234, stack_lo + 4096, 0, 0 };
	assert_int_equal(unwind_walk(&r, &all, pcs, UNWIND_MAX_DEPTH, &why), 1);
	assert_int_equal(why, UNWIND_NO_OBJECT);

	/* A good pc, sp on a page that cannot be read: the load faults and
	 * is recovered. */
	void *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(none != MAP_FAILED);
	r.ip = good_pc;
	r.sp = (uintptr_t)none + 64;
	r.bp = r.sp;	/* the frame on sp or on the frame pointer (clang's on arm64) */
	assert_int_equal(unwind_walk(&r, &all, pcs, UNWIND_MAX_DEPTH, &why), 1);
	assert_int_equal(why, UNWIND_BAD_READ);
	/* Outside the bounds given: not read at all. */
	struct unwind_mem stack = { stack_lo, stack_hi, NULL };
	r.sp = stack_hi + 4096;
	assert_int_equal(unwind_walk(&r, &stack, pcs, UNWIND_MAX_DEPTH, &why), 1);
	assert_int_equal(why, UNWIND_BAD_READ);

	/* A real context with rbp and sp shifted: any stop, never a crash. */
	ucontext_t uc;
	getcontext(&uc);
	struct unwind_regs good;
	unwind_regs_from_context(&uc, &good);
	unsigned seed = 12345;
	for (int k = 0; k < 20000; k++) {
		r = good;
		r.sp = good.sp + (uintptr_t)(rand_r(&seed) % 512) * 8 - 128;
		r.bp = (k & 1) ? (uintptr_t)rand_r(&seed) << 20 : good.sp + (uintptr_t)(rand_r(&seed) % 64) * 8;
		if (k % 3 == 0)
			r.ip = (uintptr_t)rand_r(&seed) % 4096 + (uintptr_t)qsort;
		const struct unwind_mem *m = (k & 2) ? &all : &stack;
		int n = unwind_walk(&r, m, pcs, UNWIND_MAX_DEPTH, &why);
		assert_true(n >= 1 && n <= UNWIND_MAX_DEPTH);
		assert_true(why < UNWIND_STOP_COUNT);
	}
	munmap(none, 4096);
	unwind_stop_counts(after);
	uint64_t total = 0;
	for (int i = 0; i < UNWIND_STOP_COUNT; i++)
		total += after[i] - before[i];
	assert_int_equal(total, 20003);
	assert_true(after[UNWIND_BAD_READ] - before[UNWIND_BAD_READ] >= 2);
	assert_true(after[UNWIND_NO_OBJECT] - before[UNWIND_NO_OBJECT] >= 1);
}

/* A stack copy, as the perf backend will have: reads past it stop. */
static void test_copy(void **state)
{
	(void)state;
	nanchors = 0;
	rec(3);
	ucontext_t uc;
	getcontext(&uc);
	struct unwind_regs r;
	unwind_regs_from_context(&uc, &r);
	uintptr_t pcs[UNWIND_MAX_DEPTH], pcs2[UNWIND_MAX_DEPTH];
	enum unwind_stop why, why2;
	struct unwind_mem live = { stack_lo, stack_hi, NULL };
	int n = unwind_walk(&r, &live, pcs, UNWIND_MAX_DEPTH, &why);
	assert_int_equal(why, UNWIND_COMPLETE);
	size_t len = stack_hi - r.sp < 65536 ? stack_hi - r.sp : 65536;
	len &= ~(size_t)7;
	unsigned char *copy = malloc(len);
	assert_non_null(copy);
	/* Word by word through satload64: under ASan, memcpy would trip on
	 * the redzones of live frames. */
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w;
		assert_int_equal(satload64((const uint64_t *)(r.sp + i), &w), 0);
		memcpy(copy + i, &w, 8);
	}
	struct unwind_mem cm = { r.sp, r.sp + len, copy };
	int n2 = unwind_walk(&r, &cm, pcs2, UNWIND_MAX_DEPTH, &why2);
	assert_int_equal(why2, UNWIND_COMPLETE);
	assert_int_equal(n2, n);
	assert_memory_equal(pcs, pcs2, (size_t)n * sizeof pcs[0]);
	/* A copy too short: a bad read, with the frames found so far. */
	cm.hi = r.sp + 64;
	n2 = unwind_walk(&r, &cm, pcs2, UNWIND_MAX_DEPTH, &why2);
	assert_int_equal(why2, UNWIND_BAD_READ);
	assert_true(n2 >= 1 && n2 < n);
	free(copy);
}

/* ---- arm64's .plt, which has no CFI ------------------------------- */

#if defined(__aarch64__)
/* Where a section of this program is, from its section headers. */
static uintptr_t section_addr(const char *name)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	assert_non_null(f);
	Elf64_Ehdr eh;
	uintptr_t addr = 0;
	assert_int_equal(fread(&eh, sizeof eh, 1, f), 1);
	Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
	assert_non_null(sh);
	assert_int_equal(fseek(f, (long)eh.e_shoff, SEEK_SET), 0);
	assert_int_equal(fread(sh, sizeof *sh, eh.e_shnum, f), eh.e_shnum);
	char *names = malloc(sh[eh.e_shstrndx].sh_size);
	assert_non_null(names);
	assert_int_equal(fseek(f, (long)sh[eh.e_shstrndx].sh_offset, SEEK_SET), 0);
	assert_int_equal(fread(names, 1, sh[eh.e_shstrndx].sh_size, f), sh[eh.e_shstrndx].sh_size);
	for (unsigned i = 0; i < eh.e_shnum; i++)
		if (!strcmp(names + sh[i].sh_name, name))
			addr = sh[i].sh_addr;
	free(names);
	free(sh);
	fclose(f);
	return addr;
}

static int first_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;	/* the program is the first */
}

/*
 * A sample in a PLT stub: the stub's frame is its caller's sp and x30,
 * as if plt_caller had called through it and been interrupted there
 * (in PLT0, after its stp has pushed 16 bytes).
 */
NOINLINE static void plt_caller(uintptr_t stub, uintptr_t pushed)
{
	anchor(__builtin_return_address(0));
	ucontext_t uc;
	getcontext(&uc);
	struct unwind_regs r;
	unwind_regs_from_context(&uc, &r);
	r.lr = r.ip;	/* back into plt_caller, past the call */
	r.ip = stub;
	r.sp -= pushed;
	struct unwind_mem m = { stack_lo, stack_hi, NULL };
	nframes = unwind_walk(&r, &m, frames, UNWIND_MAX_DEPTH, &stop);
	anchor((void *)r.lr);
}

static void test_plt(void **state)
{
	(void)state;
	uintptr_t bias = 0, plt = section_addr(".plt");
	assert_true(plt != 0);
	dl_iterate_phdr(first_bias, &bias);
	plt += bias;
	/* PLT0 is 32 bytes; the first entry follows. */
	const uintptr_t cases[][2] = { { plt + 32 + 4, 0 }, { plt + 32, 0 }, { plt + 8, 16 } };
	for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		nanchors = 0;
		plt_caller(cases[k][0], cases[k][1]);
		assert_int_equal(frames[0], cases[k][0]);
		assert_int_equal(frames[1], anchors[1]);
		assert_int_equal(frames[2], anchors[0]);
		assert_complete();
	}
}
#endif

/* ---- figures ------------------------------------------------------- */

static double now_cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* .eh_frame + .eh_frame_hdr of the file, from its section headers. */
static size_t eh_bytes(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	Elf64_Ehdr eh;
	size_t total = 0;
	if (fread(&eh, sizeof eh, 1, f) == 1 && eh.e_shentsize == sizeof(Elf64_Shdr)) {
		Elf64_Shdr *sh = calloc(eh.e_shnum, sizeof *sh);
		Elf64_Shdr *str;
		if (sh && fseek(f, (long)eh.e_shoff, SEEK_SET) == 0
		    && fread(sh, sizeof *sh, eh.e_shnum, f) == eh.e_shnum && eh.e_shstrndx < eh.e_shnum) {
			str = &sh[eh.e_shstrndx];
			char *names = malloc(str->sh_size);
			if (names && fseek(f, (long)str->sh_offset, SEEK_SET) == 0
			    && fread(names, 1, str->sh_size, f) == str->sh_size) {
				for (unsigned i = 0; i < eh.e_shnum; i++) {
					const char *nm = names + sh[i].sh_name;
					if (sh[i].sh_name < str->sh_size
					    && (!strcmp(nm, ".eh_frame") || !strcmp(nm, ".eh_frame_hdr")))
						total += sh[i].sh_size;
				}
			}
			free(names);
		}
		free(sh);
	}
	fclose(f);
	return total;
}

struct measured {
	int objects, libc_seen;
};

static int measure_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct measured *m = arg;
	const char *name = info->dlpi_name;
	const char *tag = strstr(name, "libc.so") ? "libc" : strstr(name, "libz.so") ? "libz"
			  : strstr(name, "libstdc++") ? "libstdc++" : strstr(name, "linux-vdso") ? "vdso"
			  : NULL;
	if (!tag && *name == 0 && m->objects == 0)
		tag = "program";
	m->objects++;
	if (!tag)
		return 0;
	struct unwind_object o;
	struct unwind_build_stats st;
	memset(&st, 0, sizeof st);
	double best = 1e9;
	int rc = -1;
	for (int k = 0; k < 5; k++) {
		double t0 = now_cpu();
		rc = unwind_table_build(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum, name, &o,
					&st);
		double t = now_cpu() - t0;
		if (rc == 0 && t < best)
			best = t;
		if (rc == 0 && k < 4)
			unwind_table_free(&o);
	}
	if (rc != 0) {
		print_message("unwind table %-9s none\n", tag);
		return 0;
	}
	size_t eh = *name ? eh_bytes(name) : eh_bytes("/proc/self/exe");
	print_message("unwind table %-9s build %.2f ms, %u rows, %u rules, %zu bytes; "
		      ".eh_frame+hdr %zu bytes (%.2fx); %llu FDEs, %llu NOINFO rows, %llu bad FDEs\n",
		      tag, best * 1e3, o.nrows, o.nrules, o.bytes, eh, eh ? (double)o.bytes / eh : 0.0,
		      (unsigned long long)st.fdes / 5, (unsigned long long)st.noinfo_rows / 5,
		      (unsigned long long)st.bad_fdes / 5);
	if (!strcmp(tag, "libc")) {
		m->libc_seen = 1;
		assert_true(best < 0.5);	/* milliseconds; loose for a loaded machine */
		assert_true(o.nrows > 10000);
		assert_true(o.bytes < eh * 12 / 10);
		assert_true(st.bad_fdes == 0);
	}
	unwind_table_free(&o);
	return 0;
}

static void test_build_figures(void **state)
{
	(void)state;
	void *libz = dlopen("libz.so.1", RTLD_NOW);
	struct measured m = { 0, 0 };
	dl_iterate_phdr(measure_one, &m);
	assert_true(m.libc_seen);
	if (libz)
		dlclose(libz);
}

NOINLINE static void cost_leaf(int cold)
{
	ucontext_t uc;
	getcontext(&uc);
	struct unwind_regs r;
	unwind_regs_from_context(&uc, &r);
	struct unwind_mem m = { stack_lo, stack_hi, NULL };
	uintptr_t pcs[UNWIND_MAX_DEPTH];
	enum unwind_stop why;
	enum { N = 2000 };
	size_t evict = 16u << 20;
	unsigned char *junk = cold ? malloc(evict) : NULL;
	double total = 0;
	int frames_walked = 0;
	for (int i = 0; i < N; i++) {
		if (junk) /* push the tables and the stack out of the caches */
			memset(junk, i, evict);
		double t0 = now_cpu();
		int n = unwind_walk(&r, &m, pcs, UNWIND_MAX_DEPTH, &why);
		total += now_cpu() - t0;
		frames_walked += n;
		assert_int_equal(why, UNWIND_COMPLETE);
		if (cold && i == 20)
			break;
	}
	int walks = cold ? 21 : N;
	print_message("unwind cost %s: %.1f ns per frame, %.2f us per walk of %d frames\n",
		      cold ? "cold" : "warm", total / frames_walked * 1e9, total / walks * 1e6,
		      frames_walked / walks);
	free(junk);
}

NOINLINE static int cost_rec(int n, int cold)
{
	int r = n;
	if (n == 0)
		cost_leaf(cold);
	else
		r = cost_rec(n - 1, cold);
	KEEP(r);
	return r + 1;
}

static void test_cost(void **state)
{
	(void)state;
	cost_rec(20, 0);
	cost_rec(20, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_recursion, setup),
		cmocka_unit_test_setup(test_qsort_callback, setup),
		cmocka_unit_test_setup(test_zlib, setup),
		cmocka_unit_test_setup(test_depth_limit, setup),
		cmocka_unit_test_setup(test_signal, setup),
		cmocka_unit_test_setup(test_garbage, setup),
		cmocka_unit_test_setup(test_copy, setup),
#if defined(__aarch64__)	/* x86-64's .plt has CFI: the other walks go through it */
		cmocka_unit_test_setup(test_plt, setup),
#endif
		cmocka_unit_test_setup(test_build_figures, setup),
		cmocka_unit_test_setup(test_cost, setup),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	unwind_tables_release();
	return rc;
}
