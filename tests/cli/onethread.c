/*
 * onethread.c - a single-threaded program that checks it stays so while
 * it computes and in a fork child (tests/integration/single_thread_run.sh):
 * /proc/self/task has one entry each time it looks, and glibc's
 * __libc_single_threaded is still 1.  Prints the most tasks it saw;
 * exits 1 if it ever saw more than one.  Argument: CPU seconds to burn.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static int tasks(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Burn seconds of CPU; the most tasks seen meanwhile. */
static int burn(double seconds)
{
	int most = tasks();
	double start = cpu();
	while (cpu() - start < seconds) {
		for (int i = 0; i < 200000; i++)
			sink = sink * 6364136223846793005u + 1442695040888963407u;
		int n = tasks();
		most = n > most ? n : most;
	}
	return most;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.3;
	int most = burn(seconds);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int child = burn(seconds);
		printf("child: %d tasks, single-threaded %d\n", child, __libc_single_threaded);
		fflush(stdout);
		_exit(child == 1 && __libc_single_threaded == 1 ? 0 : 1);
	}
	int status = 1;
	waitpid(pid, &status, 0);
	printf("parent: %d tasks, single-threaded %d\n", most, __libc_single_threaded);
	return most == 1 && __libc_single_threaded == 1 && WIFEXITED(status)
	       && WEXITSTATUS(status) == 0 ? 0 : 1;
}
