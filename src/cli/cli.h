/*
 * cli.h - what the parts of the profil command share.
 */
#ifndef PROFIL_CLI_H
#define PROFIL_CLI_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* Print "profil: MESSAGE" on one line of standard error. */
void error_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* profil run: -1 after one line if -F hz is more than backend (NULL:
   PROFIL_BACKEND's, else auto) delivers here, or than perf does for -p
   (attach); else 0. */
int run_rate_check(unsigned hz, const char *backend, int attach);

/* Allocation that never returns NULL: the command exits instead. */
void *xmalloc(size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Print s as one CSV field on standard output, quoted if it must be. */
void csv_field(const char *s);

/* At most max bytes of s as HTML text or attribute value (&, <, >, " escaped). */
void html_escape(FILE *f, const char *s, size_t max);

/*
 * A double as an integer, saturated (NaN as 0): a hostile file's
 * statistics can make any value, and a conversion out of range is
 * undefined behaviour.
 */
static inline uint64_t sat_u64(double v)
{
	return v >= 18446744073709551616.0 ? UINT64_MAX : v > 0 ? (uint64_t)v : 0;
}

static inline int64_t sat_i64(double v)
{
	if (v != v)
		return 0;
	return v >= 9223372036854775808.0 ? INT64_MAX
	       : v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
}

/* The subcommands; each returns the command's exit status. */
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_cache(int argc, char **argv);	/* bidcache_cmd.c */

/*
 * An output file made whole under a temporary name (tempfile.c):
 * temp_open creates tmp (len bytes) beside out, or prints why not and
 * returns -1; temp_finish closes fd (unless -1), renames tmp to out if
 * ok (the caller said why not), else removes it, and returns 0 or -1
 * (after printing why).
 */
int temp_open(const char *out, char *tmp, size_t len, int mode);
int temp_finish(int fd, const char *tmp, const char *out, int ok);

/*
 * SPEC 6b (outcheck.c): 1 after one line naming opt and out if out must
 * not be written: a directory, not a regular file, one of files, the
 * run list, exe, an object of m (either may be NULL), or a profile of
 * any kind; 0 if it may be.
 */
struct model;
int output_refused(const char *opt, const char *out, char *const *files, const char *exe,
		   const struct model *m);

/*
 * The runs and programs the files given are of (origins.c): noted file
 * by file (run_id 0: not of a profil run; program NULL: not known).
 */
struct origin_pair {
	size_t run, program;
};
struct origins {
	char **runs, **programs;
	size_t nruns, nprograms;
	struct origin_pair *pairs;
	size_t npairs;
};
void origins_note(struct origins *o, uint64_t run_id, const char *program);
/* The same for a profil profile (src/format/profile.h). */
struct profile;
void origins_note_profile(struct origins *o, const struct profile *p);
/* The program of a profil profile: its main executable's path, or (in
   buf) its command. */
const char *profile_program(const struct profile *p, char *buf, size_t len);

/*
 * Is the process that wrote a profile still running (alive.c)?  The pid
 * must be taken by a process that started no later than the profile
 * (start_ns, CLOCK_REALTIME) and, where /proc shows it, runs program.
 */
int process_running(int32_t pid, uint64_t start_ns, const char *program);
/* Runs of different programs: some program has no file in some run. */
int origins_mixed(const struct origins *o);
/* "2 runs of 2 programs", in buf. */
const char *origins_describe(const struct origins *o, char *buf, size_t len);
/* If mixed, one line: "warning: the files are 2 runs of 2 programs
   (zstd, lz4), WHAT". */
void origins_warn(const struct origins *o, const char *what);
void origins_free(struct origins *o);

/* profil merge of gmon.out files (merge_gmon.c): a gmon.out with the
   histograms and the call arcs summed. */
int merge_gmon(char **files, const char *out);

/*
 * profil run's options, parsed apart from running anything (so that
 * tests/fuzz/cli.c can drive the parser): returns -1 with *o filled in
 * and o->program the index of PROGRAM in argv, or the command's exit
 * status after --help (0) or a bad option (2, one line said).
 */
struct run_options {
	const char *out, *backend;
	const char *threads;	/* --threads N, or NULL */
	int stacks;		/* --stacks 1, --no-stacks 0; -1: not given */
	unsigned hz;		/* 0: not given */
	int program;		/* 0 with pids */
	const char *pids;	/* -p PID[,PID...], or NULL */
	double duration;	/* --duration SECONDS; 0: until a signal */
	int no_cache;		/* --no-cache: keep no object by build ID */
};
int run_options(int argc, char **argv, struct run_options *o);

/* profil run -p (attach.c): the processes of o->pids sampled from
   outside into the run directory dir; the exit status. */
int attach_run(const struct run_options *o, const char *dir);

/* The list of files the last `profil run` in this directory made. */
#define RUN_LIST ".profil-last"

/*
 * The files to read: the arguments, or those of the last run.  Returns
 * a NULL-terminated array, or NULL after printing why there is none.
 */
char **input_files(int argc, char **argv);
void free_files(char **files);

#endif
