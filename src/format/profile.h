/*
 * profile.h - the profil profile file (profil(5)).
 *
 * One file per process.  The runtime writes it in place through a shared
 * file mapping while the program runs, so that a process killed hard
 * leaves a consistent file behind: a page of header, the thread table
 * (version 2; counts per thread), then one segment per executable range
 * of a mapped object, each a page of description followed by its
 * counters.  A segment is filled in before the header's
 * count of segments is raised to include it, so a reader that trusts
 * only the first nsegments segments never sees a half-written one.
 *
 * Every field is in the byte order of the machine that wrote the file;
 * the magic number tells a reader on another machine that it cannot
 * read it.  This header is shared by the writer in the runtime (libc
 * only) and the readers in the command.
 */
#ifndef PROFIL_FORMAT_PROFILE_H
#define PROFIL_FORMAT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#define PROFILE_MAGIC "PROFIL\x7fP"	/* 8 bytes */
#define PROFILE_VERSION 5		/* 2: the thread table; 3: outside pcs;
					   4: the extension page, stacks;
					   5: packed files (PROFILE_F_PACKED) */
#define PROFILE_VERSION_MIN 1		/* still read: no thread table */
#define PROFILE_PAGE 4096u		/* header and segment heads */
#define PROFILE_PATH_MAX 3832u
#define PROFILE_CMDLINE_MAX 3584u	/* what is left of the header page */

enum profile_state {
	PROFILE_RUNNING = 1,	/* written live; the process may have been killed */
	PROFILE_COMPLETE = 2,	/* closed at exit or before exec */
};

/* The first page of the file. */
struct profile_header {
	char magic[8];
	uint32_t version;
	uint32_t state;		/* enum profile_state */
	uint32_t byte_order;	/* 0x01020304 as written */
	uint32_t nsegments;	/* segments complete and counted */
	uint64_t end;		/* bytes of the file in use */
	int32_t pid;
	int32_t ppid;
	uint32_t hz;		/* rate asked for */
	int32_t backend;	/* enum profil_backend used; 0 if never on */
	uint32_t flags;		/* PROFILE_F_* */
	uint32_t threads;
	uint32_t threads_unsampled;
	uint32_t achieved_hz;
	uint64_t start_ns;	/* CLOCK_REALTIME at start */
	uint64_t update_ns;	/* CLOCK_REALTIME of the last update */
	/* The statistics of SPEC section 2, as of update_ns. */
	uint64_t taken;
	uint64_t counted;
	uint64_t outside;
	uint64_t saturated;
	uint64_t lost;
	uint64_t observed;
	uint64_t cpu_ns;
	uint64_t run_id;	/* the profil run that made it, or 0 */
	uint64_t system;	/* of taken: for time in the kernel */
	uint32_t threads_fallback; /* perf threads given a timer instead */
	uint32_t perf_errno;	/* why auto did not use perf_event_open, or 0 */
	uint32_t thread_entries;	/* entries of the thread table; 0: none */
	uint32_t end_status;	/* how a running file's process ended, as
				   profil run saw it: PROFILE_END_SEEN | its
				   wait status; 0: not known */
	uint64_t threads_at;	/* byte offset of the thread table, or 0 */
	uint64_t threads_size;	/* its bytes, page-aligned */
	uint64_t thread_pcs;	/* slots of its pc pool (a power of two) */
	uint64_t unattributed;	/* of counted: in no thread (table not writable) */
	uint64_t ext_at;	/* version 4: byte offset of struct profile_ext, or 0 */
	char command[256];	/* argv[0] of the program, NUL-terminated */
	/* The whole command line as /proc/self/cmdline had it at start:
	   each argument NUL-terminated, the last one perhaps cut short
	   (PROFILE_F_CMDLINE_CUT).  Every writer before this field left
	   these bytes zero: cmdline_len 0 is "not recorded". */
	uint32_t cmdline_len;	/* bytes of cmdline in use */
	uint32_t reserved1;
	char cmdline[PROFILE_CMDLINE_MAX];
	/* Version 3: where the samples outside every segment were (JIT
	   code, anonymous executable memory), so that a reader can name
	   them (/tmp/perf-PID.map): outside_pcs slots (a power of two, 0:
	   no table) of struct profile_pc at byte outside_at, right after
	   the thread table, keyed by the pc itself.  Of the header's
	   outside, what the slots miss was at no pc kept. */
	uint64_t outside_at;
	uint64_t outside_pcs;
};

