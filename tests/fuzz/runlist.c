/*
 * runlist.c - fuzz target: reading .profil-last, what the last profil
 * run made (its directory, or a list of files from a profil of before
 * run directories), which report, merge and export read when given no
 * file (input_files in src/cli/run_dir.c).
 *
 * Every name it gives is a whole, non-empty line of the file, or a file
 * in the directory such a line names.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#include "../../src/cli/cli.h"
#include "support/fuzz.h"

FUZZ_IN_SCRATCH_DIR

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unlink(RUN_LIST);	/* not O_TRUNC: ext4 flushes a file truncated and rewritten */
	int fd = open(RUN_LIST, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(write(fd, data, size) == (ssize_t)size);
	close(fd);
	char **files = input_files(0, NULL);
	size_t at = 0, dir_at = 0, dir_len = 0;	/* the line of the directory read */
	for (char **f = files; f && *f; f++) {
		size_t n = strlen(*f);
		FUZZ_CHECK(n > 0 && !strchr(*f, '\n'));
		if (dir_len && n > dir_len + 1 && memcmp(*f, data + dir_at, dir_len) == 0
		    && (*f)[dir_len] == '/' && !strchr(*f + dir_len + 1, '/'))
			continue;	/* another file of that directory */
		dir_len = 0;
		/* The next non-empty line of the input is this name, or the
		   name of a directory it is in. */
		while (at < size && data[at] == '\n')
			at++;
		size_t len = 0;
		while (at + len < size && data[at + len] != '\n')
			len++;
		if (len != n || memcmp(data + at, *f, n) != 0) {
			FUZZ_CHECK(n > len + 1 && memcmp(data + at, *f, len) == 0 && (*f)[len] == '/');
			char dir[4096];
			FUZZ_CHECK(len < sizeof dir);
			memcpy(dir, data + at, len);
			dir[len] = '\0';
			struct stat st;
			FUZZ_CHECK(stat(dir, &st) == 0 && S_ISDIR(st.st_mode));
			dir_at = at;
			dir_len = len;
		}
		at += len;
	}
	free_files(files);
	return 0;
}
