/*
 * sprofil: several regions at once, one of them in a shared library
 * (libm), and the overflow bin; the region with the highest pr_off wins
 * where regions overlap; 32-bit counters pass 65535; three calls in a
 * row replace the regions and never touch the replaced counters; tvp
 * receives the period the counts are taken at; bad arguments fail with
 * EINVAL or EFAULT and leave the previous profile on.
 */
#include "check.h"
#include "../../src/common/rates.h"

#include <link.h>
#include <sys/profil.h>

HOT_WORK(light)
HOT_WORK(heavy)

/* Work done inside libm: the caller's loop is a small part of it. */
HOT_DECLARE(inlibm);
HOT(inlibm) uint64_t work_inlibm(uint64_t n)
{
	double x = (double)(n ^ check_sink) * 1e-9;
	for (uint64_t i = 0; i < n / 40; i++)
		x = sin(x + 0.5);
	check_sink += (uint64_t)(x * 1e6);
	return (uint64_t)x;
}

struct span { uintptr_t lo, hi; };

/* The executable segment of the object whose name contains "libm.so". */
static int find_libm(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct span *s = arg;
	if (!strstr(info->dlpi_name, "libm.so"))
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			s->lo = info->dlpi_addr + ph->p_vaddr;
			s->hi = s->lo + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

static uint64_t sum32(const uint32_t *c, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s += __atomic_load_n(&c[i], __ATOMIC_RELAXED);
	return s;
}

static double period_of(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

int main(void)
{
	struct span libm = { 0, 0 };
	dl_iterate_phdr(find_libm, &libm);
	CHECK(libm.hi > libm.lo, "libm's text not found");

	/* 1. light, libm, and the overflow bin for everything else. */
	size_t nlight = bins_count_for_range(HOT_START(light), HOT_STOP(light), 0x10000);
	size_t nlibm = bins_count_for_range(libm.lo, libm.hi, 0x8000);
	uint32_t *clight = calloc(nlight, 4), *clibm = calloc(nlibm, 4), over = 0;
	struct prof regions[] = {
		{ &over, sizeof over, 0, 2 },
		{ clight, nlight * 4, HOT_START(light), 0x10000 },
		{ NULL, 0, 0, 1 },	/* scale below 2: ignored */
		{ clibm, nlibm * 4, libm.lo, 0x8000 },
	};
	struct timeval tv = { 99, 99 };
	profil_reset_stats();
	CHECK(sprofil(regions, 4, &tv, PROF_UINT) == 0, "sprofil: %s", strerror(errno));
	CHECK(period_of(&tv) == 1e-3, "tvp says %ld.%06ld s at 1000 Hz",
	      (long)tv.tv_sec, (long)tv.tv_usec);
	double cpu[3] = { 0, 0, 0 };
	uint64_t (*fn[3])(uint64_t) = { work_light, work_inlibm, work_heavy };
	double t0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
	while (cpu[0] + cpu[1] + cpu[2] < 2.4)
		for (int i = 0; i < 3; i++)
			cpu[i] += burn(fn[i], 0.03 * (i + 1));
	double cpu_all = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - t0;
	CHECK(sprofil(NULL, 0, NULL, 0) == 0, "turning off");
	struct profil_stats st = stats_now();
	uint64_t n_light = sum32(clight, nlight), n_libm = sum32(clibm, nlibm);
	uint64_t total = n_light + n_libm + over;
	double n = (double)st.observed;
	printf("light %llu libm %llu overflow %llu; cpu %.2f %.2f %.2f s\n",
	       (unsigned long long)n_light, (unsigned long long)n_libm,
	       (unsigned long long)over, cpu[0], cpu[1], cpu[2]);
	CHECK(st.outside == 0, "%llu samples outside, with an overflow bin",
	      (unsigned long long)st.outside);
	CHECK(total == st.counted, "counters hold %llu, counted %llu",
	      (unsigned long long)total, (unsigned long long)st.counted);
	double sum = cpu[0] + cpu[1] + cpu[2];
	CHECK(within_error((double)n_light / total, cpu[0] / sum, n, 0.02),
	      "light share %.3f, CPU share %.3f", (double)n_light / total, cpu[0] / sum);
	/* The caller's loop and sin's argument set-up run outside libm. */
	CHECK(within_error((double)n_libm / total, cpu[1] / sum, n, 0.08),
	      "libm share %.3f, CPU share %.3f", (double)n_libm / total, cpu[1] / sum);
	CHECK(within_error((double)over / total, cpu[2] / sum, n, 0.08),
	      "overflow share %.3f, heavy's CPU share %.3f", (double)over / total, cpu[2] / sum);
	/* The period reported is the one counts are taken at: counts, and
	   the samples a loaded machine made the backend lose, stand for the
	   CPU time used. */
	CHECK(fabs((total + st.lost) * period_of(&tv) - cpu_all) <= 0.03 * cpu_all + 0.01,
	      "counts (%llu lost) stand for %.3f s at the reported period, %.3f s used",
	      (unsigned long long)st.lost, (total + st.lost) * period_of(&tv), cpu_all);
	CHECK(st.lost <= st.taken / 5, "%llu of %llu samples lost",
	      (unsigned long long)st.lost, (unsigned long long)st.taken);
	check_stats_add_up(&st);

	/* 2. Overlapping regions: the one with the higher pr_off wins.  The
	   previous counters are never touched again. */
	uint64_t before_light = sum32(clight, nlight), before_over = over;
	struct histogram text = histogram_of_text();
	unsigned short *clight16 = calloc(nlight, 2);
	struct prof overlap[] = {
		{ text.buf, text.bufsiz, text.offset, 0x10000 },
		{ clight16, nlight * 2, HOT_START(light), 0x10000 },
	};
	CHECK(profil_set_hz(200) == 0, "profil_set_hz");
	profil_reset_stats();
	CHECK(sprofil(overlap, 2, &tv, 0) == 0, "second sprofil: %s", strerror(errno));
	CHECK(period_of(&tv) == 5e-3, "tvp says %ld.%06ld s at 200 Hz",
	      (long)tv.tv_sec, (long)tv.tv_usec);
	t0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
	burn(work_light, 0.4);
	burn(work_heavy, 0.2);
	double cpu2 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - t0;
	/* 3. A third call, replacing the second's regions: 32-bit counters
	   go past 65535 (at 100 kHz, set once the second's are final). */
	uint32_t big = 0;
	struct prof one[] = { { &big, sizeof big, HOT_START(heavy), 2 } };
	CHECK(sprofil(one, 1, &tv, PROF_UINT | PROF_FAST) == 0, "third sprofil: %s",
	      strerror(errno));
	CHECK(period_of(&tv) == 5e-3, "third call: tvp says %ld.%06ld s at 200 Hz",
	      (long)tv.tv_sec, (long)tv.tv_usec);
	/* The second call's counters are final once the third has replaced
	   them (a backend that batches brings them up to date first). */
	struct profil_stats st2 = stats_now();
	uint64_t in_light16 = 0;
	for (size_t i = 0; i < nlight; i++)
		in_light16 += clight16[i];
	uint64_t text_light = histogram_sum(&text, HOT_START(light), HOT_STOP(light));
	uint64_t text_heavy = histogram_sum(&text, HOT_START(heavy), HOT_STOP(heavy));
	printf("overlap: light region %llu, text region over light %llu, heavy %llu\n",
	       (unsigned long long)in_light16, (unsigned long long)text_light,
	       (unsigned long long)text_heavy);
	CHECK(in_light16 > 40 && text_light == 0 && text_heavy > 15,
	      "light region %llu, whole-text region over light %llu, heavy %llu",
	      (unsigned long long)in_light16, (unsigned long long)text_light,
	      (unsigned long long)text_heavy);
	/* The counts stand for the CPU time at the new rate: a mistaken
	   period would be off by a factor, not by a fifth.  A fifth is what
	   the kernel's task clock may miss on a loaded 2-core machine (a
	   fresh-clone run saw 0.490 s counted for 0.600 s, nothing lost). */
	uint64_t counted2 = in_light16 + histogram_total(&text) + st2.outside;
	CHECK(fabs((counted2 + st2.lost) * 5e-3 - cpu2) <= 0.2 * cpu2 + 0.02,
	      "at 200 Hz counts (%llu outside, %llu lost, %llu observed) stand for %.3f s, "
	      "%.3f s used", (unsigned long long)st2.outside, (unsigned long long)st2.lost,
	      (unsigned long long)st2.observed, (counted2 + st2.lost) * 5e-3, cpu2);
	CHECK(sum32(clight, nlight) == before_light && over == before_over,
	      "replaced counters changed");
	/* The perf backend refuses a rate above its limit (10 kHz at most):
	   its counter starts near the top, so that it passes 65535 soon. */
	unsigned fast = 100000;
	if (backend_expected() == PROFIL_BACKEND_PERF) {
		errno = 0;
		CHECK(profil_set_hz(100000) == -1 && errno == EINVAL,
		      "profil_set_hz(100000) under perf: not EINVAL");
		fast = rate_perf_max();
		uint32_t now = __atomic_load_n(&big, __ATOMIC_RELAXED);
		if (now < 60000)
			__atomic_fetch_add(&big, 60000 - now, __ATOMIC_RELAXED);
	}
	CHECK(profil_set_hz(fast) == 0, "profil_set_hz(%u)", fast);
	CHECK(sprofil(one, 1, &tv, PROF_UINT) == 0, "fourth sprofil: %s", strerror(errno));
	CHECK(period_of(&tv) == 1.0 / fast, "tvp says %ld.%06ld s at %u Hz",
	      (long)tv.tv_sec, (long)tv.tv_usec, fast);
	for (double spent = 0; __atomic_load_n(&big, __ATOMIC_RELAXED) < 70000 && spent < 5;)
		spent += burn(work_heavy, 0.05);
	/* 4. Errors leave the profile on. */
	struct prof bad_scale[] = { { &big, sizeof big, 0, 0x10001 } };
	struct prof bad_buf[] = { { (void *)16, 64, 0, 0x10000 } };
	struct prof two_over[] = { { &big, 4, 0, 2 }, { &big, 4, 0, 2 } };
	CHECK(sprofil(bad_scale, 1, NULL, 0) == -1 && errno == EINVAL, "scale 0x10001");
	CHECK(sprofil(bad_buf, 1, NULL, 0) == -1 && errno == EFAULT, "unmapped buffer");
	CHECK(sprofil(NULL, 1, NULL, 0) == -1 && errno == EFAULT, "profp NULL");
	CHECK(sprofil(one, -1, NULL, 0) == -1 && errno == EINVAL, "profcnt -1");
	CHECK(sprofil(one, 1, NULL, 0x100) == -1 && errno == EINVAL, "unknown flag");
	CHECK(sprofil(two_over, 2, NULL, PROF_UINT) == -1 && errno == EINVAL, "two overflow bins");
	CHECK(stats_now().active == 1, "an error turned profiling off");
	uint32_t was = __atomic_load_n(&big, __ATOMIC_RELAXED);
	burn(work_heavy, 0.05);
	CHECK(sprofil(one, 0, NULL, 0) == 0, "turning off");
	printf("32-bit counter %u\n", big);
	CHECK(big > 65535 && big > was, "32-bit counter at %u (was %u)", big, was);
	CHECK(sprofil(one, 0, NULL, 0) == 0, "turning off twice");
	histogram_free(&text);
	free(clight);
	free(clibm);
	free(clight16);
	return check_done("sprofil");
}
