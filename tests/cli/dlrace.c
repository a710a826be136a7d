/*
 * dlrace.c - dlopen and dlclose where the loader's lock meets a
 * profiler's (audit F2c, F3).  Built three ways:
 *   -DPLUGIN_INNER: libinner.so, a helper with a function.
 *   -DPLUGIN_OUTER: libouter.so, whose constructor opens libinner.so
 *     (found beside it, $ORIGIN) and calls into it, and whose destructor
 *     closes it: a dlopen inside glibc's dlopen, a dlclose inside
 *     glibc's dlclose.
 *   the program: dlrace MODE DIR N, with DIR holding both libraries:
 *     nested   N times open and close libouter.so;
 *     race     N times one thread opens and closes libouter.so while
 *              another opens and closes libinner.so;
 *     cancel   N times a thread loops on dlopen/dlclose of libouter.so
 *              and is cancelled (deferred), then main opens it.
 * Prints one line of what it did and exits 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(PLUGIN_INNER)
int inner_work(int n)
{
	volatile int s = 0;
	for (int i = 0; i < n; i++)
		s += i;
	return s != 0;
}
#elif defined(PLUGIN_OUTER)
static void *inner;

__attribute__((constructor)) static void outer_init(void)
{
	Dl_info info;
	char path[4096];
	if (!dladdr((void *)outer_init, &info))
		abort();
	snprintf(path, sizeof path, "%s", info.dli_fname);
	char *slash = strrchr(path, '/');
	strcpy(slash ? slash + 1 : path, "libinner.so");
	inner = dlopen(path, RTLD_NOW);
	if (!inner)
		abort();
	int (*work)(int) = (int (*)(int))dlsym(inner, "inner_work");
	if (!work || !work(1000))
		abort();
}

__attribute__((destructor)) static void outer_fini(void)
{
	if (dlclose(inner) != 0)
		abort();
}

int outer_alive(void)
{
	return inner != NULL;
}
#else
static char outer[4096], innerp[4096];
static int rounds;
static atomic_int started;

static void cycle(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
		exit(1);
	}
	if (dlclose(h) != 0) {
		fprintf(stderr, "dlclose %s: %s\n", path, dlerror());
		exit(1);
	}
}

static void *opener(void *arg)
{
	const char *path = arg;
	for (int i = 0; i < rounds; i++)
		cycle(path);
	return NULL;
}

/* Cancelled once running, inside its loop (a thread's start is the
   sampler's to survive, not this test's). */
static void *looper(void *arg)
{
	(void)arg;
	for (;;) {
		cycle(outer);
		atomic_store(&started, 1);
		pthread_testcancel();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: dlrace nested|race|cancel DIR N\n");
		return 2;
	}
	snprintf(outer, sizeof outer, "%s/libouter.so", argv[2]);
	snprintf(innerp, sizeof innerp, "%s/libinner.so", argv[2]);
	rounds = atoi(argv[3]);
	if (strcmp(argv[1], "nested") == 0) {
		opener(outer);
	} else if (strcmp(argv[1], "race") == 0) {
		pthread_t a, b;
		pthread_create(&a, NULL, opener, outer);
		pthread_create(&b, NULL, opener, innerp);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	} else if (strcmp(argv[1], "cancel") == 0) {
		for (int i = 0; i < rounds; i++) {
			pthread_t t;
			void *res;
			atomic_store(&started, 0);
			pthread_create(&t, NULL, looper, NULL);
			while (!atomic_load(&started))
				sched_yield();
			struct timespec ts = { 0, 100000 + (i % 7) * 150000 };
			nanosleep(&ts, NULL);
			pthread_cancel(t);
			pthread_join(t, &res);
			if (res != PTHREAD_CANCELED) {
				fprintf(stderr, "not cancelled\n");
				return 1;
			}
			cycle(outer);
		}
	} else {
		fprintf(stderr, "dlrace: unknown mode %s\n", argv[1]);
		return 2;
	}
	printf("%s: %d rounds\n", argv[1], rounds);
	return 0;
}
#endif
