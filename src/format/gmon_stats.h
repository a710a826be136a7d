/*
 * gmon_stats.h - the companion libprofil writes beside a gmon.out
 * (NAME.stats, gmon.out(5)): what gprof's format cannot hold, the
 * process's CPU time and the sampler's statistics.
 */
#ifndef PROFIL_GMON_STATS_H
#define PROFIL_GMON_STATS_H

#include <stdint.h>

struct gmon_stats {
	uint64_t cpu_ns;	/* the process's CPU time at the write */
	uint64_t taken, counted, outside, saturated, lost, system;
};

/*
 * Read the companion of the gmon.out at path: 0, 1 if there is none
 * (glibc's runtime wrote the file), -1 with err ("PATH: what is wrong")
 * if it is there but not one.
 */
int gmon_stats_read(const char *gmon_path, struct gmon_stats *s, char *err, size_t errlen);

#endif
