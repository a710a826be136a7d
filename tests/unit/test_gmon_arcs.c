/*
 * The arc tables behind mcount (gmon_arcs.c), driven through the C fast
 * and slow paths the way the assembly stubs drive them: threads counting
 * the same and different arcs at once lose nothing, a signal handler
 * that counts into the table it interrupted loses nothing, tables of
 * ended threads are reused with their counts kept, and a fork child
 * starts from zero.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/runtime/gmon/gmon_arcs.h"

#define NFROM 61
#define NSELF 7
#define ARCS (NFROM * NSELF)

static void call(uintptr_t from, uintptr_t self)
{
	if (gmon_arc_hit(from, self))
		gmon_arc_new(from, self);
}

static uintptr_t from_of(unsigned i) { return 0x401000 + (i % NFROM) * 13; }
static uintptr_t self_of(unsigned i) { return 0x402000 + (i % NSELF) * 64; }

struct sums {
	uint64_t total;
	uint64_t arcs[ARCS];
	uint64_t signal_arc;
};

static void add(void *arg, uintptr_t from, uintptr_t self, uint64_t count)
{
	struct sums *s = arg;
	s->total += count;
	if (self == 0x900000) {
		s->signal_arc += count;
		return;
	}
	uint64_t f = (from - 0x401000) / 13, k = (self - 0x402000) / 64;
	if (from >= 0x401000 && self >= 0x402000 && f < NFROM && k < NSELF)
		s->arcs[k * NFROM + f] += count;
}

static struct sums sums_now(void)
{
	struct sums s;
	memset(&s, 0, sizeof s);
	gmon_arcs_each(add, &s);
	return s;
}

/* A tenth under ThreadSanitizer, which makes each call ten times dearer
   and each signal a hundred times (it holds a signal back until the
   thread reaches one of its own checkpoints, so few land inside mcount
   there anyway): fewer calls, signals and a slower alarm. */
#if defined(__SANITIZE_THREAD__)
#define CALLS 30000
#define SIGNALS 20
#define ALARM_US 2000
#else
#define CALLS 300000
#define SIGNALS 2000
#define ALARM_US 50
#endif

static void *caller(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < CALLS; i++)
		call(from_of(i), self_of(i / NFROM));
	gmon_arcs_thread_end();
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	struct sums before = sums_now();
	gmon_arcs_on(1 << 20);
	/* 8 threads at once, then 8 more that take over the first ones'
	   tables: the sums go on from where they were. */
	for (int round = 0; round < 2; round++) {
		pthread_t t[8];
		for (int i = 0; i < 8; i++)
			assert_int_equal(pthread_create(&t[i], NULL, caller, NULL), 0);
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
	}
	struct sums after = sums_now();
	assert_int_equal(after.total - before.total, 16ull * CALLS);
	/* Each thread made the same calls: every arc has 16 times its share. */
	uint64_t per[ARCS] = { 0 };
	for (unsigned i = 0; i < CALLS; i++)
		per[((i / NFROM) % NSELF) * NFROM + i % NFROM]++;
	for (unsigned a = 0; a < ARCS; a++)
		assert_int_equal(after.arcs[a] - before.arcs[a], 16 * per[a]);
	assert_int_equal(gmon_arcs_lost(), 0);
}

/* A handler that counts, now and then into a new arc, while the thread
   it interrupts counts into the same table. */
static atomic_ulong handled;

static void on_alarm(int sig)
{
	(void)sig;
	unsigned long n = atomic_fetch_add(&handled, 1);
	call(n % 3 ? 0x401000 : 0x401000 + (n % 500) * 4096, 0x900000);
}

static void test_signal_reentry(void **state)
{
	(void)state;
	gmon_arcs_on(1 << 20);
	struct sums before = sums_now();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { { 0, ALARM_US }, { 0, ALARM_US } };
	setitimer(ITIMER_REAL, &it, NULL);
	uint64_t made = 0;
	for (int rep = 0; rep < 20 || atomic_load(&handled) < SIGNALS; rep++) {
		/* New arcs as well as old ones, so that handlers land in
		   insertions too. */
		for (unsigned i = 0; i < 50000; i++)
			call(0x500000 + (i % 4001) * 8 + rep * 0x100000, self_of(i));
		made += 50000;
	}
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);
	struct sums after = sums_now();
	assert_int_equal(after.signal_arc - before.signal_arc, atomic_load(&handled));
	assert_int_equal(after.total - before.total, made + atomic_load(&handled));
	assert_int_equal(gmon_arcs_lost(), 0);
}

static void test_off(void **state)
{
	(void)state;
	gmon_arcs_off();
	struct sums before = sums_now();
	for (unsigned i = 0; i < 1000; i++)
		call(from_of(i), self_of(i));
	assert_int_equal(sums_now().total, before.total);
	gmon_arcs_on(1 << 20);
}

static void test_fork_child_zero(void **state)
{
	(void)state;
	gmon_arcs_on(1 << 20);
	call(0x401000, 0x402000);
	assert_true(sums_now().total > 0);
	pid_t pid = fork();
	if (pid == 0) {
		gmon_arcs_after_fork();
		int ok = sums_now().total == 0;
		call(0x401000, 0x402000);
		call(0x401000, 0x402000);
		ok &= sums_now().total == 2;
		_exit(ok ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_signal_reentry),
		cmocka_unit_test(test_off),
		cmocka_unit_test(test_fork_child_zero),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
