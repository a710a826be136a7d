/*
 * After fork, profiling goes on in both processes, each counting into
 * its own copy of the buffer: the child's work shows in the child's
 * buffer and not in the parent's, and the other way round.  The parent
 * has a second thread busy at the moment of the fork.
 */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

HOT_WORK(before)
HOT_WORK(parent)
HOT_WORK(child)
HOT_WORK(busy)

/*
 * Counts for seconds of CPU.  Loosely: on a loaded machine the kernel can
 * deliver a sample late, into the next function, or not at all (lost);
 * what matters here is that each process counts its own work, once.
 */
static int about(uint64_t counts, double seconds)
{
	double p = period_seconds();
	return fabs(counts * p - seconds) <= 0.25 * seconds + 5 * p + stats_now().lost * p;
}

int main(void)
{
	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	struct busy background;
	busy_start(&background, work_busy);
	double before_used = burn(work_before, 0.2);

	pid_t pid = fork();
	if (pid == 0) {
		uint64_t parent_at_fork = histogram_sum(&h, HOT_START(parent), HOT_STOP(parent));
		double used = burn(work_child, 0.5);
		struct profil_stats st = stats_now();
		CHECK(st.active == 1, "profiling off in the child");
		profil_off();	/* the samples still owed are taken here */
		uint64_t child = histogram_sum(&h, HOT_START(child), HOT_STOP(child));
		uint64_t parent = histogram_sum(&h, HOT_START(parent), HOT_STOP(parent));
		CHECK(about(child, used), "child: %llu counts for %.3f s",
		      (unsigned long long)child, used);
		CHECK(parent == parent_at_fork, "parent's work counted in the child");
		st = stats_now();
		check_stats_add_up(&st);
		_exit(check_done("fork (child)"));
	}
	CHECK(pid > 0, "fork: %s", strerror(errno));
	busy_stop(&background);	/* two busy processes from here: one core each */
	double used = burn(work_parent, 0.5);
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child status %#x", status);
	struct profil_stats st = stats_now();
	CHECK(st.active == 1, "profiling off in the parent");
	profil_off();	/* the samples still owed are taken here */
	uint64_t child = histogram_sum(&h, HOT_START(child), HOT_STOP(child));
	uint64_t parent = histogram_sum(&h, HOT_START(parent), HOT_STOP(parent));
	CHECK(child == 0, "child's work counted in the parent: %llu",
	      (unsigned long long)child);
	/* The main thread's work before and after the fork together: a
	   sample of the one the kernel delivers late lands in the other. */
	uint64_t before = histogram_sum(&h, HOT_START(before), HOT_STOP(before));
	CHECK(about(before + parent, before_used + used), "parent: %llu counts for %.3f s",
	      (unsigned long long)(before + parent), before_used + used);
	CHECK(histogram_sum(&h, HOT_START(busy), HOT_STOP(busy)) > 0,
	      "background thread not sampled");
	st = stats_now();
	check_stats_add_up(&st);
	return check_done("fork");
}
