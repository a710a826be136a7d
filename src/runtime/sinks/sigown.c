/*
 * sigown.c - signals whose kernel action is libprofil's (see sigown.h).
 *
 * The program's action for an owned signal is kept in a ring of four
 * copies per signal: a writer fills the next copy and then publishes its
 * index, so a reader (a handler chaining to it) never sees a half-written
 * action unless four writes overtake it; no lock, because sigaction is
 * async-signal-safe and may be called from a handler that interrupted
 * another call of it.
 *
 * sigown_chain, sigown_program_get/set and sigown_owned run in signal
 * handlers: async-signal-safe and lock-free (no malloc, stdio or locks;
 * only atomics and system calls).  sigown_take/release/check run under
 * the sampler's lock, never in a handler.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sinks/sigown.h"

#define NSIGS 65
#define COPIES 4

typedef int sigaction_fn(int, const struct sigaction *, struct sigaction *);

static sigaction_fn *_Atomic real_sigaction_fn;
static _Atomic unsigned long long unblockable;	/* bit sig - 1 */
static __thread int strict __attribute__((tls_model("initial-exec")));

/* Whose a signal is, apart from the rest: it is asked of every signal
   (a free one is looked for), and the table is 50 KiB, a page of which
   costs a short process a fault the first time it is read. */
static _Atomic(sigown_handler *) ours[NSIGS];	/* NULL: not owned */

static struct {
	struct sigaction mine;		/* what we install */
	struct sigaction program[COPIES];
	atomic_uint published, next;
} table[NSIGS];

/* The kernel's layout, for what handlers set without libc. */
struct kaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	unsigned long mask;
};

static sigaction_fn *real(void)
{
	sigaction_fn *f = atomic_load(&real_sigaction_fn);
	if (!f) {
		f = (sigaction_fn *)dlsym(RTLD_NEXT, "sigaction");
		atomic_store(&real_sigaction_fn, f);
	}
	return f;
}

__attribute__((constructor)) static void sigown_init(void)
{
	real();
}

int sigown_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn *f = real();
	if (!f) {
		errno = ENOSYS;
		return -1;
	}
	return f(sig, act, old);
}

static int valid(int sig)
{
	return sig > 0 && sig < NSIGS;
}

int sigown_owned(int sig)
{
	return valid(sig) && atomic_load(&ours[sig]) != NULL;
}

void sigown_program_get(int sig, struct sigaction *old)
{
	unsigned i = atomic_load(&table[sig].published) % COPIES;
	*old = table[sig].program[i];
}

void sigown_program_set(int sig, const struct sigaction *act)
{
	unsigned i = (atomic_fetch_add(&table[sig].next, 1) + 1) % COPIES;
	table[sig].program[i] = *act;
	atomic_store(&table[sig].published, i);
}

static int is_ours(int sig, const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == atomic_load(&ours[sig]);
}

int sigown_take(int sig, sigown_handler *fn, int flags, const sigset_t *mask)
{
	if (!valid(sig)) {
		errno = EINVAL;
		return -1;
	}
	struct sigaction sa, old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = fn;
	sa.sa_flags = flags | SA_SIGINFO;
	if (mask)
		sa.sa_mask = *mask;
	else
		sigemptyset(&sa.sa_mask);
	/* glibc's cancellation (32) and set*id (33) signals, which sigset
	   calls refuse: an asynchronous cancellation must not unwind a
	   thread out of our handler (its reader count would leak). */
	sa.sa_mask.__val[0] |= 1ul << (32 - 1) | 1ul << (33 - 1);
	if (!atomic_load(&ours[sig])) {
		if (sigown_real_sigaction(sig, NULL, &old) != 0)
			return -1;
		sigown_program_set(sig, &old);
	}
	table[sig].mine = sa;
	atomic_store(&ours[sig], fn);
	if (sigown_real_sigaction(sig, &sa, NULL) != 0) {
		atomic_store(&ours[sig], NULL);
		return -1;
	}
	return 0;
}

