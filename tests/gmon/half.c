/*
 * half.c - a -pg program that spends about half its CPU time in libc and
 * libm (memcpy, sin), outside its own text, and half in its own loop;
 * it measures the library share itself, around each burst of calls,
 * and prints it as "lib=" with its total CPU time as "total=".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

volatile double sink;

__attribute__((noinline)) static void mine(double until)
{
	double x = 0;
	while (cpu() < until)
		for (int i = 0; i < 20000; i++)
			x = x * 1.0000001 + 1;
	sink = x;
}

int main(int argc, char **argv)
{
	double each = argc > 1 ? atof(argv[1]) : 0.5;
	static char a[1 << 20], b[1 << 20];
	double in_lib = 0, t0 = cpu();
	/* The library's share measured around each burst of calls. */
	while (in_lib < each) {
		double s = cpu();
		for (int k = 0; k < 50; k++)
			memcpy(a, b, sizeof a), b[k] = (char)k;
		double y = 0;
		for (int k = 0; k < 20000; k++)
			y += sin(k * 0.001 + sink);
		sink = y;
		in_lib += cpu() - s;
	}
	mine(cpu() + each);
	fprintf(stderr, "pid=%d lib=%.6f total=%.6f\n", (int)getpid(), in_lib, cpu() - t0);
	return 0;
}
