/*
 * attach.c - profil run -p PID[,PID...]: processes already running,
 * profiled from outside until --duration ends, a signal comes, or they
 * have all exited (see attach.h).
 *
 * The target is never touched: no ptrace, nothing loaded, no signal.
 * Its events are profil's descriptors, so when profil stops, or is
 * killed, the kernel closes them and the target runs on as before.
 * Threads made while attached are found in /proc/PID/task, looked at
 * every 100 ms.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../include/profil.h"
#include "attach.h"
#include "cli.h"

#define POLL_MS 50
#define RESCAN_NS 100000000
#define STACK_COPY 8192		/* bytes of user stack per sample, as libprofil copies */
#define STACK_COPY_MAX 65528	/* the most perf copies (a 16-bit size, 8-aligned) */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A small file of /proc, NUL-terminated: its length, or -1. */
static ssize_t read_small(const char *name, char *buf, size_t size)
{
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	while (n < size - 1) {
		ssize_t r = read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/* -p's list: 0, or -1 after one line. */
static int parse_pids(const char *text, pid_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	const char *s = text;
	do {
		char *end;
		errno = 0;
		long v = strtol(s, &end, 10);
		if (*s < '0' || *s > '9' || errno || v <= 0 || v > INT32_MAX
		    || (*end && *end != ',')) {
			error_line("-p '%s': not a list of process IDs (PID[,PID...])", text);
			free(*out);
			return -1;
		}
		size_t i = 0;
		while (i < *n && (*out)[i] != (pid_t)v)
			i++;
		if (i == *n) {
			*out = xrealloc(*out, (*n + 1) * sizeof **out);
			(*out)[(*n)++] = (pid_t)v;
		}
		s = *end ? end + 1 : end;
	} while (*s);
	return 0;
}

static int paranoid(void)
{
	char buf[32];
	if (read_small("/proc/sys/kernel/perf_event_paranoid", buf, sizeof buf) <= 0)
		return 2;
	return atoi(buf);
}

/* Does profil hold capability cap (CapEff)? */
static int capable(int cap)
{
	char buf[4096];
	if (read_small("/proc/self/status", buf, sizeof buf) <= 0)
		return 0;
	const char *at = strstr(buf, "CapEff:");
	if (!at)
		return 0;
	unsigned long long caps = strtoull(at + 7, NULL, 16);
	return cap < 64 && (caps >> cap & 1);
}

#define CAP_SYS_ADMIN 21
#define CAP_SYS_PTRACE 19
#define CAP_PERFMON 38

static const char *user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);
	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
	return buf;
}

/* Another user's process that profil may not look into: 1 after one line. */
static int foreign(pid_t pid, const char *name)
{
	struct stat st;
	char path[64], who[64];
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	if (stat(path, &st) != 0 || st.st_uid == geteuid() || capable(CAP_SYS_PTRACE))
		return 0;
	error_line("-p %d: process %d%s%s%s belongs to %s, not to %s: profil attaches only to "
		   "processes of its own user; as root (or with CAP_SYS_PTRACE) it could",
		   (int)pid, (int)pid, *name ? " (" : "", name, *name ? ")" : "",
		   user_name(st.st_uid, who, sizeof who), user_name(geteuid(), path, sizeof path));
	return 1;
}

/* Why perf_event_open refused process pid with err: one line. */
static void refused(pid_t pid, const char *name, int err)
{
	int level = paranoid();
	if (err == ESRCH) {
		error_line("-p %d: no such process (it exited)", (int)pid);
	} else if (err == EACCES && level > 2) {
		error_line("-p %d (%s): perf events refused (EACCES): kernel.perf_event_paranoid is "
			   "%d; 2 or less (sysctl kernel.perf_event_paranoid=2), or CAP_PERFMON, "
			   "would allow attaching", (int)pid, name, level);
	} else if (err == EACCES || err == EPERM) {
		error_line("-p %d (%s): perf events refused (%s) with kernel.perf_event_paranoid at "
			   "%d: a seccomp filter or security module forbids them here (a container?); "
			   "profil run -p works where perf record -p does", (int)pid, name,
			   err == EACCES ? "EACCES" : "EPERM", level);
	} else if (err == ENOSYS || err == ENOENT || err == EOPNOTSUPP) {
		error_line("-p %d (%s): this kernel has no perf events (%s): profil run -p needs "
			   "CONFIG_PERF_EVENTS", (int)pid, name, strerror(err));
	} else {
		error_line("-p %d (%s): perf_event_open: %s", (int)pid, name, strerror(err));
	}
}

