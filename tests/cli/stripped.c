/*
 * stripped.c - tests/integration/cli_stripped.sh strips this program:
 * its functions are then in no symbol table, only in its call frame
 * information.  hot_a does twice the work of hot_b.
 *   stripped ROUNDS
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned sink;

__attribute__((noinline)) static unsigned hot_a(unsigned n)
{
	unsigned h = 1;
	for (unsigned i = 0; i < 2 * n; i++)
		h = h * 2654435761u + (i ^ (h >> 13));
	return h;
}

__attribute__((noinline)) static unsigned hot_b(unsigned n)
{
	unsigned h = 7;
	for (unsigned i = 0; i < n; i++)
		h = h * 2246822519u + (i ^ (h >> 11));
	return h;
}

int main(int argc, char **argv)
{
	unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
	for (unsigned r = 0; r < rounds; r++)
		sink += hot_a(1000000 + r) + hot_b(1000000 + r);
	printf("%u\n", sink);
	return 0;
}