/* Flags. */
#define PROFILE_F_NO_KERNEL 1u	/* the backend cannot see kernel time */
#define PROFILE_F_MERGED 2u	/* a sum of several profiles */
#define PROFILE_F_WRITE_LOST 4u	/* samples lost: the file system gave the
				   counters no room (a full disk) */
#define PROFILE_F_CMDLINE_CUT 8u /* cmdline holds only its first bytes */
#define PROFILE_F_PACKED 16u	/* version 5: the file's data packed, its
				   holes left out (struct profile_pack) */

/*
 * A packed file (profil run packs each finished process's file): the
 * header page as it was, then at byte PROFILE_PAGE this table, then the
 * pages of data it lists, back to back.  The file as it was written is
 * size bytes, zeros but for nextents extents: bytes [at, end) of it are
 * at byte from of the packed file.  All are multiples of PROFILE_PAGE,
 * extents in order and apart; the first is the header page, at 0.
 */
struct profile_pack_extent {
	uint64_t at, end, from;
};
struct profile_pack {
	uint64_t size;
	uint64_t nextents;
	struct profile_pack_extent extents[];
};
#define PROFILE_PACK_MAX (UINT64_C(1) << 40)	/* size a reader accepts */

/* Bytes of a pack table of n extents. */
static inline uint64_t profile_pack_size(uint64_t n)
{
	uint64_t bytes = sizeof(struct profile_pack) + n * sizeof(struct profile_pack_extent);
	return (bytes + PROFILE_PAGE - 1) / PROFILE_PAGE * PROFILE_PAGE;
}

/* In end_status: the end was seen; the low 16 bits are the wait status. */
#define PROFILE_END_SEEN 0x80000000u

/* The first page of a segment; its counters follow at the next page. */
struct profile_segment {
	uint64_t size;		/* bytes of this segment, page-aligned */
	uint64_t start;		/* runtime address of the first counter */
	uint64_t ncounters;
	uint64_t bias;		/* load bias: link-time address = runtime - bias */
	uint64_t vaddr;		/* link-time address of the executable range */
	uint64_t length;	/* bytes of the executable range */
	uint64_t file_offset;	/* of the range in the object's file */
	uint64_t counted;	/* sum of the counters (merge, complete files) */
	uint32_t scale;		/* as profil(2): 0x10000 is 2 bytes a counter */
	uint32_t width;		/* bytes per counter: 4 or 8 */
	uint32_t flags;		/* PROFILE_SEG_* */
	uint32_t build_id_len;
	uint8_t build_id[64];
	uint8_t reserved[120];
	char path[PROFILE_PATH_MAX];	/* NUL-terminated */
};

#define PROFILE_SEG_UNMAPPED 1u	/* the object was closed (dlclose) */
#define PROFILE_SEG_MAIN 2u	/* the main executable */
#define PROFILE_SEG_VDSO 4u	/* the kernel's vDSO: no file */
#define PROFILE_SEG_SYSTEM 8u	/* the system counts of the segment just before */

/*
 * The thread table: thread_entries entries, then thread_pcs pc slots.
 * Entry 0 is "other threads": the samples of threads that found no free
 * entry.  Every counted sample is counted in the header's statistics, in
 * a histogram counter and in exactly one entry (or, if the table could
 * not be written, in unattributed), so the entries' samples and
 * unattributed add up to counted.
 *
 * The pc pool is an open-addressed hash table shared by every entry,
 * keyed by (entry, segment, counter): the counter of the histogram the
 * sample was counted in, so a thread's samples land exactly where the
 * process's did.  A sample whose key finds no slot is counted in its
 * entry's samples only: what the slots of an entry miss of its samples
 * is "unplaced".
 */
