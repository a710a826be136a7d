/*
 * check.h - what the integration tests share.
 *
 * Each test is a real program that profiles itself with libprofil and
 * exits 0 when everything it checks holds, 1 otherwise, printing one line
 * per failed check.  Functions whose samples a test counts live in
 * sections of their own (HOT), so that their address range is known
 * exactly from the linker's __start_/__stop_ symbols, without a symbol
 * table.
 *
 * Statistical checks take their bounds from the sampling error: with n
 * independent observations of a fraction p, the standard error is
 * sqrt(p(1-p)/n); a bound of 6 standard errors fails by chance about
 * once in 500 million runs.
 */
#ifndef PROFIL_TEST_CHECK_H
#define PROFIL_TEST_CHECK_H

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "profil.h"
#include "../../src/common/bins.h"

static int check_failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			check_failures++;				\
			fprintf(stderr, "not ok: %s:%d: %s: ", __FILE__, \
				__LINE__, #cond);			\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
		}							\
	} while (0)

static inline int check_done(const char *name)
{
	if (check_failures)
		fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
	return check_failures ? 1 : 0;
}

/* A function in a section of its own, whose range HOT_START/HOT_STOP give;
   aligned, so that no 2-byte counter straddles two of them.  No clone of
   it elsewhere (gcc's noclone; clang has no such attribute). */
#ifdef __clang__
#define HOT_NOCLONE
#else
#define HOT_NOCLONE noclone,
#endif
#define HOT(name) __attribute__((noinline, HOT_NOCLONE used, aligned(16), section("hot_" #name)))
#define HOT_DECLARE(name) extern char __start_hot_##name[], __stop_hot_##name[]
#define HOT_START(name) ((uintptr_t)__start_hot_##name)
#define HOT_STOP(name) ((uintptr_t)__stop_hot_##name)

/* The program's text, which a histogram with scale 0x10000 covers. */
extern char __executable_start[], etext[];

struct histogram {
	unsigned short *buf;
	size_t bufsiz;
	uintptr_t offset;
	unsigned scale;
};

/*
 * One 16-bit counter per 2 bytes of the program's text, in pages of its
 * own (so that a test can unmap or protect them).
 */
