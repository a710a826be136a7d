/*
 * threads.c - seeing every thread the program makes.
 *
 * pthread_create is interposed: the new thread runs a trampoline that
 * arms its sampler before the program's start routine, and a
 * thread-specific key whose destructor disarms it when the thread ends
 * (by return, pthread_exit or cancellation), so that no timer outlives
 * its thread.  C11's thrd_create is interposed the same way: glibc
 * makes those threads without going through the exported
 * pthread_create.  glibc's clone() is interposed for threads
 * (CLONE_VM | CLONE_THREAD): the child arms itself before the program's
 * function runs; it has no TLS of its own, so only
 * sampler_thread_seen(), which allocates nothing and leaves the
 * cancellation state alone; when the function returns, it disarms
 * itself (sampler_thread_gone).  A thread that ends otherwise (the exit
 * system call) is found by the sampler's sweeps.
 * Threads made with a raw clone system call are found by rescans
 * (sampler_tick).  The real calls are found with dlsym(RTLD_NEXT),
 * which works whether libprofil is linked, preloaded, or linked
 * statically into a dynamically linked program.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <threads.h>

#include "core/sampler.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1	/* clang's way of saying it */
#endif
#endif
/*
 * The calling thread's stack, from its start: the sample handler runs
 * on it (unless on a sigaltstack) and must know what is left below its
 * frame (threads_stack).  Initial-exec: read in handlers.  0: not known
 * (the main thread, whose stack grows, and threads made with clone).
 */
static __thread uintptr_t stack_lo __attribute__((tls_model("initial-exec")));
static __thread uintptr_t stack_hi __attribute__((tls_model("initial-exec")));

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
	char *here = __builtin_frame_address(0);
	if (here > (char *)stack_lo && here <= (char *)stack_hi)
		__asan_unpoison_memory_region((void *)stack_lo, (size_t)(here - (char *)stack_lo));
}
#else
static void clear_stack_shadow(void)
{
}
#endif

/* At a thread's start: its stack noted, its shadow cleared. */
static void note_stack(void)
{
	pthread_attr_t attr;
	void *low;
	size_t size;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &low, &size) == 0) {
		stack_lo = (uintptr_t)low;
		stack_hi = (uintptr_t)low + size;
	}
	pthread_attr_destroy(&attr);
	clear_stack_shadow();
}

void threads_stack(uintptr_t *lo, uintptr_t *hi)
{
	*lo = stack_lo;
	*hi = stack_hi;
}

#define EXPORT __attribute__((visibility("default")))

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int thrd_create_fn(thrd_t *, thrd_start_t, void *);
typedef int clone_fn(int (*)(void *), void *, int, void *, ...);

struct start {
	void *(*routine)(void *);
	void *arg;
};

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

/*
 * A thread cancelled in the program's code was unwound without running
 * the epilogues that clear its frames' redzones in ASan's shadow, and
 * gcc's prologues only write a frame's redzones: our frames below here
 * would meet the stale ones.  Clear them first, as at the start.
 */
static void on_thread_exit(void *unused)
{
	(void)unused;
	clear_stack_shadow();
	sampler_thread_end();
}

static void make_exit_key(void)
{
	pthread_key_create(&exit_key, on_thread_exit);
}

static thrd_create_fn *_Atomic real_thrd_create;
static clone_fn *_Atomic real_clone;

/* Found at load time too: clone may be called where dlsym must not be
   (a vfork child, a thread without TLS). */
static void find_real(void)
{
	if (!real_thrd_create)
		real_thrd_create = (thrd_create_fn *)dlsym(RTLD_NEXT, "thrd_create");
	if (!real_clone)
		real_clone = (clone_fn *)dlsym(RTLD_NEXT, "clone");
}

void threads_init(void)
{
	pthread_once(&exit_key_once, make_exit_key);
	find_real();
}

static void *trampoline(void *p)
{
	note_stack();
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

struct c11_start {
	thrd_start_t routine;
	void *arg;
};

static int c11_trampoline(void *p)
{
	note_stack();
	struct c11_start start = *(struct c11_start *)p;
	free(p);
	pthread_setspecific(exit_key, &exit_key);
	sampler_thread_begin();
	return start.routine(start.arg);
}

EXPORT int thrd_create(thrd_t *thread, thrd_start_t routine, void *arg)
{
	find_real();
	thrd_create_fn *real = real_thrd_create;
	if (!real)
		return thrd_error;
	pthread_once(&exit_key_once, make_exit_key);
	struct c11_start *start = malloc(sizeof *start);
	if (!start)	/* the thread still runs, found by a rescan */
		return real(thread, routine, arg);
	start->routine = routine;
	start->arg = arg;
	int r = real(thread, c11_trampoline, start);
	if (r != thrd_success)
		free(start);
	return r;
}

/* On the child's own stack, below what the program gave it. */
struct clone_start {
	int (*fn)(void *);
	void *arg;
};

static int clone_trampoline(void *p)
{
	const struct clone_start *start = p;
	int (*fn)(void *) = start->fn;
	void *arg = start->arg;
	sampler_thread_seen();
	int r = fn(arg);
	sampler_thread_gone();	/* glibc's clone then makes the exit call */
	return r;
}

EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	pid_t *parent_tid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *child_tid = va_arg(ap, pid_t *);
	va_end(ap);
	clone_fn *real = real_clone;
	if (!real) {
		find_real();
		if (!(real = real_clone)) {
			errno = ENOSYS;
			return -1;
		}
	}
	const int thread = CLONE_VM | CLONE_THREAD;
	/* Stacks grow down on every machine libprofil supports. */
	if (fn && stack && (flags & thread) == thread) {
		uintptr_t at = ((uintptr_t)stack - sizeof(struct clone_start)) & ~(uintptr_t)15;
		struct clone_start *start = (struct clone_start *)at;
		start->fn = fn;
		start->arg = arg;
		return real(clone_trampoline, start, flags, start, parent_tid, tls, child_tid);
	}
	return real(fn, stack, flags, arg, parent_tid, tls, child_tid);
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
