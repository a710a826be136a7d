/*
 * fuzz.h - what the fuzz targets (the .c files of tests/fuzz) share.
 *
 * Each target is one libFuzzer entry point, LLVMFuzzerTestOneInput, fed
 * either by libFuzzer (make fuzz) or by support/replay.c, which runs
 * the checked-in corpus and regression files through it (make check).
 * A target asserts what must hold of the code it drives, beyond "did
 * not crash", with FUZZ_CHECK: a broken property aborts, which both
 * drivers report as a failure with the input that caused it.
 */
#ifndef PROFIL_FUZZ_H
#define PROFIL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                              \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: property broken: %s\n", __FILE__, __LINE__, \
				#cond);                                                \
			abort();                                                       \
		}                                                                      \
	} while (0)

/*
 * The input as a file the readers can open by name: a memfd, named
 * /proc/self/fd/N in path.  Returns the descriptor (close it when done).
 */
static inline int fuzz_file(const uint8_t *data, size_t size, char *path, size_t len)
{
	int fd = memfd_create("fuzz-input", MFD_CLOEXEC);
	FUZZ_CHECK(fd >= 0);
	size_t done = 0;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);
		FUZZ_CHECK(n > 0);
		done += (size_t)n;
	}
	snprintf(path, len, "/proc/self/fd/%d", fd);
	return fd;
}

/* A directory of our own to write outputs into, made once (removed at exit). */
const char *fuzz_dir(void);

/*
 * For a target that must run in that directory (it reads or writes
 * files in the current one): its set-up goes there.  Corpus directories
 * are then to be named by absolute paths (tests/fuzz/run.sh does).
 */
#define FUZZ_IN_SCRATCH_DIR                                   \
	int LLVMFuzzerInitialize(int *argc, char ***argv)     \
	{                                                     \
		(void)argc;                                   \
		(void)argv;                                   \
		FUZZ_CHECK(chdir(fuzz_dir()) == 0);           \
		return 0;                                     \
	}

#endif
