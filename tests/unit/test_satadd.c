/*
 * Saturating, atomic, fault-tolerant counter increments (satadd.h) and
 * the fault handler that makes them fault-tolerant (fault.h): exact sums
 * under concurrency, saturation with the amount added returned, -1
 * instead of a crash for a counter that is not writable memory, and every
 * other fault still reaching the program as if libprofil were not there.
 *
 * cmocka installs its own SIGSEGV/SIGBUS handlers around every test and
 * puts back what it found afterwards, which throws libprofil's handler
 * away at the end of each test.  fault_install() is idempotent (it does
 * nothing the second time), so faults_recovered() installs it once and
 * puts the same handler back in later tests.
 *
 * The cases that fork a child to watch it die run first, while this
 * process has never called fault_install(): a child inherits the
 * "installed" flag, and its fault_install() would then install nothing.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/runtime/sinks/fault.h"
#include "../../src/runtime/sinks/satadd.h"

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

/* The faults below are the point: keep the sanitizers' checks off them. */
#define NO_SANITIZE __attribute__((no_sanitize("address"))) __attribute__((no_sanitize("undefined")))

static long page;

/* SIGSEGV and SIGBUS as the process had them before cmocka ran. */
static struct sigaction startup_segv, startup_bus;

/* ---- installing the handler ---------------------------------------- */

static int installed_here;
static struct sigaction ours_segv;

/* The kernel's layout of an action. */
struct kaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

static void faults_recovered(void)
{
	if (!installed_here) {
		assert_true(satadd_recovers());
		assert_int_equal(fault_install(), 0);
		assert_int_equal(fault_install(), 0);	/* idempotent */
		/* The kernel's action is ours; sigaction, interposed, tells
		   the program its own (cmocka's, which it sets per test). */
		struct kaction segv, bus;
		assert_int_equal(syscall(SYS_rt_sigaction, SIGSEGV, NULL, &segv, 8), 0);
		assert_int_equal(syscall(SYS_rt_sigaction, SIGBUS, NULL, &bus, 8), 0);
		assert_true(segv.flags & SA_SIGINFO);
		assert_true(bus.flags & SA_SIGINFO);
		assert_int_equal(sigaction(SIGSEGV, NULL, &ours_segv), 0);
		assert_false(ours_segv.sa_flags & SA_SIGINFO);
		installed_here = 1;
	}
}

static void *map_page(int prot)
{
	void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 0, (size_t)page);
	assert_int_equal(mprotect(p, (size_t)page, prot), 0);
	return p;
}

/* A shared page of a file with nothing in it: touching it is SIGBUS. */
static void *map_past_eof(void)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fileno(f), 0);
	assert_true(p != MAP_FAILED);
	fclose(f);
	return p;
}

/* ---- the program's own faults: in children --------------------------- */

static volatile int *volatile null_pointer;

NO_SANITIZE static void store_through_null(void)
{
	*null_pointer = 1;
}

NO_SANITIZE static void store_to(volatile void *p)
{
	*(volatile int *)p = 1;
}

/*
 * Run fn in a child with SIGSEGV and SIGBUS as they were when the
 * process started (cmocka's handlers would longjmp into the test runner
 * in the child); return its wait status, and its standard error in err.
 */
static int in_child(void (*fn)(void), char *err, size_t errsize)
{
	assert_false(installed_here);	/* see the top of the file */
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	fflush(NULL);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		sigaction(SIGSEGV, &startup_segv, NULL);
		sigaction(SIGBUS, &startup_bus, NULL);
		alarm(20);
		fn();
		_exit(0);
	}
	close(fds[1]);
	size_t n = 0;
	ssize_t r;
	while ((r = read(fds[0], err + n, errsize - 1 - n)) > 0)
		n += (size_t)r;
	err[n] = '\0';
	close(fds[0]);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

static void expect_death_by(int status, int sig, const char *err)
{
	if (!WIFSIGNALED(status) || WTERMSIG(status) != sig)
		fail_msg("child: wanted death by signal %d, got status %#x; its stderr: %s",
			 sig, status, err);
}

