/*
 * main.c - profil: run a program under the profiler and read what it
 * recorded.  See profil(1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The Makefile's VERSION. */
#ifndef PROFIL_VERSION
#error "PROFIL_VERSION: the Makefile defines it"
#endif

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "run", cmd_run, "run PROGRAM under the profiler: a profile of each of its processes" },
	{ "report", cmd_report, "print a profile: by function, line, object or thread; or HTML" },
	{ "merge", cmd_merge, "sum profiles into one file" },
	{ "export", cmd_export, "write profiles for pprof or gprof" },
	{ "cache", cmd_cache, "list or trim the objects kept by build ID for old profiles" },
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void usage(FILE *f)
{
	fputs("usage: profil COMMAND [OPTION...] [ARG...]\n"
	      "       profil --help | --version\n"
	      "Profile a program without recompiling it, and read its profile.\n\nCommands:\n", f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fputs("\nOptions:\n"
	      "  -h, --help     this list; profil COMMAND --help lists a command's options\n"
	      "  -V, --version  profil's version\n"
	      "See profil(1).\n", f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
		printf("profil %s\n", PROFIL_VERSION);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
		/* help COMMAND: that command's --help. */
		for (size_t i = 0; argc > 2 && i < NCOMMANDS; i++) {
			if (strcmp(argv[2], commands[i].name) == 0) {
				static char help_opt[] = "--help";
				char *args[] = { argv[2], help_opt, NULL };
				return commands[i].run(2, args);
			}
		}
		if (argc > 2) {
			error_line("help: unknown command '%s' (run, report, merge, export, cache)", argv[2]);
			return 2;
		}
		usage(stdout);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (cmd[0] == '-')
		error_line("unknown option '%s' (--help, --version; or a command: run, report, "
			   "merge, export, cache)", cmd);
	else
		error_line("unknown command '%s' (run, report, merge, export, cache)", cmd);
	return 2;
}
