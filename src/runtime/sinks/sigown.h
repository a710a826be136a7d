/*
 * sigown.h - signals whose kernel action is libprofil's: the sampling
 * signal and SIGSEGV/SIGBUS (a fault in a counter).
 *
 * While libprofil owns a signal, its handler stays the kernel's action
 * whatever the program asks for: what the program installs through
 * sigaction, signal and the like (core/signals.c) is recorded here as the
 * program's action, reported back to it as the action in force, and run
 * by sigown_chain() for every instance of the signal that is not
 * libprofil's own.  So a fault of ours is recovered by us even after the
 * program installed its own SIGBUS handler, our sampling signal never
 * reaches a program that resets or catches every signal, and a signal of
 * the program's (a fault, kill -SEGV) is delivered as without us.
 *
 * sigown_chain, sigown_program_get/set and sigown_intact are
 * async-signal-safe and lock-free.
 */
#ifndef PROFIL_SIGOWN_H
#define PROFIL_SIGOWN_H

#include <signal.h>

typedef void sigown_handler(int, siginfo_t *, void *);

/*
 * Make fn the kernel's action for sig (flags with SA_SIGINFO; mask: also
 * blocked while fn runs, with glibc's cancellation and set*id signals, so
 * that no asynchronous cancellation unwinds out of it).  The action in
 * force becomes the program's, unless sig was owned already.  Returns 0
 * or -1 with errno.
 */
int sigown_take(int sig, sigown_handler *fn, int flags, const sigset_t *mask);

/*
 * Give sig back: the program's action becomes the kernel's again.  With
 * discard, pending instances are discarded first (the action passes
 * through SIG_IGN).  If the program replaced our handler behind our back
 * (a raw system call), what it installed stays.
 */
void sigown_release(int sig, int discard);

/* Does libprofil own sig?  */
int sigown_owned(int sig);

/*
 * Is our handler still the kernel's action for an owned sig?  If not
 * (the program installed its own with a raw system call, as Go's runtime
 * does on every signal), what it installed is recorded as the program's
 * action and ours is put back: returns 0 then, 1 if it was intact.
 */
int sigown_check(int sig);

/* The program's action for an owned sig, as sigaction() reports it. */
void sigown_program_get(int sig, struct sigaction *old);
/* Record act as the program's action for an owned sig. */
void sigown_program_set(int sig, const struct sigaction *act);

/*
 * From our handler, for an instance of sig that is not ours: do what the
 * program's action says, as the kernel would have (run its handler with
 * its mask, ignore, or die of the default action: a fault is left to
 * happen again, a sent signal is sent again).
 */
void sigown_chain(int sig, siginfo_t *info, void *context);

/*
 * Keep sig out of every mask and wait set the program gives (the
 * sampling signal: it is sent to a thread that is running, and must be
 * handled there, never left pending for sigwait or signalfd), or let it in
 * again.  sigown_strip removes such signals from set; returns whether it
 * removed any.  Async-signal-safe.
 */
void sigown_unblockable(int sig, int on);
int sigown_strip(sigset_t *set);
/*
 * Block those signals in this thread, from a handler: until it returns
 * (the kernel then puts the interrupted mask back), or until the program
 * sets its mask again.  Async-signal-safe.
 */
void sigown_block_unblockable(void);

/*
 * The calling thread is entering seccomp's strict mode, where any system
 * call but read, write, _exit and sigreturn kills it: our handlers make
 * none in it from then on (sigown_syscalls_ok).  on 0: it did not.
 * Async-signal-safe (thread-local).
 */
void sigown_strict(int on);
int sigown_syscalls_ok(void);

/* The real sigaction of libc (an interposer must not call itself). */
int sigown_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

#endif
