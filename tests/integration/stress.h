/*
 * stress.h - what the stress tests share (issue 6, item 2).
 *
 * Each stress test hammers one part of the runtime (threads, fork and
 * exec, dlopen, signals, odd ways of running code) while sampling at the
 * highest rate its backend reaches, and checks that nothing leaked: the
 * process's descriptors, POSIX timers and threads are as before, memory
 * stops growing once warmed up, and the statistics add up.
 *
 * Sizes: the full sizes in the plain build; a tenth under the
 * sanitizers (ASan, TSan), whose every thread, fork and dlopen costs
 * ten to a hundred times more.  STRESS_SIZE() says which.
 *
 * A stress program given the argument "run" is being profiled by
 * profil run (preload mode): it must not call profil() itself, and the
 * profile files are checked from outside (stress_run.sh).
 */
#ifndef PROFIL_TEST_STRESS_H
#define PROFIL_TEST_STRESS_H

#include "check.h"
#include "../../src/common/rates.h"

#include <dirent.h>
#include <malloc.h>
#include <signal.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define STRESS_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STRESS_SANITIZED 1
#endif
#ifdef STRESS_SANITIZED
#define STRESS_SIZE(full) ((full) / 10)
#else
#define STRESS_SIZE(full) (full)
#endif

/* The highest rate each backend reaches: perf 20 kHz (the kernel's
   perf_event_max_sample_rate allows more, but its timer does not keep
   up); the timer backend as fast as it is allowed to go (the kernel's
   tick limits the signals; their overrun carries the rest). */
static inline unsigned stress_hz(void)
{
	return backend_expected() == PROFIL_BACKEND_PERF ? rate_perf_max() : PROFIL_HZ_MAX;
}

/* Entries of a /proc directory, without . and .. */
static inline int stress_dir_entries(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The value of a "Name:\t123 kB" line of /proc/self/status. */
static inline long stress_status(const char *name)
{
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	char line[256];
	long v = -1;
	size_t len = strlen(name);
	while (fgets(line, sizeof line, f))
		if (strncmp(line, name, len) == 0 && line[len] == ':') {
			v = atol(line + len + 1);
			break;
		}
	fclose(f);
	return v;
}

struct stress_usage {
	int fds;	/* open descriptors (the one reading them left out) */
	int timers;	/* POSIX timers */
	int tasks;	/* the program's threads */
	int helpers;	/* libprofil's threads */
	long rss_kb;	/* resident anonymous and shared memory */
	long vm_kb;
};

/*
 * The perf backend opens a thread's event and ring at the thread's first
 * sample (perf_late.c): the calling thread runs until it has its ring,
 * so that usage before and after sees it in the same state.
 */
static inline void stress_sampled(void)
{
	struct profil_stats st;
	if (profil_get_stats(&st, sizeof st) != 0 || !st.active
	    || st.backend != PROFIL_BACKEND_PERF)
		return;
	double start = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
	while (perf_rings_mapped() == 0 && cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - start < 2)
		for (volatile int i = 0; i < 1000000; i++)
			;
}

/*
 * Threads that end on their own (detached, raw clones) leave
 * /proc/self/task a little after their last instruction: wait up to a
 * second for the program's threads to come down to want.
 */
static inline struct stress_usage stress_usage_now_settled(int want)
{
	struct stress_usage u;
	stress_sampled();
	for (int i = 0; i < 1000; i++) {
		threads_now(&u.tasks, &u.helpers);
		if (u.tasks <= want)
			break;
		usleep(1000);
	}
	u.fds = stress_dir_entries("/proc/self/fd") - 1;
	u.timers = count_timers();
	/* The profile file's pages are left out: they are the profile,
	   filling as new stacks are met (bounded by the file's size), not
	   memory kept from the program.  Anonymous memory (private
	   mappings of /dev/zero too) is where a leak of libprofil's would
	   show. */
	u.rss_kb = stress_status("RssAnon") + stress_status("RssShmem");
	u.vm_kb = stress_status("VmSize");
	return u;
}

/*
 * The program's threads at rest: the main one, and under ThreadSanitizer
 * its background thread, which it starts with the first thread the
 * program makes.  Called first thing in main.
 */
static int stress_rest_threads = 1;

static inline void *stress_nothing(void *p)
{
	return p;
}

static inline void stress_baseline(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, stress_nothing, NULL) == 0)
		pthread_join(t, NULL);
	int helpers;
	usleep(10000);
	threads_now(&stress_rest_threads, &helpers);
}

/* Now, with the program's threads down to those at rest. */
static inline struct stress_usage stress_usage_now(void)
{
	return stress_usage_now_settled(stress_rest_threads);
}

/*
 * Nothing leaked between before and after (taken in the same state of
 * profiling): descriptors, timers and threads are as they were, and
 * memory grew by less than rss_kb / vm_kb.  Under AddressSanitizer the
 * quarantine holds freed memory on purpose; LeakSanitizer checks it at
 * exit instead.
 */
