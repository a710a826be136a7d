/*
 * busfault.c MODE - CPU work in a program that handles SIGBUS itself,
 * as zstd does: MODE exit, a handler that calls _exit(99) (most do);
 * note, a handler that returns; none, no handler.  Prints "done" and
 * exits 0 when no SIGBUS came, which is what it does unprofiled.  A
 * fault of the profiler's reaching the handler shows as status 99 or
 * a hang (the handler returns, the fault comes again).
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void die(int sig)
{
	(void)sig;
	_exit(99);
}

static volatile sig_atomic_t faults;

static void note(int sig)
{
	(void)sig;
	faults++;
}

/* Spread over many pages of text, so that many counter pages are
   wanted: each function its own copy of the loop. */
#define WORK(n) __attribute__((noinline)) static double work##n(double x) \
	{ for (int i = 0; i < 200000; i++) x = x * 1.0000001 + 1e-9 * n; return x; }
WORK(0) WORK(1) WORK(2) WORK(3) WORK(4) WORK(5) WORK(6) WORK(7)

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "none";
	if (strcmp(mode, "exit") == 0)
		signal(SIGBUS, die);
	else if (strcmp(mode, "note") == 0)
		signal(SIGBUS, note);
	double x = 1;
	for (int k = 0; k < 60; k++) {
		x = work0(x) + work1(x) + work2(x) + work3(x);
		x = (x + work4(x) + work5(x) + work6(x) + work7(x)) / 8;
		char line[64];	/* libc's text too */
		snprintf(line, sizeof line, "%f %d", x, k);
		x += (double)strlen(line) * 1e-12;
	}
	printf("done%s\n", faults ? " after SIGBUS" : "");
	return 0;
}
