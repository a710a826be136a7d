/*
 * replay.c - the fuzz targets without libFuzzer: every file named, and
 * every file in every directory named, goes through the target once
 * (make check runs the checked-in corpus and regression files so).
 * Fails when a file cannot be read, when there is no input at all, or,
 * through the target's own abort, when a property breaks; a crash is a
 * crash, and the sanitizer build reports it.
 */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

static int one(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	uint8_t *data = NULL;
	size_t size = 0, cap = 0;
	for (;;) {
		if (size == cap) {
			cap = cap ? cap * 2 : 65536;
			data = realloc(data, cap);
			FUZZ_CHECK(data != NULL);
		}
		size_t n = fread(data + size, 1, cap - size, f);
		if (n == 0)
			break;
		size += n;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		fprintf(stderr, "replay: %s: read error\n", path);
		free(data);
		return -1;
	}
	/* A copy of exactly size bytes: ASan sees any read past the end. */
	uint8_t *exact = malloc(size ? size : 1);
	FUZZ_CHECK(exact != NULL);
	memcpy(exact, data, size);
	free(data);
	LLVMFuzzerTestOneInput(exact, size);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	/* Names as given, before a target's set-up changes directory. */
	char **given = malloc((size_t)(argc + 1) * sizeof *given);
	FUZZ_CHECK(given != NULL);
	memcpy(given, argv, (size_t)(argc + 1) * sizeof *given);
	for (int i = 1; i < argc; i++) {
		char *abs = realpath(argv[i], NULL);
		if (abs)
			argv[i] = abs;
	}
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	unsigned long inputs = 0;
	int failed = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			failed = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed |= one(argv[i]) != 0;
			inputs++;
			continue;
		}
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, alphasort);
		for (int k = 0; k < n; k++) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], names[k]->d_name);
			if (names[k]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				failed |= one(path) != 0;
				inputs++;
			}
			free(names[k]);
		}
		free(names);
	}
	printf("%s: %lu inputs replayed\n", argv[0], inputs);
	for (int i = 1; i < argc; i++)
		if (given[i] != argv[i])
			free(argv[i]);
	free(given);
	if (!inputs) {
		fprintf(stderr, "replay: no input\n");
		return 1;
	}
	return failed;
}
