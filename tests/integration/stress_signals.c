/*
 * stress_signals - a program that plays with signals while it is
 * sampled at the highest rate: first its own ITIMER_PROF and SIGPROF
 * handler, then four threads that each, thousands of times, set a random
 * signal mask (the sampling signal included, when it is one), install
 * their own SIGPROF handler and send themselves SIGPROF, install their
 * own SIGSEGV handler and fault into it (back out with siglongjmp), and
 * put back what was there.  Every signal of the program arrives where
 * it should, exactly as often as sent; what it installs and removes is
 * what it finds again; profiling goes on, nothing leaks, and the
 * statistics add up.
 */
#include "stress.h"

#include <setjmp.h>
#include <signal.h>
#include <sys/time.h>

HOT_WORK(work)

enum { THREADS = 4 };

/* Each signal's action is process-wide: one thread changes it at a time. */
static pthread_mutex_t prof_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t segv_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_long prof_caught, segv_caught;
static __thread sigjmp_buf segv_back;
static char *no_access;	/* a page that faults */

static void on_prof(int sig)
{
	(void)sig;
	atomic_fetch_add(&prof_caught, 1);
}

static void on_segv(int sig, siginfo_t *info, void *context)
{
	(void)sig;
	(void)context;
	if (info->si_addr == no_access)
		atomic_fetch_add(&segv_caught, 1);
	siglongjmp(segv_back, 1);
}

/* The kernel adds SA_RESTORER (glibc's return trampoline) to what it
   hands back. */
#define FLAGS(a) ((a)->sa_flags & ~0x04000000)

static int same_action(const struct sigaction *a, const struct sigaction *b)
{
	return FLAGS(a) == FLAGS(b) && ((a->sa_flags & SA_SIGINFO)
		? a->sa_sigaction == b->sa_sigaction : a->sa_handler == b->sa_handler);
}

/* A random mask of every signal that can be blocked. */
static void random_mask(sigset_t *set, unsigned *seed)
{
	sigemptyset(set);
	for (int s = 1; s <= SIGRTMAX; s++)
		if (s != SIGKILL && s != SIGSTOP && rand_r(seed) % 2)
			sigaddset(set, s);
}

struct result {
	double seconds;	/* of CPU to play for */
	long sent_prof, sent_segv, restored_wrong;
};

static void own_sigprof(struct result *r)
{
	pthread_mutex_lock(&prof_lock);
	struct sigaction sa, old, back;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, &old);
	pthread_kill(pthread_self(), SIGPROF);	/* delivered before it returns */
	r->sent_prof++;
	sigaction(SIGPROF, &old, &back);
	r->restored_wrong += !same_action(&back, &sa);
	pthread_mutex_unlock(&prof_lock);
}

static void own_sigsegv(struct result *r)
{
	pthread_mutex_lock(&segv_lock);
	struct sigaction sa, old, back;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(segv_back, 1) == 0) {
		r->sent_segv++;
		*(volatile char *)no_access = 1;
	}
	sigaction(SIGSEGV, &old, &back);
	r->restored_wrong += !same_action(&back, &sa);
	pthread_mutex_unlock(&segv_lock);
}

static void *player(void *p)
{
	struct result *r = p;
	unsigned seed = (unsigned)(uintptr_t)p ^ (unsigned)r->sent_prof;
	double start = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
	for (long i = 0; cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - start < r->seconds; i++) {
		sigset_t set, none;
		random_mask(&set, &seed);
		sigemptyset(&none);
		pthread_sigmask(SIG_SETMASK, &set, NULL);
		check_sink += work_work(2000);
		pthread_sigmask(SIG_SETMASK, &none, NULL);
		check_sink += work_work(2000);
		if (i % 8 == 0)
			own_sigprof(r);
		if (i % 8 == 4)
			own_sigsegv(r);
	}
	return NULL;
}

/* The program's own ITIMER_PROF at 1 kHz for 0.2 s of CPU: its SIGPROF
   handler sees its signals while the profiler samples. */
static void own_itimer(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_prof;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPROF, &sa, &old);
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
	long before = atomic_load(&prof_caught);
	setitimer(ITIMER_PROF, &it, NULL);
	burn(work_work, 0.2);
	setitimer(ITIMER_PROF, &off, NULL);
	sigaction(SIGPROF, &old, NULL);
	long got = atomic_load(&prof_caught) - before;
	printf("own ITIMER_PROF: %ld SIGPROF in 0.2 s of CPU\n", got);
	/* The kernel's tick limits it to 250 Hz or so, and on a loaded
	   machine to a few: the rate is sigprof's test.  Here none would
	   mean the profiler took the program's signals. */
	CHECK(got >= 1, "the program's own SIGPROF handler ran %ld times", got);
	atomic_store(&prof_caught, before);
}

int main(void)
{
	no_access = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	stress_baseline();
	struct stress_usage idle = stress_usage_now();
	struct histogram h = stress_start(0);
	struct sigaction segv_at_start;
	sigaction(SIGSEGV, NULL, &segv_at_start);
	own_itimer();

	struct stress_usage before = { 0 };
	pthread_t t[THREADS];
	struct result r[THREADS];
	memset(r, 0, sizeof r);
	/* A short round to warm up (threads' arenas and stacks), then the
	   long one. */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < THREADS; i++) {
			r[i].seconds = round ? 0.15 : 0.01;
			CHECK(pthread_create(&t[i], NULL, player, &r[i]) == 0, "pthread_create");
		}
		for (int i = 0; i < THREADS; i++)
			pthread_join(t[i], NULL);
		if (round == 0)
			before = stress_usage_now();
	}
	stress_burn(&h, work_work);
	struct stress_usage after = stress_usage_now();
	stress_check_usage("while sampling", before, after, 2048, 8192);

	long prof = 0, segv = 0, wrong = 0;
	for (int i = 0; i < THREADS; i++) {
		prof += r[i].sent_prof;
		segv += r[i].sent_segv;
		wrong += r[i].restored_wrong;
	}
	printf("%ld SIGPROF sent, %ld caught; %ld SIGSEGV, %ld caught\n", prof,
	       atomic_load(&prof_caught), segv, atomic_load(&segv_caught));
	CHECK(prof > 100 && atomic_load(&prof_caught) == prof, "SIGPROF: %ld sent, %ld caught",
	      prof, atomic_load(&prof_caught));
	CHECK(segv > 100 && atomic_load(&segv_caught) == segv, "SIGSEGV: %ld, %ld caught", segv,
	      atomic_load(&segv_caught));
	CHECK(wrong == 0, "%ld times an action put back was not the one installed", wrong);
	struct sigaction segv_now;
	sigaction(SIGSEGV, NULL, &segv_now);
	CHECK(same_action(&segv_now, &segv_at_start), "SIGSEGV's action changed");
	CHECK(stats_now().active, "profiling stopped");

	stress_finish(0, &h, idle, 8192);
	return check_done("stress_signals");
}
