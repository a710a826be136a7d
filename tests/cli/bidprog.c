/* bidprog.c - cli_buildid.sh's program: PROG_WORK in the program and
 * LIB_WORK in libbid.so (bidlib.c) share the time; both names are set
 * by the build, so that a rebuild changes the names and the build IDs. */
#include <stdlib.h>

void LIB_WORK(long n);

volatile double prog_sink;

__attribute__((noinline)) void PROG_WORK(long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)i * 0.5;
	prog_sink = s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100;
	PROG_WORK(n * 1000000);
	LIB_WORK(n * 1000000);
	return 0;
}
