/*
 * libprofil's sample signal stays out of the program's way: a program
 * that already handles the real-time signal libprofil would take first
 * keeps its handler and its signals, and libprofil picks another.  The
 * program's signal mask is not changed, and turning profiling off
 * leaves no handler of libprofil's behind.  sigaction shows the program
 * its own actions only.
 */
#include "check.h"

#include <signal.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

HOT_WORK(work)

static atomic_int mine;

static void on_mine(int sig)
{
	(void)sig;
	atomic_fetch_add(&mine, 1);
}

/* Real-time signals that have a handler, as sigaction tells the program. */
static int handled_rt_signals(void)
{
	int n = 0;
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
		struct sigaction sa;
		sigaction(sig, NULL, &sa);
		n += (sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL);
	}
	return n;
}

/* The same in the kernel, which libprofil's handler is in. */
static int kernel_rt_signals(void)
{
	int n = 0;
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) {
		struct { void *handler; unsigned long flags; void *restorer; unsigned long mask; } k;
		syscall(SYS_rt_sigaction, sig, NULL, &k, sizeof k.mask);
		n += k.handler != SIG_DFL;
	}
	return n;
}

int main(void)
{
	int taken_first = SIGRTMAX - 4;
	signal(taken_first, on_mine);
	sigset_t before, after;
	sigemptyset(&before);
	sigemptyset(&after);
	sigprocmask(SIG_SETMASK, NULL, &before);

	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	/* The timer backend takes one signal; perf needs none. */
	/* The program's own, and libprofil's: the timer backend's samples,
	   or the perf backend's timers for system time. */
	int want = 2;
	CHECK(kernel_rt_signals() == want, "%d real-time signals handled, want %d",
	      kernel_rt_signals(), want);
	/* libprofil's is not the program's business (sigaction is
	   interposed): it sees its own alone. */
	CHECK(handled_rt_signals() == 1, "the program sees %d real-time signals handled, want 1",
	      handled_rt_signals());
	uint64_t counted = burn_until_counted(&h, work_work, 200, 3.0);
	raise(taken_first);
	raise(taken_first);
	CHECK(atomic_load(&mine) == 2, "program's signal arrived %d times of 2",
	      atomic_load(&mine));
	struct sigaction sa;
	sigaction(taken_first, NULL, &sa);
	CHECK(sa.sa_handler == on_mine, "program's handler replaced");
	CHECK(counted >= 200, "profil counted %llu", (unsigned long long)counted);
	sigprocmask(SIG_SETMASK, NULL, &after);
	for (int sig = 1; sig < NSIG; sig++)
		CHECK(sigismember(&before, sig) == sigismember(&after, sig),
		      "signal %d: blocked %d before, %d after", sig,
		      sigismember(&before, sig), sigismember(&after, sig));

	profil_off();
	CHECK(kernel_rt_signals() == 1, "%d real-time signals handled after off, want 1",
	      kernel_rt_signals());
	histogram_free(&h);
	return check_done("signals");
}
