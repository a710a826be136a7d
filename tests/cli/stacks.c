/*
 * stacks.c - a program with a known call structure, for the stack tests
 * (tests/integration/stacks.sh), and the hostile cases the in-handler
 * walk must survive.
 *
 *	stacks calls SECONDS	main and a second thread each, until the
 *				process has used SECONDS of CPU time:
 *				recursion_work -> recurse x12 -> rec_leaf;
 *				sort_work -> qsort -> cmp_work;
 *				zlib_work -> compress2 (libz)
 *	stacks garbage SECONDS	loops with rbp (x29) holding garbage
 *				(unmapped, random heap words, below sp) under
 *				CFI that says the frame is at it
 *	stacks ucontext SECONDS	work on a makecontext stack
 *	stacks altstack SECONDS	work in the program's own signal handler on
 *				a small sigaltstack
 *	stacks dlopen SECONDS	dlopen/dlclose libz (libm without it) in a loop
 *				while a thread works
 *	stacks vfork SECONDS	vfork + exec of true(1), 40 times at most, while working
 *
 * Every function the checker names is noinline and does something after
 * its call, so that no call becomes a jump.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#ifndef STACKS_NO_ZLIB
#include <zlib.h>
#endif

#ifdef __clang__
#define NOINLINE __attribute__((noinline))	/* clang has no noclone */
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif

static volatile uint64_t sink;
static double seconds;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE static void rec_leaf(void)
{
	for (int i = 0; i < 20000; i++)
		sink += (uint64_t)i * i;
}

NOINLINE static void recurse(int depth)
{
	if (depth > 1)
		recurse(depth - 1);
	else
		rec_leaf();
	sink++;
}

NOINLINE static void recursion_work(void)
{
	for (int i = 0; i < 200; i++)
		recurse(12);
	sink++;
}

NOINLINE static int cmp_work(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	for (int i = 0; i < 40; i++)	/* time in the comparator itself */
		sink += x ^ (uint64_t)i;
	return x < y ? -1 : x > y;
}

NOINLINE static void sort_work(void)
{
	enum { N = 4096 };
	static __thread uint64_t v[N];
	uint64_t s = (uint64_t)(uintptr_t)&s;
	for (int i = 0; i < N; i++) {
		s = s * 6364136223846793005u + 1442695040888963407u;
		v[i] = s >> 11;
	}
	qsort(v, N, sizeof v[0], cmp_work);
	sink += v[0];
}

NOINLINE static void zlib_work(void)
{
#ifdef STACKS_NO_ZLIB
	/* Built where libz is not installed for the processor (the
	   emulated pass): stacks.sh does not look for it. */
	sink++;
#else
	static __thread unsigned char in[1 << 14], out[(1 << 14) + 1024];
	uint64_t s = 88172645463325252u;
	for (size_t i = 0; i < sizeof in; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		in[i] = (unsigned char)("abcdefgh"[s & 7]);
	}
	/* Eight times, so that libz holds enough of the samples (about
	   3 %) for stackcheck's share of them to mean something. */
	for (int k = 0; k < 8; k++) {
		uLongf n = sizeof out;
		if (compress2(out, &n, in, sizeof in, 6) != Z_OK)
			abort();
		sink += n;
	}
#endif
}

NOINLINE static void run_all(void)
{
	while (cpu_seconds() < seconds) {
		recursion_work();
		sort_work();
		zlib_work();
	}
}

NOINLINE static void *thread_main(void *arg)
{
	(void)arg;
	run_all();
	sink++;
	return NULL;
}

static int calls(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, thread_main, NULL) != 0)
		return 1;
	run_all();
	pthread_join(t, NULL);
	return 0;
}

/* ---- Hostile cases: no crash, no hang. ---- */

/* rbp set to value for a while, in a function whose CFI puts its frame
   at rbp (it keeps a frame pointer). */
__attribute__((noinline, optimize("no-omit-frame-pointer")))
static void with_rbp(uintptr_t value)
{
#if defined(__x86_64__)
	unsigned long n = 2000000;
	__asm__ volatile("push %%rbp\n\tmov %1, %%rbp\n"
			 "1:\tdec %0\n\tjnz 1b\n\tpop %%rbp"
			 : "+r"(n) : "r"(value) : "memory", "cc");
#elif defined(__aarch64__)
	/* gcc keeps arm64's CFA on sp: the loop's CFI says x29 instead. */
	unsigned long n = 2000000;
	__asm__ volatile("mov x9, x29\n\t.cfi_remember_state\n\tmov x29, %1\n\t"
			 ".cfi_def_cfa x29, 16\n"
			 "1:\tsubs %0, %0, #1\n\tb.ne 1b\n\tmov x29, x9\n\t"
			 ".cfi_restore_state"
			 : "+r"(n) : "r"(value) : "x9", "memory", "cc");
#else
	for (int i = 0; i < 2000000; i++)
		sink += value;
#endif
	sink++;
}

