/* inlprog.c - cli_export.sh's inlined code: inner is inlined into
 * middle, itself inlined into outer; pprof's frames must carry the lines
 * of those two calls (marked CALL-INNER and CALL-MIDDLE). */
#include <stdlib.h>

volatile double sink;

static inline __attribute__((always_inline)) double inner(long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)i * 0.5;
	return s;
}

static inline __attribute__((always_inline)) double middle(long n)
{
	return inner(n) + 1; /* CALL-INNER */
}

__attribute__((noinline)) void outer(long n)
{
	sink = middle(n); /* CALL-MIDDLE */
}

int main(int argc, char **argv)
{
	outer((argc > 1 ? atol(argv[1]) : 100) * 1000000);
	return 0;
}
