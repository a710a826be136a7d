/*
 * run.c - profil run: a program under the profiler, without recompiling.
 *
 * libprofil is preloaded with PROFIL_RUN set: it profiles every process
 * of the tree into a file of its own (src/runtime/preload/preload.c),
 * named by PROFIL_OUT inside the run's directory (run_dir.c), which
 * .profil-last here names once the run wrote something.  The exit status
 * is the program's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../include/profil.h"
#include "../common/preloadable.h"
#include "../format/profile.h"
#include "bidcache.h"
#include "cli.h"
#include "opts.h"
#include "model.h"
#include "run_dir.h"

/* Where make install put the library, below the prefix (the Makefile's LIBDIR). */
#ifndef PROFIL_LIBSUBDIR
#define PROFIL_LIBSUBDIR "lib"
#endif

/*
 * libprofil.so beside the command: from bin/, the installed LIBDIR (Debian's
 * is lib/x86_64-linux-gnu), or ../lib, as built.
 */
static int find_library(char *out, size_t size)
{
	const char *env = getenv("PROFIL_LIBRARY");
	if (env && *env) {
		snprintf(out, size, "%s", env);
		return access(out, R_OK) == 0 ? 0 : -1;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	char *slash = strrchr(exe, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	static const char *const tries[] = { "/../" PROFIL_LIBSUBDIR "/libprofil.so.1",
					     "/../lib/libprofil.so.1", "/../lib64/libprofil.so.1",
					     "/../lib/libprofil.so" };
	for (size_t i = 0; i < sizeof tries / sizeof tries[0]; i++) {
		snprintf(out, size, "%s%s", exe, tries[i]);
		char real[PATH_MAX];
		if (realpath(out, real)) {
			snprintf(out, size, "%s", real);
			return 0;
		}
	}
	return -1;
}

static int parse_hz(const char *text, unsigned *hz)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (*text < '0' || *text > '9' || errno || *end || v < PROFIL_HZ_MIN || v > PROFIL_HZ_MAX)
		return -1;
	*hz = (unsigned)v;
	return 0;
}

static void set(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0) {
		error_line("cannot set %s: %s", name, strerror(errno));
		exit(2);
	}
}

/*
 * Can profiles be made in dir?  Else one line naming what (the variable
 * or option) and name (its value), and why, before anything runs: every process of the tree
 * would say it again otherwise.  A symbolic link to a directory is a
 * directory here; the file itself is never made through one.
 */
static int check_dir(const char *what, const char *name, const char *dir)
{
	struct stat st;
	const char *why = NULL;
	if (stat(dir, &st) != 0)
		why = strerror(errno);
	else if (!S_ISDIR(st.st_mode))
		why = "not a directory";
	else if (access(dir, W_OK | X_OK) != 0)
		why = strerror(errno);
	if (!why)
		return 0;
	error_line("%s%s: %s%s: no profile can be written there", what, name,
		   name == dir ? "" : "its directory: ", why);
	return -1;
}

/* From a file's header: why auto passed perf over (or 0), and how many
   threads the perf backend gave a timer instead (added to *fallback). */
static int perf_errno_of(const char *name, unsigned *fallback)
{
	int err = 0;
	struct profile_header h;
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h
	    && profile_is_profile(&h, sizeof h)) {
		err = (int)h.perf_errno;
		*fallback += h.threads_fallback;
	}
	close(fd);
	return err;
}

/* The program execvp would run (a path with a slash: itself), or NULL. */
static char *find_program(const char *name)
{
	if (strchr(name, '/'))
		return xstrdup(name);
	const char *dirs = getenv("PATH");
	for (const char *d = dirs ? dirs : "/usr/bin:/bin"; d; d = strchr(d, ':') ? strchr(d, ':') + 1 : NULL) {
		size_t len = strcspn(d, ":");
		char *path = xmalloc(len + strlen(name) + 3);
		sprintf(path, "%.*s%s%s", (int)len, d, len ? "/" : "", name);
		if (access(path, X_OK) == 0)
			return path;
		free(path);
	}
	return NULL;
}

