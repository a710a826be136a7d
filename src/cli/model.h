/*
 * model.h - what the command knows of a profile, whatever file it came
 * from: objects (a program, its libraries), each with the address
 * ranges that were counted and their counts, and the statistics.
 * report, merge and export all work on this.
 */
#ifndef PROFIL_CLI_MODEL_H
#define PROFIL_CLI_MODEL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "../format/profile.h"

/* Samples counted over [first, last] (link-time addresses of the object). */
struct bin {
	uint64_t first, last;
	uint64_t count;
	uint64_t system;	/* of count, samples for time in the kernel */
};

/* One executable range of an object, as the histogram covered it. */
struct range {
	uint64_t vaddr, length, file_offset;
};

/* An object's flag beside the PROFILE_SEG_* ones: the samples outside
 * every object's text (JIT code, anonymous executable memory), at their
 * runtime pcs; a bin at 0 holds those whose pc was not kept.  Its path
 * is MODEL_ANON_NAME, or /tmp/perf-PID.map when that names its pcs. */
#define OBJECT_ANON 0x100
#define MODEL_ANON_NAME "[JIT or anonymous code]"

struct object {
	char *path;
	uint8_t build_id[64];
	unsigned build_id_len;
	uint64_t bias;		/* of the first process that had it mapped */
	int flags;		/* PROFILE_SEG_*, OBJECT_ANON */
	struct range *ranges;
	size_t nranges;
	struct bin *bins;	/* sorted by first once model_finish ran */
	size_t nbins, capbins;
	uint64_t total;
};

/* A call arc from a gmon.out: call site -> callee entry, link-time addresses.
 * from is NULL for a call from outside every object's text (libc calling
 * back, a signal handler: gprof's spontaneous callers); from_pc is then
 * the address as the file has it. */
struct arc {
	struct object *from, *to;
	uint64_t from_pc, to_pc, count;
};

/*
 * A thread of a profiled process, from a profile file's thread table;
 * or one row that stands for samples no thread holds (tid below 0).
 */
enum {
	THREAD_OTHERS = 0,		/* tid: threads past the table's size */
	THREAD_NO_TABLE = -1,		/* a file without a thread table */
	THREAD_UNATTRIBUTED = -2,	/* the table could not be written */
};

struct thread {
	int32_t pid, tid;
	char comm[16];		/* NUL-terminated */
	char *program;		/* the process's command */
	uint64_t samples, system;
	uint64_t unplaced;	/* of samples, at no address the table kept */
	int ended;
};

/* Which threads' samples the model keeps (report --tid, --comm). */
struct thread_filter {
	const int32_t *tids;
	size_t ntids;
	const char *comm;	/* a fnmatch(3) pattern, or NULL */
};

struct model {
	const char *exe;	/* the program of gmon.out files (--exe) */
	/* With a filter, bins hold only the samples of the threads it
	   keeps, from the files' thread tables. */
	const struct thread_filter *filter;
	struct object *objects;
	size_t nobjects;
	unsigned nfiles;
	unsigned unfinished;	/* files of processes that did not exit */
	unsigned running;	/* of those, processes still running when read */
	int32_t running_pid;	/* the first of them */
	unsigned ended;		/* of those, ended as profil run saw */
	uint32_t end_status;	/* the first one's wait status */
	unsigned gmon_files;	/* gmon.out files: no statistics but counts */
	unsigned gmon_unrecorded; /* of them, without a .stats beside them */
	unsigned system_files;	/* files with system counts per pc */
	uint32_t hz;
	int backend;
	int perf_errno;		/* why perf was passed over (auto), or 0 */
	unsigned write_lost;	/* files that lost samples to a full disk */
	int no_kernel;
	uint64_t taken, counted, outside, saturated, lost, observed, cpu_ns;
	/* lost by cause (enum profile_lost), and the part of it from files
	   that do not break it down (older writers, gmon.out's .stats). */
	uint64_t lost_by[PROFILE_LOST_COUNT], lost_unsplit;
	uint32_t hz_asked;	/* the highest rate asked above the one used, or 0 */
	uint64_t threads, threads_unsampled, threads_fallback, system;
	/* Threads sampled that never had a sample, so no entry in their
	   file's table, nor a row: from the files whose tables held every
	   thread (silent_unknown: some file's did not). */
	uint64_t threads_silent;
	int threads_silent_unknown;
	uint64_t start_ns, end_ns;
	struct arc *arcs;	/* sorted and unique once model_finish ran */
	size_t narcs, caparcs;
	int pid, ppid;		/* of the first file (0: unknown) */
	char command[256];	/* its argv[0], or the program of a gmon.out */
	/* Its whole command line, as the file has it (NUL-terminated
	   arguments, the last perhaps cut: cmdline_cut); NULL: not recorded. */
	char *cmdline;
	size_t cmdline_len;
	int cmdline_cut;
	struct thread *thread_rows;	/* every thread of every file */
	size_t nthread_rows;
	unsigned thread_files;	/* files with a thread table */
	uint64_t unattributed;
	/* Under a filter: the samples of the threads kept, those of them
	   at no address the tables kept, and the threads kept. */
	uint64_t kept, kept_unplaced;
	size_t kept_threads;
	struct origins origins;	/* the runs and programs of the files */
	struct model_stacks *stacks;	/* the files' call stacks (stacks.h), or NULL */
};