static inline struct histogram histogram_of_text(void)
{
	struct histogram h;
	h.offset = (uintptr_t)__executable_start;
	h.scale = 0x10000;
	size_t n = ((uintptr_t)etext - h.offset) / 2 + 1;
	h.bufsiz = n * sizeof(unsigned short);
	h.buf = mmap(NULL, h.bufsiz, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (h.buf == MAP_FAILED)
		abort();
	return h;
}

static inline void histogram_free(struct histogram *h)
{
	munmap(h->buf, h->bufsiz);
}

static inline int histogram_start(const struct histogram *h)
{
	return profil(h->buf, h->bufsiz, h->offset, h->scale);
}

/* Sum of the counters for the pcs in [lo, hi). */
static inline uint64_t histogram_sum(const struct histogram *h, uintptr_t lo,
				     uintptr_t hi)
{
	uint64_t first, last, sum = 0, n = h->bufsiz / 2;
	if (hi <= lo || !bins_index(lo, h->offset, h->scale, n, &first))
		return 0;
	if (!bins_index(hi - 1, h->offset, h->scale, n, &last))
		last = n - 1;
	for (uint64_t i = first; i <= last; i++)
		sum += __atomic_load_n(&h->buf[i], __ATOMIC_RELAXED);
	return sum;
}

static inline uint64_t histogram_total(const struct histogram *h)
{
	return histogram_sum(h, h->offset, UINTPTR_MAX);
}

static inline double cpu_seconds(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline struct profil_stats stats_now(void)
{
	struct profil_stats st;
	if (profil_get_stats(&st, sizeof st) != 0)
		abort();
	return st;
}

/* The statistics add up, as SPEC section 2 says they must. */
static inline void check_stats_add_up(const struct profil_stats *st)
{
	CHECK(st->taken == st->counted + st->outside + st->dropped,
	      "taken %llu != counted %llu + outside %llu + dropped %llu",
	      (unsigned long long)st->taken, (unsigned long long)st->counted,
	      (unsigned long long)st->outside, (unsigned long long)st->dropped);
	CHECK(st->dropped == st->saturated + st->lost,
	      "dropped %llu != saturated %llu + lost %llu",
	      (unsigned long long)st->dropped,
	      (unsigned long long)st->saturated, (unsigned long long)st->lost);
}

/*
 * Is the fraction seen within the sampling error of the one expected,
 * given n independent observations?  slack absorbs what is not sampling
 * error (code outside the measured functions).
 */
static inline int within_error(double seen, double expected, double n,
			       double slack)
{
	double p = expected < 0.01 ? 0.01 : expected > 0.99 ? 0.99 : expected;
	double se = sqrt(p * (1 - p) / (n > 1 ? n : 1));
	return fabs(seen - expected) <= 6 * se + slack;
}

/* Burn CPU in a loop the compiler cannot remove.  Threads share the
   sink: an atomic, so that ThreadSanitizer sees no race in the tests
   themselves (an atomic add costs nothing beside the work). */
static _Atomic uint64_t check_sink;
static inline uint64_t spin_step(uint64_t x)
{
	return x * 6364136223846793005u + 1442695040888963407u;
}

#endif

/*
 * The work the tests measure: n steps of an LCG in a function of its own.
 * It reads and writes a volatile so that the compiler can neither treat
 * it as a pure function nor hoist calls to it out of a loop.
 */
#define HOT_WORK(name)							\
	HOT_DECLARE(name);						\
	HOT(name) uint64_t work_##name(uint64_t n)			\
	{								\
		uint64_t x = n ^ check_sink;				\
		for (uint64_t i = 0; i < n; i++)			\
			x = spin_step(x);				\
		check_sink = x;						\
		return x;						\
	}

/* Call fn in slices until the calling thread has used seconds of CPU. */
static inline double burn(uint64_t (*fn)(uint64_t), double seconds)
{
	double start = cpu_seconds(CLOCK_THREAD_CPUTIME_ID), now;
	do {
		check_sink += fn(200000);
		now = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
	} while (now - start < seconds);
	return now - start;
}

/*
 * Burn in fn until the histogram has gained want counts, or for at most
 * seconds of CPU; return the counts gained.  A check that counting goes
 * on waits for counts rather than for a deadline: on a loaded machine
 * the kernel can deliver a CPU-timer signal hundreds of milliseconds of
 * CPU time late.
 */
static inline uint64_t burn_until_counted(const struct histogram *h,
					  uint64_t (*fn)(uint64_t),
					  uint64_t want, double seconds)
{
	uint64_t start = histogram_total(h);
	double used = 0;
	while (histogram_total(h) - start < want && used < seconds)
		used += burn(fn, 0.02);
	return histogram_total(h) - start;
}

/* A thread that calls fn in a loop until busy_stop(). */
struct busy {
	pthread_t thread;
	uint64_t (*fn)(uint64_t);
	atomic_int stop;
};

static inline void *busy_loop(void *p)
{
	struct busy *b = p;
	while (!atomic_load(&b->stop))
		check_sink += b->fn(100000);
	return NULL;
}

static inline void busy_start(struct busy *b, uint64_t (*fn)(uint64_t))
{
	b->fn = fn;
	atomic_store(&b->stop, 0);
	pthread_create(&b->thread, NULL, busy_loop, b);
}

static inline void busy_stop(struct busy *b)
{
	atomic_store(&b->stop, 1);
	pthread_join(b->thread, NULL);
}

/*
 * The backend the library should pick: the one PROFIL_BACKEND names
 * (tests/run.sh runs each program under each), or under auto perf
 * where the kernel lets this process open a user-only task-clock event.
 */
static inline int perf_allowed(void)
{
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof attr);
	attr.size = sizeof attr;
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.disabled = 1;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static inline int backend_expected(void)
{
	const char *name = getenv("PROFIL_BACKEND");
	if (name && strcmp(name, "timer") == 0)
		return PROFIL_BACKEND_TIMER;
	if (name && strcmp(name, "perf") == 0)
		return PROFIL_BACKEND_PERF;
	return perf_allowed() ? PROFIL_BACKEND_PERF : PROFIL_BACKEND_TIMER;
}

/*
 * CPU seconds used so far by the perf backend's drain thread, named
 * profil-drain, which is not sampled.  It is gone (SPEC section 2: no
 * thread of ours), so this is 0 unless it comes back.
 */
static inline double helper_cpu_seconds(void)
{
	double sum = 0;
	DIR *dir = opendir("/proc/self/task");
	struct dirent *d;
	while (dir && (d = readdir(dir)) != NULL) {
		char path[300], comm[64] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", d->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof comm, f))
			comm[0] = '\0';
		fclose(f);
		if (strcmp(comm, "profil-drain\n") != 0)
			continue;
		pid_t tid = (pid_t)atoi(d->d_name);
		struct timespec ts;
		if (clock_gettime((clockid_t)((~(unsigned)tid << 3) | 6u), &ts) == 0)
			sum += ts.tv_sec + ts.tv_nsec / 1e9;
	}
	if (dir)
		closedir(dir);
	return sum;
}

/*
 * Threads of the process: the program's (*mine, the sanitizers' helper
 * threads included) and libprofil's own (*helpers, named profil-*).
 */
static inline void threads_now(int *mine, int *helpers)
{
	*mine = *helpers = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], comm[32] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f) {
			if (!fgets(comm, sizeof comm, f))
				comm[0] = '\0';
			fclose(f);
		}
		if (strncmp(comm, "profil-", 7) == 0)
			++*helpers;
		else
			++*mine;
	}
	if (d)
		closedir(d);
}

