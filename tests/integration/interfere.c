/*
 * Profiling does not change what the program does (SPEC section 2; issue
 * 6, item 5).  The same child program runs three ways: not profiled,
 * profiling itself with profil(), and under `profil run` (preloaded),
 * each under the backend PROFIL_BACKEND names.  Against the run without
 * profiling:
 *
 * - its standard output and standard error are byte for byte the same
 *   (profil run's own "profil: wrote" line aside) and so is its exit
 *   status;
 * - the handlers it installs stay exactly as installed (handler, flags,
 *   mask), before, while and after profiling; of the signals it leaves
 *   alone, libprofil changes only its sample signal (the timer backend,
 *   or the perf backend's system-time timers) and SIGSEGV/SIGBUS (to
 *   survive a buffer unmapped under it), and only while profiling;
 * - errno, set before a loop of pure computation that samples interrupt
 *   hundreds of times, still holds its value at every step;
 * - its own ITIMER_PROF and POSIX CPU-time timer keep firing, never
 *   faster than their rate (sigprof.c judges the rates themselves).
 *
 * The child reports what it saw on descriptor 3, which the driver reads.
 */
#include "check.h"

#include <fcntl.h>
#include <signal.h>
#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000	/* set by libc, not by the program */
#endif
#include <sys/time.h>
#include <sys/wait.h>

HOT_WORK(work)

enum { STATUS = 37 };
static const int mine[] = { SIGUSR1, SIGUSR2, SIGPROF, SIGALRM, 40 };	/* 40: SIGRTMIN+6 */

static atomic_long prof_ticks, posix_ticks;

static void on_prof(int sig, siginfo_t *info, void *ctx)
{
	(void)sig; (void)info; (void)ctx;
	atomic_fetch_add(&prof_ticks, 1);
}

static void on_posix(int sig)
{
	(void)sig;
	atomic_fetch_add(&posix_ticks, 1);
}

static void on_usr(int sig)
{
	(void)sig;
}

static int is_mine(int sig)
{
	for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++)
		if (mine[i] == sig)
			return 1;
	return 0;
}

static int same_action(const struct sigaction *a, const struct sigaction *b)
{
	if (a->sa_handler != b->sa_handler || (a->sa_flags & ~SA_RESTORER) != (b->sa_flags & ~SA_RESTORER))
		return 0;
	for (int s = 1; s < NSIG; s++)
		if (sigismember(&a->sa_mask, s) != sigismember(&b->sa_mask, s))
			return 0;
	return 1;
}

static struct sigaction installed[NSIG];

/* Signals whose action differs from snapshot (the program's own: from
   what it installed), as a list in out. */
static void differing(const struct sigaction *snapshot, char *out, size_t size, int *own)
{
	out[0] = '\0';
	*own = 0;
	for (int s = 1; s < NSIG; s++) {
		if (s == SIGKILL || s == SIGSTOP)
			continue;
		struct sigaction now;
		if (sigaction(s, NULL, &now) != 0)
			continue;	/* glibc's own (SIGCANCEL, SIGSETXID) */
		const struct sigaction *want = is_mine(s) ? &installed[s] : &snapshot[s];
		if (!same_action(&now, want)) {
			size_t n = strlen(out);
			snprintf(out + n, size - n, "%s%d", n ? "," : "", s);
			*own += is_mine(s);
		}
	}
	if (!out[0])
		snprintf(out, size, "none");
}

