/*
 * stackspin N DEPTH - fixed work DEPTH calls deep, for bench/stacks.sh:
 * the cost of a sample with and without its stack.  Prints its own CPU
 * seconds (user + system) on stderr as "cpu=S".
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

__attribute__((noinline)) unsigned long spin(int depth, unsigned long n, unsigned long x)
{
	if (depth > 0)
		return spin(depth - 1, n, x + 1) + 1;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: stackspin N DEPTH\n");
		return 2;
	}
	unsigned long n = strtoul(argv[1], NULL, 10), s = 0;
	int depth = atoi(argv[2]);
	for (int i = 0; i < 100; i++)
		s += spin(depth, n / 100, s);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "cpu=%.4f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6
					  + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return (int)(s & 0);
}
