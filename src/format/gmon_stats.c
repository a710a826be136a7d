/*
 * gmon_stats.c - reading the companion of a gmon.out (gmon_stats.h).
 * A separate file, since gprof rejects a gmon.out holding a record of a
 * tag it does not know.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gmon_stats.h"

int gmon_stats_read(const char *gmon_path, struct gmon_stats *s, char *err, size_t errlen)
{
	char path[4096];
	memset(s, 0, sizeof *s);
	if (snprintf(path, sizeof path, "%s.stats", gmon_path) >= (int)sizeof path)
		return 1;
	FILE *f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return 1;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char line[128];
	int ok = fgets(line, sizeof line, f) && strcmp(line, "profil-gmon-stats 1\n") == 0;
	const char *why = "not a profil-gmon-stats 1 file";
	unsigned seen = 0;
	static const char *const keys[] = { "cpu_ns", "taken", "counted", "outside",
					    "saturated", "lost", "system" };
	uint64_t *fields[] = { &s->cpu_ns, &s->taken, &s->counted, &s->outside,
			       &s->saturated, &s->lost, &s->system };
	while (ok && fgets(line, sizeof line, f)) {
		char key[32];
		uint64_t v;
		char end;
		if (sscanf(line, "%31s %" SCNu64 "%c", key, &v, &end) != 3 || end != '\n') {
			ok = 0;
			why = "a line is not a name and a number";
			break;
		}
		/* Names not known here: a later version's, skipped. */
		for (unsigned i = 0; i < sizeof keys / sizeof keys[0]; i++)
			if (strcmp(key, keys[i]) == 0) {
				*fields[i] = v;
				seen |= 1u << i;
			}
	}
	fclose(f);
	if (ok && (seen & 0x3f) != 0x3f) {
		ok = 0;
		why = "a figure is missing";
	}
	if (ok && s->taken != s->counted + s->outside + s->saturated + s->lost) {
		ok = 0;
		why = "taken is not counted + outside + saturated + lost";
	}
	if (!ok) {
		snprintf(err, errlen, "%s: %s", path, why);
		memset(s, 0, sizeof *s);
		return -1;
	}
	return 0;
}
