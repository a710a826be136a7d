/*
 * A thread the program makes with glibc's clone(), without pthreads (as
 * a runtime of another language might), is sampled too, under each
 * backend, while its creator blocks: the interposed clone() arms it as
 * it starts, with no thread of libprofil's to look for it.  A thread
 * made past the interposer (glibc's clone called directly, as a raw
 * clone system call would be) is found by the rescan that the creator's
 * own sampling signals make while it computes too: all of its CPU time
 * but the first 100 ms or so is counted.
 */
#include "check.h"

#include <dlfcn.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>

HOT_WORK(raw)
HOT_WORK(main)

static atomic_int done;
static double raw_used;

/* Runs on a stack of its own, without a TLS of its own: calls nothing
   of libc's but clock_gettime. */
static int raw_thread(void *unused)
{
	(void)unused;
	raw_used = burn(work_raw, 1.0);
	atomic_store(&done, 1);
	syscall(SYS_futex, &done, FUTEX_WAKE, 1, NULL, NULL, 0);
	return 0;
}

typedef int clone_fn(int (*)(void *), void *, int, void *, ...);

/* Past the interposer: glibc's own clone. */
static void unseen_clone(char *stack_top, int flags)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	clone_fn *real = libc ? (clone_fn *)dlsym(libc, "clone") : NULL;
	CHECK(real != NULL, "glibc's clone not found");
	if (!real)
		return;
	atomic_store(&done, 0);
	CHECK(real(raw_thread, stack_top, flags, NULL) > 0, "clone: %s", strerror(errno));
	while (!atomic_load(&done))	/* sampled meanwhile: rescans */
		check_sink += work_main(20000);
	usleep(100000);
}

int main(void)
{
	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	size_t size = 1 << 20;
	char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD
		    | CLONE_SYSVSEM;
	CHECK(clone(raw_thread, stack + size, flags, NULL) > 0, "clone: %s", strerror(errno));
	while (!atomic_load(&done))
		syscall(SYS_futex, &done, FUTEX_WAIT, 0, NULL, NULL, 0);
	usleep(100000);	/* let it end, and its last records be drained */
	struct profil_stats st = stats_now();
	profil_off();
	uint64_t raw = histogram_sum(&h, HOT_START(raw), HOT_STOP(raw));
	double p = period_seconds();
	printf("raw thread: %.3f s of CPU, %llu samples (%.3f s); backend %d\n", raw_used,
	       (unsigned long long)raw, raw * p, st.backend);
	CHECK(raw * p >= 0.7 * raw_used, "raw thread: %.3f s counted of %.3f s",
	      raw * p, raw_used);
	CHECK(st.threads_unsampled == 0, "%u threads unsampled", st.threads_unsampled);
	check_stats_add_up(&st);

	memset(h.buf, 0, h.bufsiz);
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	unseen_clone(stack + size, flags);
	st = stats_now();
	profil_off();
	raw = histogram_sum(&h, HOT_START(raw), HOT_STOP(raw));
	printf("unseen raw thread: %.3f s of CPU, %llu samples (%.3f s)\n", raw_used,
	       (unsigned long long)raw, raw * p);
	CHECK(raw * p >= 0.6 * raw_used - 0.15, "unseen raw thread: %.3f s counted of %.3f s",
	      raw * p, raw_used);
	check_stats_add_up(&st);
	munmap(stack, size);
	return check_done("rawclone");
}
