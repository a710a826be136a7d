/*
 * monitor: a histogram of the program's text in the caller's buffer,
 * after Solaris's header and call-count cells; monitor(NULL, ...) stops
 * and writes $PROFDIR/PID.PROGNAME, or mon.out in the directory current
 * when it started; exit writes it too; the file reads back with the same
 * counts, in the right functions, standing for the CPU time used.
 */
#include "check.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../../src/format/monout.h"

HOT_WORK(light)
HOT_WORK(heavy)

#define FN(p) ((int (*)(void))(uintptr_t)(p))

static unsigned short big[1 << 20] __attribute__((aligned(8)));

static int read_mon(const char *path, struct monout *m)
{
	unsigned char *data;
	size_t len;
	const char *why = "";
	if (file_slurp(path, &data, &len, &why) != 0) {
		CHECK(0, "%s: %s", path, why);
		return -1;
	}
	int r = monout_parse(data, len, m, &why);
	CHECK(r == 0, "%s: %s", path, why);
	/* Cut short anywhere, it is refused. */
	for (size_t cut = 0; cut < len; cut += len / 89 + 1) {
		struct monout g;
		CHECK(monout_parse(data, cut, &g, &why) == -1, "read %zu of %zu bytes", cut, len);
	}
	free(data);
	return r;
}

/* Counts of the counters that lie wholly in [lo, hi), by the inverse. */
static uint64_t counts_in(const struct monout *m, uintptr_t lo, uintptr_t hi)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i < m->nhist; i++) {
		uint64_t first, last;
		if (bins_first_pc(i, m->lowpc, m->scale, &first)
		    && bins_last_pc(i, m->lowpc, m->scale, &last) && first >= lo && last < hi)
			sum += m->hist[i];
	}
	return sum;
}

