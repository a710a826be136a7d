/*
 * preload.c - profiling an unmodified program: the mode `profil run`
 * turns on by preloading libprofil with PROFIL_RUN set.
 *
 * At load, every executable range of every mapped object (the program,
 * its libraries, the vDSO) gets a histogram of 32-bit counters, one per
 * 2 bytes of text, and sampling starts into all of them at once.  The
 * histograms are not in the process's memory but in the profile file
 * itself, mapped shared (profil(5)): a sample is on its way to the disk
 * as soon as it is counted, so a process killed hard loses nothing but
 * the statistics of its last second, which the sampling path copies into
 * the header about once a second.
 *
 * The file also has a thread table (thread_table.c): each sample counted
 * is counted in its thread's entry too, with the counter it went to, so
 * that the profile can be shown per thread.  PROFIL_RUN_THREADS (profil
 * run --threads) sizes it; threads past it share one entry.
 *
 * dlopen and dlclose are interposed: a library gets its histogram as it
 * is opened, and once it is closed its histogram leaves the sink set
 * but stays in the file, under the library's name (and counts on if the
 * library is opened again at the same address).  A fork child starts
 * a file of its own; an exec closes the file, and the new program, which
 * inherits PROFIL_RUN, starts another.
 *
 * preload_sampled() runs in signal handlers, and preload_exiting() may
 * (from _exit): they are async-signal-safe and lock-free (atomics,
 * clock_gettime).  preload_thread_end() runs in an ending thread,
 * without a lock (the table is lock-free).  Everything else runs under
 * `lock`, with cancellation off, never in a handler, and never while
 * glibc's loader lock is held (dlopen, dlclose).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "../../common/bins.h"
#include "../../format/profile.h"
#include "preload/dlname.h"
#include "core/env.h"
#include "files/outname.h"
#include "core/sampler.h"
#include "core/stats.h"
#include "sinks/reserve.h"
#include "sinks/thread_table.h"
#include "preload/stackfile.h"
#include "preload/unwcache.h"
#include "unwind/table.h"

#define EXPORT __attribute__((visibility("default")))

struct seg {
	struct profile_segment *head;	/* mapped with its counters */
	uint64_t size;
	int unmapped;
	struct profile_segment *sys;	/* its system counts, or NULL */
	uint64_t sys_size;
	/* Their pages, asked for before counting into them; allocated
	   apart, as sink sets point at them and segs moves. */
	struct page_reserve *res, *sys_res;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int on;		/* the preload mode is running */
static int fd = -1;		/* open only while the file grows: file_open */
static uint64_t file_size;	/* as last set by ftruncate */
static char path[PATH_MAX];	/* the file, absolute */
static dev_t file_dev;
static ino_t file_ino;
static struct profile_header *header;
static struct seg *segs;
static size_t nsegs, capacity;
static uint32_t nfile;		/* segments in the file, system counts too */
static uint64_t run_id;
static pid_t owner;		/* the process the file is of */
static atomic_int ending;	/* the end (end_once): 0; 1: being done; 2: done */
static _Atomic pid_t ender;	/* the thread doing it */
static _Atomic int64_t next_update_ns;

/* The file's thread table, when it has one (table points at it). */
#define THREADS_DEFAULT 1024u	/* entries, "other threads" included */
/* Slots of the pc pool: 256 a thread, up to 1 MiB (touched as used). */
#define THREAD_PCS_EACH 256u
#define THREAD_PCS_MAX 65536u
/* Slots of the outside table: where samples outside every object were
   (JIT code), 16 bytes each, touched as used. */
#define OUTSIDE_PCS 65536u
static struct profile_pc *outside;
static uint64_t noutside;
static struct page_reserve *outside_res;	/* its pages, asked for as used */

/* The extension page and stack table (stackfile.c), or NULL. */
static struct stackfile *stackfile;

static struct thread_table thread_table;
static struct thread_table *_Atomic table;
static void *table_map;
static uint64_t table_size;
static struct page_reserve table_reserve;

/*
 * The lock, with cancellation off while it is held: what runs under it
 * (open, write, close, the sampler's own calls) has cancellation points,
 * and a thread cancelled there would unwind holding the lock, which no
 * thread could take again.  The cancel acts at the thread's next
 * cancellation point after.
 */
static int lock_enter(void)
{
	int old;
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_mutex_lock(&lock);
	return old;
}

static void lock_leave(int old)
{
	int ignored;
	pthread_mutex_unlock(&lock);
	pthread_setcancelstate(old, &ignored);
}

/* ---- The sampling path. ---- */

static int64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Copy the statistics into the header.  Async-signal-safe. */
static void publish_stats(struct profile_header *h)
{
	uint64_t counted = atomic_load(&stats.counted);
	uint64_t outside = atomic_load(&stats.outside);
	uint64_t saturated = atomic_load(&stats.saturated);
	uint64_t lost_by[PROFILE_LOST_COUNT];
	uint64_t lost = stats_lost_by(lost_by);
	uint64_t observed = atomic_load(&stats.observed);
	uint64_t cpu_ns = atomic_load(&stats.cpu_ns);
	h->counted = counted;
	h->outside = outside;
	h->saturated = saturated;
	h->lost = lost;
	h->taken = counted + outside + saturated + lost;
	h->observed = observed;
	h->cpu_ns = cpu_ns;
	h->achieved_hz = cpu_ns ? (uint32_t)(observed * 1000000000.0 / cpu_ns + 0.5) : 0;
	h->threads = atomic_load(&stats.threads);
	h->threads_unsampled = atomic_load(&stats.threads_unsampled);
	h->threads_fallback = atomic_load(&stats.threads_fallback);
	h->system = atomic_load(&stats.system);
	struct thread_table *t = atomic_load(&table);
	h->unattributed = t ? atomic_load(&t->unattributed) : 0;
	h->backend = sampler_backend_in_use();
	h->perf_errno = (uint32_t)sampler_passed_over();
	if (sampler_user_only())
		h->flags |= PROFILE_F_NO_KERNEL;
	if (sinks_faults())
		h->flags |= PROFILE_F_WRITE_LOST;
	h->hz = sampler_hz();	/* lowered to the backend's limit at start */
	if (stackfile)
		stackfile_publish(stackfile, lost_by, sampler_hz_asked(), h->hz);
	h->update_ns = (uint64_t)now_ns(CLOCK_REALTIME);
}

