/*
 * classic.c - the classic calls write files for profil report: the same
 * work (spin_three and spin_one, 3:1) recorded by pcsample into
 * work.pcs, and by monitor into mon.out, in the current directory; then
 * time spent in the vDSO (clock_gettime) recorded by pcsample into
 * vdso.pcs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <profil.h>

static volatile unsigned long sink;

#define LOOP(n) for (unsigned long i_ = 0; i_ < (n); i_++) sink += i_ ^ (sink >> 3)

__attribute__((noinline)) void spin_three(unsigned long n) { LOOP(3 * n); }
__attribute__((noinline)) void spin_one(unsigned long n) { LOOP(n); }

extern char __executable_start[], etext[];

static void work(int units)
{
	for (int u = 0; u < units; u++) {
		spin_three(1000000);
		spin_one(1000000);
	}
}

int main(int argc, char **argv)
{
	int units = argc > 1 ? atoi(argv[1]) : 40;
	static uintptr_t pcs[1 << 20];
	pcsample(pcs, 1 << 20);
	work(units);
	long n = pcsample(NULL, 0);
	if (n <= 0 || profil_pcsample_save("work.pcs", pcs, n) != 0) {
		perror("work.pcs");
		return 1;
	}
	/* aligned_alloc wants a size that is a multiple of the alignment. */
	size_t words = (((size_t)(etext - __executable_start)) / 2 + 64 + 3) & ~(size_t)3;
	unsigned short *buf = aligned_alloc(8, words * 2);
	if (!buf || monitor((int (*)(void))(uintptr_t)__executable_start,
			    (int (*)(void))(uintptr_t)etext, buf, words, 0) != 0) {
		perror("monitor");
		return 1;
	}
	work(units);
	if (monitor(NULL, NULL, NULL, 0, 0) != 0) {
		perror("mon.out");
		return 1;
	}
	free(buf);
	/* CPU time in the vDSO, an object with no file behind it. */
	pcsample(pcs, 1 << 20);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + t.tv_nsec - t0.tv_nsec < 300000000L);
	long nv = pcsample(NULL, 0);
	if (nv <= 0 || profil_pcsample_save("vdso.pcs", pcs, nv) != 0) {
		perror("vdso.pcs");
		return 1;
	}
	printf("%ld pcs\n", n);
	return 0;
}