/* The bytes of stack to copy with each sample: PROFIL_STACK_COPY, read
   as libprofil reads it for a program it runs, or 8 KiB; 0 after one
   line when it is not such a size (the command refuses what the library
   can only complain of). */
static uint32_t stack_copy_asked(void)
{
	const char *text = getenv("PROFIL_STACK_COPY");
	if (!text)
		return STACK_COPY;
	char *end;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (*text < '0' || *text > '9' || errno || *end || v < 8 || v > STACK_COPY_MAX || v % 8) {
		error_line("PROFIL_STACK_COPY='%s': not a multiple of 8 from 8 to %d bytes", text,
			   STACK_COPY_MAX);
		return 0;
	}
	return (uint32_t)v;
}

/* The process as it is at the start: 0, or -1 after one line. */
static int proc_init(struct attach_proc *p, pid_t pid)
{
	char path[64], buf[4096];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	if (pid == getpid()) {
		error_line("-p %d: that is profil itself", (int)pid);
		return -1;
	}
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0) {
		error_line("-p %d: no such process", (int)pid);
		return -1;
	}
	const char *close_paren = strrchr(buf, ')');
	char state = 0;
	int ppid = 0;
	if (close_paren)
		sscanf(close_paren + 1, " %c %d", &state, &ppid);
	p->ppid = ppid;
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	char comm[64] = "";
	if (read_small(path, comm, sizeof comm) > 0)
		comm[strcspn(comm, "\n")] = '\0';
	if (state == 'Z' || state == 'X') {
		error_line("-p %d (%s): the process has exited (a zombie): nothing to profile",
			   (int)pid, comm);
		return -1;
	}
	if (foreign(pid, comm))
		return -1;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, p->exe, sizeof p->exe - 1);
	if (n <= 0) {
		if (errno == ENOENT)
			error_line("-p %d (%s): a kernel thread: it has no program to profile",
				   (int)pid, comm);
		else
			error_line("-p %d (%s): %s: %s", (int)pid, comm, path, strerror(errno));
		return -1;
	}
	p->exe[n] = '\0';
	const char *base = strrchr(p->exe, '/');
	snprintf(p->name, sizeof p->name, "%.255s", base ? base + 1 : p->exe);
	/* A deleted program: the file name without the mark. */
	char *mark = strstr(p->name, " (deleted)");
	if (mark && !mark[10])
		*mark = '\0';
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t r;
		while (p->cmdline_len < sizeof p->cmdline
		       && (r = read(fd, p->cmdline + p->cmdline_len,
				    sizeof p->cmdline - p->cmdline_len)) > 0)
			p->cmdline_len += (uint32_t)r;
		char extra;
		if (p->cmdline_len == sizeof p->cmdline && read(fd, &extra, 1) == 1)
			p->cmdline_cut = 1;
		close(fd);
		/* A program that set its title (redis, nginx) pads the old
		   argv with NULs: not arguments, empty ones. */
		while (!p->cmdline_cut && p->cmdline_len > 1 && !p->cmdline[p->cmdline_len - 1]
		       && !p->cmdline[p->cmdline_len - 2])
			p->cmdline_len--;
	}
	return 0;
}

static struct attach_thread *known_thread(const struct attach_proc *p, pid_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i]->tid == tid && !p->threads[i]->ended)
			return p->threads[i];
	return NULL;
}

/* Events on the threads of p not yet armed; the number of threads. */
static size_t scan_tasks(struct attach_config *c, struct attach_proc *p)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0)
			continue;
		n++;
		if (known_thread(p, tid))
			continue;
		struct attach_thread *t = xmalloc(sizeof *t);
		memset(t, 0, sizeof *t);
		t->tid = tid;
		t->proc = p;
		t->fd = -1;
		t->index = (uint32_t)p->nthreads;
		if (attach_event_open(c, t) != 0) {
			if (errno != ESRCH)
				p->unsampled++;
			free(t);
			continue;
		}
		char name[96];
		snprintf(name, sizeof name, "/proc/%d/task/%d/comm", (int)p->pid, (int)tid);
		char comm[32] = "";
		if (read_small(name, comm, sizeof comm) > 0)
			comm[strcspn(comm, "\n")] = '\0';
		snprintf(t->comm, sizeof t->comm, "%.*s", (int)sizeof t->comm - 1, comm);
		p->threads = xrealloc(p->threads, (p->nthreads + 1) * sizeof *p->threads);
		p->threads[p->nthreads++] = t;
	}
	closedir(d);
	return n;
}

