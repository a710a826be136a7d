/*
 * After a successful exec the new image is not profiled and not
 * disturbed: no timer, no pending or blocked signal, no descriptor of
 * libprofil's survives, and a CPU-bound new program is not killed by a
 * stray signal (glibc's profil leaves ITIMER_PROF armed and the new
 * image dies of SIGPROF).  A failed exec leaves profiling running.
 *
 * The test runs itself again with --inspect as the new image.
 */
#include "check.h"

#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>

HOT_WORK(work)

/* Space-separated list of the open descriptors. */
static void list_fds(char *out, size_t size)
{
	out[0] = '\0';
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int self = dirfd(d);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || atoi(e->d_name) == self)
			continue;
		strncat(out, " ", size - strlen(out) - 1);
		strncat(out, e->d_name, size - strlen(out) - 1);
	}
	closedir(d);
}

static unsigned long long status_mask(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long long v = ~0ull;
	size_t n = strlen(field);
	while (fgets(line, sizeof line, f))
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 16);
	fclose(f);
	return v;
}

/*
 * The blocked and ignored signals, less glibc's own two (32 and 33,
 * which glibc gives a handler when a thread is made, so that an ignored
 * one inherited from the parent does not survive the exec).
 */
static void signal_masks(char *out, size_t size)
{
	unsigned long long glibc = 3ull << 31;
	snprintf(out, size, "%llx %llx", status_mask("SigBlk") & ~glibc,
		 status_mask("SigIgn") & ~glibc);
}

/* The new image: check that nothing of the old one's profiling is left. */
static int inspect(void)
{
	CHECK(count_timers() == 0, "%d POSIX timers inherited", count_timers());
	CHECK(status_mask("SigPnd") == 0, "signals pending: %#llx", status_mask("SigPnd"));
	CHECK(status_mask("ShdPnd") == 0, "shared signals pending: %#llx", status_mask("ShdPnd"));
	char masks[64];
	signal_masks(masks, sizeof masks);
	const char *masks_before = getenv("EXEC_TEST_MASKS");
	CHECK(masks_before && strcmp(masks, masks_before) == 0,
	      "signals blocked and ignored now %s, before profiling %s", masks,
	      masks_before ? masks_before : "?");
	char fds[512];
	list_fds(fds, sizeof fds);
	const char *before = getenv("EXEC_TEST_FDS");
	CHECK(before && strcmp(fds, before) == 0, "descriptors now '%s', before exec '%s'",
	      fds, before ? before : "?");
	/* Long enough for any stray timer to fire many times. */
	burn(work_work, 0.5);
	return check_failures ? 1 : 7;
}

/* In a child: profile, then exec ourselves with --inspect one way. */
static void child(const char *self, int how)
{
	char masks[64];
	signal_masks(masks, sizeof masks);
	setenv("EXEC_TEST_MASKS", masks, 1);
	char fds[512];	/* the program's own: the perf backend's are not */
	list_fds(fds, sizeof fds);
	setenv("EXEC_TEST_FDS", fds, 1);
	struct histogram h = histogram_of_text();
	if (histogram_start(&h) != 0)
		_exit(2);
	struct busy background;
	if (how == 3)	/* a busy second thread at the moment of exec */
		busy_start(&background, work_work);
	burn(work_work, 0.1);

	char *argv[] = { (char *)self, "--inspect", NULL };
	switch (how) {
	case 0: execl(self, self, "--inspect", (char *)NULL); break;
	case 1: execv(self, argv); break;
	case 2: execvp(self, argv); break;
	case 3: execve(self, argv, environ); break;
	case 4: execle(self, self, "--inspect", (char *)NULL, environ); break;
	}
	_exit(3);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--inspect") == 0)
		return inspect();

	static const char *ways[] = { "execl", "execv", "execvp", "execve (threaded)", "execle" };
	for (int how = 0; how < 5; how++) {
		pid_t pid = fork();
		if (pid == 0)
			child("/proc/self/exe", how);
		int status;
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7,
		      "%s: new image %s %d", ways[how],
		      WIFSIGNALED(status) ? "killed by signal" : "exited",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}

	/* A failed exec: profiling goes on. */
	struct histogram h = histogram_of_text();
	CHECK(histogram_start(&h) == 0, "profil: %s", strerror(errno));
	burn(work_work, 0.1);
	CHECK(execl("/nonexistent/program", "program", (char *)NULL) == -1 && errno == ENOENT,
	      "exec of a missing file: errno %d", errno);
	struct profil_stats st = stats_now();
	CHECK(st.active == 1, "profiling off after a failed exec");
	CHECK(burn_until_counted(&h, work_work, 100, 3.0) >= 100, "no counts after a failed exec");
	profil_off();
	return check_done("exec");
}
