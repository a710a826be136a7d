/* bidlib.c - cli_buildid.sh's library (see bidprog.c). */
volatile double lib_sink;

__attribute__((noinline)) void LIB_WORK(long n)
{
	double s = 0;
	for (long i = 0; i < n; i++)
		s += (double)i * 0.25;
	lib_sink = s;
}
