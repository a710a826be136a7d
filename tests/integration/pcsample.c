/*
 * pcsample: pcs stored in order until the array is full, then no more;
 * the next call returns how many were stored and starts again; several
 * threads share one array without losing or sharing a slot; nsamples 0
 * stops; after fork each process records into its own copy; bad arguments fail with EINVAL or EFAULT; a saved array reads
 * back with the load map that resolves its addresses.
 */
#include "check.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../../src/format/pcsfile.h"

HOT_WORK(solo)
HOT_WORK(a)
HOT_WORK(b)

#define IN(name, pc) ((pc) >= HOT_START(name) && (pc) < HOT_STOP(name))

/* Called through a pointer, so that the compiler lets bad arguments by. */
static long (*volatile call_pcsample)(uintptr_t *, long) = pcsample;

static uintptr_t full[400], shared[600], partial[100000];

/* Burn in fn until slot last of buf is stored, or seconds of CPU pass. */
static void burn_until_stored(uintptr_t *buf, long last, uint64_t (*fn)(uint64_t),
			      double seconds)
{
	for (double used = 0; !__atomic_load_n(&buf[last], __ATOMIC_RELAXED) && used < seconds;)
		used += burn(fn, 0.02);
}

int main(void)
{
	/* 1. Filling, and stopping when full. */
	CHECK(pcsample(full, 400) == 0, "first call: %s", strerror(errno));
	burn_until_stored(full, 399, work_solo, 10);
	profil_reset_stats();
	burn(work_solo, 0.1);	/* full: nothing more is stored */
	struct profil_stats st = stats_now();
	long n = pcsample(shared, 600);
	CHECK(n == 400, "the full array holds %ld", n);
	long in_solo = 0, zero = 0;
	for (int i = 0; i < 400; i++) {
		in_solo += IN(solo, full[i]);
		zero += full[i] == 0;
	}
	printf("filled: %ld of 400 slots, %ld in the hot function; %llu samples after it was full\n",
	       400 - zero, in_solo, (unsigned long long)st.saturated);
	CHECK(zero == 0, "%ld empty slots", zero);
	CHECK(in_solo >= 380, "only %ld of 400 pcs in the function that ran", in_solo);
	CHECK(st.saturated > 0 && st.counted == 0,
	      "after the array was full: %llu saturated, %llu counted",
	      (unsigned long long)st.saturated, (unsigned long long)st.counted);

	/* 2. Restarted, from two threads. */
	struct busy ta, tb;
	busy_start(&ta, work_a);
	busy_start(&tb, work_b);
	for (int i = 0; i < 1000 && !__atomic_load_n(&shared[599], __ATOMIC_RELAXED); i++) {
		struct timespec ts = { 0, 10000000 };
		nanosleep(&ts, NULL);
	}
	busy_stop(&ta);
	busy_stop(&tb);
	n = pcsample(NULL, 0);
	CHECK(n == 600, "the shared array holds %ld", n);
	long na = 0, nb = 0;
	zero = 0;
	for (int i = 0; i < 600; i++) {
		na += IN(a, shared[i]);
		nb += IN(b, shared[i]);
		zero += shared[i] == 0;
	}
	printf("two threads: %ld in a, %ld in b, %ld empty\n", na, nb, zero);
	CHECK(zero == 0, "%ld empty slots", zero);
	CHECK(na + nb >= 570, "only %ld of 600 pcs in the threads' functions", na + nb);
	CHECK(na >= 100 && nb >= 100, "a %ld, b %ld: a thread missing", na, nb);
	CHECK(pcsample(NULL, 0) == 0, "stopping twice");

	/* 3. Stopped before full: the count is what was stored. */
	profil_reset_stats();
	CHECK(pcsample(partial, 100000) == 0, "after a stop");
	double cpu = burn(work_solo, 0.3);
	n = pcsample(NULL, 0);
	st = stats_now();
	printf("partial: %ld stored in %.3f s of CPU\n", n, cpu);
	CHECK(n > 0 && (uint64_t)n == st.counted, "returned %ld, counted %llu", n,
	      (unsigned long long)st.counted);
	CHECK(partial[n - 1] != 0 && partial[n] == 0, "stored past the count");
	CHECK(fabs(n * period_seconds() - cpu) <= 0.05 * cpu + 0.02,
	      "%ld samples for %.3f s of CPU", n, cpu);
	check_stats_add_up(&st);

	/* After fork, each process goes on into its own copy of the array. */
	memset(partial, 0, sizeof partial);
	CHECK(pcsample(partial, 100000) == 0, "before fork");
	burn(work_a, 0.05);
	fflush(stdout);
	pid_t child = fork();
	burn(child == 0 ? work_b : work_solo, 0.2);
	n = pcsample(NULL, 0);
	long mine = 0;
	for (long i = 0; i < n; i++)
		mine += child == 0 ? IN(b, partial[i]) : IN(solo, partial[i]);
	if (child == 0)
		_exit(n > 0 && partial[n - 1] != 0 && mine >= 100 ? 0 : 1);
	int status;
	CHECK(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "the child did not record its own samples");
	CHECK(mine >= 100 && partial[n - 1] != 0, "parent after fork: %ld of %ld its own", mine, n);
	for (long i = 0; i < n; i++)
		CHECK(!IN(b, partial[i]), "the child's sample in the parent's array");

	/* 4. Errors, and pcsample stops only its own profile. */
	CHECK(call_pcsample(full, -1) == -1 && errno == EINVAL, "nsamples -1");
	CHECK(call_pcsample((uintptr_t *)16, 10) == -1 && errno == EFAULT, "unmapped array");
	CHECK(call_pcsample(NULL, 10) == -1 && errno == EFAULT, "NULL array");
	unsigned short hist[64];
	CHECK(profil(hist, sizeof hist, HOT_START(solo), 0x10000) == 0, "profil");
	CHECK(pcsample(NULL, 0) == 0 && stats_now().active, "pcsample(NULL, 0) stopped profil");
	profil_off();

	/* 5. Saved, and read back with its load map. */
	char dir[] = "/tmp/pcsampleXXXXXX", path[64];
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof path, "%s/pcs", dir);
	CHECK(profil_pcsample_save(path, full, 400) == 0, "save: %s", strerror(errno));
	CHECK(profil_pcsample_save(path, full, 400) == -1 && errno == EEXIST, "saved over a file");
	struct stat sb;
	CHECK(stat(path, &sb) == 0 && (sb.st_mode & 0777) == 0600, "mode %o", sb.st_mode & 0777);
	unsigned char *data;
	size_t len;
	const char *why = "";
	struct pcs_file f;
	CHECK(file_slurp(path, &data, &len, &why) == 0, "%s: %s", path, why);
	CHECK(pcsfile_parse(data, len, &f, &why) == 0, "%s: %s", path, why);
	CHECK(f.nsamples == 400 && f.hz == stats_now().hz && f.pid == (uint64_t)getpid(),
	      "header: %llu samples, %u Hz, pid %llu", (unsigned long long)f.nsamples, f.hz,
	      (unsigned long long)f.pid);
	for (int i = 0; i < 400 && f.samples; i++)
		CHECK(f.samples[i] == full[i], "sample %d", i);
	const struct loadmap_entry *e = loadmap_find(f.objects, f.nobjects, HOT_START(solo));
	Dl_info info;
	char exe[4096] = "";
	CHECK(readlink("/proc/self/exe", exe, sizeof exe - 1) > 0, "readlink");
	CHECK(e && strcmp(e->name, exe) == 0, "the program is %s in the map", e ? e->name : "missing");
	CHECK(e && dladdr((void *)HOT_START(solo), &info) && e->bias == (uintptr_t)info.dli_fbase,
	      "load bias %llx", e ? (unsigned long long)e->bias : 0ull);
	e = loadmap_find(f.objects, f.nobjects, (uintptr_t)&getpid);
	CHECK(e && strstr(e->name, "libc.so"), "libc is %s in the map", e ? e->name : "missing");
	/* Truncated files are refused with a reason. */
	for (size_t cut = 0; cut < len; cut += len / 97 + 1) {
		struct pcs_file g;
		CHECK(pcsfile_parse(data, cut, &g, &why) == -1, "read %zu of %zu bytes", cut, len);
	}
	pcsfile_free(&f);
	free(data);
	unlink(path);
	rmdir(dir);
	return check_done("pcsample");
}