/* After each counted sample: the header's statistics, once a second. */
static void preload_sampled(void)
{
	int64_t now = now_ns(CLOCK_MONOTONIC_COARSE);
	int64_t due = atomic_load_explicit(&next_update_ns, memory_order_relaxed);
	if (now < due || !atomic_compare_exchange_strong(&next_update_ns, &due,
							 now + 500000000))
		return;
	struct profile_header *h = header;
	if (h)
		publish_stats(h);
}

/* ---- The file. ---- */

static void complain(const char *what, const char *name)
{
	char line[PATH_MAX + 128];
	int n = snprintf(line, sizeof line, "libprofil: %s %s: %s\n", what, name,
			 strerror(errno));
	if (n > 0) {
		ssize_t r = write(STDERR_FILENO, line, (size_t)n < sizeof line ? (size_t)n
								       : sizeof line - 1);
		(void)r;
	}
}

/* Copy src into dst of size bytes, cut if need be. */
static void copy(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);
	if (n > size - 1)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The program's file, "" if unknown: read once (a fork child runs the
   same program; an exec starts anew), as both the default file name
   and the program's segment want it, and each look costs the kernel a
   walk of the path. */
static const char *program_file(void)
{
	static char exe[PATH_MAX];
	static int known;
	if (!known) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = '\0';
		known = 1;
	}
	return exe;
}

/* The program's name, for %n and the default file name. */
static void program_name(char *out, size_t size)
{
	const char *exe = program_file();
	const char *base = strrchr(exe, '/');
	copy(out, size, base ? base + 1 : exe[0] ? exe : "program");
}

/*
 * The command line, taken once at start (a fork child has the same one;
 * a program that rewrites its argv later does not change what it was
 * run as).  As /proc/self/cmdline gives it: NUL-terminated arguments.
 * glibc passes a library's constructors the program's argc and argv,
 * the same bytes, read in place: the file costs a process 15 us.
 */
static char cmdline[PROFILE_CMDLINE_MAX];
static uint32_t cmdline_len;
static int cmdline_cut;

static void cmdline_add(const char *p, size_t n)
{
	size_t room = sizeof cmdline - cmdline_len;
	if (n > room) {
		n = room;
		cmdline_cut = 1;
	}
	memcpy(cmdline + cmdline_len, p, n);
	cmdline_len += (uint32_t)n;
}