struct profile_thread {
	int32_t tid;		/* 0: a free entry */
	uint32_t owner;		/* pid of the process, | PROFILE_THREAD_ENDED */
	char comm[16];		/* its name when last read: at the first
				   sample, once a second, at its end */
	uint64_t samples;	/* counted samples of the thread */
	uint64_t system;	/* of samples, for time in the kernel */
	uint64_t named_ns;	/* CLOCK_MONOTONIC_COARSE of the last naming */
	uint64_t reserved[2];
};

/* In owner: the thread has ended; a new thread of the same tid gets an
   entry of its own. */
#define PROFILE_THREAD_ENDED 0x80000000u
#define PROFILE_THREAD_PID(owner) ((int32_t)((owner) & ~PROFILE_THREAD_ENDED))

struct profile_pc {
	uint64_t key;		/* profile_pc_key(); 0: a free slot */
	uint32_t count;		/* samples (saturating) */
	uint32_t system;	/* of them, for time in the kernel */
};

#define PROFILE_THREADS_MAX 65535u	/* entries, "other threads" included */
#define PROFILE_PCS_MAX (1u << 24)	/* pc slots */

/* The key of counter index of segment seg (index in the file's order,
   companions of system counts left out) for entry. */
static inline uint64_t profile_pc_key(uint32_t entry, uint32_t seg, uint64_t index)
{
	return (uint64_t)(entry + 1) << 48 | (uint64_t)(seg & 0xffff) << 32 | index;
}
/* Can that counter be keyed at all? */
static inline int profile_pc_keyable(uint32_t entry, uint32_t seg, uint64_t index)
{
	return entry < PROFILE_THREADS_MAX && seg <= 0xffff && index <= UINT32_MAX;
}
#define PROFILE_PC_ENTRY(key) ((uint32_t)((key) >> 48) - 1)
#define PROFILE_PC_SEG(key) ((uint32_t)((key) >> 32) & 0xffff)
#define PROFILE_PC_INDEX(key) ((uint64_t)(uint32_t)(key))

/* The first slot a key is looked for in, of npcs (a power of two). */
static inline uint64_t profile_pc_hash(uint64_t key, uint64_t npcs)
{
	return (key * UINT64_C(0x9e3779b97f4a7c15)) >> 40 & (npcs - 1);
}
/* The first entry a thread is looked for in, of n. */
static inline uint32_t profile_thread_hash(int32_t tid, uint32_t n)
{
	return n > 1 ? 1 + (uint32_t)(((uint64_t)(uint32_t)tid * 0x9e3779b1u) >> 16) % (n - 1) : 0;
}
/* Slots probed before a key or thread gives up. */
#define PROFILE_PROBES 64

/* Bytes of a thread table of n entries and npcs pc slots. */
static inline uint64_t profile_threads_size(uint64_t n, uint64_t npcs)
{
	uint64_t bytes = n * sizeof(struct profile_thread) + npcs * sizeof(struct profile_pc);
	return (bytes + PROFILE_PAGE - 1) / PROFILE_PAGE * PROFILE_PAGE;
}

_Static_assert(sizeof(struct profile_thread) == 64, "thread entry");
_Static_assert(sizeof(struct profile_pc) == 16, "pc slot");
_Static_assert(sizeof(struct profile_header) <= PROFILE_PAGE, "header page");
/* Where profil(5) and the tests that corrupt files on purpose say. */
_Static_assert(offsetof(struct profile_header, thread_entries) == 160, "thread_entries");
_Static_assert(offsetof(struct profile_header, threads_size) == 176, "threads_size");
_Static_assert(offsetof(struct profile_header, end_status) == 164, "end_status");
_Static_assert(offsetof(struct profile_header, cmdline_len) == 464, "cmdline_len");
_Static_assert(offsetof(struct profile_header, cmdline) == 472, "cmdline");
_Static_assert(offsetof(struct profile_header, outside_at) == 4056, "outside_at");
_Static_assert(sizeof(struct profile_segment) == PROFILE_PAGE, "segment page");

