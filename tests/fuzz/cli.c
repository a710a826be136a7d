/*
 * cli.c - fuzz target: the command line of every subcommand of profil
 * (src/cli/run.c, report.c, merge.c, export.c), in a directory of its
 * own where no profile exists.
 *
 * The input is split at NUL bytes into arguments; its first byte picks
 * the subcommand.  run's options are parsed without running anything;
 * report, merge and export run whole and, with no readable profile
 * named, must end with status 0 (--help), 1 or 2, never crash or exit.
 */
#include <string.h>

#include "../../src/cli/cli.h"
#include "support/fuzz.h"

FUZZ_IN_SCRATCH_DIR

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 4096)
		return 0;
	static const char *const names[] = { "run", "report", "merge", "export" };
	int which = data[0] % 4;
	/* The arguments: copies, since getopt_long reorders argv. */
	char *buf = malloc(size);
	FUZZ_CHECK(buf != NULL);
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = '\0';
	char **argv = malloc((size + 2) * sizeof *argv);
	FUZZ_CHECK(argv != NULL);
	int argc = 0;
	argv[argc++] = (char *)names[which];
	for (size_t at = 0; at < size - 1; at += strlen(buf + at) + 1)
		argv[argc++] = buf + at;
	argv[argc] = NULL;
	int status;
	if (which == 0) {
		struct run_options o;
		status = run_options(argc, argv, &o);
		if (status < 0) {
			FUZZ_CHECK(o.program > 0 && o.program < argc);
			FUZZ_CHECK(o.hz == 0 || (o.hz >= 1 && o.hz <= 100000));
		}
	} else {
		int (*const cmds[])(int, char **) = { NULL, cmd_report, cmd_merge, cmd_export };
		status = cmds[which](argc, argv);
		FUZZ_CHECK(status >= 0 && status <= 2);
	}
	fflush(stdout);
	free(argv);
	free(buf);
	return 0;
}
