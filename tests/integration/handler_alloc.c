/*
 * profil() turned on and off from a signal handler allocates nothing: the
 * classic "toggle profiling on a signal" must work whatever the handler
 * interrupted, the program's own malloc included.  The program's malloc,
 * calloc, realloc and free are interposed here and count the calls made
 * while the handler runs (and, while the program only raises the signal
 * and computes, libprofil's sampling handler too); there must be none.
 *
 * The perf backend's open asked dlsym whether ThreadSanitizer was loaded,
 * and a dlsym that finds nothing allocates its error message: when the
 * handler had interrupted malloc, the heap was corrupted ("corrupted
 * double-linked list", SIGSEGV) or, under ASan, the process hung; 3 runs
 * in 40 of sigprog's sig_profil.  This test does not depend on where a
 * signal lands: the handler is entered with raise(), then by a timer
 * while the program allocates.
 */
#include "check.h"

#include <signal.h>
#include <sys/time.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

/* Calls counted while the handler runs, or while nothing but raise()
   and a computation runs (the sampling signal's handler then too). */
static volatile sig_atomic_t in_handler, counting;
static _Atomic unsigned long in_handler_calls;

static void note(void)
{
	if (in_handler || counting)
		in_handler_calls++;
}

void *malloc(size_t n)
{
	note();
	return __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
	note();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
	note();
	return __libc_realloc(p, n);
}

void free(void *p)
{
	note();
	__libc_free(p);
}

static struct histogram hist;
static volatile sig_atomic_t toggles;

static void toggle(int sig)
{
	(void)sig;
	int saved = errno;
	in_handler = 1;
	if (toggles++ % 2)
		profil_off();
	else
		histogram_start(&hist);
	in_handler = 0;
	errno = saved;
}

int main(void)
{
	hist = histogram_of_text();
	struct sigaction sa = { .sa_handler = toggle };
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGALRM, &sa, NULL) == 0, "sigaction: %s", strerror(errno));

	/* On and off from the handler, 100 times each, with 0.5 ms of
	   computation after each: samples come, and under perf the first
	   one of each session opens the thread's event. */
	counting = 1;
	for (int i = 0; i < 200; i++) {
		raise(SIGALRM);
		double until = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) + 0.0005;
		while (cpu_seconds(CLOCK_THREAD_CPUTIME_ID) < until)
			;
	}
	counting = 0;
	CHECK(in_handler_calls == 0, "%lu allocations in handlers, raised",
	      (unsigned long)in_handler_calls);
	CHECK(stats_now().active == 0, "profiling still on after an even count of toggles");

	/* Then every 2 ms of real time while the program allocates. */
	struct itimerval every = { { 0, 2000 }, { 0, 2000 } };
	CHECK(setitimer(ITIMER_REAL, &every, NULL) == 0, "setitimer: %s", strerror(errno));
	double end = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) + 0.3;
	unsigned long made = 0;
	while (cpu_seconds(CLOCK_THREAD_CPUTIME_ID) < end) {
		void *p[32];
		for (int i = 0; i < 32; i++)
			p[i] = malloc(16 + (size_t)i * 24);
		for (int i = 0; i < 32; i++)
			if (p[i]) {
				memset(p[i], i, 16);
				made++;
			}
		for (int i = 0; i < 32; i++)
			free(p[i]);
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	CHECK(toggles > 200 + 20, "the timer toggled %d times in 0.3 s", toggles - 200);
	CHECK(in_handler_calls == 0, "%lu allocations in the handler, from a timer",
	      (unsigned long)in_handler_calls);
	CHECK(made > 0, "nothing allocated");
	profil_off();
	return check_done("handler_alloc");
}
