/*
 * env.c - PROFIL_HZ, PROFIL_BACKEND, PROFIL_SYSTEM_TIME, PROFIL_STACKS and
 * PROFIL_STACK_COPY.
 *
 * Read once, when the library is loaded (the copy size when the perf
 * backend first opens).  A bad value never stops the
 * program: it is reported on one line and the default is used.  Messages
 * are written with write(2), not stdio, so that the program's own buffers
 * are left alone.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../../include/profil.h"
#include "core/env.h"

int env_parse_hz(const char *text, unsigned *hz)
{
	if (!text || *text < '0' || *text > '9')
		return 0;
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || *end != '\0' || v < PROFIL_HZ_MIN || v > PROFIL_HZ_MAX)
		return 0;
	*hz = (unsigned)v;
	return 1;
}

int env_parse_backend(const char *text, int *backend)
{
	static const struct { const char *name; int id; } names[] = {
		{ "auto", PROFIL_BACKEND_AUTO },
		{ "perf", PROFIL_BACKEND_PERF },
		{ "timer", PROFIL_BACKEND_TIMER },
	};
	for (size_t i = 0; text && i < sizeof names / sizeof names[0]; i++)
		if (strcmp(text, names[i].name) == 0) {
			*backend = names[i].id;
			return 1;
		}
	return 0;
}

int env_parse_stacks(const char *text, unsigned *depth)
{
	if (!text || *text < '0' || *text > '9')
		return 0;
	char *end;
	errno = 0;
	unsigned long v = strtoul(text, &end, 10);
	if (errno || *end != '\0' || v > PROFIL_STACKS_MAX)
		return 0;
	*depth = v == 1 ? PROFIL_STACKS_DEFAULT : (unsigned)v;
	return 1;
}

void env_complain(const char *name, const char *value, const char *problem,
		  const char *used)
{
	const char *parts[] = { "libprofil: ", name, "=", value, ": ", problem,
				"; using ", used, "\n" };
	char line[512];
	size_t n = 0;
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		for (const char *p = parts[i]; *p && n < sizeof line - 1; p++)
			line[n++] = *p;
	if (line[n - 1] != '\n')
		line[n - 1] = '\n';
	ssize_t r = write(STDERR_FILENO, line, n);
	(void)r;
}

void env_read(struct env_settings *out)
{
	out->hz = PROFIL_HZ_DEFAULT;
	out->backend = PROFIL_BACKEND_AUTO;
	out->system_time = 1;
	out->stacks = PROFIL_STACKS_DEFAULT;

	const char *hz = getenv("PROFIL_HZ");
	if (hz && !env_parse_hz(hz, &out->hz))
		env_complain("PROFIL_HZ", hz, "not a whole number from 1 to 100000",
			     "1000");
	const char *backend = getenv("PROFIL_BACKEND");
	if (backend && !env_parse_backend(backend, &out->backend))
		env_complain("PROFIL_BACKEND", backend,
			     "not one of auto, perf, timer", "auto");
	const char *system = getenv("PROFIL_SYSTEM_TIME");
	if (system && strcmp(system, "0") == 0)
		out->system_time = 0;
	else if (system && strcmp(system, "1") != 0)
		env_complain("PROFIL_SYSTEM_TIME", system, "not 0 or 1", "1");
	const char *stacks = getenv("PROFIL_STACKS");
	if (stacks && !env_parse_stacks(stacks, &out->stacks))
		env_complain("PROFIL_STACKS", stacks,
			     "not 0 (off), 1 (on) or a depth from 2 to 1024", "1");
}

int env_parse_stack_copy(const char *text, unsigned *bytes)
{
	char *end;
	if (!text || *text < '0' || *text > '9')
		return 0;
	errno = 0;
	long v = strtol(text, &end, 10);
	if (errno || *end != '\0' || v < 8 || v > PROFIL_STACK_COPY_MAX || v % 8)
		return 0;
	*bytes = (unsigned)v;
	return 1;
}

unsigned env_stack_copy(void)
{
	/* Racing first calls parse alike; the complaint is said once. */
	static _Atomic unsigned copy;
	static atomic_flag said = ATOMIC_FLAG_INIT;
	unsigned v = atomic_load(&copy);
	if (v)
		return v;
	v = PROFIL_STACK_COPY_DEFAULT;
	const char *text = getenv("PROFIL_STACK_COPY");
	if (text && !env_parse_stack_copy(text, &v) && !atomic_flag_test_and_set(&said))
		env_complain("PROFIL_STACK_COPY", text,
			     "not a multiple of 8 from 8 to 65528 bytes", "8192");
	atomic_store(&copy, v);
	return v;
}
