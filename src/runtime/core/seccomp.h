/*
 * seccomp.h - the program's seccomp mode (seccomp.c).
 */
#ifndef PROFIL_SECCOMP_H
#define PROFIL_SECCOMP_H

/* Is the process under a seccomp filter (or in strict mode)? */
int seccomp_filtered(void);

/* Would perf_event_open be refused here?  Tried in a child process, which
   a filter that kills or traps may kill: 0 if it worked, else the errno
   (EPERM for a child killed). */
int seccomp_perf_refused(void);

#endif
