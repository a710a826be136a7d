/*
 * work.c MODE [SECONDS] - a -pg program for the gmon tests.
 *
 * It calls counted() CALLS times and burns SECONDS of CPU in spin()
 * (0.3 by default), then ends as MODE says.  It prints "pid=N" (and
 * "child=N" after a fork) on standard output, and on standard error the
 * figures the tests compare with gprof's: "cpu=S counted=N outside=N
 * lost=N hz=N".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/gmon.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profil.h"

#define CALLS 1000

static volatile unsigned long sink;

__attribute__((noinline)) void counted(void)
{
	sink++;
}

static double cpu(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Burn seconds of this thread's CPU time. */
__attribute__((noinline)) void spin(double seconds)
{
	double start = cpu(CLOCK_THREAD_CPUTIME_ID);
	unsigned long x = sink;
	while (cpu(CLOCK_THREAD_CPUTIME_ID) - start < seconds)
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005u + 1442695040888963407u;
	sink = x;
}

__attribute__((noinline)) void hidden(void)
{
	sink++;
}

__attribute__((noinline)) void visible(void)
{
	sink++;
}

static void calls(void (*fn)(void), int n)
{
	for (int i = 0; i < n; i++)
		fn();
}

static void figures(void)
{
	struct profil_stats st;
	profil_get_stats(&st, sizeof st);
	fprintf(stderr, "cpu=%.4f counted=%llu outside=%llu lost=%llu hz=%u\n",
		cpu(CLOCK_PROCESS_CPUTIME_ID), (unsigned long long)st.counted,
		(unsigned long long)st.outside, (unsigned long long)st.lost, st.hz);
}

static void *spinner(void *arg)
{
	spin(*(double *)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	double seconds = argc > 2 ? atof(argv[2]) : 0.3;
	printf("pid=%d\n", (int)getpid());
	fflush(stdout);

	if (strcmp(mode, "chdir") == 0 && chdir(argv[3]) != 0)
		return 9;
	if (strcmp(mode, "control") == 0) {
		moncontrol(0);
		moncontrol(0);
		calls(hidden, CALLS);
		spin(seconds);
		moncontrol(1);
		moncontrol(1);
		calls(visible, CALLS);
		spin(seconds);
		return 0;
	}
	if (strcmp(mode, "threads") == 0) {	/* two threads burn, for the time test */
		pthread_t t;
		pthread_create(&t, NULL, spinner, &seconds);
		spin(seconds);
		pthread_join(t, NULL);
		calls(counted, CALLS);
		figures();
		return 0;
	}
	if (strcmp(mode, "fork") == 0) {
		calls(counted, 50);
		/* Work before the fork, so that libprofil's snapshot thread
		   has started: under AddressSanitizer, whose allocator is not
		   fork-safe, a fork while a new thread frees its start-up
		   memory leaves the child's allocator locked. */
		spin(seconds);
		pid_t child = fork();
		if (child == 0) {
			calls(counted, 100);
			spin(seconds);
			exit(0);
		}
		printf("child=%d\n", (int)child);
		fflush(stdout);
		calls(counted, 200);
		spin(seconds);
		int status;
		waitpid(child, &status, 0);
		return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
	}

	calls(counted, CALLS);
	spin(seconds);
	if (strcmp(mode, "exit") == 0 || strcmp(mode, "chdir") == 0)
		exit(4);
	if (strcmp(mode, "return") == 0)
		return 0;
	if (strcmp(mode, "_exit") == 0)
		_exit(3);
	if (strcmp(mode, "quick_exit") == 0)
		quick_exit(5);
	if (strcmp(mode, "term") == 0)
		raise(SIGTERM);
	if (strcmp(mode, "segv") == 0)
		*(volatile int *)(uintptr_t)sink = 0;	/* sink is small: unmapped */
	if (strcmp(mode, "abort") == 0)
		abort();
	if (strcmp(mode, "exec") == 0) {
		execl("/bin/true", "true", (char *)NULL);
		return 8;
	}
	if (strcmp(mode, "twice") == 0) {
		extern char __executable_start[], etext[];
		monstartup((unsigned long)__executable_start, (unsigned long)etext);
		_mcleanup();
		_mcleanup();
		return 0;
	}
	if (strcmp(mode, "kill") == 0)	/* until SIGKILL */
		for (;;) {
			calls(counted, CALLS);
			spin(0.01);
		}
	return 7;
}
