/*
 * thread_table.c - counting samples per thread into a profile file's
 * thread table (thread_table.h, profil(5)).
 *
 * threadtab_count() and threadtab_count_system() run in signal handlers
 * (the timer backend) and in the perf backend's drain thread: they are
 * async-signal-safe and lock-free.  Entries and pc slots are claimed
 * with one compare-and-swap each and never given back, so a reader, or
 * a handler that interrupts another, sees each either free or whole.
 * Every access to the table goes through satadd.h, whose faults resume
 * (the table lives in a file that a full disk can refuse pages to): the
 * first fault marks the table broken, and what it would have counted is
 * counted as unattributed instead, never lost.
 *
 * A thread's name is read when its entry is claimed, then at most once a
 * second by whichever sample finds it stale (one compare-and-swap on the
 * entry's named_ns elects the reader): with prctl in the thread itself,
 * else from /proc/self/task/TID/comm with open and read, which are
 * async-signal-safe.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sinks/satadd.h"
#include "sinks/sigown.h"
#include "sinks/thread_table.h"

#define RENAME_NS 1000000000u

/* The first 8 bytes of an entry: tid and owner, claimed together. */
static uint64_t id_word(int32_t tid, uint32_t owner)
{
	struct { int32_t tid; uint32_t owner; } w = { tid, owner };
	uint64_t v;
	memcpy(&v, &w, sizeof v);
	return v;
}

static uint64_t *word_of(struct profile_thread *e)
{
	return (uint64_t *)(void *)e;
}

static void broke(struct thread_table *t)
{
	atomic_store_explicit(&t->broken, 1, memory_order_relaxed);
}

/* Can the table's bytes [p, p+len) be written without a fault? A page
   refused breaks the table, as a fault would have. */
static int have(struct thread_table *t, const void *p, size_t len)
{
	if (reserve_pages(t->reserve, p, len) == 0)
		return 1;
	broke(t);
	return 0;
}

static void unattributed(struct thread_table *t, uint64_t n)
{
	atomic_fetch_add_explicit(&t->unattributed, n, memory_order_relaxed);
}

/* "/proc/self/task/TID/comm" without stdio. */
static void comm_path(pid_t tid, char *out)
{
	static const char head[] = "/proc/self/task/";
	char digits[16];
	int n = 0;
	unsigned v = (unsigned)tid;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof digits);
	memcpy(out, head, sizeof head - 1);
	char *p = out + sizeof head - 1;
	while (n)
		*p++ = digits[--n];
	memcpy(p, "/comm", 6);
}

/* The thread's name, NUL-padded to 16 bytes; 0 if it cannot be read. */
static int read_name(pid_t tid, int self, char name[16])
{
	memset(name, 0, 16);
	if (!sigown_syscalls_ok())	/* seccomp's strict mode */
		return 0;
	if (self)
		return syscall(SYS_prctl, PR_GET_NAME, name, 0, 0, 0) == 0;
	char path[48];
	comm_path(tid, path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, name, 15);
	close(fd);
	if (n <= 0)
		return 0;
	if (name[n - 1] == '\n')
		name[n - 1] = '\0';
	return 1;
}

static void store_name(struct thread_table *t, struct profile_thread *e, const char name[16])
{
	uint64_t w[2];
	memcpy(w, name, 16);
	if (satstore64((uint64_t *)(void *)e->comm, w[0]) < 0
	    || satstore64((uint64_t *)(void *)(e->comm + 8), w[1]) < 0)
		broke(t);
}

static uint64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + 1;	/* never 0 */
}

/* Read the name if it was never read or is a second old. */
static void maybe_name(struct thread_table *t, struct profile_thread *e,
		       const struct thread_ref *who)
{
	uint64_t last, now = coarse_ns();
	if (satload64(&e->named_ns, &last) < 0) {
		broke(t);
		return;
	}
	if (last && now - last < RENAME_NS)
		return;
	int r = (int)satcas64(&e->named_ns, last, now);
	if (r < 0)
		broke(t);
	if (r != 1)
		return;
	char name[16];
	if (read_name(who->tid, who->self, name))
		store_name(t, e, name);
}

/* The entry of who, claimed if it has none: who->entry, or -1 if the
   table is broken. */
static int32_t find_entry(struct thread_table *t, struct thread_ref *who)
{
	if (atomic_load_explicit(&t->broken, memory_order_relaxed))
		return who->entry = -1;
	if (who->entry >= 0)
		return who->entry;
	uint64_t mine = id_word(who->tid, t->owner);
	uint32_t n = t->nentries;
	uint32_t h = profile_thread_hash(who->tid, n);
	for (uint32_t k = 0; n > 1 && k < PROFILE_PROBES && k < n - 1; k++) {
		uint32_t i = 1 + (h - 1 + k) % (n - 1);
		struct profile_thread *e = &t->entries[i];
		uint64_t cur;
		if (!have(t, e, sizeof *e))
			return who->entry = -1;
		if (satload64(word_of(e), &cur) < 0)
			goto broken;
		if (cur == 0) {
			int64_t r = satcas64(word_of(e), 0, mine);
			if (r < 0)
				goto broken;
			if (r == 1 || (satload64(word_of(e), &cur) == 0 && cur == mine)) {
				who->entry = (int32_t)i;
				maybe_name(t, e, who);
				return who->entry;
			}
			continue;
		}
		if (cur == mine) {
			who->entry = (int32_t)i;
			maybe_name(t, e, who);
			return who->entry;
		}
	}
	return who->entry = 0;	/* other threads */
broken:
	broke(t);
	return who->entry = -1;
}

