/*
 * stress_dlopen [run] - 10 000 dlopen and dlclose of a library that runs
 * code (constructor, a function, destructor; build/tests/stress/
 * libdlwork.so) while sampling at the highest rate.  The library is
 * really gone after each dlclose, and nothing piles up: descriptors,
 * timers, threads, memory, and (under profil run) the profile file's
 * segments, checked by stress_run.sh.
 */
#include "stress.h"

#include <dlfcn.h>

HOT_WORK(work)

static char lib[4096];

static void cycle(int n)
{
	for (int i = 0; i < n; i++) {
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			CHECK(h, "dlopen %s: %s", lib, dlerror());
			return;
		}
		uint64_t (*run)(uint64_t) = (uint64_t (*)(uint64_t))dlsym(h, "dlwork_run");
		int *loaded = dlsym(h, "dlwork_loaded");
		CHECK(run && loaded && *loaded, "dlwork_run or its constructor missing");
		if (run)
			CHECK(run(3000) == 1, "a fresh load kept the old one's TLS");
		CHECK(dlclose(h) == 0, "dlclose: %s", dlerror());
	}
}

int main(int argc, char **argv)
{
	const char *build = getenv("PROFIL_TEST_BUILD");
	snprintf(lib, sizeof lib, "%s/tests/stress/libdlwork.so", build ? build : "build");
	if (access(lib, R_OK) != 0) {
		fprintf(stderr, "stress_dlopen: %s: %s\n", lib, strerror(errno));
		return 1;
	}
	int preloaded = stress_preloaded(argc, argv);
	int n = STRESS_SIZE(10000);
	stress_baseline();
	struct stress_usage idle = stress_usage_now();
	struct histogram h = stress_start(preloaded);
	int warm = n / 10;
	cycle(warm);
	struct stress_usage before = stress_usage_now();
	cycle(n - warm);
	stress_burn(&h, work_work);
	struct stress_usage after = stress_usage_now();
	stress_check_usage("while sampling", before, after, 2048, 8192);
	CHECK(maps_naming("libdlwork.so") == 0, "libdlwork.so still mapped after dlclose");
	stress_finish(preloaded, &h, idle, 8192);
	printf("%d dlopen/dlclose\n", n);
	return check_done("stress_dlopen");
}
