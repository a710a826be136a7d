/*
 * bidcache_cmd.c - profil cache: what the build-ID cache holds (as
 * ccache -s and perf buildid-cache -l show theirs), and trimming it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bidcache.h"
#include "cli.h"
#include "opts.h"

static const struct opt cache_opts[] = {
	{ "trim", 0, 't', "SIZE", "remove the least recently used objects until SIZE is left" },
	{ "clear", 0, 'c', NULL, "remove every object" },
	{ "help", 'h', 'h', NULL, "this list" },
	{ NULL, 0, 0, NULL, NULL },
};

static void mib(char *buf, size_t len, uint64_t n)
{
	if (n < 1048576)
		snprintf(buf, len, "%.1f KiB", n / 1024.0);
	else
		snprintf(buf, len, "%.1f MiB", n / 1048576.0);
}

int cmd_cache(int argc, char **argv)
{
	struct opts o = { .cmd = "cache", .operands = NULL,
			  .about = "List or trim the objects kept by build ID for old "
				   "profiles.", .v = cache_opts };
	const char *v;
	uint64_t trim = 0;
	int c, trimming = 0;
	optind = 0;
	while ((c = opts_next(&o, argc, argv, &v)) != -1) {
		switch (c) {
		case 't':
			if (bidcache_size(v, &trim) != 0) {
				error_line("--trim '%s': not a size (such as 500M, 2G, or 0)", v);
				return 2;
			}
			trimming = 1;
			break;
		case 'c':
			trimming = 1;
			trim = 0;
			break;
		case 'h':
			opts_help(&o, stdout);
			return 0;
		default:
			return 2;
		}
	}
	static const int one[] = { 't', 'c', 0 };
	if (opts_exclusive(&o, one, "give one"))
		return 2;
	if (optind < argc) {
		error_line("cache: '%s': takes no operand (--trim SIZE, --clear)", argv[optind]);
		return 2;
	}
	char dir[PATH_MAX], a[32], b[32];
	if (!bidcache_dir(dir, sizeof dir)) {
		printf("no build-ID cache: PROFIL_CACHE is %s\n",
		       getenv("PROFIL_CACHE") ? "off" : "unset and HOME is not set");
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (trimming) {
		uint64_t freed;
		size_t n = bidcache_trim(dir, trim, &freed);
		mib(a, sizeof a, freed);
		printf("%s: %zu object%s removed (%s)\n", dir, n, n == 1 ? "" : "s", a);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	size_t n;
	uint64_t total;
	struct bidcache_entry *e = bidcache_list(dir, &n, &total);
	mib(a, sizeof a, total);
	mib(b, sizeof b, bidcache_limit());
	printf("%s: %zu object%s, %s of %s (PROFIL_CACHE_SIZE)\n", dir, n, n == 1 ? "" : "s", a, b);
	if (n)
		printf("%12s  %-16s  %-40s  %s\n", "size", "last used", "build ID", "path");
	for (size_t i = n; i-- > 0;) {	/* most recently used first */
		char when[32] = "?", id[160];
		time_t t = (time_t)e[i].used;
		struct tm tm;
		if (localtime_r(&t, &tm))
			strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
		snprintf(id, sizeof id, "%.2s%s", e[i].base, e[i].base + 3);
		mib(a, sizeof a, e[i].size);
		printf("%12s  %-16s  %-40s  %s\n", a, when, id, e[i].path[0] ? e[i].path : "?");
	}
	free(e);
	if (fflush(stdout) != 0) {
		error_line("standard output: %s", strerror(errno));
		return 1;
	}
	return 0;
}