/* Has the process ended (gone, or a zombie)? */
static int proc_gone(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof buf) <= 0)
		return 1;
	const char *close_paren = strrchr(buf, ')');
	char state = 0;
	if (close_paren)
		sscanf(close_paren + 1, " %c", &state);
	return state == 'Z' || state == 'X';
}

static void proc_finish(const struct attach_config *c, struct attach_proc *p)
{
	for (size_t i = 0; i < p->nthreads; i++)
		attach_event_close(c, p->threads[i]);
	p->end_ns = now_ns(CLOCK_REALTIME);
}

/* SIGINT, SIGTERM and SIGHUP stop the run; blocked but in ppoll. */
static void catch_stop(sigset_t *old)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigset_t block;
	sigemptyset(&block);
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction was;
		sigaction(sigs[i], NULL, &was);
		if (was.sa_handler == SIG_IGN && sigs[i] == SIGHUP)
			continue;	/* nohup */
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, old);
}

int attach_run(const struct run_options *o, const char *dir)
{
	pid_t *pids;
	size_t npids;
	if (parse_pids(o->pids, &pids, &npids) != 0)
		return 2;
	struct attach_config c = { .hz = o->hz ? o->hz : PROFIL_HZ_DEFAULT };
	c.period_ns = 1000000000u / c.hz;
	c.run_id = now_ns(CLOCK_REALTIME);
	/* Stacks unless --no-stacks (or PROFIL_STACKS=0, as for a program). */
	const char *env = getenv("PROFIL_STACKS");
	if (o->stacks > 0 || (o->stacks < 0 && !(env && strcmp(env, "0") == 0))) {
		c.stack_copy = stack_copy_asked();
		if (!c.stack_copy) {
			free(pids);
			return 2;
		}
	}
	c.rec_size = PATH_MAX + 256 + c.stack_copy;
	c.rec = xmalloc(c.rec_size);
	struct attach_proc *procs = xmalloc(npids * sizeof *procs);
	int status = 0;
	size_t ready = 0;
	for (; ready < npids; ready++) {
		if (proc_init(&procs[ready], pids[ready]) != 0) {
			status = 2;
			break;
		}
	}
	/* May the kernel be sampled?  Else user time alone, if that. */
	for (size_t i = 0; i < ready && !status; i++) {
		int fd = attach_event_probe(&c, pids[i]);
		if (fd < 0 && errno == EINVAL && c.stack_copy) {
			/* A kernel without user stack copies (before 3.7, or
			   one built without them): the pcs alone. */
			fd = attach_event_probe(&(struct attach_config){ .period_ns = c.period_ns,
									 .user_only = c.user_only },
						pids[i]);
			if (fd >= 0) {
				fprintf(stderr, "profil: call stacks are not recorded: this kernel "
					"refuses perf's copies of the user stack "
					"(PERF_SAMPLE_STACK_USER: EINVAL)\n");
				c.stack_copy = 0;
			}
		}
		if (fd < 0 && (errno == EACCES || errno == EPERM) && !c.user_only) {
			c.user_only = 1;
			fd = attach_event_probe(&c, pids[i]);
		}
		if (fd < 0) {
			refused(pids[i], procs[i].name, errno);
			status = 2;
			break;
		}
		close(fd);
	}
	if (status) {
		for (size_t i = 0; i < ready; i++)
			attach_proc_free(&procs[i]);
		free(procs);
		free(pids);
		free(c.rec);
		return status;
	}
	if (c.user_only)
		fprintf(stderr, "profil: kernel time is not sampled (kernel.perf_event_paranoid is "
			"%d): the profile is of user time; 1 or less, or CAP_PERFMON, would show "
			"it\n", paranoid());

	sigset_t old;
	stop_signal = 0;
	catch_stop(&old);
	uint64_t start = now_ns(CLOCK_MONOTONIC);
	uint64_t deadline = o->duration > 0 ? start + (uint64_t)(o->duration * 1e9) : 0;
	size_t live = npids;
	for (size_t i = 0; i < npids; i++) {
		struct attach_proc *p = &procs[i];
		/* The objects (and their unwind tables, which take a few ms
		   each) before the events, so that no ring fills meanwhile;
		   then events, and the maps again: a mapping made after the
		   events is in a record, one made before in the maps. */
		attach_maps_read(&c, p);
		p->start_ns = now_ns(CLOCK_REALTIME);
		size_t n = scan_tasks(&c, p);
		attach_maps_read(&c, p);
		if (!p->nthreads) {
			error_line("-p %d (%s): no thread could be given an event (%zu threads): %s",
				   (int)p->pid, p->name, n, n ? "RLIMIT_NOFILE or locked memory "
				   "(RLIMIT_MEMLOCK, perf_event_mlock_kb)" : "it exited");
			p->exited = 1;
			live--;
		}
	}
	if (live) {
		char threads[64] = "";
		size_t nthreads = 0;
		for (size_t i = 0; i < npids; i++)
			nthreads += procs[i].nthreads;
		snprintf(threads, sizeof threads, "%zu thread%s", nthreads, nthreads == 1 ? "" : "s");
		if (npids == 1)
			fprintf(stderr, "profil: attached to process %d (%s, %s) ", (int)procs[0].pid,
				procs[0].name, threads);
		else
			fprintf(stderr, "profil: attached to %zu processes (%s) ", npids, threads);
		if (deadline)
			fprintf(stderr, "for %g s; Ctrl-C ends sooner\n", o->duration);
		else
			fprintf(stderr, "until Ctrl-C\n");
	}

	struct pollfd *pfd = NULL;
	struct attach_thread **which = NULL;
	size_t cap = 0;
	uint64_t last_scan = start;
	while (live && !stop_signal) {
		uint64_t now = now_ns(CLOCK_MONOTONIC);
		if (deadline && now >= deadline)
			break;
		size_t n = 0;
		for (size_t i = 0; i < npids; i++) {
			struct attach_proc *p = &procs[i];
			for (size_t k = 0; k < p->nthreads; k++) {
				if (p->threads[k]->fd < 0)
					continue;
				if (n == cap) {
					cap = cap ? cap * 2 : 64;
					pfd = xrealloc(pfd, cap * sizeof *pfd);
					which = xrealloc(which, cap * sizeof *which);
				}
				pfd[n] = (struct pollfd){ .fd = p->threads[k]->fd, .events = POLLIN };
				which[n++] = p->threads[k];
			}
		}
		uint64_t wait = POLL_MS * 1000000ull;
		if (deadline && deadline - now < wait)
			wait = deadline - now;
		struct timespec ts = { (time_t)(wait / 1000000000u), (long)(wait % 1000000000u) };
		ppoll(pfd, n, &ts, &old);
		for (size_t k = 0; k < n; k++) {
			attach_drain(&c, which[k]);
			if (pfd[k].revents & (POLLHUP | POLLERR)) {
				which[k]->ended = 1;	/* the thread exited */
				attach_event_close(&c, which[k]);
			}
		}
		now = now_ns(CLOCK_MONOTONIC);
		if (now - last_scan < RESCAN_NS)
			continue;
		last_scan = now;
		for (size_t i = 0; i < npids; i++) {
			struct attach_proc *p = &procs[i];
			if (p->exited)
				continue;
			if (proc_gone(p->pid)) {
				proc_finish(&c, p);
				p->exited = 1;
				live--;
				fprintf(stderr, "profil: process %d (%s) exited %.1f s into the run: its "
					"profile holds its samples until then\n", (int)p->pid, p->name,
					(double)(now - start) / 1e9);
				continue;
			}
			scan_tasks(&c, p);
			if (p->rescan_maps) {
				p->rescan_maps = 0;
				attach_maps_read(&c, p);
			}
		}
	}
	for (size_t i = 0; i < npids; i++)
		if (!procs[i].exited)
			proc_finish(&c, &procs[i]);
	sigprocmask(SIG_SETMASK, &old, NULL);
	free(pfd);
	free(which);

	for (size_t i = 0; i < npids; i++) {
		if ((procs[i].exited && !procs[i].nthreads) || attach_write(&c, &procs[i], dir) != 0)
			status = 2;
		attach_proc_free(&procs[i]);
	}
	attach_unwind_release();
	free(c.rec);
	free(procs);
	free(pids);
	return status;
}