void sigown_release(int sig, int discard)
{
	if (!sigown_owned(sig))
		return;
	struct sigaction cur, prog;
	int intact = sigown_real_sigaction(sig, NULL, &cur) == 0 && is_ours(sig, &cur);
	sigown_program_get(sig, &prog);
	atomic_store(&ours[sig], NULL);
	if (!intact)
		return;	/* the program's, installed behind our back */
	if (discard) {
		struct sigaction ign;
		memset(&ign, 0, sizeof ign);
		ign.sa_handler = SIG_IGN;
		sigown_real_sigaction(sig, &ign, NULL);
	}
	prog.sa_flags &= ~0x04000000;	/* SA_RESTORER: libc sets its own */
	sigown_real_sigaction(sig, &prog, NULL);
}

int sigown_check(int sig)
{
	if (!sigown_owned(sig))
		return 1;
	struct sigaction cur;
	if (sigown_real_sigaction(sig, NULL, &cur) != 0 || is_ours(sig, &cur))
		return 1;
	sigown_program_set(sig, &cur);
	sigown_real_sigaction(sig, &table[sig].mine, NULL);
	return 0;
}

/* The default action of sig is to do nothing. */
static int default_ignores(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
}

/* Set sig's kernel action to the default, without libc. */
static void kernel_default(int sig)
{
	struct kaction k;
	memset(&k, 0, sizeof k);
	k.handler = SIG_DFL;
	syscall(SYS_rt_sigaction, sig, &k, NULL, sizeof k.mask);
}

void sigown_chain(int sig, siginfo_t *info, void *context)
{
	struct sigaction a;
	sigown_program_get(sig, &a);
	/* A fault happens again when we return; anything else was sent. */
	int fault = info && info->si_code > 0
		&& (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE
		    || sig == SIGTRAP);
	int handler = (a.sa_flags & SA_SIGINFO)
		|| (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN);
	if (!handler) {
		/* A fault the program ignores kills it all the same. */
		if ((a.sa_handler == SIG_IGN && !fault) || (a.sa_handler == SIG_DFL && default_ignores(sig)))
			return;
		atomic_store(&ours[sig], NULL);	/* the process dies of it */
		kernel_default(sig);
		if (!fault) {
			/* Sent again, with what it carried; it arrives as soon
			   as it is not blocked. */
			siginfo_t again = *info;
			long tid = syscall(SYS_gettid);
			if (syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, sig, &again) != 0)
				syscall(SYS_tgkill, getpid(), tid, sig);	/* not the main thread */
		}
		return;
	}
	if (a.sa_flags & SA_RESETHAND) {
		struct sigaction dfl;
		memset(&dfl, 0, sizeof dfl);
		dfl.sa_handler = SIG_DFL;
		sigown_program_set(sig, &dfl);
	}
	/* The program's mask while its handler runs; the kernel restores
	   the interrupted one when ours returns. */
	sigset_t block = a.sa_mask;
	if (!(a.sa_flags & SA_NODEFER))
		sigaddset(&block, sig);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &block, NULL, sizeof(unsigned long));
	if (a.sa_flags & SA_SIGINFO)
		a.sa_sigaction(sig, info, context);
	else
		a.sa_handler(sig);
}

void sigown_unblockable(int sig, int on)
{
	if (!valid(sig))
		return;
	if (on)
		atomic_fetch_or(&unblockable, 1ull << (sig - 1));
	else
		atomic_fetch_and(&unblockable, ~(1ull << (sig - 1)));
}

int sigown_strip(sigset_t *set)
{
	unsigned long long bits = atomic_load(&unblockable);
	int removed = 0;
	for (int sig = 1; bits; sig++, bits >>= 1)
		if ((bits & 1) && sigismember(set, sig) == 1) {
			sigdelset(set, sig);
			removed = 1;
		}
	return removed;
}

void sigown_block_unblockable(void)
{
	unsigned long bits = (unsigned long)atomic_load(&unblockable);
	if (bits)
		syscall(SYS_rt_sigprocmask, SIG_BLOCK, &bits, NULL, sizeof bits);
}

void sigown_strict(int on)
{
	strict = on;
	atomic_signal_fence(memory_order_seq_cst);
}

int sigown_syscalls_ok(void)
{
	return !strict;
}