#define PROFILE_OUTSIDE_MAX (1u << 20)	/* slots of the outside table */

/* Bytes of an outside table of npcs slots. */
static inline uint64_t profile_outside_size(uint64_t npcs)
{
	uint64_t bytes = npcs * sizeof(struct profile_pc);
	return (bytes + PROFILE_PAGE - 1) / PROFILE_PAGE * PROFILE_PAGE;
}

/*
 * Version 4: one page of struct profile_ext at header.ext_at, right after
 * the outside table (or wherever the tables before it end), for what
 * the header page has no room for; then, if stacks were recorded, the
 * stack table and its frame pool, and after them the segments.
 *
 * The stack table (SPEC section 10) holds each distinct (thread entry,
 * stack) once with its count: stack_slots slots (a power of two) of
 * struct profile_stack at stacks_at, open-addressed by hash, and a pool
 * of frames_cap pcs (uint64_t, runtime addresses, innermost first: the
 * sampled pc, then each return address) at frames_at that slots point
 * into.  A writer claims a slot (hash from 0), writes its pcs, then sets
 * ready; a reader takes only ready slots whose pcs lie in the pool's
 * used part.  The same stack may sit in two slots (two threads writing
 * it at once): readers add them up.
 */
enum profile_stop {		/* why a walk ended: the index of stop[] */
	PROFILE_STOP_COMPLETE = 0,	/* reached the outermost frame */
	PROFILE_STOP_NO_OBJECT,		/* a pc in no object with unwind tables */
	PROFILE_STOP_NO_CFI,		/* no usable rule for the pc */
	PROFILE_STOP_BAD_READ,		/* a read outside the stack, or one that faulted */
	PROFILE_STOP_DEPTH,		/* deeper than max_depth: the innermost kept */
	PROFILE_STOP_NOT_INCREASING,	/* the frame address went backwards */
	PROFILE_STOP_COPY,		/* past the end of perf's copy of the stack */
	PROFILE_STOP_NO_ROOM,		/* not walked: the sampled pc alone, for want
					   of room on an alternate signal stack */
	PROFILE_STOP_COUNT = 16
};

/*
 * Why samples were lost (the index of profile_ext.lost_by).  Some losses are
 * harmless to the shares (time-uniform: ring, throttle, late), some
 * bias them (tail, kernel, write): profil(5) says which.
 */
enum profile_lost {
	PROFILE_LOST_RING = 0,		/* perf: the ring was full (PERF_RECORD_LOST) */
	PROFILE_LOST_THROTTLE,		/* perf: periods the kernel throttled away */
	PROFILE_LOST_LATE,		/* perf: periods the kernel's timer skipped
					   (a late interrupt, a host's steal) */
	PROFILE_LOST_TAIL,		/* timer: periods of a thread's CPU time no
					   signal had delivered when it ended or
					   sampling stopped */
	PROFILE_LOST_KERNEL,		/* perf: kernel time that no system-time
					   signal charged */
	PROFILE_LOST_WRITE,		/* the counters' pages could not be written */
	PROFILE_LOST_CORRUPT,		/* perf: a ring whose records made no sense */
	PROFILE_LOST_STACK,		/* timer: signals that found too little stack
					   left for the handler (a small sigaltstack
					   or thread stack), not taken */
	PROFILE_LOST_KINDS,		/* the causes this version writes */
	PROFILE_LOST_COUNT = 8
};