int main(void)
{
	uintptr_t low = (uintptr_t)__executable_start, high = (uintptr_t)etext;
	char dir[] = "/tmp/monitorXXXXXX", path[256];
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	setenv("PROFDIR", dir, 1);
	size_t nfunc = 10;
	size_t bufsize = (MONOUT_HDR + nfunc * MONOUT_CNT) / 2 + (high - low) / 2 + 1;
	CHECK(bufsize <= sizeof big / 2, "text too large for the test's buffer");

	/* 1. Start, run, stop: $PROFDIR/PID.monitor.  The buffer is
	   monitor's: what it held before does not count. */
	memset(big, 0xff, sizeof big);
	profil_reset_stats();
	CHECK(monitor(FN(low), FN(high), big, bufsize, nfunc) == 0, "monitor: %s", strerror(errno));
	double t0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
	double cl = 0, ch = 0;
	while (cl + ch < 1.2) {
		cl += burn(work_light, 0.02);
		ch += burn(work_heavy, 0.06);
	}
	double cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - t0;
	CHECK(monitor(NULL, NULL, NULL, 0, 0) == 0, "monitor(NULL): %s", strerror(errno));
	CHECK(monitor(NULL, NULL, NULL, 0, 0) == 0, "monitor(NULL) twice");
	struct profil_stats st = stats_now();
	CHECK(!st.active, "still profiling after monitor(NULL)");
	snprintf(path, sizeof path, "%s/%ld.monitor", dir, (long)getpid());
	struct stat sb;
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "%s: mode %o", path,
	      sb.st_mode & 0777);
	struct monout m;
	if (read_mon(path, &m) == 0) {
		CHECK(m.lowpc == low && m.highpc == high && m.nfunc == nfunc && m.scale == 0x10000,
		      "header %llx %llx %llu, scale %#x", (unsigned long long)m.lowpc,
		      (unsigned long long)m.highpc, (unsigned long long)m.nfunc, m.scale);
		CHECK(m.hz == st.hz && m.period_ns == 1000000000u / st.hz, "rate %u", m.hz);
		uint64_t total = 0;
		const unsigned short *hist = big + (MONOUT_HDR + nfunc * MONOUT_CNT) / 2;
		for (uint64_t i = 0; i < m.nhist; i++) {
			total += m.hist[i];
			CHECK(m.hist[i] == hist[i], "counter %llu differs", (unsigned long long)i);
		}
		uint64_t l = counts_in(&m, HOT_START(light), HOT_STOP(light));
		uint64_t h = counts_in(&m, HOT_START(heavy), HOT_STOP(heavy));
		printf("mon.out: light %llu heavy %llu of %llu; CPU share %.3f, counts %.3f s of %.3f s\n",
		       (unsigned long long)l, (unsigned long long)h, (unsigned long long)total,
		       cl / (cl + ch), total * m.period_ns / 1e9, cpu);
		CHECK(within_error((double)l / (l + h), cl / (cl + ch), (double)st.observed, 0.02),
		      "light's share %.3f, CPU says %.3f", (double)l / (l + h), cl / (cl + ch));
		CHECK(fabs(total * m.period_ns / 1e9 - cpu) <= 0.05 * cpu + 0.02,
		      "counts stand for %.3f s, %.3f s used", total * m.period_ns / 1e9, cpu);
		const struct loadmap_entry *e = loadmap_find(m.objects, m.nobjects, HOT_START(light));
		CHECK(e != NULL, "the program is not in the load map");
		monout_free(&m);
	}
	unlink(path);

	/* 2. No PROFDIR: mon.out where the program was when it started. */
	unsetenv("PROFDIR");
	char here[4096];
	CHECK(getcwd(here, sizeof here) != NULL, "getcwd");
	CHECK(chdir(dir) == 0, "chdir");
	/* A small buffer: a coarser scale, the same CPU time. */
	CHECK(monitor(FN(low), FN(high), big, 200, 0) == 0, "monitor: %s", strerror(errno));
	CHECK(chdir("/") == 0, "chdir /");
	t0 = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
	burn(work_heavy, 0.3);
	cpu = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - t0;
	CHECK(monitor(NULL, NULL, NULL, 0, 0) == 0, "monitor(NULL): %s", strerror(errno));
	snprintf(path, sizeof path, "%s/mon.out", dir);
	if (read_mon(path, &m) == 0) {
		uint64_t total = 0;
		for (uint64_t i = 0; i < m.nhist; i++)
			total += m.hist[i];
		CHECK(m.nhist == 200 - MONOUT_HDR / 2 && m.scale < 0x10000 && m.scale >= 2,
		      "%llu counters, scale %#x", (unsigned long long)m.nhist, m.scale);
		CHECK(fabs(total * m.period_ns / 1e9 - cpu) <= 0.05 * cpu + 0.02,
		      "coarse: counts stand for %.3f s, %.3f s used", total * m.period_ns / 1e9, cpu);
		monout_free(&m);
	}
	/* mon.out is there: a second one does not replace it. */
	CHECK(chdir(dir) == 0, "chdir");
	CHECK(monitor(FN(low), FN(high), big, 200, 0) == 0, "monitor again");
	CHECK(monitor(NULL, NULL, NULL, 0, 0) == -1 && errno == EEXIST, "mon.out replaced");
	unlink(path);
	CHECK(chdir(here) == 0, "chdir back");

	/* 3. Bad arguments; PROFDIR empty means no profiling. */
	CHECK(monitor(FN(high), FN(low), big, bufsize, 0) == -1 && errno == EINVAL, "reversed");
	CHECK(monitor(FN(low), FN(high), big, 12, 1) == -1 && errno == EINVAL, "tiny buffer");
	CHECK(monitor(FN(low), FN(low + (1ull << 40)), big, 20, 0) == -1 && errno == EINVAL,
	      "a range no scale fits");
	CHECK(monitor(FN(low), FN(high), NULL, bufsize, 0) == -1 && errno == EFAULT, "NULL buffer");
	CHECK(monitor(FN(low), FN(high), (unsigned short *)4096, bufsize, 0) == -1
	      && errno == EFAULT, "unmapped buffer");
	setenv("PROFDIR", "", 1);
	CHECK(monitor(FN(low), FN(high), big, bufsize, 0) == 0 && !stats_now().active,
	      "PROFDIR empty, and profiling on");

	/* 4. exit writes the file of a monitor left running. */
	setenv("PROFDIR", dir, 1);
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		if (monitor(FN(low), FN(high), big, bufsize, 0) != 0)
			_exit(2);
		burn(work_light, 0.1);
		exit(0);
	}
	int status;
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "child");
	snprintf(path, sizeof path, "%s/%ld.monitor", dir, (long)child);
	if (read_mon(path, &m) == 0) {
		uint64_t l = counts_in(&m, HOT_START(light), HOT_STOP(light));
		CHECK(l > 20, "the child's file holds %llu in light", (unsigned long long)l);
		monout_free(&m);
	}
	unlink(path);
	CHECK(rmdir(dir) == 0, "%s not empty: %s", dir, strerror(errno));
	return check_done("monitor");
}
