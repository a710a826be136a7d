/*
 * outer.c - a library that opens a plugin as its caller asks, by a bare
 * name along its own DT_RUNPATH or DT_RPATH, or by a name with dynamic
 * string tokens ($ORIGIN, $LIB, $PLATFORM): under profil run the plugin
 * must be found as without it.  outer_open(name, function, units) runs
 * the plugin's function and returns 0 if it worked; outer_run(units)
 * opens libplug.so.
 */
#include <dlfcn.h>
#include <stdio.h>

int outer_open(const char *name, const char *function, long units)
{
	void *h = dlopen(name, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "outer: %s\n", dlerror());
		return 1;
	}
	void (*work)(long) = (void (*)(long))dlsym(h, function);
	if (!work)
		return 1;
	work(units);
	return dlclose(h);
}

int outer_run(long units)
{
	return outer_open("libplug.so", "plug_work", units);
}