static void expect_exit(int status, int code, const char *err)
{
	if (!WIFEXITED(status) || WEXITSTATUS(status) != code)
		fail_msg("child: wanted exit %d, got status %#x; its stderr: %s",
			 code, status, err);
}

/* A program without a handler of its own. */
static void default_null(void)
{
	signal(SIGSEGV, SIG_DFL);
	if (fault_install() != 0)
		_exit(10);
	/* libprofil's own faults are still recovered in this process... */
	void *ro = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || satadd16(ro, 1) != -1)
		_exit(11);
	/* ...but the program's own is the program's. */
	store_through_null();
	_exit(12);
}

static void default_prot_none(void)
{
	signal(SIGSEGV, SIG_DFL);
	void *none = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none == MAP_FAILED || fault_install() != 0)
		_exit(10);
	store_to(none);
	_exit(12);
}

static void default_bus(void)
{
	signal(SIGBUS, SIG_DFL);
	FILE *f = tmpfile();
	void *p = f ? mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fileno(f), 0) : MAP_FAILED;
	if (p == MAP_FAILED || fault_install() != 0)
		_exit(10);
	if (satadd32(p, 1) != -1)	/* ours, by SIGBUS: recovered */
		_exit(11);
	store_to(p);
	_exit(12);
}

static void test_program_fault_kills(void **state)
{
	(void)state;
	char err[4096];
	int status = in_child(default_null, err, sizeof err);
	expect_death_by(status, SIGSEGV, err);
	status = in_child(default_prot_none, err, sizeof err);
	expect_death_by(status, SIGSEGV, err);
	status = in_child(default_bus, err, sizeof err);
	expect_death_by(status, SIGBUS, err);
}

/*
 * The handler the process started with: SIG_DFL normally, ASan's own
 * under ASan (which reports the fault and exits with its exit code).
 */
static void startup_null(void)
{
	if (fault_install() != 0)
		_exit(10);
	store_through_null();
	_exit(12);
}

static void test_program_fault_reaches_startup_handler(void **state)
{
	(void)state;
	char err[8192];
	int status = in_child(startup_null, err, sizeof err);
	if (UNDER_ASAN) {
		/* ASan had SIGSEGV first: it must see the fault at address 0. */
		assert_true(startup_segv.sa_handler != SIG_DFL);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) != 0
			    && WEXITSTATUS(status) != 10 && WEXITSTATUS(status) != 12);
		if (!strstr(err, "AddressSanitizer: SEGV on unknown address"))
			fail_msg("ASan did not report the fault: %s", err);
		assert_non_null(strstr(err, "0x000000000000"));
	} else {
		assert_true(startup_segv.sa_handler == SIG_DFL);
		expect_death_by(status, SIGSEGV, err);
	}
}

static void on_segv_exit42(int sig)
{
	_exit(sig == SIGSEGV ? 42 : 40);
}

static void own_handler_first(void)
{
	signal(SIGSEGV, on_segv_exit42);
	if (fault_install() != 0)
		_exit(10);
	void *ro = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || satadd16(ro, 1) != -1)	/* not the program's */
		_exit(11);
	store_through_null();
	_exit(12);
}

static void *volatile expected_address;

static void on_segv_siginfo(int sig, siginfo_t *info, void *context)
{
	int ok = sig == SIGSEGV && info && info->si_signo == SIGSEGV
		 && info->si_addr == expected_address && info->si_code == SEGV_ACCERR
		 && context != NULL;
	_exit(ok ? 43 : 44);
}

static void own_siginfo_handler_first(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv_siginfo;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	void *none = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none == MAP_FAILED || fault_install() != 0)
		_exit(10);
	expected_address = (char *)none + 8;
	store_to((char *)none + 8);
	_exit(12);
}

static void on_bus_exit45(int sig)
{
	_exit(sig == SIGBUS ? 45 : 40);
}

