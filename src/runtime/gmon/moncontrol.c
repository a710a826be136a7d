/*
 * moncontrol.c - the gmon runtime of programs built with -pg:
 * monstartup, moncontrol, _mcleanup, and when the profile is written.
 *
 * glibc's gcrt1.o calls __monstartup(text start, etext) before the
 * program's constructors and registers _mcleanup with atexit; mcount
 * (mcount_x86_64.S, gmon_arcs.c) counts call arcs.  Here the histogram
 * is one more sink of the sampler, with 32-bit counters over the text
 * in power-of-two bins, sampled at the sampler's rate in every thread.
 *
 * The profile is written (gmon_file.c) at exit, at _exit, before an
 * exec, on a fatal signal (then the signal takes its course), and once
 * a second by a thread of the program's whose sample finds the second
 * over (the sampler's hooks, which this file registers), so that SIGKILL
 * loses at most a second.
 * One writer at a time: a lock word holding the writer's thread id,
 * which a crash handler waits on (another thread will finish) but never
 * takes twice in one thread.
 *
 * write_profile(), emit(), gmon_sampled() and on_fatal() run in signal
 * handlers: they
 * are async-signal-safe and lock-free (mmap, write, rename; no malloc,
 * no stdio, no locks but the one-writer word).  The rest runs from the
 * program's own calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "../../format/gmon.h"
#include "gmon/gmon_arcs.h"
#include "gmon/gmon_file.h"
#include "core/sampler.h"
#include "core/stats.h"
#include "sinks/sink.h"
#include "sinks/statemem.h"

#define EXPORT __attribute__((visibility("default")))

/* Most bins a histogram gets; larger texts get wider bins. */
#define MAX_BINS (1u << 21)

enum { OFF, STARTED, FINISHED };

static struct {
	uint64_t low, high;	/* run-time addresses, bin-aligned */
	uint64_t bias;		/* run-time address - link-time address */
	uint64_t nbins;
	uint32_t scale;
	uint32_t *counts;
	size_t bytes;
	int no_file;		/* PROFDIR set and empty */
} prof;

static atomic_int state = OFF;
static atomic_int running;	/* moncontrol(1) in force */
static atomic_int writer;	/* tid of the thread writing, or 0 */
static pid_t owner;		/* the process the profile belongs to */
static pthread_mutex_t control = PTHREAD_MUTEX_INITIALIZER;

static pid_t tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* ---- writing ----------------------------------------------------- */

struct merged {
	uintptr_t from, self;
	uint64_t count;
};

struct merge {
	struct merged *slots;
	size_t mask;
	struct gmon_out *out;
};

static void put_arc(struct gmon_out *out, uintptr_t from, uintptr_t self,
		    uint64_t count)
{
	/* Only arcs into the text: gprof knows no other callee.  A caller
	   outside it (libc calling back, a signal) keeps its address, and
	   gprof shows the callee as called spontaneously. */
	if (self < prof.low || self >= prof.high)
		return;
	if (from >= prof.low && from < prof.high)
		from -= prof.bias;
	gmon_put_arc(out, from, self - prof.bias, count);
}

static void merge_one(void *arg, uintptr_t from, uintptr_t self, uint64_t count)
{
	struct merge *m = arg;
	if (!m->slots) {	/* no memory to merge: one record per table */
		put_arc(m->out, from, self, count);
		return;
	}
	size_t i = (size_t)(((from << 16) ^ self) * 0x9e3779b97f4a7c15u) & m->mask;
	while (m->slots[i].count && (m->slots[i].from != from || m->slots[i].self != self))
		i = (i + 1) & m->mask;
	m->slots[i].from = from;
	m->slots[i].self = self;
	m->slots[i].count += count;
}