static inline void stress_check_usage(const char *what, struct stress_usage before,
				      struct stress_usage after, long rss_kb, long vm_kb)
{
	printf("%s: fds %d -> %d, timers %d -> %d, threads %d+%d -> %d+%d, "
	       "RSS (anon+shmem) %ld -> %ld kB, VmSize %ld -> %ld kB\n", what,
	       before.fds, after.fds, before.timers, after.timers, before.tasks,
	       before.helpers, after.tasks, after.helpers, before.rss_kb, after.rss_kb,
	       before.vm_kb, after.vm_kb);
	CHECK(after.fds == before.fds, "%s: %d descriptors, %d before", what,
	      after.fds, before.fds);
	CHECK(after.timers == before.timers, "%s: %d timers, %d before", what,
	      after.timers, before.timers);
	CHECK(after.tasks == before.tasks, "%s: %d threads, %d before", what,
	      after.tasks, before.tasks);
	CHECK(after.helpers == before.helpers, "%s: %d threads of libprofil's, %d before",
	      what, after.helpers, before.helpers);
#ifndef STRESS_SANITIZED
	CHECK(after.rss_kb - before.rss_kb < rss_kb, "%s: RSS grew by %ld kB", what,
	      after.rss_kb - before.rss_kb);
	CHECK(after.vm_kb - before.vm_kb < vm_kb, "%s: VmSize grew by %ld kB", what,
	      after.vm_kb - before.vm_kb);
#else
	(void)rss_kb;
	(void)vm_kb;
#endif
}

/*
 * glibc gives each new thread that allocates an arena of 64 MB of
 * address space, up to eight per core: VmSize would measure how many
 * threads ever ran at once, not what leaked.  Two arenas make it
 * measure the leak.
 */
static inline void stress_few_arenas(void)
{
	mallopt(M_ARENA_MAX, 2);
}

/*
 * In a new image (after exec or posix_spawn) of a process that was
 * profiling: nothing of it came through.  0, or which thing did: 1 a
 * timer, 2 a descriptor beyond the fds the parent had before profiling,
 * 3 a real-time signal not at its default (the timer backend's), 4 a
 * blocked signal.
 */
static inline int stress_inherited(int fds)
{
	if (count_timers() != 0)
		return 1;
	if (stress_dir_entries("/proc/self/fd") - 1 != fds)
		return 2;
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++) {
		struct sigaction sa;
		if (sigaction(s, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL)
			return 3;
	}
	sigset_t mask;
	sigprocmask(SIG_SETMASK, NULL, &mask);
	return sigisemptyset(&mask) ? 0 : 4;
}

/* Is this run under profil run (argument "run")? */
static inline int stress_preloaded(int argc, char **argv)
{
	return argc > 1 && strcmp(argv[1], "run") == 0;
}

/*
 * Start sampling the whole text at the highest rate, or, under profil
 * run, leave the preload mode's profile running.  Returns the histogram
 * (its buf NULL under profil run).
 */
static inline struct histogram stress_start(int preloaded)
{
	struct histogram h = { 0 };
	stress_few_arenas();
	if (preloaded)
		return h;
	CHECK(profil_set_hz(stress_hz()) == 0, "profil_set_hz: %s", strerror(errno));
	h = histogram_of_text();
	profil_reset_stats();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	return h;
}

/*
 * Work in fn until a sample lands in the histogram (at most a second of
 * CPU), so that "nothing counted" means what it says: on a machine at
 * load 13 the timer backend once delivered no signal in 0.05 s of CPU.
 * Under profil run (no histogram here), 0.05 s.
 */
static inline void stress_burn(const struct histogram *h, uint64_t (*fn)(uint64_t))
{
	if (h->buf)
		burn_until_counted(h, fn, 1, 1.0);
	else
		burn(fn, 0.05);
}

/*
 * The statistics add up, the counters hold what was counted, samples
 * were taken at all, and every thread could be sampled.
 */
static inline void stress_check_stats(const struct histogram *h)
{
	struct profil_stats st = stats_now();
	printf("taken %llu = counted %llu + outside %llu + saturated %llu + lost %llu; "
	       "%u threads, %u unsampled, %u fell back; backend %d at %u Hz\n",
	       (unsigned long long)st.taken, (unsigned long long)st.counted,
	       (unsigned long long)st.outside, (unsigned long long)st.saturated,
	       (unsigned long long)st.lost, st.threads, st.threads_unsampled,
	       st.threads_fallback, st.backend, st.hz);
	check_stats_add_up(&st);
	CHECK(st.backend == backend_expected(), "backend %d, expected %d", st.backend,
	      backend_expected());
	CHECK(st.counted > 0, "nothing counted");
	CHECK(st.threads_unsampled == 0, "%u threads unsampled", st.threads_unsampled);
	if (h->buf && !st.active)
		CHECK(histogram_total(h) == st.counted,
		      "counters hold %llu, counted %llu",
		      (unsigned long long)histogram_total(h), (unsigned long long)st.counted);
}

/*
 * The end of a stress test: without profil run, profiling off, the
 * statistics checked, and nothing left of it (against idle, before it
 * started; memory within rss_kb, and VmSize within two arenas and the
 * thread stacks glibc caches); under profil run, the statistics add up.
 */
static inline void stress_finish(int preloaded, struct histogram *h,
				 struct stress_usage idle, long rss_kb)
{
	if (preloaded) {
		struct profil_stats st = stats_now();
		check_stats_add_up(&st);
		return;
	}
	CHECK(profil_off() == 0, "profil off: %s", strerror(errno));
	stress_check_stats(h);
	struct stress_usage end = stress_usage_now();
	stress_check_usage("after profil off", idle, end, rss_kb, 262144);
	histogram_free(h);
}

#endif
