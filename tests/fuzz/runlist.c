/*
 * runlist.c - fuzz target: reading .profil-last, the list of files the
 * last profil run made, which report, merge and export read when given
 * no file (input_files in src/cli/run.c).
 *
 * Every name it gives is a whole, non-empty line of the file.
 */
#include <fcntl.h>
#include <string.h>

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
	size_t at = 0;
	for (char **f = files; f && *f; f++) {
		size_t n = strlen(*f);
		FUZZ_CHECK(n > 0 && !strchr(*f, '\n'));
		/* The next non-empty line of the input is this name. */
		while (at < size && data[at] == '\n')
			at++;
		FUZZ_CHECK(size - at >= n && memcmp(data + at, *f, n) == 0);
		at += n;
		FUZZ_CHECK(at == size || data[at] == '\n');
	}
	free_files(files);
	return 0;
}
