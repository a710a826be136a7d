/*
 * graph.c [SCALE] - a -pg program with a call graph to check against
 * gprof's: a plain tree (main -> one_side and other_side -> leaf, called
 * from them in a 3:1 ratio), direct recursion (fib), mutual recursion
 * (is_even and is_odd: a cycle; ping and pong, another; tri_a, tri_b and
 * tri_c, entered at two of them, and up and down calling into it) and a
 * function libc calls back (the qsort comparator: a spontaneous caller).
 * Each part burns CPU so that time propagates along the arcs.  SCALE
 * (default 1) multiplies the work.  It prints "compares=N", the calls qsort made,
 * on standard error.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;
static int scale = 1;
static unsigned long compares;

__attribute__((noinline)) void burn(int n)
{
	unsigned long x = sink;
	for (int i = 0; i < n * scale; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	sink = x;
}

/* Called 3 times from one_side for each time from other_side. */
__attribute__((noinline)) void leaf(void)
{
	burn(200000);
	sink++;		/* no tail call: burn's caller stays leaf */
}

__attribute__((noinline)) void one_side(void)
{
	for (int i = 0; i < 3; i++)
		leaf();
	burn(100000);
}

__attribute__((noinline)) void other_side(void)
{
	leaf();
	sink++;
}

__attribute__((noinline)) unsigned long fib(int n)
{
	burn(200);
	return n < 2 ? (unsigned long)n : fib(n - 1) + fib(n - 2);
}

/*
 * Two cycles whose members interleave in the text (is_even, ping, is_odd,
 * pong: built with -fno-toplevel-reorder), entered at is_odd and at ping:
 * gprof numbers cycles by the address of the member its search reached
 * first (ping's cycle 1), not of their lowest member (is_even).
 */
int is_odd(unsigned n);
int pong(unsigned n);

__attribute__((noinline)) int is_even(unsigned n)
{
	burn(3000);
	int r = n == 0 ? 1 : is_odd(n - 1);
	sink += r;	/* no tail call, no loop made of the recursion */
	return r;
}

__attribute__((noinline)) int ping(unsigned n)
{
	burn(500);
	int r = n ? pong(n - 1) : 0;
	sink += r;
	return r;
}

__attribute__((noinline)) int is_odd(unsigned n)
{
	burn(1000);
	int r = n == 0 ? 0 : is_even(n - 1);
	sink += r;
	return r;
}

__attribute__((noinline)) int pong(unsigned n)
{
	burn(700);
	int r = n ? ping(n - 1) + 1 : 1;
	sink += r;
	return r;
}

/* A cycle of three entered at two of them, and a cycle (up, down) that
   calls into it: time flows from one cycle to the other as a whole. */
int tri_c(int n);

__attribute__((noinline)) int tri_a(int n)
{
	burn(1000);
	int r = n > 0 ? tri_c(n - 1) : 0;
	sink += r;
	return r;
}

__attribute__((noinline)) int tri_b(int n)
{
	burn(2000);
	int r = n > 0 ? tri_a(n - 1) + 1 : 1;
	sink += r;
	return r;
}

__attribute__((noinline)) int tri_c(int n)
{
	burn(3000);
	int r = n > 0 ? tri_b(n - 1) : 2;
	sink += r;
	return r;
}

int up(int n);

__attribute__((noinline)) int down(int n)
{
	burn(500);
	int r = n > 0 ? up(n - 1) : 0;
	sink += r;
	return r;
}

__attribute__((noinline)) int up(int n)
{
	burn(800);
	int r = n > 0 ? down(n - 1) + tri_a(1) : 0;
	sink += r;
	return r;
}

__attribute__((noinline)) int compare(const void *a, const void *b)
{
	burn(300);
	compares++;
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	if (argc > 1)
		scale = atoi(argv[1]);
	for (int i = 0; i < 20; i++) {
		one_side();
		other_side();
	}
	sink += fib(20);
	for (unsigned i = 0; i < 200; i++)
		sink += is_odd(i);
	for (unsigned i = 0; i < 50; i++)
		sink += ping(i);
	for (int i = 0; i < 100; i++) {
		sink += tri_b(i % 30);
		sink += tri_a(i % 7);
		sink += up(i % 11);
		sink += down(i % 5);
	}
	unsigned v[2000];
	for (unsigned i = 0; i < 2000; i++)
		v[i] = (i * 2654435761u) >> 7;
	qsort(v, 2000, sizeof *v, compare);
	fprintf(stderr, "compares=%lu\n", compares);
	return v[0] > v[1999];
}
