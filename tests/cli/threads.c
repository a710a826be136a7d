/*
 * threads.c - threads that do known, different amounts of work, each in
 * a function of its own and under a name of its own, for the tests of
 * counts per thread (cli_threads.sh).
 *
 *   threads OUT UNITS        threads "small", "medium" and "large" spin
 *                            1, 2 and 3 UNITS (about 10 ms each) in
 *                            spin_small, spin_medium, spin_large; the
 *                            main thread 1 unit in spin_main
 *   threads OUT UNITS POOL   and then POOL threads "pool0"...: 8 at a
 *                            time, each spinning UNITS/10 units
 *
 * OUT gets one line per thread: its name, tid and CPU time in ns, from
 * the thread's own CPU clock (pthread_getcpuclockid) once it is done.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static long units;

#define LOOP(n) for (unsigned long i_ = 0; i_ < (n); i_++) sink += i_ ^ (sink >> 3)
#define UNIT 1000000ul

__attribute__((noinline)) void spin_small(unsigned long n) { LOOP(n * UNIT); }
__attribute__((noinline)) void spin_medium(unsigned long n) { LOOP(2 * n * UNIT); }
__attribute__((noinline)) void spin_large(unsigned long n) { LOOP(3 * n * UNIT); }
__attribute__((noinline)) void spin_main(unsigned long n) { LOOP(n * UNIT); }
__attribute__((noinline)) void spin_pool(unsigned long n) { LOOP(n * UNIT / 10); }

struct job {
	char name[16];
	void (*work)(unsigned long);
	pid_t tid;
	long long cpu_ns;
};

static long long cpu_ns(pthread_t t)
{
	clockid_t c;
	struct timespec ts;
	if (pthread_getcpuclockid(t, &c) != 0 || clock_gettime(c, &ts) != 0)
		return -1;
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *run(void *arg)
{
	struct job *j = arg;
	pthread_setname_np(pthread_self(), j->name);
	j->tid = gettid();
	j->work((unsigned long)units);
	j->cpu_ns = cpu_ns(pthread_self());
	return NULL;
}

static void start(pthread_t *t, struct job *j)
{
	if (pthread_create(t, NULL, run, j) != 0) {
		perror("pthread_create");
		exit(2);
	}
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	FILE *out = fopen(argv[1], "w");
	if (!out)
		return 2;
	units = atol(argv[2]);
	long pool = argc > 3 ? atol(argv[3]) : 0;
	struct job jobs[3] = {
		{ "small", spin_small, 0, 0 },
		{ "medium", spin_medium, 0, 0 },
		{ "large", spin_large, 0, 0 },
	};
	pthread_t t[8];
	for (int i = 0; i < 3; i++)
		start(&t[i], &jobs[i]);
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 3; i++)
		fprintf(out, "%s %d %lld\n", jobs[i].name, (int)jobs[i].tid, jobs[i].cpu_ns);
	for (long done = 0; done < pool;) {
		struct job p[8];
		int n = 0;
		for (; n < 8 && done + n < pool; n++) {
			snprintf(p[n].name, sizeof p[n].name, "pool%ld", done + n);
			p[n].work = spin_pool;
			start(&t[n], &p[n]);
		}
		for (int i = 0; i < n; i++) {
			pthread_join(t[i], NULL);
			fprintf(out, "%s %d %lld\n", p[i].name, (int)p[i].tid, p[i].cpu_ns);
		}
		done += n;
	}
	spin_main((unsigned long)units);
	fprintf(out, "main %d %lld\n", (int)gettid(), cpu_ns(pthread_self()));
	return fclose(out) != 0;
}