static void read_cmdline(int argc, char **argv)
{
	if (argc > 0 && argv && argv[argc] == NULL) {
		for (int i = 0; i < argc && !cmdline_cut; i++)
			cmdline_add(argv[i], strlen(argv[i]) + 1);
		return;
	}
	int in = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return;	/* no /proc: argv[0] alone, as before */
	char more;
	for (;;) {
		ssize_t r = cmdline_len < sizeof cmdline
			    ? read(in, cmdline + cmdline_len, sizeof cmdline - cmdline_len)
			    : read(in, &more, 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (cmdline_len == sizeof cmdline) {
			cmdline_cut = 1;
			break;
		}
		cmdline_len += (uint32_t)r;
	}
	close(in);
}

/* PROFIL_OUT with %p, %n and %% expanded (cut to size if too long). */
static void expand(const char *pattern, char *out, size_t size)
{
	char name[256];
	program_name(name, sizeof name);
	outname_expand(pattern, name, (unsigned long)getpid(), out, size);
}

/* The file name as SPEC section 6 says, before any suffix. */
static void file_name(char *out, size_t size)
{
	/* secure_getenv: nothing chooses a path in a set-ID program. */
	const char *outname = secure_getenv("PROFIL_OUT");
	const char *prefix = secure_getenv("GMON_OUT_PREFIX");
	const char *dir = secure_getenv("PROFDIR");
	static int dir_bad = -1;	/* checked once; a fork child knows */
	struct stat st;
	if (dir && *dir && dir_bad < 0) {
		dir_bad = stat(dir, &st) != 0 || !S_ISDIR(st.st_mode);
		if (dir_bad)
			env_complain("PROFDIR", dir, "not a directory that can be opened",
				     "the current directory");
	}
	if (dir_bad > 0)
		dir = NULL;
	char name[256];
	program_name(name, sizeof name);
	if (outname && *outname)
		expand(outname, out, size);
	else if (prefix && *prefix)
		snprintf(out, size, "%s.%d", prefix, (int)getpid());
	else
		snprintf(out, size, "%s%sgmon.%s.%d.out", dir && *dir ? dir : "",
			 dir && *dir ? "/" : "", name, (int)getpid());
}

/* name made absolute into path (cut if it does not fit). */
static void set_path(const char *name)
{
	char cwd[PATH_MAX];
	if (name[0] != '/' && getcwd(cwd, sizeof cwd) && strlen(cwd) + strlen(name) + 2 <= sizeof path)
		strcat(strcat(strcpy(path, cwd), "/"), name);
	else
		copy(path, sizeof path, name);
}

/* Add the file's name to the run's list, for `profil report`. */
static void list_file(void)
{
	const char *list = secure_getenv("PROFIL_RUN_LIST");
	if (!list || !*list)
		return;
	char line[PATH_MAX + 2];
	strcat(strcpy(line, path), "\n");
	int lfd = open(list, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (lfd < 0) {
		complain("cannot list the profile in", list);
		return;
	}
	if (write(lfd, line, strlen(line)) != (ssize_t)strlen(line))	/* one write: atomic */
		complain("cannot list the profile in", list);
	close(lfd);
}

/*
 * Can the file reach end bytes?  Past the soft RLIMIT_FSIZE, a write or
 * ftruncate would kill the program with SIGXFSZ: refuse it (EFBIG), the
 * profile stays as big as it may be.
 */
static struct rlimit fsize;	/* as read once while the file is open */
static int fsize_known;

static int fits(uint64_t end)
{
	/* Read once a growth, not once a page: a short process grows its
	   file twenty times at start.  The program may change it between
	   growths (file_close forgets it). */
	if (!fsize_known && getrlimit(RLIMIT_FSIZE, &fsize) == 0)
		fsize_known = 1;
	if (fsize_known && fsize.rlim_cur != RLIM_INFINITY && end > (uint64_t)fsize.rlim_cur) {
		errno = EFBIG;
		return -1;
	}
	return 0;
}

/*
 * Write a page of zeros at offset at of the file.  The pages written
 * through the mapping outside a signal handler (the header, the head of
 * each segment) are allocated this way first: on a full file system a
 * write to a page the file system cannot give would be a SIGBUS, where
 * this is ENOSPC.  Counters stay sparse (a fault there loses a sample,
 * sink.c's lose_faults).
 */
static int write_page(uint64_t at)
{
	static const char zeros[PROFILE_PAGE];
	if (fits(at + PROFILE_PAGE) != 0)
		return -1;
	for (;;) {
		ssize_t w = pwrite(fd, zeros, sizeof zeros, (off_t)at);
		if (w == (ssize_t)sizeof zeros)
			return 0;
		if (w >= 0)
			errno = ENOSPC;
		if (w >= 0 || errno != EINTR)
			return -1;
	}
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

/*
 * The page at p, mapped from offset at of the file, made sure of as
 * write_page does, but through the mapping: one call where a write of
 * zeros and then the first store into the page took two trips into the
 * file system (12 head pages a process).  A kernel without
 * MADV_POPULATE_WRITE gets the zeros written.
 */
static int have_page(void *p, uint64_t at)
{
	for (int tries = 0; tries < 3; tries++) {
		if (madvise(p, PROFILE_PAGE, MADV_POPULATE_WRITE) == 0)
			return 0;
		if (errno == EINVAL || errno == ENOSYS)
			break;
		if (errno != EINTR && errno != EAGAIN) {
			errno = ENOSPC;	/* EFAULT: a store would SIGBUS */
			return -1;
		}
	}
	return write_page(at);
}

/* Make the file at least end bytes long (within RLIMIT_FSIZE): 0 or -1. */
static int size_file(uint64_t end)
{
	if (end <= file_size)
		return 0;	/* sized at creation for all it holds at first */
	if (fits(end) != 0 || ftruncate(fd, (off_t)end) != 0)
		return -1;
	file_size = end;
	return 0;
}

/*
 * Map size bytes of the file at offset at, shared.  No read-ahead: a
 * fault on a page of the file (MADV_POPULATE_WRITE when a counter's page
 * is first written, reserve.c) would otherwise read ahead over the
 * holes around it, zero-filling up to the whole sparse file into the
 * page cache: 20 first writes cost 6.8 ms and left 20 MiB resident,
 * against 0.17 ms and 20 pages without.
 */
static void *map_raw(uint64_t size, uint64_t at)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)at);
	if (p != MAP_FAILED)
		madvise(p, size, MADV_RANDOM);
	return p;
}

/*
 * What the file holds at first (header, tables, the segments of the
 * objects loaded at start) is mapped once, as one window of the file,
 * and handed out in pieces: two mappings a process where there were
 * fifteen, each a system call to make and a mapping to tear down at
 * exit.  Later segments (dlopen) get mappings of their own.
 */
static struct { char *base; uint64_t size; } window;

static void map_window(uint64_t end)
{
	window.base = NULL;
	window.size = 0;
	if (size_file(end) != 0)
		return;	/* piece by piece: each says what it could not have */
	void *p = map_raw(end, 0);
	if (p == MAP_FAILED)
		return;
	window.base = p;
	window.size = end;
}

static void *map_shared(uint64_t size, uint64_t at)
{
	if (window.base && at <= window.size && size <= window.size - at)
		return window.base + at;
	return map_raw(size, at);
}

/* Undo map_shared: a piece of the window stays mapped (a later piece
   may be handed out at the same place). */
static void unmap_shared(void *p, uint64_t size)
{
	char *c = p;
	if (!window.base || c < window.base || c >= window.base + window.size)
		munmap(p, size);
}

