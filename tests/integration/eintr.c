/*
 * Sampling does not make blocking calls fail with EINTR: two threads
 * pass 30 000 bytes through a pipe, one at a time, with blocking reads
 * and writes, while every thread is sampled at 100 000 Hz (the timers
 * fire at every kernel tick, often while a thread is in the kernel).
 */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

enum { ROUNDS = 30000 };

static int ping[2], pong[2];
static _Atomic long eintr_count;

static void transfer(int in, int out, int first)
{
	char c = 'x';
	for (int i = 0; i < ROUNDS; i++) {
		if (!first || i > 0) {
			ssize_t r = read(in, &c, 1);
			if (r < 0 && errno == EINTR)
				atomic_fetch_add(&eintr_count, 1);
			if (r != 1)
				abort();
		}
		ssize_t w = write(out, &c, 1);
		if (w < 0 && errno == EINTR)
			atomic_fetch_add(&eintr_count, 1);
		if (w != 1)
			abort();
	}
}

static void *other(void *unused)
{
	(void)unused;
	transfer(ping[0], pong[1], 0);
	return NULL;
}

int main(void)
{
	if (pipe(ping) || pipe(pong))
		abort();
	profil_set_hz(100000);
	struct histogram h = histogram_of_text();
	profil_reset_stats();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	pthread_t t;
	pthread_create(&t, NULL, other, NULL);
	/* A read may still fail if abort() is hit above; count EINTR only. */
	transfer(pong[0], ping[1], 1);
	pthread_join(t, NULL);
	struct profil_stats st = stats_now();
	profil_off();
	printf("%ld EINTR, %llu signals observed\n", atomic_load(&eintr_count),
	       (unsigned long long)st.observed);
	CHECK(atomic_load(&eintr_count) == 0, "%ld calls failed with EINTR",
	      atomic_load(&eintr_count));
	CHECK(st.observed > 20, "only %llu samples: the test did not sample",
	      (unsigned long long)st.observed);
	check_stats_add_up(&st);
	return check_done("eintr");
}
