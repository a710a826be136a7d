/*
 * Saturating, atomic, fault-tolerant counter increments: exact sums
 * under concurrency, saturation with the amount added returned, and a
 * counter that is not writable memory answered with -1 instead of a
 * crash, while every other fault still reaches the program.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/runtime/fault.h"
#include "../../src/runtime/satadd.h"

static void test_add16(void **state)
{
	(void)state;
	uint16_t c = 0;
	assert_int_equal(satadd16(&c, 1), 1);
	assert_int_equal(satadd16(&c, 0), 0);
	assert_int_equal(satadd16(&c, 1000), 1000);
	assert_int_equal(c, 1001);
	c = 65530;
	assert_int_equal(satadd16(&c, 10), 5);
	assert_int_equal(c, 65535);
	assert_int_equal(satadd16(&c, 1), 0);
	c = 7;
	assert_int_equal(satadd16(&c, 0xffffffffu), 65528);
	assert_int_equal(c, 65535);
}

static void test_add32(void **state)
{
	(void)state;
	uint32_t c = 0;
	assert_int_equal(satadd32(&c, 70000), 70000);
	assert_int_equal(c, 70000);
	c = 0xfffffff0u;
	assert_int_equal(satadd32(&c, 0x20), 0xf);
	assert_int_equal(c, 0xffffffffu);
	assert_int_equal(satadd32(&c, 5), 0);
	c = 1;
	assert_int_equal(satadd32(&c, 0xffffffffu), 0xfffffffeu);
}

struct job {
	void *counter;
	int wide;
	uint32_t weight;
	int times;
	int64_t added;
};

static void *hammer(void *p)
{
	struct job *job = p;
	for (int i = 0; i < job->times; i++)
		job->added += job->wide ? satadd32(job->counter, job->weight)
					: satadd16(job->counter, job->weight);
	return NULL;
}

static int64_t run_four(void *counter, int wide, uint32_t weight, int times)
{
	pthread_t t[4];
	struct job jobs[4];
	int64_t added = 0;
	for (int i = 0; i < 4; i++) {
		jobs[i] = (struct job){ counter, wide, weight, times, 0 };
		pthread_create(&t[i], NULL, hammer, &jobs[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		added += jobs[i].added;
	}
	return added;
}

static void test_concurrent(void **state)
{
	(void)state;
	uint16_t c16 = 0;
	assert_int_equal(run_four(&c16, 0, 1, 10000), 40000);
	assert_int_equal(c16, 40000);
	uint32_t c32 = 0;
	assert_int_equal(run_four(&c32, 1, 1, 1000000), 4000000);
	assert_int_equal(c32, 4000000);
	/* Past the top: the amounts added still sum to what the counter got. */
	c16 = 0;
	assert_int_equal(run_four(&c16, 0, 3, 10000), 65535);
	assert_int_equal(c16, 65535);
}

static void *map(int prot)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	mprotect(p, 4096, prot);
	return p;
}

static void test_fault_recovered(void **state)
{
	(void)state;
	assert_true(satadd_recovers());
	assert_int_equal(fault_install(), 0);
	assert_int_equal(fault_install(), 0);	/* idempotent */
	void *ro = map(PROT_READ), *none = map(PROT_NONE), *gone = map(PROT_READ | PROT_WRITE);
	munmap(gone, 4096);
	assert_int_equal(satadd16(ro, 1), -1);
	assert_int_equal(satadd16(none, 1), -1);
	assert_int_equal(satadd16(gone, 1), -1);
	assert_int_equal(satadd32(ro, 1), -1);
	assert_int_equal(satadd32((uint32_t *)none + 5, 1), -1);
	assert_int_equal(*(uint16_t *)ro, 0);	/* unchanged */
	/* Writable again: counting works again. */
	mprotect(ro, 4096, PROT_READ | PROT_WRITE);
	assert_int_equal(satadd16(ro, 2), 2);
	munmap(ro, 4096);
	munmap(none, 4096);
}

/* Run fn in a child; return its wait status. */
static int in_child(void (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	return status;
}

/* A page the program cannot touch: its faults are the program's own. */
static volatile int *volatile forbidden;

/*
 * These run in children forked before the parent installs anything, so
 * that fault_install() meets the program's handler in each.  cmocka's
 * own handler (and a sanitizer's) is taken away first: the child plays a
 * program that has none.
 */
static void bad_store(void)
{
	signal(SIGSEGV, SIG_DFL);
	fault_install();
	*forbidden = 1;
}

static void on_segv_exit42(int sig)
{
	(void)sig;
	_exit(42);
}

static void own_handler_first(void)
{
	signal(SIGSEGV, on_segv_exit42);
	fault_install();
	*forbidden = 1;
}

static void test_program_faults_pass(void **state)
{
	(void)state;
	/* The default action: death by SIGSEGV, as without libprofil. */
	forbidden = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(forbidden != MAP_FAILED);
	int status = in_child(bad_store);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSEGV);
	status = in_child(own_handler_first);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 42);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_program_faults_pass),	/* first: see above */
		cmocka_unit_test(test_add16),
		cmocka_unit_test(test_add32),
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_fault_recovered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