/* Entries of the thread table: PROFIL_RUN_THREADS, else the default. */
static uint32_t thread_entries(void)
{
	const char *v = getenv("PROFIL_RUN_THREADS");
	if (!v || !*v)
		return THREADS_DEFAULT;
	char *end;
	unsigned long n = strtoul(v, &end, 10);
	if (*v < '0' || *v > '9' || *end || n > PROFILE_THREADS_MAX - 1) {
		env_complain("PROFIL_RUN_THREADS", v, "not a whole number from 0 to 65534",
			     "1023");
		return THREADS_DEFAULT;
	}
	return n ? (uint32_t)n + 1 : 0;	/* and "other threads" */
}

/* The pcs of the thread table of n entries. */
static uint64_t thread_pcs(uint32_t n)
{
	uint64_t npcs = THREAD_PCS_EACH;
	while (npcs < (uint64_t)n * THREAD_PCS_EACH && npcs < THREAD_PCS_MAX)
		npcs *= 2;
	return npcs;
}

/* Right after the header: the thread table of n entries, if it can be
   had. */
static void add_thread_table(uint32_t n)
{
	if (!n)
		return;
	uint64_t npcs = thread_pcs(n);
	uint64_t size = profile_threads_size(n, npcs);
	if (size_file(PROFILE_PAGE + size) != 0) {
		complain("no thread table (the samples of each thread) in profile", path);
		return;
	}
	void *p = map_shared(size, PROFILE_PAGE);
	if (p == MAP_FAILED)
		return;
	if (reserve_init(&table_reserve, p, size) != 0) {
		unmap_shared(p, size);
		return;
	}
	table_map = p;
	table_size = size;
	thread_table.reserve = &table_reserve;
	thread_table.entries = p;
	thread_table.nentries = n;
	thread_table.pcs = (struct profile_pc *)((char *)p + n * sizeof(struct profile_thread));
	thread_table.npcs = npcs;
	thread_table.owner = (uint32_t)getpid();
	atomic_store(&thread_table.unattributed, 0);
	atomic_store(&thread_table.broken, 0);
	header->threads_at = PROFILE_PAGE;
	header->threads_size = size;
	header->thread_entries = n;
	header->thread_pcs = npcs;
	header->end = PROFILE_PAGE + size;
	atomic_store(&table, &thread_table);
}

/* After the thread table: the outside table, if it can be had. */
static void add_outside_table(void)
{
	uint64_t at = header->end, size = profile_outside_size(OUTSIDE_PCS);
	if (size_file(at + size) != 0)
		return;
	void *p = map_shared(size, at);
	if (p == MAP_FAILED)
		return;
	struct page_reserve *r = malloc(sizeof *r);
	if (!r || reserve_init(r, p, size) != 0) {
		free(r);
		unmap_shared(p, size);
		return;
	}
	outside_res = r;
	outside = p;
	noutside = OUTSIDE_PCS;
	header->outside_at = at;
	header->outside_pcs = OUTSIDE_PCS;
	header->end = at + size;
}

/*
 * After the outside table: the extension page, and the stack table when
 * stacks are on (SPEC section 10).  Without room the file has neither,
 * and samples are taken without stacks.
 */
static void add_stack_table(const struct stackfile_conf *c)
{
	uint64_t at = header->end, size = stackfile_size(c);
	void *p = MAP_FAILED;
	if (size_file(at + size) != 0 || write_page(at) != 0
	    || (p = map_shared(size, at)) == MAP_FAILED) {
		complain("no stack table (the samples' call stacks) in profile", path);
		return;
	}
	stackfile = stackfile_map(p, at, c);
	if (!stackfile) {
		unmap_shared(p, size);
		return;
	}
	header->ext_at = at;
	header->end = at + size;
}

/* Create the file: never through a symbolic link, never over another;
   sized and mapped at once for its tables and need bytes more (the
   segments of the objects loaded). */
static int create_file(uint64_t need)
{
	char base[PATH_MAX - 16], name[PATH_MAX];
	fsize_known = 0;
	file_name(base, sizeof base);
	copy(name, sizeof name, base);
	for (int i = 1; i < 1000; i++) {
		fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 || errno != EEXIST)
			break;
		snprintf(name, sizeof name, "%s.%d", base, i);
	}
	if (fd < 0) {
		complain("cannot create profile", name);
		return -1;
	}
	if (write_page(0) != 0) {
		complain("cannot write profile", name);
		goto fail;
	}
	file_size = PROFILE_PAGE;
	uint32_t nthreads = thread_entries();
	struct stackfile_conf c;
	stackfile_conf(sampler_stacks_wanted(), &c);
	map_window(PROFILE_PAGE + (nthreads ? profile_threads_size(nthreads, thread_pcs(nthreads)) : 0)
		   + profile_outside_size(OUTSIDE_PCS) + stackfile_size(&c) + need);
	header = map_shared(PROFILE_PAGE, 0);
	if (header == MAP_FAILED) {
		header = NULL;
		complain("cannot map profile", name);
		goto fail;
	}
	memset(header, 0, sizeof *header);
	memcpy(header->magic, PROFILE_MAGIC, 8);
	header->version = PROFILE_VERSION;
	header->state = PROFILE_RUNNING;
	header->byte_order = 0x01020304;
	header->end = PROFILE_PAGE;
	header->pid = owner = getpid();
	header->ppid = getppid();
	header->hz = sampler_hz();
	header->start_ns = header->update_ns = (uint64_t)now_ns(CLOCK_REALTIME);
	header->run_id = run_id;
	program_name(header->command, sizeof header->command);
	memcpy(header->cmdline, cmdline, cmdline_len);
	header->cmdline_len = cmdline_len;
	if (cmdline_cut)
		header->flags |= PROFILE_F_CMDLINE_CUT;
	set_path(name);
	struct stat st;
	if (fstat(fd, &st) == 0) {
		file_dev = st.st_dev;
		file_ino = st.st_ino;
	}
	add_thread_table(nthreads);
	add_outside_table();
	add_stack_table(&c);
	return 0;
