/*
 * dlmain.c - the work is in libraries opened with dlopen and closed with
 * dlclose before the end: their samples must keep their names.
 * dlmain LIB_A LIB_B UNITS
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static int run(const char *path, const char *fn, long units)
{
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlmain: %s\n", dlerror());
		return 1;
	}
	void (*work)(long) = (void (*)(long))dlsym(h, fn);
	if (!work) {
		fprintf(stderr, "dlmain: %s\n", dlerror());
		return 1;
	}
	work(units);
	return dlclose(h);
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	long units = atol(argv[3]);
	/* A first, then B: B is likely to be mapped where A was. */
	return run(argv[1], "lib_a_work", 2 * units) || run(argv[2], "lib_b_work", units);
}
