/*
 * report.c - fuzz target: profil report whole (src/cli/report.c,
 * rows.c, callgraph.c, html.c) on the input as a file of any kind the
 * command reads, with --exe naming this program (a gmon.out's symbols
 * then come from it, and its call arcs make a call graph).  The first
 * byte picks the view: functions, lines, objects, csv, json, the call
 * graph, the HTML page, and of call stacks the tree, main's callers and
 * its callees.  --annotate, which runs objdump, is left out.
 *
 * Whatever the file holds, report ends with status 0 or 1 (one line
 * said), never a crash, a hang or an exit of its own.
 */
#include <limits.h>
#include <string.h>

#include "../../src/cli/cli.h"
#include "support/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	static const char *const views[][2] = {
		{ "--format", "text" }, { "--lines", "--inline" }, { "--objects", "-t1" },
		{ "--format", "csv" }, { "--format", "json" }, { "--callgraph", "-t0" },
		{ "--html", NULL }, { "--tree", "-t0" }, { "--callers", "main" },
		{ "--callees", "main" },
	};
	const char *const *v = views[data[0] % (sizeof views / sizeof views[0])];
	char path[64], page[PATH_MAX];
	int fd = fuzz_file(data + 1, size - 1, path, sizeof path);
	snprintf(page, sizeof page, "%s/page.html", fuzz_dir());
	char *argv[] = { "report", "--exe", "/proc/self/exe", (char *)v[0],
			 v[1] ? (char *)v[1] : page, path, NULL };
	int status = cmd_report(6, argv);
	FUZZ_CHECK(status == 0 || status == 1);
	fflush(stdout);
	unlink(page);
	close(fd);
	return 0;
}
