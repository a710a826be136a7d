/*
 * stress_threads [run] - 10 000 threads made and ended while sampling at
 * the highest rate: in batches of 64 at once, a third joined after
 * returning, a third joined after pthread_exit, a third detached and
 * ending on their own.  Every thread gets a sampler and gives it back:
 * no timer, descriptor, thread or memory is left behind, and the
 * statistics add up.
 */
#include "stress.h"

HOT_WORK(work)

enum { BATCH = 64 };

static atomic_int detached_left;

static void *short_life(void *p)
{
	long kind = (long)p;
	check_sink += work_work(5000);
	if (kind == 2)
		atomic_fetch_sub(&detached_left, 1);
	if (kind == 1)
		pthread_exit(NULL);
	return NULL;
}

/* Make and end n threads, BATCH at a time. */
static void churn(int n)
{
	for (int made = 0; made < n; made += BATCH) {
		pthread_t t[BATCH];
		int joinable[BATCH] = { 0 };
		for (int i = 0; i < BATCH && made + i < n; i++) {
			long kind = (made + i) % 3;
			pthread_attr_t attr;
			pthread_attr_init(&attr);
			if (kind == 2) {
				pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
				atomic_fetch_add(&detached_left, 1);
			}
			int r = pthread_create(&t[i], &attr, short_life, (void *)kind);
			pthread_attr_destroy(&attr);
			CHECK(r == 0, "pthread_create: %s", strerror(r));
			if (r != 0 && kind == 2)
				atomic_fetch_sub(&detached_left, 1);
			joinable[i] = r == 0 && kind != 2;
		}
		for (int i = 0; i < BATCH; i++)
			if (joinable[i])
				pthread_join(t[i], NULL);
	}
	while (atomic_load(&detached_left) > 0)
		usleep(1000);
}

int main(int argc, char **argv)
{
	int preloaded = stress_preloaded(argc, argv);
	int threads = STRESS_SIZE(10000);
	stress_baseline();
	struct stress_usage idle = stress_usage_now();
	struct histogram h = stress_start(preloaded);

	int warm = threads / 10;
	churn(warm);
	struct stress_usage before = stress_usage_now();
	churn(threads - warm);
	stress_burn(&h, work_work);
	struct stress_usage after = stress_usage_now();
	/* Thread stacks are cached by glibc and reused: the memory of
	   10 000 threads is that of the first few batches. */
	stress_check_usage("while sampling", before, after, 4096, 65536);

	struct profil_stats st = stats_now();
	CHECK(st.threads >= (unsigned)threads, "%u threads sampled of %d made", st.threads,
	      threads);
	stress_finish(preloaded, &h, idle, 16384);
	printf("%d threads\n", threads);
	return check_done("stress_threads");
}