/* The processes that ran unprofiled, one line each (so many at most). */
static void skipped(const char *dir)
{
	enum { SHOWN = 20 };
	unsigned n = 0;
	char **notes = run_notes(dir, &n);
	for (unsigned i = 0; i < n && i < SHOWN; i++) {
		char line[PATH_MAX + 512] = "";
		FILE *f = fopen(notes[i], "r");
		if (f) {
			if (!fgets(line, sizeof line, f))
				line[0] = '\0';
			fclose(f);
		}
		line[strcspn(line, "\n")] = '\0';
		/* PROGRAM.PID.skipped: the pid is the last number but one. */
		char *end = notes[i] + strlen(notes[i]) - strlen(RUN_NOTE_SUFFIX);
		char *dot = end;
		while (dot > notes[i] && dot[-1] != '.')
			dot--;
		fprintf(stderr, "profil: process %.*s not profiled: %s\n", (int)(end - dot), dot,
			line[0] ? line : "(no reason recorded)");
	}
	if (n > SHOWN)
		fprintf(stderr, "profil: %u more processes not profiled: see %s/*%s\n", n - SHOWN,
			dir, RUN_NOTE_SUFFIX);
	free_files(notes);
}

/*
 * The program ended, seen by profil run, and its files still say they
 * are running (the last image's, after execs): killed by a signal, or
 * an exit that ran none of libprofil's end (a raw exit_group, as Go's
 * runtime makes).  They get its wait status, so that the report can
 * say what is known (counts whole, statistics of up to a second
 * before) rather than guess.  Its descendants' ends were not seen.
 */
static void mark_ended(const char *dir, pid_t pid, int status)
{
	unsigned n = 0;
	char **files = run_files(dir, &n);
	for (unsigned i = 0; files && i < n; i++) {
		int fd = open(files[i], O_RDWR | O_CLOEXEC);
		struct profile_header h;
		if (fd < 0)
			continue;
		int ours = pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h
			   && memcmp(h.magic, PROFILE_MAGIC, 8) == 0;
		if (ours && h.pid == pid && h.state == PROFILE_RUNNING) {
			uint32_t s = PROFILE_END_SEEN | ((uint32_t)status & 0xffff);
			if (pwrite(fd, &s, sizeof s, offsetof(struct profile_header, end_status))
			    != (ssize_t)sizeof s)
				error_line("%s: %s", files[i], strerror(errno));
		}
		close(fd);
		/* Sized to what it holds, once no process can write it: the
		   program's (waited for), or one whose pid is gone. */
		char why[256];
		if (ours && (h.pid == pid || (kill(h.pid, 0) != 0 && errno == ESRCH))
		    && profile_pack(files[i], why, sizeof why) < 0)
			error_line("%s: %s", files[i], why);
	}
	profile_pack_drop_spare();
	free_files(files);
}

/* What the run wrote into dir, in one or two lines; the number of files. */
static unsigned summary(const char *dir)
{
	skipped(dir);
	unsigned n = 0;
	char **files = run_files(dir, &n);
	if (!files) {
		error_line("%s: %s: cannot tell which profiles were written", dir, strerror(errno));
		return 0;
	}
	int perf_errno = 0;
	unsigned fallback = 0;
	for (unsigned i = 0; i < n; i++) {
		int err = perf_errno_of(files[i], &fallback);
		if (err)
			perf_errno = err;
	}
	if (perf_errno)
		fprintf(stderr, "profil: perf events refused (%s): the timer backend sampled "
			"instead\n", perf_refusal(perf_errno));
	if (fallback)
		fprintf(stderr, "profil: %u thread%s had no perf event (RLIMIT_NOFILE, "
			"RLIMIT_MEMLOCK): sampled by timer instead\n", fallback,
			fallback == 1 ? "" : "s");
	if (n == 1)
		fprintf(stderr, "profil: wrote %s (1 process); see profil report\n", dir);
	else if (n > 1)
		fprintf(stderr, "profil: wrote %s (%u processes, a profile each); see profil "
			"report\n", dir, n);
	free_files(files);
	return n;
}
static const struct opt run_opts[] = {
	{ "freq", 'F', 'F', "HZ", "samples per CPU-second per thread (1000)" },
	{ "output", 'o', 'o', "DIR", "the run's directory (profil.data)" },
	{ "backend", 0, 'b', "auto|perf|timer", "how to sample (auto: the first that works)" },
	{ "threads", 0, 'T', "N", "threads counted apart per process (1023)" },
	{ "stacks", 0, 'S', NULL, "record each sample's call stack (the default)" },
	{ "no-stacks", 0, 'N', NULL, "record the sampled pc alone" },
	{ "pid", 'p', 'p', "PID[,PID...]", "profile these running processes instead" },
	{ "duration", 0, 'd', "SECONDS", "with -p: stop after this long (else at Ctrl-C)" },
	{ "no-cache", 0, 'n', NULL, "keep no copy of the objects by build ID" },
	{ "help", 'h', 'h', NULL, "this list" },
	{ NULL, 0, 0, NULL, NULL },
};

