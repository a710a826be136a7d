/*
 * calls.c - a known call structure for the call stack views: main calls
 * from_a, which calls work_c with 3 units of work, and from_b, which
 * calls it with 1 unit through step_b, a function inlined into from_b.
 * So work_c is called from from_a for 75% of its time and from step_b
 * (inlined in from_b) for 25%.  calls UNITS: each unit is about 4 ms.
 */
#include <stdlib.h>

static volatile unsigned long sink;

#define LOOP(n) for (unsigned long i_ = 0; i_ < (n); i_++) sink += i_ ^ (sink >> 3)

__attribute__((noinline)) void work_c(unsigned long n) { LOOP(n); }
__attribute__((noinline)) void from_a(unsigned long n) { work_c(3 * n); sink++; }
static inline __attribute__((always_inline)) void step_b(unsigned long n) { work_c(n); sink++; }
__attribute__((noinline)) void from_b(unsigned long n) { step_b(n); sink++; }

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 50;
	/* Each unit's size drawn from 0.8 to 1.2 of a million: a cycle of
	   a fixed length can lock to the kernel's tick, at which the timer
	   backend's signals come, and give 64/36 for 75/25. */
	unsigned long long x = 42;
	for (long u = 0; u < units; u++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		unsigned long n = 800000 + (unsigned long)((x >> 33) % 400000);
		from_a(n);
		from_b(n);
	}
	return 0;
}