fail:
	close(fd);
	unlink(name);
	fd = -1;
	return -1;
}

/*
 * Open the file again to grow it, by name, and only if it is still the
 * file made (same device and inode).  Between growths no descriptor is
 * held: a program at its RLIMIT_NOFILE keeps every descriptor it would
 * have without the profiler.  0, or -1 once said why.
 */
static int file_open(void)
{
	static int said;
	struct stat st;
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != file_dev || st.st_ino != file_ino)) {
		close(fd);
		fd = -1;
		errno = ESTALE;
	}
	if (fd < 0 && !said++)
		complain("cannot add libraries opened later to profile", path);
	return fd < 0 ? -1 : 0;
}

static void file_close(void)
{
	if (fd >= 0)
		close(fd);
	fd = -1;
	fsize_known = 0;
}

/* A reserve over a mapping of size bytes at p, the head page had. */
static struct page_reserve *new_reserve(void *p, uint64_t size)
{
	struct page_reserve *r = malloc(sizeof *r);
	if (r && reserve_init(r, p, size) != 0) {
		free(r);
		r = NULL;
	}
	if (r)
		r->state[0] = RESERVE_HAD;	/* had by have_page */
	return r;
}

static void drop_reserve(struct page_reserve *r)
{
	if (r) {
		reserve_free(r);
		free(r);
	}
}

/* Bytes the segments of n more objects' ranges take, system counts too. */
struct need { uint64_t bytes; };

static int count_need(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct need *need = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0)
			continue;
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		uint64_t n = bins_count_for_range(start, start + ph->p_memsz, BINS_SCALE_ONE);
		need->bytes += 2 * profile_segment_size(n, 4);
	}
	return 0;
}

/*
 * The bytes the segments of the objects loaded at start take: the file
 * is made that long at once, and mapped once (map_window), rather than
 * grown and mapped once per segment (each costs the file system an
 * update: a good part of what a short process pays for being profiled).
 * Where that does not fit, segments grow it one by one, as after a
 * dlopen.
 */
static uint64_t objects_need(void)
{
	struct need need = { 0 };
	dl_iterate_phdr(count_need, &need);
	return need.bytes;
}

/* Grow the file by a segment of ncounters counters, mapped, with the
   reserve of its pages in *res; or NULL. */
static struct profile_segment *grow(uint64_t ncounters, struct page_reserve **res)
{
	uint64_t size = profile_segment_size(ncounters, 4);
	uint64_t at = header->end;
	if (fd < 0)
		return NULL;
	void *p = MAP_FAILED;
	if ((at + size > file_size && size_file(at + size) != 0)
	    || (p = map_shared(size, at)) == MAP_FAILED || have_page(p, at) != 0) {
		static int said;
		int saved = errno;
		if (p != MAP_FAILED)
			unmap_shared(p, size);
		errno = saved;
		if (!said++)
			complain("cannot add objects to profile", path);
		return NULL;
	}
	*res = new_reserve(p, size);
	if (!*res) {
		unmap_shared(p, size);
		return NULL;
	}
	header->end = at + size;
	nfile++;
	struct profile_segment *head = p;
	head->size = size;
	head->ncounters = ncounters;
	head->scale = BINS_SCALE_ONE;
	head->width = 4;
	return head;
}

/* Append a segment of ncounters counters; NULL if the file cannot grow. */
static struct profile_segment *append(uint64_t ncounters)
{
	uint64_t size = profile_segment_size(ncounters, 4);
	if (nsegs == capacity) {
		size_t n = capacity ? capacity * 2 : 32;
		struct seg *s = realloc(segs, n * sizeof *s);
		if (!s)
			return NULL;
		segs = s;
		capacity = n;
	}
	struct page_reserve *res;
	struct profile_segment *head = grow(ncounters, &res);
	if (head)
		segs[nsegs++] = (struct seg){ .head = head, .size = size, .res = res };
	return head;
}

/*
 * Give the last segment, once filled in, a companion right after it that
 * counts which of its samples stand for kernel time: the same head but
 * for the flag.  Without room for it the segment just has no split.
 */
static void add_system(void)
{
	struct seg *s = &segs[nsegs - 1];
	struct page_reserve *res;
	struct profile_segment *h = grow(s->head->ncounters, &res);
	if (!h)
		return;
	s->sys_res = res;
	uint64_t size = h->size;
	memcpy(h, s->head, PROFILE_PAGE);
	h->size = size;
	h->flags |= PROFILE_SEG_SYSTEM;
	s->sys = h;
	s->sys_size = size;
}

/* Publish the segments filled in so far: readers see them from now on. */
static void publish_segments(void)
{
	atomic_thread_fence(memory_order_release);
	header->nsegments = nfile;
}

/* ---- Objects. ---- */

void object_build_id(const struct dl_phdr_info *info, uint8_t id[64], uint32_t *len)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof *n;
			const char *desc = name + ((n->n_namesz + 3) & ~3u);
			if (desc + n->n_descsz > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4
			    && memcmp(name, "GNU", 4) == 0
			    && n->n_descsz <= 64) {
				memcpy(id, desc, n->n_descsz);
				*len = n->n_descsz;
				return;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
}

