/*
 * A counter that reaches 65535 stays there, and every sample that could
 * not be added is counted as saturated: at 100 000 samples a CPU-second,
 * 100 000 samples put far more than 65535 samples into one counter.
 */
#include "check.h"

HOT_WORK(work)

int main(void)
{
	unsigned short counter[1] = { 0 };
	/* Saturation is the sinks', whatever the backend.  The perf backend
	   takes at most 10 kHz here (65535 samples would take 7 s); the
	   timer's samples at 100 kHz each stand for the periods of a tick. */
	CHECK(profil_set_backend(PROFIL_BACKEND_TIMER) == 0, "profil_set_backend: %s",
	      strerror(errno));
	CHECK(profil_set_hz(100000) == 0, "profil_set_hz: %s", strerror(errno));
	profil_reset_stats();
	/* Scale 2: the one counter covers 64 KiB from the function on. */
	CHECK(profil(counter, sizeof counter, HOT_START(work), 2) == 0,
	      "profil: %s", strerror(errno));
	/* Until 100 000 samples fell in the counter's range: a backend whose
	   kernel skips or throttles samples at this rate takes longer, and
	   under a sanitizer most samples fall in its runtime, outside. */
	double used = 0;
	for (struct profil_stats now = stats_now();
	     now.counted + now.saturated < 100000 && used < 20.0; now = stats_now())
		used += burn(work_work, 0.1);
	profil_off();	/* the samples still owed are taken here */
	struct profil_stats st = stats_now();
	printf("counter %u, taken %llu, saturated %llu, %.2f s\n", counter[0],
	       (unsigned long long)st.taken, (unsigned long long)st.saturated, used);
	CHECK(st.counted + st.saturated >= 100000,
	      "only %llu samples in range in %.2f s at 100 kHz",
	      (unsigned long long)(st.counted + st.saturated), used);
	CHECK(counter[0] == 65535, "counter %u, not held at 65535", counter[0]);
	CHECK(st.counted == 65535, "counted %llu", (unsigned long long)st.counted);
	CHECK(st.saturated == st.taken - st.outside - st.lost - 65535,
	      "saturated %llu, taken %llu, outside %llu, lost %llu",
	      (unsigned long long)st.saturated, (unsigned long long)st.taken,
	      (unsigned long long)st.outside, (unsigned long long)st.lost);
	CHECK(st.saturated >= 100000 - 65535, "saturated %llu", (unsigned long long)st.saturated);
	check_stats_add_up(&st);

	/* A 0-to-65535 counter set by the program goes no further. */
	counter[0] = 65534;
	CHECK(profil(counter, sizeof counter, HOT_START(work), 2) == 0, "profil again");
	for (double spent = 0; counter[0] < 65535 && spent < 3.0;)
		spent += burn(work_work, 0.02);
	burn(work_work, 0.05);
	profil_off();
	CHECK(counter[0] == 65535, "counter %u after starting at 65534", counter[0]);
	return check_done("saturate");
}
