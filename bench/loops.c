/*
 * loops.c - the programs of bench/loops.sh: loops a profiler must not
 * slow down, each doing one cheap library call many times.
 *   loops getc N | read N | malloc N
 * At the end it prints its own CPU seconds (user + system, this
 * process only: not a profiler's) on standard error.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static volatile unsigned long sink;

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: loops getc|read|malloc N\n");
		return 2;
	}
	unsigned long n = strtoul(argv[2], NULL, 10);
	if (strcmp(argv[1], "getc") == 0) {
		/* An endless stream that never reaches a disk. */
		FILE *f = fopen("/dev/zero", "r");
		if (!f)
			return 1;
		for (unsigned long i = 0; i < n; i++)
			sink += (unsigned)getc(f);
	} else if (strcmp(argv[1], "read") == 0) {
		int fd = open("/dev/zero", O_RDONLY);
		char c;
		for (unsigned long i = 0; i < n && fd >= 0; i++)
			sink += (unsigned long)read(fd, &c, 1);
	} else if (strcmp(argv[1], "malloc") == 0) {
		for (unsigned long i = 0; i < n; i++) {
			char *p = malloc(16 + (i & 255));
			if (p)
				p[0] = (char)i;
			sink += (unsigned long)(p != NULL);
			free(p);
		}
	} else {
		fprintf(stderr, "loops: %s: not getc, read or malloc\n", argv[1]);
		return 2;
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "%.4f\n", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6
		+ ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	return 0;
}
