/*
 * A buffer that stops being writable while profiling is on (unmapped, or
 * made read-only) turns profiling off at the first sample that would
 * fault; the process goes on unharmed, the statistics say so, and
 * profil() works again afterwards.  Two threads are busy meanwhile.
 */
#include "check.h"

#include <pthread.h>
#include <stdatomic.h>

HOT_WORK(work)

/* Work until a sample has met the bad buffer (or 3 s of CPU). */
static void burn_until_off(void)
{
	for (double used = 0; stats_now().active && used < 3.0;)
		used += burn(work_work, 0.02);
	burn(work_work, 0.05);	/* and a little more: the process lives on */
}

static void expect_turned_off(const char *how)
{
	struct profil_stats st = stats_now();
	CHECK(st.faulted == 1, "%s: faulted %d", how, st.faulted);
	CHECK(st.active == 0, "%s: still active", how);
	CHECK(st.lost >= 1, "%s: the faulting sample is not counted as lost", how);
	check_stats_add_up(&st);
}

int main(void)
{
	struct busy other;
	busy_start(&other, work_work);

	/* Unmapped under the sampler. */
	struct histogram h = histogram_of_text();
	profil_reset_stats();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	burn_until_counted(&h, work_work, 20, 3.0);
	munmap(h.buf, h.bufsiz);
	burn_until_off();
	expect_turned_off("munmap");
	CHECK(profil_set_backend(PROFIL_BACKEND_TIMER) == 0,
	      "backend not settable after profiling turned itself off: errno %d", errno);

	/* Made read-only under the sampler: nothing written after that. */
	h = histogram_of_text();
	profil_reset_stats();
	CHECK(histogram_start(&h) == 0, "profil again: %s", strerror(errno));
	CHECK(stats_now().faulted == 0, "faulted still set after a new start");
	burn_until_counted(&h, work_work, 20, 3.0);
	mprotect(h.buf, h.bufsiz, PROT_READ);
	uint64_t frozen = histogram_total(&h);
	burn_until_off();
	CHECK(histogram_total(&h) == frozen, "read-only buffer changed");
	CHECK(frozen > 0, "no counts before mprotect");
	expect_turned_off("mprotect");

	/* And profiling works again. */
	struct histogram fresh = histogram_of_text();
	profil_reset_stats();
	CHECK(histogram_start(&fresh) == 0, "profil after faults: %s", strerror(errno));
	burn_until_counted(&fresh, work_work, 100, 3.0);
	histogram_free(&h);
	struct profil_stats st = stats_now();
	CHECK(st.active == 1 && st.faulted == 0, "active %d faulted %d", st.active, st.faulted);
	CHECK(histogram_total(&fresh) >= 100, "only %llu counts after restart",
	      (unsigned long long)histogram_total(&fresh));
	/* Nothing lost to faults: what lost holds is the tail of the two
	   threads (the CPU time after the last tick that sampled them). */
	CHECK(st.lost * period_seconds() < 0.1, "%llu lost with a good buffer",
	      (unsigned long long)st.lost);
	profil_off();
	histogram_free(&fresh);
	busy_stop(&other);
	return check_done("fault");
}
