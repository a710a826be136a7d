/*
 * lostcause.c - lost samples by cause (profil(5)), as report and the
 * HTML page say them.  Some causes are spread over the run and leave
 * the shares as they were (ring full, throttled, timer late); the others
 * take samples from one kind of place (a thread's last moments, the
 * kernel's time, everything after a write failed), and so bias them.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

static const struct {
	const char *name;	/* as report says it */
	const char *key;	/* as JSON says it */
	int spread;		/* spread over the run: the shares keep */
} causes[PROFILE_LOST_COUNT] = {
	[PROFILE_LOST_RING] = { "ring full", "ring_full", 1 },
	[PROFILE_LOST_THROTTLE] = { "throttled", "throttled", 1 },
	[PROFILE_LOST_LATE] = { "timer late", "timer_late", 1 },
	[PROFILE_LOST_TAIL] = { "thread tails", "thread_tail", 0 },
	[PROFILE_LOST_KERNEL] = { "kernel time not charged", "kernel_not_charged", 0 },
	[PROFILE_LOST_WRITE] = { "unwritable counters", "unwritable", 0 },
	[PROFILE_LOST_CORRUPT] = { "corrupt ring", "corrupt_ring", 0 },
	[PROFILE_LOST_STACK] = { "short of stack", "short_of_stack", 0 },
};

void model_ext_stats(struct model *m, const struct profile_ext *e, uint64_t lost)
{
	uint64_t said = 0;
	if (e && e->lost_kinds) {	/* profile.c checked lost_kinds */
		for (uint32_t i = 0; i < e->lost_kinds; i++) {
			m->lost_by[i] += e->lost_by[i];
			said += e->lost_by[i];
		}
	}
	/* A running file's page may be a moment apart from its header. */
	m->lost_unsplit += lost > said ? lost - said : 0;
	if (e && e->hz_asked > m->hz_asked)
		m->hz_asked = e->hz_asked;
}

static void group(char *buf, size_t len, size_t *at, const struct model *m, int spread,
		  const char *label)
{
	uint64_t sum = 0;
	for (int i = 0; i < PROFILE_LOST_COUNT; i++)
		sum += causes[i].spread == spread ? m->lost_by[i] : 0;
	if (!sum)
		return;
	int n = snprintf(buf + *at, len - *at, "%s%" PRIu64 " %s (", *at ? ", " : "", sum, label);
	const char *sep = "";
	for (int i = 0; i < PROFILE_LOST_COUNT && n > 0 && (size_t)n < len - *at; i++)
		if (causes[i].spread == spread && m->lost_by[i]) {
			*at += (size_t)n;
			n = snprintf(buf + *at, len - *at, "%s%s %" PRIu64, sep, causes[i].name,
				     m->lost_by[i]);
			sep = ", ";
		}
	if (n > 0 && (size_t)n < len - *at) {
		*at += (size_t)n;
		n = snprintf(buf + *at, len - *at, ")");
	}
	if (n > 0 && (size_t)n < len - *at)
		*at += (size_t)n;
}

void lost_describe(const struct model *m, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	group(buf, len, &at, m, 1, "spread over the run");
	group(buf, len, &at, m, 0, "not spread: they bias the shares");
	if (m->lost_unsplit && at < len)
		snprintf(buf + at, len - at, "%s%" PRIu64 " the files do not break down",
			 at ? ", " : "", m->lost_unsplit);
}

void lost_json(FILE *f, const struct model *m)
{
	fputs(",\"lost_by\":{", f);
	for (int i = 0; i < PROFILE_LOST_COUNT; i++)
		fprintf(f, "\"%s\":%" PRIu64 ",", causes[i].key, m->lost_by[i]);
	fprintf(f, "\"not_broken_down\":%" PRIu64 "},\"hz_asked\":%u", m->lost_unsplit,
		m->hz_asked ? m->hz_asked : m->hz);
}