static int known(uint64_t start, uint64_t length)
{
	for (size_t i = 0; i < nsegs; i++) {
		const struct profile_segment *h = segs[i].head;
		if (!segs[i].unmapped && h->start == start && h->vaddr + h->bias + h->length
		    == start + length)
			return 1;
	}
	return 0;
}

/*
 * A segment of an object closed earlier that is now mapped again at the
 * same place (the same library opened again): it counts on, flagged
 * mapped again, instead of one more segment per dlopen, which a
 * program that opens and closes a plugin in a loop would pile up in
 * the file and in memory without end.
 */
static struct seg *reopened(uint64_t start, uint64_t bias, const ElfW(Phdr) *ph,
			    const char *path, const uint8_t *id, uint32_t idlen)
{
	for (size_t i = 0; i < nsegs; i++) {
		const struct profile_segment *h = segs[i].head;
		if (segs[i].unmapped && h->start == start && h->bias == bias
		    && h->vaddr == ph->p_vaddr && h->length == ph->p_memsz
		    && h->file_offset == ph->p_offset && h->build_id_len == idlen
		    && memcmp(h->build_id, id, idlen) == 0
		    && strncmp(h->path, path, sizeof h->path - 1) == 0)
			return &segs[i];
	}
	return NULL;
}

/* data, if not NULL, is an int set to 1 when a segment is mapped again. */
static int add_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	const char *name = info->dlpi_name;
	char path[PATH_MAX];
	int flags = 0;
	int fresh = 0;	/* listed again after each dlopen: skip realpath if known */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		fresh |= ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && ph->p_memsz
			 && !known(info->dlpi_addr + ph->p_vaddr, ph->p_memsz);
	}
	if (!fresh)
		return 0;
	if (name == NULL || name[0] == '\0') {	/* the program */
		copy(path, sizeof path, program_file());
		flags = PROFILE_SEG_MAIN;
	} else if (strncmp(name, "linux-vdso", 10) == 0 || strncmp(name, "linux-gate", 10) == 0) {
		copy(path, sizeof path, "[vdso]");
		flags = PROFILE_SEG_VDSO;
	} else if (!realpath(name, path)) {
		copy(path, sizeof path, name);
	}
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0)
			continue;
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		if (known(start, ph->p_memsz))
			continue;
		uint8_t id[64];
		uint32_t idlen = 0;
		object_build_id(info, id, &idlen);
		struct seg *again = reopened(start, info->dlpi_addr, ph, path, id, idlen);
		if (again) {
			again->unmapped = 0;
			again->head->flags &= ~PROFILE_SEG_UNMAPPED;
			if (again->sys)
				again->sys->flags &= ~PROFILE_SEG_UNMAPPED;
			if (data)
				*(int *)data = 1;
			continue;
		}
		uint64_t n = bins_count_for_range(start, start + ph->p_memsz, BINS_SCALE_ONE);
		struct profile_segment *head = append(n);
		if (!head)
			return 1;
		head->start = start;
		head->bias = info->dlpi_addr;
		head->vaddr = ph->p_vaddr;
		head->length = ph->p_memsz;
		head->file_offset = ph->p_offset;
		head->flags = flags;
		copy(head->path, sizeof head->path, path);
		memcpy(head->build_id, id, idlen);
		head->build_id_len = idlen;
		add_system();
	}
	return 0;
}

/* Is [start, start+length) still an executable range of a loaded object? */
struct probe { uint64_t start, length; int found; };

static int find_range(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct probe *pr = data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)
		    && info->dlpi_addr + ph->p_vaddr == pr->start && ph->p_memsz == pr->length)
			pr->found = 1;
	}
	return pr->found;
}

static struct region region_of(const struct profile_segment *h, enum region_kind kind,
			       size_t index, const struct page_reserve *res)
{
	return (struct region){
		.id = (uint32_t)index,
		.offset = h->start,
		.ncounters = h->ncounters,
		.scale = h->scale,
		.width = 4,
		.base = (char *)h + PROFILE_PAGE,
		.kind = kind,
		.reserve = res,
	};
}

/* The sink set: every segment of a mapped object (and its system
   counts), highest first; NULL (errno ENOMEM) if there is no memory. */
static struct sink_set *make_set(void)
{
	size_t n = 0;
	for (size_t i = 0; i < nsegs; i++)
		n += segs[i].unmapped ? 0 : segs[i].sys ? 2 : 1;
	struct sink_set *set = sinks_new((unsigned)n);
	if (!set)
		return NULL;
	set->lose_faults = 1;
	set->threads = atomic_load(&table);
	set->outside = outside;
	set->noutside = noutside;
	set->outside_reserve = outside_res;
	set->stacks = stackfile && stackfile->table.slots ? &stackfile->table : NULL;
	size_t k = 0;
	for (size_t i = 0; i < nsegs; i++) {	/* i: the segment's index in the file */
		if (segs[i].unmapped)
			continue;
		set->regions[k++] = region_of(segs[i].head, REGION_BINS, i, segs[i].res);
		if (segs[i].sys)
			set->regions[k++] = region_of(segs[i].sys, REGION_SYSTEM, i, segs[i].sys_res);
	}
	for (size_t i = 1; i < n; i++)	/* insertion sort: few regions */
		for (size_t j = i; j > 0 && set->regions[j].offset > set->regions[j - 1].offset; j--) {
			struct region t = set->regions[j];
			set->regions[j] = set->regions[j - 1];
			set->regions[j - 1] = t;
		}
	return set;
}

static int install_sinks(void)
{
	struct sink_set *set = make_set();
	return set ? sampler_start(set) : -1;
}

