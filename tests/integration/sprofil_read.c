/*
 * A program that spends 70% of its CPU time in its own code and 30% in
 * read(2) comes out 70/30 in two sprofil regions, the program's text and
 * libc's, within the sampling error: time the kernel spends in read is
 * charged to the pc that entered it, in libc.  (glibc's own sprofil gives
 * 62/38 here: it files samples in the wrong region.)  Under either
 * backend: the perf backend charges system time with a timer of its own.
 */
#include "check.h"

#include <fcntl.h>
#include <link.h>
#include <sys/profil.h>

HOT_WORK(user)

struct span { uintptr_t lo, hi; };

static int find_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct span *s = arg;
	if (!strstr(info->dlpi_name, "libc.so"))
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

int main(void)
{
	struct span libc = { 0, 0 };
	dl_iterate_phdr(find_libc, &libc);
	CHECK(libc.hi > libc.lo, "libc's text not found");
	int fd = open("/dev/zero", O_RDONLY);
	CHECK(fd >= 0, "/dev/zero: %s", strerror(errno));
	static char block[1 << 20];

	struct histogram text = histogram_of_text();
	size_t nlibc = bins_count_for_range(libc.lo, libc.hi, 0x800);
	uint32_t *clibc = calloc(nlibc, 4);
	uint32_t *ctext = calloc(text.bufsiz / 2, 4), over = 0;
	struct prof regions[] = {
		{ ctext, text.bufsiz * 2, text.offset, 0x10000 },
		{ clibc, nlibc * 4, libc.lo, 0x800 },
		{ &over, 4, 0, 2 },
	};
	profil_reset_stats();
	CHECK(sprofil(regions, 3, NULL, PROF_UINT) == 0, "sprofil: %s", strerror(errno));
	double in_user = 0, in_read = 0;
	while (in_user + in_read < 2.5) {
		/* Slices of 20 ms, steered to 70/30 by the CPU clock. */
		double t0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID), t = t0;
		if (in_read < 0.3 * (in_user + in_read)) {
			while (t - t0 < 0.02) {
				if (read(fd, block, sizeof block) <= 0)
					break;
				t = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
			}
			in_read += t - t0;
		} else {
			in_user += burn(work_user, 0.02);
		}
	}
	CHECK(sprofil(NULL, 0, NULL, 0) == 0, "off");
	struct profil_stats st = stats_now();
	uint64_t user = 0, inlibc = 0;
	for (size_t i = 0; i < text.bufsiz / 2; i++)
		user += ctext[i];
	for (size_t i = 0; i < nlibc; i++)
		inlibc += clibc[i];
	/* The overflow bin holds the vDSO's clock_gettime, which the read
	   slices call after every read: their CPU time is in in_read. */
	double seen = (double)user / (user + inlibc + over);
	double expected = in_user / (in_user + in_read);
	printf("program %llu libc %llu overflow %llu: program's share %.3f, CPU says %.3f, "
	       "difference %+.3f\n", (unsigned long long)user, (unsigned long long)inlibc,
	       (unsigned long long)over, seen, expected, seen - expected);
	CHECK(within_error(seen, expected, (double)st.observed, 0.01),
	      "program's share %.3f, CPU says %.3f", seen, expected);
	/* Everything else went to the overflow bin (under ASan, its read
	   interceptor runs in libasan). */
	CHECK(st.outside == 0, "%llu samples outside", (unsigned long long)st.outside);
	check_stats_add_up(&st);
	histogram_free(&text);
	free(clibc);
	free(ctext);
	return check_done("sprofil_read");
}
