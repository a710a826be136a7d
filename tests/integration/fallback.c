/*
 * Where perf events are refused, auto falls back to the timer backend,
 * and asking for perf explicitly fails with the kernel's errno: here a
 * seccomp filter (as in container defaults) makes perf_event_open fail
 * with EPERM, ENOSYS or EACCES.  And where a thread cannot have an
 * event (no descriptor left), that thread alone gets a timer, counted
 * in threads_fallback, and no thread goes unsampled.
 *
 * Each case runs in a child of its own, so that the filter and the
 * limits stay there.
 */
#include "check.h"
#include "../cli/refuse_perf.h"

#include <sys/resource.h>
#include <sys/wait.h>

HOT_WORK(work)

/* Run fn in a child; its exit status. */
static int in_child(int (*fn)(int), int arg)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int refused(int err)
{
	if (refuse_perf(err) != 0)
		return 10;
	struct histogram h = histogram_of_text();
	/* auto: the timer backend, and it samples. */
	if (profil_set_backend(PROFIL_BACKEND_AUTO) != 0 || histogram_start(&h) != 0)
		return 11;
	if (stats_now().backend != PROFIL_BACKEND_TIMER)
		return 12;
	if (burn_until_counted(&h, work_work, 50, 3.0) < 50)
		return 13;
	if (stats_now().flags & PROFIL_STATS_USER_ONLY)
		return 14;
	profil_off();
	/* perf asked for: the kernel's answer. */
	if (profil_set_backend(PROFIL_BACKEND_PERF) != 0)
		return 15;
	errno = 0;
	if (histogram_start(&h) != -1 || errno != err)
		return 16;
	if (stats_now().active)
		return 17;
	return 0;
}

enum { THREADS = 24 };

static pthread_barrier_t all_up;

static void *worker(void *unused)
{
	(void)unused;
	pthread_barrier_wait(&all_up);	/* every thread alive at once */
	burn(work_work, 0.05);
	pthread_barrier_wait(&all_up);
	return NULL;
}

static int few_descriptors(int unused)
{
	(void)unused;
	struct histogram h = histogram_of_text();
	if (profil_set_backend(PROFIL_BACKEND_AUTO) != 0 || histogram_start(&h) != 0)
		return 20;
	if (stats_now().backend != PROFIL_BACKEND_PERF)
		return 21;
	/* Room for a couple of events beyond what is open now. */
	int highest = dup(0);
	close(highest);
	struct rlimit lim = { (rlim_t)highest + 2, (rlim_t)highest + 2 };
	if (setrlimit(RLIMIT_NOFILE, &lim) != 0)
		return 22;
	pthread_barrier_init(&all_up, NULL, THREADS + 1);
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 23;
	pthread_barrier_wait(&all_up);
	pthread_barrier_wait(&all_up);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	profil_off();
	struct profil_stats st = stats_now();
	uint64_t in_work = histogram_sum(&h, HOT_START(work), HOT_STOP(work));
	fprintf(stderr, "threads %u, fell back %u, unsampled %u, samples in work %llu\n",
	       st.threads, st.threads_fallback, st.threads_unsampled,
	       (unsigned long long)in_work);
	CHECK(st.threads >= THREADS + 1, "%u threads sampled", st.threads);
	CHECK(st.threads_fallback >= THREADS - 4, "%u threads fell back of %d",
	      st.threads_fallback, THREADS);
	CHECK(st.threads_unsampled == 0, "%u threads unsampled", st.threads_unsampled);
	/* 24 x 50 ms at 1 kHz: 1 200 samples; the timers are sampling. */
	CHECK(in_work >= 600, "%llu samples in the workers", (unsigned long long)in_work);
	check_stats_add_up(&st);
	return check_failures ? 24 : 0;
}

int main(void)
{
	if (!perf_allowed()) {
		printf("perf events not allowed here: nothing to fall back from\n");
		return 0;
	}
	static const int errs[] = { EPERM, ENOSYS, EACCES };
	for (size_t i = 0; i < sizeof errs / sizeof errs[0]; i++) {
		int status = in_child(refused, errs[i]);
		CHECK(status == 0, "perf_event_open refused with %s: child step %d failed",
		      strerror(errs[i]), status);
	}
	int status = in_child(few_descriptors, 0);
	CHECK(status == 0, "few descriptors: child step %d failed", status);
	return check_done("fallback");
}