int run_options(int argc, char **argv, struct run_options *o)
{
	/* Options end at PROGRAM: what follows is the program's. */
	struct opts p = { .cmd = "run", .operands = "[--] PROGRAM [ARG...] | -p PID[,PID...]",
			  .about = "Run PROGRAM under the profiler: a profile of each process in "
				   "one directory.", .v = run_opts,
			  .stop_at_operand = 1 };
	memset(o, 0, sizeof *o);
	o->stacks = -1;
	const char *v;
	int c;
	optind = 0;	/* all of getopt's state afresh, '+' included */
	while ((c = opts_next(&p, argc, argv, &v)) != -1) {
		switch (c) {
		case 'F':
			if (parse_hz(v, &o->hz) != 0) {
				error_line("-F '%s': not a whole number from %d to %d", v,
					   PROFIL_HZ_MIN, PROFIL_HZ_MAX);
				return 2;
			}
			break;
		case 'o':
			o->out = v;
			break;
		case 'T': {
			char *end;
			errno = 0;
			unsigned long n = strtoul(v, &end, 10);
			if (*v < '0' || *v > '9' || errno || *end || n > PROFILE_THREADS_MAX - 1) {
				error_line("--threads '%s': not a whole number from 0 to %u", v,
					   PROFILE_THREADS_MAX - 1);
				return 2;
			}
			o->threads = v;
			break;
		}
		case 'S':
		case 'N':
			o->stacks = c == 'S';
			break;
		case 'b':
			if (strcmp(v, "auto") && strcmp(v, "perf") && strcmp(v, "timer")) {
				error_line("--backend '%s': not one of auto, perf, timer", v);
				return 2;
			}
			o->backend = v;
			break;
		case 'p':
			o->pids = v;
			break;
		case 'd': {
			char *end;
			errno = 0;
			o->duration = strtod(v, &end);
			if (*v < '0' || *v > '9' || errno || *end || !(o->duration > 0)
			    || o->duration > 1e7) {
				error_line("--duration '%s': not a number of seconds above 0", v);
				return 2;
			}
			break;
		}
		case 'n':
			o->no_cache = 1;
			break;
		case 'h':
			opts_help(&p, stdout);
			return 0;
		default:
			return 2;
		}
	}
	if (o->duration && !o->pids) {
		error_line("run: --duration is for -p (a program runs to its end)");
		return 2;
	}
	if (o->pids && optind < argc) {
		error_line("run: -p %s and a program (%s): give one or the other", o->pids,
			   argv[optind]);
		return 2;
	}
	if (o->pids && o->backend && strcmp(o->backend, "timer") == 0) {
		error_line("run: --backend timer and -p: a running process is sampled by perf "
			   "events only");
		return 2;
	}
	if (o->hz && run_rate_check(o->hz, o->backend, o->pids != NULL) != 0)
		return 2;
	if (o->pids)
		return -1;
	if (optind >= argc) {
		error_line("run: no program given (profil run [OPTIONS] PROGRAM [ARG...])");
		return 2;
	}
	o->program = optind;
	return -1;
}

/*
 * Signals for the program.  One from the terminal (SI_KERNEL) reached
 * the program's process group, the program with it: passed on, the
 * program would have it twice.  So would one the program sent to its
 * own group.  Anything else (kill, a supervisor's SIGTERM) is passed to
 * the program, and profil waits for its end: the profile is complete
 * and the exit status the program's, as under perf.
 */
static const int passed_on[] = { SIGTERM, SIGHUP, SIGINT, SIGQUIT };
static struct sigaction saved[sizeof passed_on / sizeof passed_on[0]];
static volatile sig_atomic_t child, early;

static void pass_on(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (si->si_code == SI_KERNEL || (child > 0 && si->si_pid == child))
		return;
	int saved_errno = errno;
	if (child > 0)
		kill(child, sig);
	else
		early = sig;	/* before the fork returned: passed on after */
	errno = saved_errno;
}

