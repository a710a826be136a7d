/*
 * The perf backend opens a thread's event and ring at the thread's
 * first sample, not when it is armed (issue 15): a ring costs ~0.1 ms
 * to set up, more than a short process or thread runs.  Until then the
 * thread's CPU-time timer samples it, so its work counts all the same.
 *
 * A ring shows in /proc/self/maps as a shared mapping of
 * anon_inode:[perf_event].  A thread that parks as it starts has none;
 * one that has run has one; a thread's ring goes with the thread; a fork
 * child gets its own.  Under the timer backend there are none.
 */
#include "check.h"

#include <sys/wait.h>

HOT_WORK(main_work)
HOT_WORK(thread_work)
HOT_WORK(child_work)

static int about(uint64_t counts, double seconds)
{
	double p = period_seconds();
	return fabs(counts * p - seconds) <= 0.25 * seconds + 5 * p + stats_now().lost * p;
}

struct parked {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int state;	/* 0 starting, 1 parked, 2 told to work, 3 done */
	double used;
};

static void wait_for(struct parked *w, int state)
{
	pthread_mutex_lock(&w->lock);
	while (w->state != state)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
}

static void tell(struct parked *w, int state)
{
	pthread_mutex_lock(&w->lock);
	w->state = state;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

static void *worker(void *p)
{
	struct parked *w = p;
	tell(w, 1);
	wait_for(w, 2);
	w->used = burn(work_thread_work, 0.2);
	tell(w, 3);
	wait_for(w, 4);
	return NULL;
}

int main(void)
{
	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	int perf = stats_now().backend == PROFIL_BACKEND_PERF;
	int one = perf ? 1 : 0;

	/* The main thread has run: it has its ring. */
	double main_used = burn(work_main_work, 0.3);
	CHECK(perf_rings_mapped() == one, "main thread after 0.3 s: %d rings",
	      perf_rings_mapped());

	/* A thread parked at its start has none; working, it gets one. */
	struct parked w = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	pthread_t t;
	CHECK(pthread_create(&t, NULL, worker, &w) == 0, "pthread_create");
	wait_for(&w, 1);
	CHECK(perf_rings_mapped() == one, "a parked thread has a ring: %d rings",
	      perf_rings_mapped());
	tell(&w, 2);
	wait_for(&w, 3);
	CHECK(perf_rings_mapped() == 2 * one, "a thread after 0.2 s: %d rings, want %d",
	      perf_rings_mapped(), 2 * one);
	tell(&w, 4);
	pthread_join(t, NULL);
	CHECK(perf_rings_mapped() == one, "an ended thread's ring stayed: %d rings",
	      perf_rings_mapped());

	pid_t pid = fork();
	if (pid == 0) {
		/* The parent's rings are not the child's (not copied). */
		double used = burn(work_child_work, 0.2);
		CHECK(perf_rings_mapped() == one, "fork child after 0.2 s: %d rings",
		      perf_rings_mapped());
		profil_off();
		uint64_t child = histogram_sum(&h, HOT_START(child_work), HOT_STOP(child_work));
		CHECK(about(child, used), "child: %llu counts for %.3f s",
		      (unsigned long long)child, used);
		_exit(check_done("perf_late (child)"));
	}
	CHECK(pid > 0, "fork: %s", strerror(errno));
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);

	struct profil_stats st = stats_now();
	CHECK(st.threads_fallback == 0, "%u threads fell back to a timer", st.threads_fallback);
	profil_off();
	CHECK(perf_rings_mapped() == 0, "rings left after profiling stopped: %d", perf_rings_mapped());
	uint64_t m = histogram_sum(&h, HOT_START(main_work), HOT_STOP(main_work));
	uint64_t th = histogram_sum(&h, HOT_START(thread_work), HOT_STOP(thread_work));
	CHECK(about(m, main_used), "main: %llu counts for %.3f s", (unsigned long long)m, main_used);
	CHECK(about(th, w.used), "thread: %llu counts for %.3f s", (unsigned long long)th, w.used);
	st = stats_now();
	check_stats_add_up(&st);
	return check_done("perf_late");
}
