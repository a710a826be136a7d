/*
 * 2 000 short-lived threads while sampling: some return, some call
 * pthread_exit, some are detached and end on their own.  Nothing
 * crashes, every thread's timer goes with it (the process's POSIX timers
 * are counted in /proc/self/timers), no descriptor is left open, and the
 * statistics add up.
 */
#include "check.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>

HOT_WORK(work)

enum { THREADS = 2000, BATCH = 50 };

static atomic_int detached_done;

static void *short_life(void *p)
{
	long kind = (long)p;
	check_sink += work_work(20000);
	if (kind == 1)
		pthread_exit(NULL);
	if (kind == 2)
		atomic_fetch_add(&detached_done, 1);
	return NULL;
}

static int count_lines(const char *path, const char *prefix)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	int n = 0;
	while (fgets(line, sizeof line, f))
		n += strncmp(line, prefix, strlen(prefix)) == 0;
	fclose(f);
	return n;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void *nothing(void *p)
{
	return p;
}

int main(void)
{
	/* A first thread, before anything is counted: ThreadSanitizer
	   starts its helper thread with it. */
	pthread_t first;
	if (pthread_create(&first, NULL, nothing, NULL) == 0)
		pthread_join(first, NULL);
	usleep(10000);
	int fds = count_fds();
	int timers_before = count_lines("/proc/self/timers", "ID:");
	profil_set_hz(10000);
	struct histogram h = histogram_of_text();
	profil_reset_stats();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	/* A timer for each of the program's threads (the main one; under
	   ThreadSanitizer its helper too): its samples (timer backend) or
	   its system time (perf backend). */
	int own, helpers;
	threads_now(&own, &helpers);
	CHECK(count_lines("/proc/self/timers", "ID:") == timers_before + own,
	      "want %d timer(s), one for each thread", own);

	int detached = 0;
	for (int made = 0; made < THREADS; made += BATCH) {
		pthread_t t[BATCH];
		int joinable[BATCH];
		for (int i = 0; i < BATCH; i++) {
			long kind = (made + i) % 3;
			pthread_attr_t attr;
			pthread_attr_init(&attr);
			if (kind == 2) {
				pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
				detached++;
			}
			joinable[i] = kind != 2;
			CHECK(pthread_create(&t[i], &attr, short_life, (void *)kind) == 0,
			      "pthread_create");
			pthread_attr_destroy(&attr);
		}
		for (int i = 0; i < BATCH; i++)
			if (joinable[i])
				pthread_join(t[i], NULL);
	}
	/* Detached threads end on their own; wait until the last has gone. */
	while (atomic_load(&detached_done) < detached)
		usleep(1000);
	for (int tries = 0; tries < 2000; tries++) {
		int mine, helpers_now;
		threads_now(&mine, &helpers_now);
		if (mine == own)
			break;
		usleep(1000);
	}
	burn(work_work, 0.2);
	struct profil_stats st = stats_now();
	int timers = count_lines("/proc/self/timers", "ID:");
	printf("threads sampled %u, unsampled %u, timers now %d, samples %llu\n",
	       st.threads, st.threads_unsampled, timers, (unsigned long long)st.taken);
	CHECK(timers == timers_before + own, "%d timers for %d threads", timers, own);
	CHECK(st.threads >= THREADS, "%u threads sampled of %d", st.threads, THREADS + 1);
	CHECK(st.threads_unsampled == 0, "%u threads unsampled", st.threads_unsampled);
	check_stats_add_up(&st);
	profil_off();
	CHECK(count_lines("/proc/self/timers", "ID:") == timers_before,
	      "timers left after profil off");
	CHECK(count_fds() == fds, "%d descriptors open, %d before", count_fds(), fds);
	CHECK(histogram_sum(&h, HOT_START(work), HOT_STOP(work)) > 0, "no samples");
	return check_done("churn");
}