static void catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = pass_on;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof passed_on / sizeof passed_on[0]; i++) {
		sigaction(passed_on[i], NULL, &saved[i]);
		/* Ignored when profil started (nohup, a background job): the
		   program inherits that, and profil does as it does. */
		if (saved[i].sa_handler != SIG_IGN)
			sigaction(passed_on[i], &sa, NULL);
	}
}

static void restore_signals(void)
{
	for (size_t i = 0; i < sizeof passed_on / sizeof passed_on[0]; i++)
		sigaction(passed_on[i], &saved[i], NULL);
}

/* ASAN_OPTIONS with the link-order check off, the user's options after. */
static void allow_asan(void)
{
	/*
	 * A program linked with libasan wants it first in the search order,
	 * before anything preloaded, or it exits.  libprofil defines none of
	 * the functions ASan replaces (malloc and the like), and calls the
	 * next definition of those it wraps (pthread_create, dlopen, fork,
	 * exec): with the check off ASan runs as it would alone.  Preloading
	 * libasan instead would put it into every process of the tree.
	 */
	const char *user = getenv("ASAN_OPTIONS");
	size_t len = (user ? strlen(user) : 0) + 32;
	char *v = xmalloc(len);
	snprintf(v, len, "verify_asan_link_order=0%s%s", user && *user ? ":" : "",
		 user ? user : "");
	set("ASAN_OPTIONS", v);
	free(v);
}