/* The child: everything the driver compares. */
static int child(void)
{
	FILE *report = fdopen(3, "w");
	if (!report)
		return 99;
	struct sigaction start[NSIG];
	memset(start, 0, sizeof start);
	for (int s = 1; s < NSIG; s++)
		sigaction(s, NULL, &start[s]);
	/* The program's own handlers, each with its own flags and mask. */
	for (size_t i = 0; i < sizeof mine / sizeof mine[0]; i++) {
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sigemptyset(&sa.sa_mask);
		sigaddset(&sa.sa_mask, SIGTERM + (int)i);
		if (mine[i] == SIGPROF) {
			sa.sa_sigaction = on_prof;
			sa.sa_flags = SA_SIGINFO | SA_RESTART;
		} else {
			sa.sa_handler = mine[i] == 40 ? on_posix : on_usr;
			sa.sa_flags = i % 2 ? SA_RESTART : 0;
		}
		sigaction(mine[i], &sa, NULL);
		sigaction(mine[i], NULL, &installed[mine[i]]);
	}
	struct histogram h;
	int self = getenv("INTERFERE_PROFIL") != NULL;
	if (self) {
		h = histogram_of_text();
		if (histogram_start(&h) != 0)
			return 98;
	}
	char diff[512];
	int own;
	differing(start, diff, sizeof diff, &own);
	fprintf(report, "while own=%d others=%s\n", own, diff);

	/* Output: stdio buffered and unbuffered, and write(2). */
	for (int i = 0; i < 3000; i++) {
		printf("line %d: %llu\n", i, (unsigned long long)spin_step((uint64_t)i));
		if (i % 100 == 0) {
			fprintf(stderr, "progress %d\n", i);
			char w[32];
			int n = snprintf(w, sizeof w, "write %d\n", i);
			fflush(stdout);
			if (write(STDOUT_FILENO, w, (size_t)n) != n)
				return 97;
		}
		if (i % 300 == 0)
			check_sink += work_work(100000);
	}

	/* errno across samples: computation only, no call that sets it. */
	errno = EDOM;
	long steps = 0, changed = 0;
	double start_cpu = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
	do {
		check_sink += work_work(20000);
		changed += errno != EDOM;
		steps++;
	} while (steps % 64 || cpu_seconds(CLOCK_THREAD_CPUTIME_ID) - start_cpu < 0.2);
	uint64_t counted = self ? histogram_total(&h) : 0;
	fprintf(report, "errno steps=%ld changed=%ld\n", steps, changed);

	/* Its own timers: ITIMER_PROF and a POSIX timer, 10 ms of CPU each. */
	struct itimerval it = { { 0, 10000 }, { 0, 10000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	struct sigevent ev;
	memset(&ev, 0, sizeof ev);
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = 40;
	timer_t timer;
	struct itimerspec its = { { 0, 10000000 }, { 0, 10000000 } };
	if (timer_create(CLOCK_PROCESS_CPUTIME_ID, &ev, &timer) != 0
	    || timer_settime(timer, 0, &its, NULL) != 0)
		return 96;
	double used = burn(work_work, 0.3);
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	timer_delete(timer);
	fprintf(report, "timers cpu=%.3f prof=%ld posix=%ld\n", used, atomic_load(&prof_ticks),
		atomic_load(&posix_ticks));

	if (self) {
		profil_off();
		fprintf(report, "counted %llu\n", (unsigned long long)counted);
	}
	differing(start, diff, sizeof diff, &own);
	fprintf(report, "after own=%d others=%s\n", own, diff);
	fclose(report);
	fprintf(stderr, "done\n");
	exit(STATUS);
}

/* ---- The driver. ---- */

struct run {
	const char *name;
	char out[64], err[64], rep[64];
	int status;
	int own_while, own_after;
	char others_while[512], others_after[512];
	long steps, changed, prof, posix;
	double cpu;
	unsigned long long counted;
};

static void run_child(struct run *r, char *const argv[], const char *dir, int self)
{
	snprintf(r->out, sizeof r->out, "%s/%s.out", dir, r->name);
	snprintf(r->err, sizeof r->err, "%s/%s.err", dir, r->name);
	snprintf(r->rep, sizeof r->rep, "%s/%s.rep", dir, r->name);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int o = open(r->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(r->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int p = open(r->rep, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0 || p < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || dup2(p, 3) < 0)
			_exit(95);
		setenv("INTERFERE_CHILD", "1", 1);
		if (self)
			setenv("INTERFERE_PROFIL", "1", 1);
		if (chdir(dir) != 0)
			_exit(94);
		execv(argv[0], argv);
		_exit(93);
	}
	int status;
	waitpid(pid, &status, 0);
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	FILE *f = fopen(r->rep, "r");
	char line[1024];
	while (f && fgets(line, sizeof line, f)) {
		sscanf(line, "while own=%d others=%511s", &r->own_while, r->others_while);
		sscanf(line, "after own=%d others=%511s", &r->own_after, r->others_after);
		sscanf(line, "errno steps=%ld changed=%ld", &r->steps, &r->changed);
		sscanf(line, "timers cpu=%lf prof=%ld posix=%ld", &r->cpu, &r->prof, &r->posix);
		sscanf(line, "counted %llu", &r->counted);
	}
	if (f)
		fclose(f);
}

/* The file's bytes, less the lines that start with skip (or NULL). */
static char *contents(const char *path, const char *skip)
{
	FILE *f = fopen(path, "r");
	size_t size = 0, cap = 1 << 16;
	char *all = calloc(1, cap), line[4096];
	while (f && all && fgets(line, sizeof line, f)) {
		if (skip && strncmp(line, skip, strlen(skip)) == 0)
			continue;
		size_t n = strlen(line);
		if (size + n + 1 > cap && !(all = realloc(all, cap *= 2)))
			break;
		memcpy(all + size, line, n + 1);
		size += n;
	}
	if (f)
		fclose(f);
	return all;
}

/* Signals libprofil may take while profiling: SIGSEGV, SIGBUS, and one
   real-time signal from SIGRTMIN+4 to SIGRTMAX-4 (not the program's). */
static int only_libprofils(const char *list)
{
	if (strcmp(list, "none") == 0)
		return 1;
	char copy[512];
	snprintf(copy, sizeof copy, "%s", list);
	int rt = 0;
	for (char *s = strtok(copy, ","); s; s = strtok(NULL, ",")) {
		int sig = atoi(s);
		if (sig >= SIGRTMIN + 4 && sig <= SIGRTMAX - 4 && !is_mine(sig))
			rt++;
		else if (sig != SIGSEGV && sig != SIGBUS)
			return 0;
	}
	return rt <= 1;
}

static void compare(const struct run *base, const struct run *r)
{
	CHECK(r->status == STATUS, "%s: exit status %d, want %d", r->name, r->status, STATUS);
	char *a = contents(base->out, NULL), *b = contents(r->out, NULL);
	CHECK(a && b && strcmp(a, b) == 0, "%s: standard output differs from the run without "
	      "profiling", r->name);
	free(a);
	free(b);
	a = contents(base->err, NULL);
	b = contents(r->err, "profil: wrote ");
	CHECK(a && b && strcmp(a, b) == 0, "%s: standard error differs: '%s'", r->name, b ? b : "");
	free(a);
	free(b);
	CHECK(r->own_while == 0 && r->own_after == 0, "%s: %d of the program's handlers changed "
	      "while profiling, %d after", r->name, r->own_while, r->own_after);
	CHECK(only_libprofils(r->others_while), "%s: signals changed while profiling: %s",
	      r->name, r->others_while);
	CHECK(r->steps > 100 && r->changed == 0, "%s: errno changed at %ld of %ld steps",
	      r->name, r->changed, r->steps);
	/* The timers still fire, and no second source doubles them (glibc's
	   profil shares ITIMER_PROF).  Their rates against the program's
	   own, over windows long enough to judge, are sigprof.c's: on a
	   loaded machine 0.3 s of ITIMER_PROF varies threefold. */
	CHECK(r->prof >= 1 && r->prof <= 2 * r->cpu / 0.010 + 3,
	      "%s: ITIMER_PROF %ld in %.2f s", r->name, r->prof, r->cpu);
	CHECK(r->posix >= 1 && r->posix <= 2 * r->cpu / 0.010 + 3,
	      "%s: POSIX timer %ld in %.2f s", r->name, r->posix, r->cpu);
	printf("%-8s status %d, output same, errno kept at %ld steps, ITIMER_PROF %ld, "
	       "POSIX timer %ld in %.2f s; libprofil's signals while on: %s, after: %s\n",
	       r->name, r->status, r->steps, r->prof, r->posix, r->cpu, r->others_while,
	       r->others_after);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (getenv("INTERFERE_CHILD"))
		return child();
	char dir[] = "/tmp/interfere.XXXXXX";
	if (!mkdtemp(dir))
		return 2;
	char self[2048], profil_cmd[2048];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	self[n > 0 ? n : 0] = '\0';
	check_profil_command(profil_cmd, sizeof profil_cmd);
	(void)argv;
	struct run base = { .name = "bare" }, own = { .name = "profil" }, run = { .name = "run" };
	char *bare_argv[] = { self, NULL };
	run_child(&base, bare_argv, dir, 0);
	CHECK(base.status == STATUS, "without profiling: exit status %d", base.status);
	CHECK(strcmp(base.others_while, "none") == 0, "without profiling: signals changed: %s",
	      base.others_while);
	run_child(&own, bare_argv, dir, 1);
	compare(&base, &own);
	CHECK(own.counted > 0, "profil() counted nothing");
	CHECK(strcmp(own.others_after, "none") == 0 || only_libprofils(own.others_after),
	      "profil: signals changed after profiling: %s", own.others_after);

	check_sanitizer_preload();
	char out[64];
	snprintf(out, sizeof out, "-o%s/run.prof", dir);
	char *run_argv[] = { profil_cmd, "run", out, "--", self, NULL };
	run_child(&run, run_argv, dir, 0);
	compare(&base, &run);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return check_done("interfere");
}
