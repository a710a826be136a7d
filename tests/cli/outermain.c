/*
 * outermain.c - runs outer_run() of libouter.so, or with a NAME and
 * FUNCTION outer_open(): libouter opens the plugin NAME.
 * outermain UNITS [NAME FUNCTION]
 */
#include <stdlib.h>

int outer_run(long units);
int outer_open(const char *name, const char *function, long units);

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 50;
	if (argc > 3)
		return outer_open(argv[2], argv[3], units);
	return outer_run(units);
}
