/*
 * A program with its own SIGPROF handler and ITIMER_PROF, installed
 * before or after profil(), keeps receiving its signals at its rate, and
 * profil keeps counting.  So does its own POSIX timer (timer_create on
 * the process's CPU clock, SIGRTMIN+1), whatever timers and signal the
 * backend uses.
 */
#include "check.h"

#include <signal.h>
#include <stdatomic.h>
#include <sys/time.h>

HOT_WORK(work)

static atomic_long first_handler, second_handler, posix_ticks;
static timer_t posix_timer;

static void on_posix_timer(int sig)
{
	(void)sig;
	atomic_fetch_add(&posix_ticks, 1);
}

/* The program's POSIX timer: 10 ms of the process's CPU time. */
static void start_posix_timer(void)
{
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGRTMIN + 1;
	signal(SIGRTMIN + 1, on_posix_timer);
	struct itimerspec its = { { 0, 10000000 }, { 0, 10000000 } };
	if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &posix_timer) != 0
	    || timer_settime(posix_timer, 0, &its, NULL) != 0)
		abort();
}

static void on_prof_first(int sig)
{
	(void)sig;
	atomic_fetch_add(&first_handler, 1);
}

static void on_prof_second(int sig, siginfo_t *info, void *context)
{
	(void)sig; (void)info; (void)context;
	atomic_fetch_add(&second_handler, 1);
}

static void set_itimer(int ms)
{
	struct itimerval it = { { 0, ms * 1000 }, { 0, ms * 1000 } };
	setitimer(ITIMER_PROF, &it, NULL);
}

/*
 * ITIMER_PROF at 10 ms: 100 signals a CPU-second on a quiet machine.
 * The kernel checks it at its tick and owes nothing for late expiries,
 * so a loaded machine delivers fewer (none at all, seen on a machine
 * with three times more busy threads than cores), with or without
 * libprofil: the rate is judged against the one the program got before
 * profil started.
 */
static double rate_before = -1;	/* per CPU-second, without libprofil */
static double posix_before = -1;	/* the POSIX timer's */

/*
 * ITIMER_PROF is charged in whole scheduler ticks, and on a loaded
 * virtual machine a tick the host stole part of still counts whole: the
 * rate per CPU-second of the thread's own clock runs up to a third high
 * there.  So the baseline is only checked to be sane, and the rates with
 * libprofil against it: a second source of SIGPROF (glibc's profil
 * shares ITIMER_PROF) would double it, a blocked one stop it.
 */
static int rate_ok(long signals, double seconds)
{
	double expected = seconds / 0.010;
	if (rate_before < 0)	/* the baseline itself */
		return signals <= 2 * expected + 3 && signals + 1 >= 0.25 * expected;
	return signals <= 1.5 * rate_before * seconds + 3
	       && signals + 1 >= 0.25 * rate_before * seconds;
}

/*
 * profil keeps counting: about one sample a period.  Not exactly within
 * a window of the run: on a loaded machine the kernel may deliver a
 * sample owed in one window during the next.
 */
static int counting(uint64_t counts, double seconds)
{
	double expected = seconds / period_seconds();
	return counts >= 0.5 * expected && counts <= 1.5 * expected;
}

int main(void)
{
	/* The program's own rate, without libprofil running. */
	signal(SIGPROF, on_prof_first);
	set_itimer(10);
	start_posix_timer();
	double used = burn(work_work, 0.5);
	long got = atomic_load(&first_handler);
	CHECK(rate_ok(got, used), "%ld SIGPROF in %.2f s CPU without profil", got, used);
	rate_before = got / used;
	long ticks = atomic_load(&posix_ticks);
	posix_before = ticks / used;
	CHECK(ticks + 1 >= 0.25 * used / 0.010 && ticks <= 2 * used / 0.010 + 3,
	      "POSIX timer: %ld signals in %.2f s CPU without profil", ticks, used);

	/* Handler installed before profil. */
	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	long base = atomic_load(&first_handler);
	long posix_base = atomic_load(&posix_ticks);
	used = burn(work_work, 1.0);
	got = atomic_load(&first_handler) - base;
	ticks = atomic_load(&posix_ticks) - posix_base;
	printf("POSIX timer: %ld signals in %.2f s (%.0f a CPU-second without profil)\n",
	       ticks, used, posix_before);
	CHECK(ticks <= 1.5 * posix_before * used + 3 && ticks + 1 >= 0.25 * posix_before * used,
	      "POSIX timer: %ld signals in %.2f s CPU under profil", ticks, used);
	printf("before: %ld SIGPROF in %.2f s (%.0f a CPU-second without profil); %llu counts\n",
	       got, used, rate_before, (unsigned long long)histogram_total(&h));
	CHECK(rate_ok(got, used), "%ld SIGPROF in %.2f s CPU", got, used);
	CHECK(counting(histogram_total(&h), used),
	      "profil counted %llu in %.2f s", (unsigned long long)histogram_total(&h), used);

	/* After profil: a new handler and a new rate. */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_prof_second;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigaction(SIGPROF, &sa, NULL);
	set_itimer(10);
	uint64_t counts_before = histogram_total(&h);
	used = burn(work_work, 1.0);
	got = atomic_load(&second_handler);
	printf("after: %ld SIGPROF in %.2f s; %llu counts\n", got, used,
	       (unsigned long long)(histogram_total(&h) - counts_before));
	CHECK(rate_ok(got, used), "%ld SIGPROF in %.2f s CPU after profil", got, used);
	CHECK(counting(histogram_total(&h) - counts_before, used), "profil stopped counting");

	/* Turning profil off leaves the program's handler and timer alone. */
	profil_off();
	struct sigaction now;
	sigaction(SIGPROF, NULL, &now);
	CHECK(now.sa_sigaction == on_prof_second, "SIGPROF handler changed");
	long before_off = atomic_load(&second_handler);
	used = burn(work_work, 0.5);
	CHECK(rate_ok(atomic_load(&second_handler) - before_off, used),
	      "SIGPROF rate after profil off");
	struct itimerval it;
	getitimer(ITIMER_PROF, &it);
	CHECK(it.it_interval.tv_usec == 10000, "ITIMER_PROF interval changed");
	return check_done("sigprof");
}
