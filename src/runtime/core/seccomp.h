/*
 * seccomp.h - the program's seccomp mode (seccomp.c).
 */
#ifndef PROFIL_SECCOMP_H
#define PROFIL_SECCOMP_H

/* Is the process under a seccomp filter (or in strict mode)? */
int seccomp_filtered(void);

/* How many seccomp filters the calling thread is under (Linux 5.9's
   Seccomp_filters; before it, 1 for any): a number that grows when the
   program adds one.  -1 if it cannot be read.  Async-signal-safe. */
int seccomp_filters(void);

/* Would perf_event_open be refused here?  Tried in a child process, which
   a filter that kills or traps may kill: 0 if it worked, else the errno
   (EPERM for a child killed). */
int seccomp_perf_refused(void);

#endif