static void emit(struct gmon_out *out, void *arg)
{
	(void)arg;
	gmon_put_hist(out, prof.low - prof.bias, prof.high - prof.bias, prof.nbins,
		      sampler_hz(), "seconds", 's', prof.counts, 4);
	/* Sum each arc over the threads' tables, in a table of its own. */
	uint64_t n = gmon_arcs_count();
	size_t cap = 16;
	while (cap < 2 * n + 16)
		cap *= 2;
	size_t bytes = cap * sizeof(struct merged);
	struct merge m = { mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), cap - 1, out };
	if (m.slots == MAP_FAILED)
		m.slots = NULL;
	gmon_arcs_each(merge_one, &m);
	if (!m.slots)
		return;
	/* Arcs counted after the count above may not fit: a slot is kept
	   free by the margin of 16 and twice the arcs. */
	for (size_t i = 0; i < cap; i++)
		if (m.slots[i].count)
			put_arc(out, m.slots[i].from, m.slots[i].self, m.slots[i].count);
	munmap(m.slots, bytes);
}

/*
 * Take the one-writer word: 1 if taken, 0 if this thread holds it
 * already (a crash inside the writer) or it stays held for seconds (at
 * once, without wait).
 */
static int writer_take(int wait)
{
	int me = tid(), expected = 0;
	for (int i = 0; i < (wait ? 3000 : 1); i++) {
		expected = 0;
		if (atomic_compare_exchange_strong(&writer, &expected, me))
			return 1;
		if (expected == me)
			return 0;
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	return 0;
}

static void writer_give(void)
{
	atomic_store(&writer, 0);
}

/*
 * What gmon.out cannot hold and gprof would not read if it did (it
 * rejects a file with a record of a tag it does not know): the
 * process's CPU time and the samples outside the text, in a companion
 * file (gmon.out(5)).  Async-signal-safe: no stdio.
 */
static void put_line(char *buf, size_t *at, size_t cap, const char *key, uint64_t v)
{
	char d[24];
	int i = sizeof d;
	do
		d[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	size_t klen = strlen(key), dlen = sizeof d - (size_t)i;
	if (*at + klen + 1 + dlen + 1 > cap)
		return;
	memcpy(buf + *at, key, klen);
	buf[*at + klen] = ' ';
	memcpy(buf + *at + klen + 1, d + i, dlen);
	buf[*at + klen + 1 + dlen] = '\n';
	*at += klen + dlen + 2;
}

static void write_stats(void)
{
	static char buf[512];	/* one writer at a time */
	static const char magic[] = "profil-gmon-stats 1\n";
	size_t at = sizeof magic - 1;
	memcpy(buf, magic, at);
	struct timespec ts;
	uint64_t cpu = 0;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
		cpu = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	uint64_t counted = atomic_load(&stats.counted), outside = atomic_load(&stats.outside);
	uint64_t saturated = atomic_load(&stats.saturated), lost = atomic_load(&stats.lost);
	put_line(buf, &at, sizeof buf, "cpu_ns", cpu);
	put_line(buf, &at, sizeof buf, "taken", counted + outside + saturated + lost);
	put_line(buf, &at, sizeof buf, "counted", counted);
	put_line(buf, &at, sizeof buf, "outside", outside);
	put_line(buf, &at, sizeof buf, "saturated", saturated);
	put_line(buf, &at, sizeof buf, "lost", lost);
	put_line(buf, &at, sizeof buf, "system", atomic_load(&stats.system));
	gmon_file_write_beside(".stats", buf, at);
}

/* Write the profile as it is now; unless wait, only if no other thread
   is writing.  Async-signal-safe. */
static void write_profile(int wait)
{
	if (atomic_load(&state) != STARTED || prof.no_file || getpid() != owner)
		return;	/* a vfork child shares our memory: not its profile */
	if (!writer_take(wait))
		return;
	int saved = errno;
	if (gmon_file_write(emit, NULL) == 0)
		write_stats();
	errno = saved;
	writer_give();
}

/* ---- snapshots, from the sampling path ------------------------------- */

/*
 * Once a second of the samples' own time, the thread whose sample finds
 * the second over writes the profile, from the sampler's hook (a signal
 * handler, or wherever the backend hands samples in): no thread of ours.
 * The counts change only while the program runs, and then samples come,
 * so SIGKILL loses at most about a second.  A write under way elsewhere
 * is not waited for: the next second writes.
 */
#define SNAPSHOT_NS 1000000000

static _Atomic int64_t next_snapshot_ns;

static int64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void snapshot_due_in_a_second(void)
{
	atomic_store(&next_snapshot_ns, coarse_ns() + SNAPSHOT_NS);
}

/* After each counted sample.  Async-signal-safe. */
static void gmon_sampled(void)
{
	int64_t now = coarse_ns();
	int64_t due = atomic_load_explicit(&next_snapshot_ns, memory_order_relaxed);
	if (now < due || !atomic_compare_exchange_strong(&next_snapshot_ns, &due,
							 now + SNAPSHOT_NS))
		return;
	write_profile(0);
}

/* Before an exec: the profile as it is (the image may not come back). */
static void gmon_before_exec(void)
{
	write_profile(1);
}

/* A thread that ends gives its arc table to the next one. */
static void gmon_thread_end(pid_t ended)
{
	(void)ended;
	gmon_arcs_thread_end();
}

static const struct sampler_hooks gmon_hooks = {
	.sampled = gmon_sampled,
	.before_exec = gmon_before_exec,
	.thread_end = gmon_thread_end,
};

/* ---- fatal signals -------------------------------------------------- */

static const int fatal_signals[] = {
	SIGHUP, SIGINT, SIGQUIT, SIGILL, SIGTRAP, SIGABRT, SIGBUS, SIGFPE,
	SIGUSR1, SIGSEGV, SIGUSR2, SIGPIPE, SIGALRM, SIGTERM, SIGXCPU,
	SIGXFSZ, SIGSYS,
};

/*
 * Write, then let the signal do what it would have done: a fault
 * (si_code > 0) happens again when we return, now under the default
 * action; any other signal is sent again and arrives, unblocked, as we
 * return.
 */
static void on_fatal(int sig, siginfo_t *info, void *context)
{
	(void)context;
	int saved = errno;
	write_profile(1);
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, NULL);
	int fault = info && info->si_code > 0
		&& (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE);
	if (!fault)
		syscall(SYS_tgkill, getpid(), tid(), sig);
	errno = saved;
}

/* Only where the program keeps the default action, which is to die. */
static void catch_fatal_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof fatal_signals / sizeof fatal_signals[0]; i++) {
		struct sigaction old;
		if (sigaction(fatal_signals[i], NULL, &old) == 0
		    && !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
			sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* ---- the public calls ------------------------------------------------ */

struct find_bias {
	uint64_t pc, bias;
	int found;
};

static int bias_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct find_bias *b = arg;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uint64_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && b->pc >= start && b->pc < start + ph->p_memsz) {
			b->bias = info->dlpi_addr;
			b->found = 1;
			return 1;
		}
	}
	return 0;
}

