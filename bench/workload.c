/*
 * workload.c - the CPU-bound program make bench measures.
 *
 *   workload ITERATIONS MODE [HZ]
 *
 * MODE is none (no profiling by this program: the baseline, and what
 * gperftools and perf record profile from outside), profil (profil() over
 * the program's text at HZ; built twice, against libprofil and against
 * glibc), threads (profil at HZ, two threads, one doing twice the work
 * of the other), or ring (built with WITH_RING: the bare perf ring of
 * ring_floor.h at HZ, the floor of what a perf sampler costs).  Prints
 * one line of key=value figures.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#ifdef WITH_LIBPROFIL
#include "profil.h"
#endif
#ifdef WITH_RING
#include "ring_floor.h"
#endif

extern char __executable_start[], etext[];

static volatile uint64_t sink;

/* The same loop twice, each copy in a section of its own, so that the
   samples of the two threads can be told apart by address. */
#define WORK(name)							\
	__attribute__((noinline, aligned(64), section("bench_" #name)))	\
	uint64_t work_##name(uint64_t n)				\
	{								\
		uint64_t x = n ^ sink;					\
		for (uint64_t i = 0; i < n; i++)			\
			x = x * 6364136223846793005u + 1442695040888963407u; \
		sink = x;						\
		return x;						\
	}
WORK(one)
WORK(two)

extern char __start_bench_one[], __stop_bench_one[], __start_bench_two[], __stop_bench_two[];

static double thread_cpu(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct job {
	uint64_t (*fn)(uint64_t);
	uint64_t n;
	double cpu;
};

static void *run(void *p)
{
	struct job *job = p;
	double t0 = thread_cpu();
	for (uint64_t done = 0; done < job->n; done += 1000000)
		job->fn(1000000);
	job->cpu = thread_cpu() - t0;
	return NULL;
}

static uint64_t sum(const unsigned short *c, uintptr_t offset, uintptr_t lo, uintptr_t hi)
{
	uint64_t s = 0;
	for (uintptr_t pc = lo & ~(uintptr_t)1; pc < hi; pc += 2)
		s += c[(pc - offset) / 2];
	return s;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: workload ITERATIONS none|profil|threads [HZ]\n");
		return 2;
	}
	uint64_t n = strtoull(argv[1], NULL, 10);
	const char *mode = argv[2];
	unsigned hz = argc > 3 ? (unsigned)atoi(argv[3]) : 1000;
	(void)hz;	/* glibc's profil has no rate to set */
	int ring = strcmp(mode, "ring") == 0;
	int profiling = strcmp(mode, "none") != 0 && !ring;
	uint64_t lost = 0;
#ifdef WITH_RING
	if (ring && ring_floor_start(hz) != 0) {
		perror("workload: perf ring");
		return 1;
	}
#else
	if (ring) {
		fprintf(stderr, "workload: built without WITH_RING\n");
		return 2;
	}
#endif

	uintptr_t offset = (uintptr_t)__executable_start;
	size_t ncounters = ((uintptr_t)etext - offset) / 2 + 1;
	unsigned short *counts = calloc(ncounters, sizeof *counts);
	if (profiling) {
#ifdef WITH_LIBPROFIL
		profil_set_hz(hz);
#endif
		if (profil(counts, ncounters * sizeof *counts, offset, 0x10000) != 0) {
			perror("workload: profil");
			return 1;
		}
	}
	struct job one = { work_one, n, 0 }, two = { work_two, 2 * n, 0 };
	if (strcmp(mode, "threads") == 0) {
		pthread_t a, b;
		pthread_create(&a, NULL, run, &one);
		pthread_create(&b, NULL, run, &two);
		pthread_join(a, NULL);
		pthread_join(b, NULL);
	} else {
		run(&one);
	}
	if (profiling)
		profil(counts, ncounters * sizeof *counts, offset, 0);
#ifdef WITH_RING
	uint64_t ring_samples = ring ? ring_floor_stop() : 0;
	lost = floor_ring.lost;
#endif

	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6
		     + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	uint64_t samples = 0;
	for (size_t i = 0; i < ncounters; i++)
		samples += counts[i];
	uint64_t in_one = sum(counts, offset, (uintptr_t)__start_bench_one, (uintptr_t)__stop_bench_one);
	uint64_t in_two = sum(counts, offset, (uintptr_t)__start_bench_two, (uintptr_t)__stop_bench_two);
	uint64_t observed = samples;
#ifdef WITH_LIBPROFIL
	struct profil_stats st;
	profil_get_stats(&st, sizeof st);
	if (profiling) {
		observed = st.observed;
		samples = st.taken;
		lost = st.lost;
	}
#endif
#ifdef WITH_RING
	if (ring)
		samples = observed = ring_samples;
#endif
	double share = in_one + in_two ? (double)in_one / (in_one + in_two) : 0;
	double cpu_share = one.cpu + two.cpu > 0 ? one.cpu / (one.cpu + two.cpu) : 0;
	printf("cpu=%.4f samples=%llu observed=%llu share=%.4f cpu_share=%.4f lost=%llu\n", cpu,
	       (unsigned long long)samples, (unsigned long long)observed, share, cpu_share,
	       (unsigned long long)lost);
	free(counts);
	return 0;
}
