/*
 * hostile.c - a program for the hostile-environment tests
 * (tests/integration/hostile_*.sh), one mode per environment:
 *
 *   hostile noperf ERRNO PROG [ARG...]  run PROG with perf_event_open
 *       failing with ERRNO (a seccomp filter, as container runtimes
 *       install; 13, EACCES, is what perf_event_paranoid 3 gives)
 *   hostile open UNITS       burn in hot() and open a file at each unit:
 *       a program that needs every descriptor its RLIMIT_NOFILE allows
 *   hostile threads N UNITS  N threads burn in hot() at once
 *   hostile killperf N UNITS  first install a seccomp filter that kills
 *       the process at perf_event_open, then as threads
 *   hostile fill FILE UNITS  burn in hot(), fill the disk FILE is on,
 *       then burn in far() (text whose counters were never touched)
 *   hostile monitor UNITS [stop]  (built with -DWITH_LIBPROFIL -lprofil)
 *       open as above under monitor(3); with stop, end it with
 *       monitor(NULL) and print what that returned, else leave mon.out
 *       to exit
 *
 * Each unit is about 10 ms of CPU.  It prints what it did on standard
 * output, the same with or without the profiler.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "refuse_perf.h"

static volatile unsigned long sink;

#define LOOP(n) for (unsigned long i_ = 0; i_ < (n); i_++) sink += i_ ^ (sink >> 3)

#define UNIT 6000000	/* iterations: about 10 ms */

__attribute__((noinline)) void hot(unsigned long n) { LOOP(n); }

/* 64 KiB away from everything else: its counters are on pages of
   their own in a profil run file. */
__attribute__((noinline, aligned(65536))) void far(unsigned long n) { LOOP(n); }

static int noperf(int err, char **argv)
{
	if (refuse_perf(err) != 0) {
		perror("hostile: seccomp");
		return 126;
	}
	execvp(argv[0], argv);
	perror(argv[0]);
	return 127;
}

static int opens(long units)
{
	for (long u = 0; u < units; u++) {
		hot(UNIT);
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0) {
			printf("open failed at unit %ld: %s\n", u, strerror(errno));
			return 3;
		}
		close(fd);
	}
	printf("%ld opens\n", units);
	return 0;
}

static void *burner(void *units)
{
	for (long u = 0; u < (long)units; u++)
		hot(UNIT);
	return NULL;
}

static int threads(int n, long units)
{
	pthread_t t[256];
	if (n > 256)
		n = 256;
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, burner, (void *)units) != 0)
			return 3;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%d threads\n", n);
	return 0;
}

static int fill(const char *file, long units)
{
	for (long u = 0; u < units; u++)
		hot(UNIT);
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	static char block[65536];
	long blocks = 0;
	while (fd >= 0 && write(fd, block, sizeof block) > 0)
		blocks++;
	if (fd >= 0)
		close(fd);
	for (long u = 0; u < units; u++)
		far(UNIT);
	printf("disk filled\n");	/* the same however much it took */
	return fd < 0 ? 3 : 0;
}

#ifdef WITH_LIBPROFIL
#include <profil.h>

extern char __executable_start[], etext[];

static int monitored(long units, int stop)
{
	static unsigned short buf[1 << 16] __attribute__((aligned(8)));
	if (monitor((int (*)(void))(uintptr_t)__executable_start,
		    (int (*)(void))(uintptr_t)etext, buf, sizeof buf / 2, 0) != 0) {
		perror("monitor");
		return 3;
	}
	if (opens(units) != 0)
		return 3;
	if (stop) {
		errno = 0;
		int r = monitor(NULL, NULL, NULL, 0, 0);
		printf("monitor(NULL): %d %s\n", r, r ? strerror(errno) : "");
	}
	return 0;
}
#endif

int main(int argc, char **argv)
{
#ifdef WITH_LIBPROFIL
	if (argc >= 3 && strcmp(argv[1], "monitor") == 0)
		return monitored(atol(argv[2]), argc > 3);
#endif
	if (argc >= 4 && strcmp(argv[1], "killperf") == 0) {
		if (perf_filter(SECCOMP_RET_KILL_PROCESS) != 0) {
			perror("hostile: seccomp");
			return 126;
		}
		return threads(atoi(argv[2]), atol(argv[3]));
	}
	if (argc >= 4 && strcmp(argv[1], "noperf") == 0)
		return noperf(atoi(argv[2]), argv + 3);
	if (argc == 3 && strcmp(argv[1], "open") == 0)
		return opens(atol(argv[2]));
	if (argc == 4 && strcmp(argv[1], "threads") == 0)
		return threads(atoi(argv[2]), atol(argv[3]));
	if (argc == 4 && strcmp(argv[1], "fill") == 0)
		return fill(argv[2], atol(argv[3]));
	fprintf(stderr, "usage: hostile noperf|open|threads|fill ...\n");
	return 2;
}
