/*
 * Cancellation inside libprofil (runtime audit F2): a deferred
 * pthread_cancel that acts while a thread is in libprofil must not
 * leave the sampler's lock held.  200 threads are created and cancelled
 * at once (they may be cancelled while their sampler is armed), and a
 * thread that turns profil() off and on again with a cancellation point
 * in its loop is cancelled; then the main thread calls profil() and
 * stops, which hangs for good if a lock was left held.  An alarm turns
 * a hang into a failure.
 */
#include "check.h"

#include <signal.h>

HOT_WORK(c)

static struct histogram h;

static void *short_lived(void *arg)
{
	(void)arg;
	check_sink += work_c(1000);
	return NULL;
}

static void *toggler(void *arg)
{
	(void)arg;
	for (;;) {
		histogram_start(&h);
		check_sink += work_c(1000);
		pthread_testcancel();
		profil_off();
		pthread_testcancel();
	}
	return NULL;
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char line[] = "cancel: hung (a lock left held by a cancelled thread?)\n";
	ssize_t r = write(2, line, sizeof line - 1);
	(void)r;
	_exit(1);
}

int main(void)
{
	signal(SIGALRM, on_alarm);
	alarm(60);
	h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	for (int i = 0; i < 200; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_lived, NULL) != 0)
			continue;
		pthread_cancel(t);
		pthread_join(t, NULL);
	}
	for (int i = 0; i < 20; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, toggler, NULL) != 0)
			continue;
		usleep(2000 + 500 * i);
		pthread_cancel(t);
		pthread_join(t, NULL);
	}
	CHECK(histogram_start(&h) == 0, "profil after the cancels: %s", strerror(errno));
	uint64_t got = burn_until_counted(&h, work_c, 10, 2.0);
	CHECK(got >= 10, "%llu samples after the cancels", (unsigned long long)got);
	profil_off();
	struct profil_stats st = stats_now();
	check_stats_add_up(&st);
	histogram_free(&h);
	return check_done("cancel");
}