static void own_bus_handler_first(void)
{
	signal(SIGBUS, on_bus_exit45);
	FILE *f = tmpfile();
	void *p = f ? mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fileno(f), 0) : MAP_FAILED;
	if (p == MAP_FAILED || fault_install() != 0)
		_exit(10);
	if (satadd16(p, 1) != -1)
		_exit(11);
	store_to(p);
	_exit(12);
}

/* A handler the program installs after ours: our faults never reach it,
   its own do. */
static void own_handler_after(void)
{
	if (fault_install() != 0)
		_exit(10);
	signal(SIGSEGV, on_segv_exit42);
	signal(SIGBUS, on_bus_exit45);
	void *ro = mmap(NULL, (size_t)page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ro == MAP_FAILED || satadd16(ro, 1) != -1)
		_exit(11);
	FILE *f = tmpfile();
	void *p = f ? mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED,
			   fileno(f), 0) : MAP_FAILED;
	if (p == MAP_FAILED || satadd32(p, 1) != -1)
		_exit(13);
	store_through_null();
	_exit(12);
}

/* kill -SEGV: no faulting instruction; it does what it would have done. */
static void sent_segv(void)
{
	if (fault_install() != 0)
		_exit(10);
	kill(getpid(), SIGSEGV);
	_exit(12);
}

static void sent_bus_handled(void)
{
	if (fault_install() != 0)
		_exit(10);
	signal(SIGBUS, on_bus_exit45);
	kill(getpid(), SIGBUS);
	_exit(12);
}

static void test_own_handler_still_called(void **state)
{
	(void)state;
	char err[4096];
	expect_exit(in_child(own_handler_first, err, sizeof err), 42, err);
	expect_exit(in_child(own_siginfo_handler_first, err, sizeof err), 43, err);
	expect_exit(in_child(own_bus_handler_first, err, sizeof err), 45, err);
	expect_exit(in_child(own_handler_after, err, sizeof err), 42, err);
	expect_exit(in_child(sent_bus_handled, err, sizeof err), 45, err);
	if (!UNDER_ASAN)	/* ASan's handler reports it and exits */
		expect_death_by(in_child(sent_segv, err, sizeof err), SIGSEGV, err);
}

/* ---- arithmetic ------------------------------------------------------- */

static void test_add16(void **state)
{
	(void)state;
	/* Neighbours on both sides must never be touched. */
	uint16_t c[3] = { 0xaaaa, 0, 0x5555 };
	assert_int_equal(satadd16(&c[1], 1), 1);
	assert_int_equal(c[1], 1);
	assert_int_equal(satadd16(&c[1], 0), 0);
	assert_int_equal(c[1], 1);
	assert_int_equal(satadd16(&c[1], 1000), 1000);
	assert_int_equal(c[1], 1001);
	c[1] = 65530;
	assert_int_equal(satadd16(&c[1], 10), 5);
	assert_int_equal(c[1], 65535);
	assert_int_equal(satadd16(&c[1], 1), 0);
	assert_int_equal(satadd16(&c[1], 0), 0);
	assert_int_equal(c[1], 65535);
	c[1] = 0;
	assert_int_equal(satadd16(&c[1], 65535), 65535);
	assert_int_equal(c[1], 65535);
	c[1] = 0;
	assert_int_equal(satadd16(&c[1], 65536), 65535);
	assert_int_equal(c[1], 65535);
	c[1] = 7;
	assert_int_equal(satadd16(&c[1], 0xffffffffu), 65528);
	assert_int_equal(c[1], 65535);
	c[1] = 0;
	assert_int_equal(satadd16(&c[1], 0xffffffffu), 65535);
	assert_int_equal(c[1], 65535);
	c[1] = 65534;
	assert_int_equal(satadd16(&c[1], 0x80000000u), 1);
	assert_int_equal(c[0], 0xaaaa);
	assert_int_equal(c[2], 0x5555);
}

