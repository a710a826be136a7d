/*
 * outer.c - a library whose DT_RUNPATH ($ORIGIN/plugins) finds the
 * plugin it opens by a bare name: under profil run the plugin must be
 * found as without it.  outer_run(units) returns 0 if it worked.
 */
#include <dlfcn.h>
#include <stdio.h>

int outer_run(long units)
{
	void *h = dlopen("libplug.so", RTLD_NOW);
	if (!h) {
		fprintf(stderr, "outer: %s\n", dlerror());
		return 1;
	}
	void (*work)(long) = (void (*)(long))dlsym(h, "plug_work");
	if (!work)
		return 1;
	work(units);
	return dlclose(h);
}
