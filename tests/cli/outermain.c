/* outermain.c - runs outer_run() of libouter.so.  outermain UNITS */
#include <stdlib.h>

int outer_run(long units);

int main(int argc, char **argv)
{
	return outer_run(argc > 1 ? atol(argv[1]) : 50);
}
