/*
 * No thread of ours (SPEC section 2): a single-threaded program stays
 * single-threaded under every mode it can call, profil(), sprofil(),
 * pcsample() and the native API, under the backend run.sh names, and
 * in a fork child that samples again.  /proc/self/task has one entry
 * while samples are being counted, and glibc's __libc_single_threaded
 * (which goes to 0 at the first pthread_create and never back) is still
 * 1 at the end.  The modes' samples are checked to have been counted,
 * so that the check is made while profiling is really on.
 */
#include "check.h"

#include <sys/single_threaded.h>
#include <sys/time.h>
#include <sys/wait.h>

HOT_WORK(one)

static int tasks(void)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* Burn until samples show, checking the task count all along. */
static void alone(const char *mode, uint64_t (*counted)(void))
{
	uint64_t before = counted();
	double used = 0;
	int most = 0;
	while (counted() - before < 20 && used < 3) {
		used += burn(work_one, 0.02);
		int n = tasks();
		most = n > most ? n : most;
	}
	CHECK(counted() - before >= 20, "%s: %llu samples in %.2f s of CPU", mode,
	      (unsigned long long)(counted() - before), used);
	CHECK(most == 1, "%s: %d threads in /proc/self/task", mode, most);
	CHECK(__libc_single_threaded == 1, "%s: __libc_single_threaded is %d", mode,
	      __libc_single_threaded);
}

static struct histogram h;

static uint64_t counted_histogram(void)
{
	return histogram_total(&h);
}

static uint64_t counted_stats(void)
{
	return stats_now().counted;
}

/* In a fork child of a profiling process: alone there too. */
static void fork_alone(const char *mode, uint64_t (*counted)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		char what[64];
		snprintf(what, sizeof what, "%s, fork child", mode);
		alone(what, counted);
		_exit(check_failures ? 1 : 0);
	}
	int status = 0;
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)
	      && WEXITSTATUS(status) == 0, "%s: fork child failed (status %#x)", mode, status);
}

int main(void)
{
	CHECK(tasks() == 1 && __libc_single_threaded == 1, "not single-threaded at start");
	h = histogram_of_text();

	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	alone("profil", counted_histogram);
	fork_alone("profil", counted_histogram);
	profil_off();

	struct prof p = { h.buf, h.bufsiz, h.offset, h.scale };
	struct timeval tv;
	CHECK(sprofil(&p, 1, &tv, 0) == 0, "sprofil: %s", strerror(errno));
	alone("sprofil", counted_histogram);
	fork_alone("sprofil", counted_histogram);
	profil_off();

	static uintptr_t pcs[100000];
	CHECK(pcsample(pcs, 100000) == 0, "pcsample: %s", strerror(errno));
	alone("pcsample", counted_stats);
	fork_alone("pcsample", counted_stats);
	pcsample(NULL, 0);

	CHECK(profil_set_hz(2000) == 0, "profil_set_hz: %s", strerror(errno));
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	alone("native API", counted_histogram);
	fork_alone("native API", counted_histogram);
	profil_off();

	CHECK(tasks() == 1, "%d threads at the end", tasks());
	histogram_free(&h);
	return check_done("single_thread");
}
