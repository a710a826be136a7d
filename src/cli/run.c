/*
 * run.c - profil run: a program under the profiler, without recompiling.
 *
 * libprofil is preloaded with PROFIL_RUN set: it profiles every process
 * of the tree into a file of its own (src/runtime/preload/preload.c) and adds
 * each file's name to .profil-last here, which `profil report` reads by
 * default.  The exit status is the program's.
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
#include "../format/profile.h"
#include "cli.h"
#include "model.h"

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

/* How many files the run made, and how much they hold. */
static void summary(const char *list, const char *program)
{
	/* Read whole before each file is opened: one descriptor at a time
	   under a tight RLIMIT_NOFILE. */
	FILE *f = fopen(list, "r");
	char *names = NULL;
	size_t size = 0;
	if (f) {
		names = xmalloc(1);
		char chunk[4096];
		size_t got;
		while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
			names = xrealloc(names, size + got + 1);
			memcpy(names + size, chunk, got);
			size += got;
		}
		names[size] = '\0';
		fclose(f);
	}
	if (!names) {
		error_line("%s: %s: cannot tell which profiles were written", list,
			   strerror(errno));
		return;
	}
	char first[PATH_MAX + 2] = "";
	unsigned n = 0;
	int perf_errno = 0;
	unsigned fallback = 0;
	for (char *line = strtok(names, "\n"); line; line = strtok(NULL, "\n")) {
		if (n++ == 0)
			snprintf(first, sizeof first, "%s", line);
		int err = perf_errno_of(line, &fallback);
		if (err)
			perf_errno = err;
	}
	free(names);
	if (perf_errno)
		fprintf(stderr, "profil: perf events refused (%s): the timer backend sampled "
			"instead\n", perf_refusal(perf_errno));
	if (fallback)
		fprintf(stderr, "profil: %u thread%s had no perf event (RLIMIT_NOFILE, "
			"RLIMIT_MEMLOCK): sampled by timer instead\n", fallback,
			fallback == 1 ? "" : "s");
	struct stat st;
	char *path = n ? NULL : find_program(program);
	if (path && stat(path, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID)))
		error_line("no profile was written: %s is set-user-ID or set-group-ID, and "
			   "the loader ignores LD_PRELOAD there", program);
	else if (n == 0)
		error_line("no profile was written: the program is statically linked (profil "
			   "run cannot profile it), or libprofil said why above");
	else if (n == 1)
		fprintf(stderr, "profil: wrote %s; see profil report\n", first);
	else
		fprintf(stderr, "profil: wrote %u profiles, one for each process; "
			"see profil report\n", n);
	free(path);
}

int run_options(int argc, char **argv, struct run_options *o)
{
	static const struct option longs[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "freq", required_argument, NULL, 'F' },
		{ "threads", required_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ 0, 0, 0, 0 },
	};
	memset(o, 0, sizeof *o);
	int c;
	opterr = 0;
	optind = 0;	/* all of getopt's state afresh, '+' included */
	while ((c = getopt_long(argc, argv, "+F:o:b:h", longs, NULL)) != -1) {
		switch (c) {
		case 'F':
			if (parse_hz(optarg, &o->hz) != 0) {
				error_line("-F '%s': not a whole number from %d to %d", optarg,
					   PROFIL_HZ_MIN, PROFIL_HZ_MAX);
				return 2;
			}
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'T': {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || errno || *end
			    || v > PROFILE_THREADS_MAX - 1) {
				error_line("--threads '%s': not a whole number from 0 to %u", optarg,
					   PROFILE_THREADS_MAX - 1);
				return 2;
			}
			o->threads = optarg;
			break;
		}
		case 'b':
			if (strcmp(optarg, "auto") && strcmp(optarg, "perf") && strcmp(optarg, "timer")) {
				error_line("--backend '%s': not one of auto, perf, timer", optarg);
				return 2;
			}
			o->backend = optarg;
			break;
		case 'h':
			puts("usage: profil run [-F HZ] [-o FILE] [--backend auto|perf|timer] "
			     "[--threads N] [--] PROGRAM [ARG...]");
			return 0;
		case ':':
			error_line("run: option '%s' needs a value", argv[optind - 1]);
			return 2;
		default:
			if (optopt)
				error_line("run: unknown option '-%c'", optopt);
			else
				error_line("run: unknown option '%s'", argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		error_line("run: no program given (profil run [OPTIONS] PROGRAM [ARG...])");
		return 2;
	}
	o->program = optind;
	return -1;
}