static int garbage(void)
{
	uintptr_t *heap = malloc(4096 * sizeof *heap);
	uint64_t s = 1;
	for (int i = 0; i < 4096; i++) {
		s = s * 6364136223846793005u + 1;
		heap[i] = (uintptr_t)s;
	}
	while (cpu_seconds() < seconds) {
		with_rbp(0x10);				/* unmapped */
		with_rbp((uintptr_t)(heap + 2048));	/* random words */
		with_rbp((uintptr_t)&s - 4096);		/* below sp */
		with_rbp(~(uintptr_t)7);		/* the top of the address space */
	}
	free(heap);
	return 0;
}

static ucontext_t main_ctx, work_ctx;

static void context_work(void)
{
	run_all();
}

static int on_ucontext(void)
{
	size_t size = 256 * 1024;
	char *stack = malloc(size);
	if (!stack || getcontext(&work_ctx) != 0)
		return 1;
	work_ctx.uc_stack.ss_sp = stack;
	work_ctx.uc_stack.ss_size = size;
	work_ctx.uc_link = &main_ctx;
	makecontext(&work_ctx, context_work, 0);
	if (swapcontext(&main_ctx, &work_ctx) != 0)
		return 1;
	free(stack);
	return 0;
}

static volatile sig_atomic_t in_handler;

static void busy_handler(int sig)
{
	(void)sig;
	in_handler = 1;
	double until = cpu_seconds() + 0.02;
	while (cpu_seconds() < until)
		rec_leaf();
	in_handler = 0;
}

static int altstack(void)
{
	/* Small, but enough for three of the kernel's frames (the
	   program's signal, the timer's while its handler runs, and the
	   one a fault recovered in the walk would add: libprofil keeps room
	   for it, and walks no stack without) and ours on top.  arm64's
	   frames are large (4.6 KiB under qemu-user, x86-64's 1.3 KiB). */
	size_t size = 3 * (size_t)sysconf(_SC_MINSIGSTKSZ) + 8192;
	if (size < 8192)
		size = 8192;
	stack_t ss = { .ss_sp = malloc(size), .ss_size = size };
	if (!ss.ss_sp || sigaltstack(&ss, NULL) != 0)
		return 1;
	struct sigaction sa = { .sa_handler = busy_handler, .sa_flags = SA_ONSTACK };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	while (cpu_seconds() < seconds) {
		raise(SIGUSR1);
		recursion_work();
	}
	return 0;
}

static void *dl_loop(void *arg)
{
	(void)arg;
	while (cpu_seconds() < seconds) {
#ifdef STACKS_NO_ZLIB
		void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
		if (h) {
			double (*cosine)(double) = (double (*)(double))dlsym(h, "cos");
			if (cosine)
				sink += (uint64_t)cosine((double)(sink & 7));
			dlclose(h);
		}
#else
		void *h = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
		if (h) {
			uLong (*crc)(uLong, const Bytef *, uInt) =
				(uLong (*)(uLong, const Bytef *, uInt))dlsym(h, "crc32");
			if (crc)
				sink += crc(0, (const Bytef *)"x", 1);
			dlclose(h);
		}
#endif
	}
	return NULL;
}

static int dlopen_loop(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, dl_loop, NULL) != 0)
		return 1;
	dl_loop(NULL);
	pthread_join(t, NULL);
	return 0;
}

static int vfork_loop(void)
{
	/* Each child is a process of its own under profil run: a few do. */
	for (int i = 0; i < 40 && cpu_seconds() < seconds; i++) {
		pid_t pid = vfork();
		if (pid == 0) {
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		recursion_work();
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: stacks calls|garbage|ucontext|altstack|dlopen|vfork SECONDS\n");
		return 2;
	}
	seconds = atof(argv[2]);
	const char *m = argv[1];
	int r = !strcmp(m, "calls") ? calls()
		: !strcmp(m, "garbage") ? garbage()
		: !strcmp(m, "ucontext") ? on_ucontext()
		: !strcmp(m, "altstack") ? altstack()
		: !strcmp(m, "dlopen") ? dlopen_loop()
		: !strcmp(m, "vfork") ? vfork_loop() : 2;
	printf("%llu\n", (unsigned long long)(sink & 1));
	return r;
}
