/*
 * attach.h - profil run -p: processes that are already running, sampled
 * from outside by perf events (attach.c drives it).
 *
 * Nothing is loaded into the target: each of its threads gets a
 * task-clock event opened by profil (attach_perf.c), whose ring profil
 * reads; the objects it maps are named from /proc/PID/maps at the start
 * and from PERF_RECORD_MMAP2 records after (attach_maps.c); the samples
 * are counted into histograms laid out as libprofil lays out its own;
 * with stacks, each sample's copy of the user stack is walked by the
 * runtime's unwinder with tables built from the target's objects
 * (attach_unwind.c); all is written at the end as the same profil(5)
 * file (attach_write.c).
 */
#ifndef PROFIL_CLI_ATTACH_H
#define PROFIL_CLI_ATTACH_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "../format/profile.h"
#include "merge_stacks.h"

struct attach_table;

/* One executable range of a mapped object: a segment of the file. */
struct attach_obj {
	struct profile_segment head;	/* as written, size and all */
	uint32_t *counts;		/* head.ncounters */
	uint32_t *system;		/* of them in the kernel; NULL: user-only */
	int unmapped;			/* replaced by another mapping */
	const struct attach_table *unwind;	/* its unwind table, or NULL */
};

/* A thread's samples by (object, counter), for the thread table. */
struct attach_pc {
	uint64_t key;			/* (object + 1) << 32 | counter; 0 free */
	uint32_t count, system;
};

struct attach_proc;

struct attach_thread {
	pid_t tid;
	struct attach_proc *proc;
	int fd;				/* -1 once closed */
	void *map;			/* the ring: a page of metadata, then data */
	size_t map_size;
	uint64_t data_size;
	uint64_t throttled_at;
	uint32_t index;			/* in proc->threads */
	uint64_t samples, system;
	uint64_t lost_ring, lost_throttled, lost_corrupt;	/* said by the kernel */
	uint64_t clock_ns;		/* its task clock while attached */
	char comm[16];
	int ended;
	struct attach_pc *pcs;		/* open addressing, npcs a power of two */
	size_t npcs, used;
};

struct attach_proc {
	pid_t pid, ppid;
	char name[256];			/* the program's file name: NAME.PID.prof */
	char exe[PATH_MAX];		/* /proc/PID/exe as it was at the start */
	char cmdline[PROFILE_CMDLINE_MAX];
	uint32_t cmdline_len;
	int cmdline_cut;
	struct attach_obj **objs;
	size_t nobjs, last;		/* last: the object the last sample hit */
	struct attach_thread **threads;
	size_t nthreads;
	uint32_t unsampled;		/* threads no event could be opened on */
	uint64_t counted, outside, saturated, system;
	uint64_t start_ns, end_ns;	/* CLOCK_REALTIME */
	int exited;			/* ended while attached */
	int rescan_maps;		/* a pc in no object: read the maps again */
	/* With stacks: each thread's distinct stacks, keyed by the
	   thread's index (the file's thread entries are known only at the
	   end), and the unwind tables of the objects mapped now. */
	struct mstacks stacks;
	struct attach_unwind *unwind;
};

/* How the events are opened: the same for every thread. */
struct attach_config {
	unsigned hz;
	uint64_t period_ns;
	int user_only;			/* exclude_kernel: kernel time unseen */
	uint64_t run_id;
	uint32_t stack_copy;		/* bytes of user stack per sample; 0: no stacks */
	uint64_t ring_bytes;		/* of every ring mapped so far */
	unsigned char *rec;		/* room for the largest record */
	size_t rec_size;
};

/* ---- attach_perf.c ---- */

/*
 * Open the event of thread t (t->tid, t->proc set), its ring mapped and
 * the event enabled: 0, or -1 with errno (ESRCH: the thread is gone).
 */
int attach_event_open(struct attach_config *c, struct attach_thread *t);
/* The raw open alone, disabled, for the permission check: an fd or -1. */
int attach_event_probe(const struct attach_config *c, pid_t tid);
/* Read what the ring holds: samples counted, objects noted. */
void attach_drain(const struct attach_config *c, struct attach_thread *t);
/* Drain, read the task clock, close: the thread is done. */
void attach_event_close(const struct attach_config *c, struct attach_thread *t);

/* ---- attach_maps.c ---- */

/* The executable mappings of /proc/PID/maps as objects. */
void attach_maps_read(const struct attach_config *c, struct attach_proc *p);
/* One mapping, from /proc/PID/maps or a PERF_RECORD_MMAP2. */
void attach_map_add(const struct attach_config *c, struct attach_proc *p, uint64_t start,
		    uint64_t len, uint64_t pgoff, const char *path);
/* A sample of thread t at user pc (system: it was in the kernel): 1 if
   it was counted in an object, 0 if not (outside, saturated). */
int attach_count(struct attach_thread *t, uint64_t pc, int system);
/* The process exec'd: its objects are gone. */
void attach_maps_exec(struct attach_proc *p);
void attach_proc_free(struct attach_proc *p);

/* ---- attach_unwind.c ---- */

/* The user registers of a sample, as PERF_SAMPLE_REGS_USER asks them. */
uint64_t attach_regs_mask(void);
/* Their index in a record: the pc's, or -1 on a machine without a walk. */
int attach_regs_pc(void);
unsigned attach_regs_count(void);
/* The unwind table of object o (put at o->head.bias) from the file open
   at fd (-1: the vDSO, the same as profil's own); none if it has no CFI. */
void attach_unwind_object(struct attach_proc *p, struct attach_obj *o, int fd);
/* The objects mapped changed: the walk's set is made again. */
void attach_unwind_changed(struct attach_proc *p);
/*
 * The stack of a sample of t counted at pc: the user registers (abi,
 * attach_regs_count() of them) and size bytes copied from the user
 * stack of which the kernel filled dyn, walked and kept in p->stacks.
 */
void attach_stack(struct attach_thread *t, uint64_t pc, int system, uint64_t abi,
		  const uint64_t *regs, const unsigned char *stack, uint64_t size, uint64_t dyn);
void attach_unwind_free(struct attach_proc *p);
/* The tables of every object, shared by the processes: at the end. */
void attach_unwind_release(void);

/* ---- attach_write.c ---- */

/* The profile of p into dir: 0, or -1 after one line. */
int attach_write(const struct attach_config *c, const struct attach_proc *p, const char *dir);

#endif
