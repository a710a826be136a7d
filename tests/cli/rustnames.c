/*
 * rustnames.c - functions named as Rust mangles them, for the
 * demangler's tests where no rustc is installed
 * (tests/integration/cli_names.sh): a legacy name (with its hash) and two
 * v0 names (a generic type's method among them), taken from rustc's
 * output for tests/cli/rustspin.rs, and set by asm labels.  They burn CPU
 * time in the ratio 3:2:1.  rustnames UNITS: each unit is about 10 ms.
 */
#include <stdlib.h>

static volatile unsigned long sink;

#define LOOP(n) for (unsigned long i_ = 0; i_ < (n); i_++) sink += i_ ^ (sink >> 3)

/* names::legacy::burn */
void legacy_burn(unsigned long n) __asm__("_ZN5names6legacy4burn17h0123456789abcdefE");
/* spin::work::hot_loop */
void v0_hot_loop(unsigned long n) __asm__("_RNvNtCs9osdHJuzNgD_4spin4work8hot_loop");
/* <spin::work::Acc<u64>>::grind */
void v0_grind(unsigned long n) __asm__("_RNvMNtCs9osdHJuzNgD_4spin4workINtB2_3AccyE5grindB4_");

__attribute__((noinline)) void legacy_burn(unsigned long n) { LOOP(3 * n); }
__attribute__((noinline)) void v0_hot_loop(unsigned long n) { LOOP(2 * n); }
__attribute__((noinline)) void v0_grind(unsigned long n) { LOOP(n); }

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 50;
	for (long u = 0; u < units; u++) {
		legacy_burn(1000000);
		v0_hot_loop(1000000);
		v0_grind(1000000);
	}
	return 0;
}
