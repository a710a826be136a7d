/*
 * spin.c - three functions that burn CPU time in the ratio 3:2:1, for
 * the command's tests (profil run against perf record, symbols with
 * and without -g, stripped).  spin UNITS: each unit is about 10 ms.
 */
#include <stdlib.h>

static volatile unsigned long sink;

#define LOOP(n) for (unsigned long i_ = 0; i_ < (n); i_++) sink += i_ ^ (sink >> 3)

__attribute__((noinline)) void spin_three(unsigned long n) { LOOP(3 * n); }
__attribute__((noinline)) void spin_two(unsigned long n) { LOOP(2 * n); }
__attribute__((noinline)) static void spin_one(unsigned long n) { LOOP(n); }

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 50;
	for (long u = 0; u < units; u++) {
		spin_three(1000000);
		spin_two(1000000);
		spin_one(1000000);
	}
	return 0;
}