int cmd_run(int argc, char **argv)
{
	struct run_options opt;
	int parsed = run_options(argc, argv, &opt);
	if (parsed >= 0)
		return parsed;
	const char *out = opt.out, *backend = opt.backend, *threads = opt.threads;
	unsigned hz = opt.hz;
	char lib[PATH_MAX];
	if (find_library(lib, sizeof lib) != 0) {
		error_line("cannot find libprofil.so beside the command (set PROFIL_LIBRARY)");
		return 2;
	}

	const char *profdir = getenv("PROFDIR");
	if (out) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", out);
		char *slash = strrchr(dir, '/');
		if (slash)
			slash[slash == dir] = '\0';	/* "/x": "/" */
		if (check_dir("-o ", out, slash ? dir : ".") != 0)
			return 2;
	} else if (profdir && *profdir && check_dir("PROFDIR=", profdir, profdir) != 0) {
		return 2;
	}
	char cwd[PATH_MAX], list[PATH_MAX + 32], buf[PATH_MAX * 2 + 16];
	if (!getcwd(cwd, sizeof cwd)) {
		error_line("cannot name the current directory: %s", strerror(errno));
		return 2;
	}
	snprintf(list, sizeof list, "%s/%s", cwd, RUN_LIST);
	int lfd = open(list, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (lfd < 0) {
		error_line("%s: %s", list, strerror(errno));
		return 2;
	}
	close(lfd);

	/* After what is preloaded already (a sanitizer's runtime must be first). */
	const char *old = getenv("LD_PRELOAD");
	if (old && *old)
		snprintf(buf, sizeof buf, "%s:%s", old, lib);
	else
		snprintf(buf, sizeof buf, "%s", lib);
	set("LD_PRELOAD", buf);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	snprintf(buf, sizeof buf, "%llu",
		 (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
	set("PROFIL_RUN", buf);
	set("PROFIL_RUN_LIST", list);
	if (hz) {
		snprintf(buf, sizeof buf, "%u", hz);
		set("PROFIL_HZ", buf);
	}
	if (backend)
		set("PROFIL_BACKEND", backend);
	if (threads)
		set("PROFIL_RUN_THREADS", threads);
	if (out) {
		/* Asked for by name: an older file of that name is replaced. */
		struct stat st;
		if (lstat(out, &st) == 0 && S_ISREG(st.st_mode))
			unlink(out);
		if (out[0] == '/')
			snprintf(buf, sizeof buf, "%s", out);
		else
			snprintf(buf, sizeof buf, "%s/%s", cwd, out);
		set("PROFIL_OUT", buf);
	} else if (!getenv("PROFDIR") && !getenv("GMON_OUT_PREFIX") && !getenv("PROFIL_OUT")) {
		/* Every process of the tree writes here, wherever it goes. */
		set("PROFDIR", cwd);
	}

	pid_t pid = fork();
	if (pid < 0) {
		error_line("cannot fork: %s", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		execvp(argv[opt.program], argv + opt.program);
		error_line("%s: %s", argv[opt.program], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	/* Like a shell: ^C and ^\ are for the program. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			error_line("waiting for %s: %s", argv[opt.program], strerror(errno));
			return 2;
		}
	/* 126 and 127 from a child that could not exec said why already. */
	if (!WIFEXITED(status) || (WEXITSTATUS(status) != 126 && WEXITSTATUS(status) != 127))
		summary(list, argv[optind]);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	int sig = WTERMSIG(status);
	signal(sig, SIG_DFL);
	fflush(NULL);
	raise(sig);	/* die as the program died */
	return 128 + sig;
}

char **input_files(int argc, char **argv)
{
	char **files = xmalloc((size_t)(argc + 1) * sizeof *files);
	int n = 0;
	for (int i = 0; i < argc; i++)
		files[n++] = xstrdup(argv[i]);
	files[n] = NULL;
	if (n)
		return files;
	FILE *f = fopen(RUN_LIST, "r");
	if (!f) {
		error_line("no file given, and no %s here from a profil run", RUN_LIST);
		free(files);
		return NULL;
	}
	/* Whole lines, however long: a name is never cut in two. */
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned lineno = 0;
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (!len)
			continue;
		if (strlen(line) != (size_t)len) {
			error_line("%s: line %u holds a NUL byte: not a file name", RUN_LIST, lineno);
			free(line);
			fclose(f);
			free_files(files);
			return NULL;
		}
		files = xrealloc(files, ((size_t)n + 2) * sizeof *files);
		files[n++] = xstrdup(line);
		files[n] = NULL;
	}
	free(line);
	fclose(f);
	if (n == 0) {
		error_line("%s lists no profile: the last profil run wrote none", RUN_LIST);
		free(files);
		return NULL;
	}
	return files;
}

void free_files(char **files)
{
	for (char **f = files; f && *f; f++)
		free(*f);
	free(files);
}
