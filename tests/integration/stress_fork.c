/*
 * stress_fork [run] - 1 000 forks while sampling at the highest rate,
 * four at a time: a quarter of the children end with _exit, a quarter
 * with exit after checking that profiling goes on in them, a quarter
 * exec this program again (stress_fork exec-child), which checks that
 * the new image inherited no timer and no descriptor, and a quarter
 * work until they are sampled, then _exit.  Every child's status is
 * checked; the parent leaks nothing and its statistics add up.  Under
 * profil run (stress_fork run [N]: N forks) each process leaves a
 * profile file, checked by stress_run.sh.
 */
#include "stress.h"

#include <signal.h>
#include <sys/wait.h>

HOT_WORK(work)

enum { AT_ONCE = 4 };

static struct histogram hist;

/* Exit statuses of the children, each saying what went wrong. */
enum { OK = 0, NOT_ON = 10, BAD_EXEC, INHERITED_TIMER, INHERITED_FD, BAD_SIGNAL, NOT_SAMPLED };

/*
 * The exec'd image: argv[2] is how many descriptors the parent had
 * before profiling, argv[3] "run" under profil run.  Without profil
 * run nothing of libprofil's may have come through exec; under it, the
 * new image samples itself again.
 */
static int exec_child(char **argv)
{
	int preloaded = argv[3] && strcmp(argv[3], "run") == 0;
	if (!preloaded) {
		switch (stress_inherited(atoi(argv[2]))) {
		case 1: return INHERITED_TIMER;
		case 2: return INHERITED_FD;
		case 3: case 4: return BAD_SIGNAL;
		}
	}
	check_sink += work_work(100000);
	return OK;
}

static int child(int kind, int preloaded, int fds)
{
	switch (kind) {
	case 0:
		burn(work_work, 0.01);
		_exit(OK);
	case 1:
		if (!stats_now().active)
			exit(NOT_ON);
		exit(OK);
	case 2: {
		char n[16];
		snprintf(n, sizeof n, "%d", fds);
		execl("/proc/self/exe", "stress_fork", "exec-child", n,
		      preloaded ? "run" : (char *)NULL, (char *)NULL);
		_exit(BAD_EXEC);
	}
	default:
		/* Work until a sample lands in work(): the child samples
		   itself.  Without profil run, stop (which brings the
		   counters up to date) and look in the child's copy of the
		   buffer; start again if nothing came yet (a loaded
		   machine delivers late).  Under profil run, the child's
		   file shows its samples. */
		if (!preloaded) {
			uint64_t had = histogram_sum(&hist, HOT_START(work), HOT_STOP(work));
			int tries = 0, seen = 0;
			while (!seen && tries++ < 500) {
				burn(work_work, 0.002);
				seen = histogram_sum(&hist, HOT_START(work), HOT_STOP(work)) != had;
				if (!seen && tries % 5 == 0) {	/* bring a batch in */
					profil_off();
					seen = histogram_sum(&hist, HOT_START(work),
							     HOT_STOP(work)) != had;
					if (histogram_start(&hist) != 0)
						_exit(NOT_ON);
				}
			}
			profil_off();
			if (!seen)
				_exit(NOT_SAMPLED);
		} else {
			burn(work_work, 0.002);
		}
		_exit(OK);
	}
}

static void forks(int n, int preloaded, int fds, int *failed)
{
	int running = 0;
	for (int i = 0; i < n || running > 0;) {
		if (i < n && running < AT_ONCE) {
			pid_t pid = fork();
			if (pid == 0)
				child(i % 4, preloaded, fds);
			CHECK(pid > 0, "fork: %s", strerror(errno));
			running += pid > 0;
			i++;
			continue;
		}
		int status;
		pid_t pid = wait(&status);
		if (pid < 0)
			break;
		running--;
		if (!WIFEXITED(status) || WEXITSTATUS(status) != OK) {
			if (++*failed <= 5)
				CHECK(0, "child %d: %s %d", (int)pid,
				      WIFEXITED(status) ? "exit status" : "signal",
				      WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		}
	}
}

int main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "exec-child") == 0)
		return exec_child(argv);
	int preloaded = stress_preloaded(argc, argv);
	int n = STRESS_SIZE(1000), failed = 0;
	if (preloaded && argc > 2)	/* stress_run.sh's size */
		n = atoi(argv[2]);
	stress_baseline();
	struct stress_usage idle = stress_usage_now();
	struct histogram h = hist = stress_start(preloaded);
	int warm = n / 10;
	forks(warm, preloaded, idle.fds, &failed);
	struct stress_usage before = stress_usage_now();
	forks(n - warm, preloaded, idle.fds, &failed);
	stress_burn(&h, work_work);
	struct stress_usage after = stress_usage_now();
	stress_check_usage("while sampling", before, after, 2048, 8192);
	CHECK(failed == 0, "%d of %d children failed", failed, n);
	stress_finish(preloaded, &h, idle, 8192);
	/* Children of kind 2 exec: those of each call to forks(). */
	int execs = (warm + 1) / 4 + (n - warm + 1) / 4;
	printf("%d forks, %d execs\n", n, execs);
	return check_done("stress_fork");
}