/* Sampling and arc counting on or off, together.  Under control. */
static void set_running(int on)
{
	if (on == atomic_load(&running))
		return;
	if (on) {
		struct sink_set *set = sinks_new(1);
		if (set) {
			set->regions[0] = (struct region){
				.offset = prof.low,
				.ncounters = prof.nbins,
				.scale = prof.scale,
				.width = 4,
				.base = prof.counts,
			};
			sampler_start(set);	/* on failure: arcs only */
		}
		gmon_arcs_on(prof.high - prof.low);
	} else {
		gmon_arcs_off();
		sampler_stop();
	}
	atomic_store(&running, on);
}

static void before_fork(void)
{
	if (atomic_load(&state) == STARTED && getpid() == owner)
		while (!writer_take(1))
			;	/* no write half done in the child's copy */
}

static void after_fork_parent(void)
{
	if (atomic_load(&state) == STARTED && getpid() == owner)
		writer_give();
}

/* The child's profile is its own: it starts from zero. */
static void after_fork_child(void)
{
	pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
	control = fresh;
	atomic_store(&writer, 0);
	if (atomic_load(&state) != STARTED)
		return;
	owner = getpid();
	gmon_file_after_fork();
	gmon_arcs_after_fork();
	for (uint64_t i = 0; i < prof.nbins; i++)
		__atomic_store_n(&prof.counts[i], 0, __ATOMIC_RELAXED);
	snapshot_due_in_a_second();
}