static void test_add32(void **state)
{
	(void)state;
	uint32_t c[3] = { 0xaaaaaaaau, 0, 0x55555555u };
	assert_int_equal(satadd32(&c[1], 70000), 70000);
	assert_int_equal(c[1], 70000);
	assert_int_equal(satadd32(&c[1], 0), 0);
	assert_int_equal(c[1], 70000);
	c[1] = 0xfffffff0u;
	assert_int_equal(satadd32(&c[1], 0x20), 0xf);
	assert_int_equal(c[1], 0xffffffffu);
	assert_int_equal(satadd32(&c[1], 5), 0);
	assert_int_equal(satadd32(&c[1], 0xffffffffu), 0);
	assert_int_equal(c[1], 0xffffffffu);
	/* The whole range added is returned as a positive 64-bit amount,
	   never confused with the -1 of a fault. */
	c[1] = 0;
	int64_t added = satadd32(&c[1], 0xffffffffu);
	assert_true(added == 0xffffffffLL);
	assert_int_equal(c[1], 0xffffffffu);
	c[1] = 1;
	added = satadd32(&c[1], 0xffffffffu);
	assert_true(added == 0xfffffffeLL);
	c[1] = 0x7fffffffu;
	added = satadd32(&c[1], 0x80000000u);
	assert_true(added == 0x80000000LL);
	assert_int_equal(c[1], 0xffffffffu);
	assert_int_equal(c[0], 0xaaaaaaaau);
	assert_int_equal(c[2], 0x55555555u);
}

/* ---- concurrency ------------------------------------------------------- */

struct job {
	void *counter;
	int wide;
	uint32_t weight;
	int times;
	pthread_barrier_t *start;
	int64_t added;
	int faults;
};

static void *hammer(void *p)
{
	struct job *job = p;
	pthread_barrier_wait(job->start);
	for (int i = 0; i < job->times; i++) {
		int64_t r = job->wide ? satadd32(job->counter, job->weight)
				      : satadd16(job->counter, job->weight);
		if (r < 0)
			job->faults++;
		else
			job->added += r;
	}
	return NULL;
}

enum { THREADS = 4 };

/* THREADS threads add at once; returns the sum of what they were told
   was added, and the number of faults in *faults. */
static int64_t run_threads(void *counter, int wide, const uint32_t weight[THREADS],
			   int times, int *faults)
{
	pthread_t t[THREADS];
	struct job jobs[THREADS];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (struct job){ counter, wide, weight[i], times, &start, 0, 0 };
		assert_int_equal(pthread_create(&t[i], NULL, hammer, &jobs[i]), 0);
	}
	int64_t added = 0;
	*faults = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		added += jobs[i].added;
		*faults += jobs[i].faults;
	}
	pthread_barrier_destroy(&start);
	return added;
}

static const uint32_t ones[THREADS] = { 1, 1, 1, 1 };

static void test_concurrent16(void **state)
{
	(void)state;
	uint16_t c[3] = { 0x1234, 0, 0x4321 };
	int faults;
	assert_int_equal(run_threads(&c[1], 0, ones, 10000, &faults), 40000);
	assert_int_equal(faults, 0);
	assert_int_equal(c[1], 40000);
	assert_int_equal(c[0], 0x1234);
	assert_int_equal(c[2], 0x4321);
}

static void test_concurrent32(void **state)
{
	(void)state;
	uint32_t c[3] = { 0x12345678, 0, 0x87654321 };
	int faults;
	assert_int_equal(run_threads(&c[1], 1, ones, 1000000, &faults), 4000000);
	assert_int_equal(faults, 0);
	assert_int_equal(c[1], 4000000);
	assert_int_equal(c[0], 0x12345678);
	assert_int_equal(c[2], 0x87654321);
}

/* Past the top: the counter stops there, and the amounts the threads
   were told add up to exactly what it got. */