struct profile_ext {
	uint64_t size;		/* bytes from ext_at to the first segment */
	uint64_t stacks_at;	/* byte offset of the stack slots; 0: no stacks */
	uint64_t stack_slots;	/* a power of two */
	uint64_t frames_at;	/* byte offset of the frame pool */
	uint64_t frames_cap;	/* pcs the pool holds */
	uint64_t frames_used;	/* pcs handed out; stacks past frames_cap
				   were not kept (counted in stacks_unplaced) */
	uint32_t max_depth;	/* frames a walk keeps at most */
	uint32_t stack_copy;	/* perf backend: bytes of stack copied per
				   sample; 0: stacks walked in place */
	uint64_t stacks;	/* of counted: samples whose stack is in a slot */
	uint64_t stacks_unplaced; /* of counted: with stacks on, samples whose
				   stack found no slot or no room */
	uint64_t stop[PROFILE_STOP_COUNT]; /* samples with a stack, by why
				   their walk ended */
	/* Since lost_kinds was added (0 before: lost not broken down). */
	uint32_t hz_asked;	/* the rate asked for, when the header's hz
				   (the rate used) is lower: the backend's
				   limit here; 0: the rate asked was used */
	uint32_t lost_kinds;	/* entries of lost_by[] written; 0: none */
	uint64_t lost_by[PROFILE_LOST_COUNT]; /* the header's lost by cause; they
				   add up to it as of the same update */
	uint64_t reserved[478];
};

/* One distinct stack of one thread entry: 32 bytes. */
struct profile_stack {
	uint64_t hash;		/* of (entry, pcs); 0: a free slot */
	uint32_t count;		/* samples (saturating) */
	uint32_t system;	/* of them, for time in the kernel */
	uint32_t frames;	/* index of its first pc in the pool */
	uint32_t entry;		/* thread-table entry; 0 with no table */
	uint16_t depth;		/* pcs, at least 1 */
	uint8_t stop;		/* enum profile_stop */
	uint8_t ready;		/* 1 once frames and depth are written */
	uint32_t reserved;
};

#define PROFILE_STACK_SLOTS_MAX (1u << 24)
#define PROFILE_FRAMES_MAX (UINT64_C(1) << 28)
#define PROFILE_DEPTH_MAX 1024u

_Static_assert(sizeof(struct profile_ext) == PROFILE_PAGE, "extension page");
_Static_assert(offsetof(struct profile_ext, hz_asked) == 200, "hz_asked");
_Static_assert(offsetof(struct profile_ext, lost_by) == 208, "lost");
_Static_assert(sizeof(struct profile_stack) == 32, "stack slot");
_Static_assert(offsetof(struct profile_header, ext_at) == 200, "ext_at");

/* Bytes of a stack table of n slots, and of a pool of n pcs. */
static inline uint64_t profile_stacks_size(uint64_t n)
{
	uint64_t bytes = n * sizeof(struct profile_stack);
	return (bytes + PROFILE_PAGE - 1) / PROFILE_PAGE * PROFILE_PAGE;
}
static inline uint64_t profile_frames_size(uint64_t n)
{
	uint64_t bytes = n * sizeof(uint64_t);
	return (bytes + PROFILE_PAGE - 1) / PROFILE_PAGE * PROFILE_PAGE;
}

/* Bytes a segment of n counters of width w takes, head included. */
static inline uint64_t profile_segment_size(uint64_t n, uint32_t width)
{
	uint64_t bytes = n * width;
	return PROFILE_PAGE + (bytes + PROFILE_PAGE - 1) / PROFILE_PAGE * PROFILE_PAGE;
}

/* ---- The command's side: reading and writing whole files. ---- */

struct profile_seg_view {
	const struct profile_segment *head;
	const void *counters;	/* head->ncounters of head->width bytes */
	const void *system;	/* of those samples, the ones for kernel time
				   (the same layout), or NULL: none recorded */
};

/* Bytes [at, end) of a file that hold data; the rest are holes (zeros). */
struct profile_extent {
	uint64_t at, end;
};