int cmd_run(int argc, char **argv)
{
	struct run_options opt;
	int parsed = run_options(argc, argv, &opt);
	if (parsed >= 0)
		return parsed;
	const char *out = opt.out, *backend = opt.backend, *threads = opt.threads;
	const char *program = opt.pids ? NULL : argv[opt.program];
	unsigned hz = opt.hz;
	char lib[PATH_MAX];
	if (!opt.pids && find_library(lib, sizeof lib) != 0) {
		error_line("cannot find libprofil.so beside the command (set PROFIL_LIBRARY)");
		return 2;
	}

	/* Nothing is touched for a program that cannot run or be profiled. */
	char *path = opt.pids ? xstrdup("-p") : find_program(program);
	if (!path) {
		error_line("%s: command not found", program);
		return 127;
	}
	char interp[256] = "";
	enum preloadable why = opt.pids ? PRELOADABLE : preloadable(path, interp, sizeof interp);
	if (why != PRELOADABLE) {
		error_line("%s: %s%s%s%s: profil run cannot profile it", program,
			   interp[0] ? "a script run by " : "", interp, interp[0] ? ": " : "",
			   preloadable_why(why));
		free(path);
		return 2;
	}
	free(path);

	/* The run's directory: -o, else the default name here or in PROFDIR. */
	char cwd[PATH_MAX], dir[PATH_MAX], buf[PATH_MAX * 2 + 16];
	if (!getcwd(cwd, sizeof cwd)) {
		error_line("cannot name the current directory: %s", strerror(errno));
		return 2;
	}
	const char *profdir = getenv("PROFDIR");
	if (out) {
		char parent[PATH_MAX];
		snprintf(parent, sizeof parent, "%s", out);
		size_t len = strlen(parent);
		while (len > 1 && parent[len - 1] == '/')
			parent[--len] = '\0';	/* "-o runs/x/": the directory x */
		char *slash = strrchr(parent, '/');
		if (!*out || (slash && !slash[1]) || !strcmp(slash ? slash + 1 : parent, ".")
		    || !strcmp(slash ? slash + 1 : parent, "..")) {
			error_line("-o '%s': not a name for the run's directory", out);
			return 2;
		}
		if (parent[0] == '/')
			snprintf(dir, sizeof dir, "%s", parent);
		else if (snprintf(dir, sizeof dir, "%s/%s", cwd, parent) >= (int)sizeof dir) {
			error_line("-o %s: name too long", out);
			return 2;
		}
		if (slash)
			slash[slash == parent] = '\0';	/* "/x": "/" */
		if (check_dir("-o ", out, slash ? parent : ".") != 0)
			return 2;
	} else if (profdir && *profdir) {
		if (check_dir("PROFDIR=", profdir, profdir) != 0)
			return 2;
		char real[PATH_MAX];
		if (!realpath(profdir, real))
			snprintf(real, sizeof real, "%s", profdir);
		if (snprintf(dir, sizeof dir, "%s/%s", real, RUN_DIR_DEFAULT) >= (int)sizeof dir) {
			error_line("PROFDIR=%s: name too long", profdir);
			return 2;
		}
	} else {
		static const char here[] = ".";
		if (check_dir("", here, here) != 0)
			return 2;
		if (snprintf(dir, sizeof dir, "%s/%s", cwd, RUN_DIR_DEFAULT) >= (int)sizeof dir) {
			error_line("%s: name too long", cwd);
			return 2;
		}
	}
	char pointer[PATH_MAX + 32];
	snprintf(pointer, sizeof pointer, "%s/%s", cwd, RUN_LIST);
	static struct rotation rot;
	if (rotate_begin(&rot, dir) != 0)
		return 2;
	if (opt.pids) {	/* processes already running: attach.c */
		int st = attach_run(&opt, dir);
		if (summary(dir)) {
			rotate_commit(&rot);
			run_point(pointer, dir);
			if (!opt.no_cache)
				bidcache_keep_run(dir);
		} else {
			rotate_undo(&rot);
		}
		return st;
	}

	/* After what is preloaded already (a sanitizer's runtime, if the
	   user put it there, stays first). */
	const char *old = getenv("LD_PRELOAD");
	if (old && *old)
		snprintf(buf, sizeof buf, "%s:%s", old, lib);
	else
		snprintf(buf, sizeof buf, "%s", lib);
	set("LD_PRELOAD", buf);
	allow_asan();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, sizeof buf, "%llu",
		 (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
	set("PROFIL_RUN", buf);
	unsetenv("PROFIL_RUN_LIST");	/* from a profil of before run directories */
	if (hz) {
		snprintf(buf, sizeof buf, "%u", hz);
		set("PROFIL_HZ", buf);
	}
	if (backend)
		set("PROFIL_BACKEND", backend);
	if (threads)
		set("PROFIL_RUN_THREADS", threads);
	if (opt.stacks >= 0)
		set("PROFIL_STACKS", opt.stacks ? "1" : "0");
	/* Every process of the tree writes here, wherever it goes; a % in
	   the directory's name is itself, not a pattern. */
	size_t at = 0;
	for (const char *c = dir; *c && at + 2 < sizeof buf; c++) {
		if (*c == '%')
			buf[at++] = '%';
		buf[at++] = *c;
	}
	snprintf(buf + at, sizeof buf - at, "/%s", RUN_FILE_PATTERN);
	set("PROFIL_OUT", buf);
	set("PROFIL_RUN_DIR", dir);	/* for the notes of processes skipped */

	catch_signals();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		error_line("cannot fork: %s", strerror(errno));
		rotate_undo(&rot);
		return 2;
	}
	if (pid == 0) {
		restore_signals();
		execvp(program, argv + opt.program);
		error_line("%s: %s", program, strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	child = pid;
	if (early)
		kill(pid, early);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			error_line("waiting for %s: %s", program, strerror(errno));
			return 2;
		}
	restore_signals();
	run_drop_cache(dir);
	mark_ended(dir, pid, status);
	unsigned n = summary(dir);
	if (n) {
		rotate_commit(&rot);
		run_point(pointer, dir);
		if (!opt.no_cache)
			bidcache_keep_run(dir);
	} else {
		/* The previous run, and the pointer to it, stay as they were. */
		rotate_undo(&rot);
		/* 126 and 127 from a child that could not exec said why already. */
		if (!WIFEXITED(status) || (WEXITSTATUS(status) != 126 && WEXITSTATUS(status) != 127)) {
			if (WIFEXITED(status))
				error_line("no profile was written: %s exited with status %d before "
					   "libprofil started in it, or libprofil said why above",
					   program, WEXITSTATUS(status));
			else
				error_line("no profile was written: %s was killed by signal %d (%s) "
					   "before libprofil started in it, or libprofil said why above",
					   program, WTERMSIG(status), strsignal(WTERMSIG(status)));
		}
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	int sig = WTERMSIG(status);
	signal(sig, SIG_DFL);
	fflush(NULL);
	raise(sig);	/* die as the program died */
	return 128 + sig;
}
