/*
 * sprofil replacing its regions again and again while two threads run:
 * after each call returns, the replaced counters never change again, and
 * every sample is filed in the region that holds its pc, in whatever
 * layout is in force (glibc's sprofil misfiles the samples that race a
 * change).  The layouts alternate: different orders, scales and an
 * overflow bin.
 */
#include "check.h"

#include <sys/profil.h>

HOT_WORK(light)
HOT_WORK(heavy)

#define ROUNDS 300

struct layout {
	uint16_t *light, *heavy, over;
	size_t nlight, nheavy;
	uint32_t slight, sheavy;
	uint64_t frozen;	/* the sum when it was replaced */
};

static uint64_t sum16(const uint16_t *c, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += __atomic_load_n(&c[i], __ATOMIC_RELAXED);
	return s;
}

static uint64_t layout_sum(const struct layout *l)
{
	return sum16(l->light, l->nlight) + sum16(l->heavy, l->nheavy)
		+ __atomic_load_n(&l->over, __ATOMIC_RELAXED);
}

static int install(struct layout *l, int odd)
{
	l->slight = odd ? 0x4000 : 0x10000;
	l->sheavy = odd ? 0x10000 : 0x8000;
	l->nlight = bins_count_for_range(HOT_START(light), HOT_STOP(light), l->slight);
	l->nheavy = bins_count_for_range(HOT_START(heavy), HOT_STOP(heavy), l->sheavy);
	l->light = calloc(l->nlight, 2);
	l->heavy = calloc(l->nheavy, 2);
	struct prof light = { l->light, l->nlight * 2, HOT_START(light), l->slight };
	struct prof heavy = { l->heavy, l->nheavy * 2, HOT_START(heavy), l->sheavy };
	struct prof over = { &l->over, 2, 0, 2 };
	struct prof even_set[] = { light, heavy };
	struct prof odd_set[] = { over, heavy, light };
	return odd ? sprofil(odd_set, 3, NULL, 0) : sprofil(even_set, 2, NULL, 0);
}

static double thread_cpu(pthread_t t)
{
	clockid_t c;
	pthread_getcpuclockid(t, &c);
	return cpu_seconds(c);
}

int main(void)
{
	static struct layout layouts[ROUNDS];
	struct busy a, b;
	busy_start(&a, work_light);
	busy_start(&b, work_heavy);
	double a0 = thread_cpu(a.thread), b0 = thread_cpu(b.thread);
	profil_reset_stats();
	int rounds = 0;
	for (; rounds < ROUNDS; rounds++) {
		CHECK(install(&layouts[rounds], rounds & 1) == 0, "sprofil: %s", strerror(errno));
		if (rounds > 0)
			layouts[rounds - 1].frozen = layout_sum(&layouts[rounds - 1]);
		struct timespec ts = { 0, 5000000 };
		nanosleep(&ts, NULL);
	}
	CHECK(sprofil(NULL, 0, NULL, 0) == 0, "off");
	layouts[rounds - 1].frozen = layout_sum(&layouts[rounds - 1]);
	double ca = thread_cpu(a.thread) - a0, cb = thread_cpu(b.thread) - b0;
	busy_stop(&a);
	busy_stop(&b);
	struct profil_stats st = stats_now();

	uint64_t light = 0, heavy = 0, over = 0, changed = 0;
	for (int i = 0; i < rounds; i++) {
		struct layout *l = &layouts[i];
		light += sum16(l->light, l->nlight);
		heavy += sum16(l->heavy, l->nheavy);
		over += l->over;
		changed += layout_sum(l) != l->frozen;
	}
	double seen = (double)light / (light + heavy), expected = ca / (ca + cb);
	printf("%d layouts: light %llu heavy %llu overflow %llu; share %.3f, CPU %.3f\n",
	       rounds, (unsigned long long)light, (unsigned long long)heavy,
	       (unsigned long long)over, seen, expected);
	CHECK(changed == 0, "%llu replaced layouts counted on", (unsigned long long)changed);
	CHECK(light + heavy > 300, "only %llu samples", (unsigned long long)(light + heavy));
	CHECK(within_error(seen, expected, (double)st.observed, 0.02),
	      "light's share %.3f, its thread's CPU share %.3f", seen, expected);
	/* Only the main thread, in sprofil and nanosleep, runs elsewhere;
	   and under ThreadSanitizer its runtime, which the work calls at
	   every access and where it delivers the signals it holds back. */
#if defined(__SANITIZE_THREAD__)
	CHECK(over <= (light + heavy) / 3, "overflow %llu", (unsigned long long)over);
#else
	CHECK(over <= (light + heavy) / 20, "overflow %llu", (unsigned long long)over);
#endif
	check_stats_add_up(&st);
	for (int i = 0; i < rounds; i++) {
		free(layouts[i].light);
		free(layouts[i].heavy);
	}
	return check_done("sprofil_threads");
}
