/*
 * profil.h - the public interface of libprofil.
 *
 * libprofil samples the user-mode program counter of every thread of a
 * process at regular intervals of CPU time and counts each sample into
 * histograms the program supplies.  It provides the classic Unix call
 * profil() under glibc's prototype, so that a program linked with
 * libprofil gets this implementation instead of glibc's, and a small
 * native interface for what the classic calls cannot say: the sampling
 * rate, the backend, and statistics that add up.
 *
 * This header may be included together with <unistd.h>, <sys/gmon.h> and
 * <sys/profil.h>; the declarations agree with glibc's.
 *
 * Everything here is documented in profil(3) and profil_stats(3).
 */
#ifndef PROFIL_H
#define PROFIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>	/* brings glibc's <features.h> and __THROW */
#include <sys/time.h>

/*
 * struct prof and the PROF_ flags are glibc's, from <sys/profil.h>: take
 * them from there, so that both headers can be included in either order,
 * and define the same only where the C library has none.
 */
#if defined(__has_include)
#if __has_include(<sys/profil.h>)
#include <sys/profil.h>
#endif
#endif
#ifndef _PROFIL_H
#define _PROFIL_H 1
struct prof {
	void *pr_base;			/* the counters */
	size_t pr_size;			/* their size in bytes */
	size_t pr_off;			/* pc of the first counter */
	unsigned long int pr_scale;	/* as profil's scale */
};
enum {
	PROF_USHORT = 0,		/* 16-bit counters (the default) */
	PROF_UINT = 1 << 0,		/* 32-bit counters */
	PROF_FAST = 1 << 1		/* accepted; the rate is profil_set_hz's */
};
#endif

#ifdef __THROW
#define PROFIL_THROW __THROW
#else
#define PROFIL_THROW
#endif

