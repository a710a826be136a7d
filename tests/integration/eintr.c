/*
 * Sampling does not make blocking calls fail with EINTR: two threads
 * pass a byte back and forth through two pipes, with blocking reads and
 * writes, while every thread is sampled at 100 000 Hz (the timers fire at
 * every kernel tick, often while a thread is in the kernel).  It goes on
 * until samples have landed often enough for the test to mean something.
 */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

enum { MIN_SAMPLES = 50, MAX_ROUNDS = 400000 };

static int ping[2], pong[2];
static _Atomic long eintr_count;

static char get(int fd)
{
	char c;
	ssize_t r;
	while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
		atomic_fetch_add(&eintr_count, 1);
	if (r != 1)
		abort();
	return c;
}

static void put(int fd, char c)
{
	ssize_t w;
	while ((w = write(fd, &c, 1)) < 0 && errno == EINTR)
		atomic_fetch_add(&eintr_count, 1);
	if (w != 1)
		abort();
}

/* Echo every byte back until a 'q'. */
static void *echo(void *unused)
{
	(void)unused;
	char c;
	while ((c = get(ping[0])) != 'q')
		put(pong[1], c);
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
	pthread_create(&t, NULL, echo, NULL);
	long rounds = 0;
	while (rounds < MAX_ROUNDS) {
		put(ping[1], 'x');
		get(pong[0]);
		if (++rounds % 10000 == 0 && stats_now().observed >= MIN_SAMPLES)
			break;
	}
	put(ping[1], 'q');
	pthread_join(t, NULL);
	struct profil_stats st = stats_now();
	profil_off();
	printf("%ld rounds, %ld EINTR, %llu signals observed\n", rounds,
	       atomic_load(&eintr_count), (unsigned long long)st.observed);
	CHECK(atomic_load(&eintr_count) == 0, "%ld calls failed with EINTR",
	      atomic_load(&eintr_count));
	CHECK(st.observed >= MIN_SAMPLES, "only %llu samples in %ld rounds",
	      (unsigned long long)st.observed, rounds);
	check_stats_add_up(&st);
	histogram_free(&h);
	return check_done("eintr");
}
