/*
 * crash_memtest - a crash handler that tests memory in place, as redis's
 * does (issue 23): while profiling, the program faults, and its SIGSEGV
 * handler (SA_NODEFER | SA_RESETHAND, like redis's) fills the mapping
 * that holds the thread's own TLS block with one pattern after another,
 * burns CPU for a while with each in place, checks that nothing changed
 * it, and puts the contents back.  Another thread is busy all along, so
 * samples are taken elsewhere meanwhile.
 *
 * Twice: first as the handler is entered, when libprofil's sampling
 * signal must be blocked in the thread (at each delivery the kernel
 * reads the thread's rseq area, in that mapping, and kills the process
 * if a pattern is in it); then with every signal unblocked by the
 * handler, when samples come during the test and must neither write
 * into that memory nor trip over what it holds (one that read errno
 * there died of a second SIGSEGV).  The rseq area itself is left out of
 * the patterns: the kernel reads it when the thread is preempted too,
 * profiled or not.
 */
#include "check.h"

#include <signal.h>
#include <sys/rseq.h>

HOT_WORK(work)

static uintptr_t *region;	/* the mapping with the thread pointer */
static size_t words;
static size_t rseq_lo, rseq_hi;	/* the words of the rseq area in it */
static uintptr_t saved[1 << 17];	/* up to 1 MiB */
static unsigned long loops_per_ms;
static struct histogram hist;

/* The mapping of /proc/self/maps that holds address a. */
static int mapping_of(uintptr_t a, uintptr_t *lo, uintptr_t *hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;
	while (f && !found && fgets(line, sizeof line, f)) {
		unsigned long l, h;
		if (sscanf(line, "%lx-%lx", &l, &h) == 2 && l <= a && a < h) {
			*lo = l;
			*hi = h;
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Nothing here may touch thread-local storage (errno, the stack
   protector's canary) while a pattern is in it. */
#define NO_TLS __attribute__((noinline, no_sanitize("address", "undefined"), \
			      no_stack_protector))

static NO_TLS uintptr_t pattern(int which, size_t i)
{
	switch (which) {
	case 0: return 0;
	case 1: return ~(uintptr_t)0;
	case 2: return (uintptr_t)&region[i];	/* each word its own address */
	default: return (uintptr_t)0x5555555555555555ull ^ (i & 1 ? ~(uintptr_t)0 : 0);
	}
}

/* The errors one pattern met: filled, left in place about ms of CPU,
   checked all along, then the saved contents put back. */
static NO_TLS unsigned long test_one(int which, unsigned ms)
{
	volatile uintptr_t *r = region;
	unsigned long errors = 0;
	for (size_t i = 0; i < words; i++)
		saved[i] = r[i];
	for (size_t i = 0; i < words; i++)
		if (i < rseq_lo || i >= rseq_hi)
			r[i] = pattern(which, i);
	for (unsigned long n = 0; n < ms * loops_per_ms / 64; n++)
		for (size_t i = 0; i < words; i += 64)
			errors += (i < rseq_lo || i >= rseq_hi) && r[i] != pattern(which, i);
	for (size_t i = 0; i < words; i++)
		errors += (i < rseq_lo || i >= rseq_hi) && r[i] != pattern(which, i);
	for (size_t i = 0; i < words; i++)
		r[i] = saved[i];
	return errors;
}

/* How many checks of the region a millisecond of CPU holds. */
static NO_TLS unsigned long checks(unsigned long n)
{
	volatile uintptr_t *r = region;
	unsigned long seen = 0;
	for (unsigned long k = 0; k < n; k++)
		for (size_t i = 0; i < words; i += 64)
			seen += r[i] == 1;
	return seen;
}

static unsigned long calibrate(void)
{
	double t0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
	unsigned long n = 0;
	while (cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - t0 < 0.02) {
		check_sink += checks(64);
		n += 64;
	}
	return n / 20 + 1;
}

static void say(const char *s)
{
	if (write(2, s, strlen(s)) < 0)
		_exit(3);
}

/* A line "Name:\t<hex>" of /proc/thread-self/status, as bits. */
static unsigned long long status_bits(const char *name)
{
	FILE *f = fopen("/proc/thread-self/status", "r");
	char line[256];
	unsigned long long bits = 0;
	size_t n = strlen(name);
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			bits = strtoull(line + n + 1, NULL, 16);
	if (f)
		fclose(f);
	return bits;
}

static unsigned long memtest(void)
{
	unsigned long errors = 0;
	for (int which = 0; which < 4; which++)
		errors += test_one(which, 50);
	return errors;
}

static void on_segv(int sig, siginfo_t *info, void *context)
{
	(void)sig;
	(void)info;
	(void)context;
	/* Caught real-time signals are libprofil's here: the program has
	   none.  Each is blocked while the handler runs. */
	unsigned long long rt = status_bits("SigCgt") & ~((1ull << (SIGRTMIN - 1)) - 1);
	unsigned long long open = rt & ~status_bits("SigBlk");
	unsigned long errors = memtest();
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	errors += memtest();
	/* TLS is the thread's own again. */
	uint64_t counted = histogram_total(&hist);
	char line[200];
	snprintf(line, sizeof line, "memory test of %zu bytes with the thread pointer: %lu errors; "
		 "libprofil's signals %#llx, unblocked in the handler %#llx; %llu samples counted\n",
		 words * sizeof *region, errors, rt, open, (unsigned long long)counted);
	say(line);
	if (errors)
		say("not ok: the memory test found its patterns changed\n");
	/* libprofil takes one; more are an emulator's (qemu-user catches
	   every signal itself, and /proc shows its own mask). */
	int unknown = __builtin_popcountll(rt) > 1, unblocked = !unknown && (!rt || open);
	if (unknown)
		say("not checked: which real-time signal is libprofil's (several are caught)\n");
	if (unblocked)
		say("not ok: no signal of libprofil's, or one not blocked in the program's fault handler\n");
	if (!counted)
		say("not ok: nothing counted before the crash\n");
	_exit(errors || unblocked || !counted ? 1 : 0);
}

int main(void)
{
	uintptr_t lo, hi, tp = (uintptr_t)__builtin_thread_pointer();
	if (!mapping_of(tp, &lo, &hi) || hi - lo > sizeof saved) {
		fprintf(stderr, "crash_memtest: the thread pointer %#lx is in no mapping of "
			"at most %zu bytes\n", (unsigned long)tp, sizeof saved);
		return 1;
	}
	region = (uintptr_t *)lo;
	words = (hi - lo) / sizeof *region;
	if (__rseq_size > 0) {
		uintptr_t at = tp + (uintptr_t)__rseq_offset;
		size_t size = __rseq_size < 32 ? 32 : __rseq_size;
		rseq_lo = (at - lo) / sizeof *region;
		rseq_hi = (at + size - lo + sizeof *region - 1) / sizeof *region;
	}
	loops_per_ms = calibrate();

	struct busy other;
	busy_start(&other, work_work);
	hist = histogram_of_text();
	CHECK(histogram_start(&hist) == 0, "profil: %s", strerror(errno));
	burn_until_counted(&hist, work_work, 20, 3.0);

	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	CHECK(sigaction(SIGSEGV, &sa, NULL) == 0, "sigaction: %s", strerror(errno));
	if (check_failures)
		return check_done("crash_memtest");
	volatile int *bad = (volatile int *)(uintptr_t)8;
	__asm__("" : "+r"(bad));
	*bad = 1;	/* the crash */
	fprintf(stderr, "not ok: no SIGSEGV\n");
	return 1;
}
