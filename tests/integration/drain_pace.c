/*
 * Under the perf backend a thread's samples reach the buffer at each
 * signal of its system-time timer: every 10 ms of its CPU time while it
 * uses system time, every 40 ms while it only computes.  Each signal
 * costs samples (the event's timer takes none when it fires while the
 * thread is in the kernel taking the signal), so a computing thread is
 * not signalled more than it needs.  The test counts how often the
 * samples taken change in about 1.5 s of CPU of each kind of work, and
 * checks the CPU time per change: at least 22 ms computing (40 ms, and
 * 10 ms for 40 after any step of system time), at most 18 ms reading
 * /dev/zero (10 ms, and the tick's 4 ms); and, under either backend, at
 * most 100 ms between two updates (SPEC section 3).  The statistics are
 * read from memory, with no system call, so that the computing phase
 * makes one only at an update.
 *
 * Under the timer backend each sample is taken at once: there the test
 * checks only that both phases are counted, at most 100 ms apart.
 */
#include "check.h"

#include <fcntl.h>
#include <unistd.h>

HOT_WORK(compute)

/* Samples taken so far: libprofil's statistics, read without a system call. */
static uint64_t taken(void)
{
	return stats_now().taken;
}

/* Updates of the samples taken while they grow by want, or until the
   thread has used seconds of CPU.  *cpu gets the thread's CPU time used,
   *gap the most of it between two updates (one system call an update). */
static unsigned updates(int fd, uint64_t want, double seconds, double *cpu, double *gap)
{
	static char block[65536];
	double t0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID), at = t0;
	uint64_t start = taken(), last = start, now;
	unsigned changes = 0, rounds = 0;
	*gap = 0;
	while ((now = taken()) - start < want) {
		if (now != last) {
			double t = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
			if (t - at > *gap)
				*gap = t - at;
			at = t;
			changes++;
			last = now;
		}
		if (fd >= 0 && read(fd, block, sizeof block) < 0)
			break;
		check_sink += work_compute(fd >= 0 ? 2000 : 20000);
		/* A backstop that costs one system call in 1000 rounds. */
		if (++rounds % 1000 == 0 && cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - t0 > seconds)
			break;
	}
	*cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
	return changes;
}

int main(void)
{
	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	struct profil_stats st = stats_now();
	uint64_t want = (uint64_t)(1.5 * (st.hz ? st.hz : 1000));
	int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "/dev/zero: %s", strerror(errno));

	/* A first slice: the thread gets its event and timer. */
	burn(work_compute, 0.05);
	double cpu_quiet, cpu_busy, gap_quiet, gap_busy;
	unsigned quiet = updates(-1, want, 10, &cpu_quiet, &gap_quiet);
	unsigned busy = updates(fd, want, 10, &cpu_busy, &gap_busy);
	CHECK(profil_off() == 0, "turning off");
	printf("computing: %u updates in %.3f s of CPU (%.1f ms each, at most %.1f); reading: %u"
	       " in %.3f s (%.1f ms each, at most %.1f)\n", quiet, cpu_quiet,
	       1000 * cpu_quiet / (quiet ? quiet : 1), 1000 * gap_quiet, busy, cpu_busy,
	       1000 * cpu_busy / (busy ? busy : 1), 1000 * gap_busy);
	CHECK(quiet > 0 && busy > 0, "counts did not grow: %u and %u updates", quiet, busy);
	/* SPEC section 3: brought up to date at least every 100 ms of CPU. */
	CHECK(gap_quiet <= 0.1 && gap_busy <= 0.1,
	      "%.1f and %.1f ms of CPU between two updates, more than 100",
	      1000 * gap_quiet, 1000 * gap_busy);
	if (backend_expected() == PROFIL_BACKEND_PERF && quiet > 0 && busy > 0) {
		CHECK(cpu_quiet / quiet >= 0.022,
		      "computing: the counts were updated every %.1f ms of CPU, want 40",
		      1000 * cpu_quiet / quiet);
		CHECK(cpu_busy / busy <= 0.018,
		      "reading: the counts were updated every %.1f ms of CPU, want 10",
		      1000 * cpu_busy / busy);
	}
	close(fd);
	histogram_free(&h);
	return check_done("drain_pace");
}
