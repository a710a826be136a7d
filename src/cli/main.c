/*
 * main.c - profil: run a program under the profiler and read what it
 * recorded.  See profil(1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
	fputs("usage: profil run [-F HZ] [-o FILE] [--backend auto|perf|timer] [--] PROGRAM [ARG...]\n"
	      "       profil report [OPTIONS] [FILE...]\n"
	      "       profil merge -o OUT FILE...\n"
	      "       profil export --format pprof|gmon -o OUT [--object NAME] [--exe PROGRAM] [FILE...]\n"
	      "See profil(1).\n", f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (strcmp(cmd, "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	if (strcmp(cmd, "report") == 0)
		return cmd_report(argc - 1, argv + 1);
	if (strcmp(cmd, "merge") == 0)
		return cmd_merge(argc - 1, argv + 1);
	if (strcmp(cmd, "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		usage(stdout);
		return 0;
	}
	error_line("unknown command '%s' (run, report, merge, export)", cmd);
	return 2;
}
