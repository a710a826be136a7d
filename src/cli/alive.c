/*
 * alive.c - is the process a "running" profile file was written by still
 * running?  A file left in the running state is either a process killed
 * before it could complete it, or one that is still at work (profil
 * report run while the program runs); the report says which.
 *
 * The pid alone is not enough: pids are reused.  The process must also
 * have started no later than the profile did (the file is made at the
 * start of the image, after fork or exec), and run the program the
 * profile is of when /proc lets us read its executable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "model.h"

/* When the process started, in CLOCK_REALTIME ns; 0 if unknown, or if
   it has ended (a zombie, not yet reaped, still answers kill). */
static uint64_t started_ns(int32_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* Field 22, counted after the command, which may hold anything. */
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X')
		return 0;
	unsigned long long ticks = 0;
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%llu", &ticks) != 1)
		return 0;
	/* The ticks count from boot: boot's real time is now's less the
	   time since boot (to the nanosecond; /proc/stat's btime is to the
	   second). */
	struct timespec real, boot;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0 || clock_gettime(CLOCK_REALTIME, &real) != 0
	    || clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
		return 0;
	int64_t booted = (real.tv_sec - boot.tv_sec) * 1000000000ll + (real.tv_nsec - boot.tv_nsec);
	return (uint64_t)(booted + (int64_t)(ticks * (1000000000ull / (unsigned long long)hz)));
}

int process_running(int32_t pid, uint64_t start_ns, const char *program)
{
	if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM))
		return 0;
	uint64_t since = started_ns(pid);
	/* Ticks are of 10 ms, and the real-time clock may have been set a
	   little since: 0.5 s of slack. */
	if (!since || since > start_ns + 500000000ull)
		return 0;
	char link[64], exe[PATH_MAX];
	snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, exe, sizeof exe - 1);
	if (n < 0 || !program || program[0] != '/')
		return 1;	/* not ours to read: the pid and start time must do */
	exe[n] = '\0';
	char real[PATH_MAX];
	if (realpath(program, real))
		program = real;
	size_t len = strlen(program);
	return strncmp(exe, program, len) == 0 && (!exe[len] || strcmp(exe + len, " (deleted)") == 0);
}

void unfinished_notes(const struct model *m, char *running, char *killed, size_t len)
{
	*running = *killed = '\0';
	unsigned dead = m->unfinished - m->running;
	if (m->running)
		snprintf(running, len, "%u process%s still running when read (pid %d%s): the "
			 "profile is of %s samples so far", m->running,
			 m->running == 1 ? " was" : "es were", (int)m->running_pid,
			 m->running == 1 ? "" : ", ...", m->running == 1 ? "its" : "their");
	dead -= m->ended;
	int at = 0;
	/* profil run saw these end: the counters are whole (they are the
	   file), the statistics as the last sample before copied them. */
	int st = (int)m->end_status;
	char how[96];
	if (WIFSIGNALED(st))
		snprintf(how, sizeof how, "%s killed by signal %d (%s)", m->ended == 1 ? "was" : "were",
			 WTERMSIG(st), strsignal(WTERMSIG(st)));
	else	/* no exit handler ran: a raw exit_group (Go), or exit after a vfork child's */
		snprintf(how, sizeof how, "exited (status %d) past libprofil's end",
			 WEXITSTATUS(st));
	if (m->ended)
		at = snprintf(killed, len, "%u process%s %s: counts whole, statistics of up to 1 s "
			      "before %s end", m->ended, m->ended == 1 ? "" : "es", how,
			      m->ended == 1 ? "its" : "their");
	if (dead && at >= 0 && (size_t)at < len)
		snprintf(killed + at, len - (size_t)at, "%s%u process%s did not exit normally: "
			 "%s last second of statistics may be missing", at ? "; " : "", dead,
			 dead == 1 ? "" : "es", dead == 1 ? "its" : "their");
}