/* Look for new objects and objects gone; restart into the new set. */
static void rescan(void)
{
	size_t before = nsegs;
	int changed = 0;
	for (size_t i = 0; i < nsegs; i++) {
		if (segs[i].unmapped)
			continue;
		struct probe pr = { segs[i].head->start, segs[i].head->length, 0 };
		dl_iterate_phdr(find_range, &pr);
		if (!pr.found) {
			segs[i].unmapped = 1;
			segs[i].head->flags |= PROFILE_SEG_UNMAPPED;
			if (segs[i].sys)
				segs[i].sys->flags |= PROFILE_SEG_UNMAPPED;
			changed = 1;
		}
	}
	if (file_open() == 0) {
		dl_iterate_phdr(add_object, &changed);
		file_close();
	}
	publish_segments();
	if (stackfile && stackfile->table.slots)
		unwind_tables_update();	/* outside handlers: it takes the loader lock */
	if (nsegs != before || changed)
		install_sinks();
}

static void finish(int state)
{
	struct thread_table *t = atomic_load(&table);
	if (t)
		threadtab_name_all(t);
	publish_stats(header);
	header->state = (uint32_t)state;
	uint64_t lost = sinks_faults();
	if (lost) {
		/* A page of counters the file system could not give (a full
		   disk, a quota): those samples are lost, the rest are there. */
		char what[96];
		snprintf(what, sizeof what, "%llu samples lost: no room for the counters in",
			 (unsigned long long)lost);
		errno = ENOSPC;
		complain(what, path);
	}
}

/* ---- Hooks from the sampler. ---- */

/* In a fork child: a file of its own, the same objects, zero counts. */
static void preload_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	lock = fresh;
	struct seg *old = segs;
	size_t nold = nsegs;
	struct profile_header *old_header = header;
	atomic_store(&table, NULL);	/* the parent's */
	if (table_map)
		munmap(table_map, table_size);
	table_map = NULL;
	reserve_free(&table_reserve);
	struct profile_pc *old_outside = outside;	/* the set still points at it */
	uint64_t old_noutside = noutside;
	struct page_reserve *old_outside_res = outside_res;
	struct stackfile *old_stackfile = stackfile;	/* the set points at it too */
	stackfile = NULL;
	outside = NULL;
	noutside = 0;
	outside_res = NULL;
	segs = NULL;
	nsegs = capacity = 0;
	nfile = 0;
	header = NULL;
	if (fd >= 0)
		close(fd);
	fd = -1;
	atomic_store(&ending, 0);
	stats_reset();
	/* The parent's window, whole, once nothing points into it. */
	char *old_window = window.base;
	uint64_t old_window_size = window.size;
	window.base = NULL;
	uint64_t need = 0;
	for (size_t i = 0; i < nold; i++)
		need += old[i].unmapped ? 0 : old[i].size + (old[i].sys ? old[i].sys_size : 0);
	int ok = create_file(need) == 0;
	for (size_t i = 0; ok && i < nold; i++) {
		if (old[i].unmapped)
			continue;
		const struct profile_segment *o = old[i].head;
		struct profile_segment *h = append(o->ncounters);
		if (!h) {
			ok = 0;
			break;
		}
		uint64_t size = h->size;
		memcpy(h, o, PROFILE_PAGE);
		h->size = size;
		if (old[i].sys)
			add_system();
	}
	file_close();
	if (ok)
		list_file();
	for (size_t i = 0; i < nold; i++) {
		munmap(old[i].head, old[i].size);
		if (old[i].sys)
			munmap(old[i].sys, old[i].sys_size);
		drop_reserve(old[i].res);
		drop_reserve(old[i].sys_res);
	}
	free(old);
	if (old_header)
		munmap(old_header, PROFILE_PAGE);
	if (!ok) {
		on = 0;
		sinks_replace(NULL);
		stackfile_free(old_stackfile);
		if (old_outside)
			munmap(old_outside, profile_outside_size(old_noutside));
		if (old_outside_res) {
			reserve_free(old_outside_res);
			free(old_outside_res);
		}
		if (old_window)
			munmap(old_window, old_window_size);
		return;
	}
	publish_segments();
	struct sink_set *set = make_set();
	sinks_replace(set);	/* NULL without memory: no more samples */
	stackfile_free(old_stackfile);
	if (old_outside)
		munmap(old_outside, profile_outside_size(old_noutside));
	if (old_outside_res) {
		reserve_free(old_outside_res);
		free(old_outside_res);
	}
	if (old_window)
		munmap(old_window, old_window_size);
}

static void preload_before_exec(void)
{
	if (header)
		finish(PROFILE_COMPLETE);
}

static void preload_exec_failed(void)
{
	if (header)
		header->state = PROFILE_RUNNING;
}

/* In a thread that ends, its sampler stopped. */
static void preload_thread_end(pid_t tid)
{
	struct thread_table *t = atomic_load(&table);
	if (t && on)
		threadtab_end(t, tid);
}

/*
 * _exit: the sampler has stopped counting; the statistics go into the
 * header and the file is whole.  Async-signal-safe (a handler may call
 * _exit), so not finish(): no thread names, no message of lost pages.
 * The file stays mapped until the process is gone.
 */
static void preload_exiting(void)
{
	if (header && atomic_load(&on)) {
		publish_stats(header);
		header->state = PROFILE_COMPLETE;
	}
}

static const struct sampler_hooks hooks = {
	.sampled = preload_sampled,
	.thread_end = preload_thread_end,
	.fork_child = preload_fork_child,
	.before_exec = preload_before_exec,
	.exec_failed = preload_exec_failed,
	.exiting = preload_exiting,
};

