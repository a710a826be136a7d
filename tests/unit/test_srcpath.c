/*
 * Source file names made one per file (src/cli/srcpath.c), as report
 * --lines, the HTML page and pprof name them: relative names under the
 * compilation directory, "//", "." and ".." taken out as text.  The
 * command's files are compiled in: they need nothing but libc.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "../../src/cli/srcpath.c"
#include "../../src/cli/util.c"

static void is(const char *dir, const char *file, const char *want)
{
	char *got = srcpath_canonical(dir, file);
	if (strcmp(got, want) != 0)
		fail_msg("%s + %s: '%s', not '%s'", dir ? dir : "(none)", file, got, want);
	free(got);
}

static void canonical(void **state)
{
	(void)state;
	is("/build/zstd", "lib//compress/../common/mem.h", "/build/zstd/lib/common/mem.h");
	is("/build/zstd/", "./lib/./zstd.h", "/build/zstd/lib/zstd.h");
	is("/build/zstd", "/usr/include/stdio.h", "/usr/include/stdio.h");
	is("/build/zstd", "/usr/lib/gcc/../../include//x.h", "/usr/include/x.h");
	is("/build", "../../../x.c", "/x.c");
	is("/", "a.c", "/a.c");
	is(NULL, "lib//compress/../common/mem.h", "lib/common/mem.h");
	is(NULL, "../x/./y.c", "../x/y.c");
	is(NULL, "a/../../b.c", "../b.c");
	is(NULL, "a/..", ".");
	is("", "a//b.c", "a/b.c");
	is("/a/b", "..", "/a");
	is("/", "..", "/");
}

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(canonical) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}