static void test_concurrent_saturation(void **state)
{
	(void)state;
	static const uint32_t mixed[THREADS] = { 1, 2, 3, 7 };
	int faults;
	uint16_t c16 = 0;
	assert_int_equal(run_threads(&c16, 0, mixed, 10000, &faults), 65535);
	assert_int_equal(faults, 0);
	assert_int_equal(c16, 65535);
	c16 = 60000;
	assert_int_equal(run_threads(&c16, 0, ones, 10000, &faults), 5535);
	assert_int_equal(c16, 65535);

	uint32_t c32 = 0xffffffffu - 1000000;
	assert_int_equal(run_threads(&c32, 1, mixed, 1000000, &faults), 1000000);
	assert_int_equal(faults, 0);
	assert_int_equal(c32, 0xffffffffu);
	static const uint32_t big[THREADS] = { 0x10000000, 0x10000001, 0x0fffffff, 0x7 };
	c32 = 0;
	assert_int_equal(run_threads(&c32, 1, big, 1000, &faults), 0xffffffffLL);
	assert_int_equal(c32, 0xffffffffu);
}

/* ---- faults ------------------------------------------------------------ */

static void test_fault_recovered(void **state)
{
	(void)state;
	faults_recovered();
	uint16_t *ro = map_page(PROT_READ | PROT_WRITE);
	ro[0] = 1234;
	ro[page / 2 - 1] = 4321;
	assert_int_equal(mprotect(ro, (size_t)page, PROT_READ), 0);
	void *none = map_page(PROT_NONE), *gone = map_page(PROT_READ | PROT_WRITE);
	assert_int_equal(munmap(gone, (size_t)page), 0);

	assert_int_equal(satadd16(ro, 1), -1);
	assert_int_equal(satadd16(&ro[page / 2 - 1], 1), -1);	/* the last counter */
	assert_int_equal(satadd16(ro, 0), -1);			/* even adding nothing */
	assert_int_equal(satadd32((uint32_t *)ro + 3, 1), -1);
	assert_int_equal(satadd16(none, 1), -1);
	assert_int_equal(satadd16((uint16_t *)none + 100, 0xffffffffu), -1);
	assert_int_equal(satadd32(none, 1), -1);
	assert_int_equal(satadd16(gone, 1), -1);
	assert_int_equal(satadd32(gone, 1), -1);
	assert_int_equal(satadd16(NULL, 1), -1);
	assert_int_equal(satadd32(NULL, 1), -1);
	/* Nothing was written. */
	assert_int_equal(ro[0], 1234);
	assert_int_equal(ro[page / 2 - 1], 4321);
	assert_int_equal(((uint32_t *)ro)[3], 0);

	/* SIGBUS: a shared mapping past the end of its file. */
	void *bus = map_past_eof();
	assert_int_equal(satadd16(bus, 1), -1);
	assert_int_equal(satadd32(bus, 1), -1);

	/* Writable again: counting works again, from where it was. */
	assert_int_equal(mprotect(ro, (size_t)page, PROT_READ | PROT_WRITE), 0);
	assert_int_equal(satadd16(ro, 2), 2);
	assert_int_equal(ro[0], 1236);
	assert_int_equal(munmap(ro, (size_t)page), 0);
	assert_int_equal(munmap(none, (size_t)page), 0);
	assert_int_equal(munmap(bus, (size_t)page), 0);
}

/* Faults in four threads at once, each recovered in its own thread. */
static void test_fault_concurrent(void **state)
{
	(void)state;
	faults_recovered();
	void *none = map_page(PROT_NONE);
	int faults;
	assert_int_equal(run_threads(none, 0, ones, 20000, &faults), 0);
	assert_int_equal(faults, THREADS * 20000);
	assert_int_equal(run_threads(none, 1, ones, 20000, &faults), 0);
	assert_int_equal(faults, THREADS * 20000);
	munmap(none, (size_t)page);
}

/* A sample handler is where satadd runs for real: fault inside one,
   with every other signal blocked as the timer backend blocks them. */
static void *volatile handler_counter;
static volatile int64_t handler_result16, handler_result32;

static void on_usr1(int sig)
{
	(void)sig;
	handler_result16 = satadd16(handler_counter, 1);
	handler_result32 = satadd32(handler_counter, 1);
}

