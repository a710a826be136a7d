/*
 * Sampling does not make blocking calls fail with EINTR (SPEC section 2;
 * issue 6, item 5).  Two threads pass a byte back and forth through two
 * pipes while every thread is sampled, under the timer backend at
 * 100 000 Hz (the timers fire at every kernel tick, often while a thread
 * is in the kernel; the perf backend's only signals are its 100 Hz
 * system-time timers at any rate, and at 100 kHz its events make each
 * switch between the threads 30 times dearer), and the main
 * thread waits for each answer with another kind of blocking call: read
 * (restarted after a handler with SA_RESTART), and poll, select and
 * nanosleep, which signal(7) says are never restarted.  At least 100 000
 * blocking calls in all, and until samples have landed often enough for
 * the test to mean something.  Then the same again as a program that
 * profil run profiles (preloaded: it does not call profil() itself).
 *
 * Every EINTR is counted, per call.  Under the perf backend no signal
 * samples the program, so there must be none.  Under the timer backend
 * the count is reported: on kernels that expire CPU-time timers at the
 * return to user mode (POSIX_CPU_TIMERS_TASK_WORK, x86 since 5.11) the
 * signal is never raised inside a system call and it is zero; elsewhere
 * a sample that falls inside poll, select or nanosleep can end it early.
 * At most one call in a thousand may fail so there.
 */
#include "check.h"

#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/wait.h>

enum { MIN_CALLS = 100000, MIN_SAMPLES = 50, MAX_CALLS = 800000 };

static int ping[2], pong[2];
enum kind { READ, POLL, SELECT, SLEEP, KINDS };
static const char *const names[KINDS] = { "read", "poll", "select", "nanosleep" };
static _Atomic long eintr_count[KINDS], calls[KINDS];

static void interrupted(enum kind k)
{
	atomic_fetch_add(&eintr_count[k], 1);
}

static char get(int fd)
{
	char c;
	ssize_t r;
	atomic_fetch_add(&calls[READ], 1);
	while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
		interrupted(READ);
	if (r != 1)
		abort();
	return c;
}

static void put(int fd, char c)
{
	ssize_t w;
	while ((w = write(fd, &c, 1)) < 0 && errno == EINTR)
		interrupted(READ);
	if (w != 1)
		abort();
}

/* Block until fd is readable, with the call of kind k. */
static void wait_readable(int fd, enum kind k)
{
	atomic_fetch_add(&calls[k], 1);
	if (k == POLL) {
		struct pollfd p = { fd, POLLIN, 0 };
		while (poll(&p, 1, -1) < 0)
			if (errno == EINTR)
				interrupted(POLL);
			else
				abort();
	} else {
		fd_set set;
		do {
			FD_ZERO(&set);
			FD_SET(fd, &set);
		} while (select(fd + 1, &set, NULL, NULL, NULL) < 0 && errno == EINTR
			 && (interrupted(SELECT), 1));
	}
}

/* A short sleep: 1 us, with no timer slack to stretch it. */
static void nap(void)
{
	struct timespec ts = { 0, 1000 };
	atomic_fetch_add(&calls[SLEEP], 1);
	if (nanosleep(&ts, NULL) != 0 && errno == EINTR)
		interrupted(SLEEP);
}

/* Echo every byte back until a 'q'. */
static void *echo(void *unused)
{
	(void)unused;
	char c;
	while ((c = get(ping[0])) != 'q')
		put(pong[1], c);
	return NULL;
}

static long total(_Atomic long *a)
{
	long n = 0;
	for (int k = 0; k < KINDS; k++)
		n += atomic_load(&a[k]);
	return n;
}

/* This program again, under profil run; its exit status. */
static int under_profil_run(void)
{
	char profil_cmd[2048], self[2048], dir[] = "/tmp/eintr.XXXXXX", out[64];
	check_profil_command(profil_cmd, sizeof profil_cmd);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	self[n > 0 ? n : 0] = '\0';
	if (!mkdtemp(dir))
		return 2;
	snprintf(out, sizeof out, "%s/run.prof", dir);
	char *argv[] = { profil_cmd, "run", "-o", out, "-F",
			 backend_expected() == PROFIL_BACKEND_TIMER ? "100000" : "1000",
			 "--", self, NULL };
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		check_sanitizer_preload();
		if (chdir(dir) != 0)	/* its .profil-last goes there too */
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	char rm[128];
	snprintf(rm, sizeof rm, "rm -rf '%s'", dir);	/* the run's directory, its pointer */
	if (system(rm) != 0)
		return 2;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void)
{
	if (pipe(ping) || pipe(pong))
		abort();
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	int preloaded = getenv("PROFIL_RUN") != NULL;	/* under profil run */
	struct histogram h = { 0 };
	if (!preloaded) {
		if (backend_expected() == PROFIL_BACKEND_TIMER)
			profil_set_hz(100000);
		h = histogram_of_text();
		profil_reset_stats();
		CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	}
	pthread_t t;
	pthread_create(&t, NULL, echo, NULL);
	for (long round = 0; total(calls) < MAX_CALLS; round++) {
		enum kind k = (enum kind)(round % KINDS);
		if (k == SLEEP) {
			nap();
		} else {
			put(ping[1], 'x');
			if (k != READ)
				wait_readable(pong[0], k);
			get(pong[0]);
		}
		if (round % 10000 == 0 && total(calls) >= MIN_CALLS
		    && stats_now().observed >= MIN_SAMPLES)
			break;
	}
	put(ping[1], 'q');
	pthread_join(t, NULL);
	struct profil_stats st = stats_now();
	if (!preloaded)
		profil_off();
	long n = total(calls), failed = total(eintr_count);
	printf("%s%s backend: %ld blocking calls, %ld EINTR (", st.backend == PROFIL_BACKEND_PERF
	       ? "perf" : "timer", preloaded ? " (profil run)" : "", n, failed);
	for (int k = 0; k < KINDS; k++)
		printf("%s%s %ld of %ld", k ? ", " : "", names[k], atomic_load(&eintr_count[k]),
		       atomic_load(&calls[k]));
	printf("); %llu samples observed\n", (unsigned long long)st.observed);
	CHECK(n >= MIN_CALLS, "only %ld blocking calls", n);
	CHECK(atomic_load(&eintr_count[READ]) == 0, "%ld reads or writes failed with EINTR "
	      "(SA_RESTART restarts them)", atomic_load(&eintr_count[READ]));
	if (st.backend == PROFIL_BACKEND_PERF)
		CHECK(failed == 0, "%ld calls failed with EINTR under the perf backend", failed);
	else
		CHECK(failed * 1000 <= n, "%ld of %ld calls failed with EINTR", failed, n);
	CHECK(st.observed >= MIN_SAMPLES, "only %llu samples in %ld calls",
	      (unsigned long long)st.observed, n);
	check_stats_add_up(&st);
	if (preloaded)
		return check_done("eintr under profil run");
	histogram_free(&h);
	int status = under_profil_run();
	CHECK(status == 0, "under profil run: status %d", status);
	return check_done("eintr");
}