struct profile {
	const char *name;	/* the file name, as given */
	void *map;		/* the whole file, read-only */
	size_t map_size;
	struct profile_extent *extents;	/* by offset, apart */
	size_t nextents;
	const struct profile_header *header;
	size_t nsegs;
	struct profile_seg_view *segs;
	uint64_t counted;	/* sum over every counter */
	uint64_t system;	/* sum over every system count */
	int has_system;		/* some segment has system counts */
	/* The thread table, checked; nthreads 0 if the file has none. */
	const struct profile_thread *threads;
	uint32_t nthreads;
	const struct profile_pc *pcs;
	uint64_t npcs;
	/* The outside table (version 3), checked; noutside 0 if none. */
	const struct profile_pc *outside;
	uint64_t noutside;
	/* Version 4: the extension page, or NULL; its stack table, checked
	   (nstacks 0 if none), and the used part of its frame pool. */
	const struct profile_ext *ext;
	const struct profile_stack *stacks;
	uint64_t nstacks;
	const uint64_t *frames;
	uint64_t nframes;
	struct profile_spare *spare;	/* map's reservation, kept when closed */
	int guarded;		/* map holds pages of the file (profile_guard.h) */
};

/* The pcs of a slot of p->stacks, innermost first, or NULL for a free,
   unfinished or corrupt slot (a reader skips it). */
static inline const uint64_t *profile_stack_pcs(const struct profile *p,
						const struct profile_stack *s)
{
	if (!s->hash || s->ready != 1 || !s->depth || s->depth > PROFILE_DEPTH_MAX
	    || s->frames > p->nframes || s->depth > p->nframes - s->frames
	    || s->entry >= (p->nthreads ? p->nthreads : 1) || !s->count)
		return NULL;
	return p->frames + s->frames;
}

/*
 * Read and check a file.  Returns 0, or -1 with a one-line reason in
 * why (without the file name) when the file is missing, truncated,
 * foreign or corrupt.
 */
int profile_open(struct profile *p, const char *path, char *why, size_t whylen);
void profile_close(struct profile *p);

/*
 * The first of counters k..n-1 at base (width bytes each, inside p's
 * map) that the file holds data for, and in *end the one after the
 * run of them that it holds; n if none.  Counters in holes are zero:
 *   for (k = 0; (k = profile_data(p, base, w, n, k, &end)) < n;)
 *           for (; k < end; k++) ...
 */
uint64_t profile_data(const struct profile *p, const void *base, uint32_t width, uint64_t n,
		      uint64_t k, uint64_t *end);

/* The first of counters k..end-1 at base (width bytes each, base
   aligned to 32 bytes) that is not zero, or end: most counters of the
   pages a file holds are zeros. */
uint64_t profile_nonzero(const void *base, uint32_t width, uint64_t k, uint64_t end);

/* Counter i of a segment. */
static inline uint64_t profile_count(const struct profile_seg_view *s, uint64_t i)
{
	return s->head->width == 8 ? ((const uint64_t *)s->counters)[i]
				   : ((const uint32_t *)s->counters)[i];
}

/* System count i of a segment (0 if it has none). */
static inline uint64_t profile_system(const struct profile_seg_view *s, uint64_t i)
{
	if (!s->system)
		return 0;
	return s->head->width == 8 ? ((const uint64_t *)s->system)[i]
				   : ((const uint32_t *)s->system)[i];
}

/*
 * Pack the file at path in place (a packed copy renamed over it) if it
 * is a profile that is not packed yet: 1 if packed, 0 if left as it was
 * (already packed, or no gain), -1 with a one-line reason in why.  Only
 * for a file no process writes any more.
 */
int profile_pack(const char *path, char *why, size_t whylen);
/* Remove the emptied file profile_pack keeps for its next copy. */
void profile_pack_drop_spare(void);

/* Is this a profil profile (by its magic)? */
int profile_is_profile(const void *data, size_t size);

#endif