/* quick_exit runs no atexit handler (no _mcleanup), and glibc's own call
   of _exit is not the interposed one: write the profile as _exit does. */
static void gmon_quick_exit(void)
{
	sampler_exit_now();
	write_profile(1);
}

EXPORT void monstartup(unsigned long lowpc, unsigned long highpc)
{
	/* gcrt1.o can call us from libprofil's own _init, before its
	   constructors: the sampler must be set up first (environment,
	   fork handlers, which must run before ours). */
	sampler_init();
	/* Under `profil run` the preload mode profiles the program, into
	   the same file name: leave the sampler and the file to it. */
	const char *run = secure_getenv("PROFIL_RUN");
	if (run && *run)
		return;
	pthread_mutex_lock(&control);
	if (atomic_load(&state) != OFF || highpc <= lowpc) {
		pthread_mutex_unlock(&control);
		return;
	}
	/* Bins of a power-of-two size, so that gprof's floating-point bin
	   edges fall exactly where ours do. */
	uint64_t bin = 2;
	while ((highpc - lowpc) / bin > MAX_BINS && bin < 0x20000)
		bin *= 2;
	prof.low = lowpc & ~(bin - 1);
	prof.high = (highpc + bin - 1) & ~(bin - 1);
	prof.nbins = (prof.high - prof.low) / bin;
	prof.scale = (uint32_t)(0x10000 / (bin / 2));
	prof.bytes = prof.nbins * sizeof *prof.counts;
	prof.counts = statemem_map(prof.bytes, 0);
	if (prof.counts == MAP_FAILED) {
		prof.counts = NULL;
		pthread_mutex_unlock(&control);
		return;
	}
	/* gprof reads link-time addresses (position-independent programs). */
	struct find_bias b = { lowpc, 0, 0 };
	dl_iterate_phdr(bias_of, &b);
	prof.bias = b.bias;
	prof.no_file = gmon_file_setup() != 0;
	owner = getpid();
	static int atfork_done;
	if (!atfork_done++) {
		pthread_atfork(before_fork, after_fork_parent, after_fork_child);
		at_quick_exit(gmon_quick_exit);
	}
	catch_fatal_signals();
	snapshot_due_in_a_second();
	sampler_set_preload_hooks(&gmon_hooks);
	atomic_store(&state, STARTED);
	set_running(1);
	pthread_mutex_unlock(&control);
}

/* The name glibc's gcrt1.o calls. */
EXPORT void __monstartup(unsigned long lowpc, unsigned long highpc)
{
	monstartup(lowpc, highpc);
}

EXPORT void moncontrol(int mode)
{
	pthread_mutex_lock(&control);
	if (atomic_load(&state) == STARTED)
		set_running(mode != 0);
	pthread_mutex_unlock(&control);
}

EXPORT void _mcleanup(void)
{
	pthread_mutex_lock(&control);
	if (atomic_load(&state) != STARTED || getpid() != owner) {
		pthread_mutex_unlock(&control);
		return;
	}
	set_running(0);
	pthread_mutex_unlock(&control);
	write_profile(1);
	uint64_t lost = gmon_arcs_lost();
	if (lost) {
		char line[96] = "libprofil: calls not counted for want of memory: ";
		size_t n = strlen(line);
		char d[24];
		int i = sizeof d;
		do
			d[--i] = (char)('0' + lost % 10);
		while ((lost /= 10) && i > 0);
		memcpy(line + n, d + i, sizeof d - i);
		n += sizeof d - i;
		line[n++] = '\n';
		ssize_t r = write(STDERR_FILENO, line, n);
		(void)r;
	}
	atomic_store(&state, FINISHED);
}

/* ---- the ways a process ends without exit() -------------------------- */

static _Noreturn void exit_now(int status)
{
	sampler_exit_now();
	write_profile(1);
	for (;;)
		syscall(SYS_exit_group, status);
}

EXPORT void _exit(int status)
{
	exit_now(status);
}

EXPORT void _Exit(int status)
{
	exit_now(status);
}

