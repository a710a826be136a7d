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

#include "core/sampler.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1	/* clang's way of saying it */
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/*
 * Under AddressSanitizer, ASan's pthread_create comes before ours: the
 * start routine we wrap is ASan's, so the trampoline runs before ASan
 * has cleared the shadow of the thread's stack, and a stack reused from
 * an ended thread can still be marked as that thread's redzones.  Clear
 * it as ASan would, from the bottom of the stack up to this frame.
 */
static void clear_stack_shadow(void)
{
	pthread_attr_t attr;
	void *low;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &low, &size) == 0) {
		char *here = __builtin_frame_address(0);
		if (here > (char *)low && here <= (char *)low + size)
			__asan_unpoison_memory_region(low, (size_t)(here - (char *)low));
	}
	pthread_attr_destroy(&attr);
}
#else
static void clear_stack_shadow(void)
{
}
#endif

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
	clear_stack_shadow();
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
