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
	CHECK(profil_set_hz(100000) == 0, "profil_set_hz: %s", strerror(errno));
	profil_reset_stats();
	/* Scale 2: the one counter covers 64 KiB from the function on. */
	CHECK(profil(counter, sizeof counter, HOT_START(work), 2) == 0,
	      "profil: %s", strerror(errno));
	/* Until 100 000 samples were taken: a backend whose kernel skips
	   or throttles samples at this rate takes longer. */
	double used = 0;
	while (stats_now().taken < 100000 && used < 10.0)
		used += burn(work_work, 0.1);
	profil_off();	/* the samples still owed are taken here */
	struct profil_stats st = stats_now();
	printf("counter %u, taken %llu, saturated %llu, %.2f s\n", counter[0],
	       (unsigned long long)st.taken, (unsigned long long)st.saturated, used);
	CHECK(st.taken >= 100000, "only %llu samples in %.2f s at 100 kHz",
	      (unsigned long long)st.taken, used);
	CHECK(counter[0] == 65535, "counter %u, not held at 65535", counter[0]);
	CHECK(st.counted == 65535, "counted %llu", (unsigned long long)st.counted);
	CHECK(st.saturated == st.taken - st.outside - st.lost - 65535,
	      "saturated %llu, taken %llu, outside %llu, lost %llu",
	      (unsigned long long)st.saturated, (unsigned long long)st.taken,
	      (unsigned long long)st.outside, (unsigned long long)st.lost);
	CHECK(st.saturated > 10000, "saturated %llu", (unsigned long long)st.saturated);
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