int32_t threadtab_entry(struct thread_table *t, struct thread_ref *who)
{
	return find_entry(t, who);
}

/* The slot of key: found, or claimed if claim; NULL if none (or fault,
   which breaks the table). */
static struct profile_pc *find_pc(struct thread_table *t, uint64_t key, int claim)
{
	uint64_t mask = t->npcs - 1, h = profile_pc_hash(key, t->npcs);
	for (unsigned k = 0; k < PROFILE_PROBES && k < t->npcs; k++) {
		struct profile_pc *s = &t->pcs[(h + k) & mask];
		uint64_t cur;
		if (!claim && reserve_untouched(t->reserve, s))
			return NULL;	/* never written: free */
		if (!have(t, s, sizeof *s))
			return NULL;
		if (satload64(&s->key, &cur) < 0)
			goto broken;
		if (cur == key)
			return s;
		if (cur != 0)
			continue;
		if (!claim)
			return NULL;
		int64_t r = satcas64(&s->key, 0, key);
		if (r < 0)
			goto broken;
		if (r == 1 || (satload64(&s->key, &cur) == 0 && cur == key))
			return s;
	}
	return NULL;
broken:
	broke(t);
	return NULL;
}

void threadtab_count(struct thread_table *t, struct thread_ref *who, uint32_t seg,
		     uint64_t index, uint32_t n)
{
	if (!n)
		return;
	int32_t e = find_entry(t, who);
	if (e < 0) {
		unattributed(t, n);
		return;
	}
	/* The pc first: a reader takes what the slots miss of the entry's
	   samples as unplaced. */
	if (t->npcs && profile_pc_keyable((uint32_t)e, seg, index)) {
		struct profile_pc *s = find_pc(t, profile_pc_key((uint32_t)e, seg, index), 1);
		if (s && satadd32(&s->count, n) < 0)
			broke(t);
	}
	if (!have(t, &t->entries[e], sizeof t->entries[e])
	    || satxadd64(&t->entries[e].samples, n) < 0) {
		broke(t);
		unattributed(t, n);
	}
}

void threadtab_count_system(struct thread_table *t, struct thread_ref *who, uint32_t seg,
			    uint64_t index, uint32_t n)
{
	if (!n)
		return;
	int32_t e = find_entry(t, who);
	if (e < 0)
		return;
	if (t->npcs && profile_pc_keyable((uint32_t)e, seg, index)) {
		struct profile_pc *s = find_pc(t, profile_pc_key((uint32_t)e, seg, index), 0);
		if (s && satadd32(&s->system, n) < 0)
			broke(t);
	}
	if (have(t, &t->entries[e], sizeof t->entries[e])
	    && satxadd64(&t->entries[e].system, n) < 0)
		broke(t);
}

void threadtab_end(struct thread_table *t, pid_t tid)
{
	if (atomic_load(&t->broken))
		return;
	uint64_t mine = id_word(tid, t->owner);
	uint32_t n = t->nentries;
	uint32_t h = profile_thread_hash(tid, n);
	for (uint32_t k = 0; n > 1 && k < PROFILE_PROBES && k < n - 1; k++) {
		struct profile_thread *e = &t->entries[1 + (h - 1 + k) % (n - 1)];
		uint64_t cur;
		if (reserve_untouched(t->reserve, e))
			return;		/* never sampled */
		if (!have(t, e, sizeof *e))
			return;
		if (satload64(word_of(e), &cur) < 0) {
			broke(t);
			return;
		}
		if (cur == 0)
			return;		/* never sampled */
		if (cur != mine)
			continue;
		char name[16];
		if (read_name(tid, 1, name))
			store_name(t, e, name);
		if (satcas64(word_of(e), mine, id_word(tid, t->owner | PROFILE_THREAD_ENDED)) < 0)
			broke(t);
		return;
	}
}

void threadtab_name_all(struct thread_table *t)
{
	pid_t self = (pid_t)syscall(SYS_gettid);
	for (uint32_t i = 1; i < t->nentries && !atomic_load(&t->broken); i++) {
		struct profile_thread *e = &t->entries[i];
		uint64_t cur;
		uintptr_t end = reserve_untouched_end(t->reserve, e);
		if (end) {
			/* Free, as is every entry that starts before end: on
			   to the first that does not (the loop's i++ makes it
			   so). */
			i = (uint32_t)((end - (uintptr_t)t->entries + sizeof *e - 1) / sizeof *e) - 1;
			continue;
		}
		if (!have(t, e, sizeof *e))
			return;
		if (satload64(word_of(e), &cur) < 0) {
			broke(t);
			return;
		}
		if (cur == 0 || cur != id_word(e->tid, t->owner))
			continue;	/* free, or ended */
		char name[16];
		if (read_name(e->tid, e->tid == self, name))
			store_name(t, e, name);
	}
}