static void test_fault_in_signal_handler(void **state)
{
	(void)state;
	faults_recovered();
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigfillset(&sa.sa_mask);
	sigdelset(&sa.sa_mask, SIGSEGV);
	sigdelset(&sa.sa_mask, SIGBUS);
	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);

	handler_counter = map_page(PROT_READ);
	handler_result16 = handler_result32 = 99;
	raise(SIGUSR1);
	assert_int_equal(handler_result16, -1);
	assert_int_equal(handler_result32, -1);
	/* And a writable counter from the same handler. */
	assert_int_equal(mprotect(handler_counter, (size_t)page, PROT_READ | PROT_WRITE), 0);
	raise(SIGUSR1);
	assert_int_equal(handler_result16, 1);
	assert_int_equal(handler_result32, 1);
	assert_int_equal(*(uint32_t *)handler_counter, 2);	/* 1 + 1 in its low half */
	munmap(handler_counter, (size_t)page);
	sigaction(SIGUSR1, &old, NULL);
}

/* The accesses of the thread table: load, compare-and-swap, add. */
static void test_table_accesses(void **state)
{
	(void)state;
	faults_recovered();
	uint64_t w[2] = { 5, 7 }, v = 0;
	assert_int_equal(satload64(&w[0], &v), 0);
	assert_int_equal(v, 5);
	assert_int_equal(satcas64(&w[0], 4, 9), 0);	/* not equal: not stored */
	assert_int_equal(w[0], 5);
	assert_int_equal(satcas64(&w[0], 5, 9), 1);
	assert_int_equal(w[0], 9);
	assert_int_equal(satxadd64(&w[1], UINT64_C(1) << 40), 0);
	assert_int_equal(w[1], (UINT64_C(1) << 40) + 7);
	assert_int_equal(w[0], 9);
	uint64_t *ro = map_page(PROT_READ), *none = map_page(PROT_NONE), *bus = map_past_eof();
	v = 3;
	assert_int_equal(satload64(ro, &v), 0);		/* reading a read-only page is fine */
	assert_int_equal(v, 0);
	v = 3;
	assert_int_equal(satload64(none, &v), -1);
	assert_int_equal(v, 3);				/* not written on a fault */
	assert_int_equal(satload64(bus, &v), -1);
	assert_int_equal(satcas64(ro, 0, 1), -1);
	assert_int_equal(satcas64(none, 0, 1), -1);
	assert_int_equal(satcas64(bus, 0, 1), -1);
	assert_int_equal(satxadd64(ro, 1), -1);
	assert_int_equal(satxadd64(none, 1), -1);
	assert_int_equal(satxadd64(bus, 1), -1);
	assert_int_equal(ro[0], 0);
	assert_int_equal(munmap(ro, (size_t)page), 0);
	assert_int_equal(munmap(none, (size_t)page), 0);
	assert_int_equal(munmap(bus, (size_t)page), 0);
}

static void test_fixup_table(void **state)
{
	(void)state;
	assert_true(satadd_recovers());
	/* Only satadd's own instructions are resumed elsewhere. */
	assert_int_equal(satadd_fixup(0), 0);
	assert_int_equal(satadd_fixup((uintptr_t)test_fixup_table), 0);
	assert_int_equal(satadd_fixup((uintptr_t)store_to), 0);
	assert_int_equal(satadd_fixup(UINTPTR_MAX), 0);
}

int main(void)
{
	page = sysconf(_SC_PAGESIZE);
	sigaction(SIGSEGV, NULL, &startup_segv);
	sigaction(SIGBUS, NULL, &startup_bus);
	const struct CMUnitTest tests[] = {
		/* First, before this process calls fault_install(): see the top. */
		cmocka_unit_test(test_program_fault_kills),
		cmocka_unit_test(test_program_fault_reaches_startup_handler),
		cmocka_unit_test(test_own_handler_still_called),
		cmocka_unit_test(test_add16),
		cmocka_unit_test(test_add32),
		cmocka_unit_test(test_concurrent16),
		cmocka_unit_test(test_concurrent32),
		cmocka_unit_test(test_concurrent_saturation),
		cmocka_unit_test(test_fault_recovered),
		cmocka_unit_test(test_fault_concurrent),
		cmocka_unit_test(test_fault_in_signal_handler),
		cmocka_unit_test(test_table_accesses),
		cmocka_unit_test(test_fixup_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
