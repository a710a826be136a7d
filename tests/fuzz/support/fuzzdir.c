/*
 * fuzzdir.c - a scratch directory for the targets that write files
 * (export, merge, the command-line parsers), removed with what is in
 * it when the process exits.
 */
#include <dirent.h>
#include <limits.h>
#include <string.h>

#include "fuzz.h"

static char dir[64];

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
	rmdir(dir);
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof dir, "%.40s/profil-fuzz.XXXXXX", t && *t ? t : "/tmp");
		FUZZ_CHECK(mkdtemp(dir) != NULL);
		atexit(remove_dir);
	}
	return dir;
}