/* The process's POSIX timers (lines "ID:" of /proc/self/timers). */
static inline int count_timers(void)
{
	FILE *f = fopen("/proc/self/timers", "r");
	if (!f)
		return -1;
	char line[256];
	int n = 0;
	while (fgets(line, sizeof line, f))
		n += strncmp(line, "ID:", 3) == 0;
	fclose(f);
	return n;
}

/* The mappings of /proc/self/maps whose line names what. */
static inline int maps_naming(const char *what)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int n = 0;
	while (f && fgets(line, sizeof line, f))
		n += strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return n;
}

/* The perf backend's rings: shared mappings of anon_inode:[perf_event]. */
static inline int perf_rings_mapped(void)
{
	return maps_naming("anon_inode:[perf_event]");
}

/* The sampling period in force, in seconds. */
static inline double period_seconds(void)
{
	return 1.0 / stats_now().hz;
}

/*
 * For a test that runs a program under `profil run`: the command built
 * beside the test (PROFIL_TEST_BUILD, as tests/run.sh sets it), as an
 * absolute path in out.
 */
static inline void check_profil_command(char *out, size_t size)
{
	const char *build = getenv("PROFIL_TEST_BUILD");
	char rel[1024];
	snprintf(rel, sizeof rel, "%s/bin/profil", build ? build : "build");
	char *real = realpath(rel, NULL);	/* the program may run elsewhere */
	snprintf(out, size, "%s", real ? real : rel);
	free(real);
}

/*
 * A test built with AddressSanitizer preloads its runtime first in the
 * programs profil run starts (it must come before libprofil): the one
 * this test is linked with, found in its own maps.
 */
static inline void check_sanitizer_preload(void)
{
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[4096];
	while (maps && fgets(line, sizeof line, maps)) {
		char *path = strchr(line, '/');
		if (path && strstr(path, "libasan.so")) {
			path[strcspn(path, "\n")] = '\0';
			setenv("LD_PRELOAD", path, 1);
			setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
			break;
		}
	}
	if (maps)
		fclose(maps);
}

/*
 * profil(NULL, 0, 0, 0).  glibc's <unistd.h> declares the buffer nonnull
 * (its profil has no NULL case); calling through a pointer keeps the
 * compiler and UBSan from holding our profil to that.
 */
static int (*volatile check_profil)(unsigned short *, size_t, size_t, unsigned) = profil;
static inline int profil_off(void)
{
	return check_profil(NULL, 0, 0, 0);
}
