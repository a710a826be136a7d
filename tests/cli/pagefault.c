/*
 * pagefault.c - kernel time spent in page faults, beside a thread that
 * blocks, for tests/integration/cli_pagefault.sh (issue 21: "kernel time
 * charged to a blocked wait").  pagefault SECONDS: a thread first-touches
 * fresh anonymous pages (one store a page, so that nearly all its time is
 * the kernel's, in the faults) for about SECONDS of CPU, while the main
 * thread blocks in pthread_join.  The mappings are never unmapped (the
 * kernel time of munmap would be munmap's): 32 MiB each, at most 512 MiB
 * (then it stops early), freed at exit.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

#define CHUNK (32ul << 20)
#define CHUNKS 16

static double seconds;

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void first_touch(volatile char *p, size_t n)
{
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
}

static void *toucher(void *unused)
{
	(void)unused;
	double end = cpu_now() + seconds;
	unsigned touched = 0;
	while (touched < CHUNKS && cpu_now() < end) {
		char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED) {
			perror("mmap");
			exit(2);
		}
		first_touch(p, CHUNK);
		touched++;
	}
	printf("%s\n", touched ? "touched" : "nothing touched");
	return NULL;
}

int main(int argc, char **argv)
{
	seconds = argc > 1 ? atof(argv[1]) : 1.0;
	pthread_t t;
	if (pthread_create(&t, NULL, toucher, NULL) != 0)
		return 2;
	pthread_join(t, NULL);
	return 0;
}
