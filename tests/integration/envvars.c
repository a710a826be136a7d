/*
 * PROFIL_HZ and PROFIL_BACKEND: a good value is used; a bad one is
 * reported once on standard error, naming the variable, the value and
 * what is used instead, and the program runs on undisturbed.
 *
 * The test runs itself again with --child under each environment.
 */
#include "check.h"

#include <sys/wait.h>

HOT_WORK(work)

static int child(void)
{
	struct histogram h = histogram_of_text();
	if (histogram_start(&h) != 0)
		return 2;
	burn(work_work, 0.05);
	struct profil_stats st = stats_now();
	profil_off();
	printf("hz=%u backend=%d active=%d\n", st.hz, st.backend, st.active);
	return 0;
}

/* Run the child with NAME=VALUE; collect its stdout and stderr. */
static int run(const char *name, const char *value, char *out, char *err, size_t size)
{
	int o[2], e[2];
	if (pipe(o) || pipe(e))
		abort();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(o[1], 1);
		dup2(e[1], 2);
		close(o[0]); close(e[0]); close(o[1]); close(e[1]);
		unsetenv("PROFIL_HZ");
		unsetenv("PROFIL_BACKEND");
		if (name)
			setenv(name, value, 1);
		execl("/proc/self/exe", "envvars", "--child", (char *)NULL);
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	ssize_t n = read(o[0], out, size - 1);
	out[n > 0 ? n : 0] = '\0';
	n = read(e[0], err, size - 1);
	err[n > 0 ? n : 0] = '\0';
	close(o[0]);
	close(e[0]);
	int status;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void expect(const char *name, const char *value, const char *want_out,
		   const char *want_err)
{
	char out[512], err[512];
	int status = run(name, value, out, err, sizeof out);
	CHECK(status == 0, "%s=%s: exit status %d", name, value, status);
	CHECK(strcmp(out, want_out) == 0, "%s=%s: printed '%s', want '%s'",
	      name, value, out, want_out);
	if (want_err[0]) {
		CHECK(strcmp(err, want_err) == 0, "%s=%s: stderr '%s', want '%s'",
		      name, value, err, want_err);
		CHECK(count_lines(err) == 1, "%s=%s: %d lines on stderr", name, value,
		      count_lines(err));
	} else {
		CHECK(err[0] == '\0', "%s=%s: unexpected stderr '%s'", name, value, err);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--child") == 0)
		return child();
	/* The default is the best backend this machine allows. */
	int best = perf_allowed() ? PROFIL_BACKEND_PERF : PROFIL_BACKEND_TIMER;
	char at1000[64], at5000[64], at1[64];
	snprintf(at1000, sizeof at1000, "hz=1000 backend=%d active=1\n", best);
	snprintf(at5000, sizeof at5000, "hz=5000 backend=%d active=1\n", best);
	snprintf(at1, sizeof at1, "hz=1 backend=%d active=1\n", best);
	expect(NULL, NULL, at1000, "");
	expect("PROFIL_HZ", "5000", at5000, "");
	expect("PROFIL_HZ", "1", at1, "");
	expect("PROFIL_HZ", "abc", at1000,
	       "libprofil: PROFIL_HZ=abc: not a whole number from 1 to 100000; using 1000\n");
	expect("PROFIL_HZ", "0", at1000,
	       "libprofil: PROFIL_HZ=0: not a whole number from 1 to 100000; using 1000\n");
	expect("PROFIL_HZ", "100001", at1000,
	       "libprofil: PROFIL_HZ=100001: not a whole number from 1 to 100000; using 1000\n");
	expect("PROFIL_BACKEND", "timer", "hz=1000 backend=2 active=1\n", "");
	expect("PROFIL_BACKEND", "auto", at1000, "");
	expect("PROFIL_BACKEND", "fast", at1000,
	       "libprofil: PROFIL_BACKEND=fast: not one of auto, perf, timer; using auto\n");
	if (best == PROFIL_BACKEND_PERF)
		expect("PROFIL_BACKEND", "perf", "hz=1000 backend=1 active=1\n", "");

	/* The native calls agree. */
	errno = 0;
	CHECK(profil_set_backend(PROFIL_BACKEND_PERF) == 0, "perf backend: errno %d", errno);
	CHECK(profil_set_backend((enum profil_backend)7) == -1 && errno == EINVAL,
	      "backend 7: errno %d", errno);
	CHECK(profil_set_backend(PROFIL_BACKEND_TIMER) == 0, "timer backend");
	struct histogram h = histogram_of_text();
	histogram_start(&h);
	CHECK(profil_set_backend(PROFIL_BACKEND_AUTO) == -1 && errno == EBUSY,
	      "backend change while on: errno %d", errno);
	profil_off();
	CHECK(profil_set_backend(PROFIL_BACKEND_AUTO) == 0, "backend change while off");
	CHECK(profil_get_stats(NULL, 10) == -1 && errno == EINVAL, "stats NULL");
	/* A caller that knows only the first fields gets only those. */
	struct profil_stats st;
	memset(&st, 0xab, sizeof st);
	CHECK(profil_get_stats(&st, 2 * sizeof(uint64_t)) == 0, "short stats");
	CHECK(st.outside == 0xabababababababab && st.dropped == 0xabababababababab,
	      "wrote past the size asked");
	histogram_free(&h);
	return check_done("envvars");
}