#ifdef __cplusplus
extern "C" {
#endif

/*
 * profil - start, change or stop execution-time profiling of the process.
 *
 * buf holds bufsiz / 2 counters of 16 bits.  While profiling is on, each
 * thread of the process is sampled after every period of CPU time it uses;
 * a sample at pc adds one to counter ((pc - offset) / 2) * scale / 65536,
 * computed exactly for every 64-bit pc and offset.  A pc below offset or
 * past the last counter counts nowhere.  Counters stop at 65535.
 *
 * scale 0 or 1, buf NULL or bufsiz below 2 turn profiling off.  A call
 * while profiling is on replaces the buffer; no sample is counted into
 * the old one after the call returns.
 *
 * Returns 0, or -1 with errno EINVAL (scale above 0x10000; the previous
 * profile goes on) or EFAULT (buf is not writable memory; nothing started).
 */
int profil(unsigned short *buf, size_t bufsiz, size_t offset,
	   unsigned int scale) PROFIL_THROW;

/*
 * sprofil - profile into several regions at once (glibc's interface).
 * profcnt regions, each a histogram like profil's with its own counters
 * (16 bits, or 32 with PROF_UINT), offset and scale.  A sample goes to
 * the region with the highest pr_off that holds its pc; a region with
 * pr_off 0 and pr_scale 2 is the overflow bin, one counter for the
 * samples no other region holds.  Regions with pr_scale below 2 are
 * ignored.  tvp, if not NULL, receives the sampling period in force.
 * profcnt 0 turns profiling off; a call while it is on replaces the
 * regions.  Returns 0, or -1 with errno EINVAL or EFAULT (sprofil(3)).
 */
int sprofil(struct prof *profp, int profcnt, struct timeval *tvp,
	    unsigned int flags) PROFIL_THROW;

/*
 * pcsample - store the raw pc of every sample of every thread in samples,
 * in order, until nsamples are stored (Solaris).  nsamples 0 stops.
 * Returns the number stored in the array of the previous call (0 if
 * there was none), or -1 with errno EINVAL (nsamples negative) or
 * EFAULT (samples is not writable memory).  See pcsample(3).
 */
long pcsample(uintptr_t samples[], long nsamples) PROFIL_THROW;

/*
 * profil_pcsample_save - write nsamples pcs and the load map of the
 * process to path, in the format of pcsample(5), for profil report.
 * Returns 0, or -1 with errno (EEXIST: path exists and is not replaced).
 */
int profil_pcsample_save(const char *path, const uintptr_t samples[],
			 long nsamples) PROFIL_THROW;

/*
 * monitor - profile [lowpc, highpc) into buffer, bufsize 16-bit words
 * (Solaris monitor(3C)): a header and nfunc call-count cells, then a
 * histogram of the rest.  monitor(NULL, ...) stops and writes mon.out,
 * or PID.PROGNAME in $PROFDIR; so does exit.  Returns 0, or -1 with
 * errno (EINVAL, EFAULT, or why the file could not be written).
 * See monitor(3) and mon.out(5).
 */
int monitor(int (*lowpc)(void), int (*highpc)(void), unsigned short *buffer,
	    size_t bufsize, size_t nfunc) PROFIL_THROW;

/*
 * The gmon runtime of programs built with cc -pg (see moncontrol(3)):
 * monstartup starts the histogram of [lowpc, highpc) and the counting
 * of call arcs (glibc's gcrt1.o calls it at start), moncontrol turns
 * both off (0) and on again, _mcleanup stops and writes the profile
 * (gcrt1.o registers it with atexit).  The prototypes are glibc's.
 */
void monstartup(unsigned long lowpc, unsigned long highpc) PROFIL_THROW;
void moncontrol(int mode) PROFIL_THROW;
void _mcleanup(void) PROFIL_THROW;

/* Backends that take samples; see profil_set_backend(3). */
enum profil_backend {
	PROFIL_BACKEND_AUTO = 0,	/* the first that works here */
	PROFIL_BACKEND_PERF = 1,	/* perf_event_open software clock */
	PROFIL_BACKEND_TIMER = 2	/* per-thread POSIX CPU-time timers */
};

/* The lowest and highest rate profil_set_hz() accepts. */
#define PROFIL_HZ_MIN 1
#define PROFIL_HZ_MAX 100000
/* The rate used when neither PROFIL_HZ nor profil_set_hz() says otherwise. */
#define PROFIL_HZ_DEFAULT 1000

/*
 * profil_set_hz - set the sampling rate, in samples per CPU-second of each
 * thread.  Takes effect at once if profiling is on, and for every later
 * start.  Returns 0, or -1 with errno EINVAL if hz is outside
 * [PROFIL_HZ_MIN, PROFIL_HZ_MAX].
 */
int profil_set_hz(unsigned int hz) PROFIL_THROW;

/*
 * profil_set_backend - choose the backend for the next start of
 * profiling.  Returns 0, or -1 with errno EINVAL (unknown backend),
 * EBUSY (profiling is on: stop it first) or ENOTSUP (that backend is not
 * available in this build or on this kernel).
 */
int profil_set_backend(enum profil_backend backend) PROFIL_THROW;

/* The most frames profil_set_stacks() keeps, and its default depth. */
#define PROFIL_STACKS_MAX 1024
#define PROFIL_STACKS_DEFAULT 128

/*
 * profil_set_stacks - record each sample's call stack, depth frames at
 * most (0: stacks off), where the profile has room for stacks (the
 * files of profil run).  Takes effect at once if profiling is on.
 * Returns 0, or -1 with errno EINVAL if depth > PROFIL_STACKS_MAX.
 */
int profil_set_stacks(unsigned int depth) PROFIL_THROW;

/*
 * Statistics of the process since it started or since the last
 * profil_reset_stats().  By construction
 *	taken == counted + outside + dropped
 *	dropped == saturated + lost
 * Counts are samples: a backend that observes the pc once for several
 * periods of CPU time (a timer that fired late) takes one sample for each
 * period, all at the observed pc; "observed" counts those observations.
 * When a thread stops being sampled, the periods of CPU time it used and
 * the backend never delivered are taken too, and lost; so taken always
 * stands for the CPU time of the sampled threads.
 */
struct profil_stats {
	uint64_t taken;		/* samples taken */
	uint64_t counted;	/* added to a counter */
	uint64_t outside;	/* pc outside every region */
	uint64_t dropped;	/* saturated + lost */
	uint64_t saturated;	/* the counter was already at its maximum */
	uint64_t lost;		/* taken but not countable: the buffer was
				   unwritable, or the kernel never delivered
				   the sample before the thread ended or
				   profiling stopped */
	uint64_t observed;	/* times a pc was read (signals, records) */
	uint64_t cpu_ns;	/* CPU time the samples stand for */
	uint32_t hz;		/* rate asked for */
	uint32_t achieved_hz;	/* observations per CPU-second */
	uint32_t threads;	/* threads given a sampler since the reset */
	uint32_t threads_unsampled; /* threads that could not be given one */
	int32_t backend;	/* enum profil_backend in use; 0 if never on */
	int32_t active;		/* 1 while profiling is on */
	int32_t faulted;	/* 1 if profiling stopped itself because the
				   buffer stopped being writable */
	uint32_t flags;		/* PROFIL_STATS_* */
	uint64_t system;	/* of the samples taken, those that stand for
				   time the kernel spent on a thread's behalf
				   (charged to the user pc that entered it) */
	uint32_t threads_fallback; /* threads the perf backend could not
				   give an event and gave a timer instead */
	uint32_t reserved;
};

/* profil_stats.flags: the backend in use cannot see time the kernel
   spends on a thread's behalf (perf with user-only events). */
#define PROFIL_STATS_USER_ONLY 0x1

/*
 * profil_get_stats - copy the statistics into *st.  size is
 * sizeof(struct profil_stats) as the caller knows it, so that a program
 * built against an older header keeps working.  Returns 0, or -1 with
 * errno EINVAL (st NULL or size 0).
 */
int profil_get_stats(struct profil_stats *st, size_t size) PROFIL_THROW;

/* profil_reset_stats - set every count to zero; profiling goes on. */
void profil_reset_stats(void) PROFIL_THROW;

#ifdef __cplusplus
}
#endif

#endif /* PROFIL_H */
