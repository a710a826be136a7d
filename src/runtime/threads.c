/*
 * threads.c - seeing every thread the program makes.
 *
 * pthread_create is interposed: the new thread runs a trampoline that
 * arms its sampler before the program's start routine, and a
 * thread-specific key whose destructor disarms it when the thread ends
 * (by return, pthread_exit or cancellation), so that no timer outlives
 * its thread.  The real pthread_create is found with dlsym(RTLD_NEXT),
 * which works whether libprofil is linked, preloaded, or linked
 * statically into a dynamically linked program.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "moncontrol.h"
#include "sampler.h"

#define EXPORT __attribute__((visibility("default")))

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

struct start {
	void *(*routine)(void *);
	void *arg;
};

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void on_thread_exit(void *unused)
{
	(void)unused;
	sampler_thread_end();
	gmon_thread_end();
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, on_thread_exit);
}

void threads_init(void)
{
	pthread_once(&exit_key_once, make_exit_key);
}

static void *trampoline(void *p)
{
	struct start start = *(struct start *)p;
	free(p);
	pthread_setspecific(exit_key, &exit_key);	/* any non-NULL value */
	sampler_thread_begin();
	return start.routine(start.arg);
}

static create_fn *real_create(void)
{
	static create_fn *_Atomic found;
	create_fn *real = found;
	if (!real) {
		real = (create_fn *)dlsym(RTLD_NEXT, "pthread_create");
		found = real;
	}
	return real;
}

int threads_create_unsampled(pthread_t *thread, void *(*routine)(void *), void *arg)
{
	create_fn *real = real_create();
	return real ? real(thread, NULL, routine, arg) : EAGAIN;
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr,
			  void *(*routine)(void *), void *arg)
{
	create_fn *real = real_create();
	if (!real)	/* a fully static program: not supported */
		return EAGAIN;
	pthread_once(&exit_key_once, make_exit_key);
	struct start *start = malloc(sizeof *start);
	if (!start)	/* the thread still runs, unsampled until a restart */
		return real(thread, attr, routine, arg);
	start->routine = routine;
	start->arg = arg;
	int r = real(thread, attr, trampoline, start);
	if (r != 0)
		free(start);
	return r;
}
