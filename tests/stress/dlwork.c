/*
 * dlwork.c - the library stress_dlopen opens and closes 10 000 times.
 * It runs code at every stage: its constructor and destructor, and
 * dlwork_run, which the program calls; a thread-local counter makes
 * every load give the library a TLS block too.
 */
#include <stdint.h>

static volatile uint64_t sink;
static __thread uint64_t calls;
int dlwork_loaded;	/* set by the constructor, read by the program */

static uint64_t spin(uint64_t n)
{
	uint64_t x = n ^ sink;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005u + 1442695040888963407u;
	return x;
}

__attribute__((constructor)) static void loaded(void)
{
	sink += spin(2000);
	dlwork_loaded = 1;
}

__attribute__((destructor)) static void unloaded(void)
{
	sink += spin(2000);
}

uint64_t dlwork_run(uint64_t n)
{
	calls++;
	sink += spin(n);
	return calls;
}
