/* dllib.c - built twice, as liba (-DNAME=lib_a_work) and libb. */
static volatile unsigned long sink;

void NAME(long units)
{
	for (long u = 0; u < units; u++)
		for (unsigned long i = 0; i < 1000000; i++)
			sink += i ^ (sink >> 3);
}
