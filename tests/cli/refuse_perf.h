/*
 * refuse_perf.h - a seccomp filter that makes perf_event_open fail with
 * err and allows every other call, as container runtimes install (and,
 * with EACCES, what an unprivileged process sees under
 * perf_event_paranoid 3), or kills, as systemd does.  For
 * tests/integration/fallback.c, tests/cli/hostile.c and sigprog.c.
 */
#ifndef PROFIL_TEST_REFUSE_PERF_H
#define PROFIL_TEST_REFUSE_PERF_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* perf_event_open gets action (SECCOMP_RET_*), every other call is
   allowed: the calling thread and its children from now on.  0, or -1
   with errno. */
static inline int perf_filter(unsigned action)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof filter / sizeof filter[0], filter };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* perf_event_open fails with err. */
static inline int refuse_perf(int err)
{
	return perf_filter(SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA));
}

#endif
