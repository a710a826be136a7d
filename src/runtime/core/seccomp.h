/*
 * seccomp.h - the program's seccomp mode (seccomp.c).
 */
#ifndef PROFIL_SECCOMP_H
#define PROFIL_SECCOMP_H

/* The calling thread's seccomp mode (0 none, 1 strict, 2 filter; -1 if
   it cannot be read), with its count of filters in *filters as
   seccomp_filters gives it: one look at /proc.  Async-signal-safe. */
int seccomp_state(int *filters);

/* How many seccomp filters the calling thread is under (Linux 5.9's
   Seccomp_filters; before it, 1 for any): a number that grows when the
   program adds one.  -1 if it cannot be read.  Async-signal-safe. */
int seccomp_filters(void);

/* Would perf_event_open be refused here?  Tried in a child process, which
   a filter that kills or traps may kill: 0 if it worked, else the errno
   (EPERM for a child killed). */
int seccomp_perf_refused(void);

#endif
