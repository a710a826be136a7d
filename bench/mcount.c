/*
 * mcount.c THREADS CALLS - THREADS threads each call leaf() CALLS times;
 * prints the CPU seconds the calls took (all threads together).  Built
 * three ways by bench/mcount.sh: without -pg, with -pg against glibc,
 * with -pg against libprofil; the difference is the cost of mcount.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static long calls;

__attribute__((noinline)) void leaf(unsigned long x)
{
	sink += x;
}

static void *worker(void *arg)
{
	(void)arg;
	for (long i = 0; i < calls; i++)
		leaf((unsigned long)i);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	calls = argc > 2 ? atol(argv[2]) : 100000000;
	if (n < 1 || n > 64)
		return 2;
	pthread_t t[64];
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	printf("%.6f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
