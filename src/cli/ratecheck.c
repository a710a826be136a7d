/*
 * ratecheck.c - profil run refuses a -F its backend cannot deliver here,
 * in one line and before anything runs: the runtime would lower it in
 * every process of the tree, each saying so.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../common/rates.h"

int run_rate_check(unsigned hz, const char *backend, int attach)
{
	/* Without --backend, the processes read PROFIL_BACKEND. */
	if (!backend && !attach)
		backend = getenv("PROFIL_BACKEND");
	/* The timer's signals come at most at the kernel's tick whatever
	   the rate, weighted by the periods they stand for: its cost does
	   not grow with the rate (profil(1)). */
	if (backend && strcmp(backend, "timer") == 0)
		return 0;
	unsigned limit = rate_perf_max(), kernel = rate_kernel_max();
	const char *or = attach || (backend && strcmp(backend, "perf") == 0) ? ""
			 : ", or --backend timer";
	if (hz <= limit)
		return 0;
	if (kernel && kernel <= limit)
		error_line("-F %u: above kernel.perf_event_max_sample_rate (%u), which the perf "
			   "backend is held to; use -F %u or less%s", hz, kernel, limit,
			   or);
	else
		error_line("-F %u: above what the perf backend delivers here (its own cost runs "
			   "away above %u Hz); use -F %u or less%s", hz, limit, limit,
			   or);
	return -1;
}
