/*
 * A thread the program makes with a raw clone(), without pthreads (as a
 * runtime of another language might), is sampled too under the perf
 * backend: its drain thread looks for new threads in /proc/self/task
 * every 100 ms.  The timer backend only sees threads made through
 * pthread_create or there when profiling starts: for it this test only
 * checks that nothing breaks.
 */
#include "check.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>

HOT_WORK(raw)

static atomic_int done;
static double raw_used;

/* Runs on a stack of its own, without a TLS of its own: calls nothing
   of libc's but clock_gettime. */
static int raw_thread(void *unused)
{
	(void)unused;
	raw_used = burn(work_raw, 1.0);
	atomic_store(&done, 1);
	syscall(SYS_futex, &done, FUTEX_WAKE, 1, NULL, NULL, 0);
	return 0;
}

int main(void)
{
	int perf = backend_expected() == PROFIL_BACKEND_PERF;
	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	size_t size = 1 << 20;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD
		    | CLONE_SYSVSEM;
	CHECK(clone(raw_thread, stack + size, flags, NULL) > 0, "clone: %s", strerror(errno));
	while (!atomic_load(&done))
		syscall(SYS_futex, &done, FUTEX_WAIT, 0, NULL, NULL, 0);
	usleep(100000);	/* let it end, and its last records be drained */
	struct profil_stats st = stats_now();
	profil_off();
	uint64_t raw = histogram_sum(&h, HOT_START(raw), HOT_STOP(raw));
	double p = period_seconds();
	printf("raw thread: %.3f s of CPU, %llu samples (%.3f s); backend %d\n", raw_used,
	       (unsigned long long)raw, raw * p, st.backend);
	if (perf)	/* all but the first 100 ms or so */
		CHECK(raw * p >= 0.7 * raw_used, "raw thread: %.3f s counted of %.3f s",
		      raw * p, raw_used);
	CHECK(st.threads_unsampled == 0, "%u threads unsampled", st.threads_unsampled);
	check_stats_add_up(&st);
	munmap(stack, size);
	return check_done("rawclone");
}
