/*
 * calls.c THREADS [CALLS] - each of THREADS threads calls leaf() CALLS
 * times (2 000 000 by default), while the main thread waits.  Built with
 * -pg: every call must be in the profile.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;
static long calls = 2000000;

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
	if (argc > 2)
		calls = atol(argv[2]);
	pthread_t t[256];
	if (n < 1 || n > 256)
		return 2;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			return 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
