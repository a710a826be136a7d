/*
 * rseq_memtest.c - how often the kernel kills a crash handler that tests
 * memory in place, glibc's rseq area included (issue 23), with and
 * without profiling.  Not a test of libprofil: the rseq area is the
 * kernel's and glibc's, and a pattern in it gets the thread killed
 * (SIGSEGV, si_code SI_KERNEL) whenever the kernel next looks at it.
 *
 *   rseq_memtest none        nothing else
 *   rseq_memtest timer HZ    the program's own CPU-time timer at HZ, its
 *                            signal blocked in the crash handler
 *   rseq_memtest profil      profil(2) over the program's text, with
 *                            libprofil's backend (PROFIL_BACKEND)
 *
 * Another thread spins all along, as a server's would.  After 50 ms of
 * CPU the main thread faults; its SIGSEGV handler (SA_NODEFER |
 * SA_RESETHAND, like redis's) fills the mapping that holds its thread
 * pointer with four patterns, about 1 ms of CPU each, and puts it back.
 * Exit status 0: the handler lived to the end; 139: killed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char __executable_start[], etext[];

static uintptr_t *region;
static size_t words;
static uintptr_t saved[1 << 17];
static unsigned long loops_per_ms;
static volatile unsigned long sink;

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Nothing in the handler's memory test may touch TLS (errno, the
   stack protector's canary) while a pattern is in it. */
#if defined(__has_attribute) && __has_attribute(no_stack_protector)
#define NO_TLS __attribute__((noinline, no_stack_protector))
#else
#define NO_TLS __attribute__((noinline, optimize("no-stack-protector")))
#endif

static NO_TLS void pattern_for(unsigned long loops, int which)
{
	volatile uintptr_t *r = region;
	for (size_t i = 0; i < words; i++)
		saved[i] = r[i];
	for (size_t i = 0; i < words; i++)
		r[i] = which == 0 ? 0 : which == 1 ? ~(uintptr_t)0
		     : which == 2 ? (uintptr_t)&r[i] : (uintptr_t)0x5555555555555555ull;
	for (unsigned long n = 0; n < loops; n++)
		sink += n;
	for (size_t i = 0; i < words; i++)
		r[i] = saved[i];
}

static NO_TLS void on_segv(int sig)
{
	(void)sig;
	for (int which = 0; which < 4; which++)
		pattern_for(loops_per_ms, which);
	_exit(0);
}

static void on_tick(int sig)
{
	(void)sig;
	sink++;
}

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		sink++;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	uintptr_t tp = (uintptr_t)__builtin_thread_pointer();
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096];
	unsigned long lo = 0, hi = 0;
	while (maps && fgets(line, sizeof line, maps))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= tp && tp < hi)
			break;
	if (maps)
		fclose(maps);
	if (!(lo <= tp && tp < hi) || hi - lo > sizeof saved) {
		fprintf(stderr, "rseq_memtest: no mapping of at most %zu bytes holds the thread pointer\n",
			sizeof saved);
		return 2;
	}
	region = (uintptr_t *)lo;
	words = (hi - lo) / sizeof *region;

	double t0 = cpu_seconds();
	unsigned long n = 0;
	while (cpu_seconds() - t0 < 0.02)
		for (int i = 0; i < 10000; i++, n++)
			sink += n;
	loops_per_ms = n / 20 + 1;

	static unsigned short hist[1 << 20];
	if (strcmp(mode, "timer") == 0) {
		signal(SIGUSR2, on_tick);
		struct sigevent se;
		memset(&se, 0, sizeof se);
		se.sigev_notify = SIGEV_THREAD_ID;
		se.sigev_signo = SIGUSR2;
		se._sigev_un._tid = gettid();
		timer_t t;
		long hz = argc > 2 ? atol(argv[2]) : 1000;
		struct itimerspec its = { { 0, 1000000000L / hz }, { 0, 1000000000L / hz } };
		if (hz < 1 || timer_create(CLOCK_THREAD_CPUTIME_ID, &se, &t) != 0
		    || timer_settime(t, 0, &its, NULL) != 0) {
			fprintf(stderr, "rseq_memtest: timer at %ld Hz: %m\n", hz);
			return 2;
		}
	} else if (strcmp(mode, "profil") == 0) {
		size_t size = (size_t)(etext - __executable_start) + 2;
		if (size > sizeof hist)
			size = sizeof hist;
		if (profil(hist, size, (unsigned long)__executable_start, 0x10000) != 0) {
			fprintf(stderr, "rseq_memtest: profil: %m\n");
			return 2;
		}
	} else if (strcmp(mode, "none") != 0) {
		fprintf(stderr, "rseq_memtest: mode '%s': not none, timer or profil\n", mode);
		return 2;
	}
	pthread_t other;
	pthread_create(&other, NULL, spin, NULL);
	t0 = cpu_seconds();
	while (cpu_seconds() - t0 < 0.05)
		sink++;

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_segv;
	sa.sa_flags = SA_NODEFER | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	sigaction(SIGSEGV, &sa, NULL);
	volatile int *bad = (volatile int *)(uintptr_t)8;
	__asm__("" : "+r"(bad));
	*bad = 1;
	return 1;
}