/*
 * A profile's lost samples by cause and the rate it asked for, from its
 * extension page e (NULL: none) and its header's lost (lostcause.c).
 */
void model_ext_stats(struct model *m, const struct profile_ext *e, uint64_t lost);

/*
 * The lost samples by cause as a phrase, "N spread over the run (ring
 * full N, ...), N not (thread tails N, ...)"; "" when nothing was lost.
 */
void lost_describe(const struct model *m, char *buf, size_t len);
/* The same as JSON members: ,"lost_by":{...},"hz_asked":N */
void lost_json(FILE *f, const struct model *m);

/*
 * Add a file to the model.  Prints one line naming the file and what is
 * wrong, and returns -1, if it cannot be read.
 */
int model_add_file(struct model *m, const char *path);
/* The same, into also too if not NULL: the file read once for both. */
int model_add_file2(struct model *m, struct model *also, const char *path);

/*
 * Add a pcsample file or a mon.out (classic.c): 0, -1 after printing why
 * it cannot be read, or 1 if the file is of neither kind.
 */
int model_add_classic(struct model *m, const char *path);

/* The object of that path and build ID, made if new; its bias if made. */
struct object *model_object(struct model *m, const char *path, const uint8_t *build_id,
			    unsigned build_id_len, uint64_t bias);
/* Note an executable range of o, and samples over [first, last]. */
void model_range(struct object *o, uint64_t vaddr, uint64_t length, uint64_t file_offset);
void model_bin(struct object *o, uint64_t first, uint64_t last, uint64_t count);
void model_bin_system(struct object *o, uint64_t first, uint64_t last, uint64_t count,
		      uint64_t system);

/* n samples outside every object, at runtime pcs [first, last] (0, 0:
   not kept): a bin of MODEL_ANON_NAME's object. */
void model_outside(struct model *m, uint64_t first, uint64_t last, uint64_t n);

/* Note count calls from from_pc (in from, or NULL) to to_pc (in to). */
void model_arc(struct model *m, struct object *from, struct object *to, uint64_t from_pc,
	       uint64_t to_pc, uint64_t count);

/* Sort and merge the bins and the arcs; call once every file is in. */
void model_finish(struct model *m);

/*
 * The threads of profile p (src/format/profile.h) into m->threads; with
 * a filter, the bins of the threads it keeps into their objects
 * (m->objects[objs[i]] for the file's segment i).  threads.c.
 */
struct profile;
void model_add_threads(struct model *m, const struct profile *p, const size_t *objs);

/* A file without a thread table: its samples as one row (THREAD_NO_TABLE). */
void model_thread_whole(struct model *m, int32_t pid, const char *program, uint64_t samples,
			uint64_t system);

/* --tid TID[,TID...] into f (its tids allocated; the caller frees them):
   0, or -1 after one line saying what is wrong (f's tids then freed). */
int thread_filter_tids(struct thread_filter *f, const char *arg);

/* Does the filter keep that thread? */
int thread_kept(const struct thread_filter *f, int32_t tid, const char *comm);

/* The samples the report is of, whose shares it shows: all those counted
   or outside every object (JIT code), or those the filter kept. */
uint64_t model_samples(const struct model *m);

/* Seconds of CPU time one sample stands for. */
double model_seconds_each(const struct model *m);

/*
 * The command line to show (cmdline.c): the arguments separated by
 * spaces, each quoted as a POSIX shell would need it to read it back,
 * "[...]" after one cut short; argv[0] alone if that is all the files
 * have.  Allocated; the caller frees it.
 */
char *model_command_line(const struct model *m);

void model_free(struct model *m);

/* The header's lines on files left running (alive.c): in running, the
   processes still running when read; in killed, those that did not exit
   normally; each empty if none. */
void unfinished_notes(const struct model *m, char *running, char *killed, size_t len);

const char *backend_name(int id);

/* Why perf_event_open refused, for one line: "EACCES, as under ...". */
const char *perf_refusal(int err);

#endif