/* ---- Start and end. ---- */

/*
 * Two threads that call exit() at once (audit F15): glibc pops the exit
 * handlers one at a time, and a thread that finds none left goes on to
 * its own _exit (not the interposed one) while the other may still be
 * in this library's destructor, inside _dl_fini: the process ended with
 * its file half finished, 17 runs of 100.  These handlers, registered
 * before _dl_fini's (so run after it) and with no DSO handle (so that
 * this library's own __cxa_finalize does not run them early), are the
 * last ones left: the thread that takes one of them waits for the end
 * or does it.  With EXIT_WAITERS of them, that many threads at once
 * cannot get past an unfinished file.
 */
#define EXIT_WAITERS 4
extern int __cxa_atexit(void (*fn)(void *), void *arg, void *dso);

static void end_at_exit(void *arg);

/*
 * quick_exit runs no destructor, and glibc's own call of _exit is not
 * the interposed one: stop counting and complete the file as _exit does.
 */
static void preload_quick_exit(void)
{
	sampler_exit_now();
}

static void preload_init(int argc, char **argv)
{
	const char *runs = getenv("PROFIL_RUN");
	if (!runs || !*runs || getauxval(AT_SECURE))
		return;
	run_id = strtoull(runs, NULL, 10);
	int cancel = lock_enter();
	read_cmdline(argc, argv);
	if (create_file(objects_need()) != 0) {
		lock_leave(cancel);
		return;
	}
	dl_iterate_phdr(add_object, NULL);
	if (stackfile && stackfile->table.slots) {
		unwcache_start();
		unwind_tables_update();
	}
	file_close();	/* before listing it: that takes a descriptor too */
	list_file();
	publish_segments();
	sampler_set_preload_hooks(&hooks);
	at_quick_exit(preload_quick_exit);
	for (int i = 0; i < EXIT_WAITERS; i++)
		__cxa_atexit(end_at_exit, NULL, NULL);
	on = 1;
	if (install_sinks() != 0) {
		complain("cannot start sampling for", header->command);
		on = 0;
	}
	lock_leave(cancel);
}

/* The core calls nothing of ours: the sampler is set up first (it may
   have been already, by monstartup from libprofil's _init). */
__attribute__((constructor)) static void preload_ctor(int argc, char **argv)
{
	sampler_init();
	preload_init(argc, argv);
}

/*
 * The end, done once: by this library's destructor, or by one of the
 * exit handlers below, whichever comes first; any other caller waits
 * until it is done (at most 2 s, so that no exit ever hangs on it).
 */
static void end_once(void)
{
	/* exit() in a vfork child runs this in its parent's memory: the
	   session and the file are the parent's, and go on. */
	if (!on || getpid() != owner)
		return;
	int idle = 0;
	pid_t self = (pid_t)syscall(SYS_gettid);
	if (atomic_compare_exchange_strong(&ending, &idle, 1)) {
		atomic_store(&ender, self);
		sampler_stop();
		int cancel = lock_enter();
		if (header && on)
			finish(PROFILE_COMPLETE);
		on = 0;
		lock_leave(cancel);
		atomic_store(&ending, 2);
		return;
	}
	/* Never for a frame of this thread's that a handler calling exit()
	   interrupted: it cannot finish before this returns. */
	if (atomic_load(&ender) == self)
		return;
	for (int i = 0; i < 2000 && atomic_load(&ending) != 2; i++)
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
}

__attribute__((destructor)) static void preload_fini(void)
{
	end_once();
}

static void end_at_exit(void *arg)
{
	(void)arg;
	end_once();
}

/* ---- dlopen and dlclose. ---- */

/*
 * Calls of dlopen and dlclose made by the constructors and destructors
 * that glibc runs inside another dlopen or dlclose of this thread: glibc
 * holds its loader lock there, so they leave the objects to the
 * outermost call, which lists them again once glibc has let go.  Taking
 * our lock there would deadlock with a thread that holds it and waits
 * for the loader's.  Initial-exec: the library is loaded at start.
 */
static __thread int nested __attribute__((tls_model("initial-exec")));

/* After the outermost dlopen or dlclose: list the objects again. */
static void objects_changed(void)
{
	if (nested || !on)
		return;
	int cancel = lock_enter();
	if (on)
		rescan();
	lock_leave(cancel);
}

typedef void *dlopen_fn(const char *, int);
typedef int dlclose_fn(void *);

EXPORT void *dlopen(const char *file, int mode)
{
	static dlopen_fn *_Atomic real;
	if (!real)
		real = (dlopen_fn *)dlsym(RTLD_NEXT, "dlopen");
	char path[PATH_MAX];
	const char *name = dlname_as_caller(file, __builtin_return_address(0), path, sizeof path);
	void *h = NULL;
	nested++;
	if (name != file)	/* one loaded already under that name wins, as in glibc */
		h = real(file, mode | RTLD_NOLOAD);
	if (!h)
		h = real(name, mode);
	nested--;
	if (h)
		objects_changed();
	return h;
}

/*
 * The real dlclose first, with no lock of ours held (its destructors may
 * call dlclose or dlopen); then its histogram leaves the sink set (it
 * stays in the file), so that the addresses it leaves free count for the
 * next library mapped there.
 */
EXPORT int dlclose(void *handle)
{
	static dlclose_fn *_Atomic real;
	if (!real)
		real = (dlclose_fn *)dlsym(RTLD_NEXT, "dlclose");
	nested++;
	int r = real(handle);
	nested--;
	objects_changed();
	return r;
}
