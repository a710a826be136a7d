/*
 * ends.c MODE - ways a process ends that run no destructor of a
 * preloaded library, or run one in the wrong process (audit F15):
 *   quick    0.3 s of CPU, then quick_exit(5);
 *   vfork    0.2 s of CPU, a vfork child that calls exit(0) (undefined,
 *            but common), then 0.3 s more in the parent, exit 0.  The
 *            child's exit runs the destructors in the parent's memory,
 *            and glibc marks them run there: the parent's exit runs
 *            none of them.
 *   race     two threads burn 0.4 s of CPU between them, then both call
 *            exit(0) at once (the second's exit ends in glibc's own
 *            _exit, past the interposer).
 *   raw      0.3 s of CPU, then a raw exit_group system call with status
 *            4, as Go's runtime ends (no exit handler, no destructor).
 * Prints what it did.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile double sink;

__attribute__((noinline)) static void burn(double seconds)
{
	double end = cpu() + seconds, x = 1;
	while (cpu() < end)	/* a clock read each ~1 ms: few samples in it */
		for (int i = 0; i < 1000000; i++)
			x = x * 1.0000001 + 1e-9;
	sink = x;
}

static pthread_barrier_t at_exit_line;

static void *burn_then_exit(void *arg)
{
	(void)arg;
	burn(0.4);	/* process CPU: both threads' together */
	pthread_barrier_wait(&at_exit_line);
	exit(0);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "quick") == 0) {
		burn(0.3);
		printf("quick_exit\n");
		fflush(stdout);
		quick_exit(5);
	}
	if (strcmp(mode, "vfork") == 0) {
		burn(0.2);
		pid_t child = vfork();
		if (child == 0)
			exit(0);
		int status;
		waitpid(child, &status, 0);
		burn(0.3);
		printf("vfork child: %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return 0;
	}
	if (strcmp(mode, "race") == 0) {
		printf("two threads exit at once\n");
		fflush(stdout);
		pthread_t t[2];
		pthread_barrier_init(&at_exit_line, NULL, 2);
		for (int i = 0; i < 2; i++)
			pthread_create(&t[i], NULL, burn_then_exit, NULL);
		pthread_join(t[0], NULL);
		pthread_join(t[1], NULL);
		return 1;	/* never reached: a thread's exit ends the process */
	}
	if (strcmp(mode, "raw") == 0) {
		burn(0.3);
		printf("exit_group\n");
		fflush(stdout);
		syscall(SYS_exit_group, 4);
	}
	fprintf(stderr, "usage: ends quick|vfork|race|raw\n");
	return 2;
}
