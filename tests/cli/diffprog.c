/* diffprog.c - report --diff's before and after (cli_diff.sh): two
 * functions of equal work, and a build (-DA_TIMES=2) in which work_a
 * does twice its work. */
#include <stdlib.h>

#ifndef A_TIMES
#define A_TIMES 1
#endif

volatile double sink_a, sink_b;

__attribute__((noinline)) void work_a(long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)i * 0.5;
	sink_a = s;
}

__attribute__((noinline)) void work_b(long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)i * 0.25;
	sink_b = s;
}

int main(int argc, char **argv)
{
	long n = (argc > 1 ? atol(argv[1]) : 100) * 1000000;
	/* Interleaved, so that a change in the machine's speed during the
	   run falls on both alike. */
	for (int k = 0; k < 20; k++) {
		work_a(A_TIMES * n / 20);
		work_b(n / 20);
	}
	return 0;
}
