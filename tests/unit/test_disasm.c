/*
 * src/cli/disasm_many.c: functions of one object disassembled together
 * by fewer objdump runs give, line for line and count for count, what a
 * run for each alone gives (disasm_function), for libc's malloc family
 * (a few kilobytes apart, with line tables where its debug file is
 * installed) and functions far from them; the runs are counted by an
 * objdump put first in PATH that logs each before running the real one.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/cli/rows.h"

static const char *names[] = { "malloc", "free", "realloc", "calloc", "valloc", "pvalloc",
			       "memalign", "qsort", "strtol", "fnmatch" };
#define N (sizeof names / sizeof *names)

static int by_first(const void *a, const void *b)
{
	const struct bin *x = a, *y = b;
	return (x->first > y->first) - (x->first < y->first);
}

static char dir[] = "/tmp/test_disasm.XXXXXX";

/* An objdump first in PATH that logs its runs to dir/runs. */
static int wrap_objdump(void)
{
	char real[PATH_MAX] = "", path[PATH_MAX + 32];
	FILE *p = popen("command -v objdump", "r");
	if (!p || !fgets(real, sizeof real, p)) {
		if (p)
			pclose(p);
		return -1;
	}
	pclose(p);
	real[strcspn(real, "\n")] = 0;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/objdump", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "#!/bin/sh\necho run >> '%s/runs'\nexec '%s' \"$@\"\n", dir, real);
	fclose(f);
	chmod(path, 0755);
	const char *old = getenv("PATH");
	char *np = malloc(strlen(dir) + strlen(old ? old : "") + 2);
	sprintf(np, "%s:%s", dir, old ? old : "");
	setenv("PATH", np, 1);
	free(np);
	return 0;
}

static size_t runs(void)
{
	char path[PATH_MAX + 32], line[64];
	snprintf(path, sizeof path, "%s/runs", dir);
	FILE *f = fopen(path, "r");
	size_t n = 0;
	while (f && fgets(line, sizeof line, f))
		n++;
	if (f)
		fclose(f);
	unlink(path);
	return n;
}

static void test_same_as_alone(void **state)
{
	(void)state;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	assert_non_null(libc);
	struct object o;
	memset(&o, 0, sizeof o);
	struct disasm_job job[N];
	struct bin bins[N];
	size_t n = 0;
	for (size_t i = 0; i < N; i++) {
		void *fn = dlsym(libc, names[i]);
		Dl_info info;
		const ElfW(Sym) *sym = NULL;
		if (!fn || !dladdr1(fn, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym
		    || !sym->st_size)
			continue;
		if (!o.path)
			o.path = strdup(info.dli_fname);
		uint64_t start = (uintptr_t)fn - (uintptr_t)info.dli_fbase;
		int dup = 0;
		for (size_t k = 0; k < n; k++)
			dup |= job[k].fn.start == start;
		if (dup)	/* an alias */
			continue;
		job[n] = (struct disasm_job){ .key = &o, .o = &o,
					      .fn = { names[i], start, sym->st_size } };
		bins[n] = (struct bin){ start, start + 1, 3 + n, 0 };
		n++;
	}
	assert_true(n >= 6);
	qsort(bins, n, sizeof *bins, by_first);	/* as model_finish leaves them */
	o.bins = bins;
	o.nbins = n;
	disasm_many(job, n, 4);
	size_t together = runs();
	for (size_t i = 0; i < n; i++) {
		struct disasm d;
		assert_int_equal(disasm_function(&o, &job[i].fn, &d, 1), 0);
		assert_int_equal(job[i].ok, 1);
		assert_int_equal(job[i].d.n, d.n);
		for (size_t k = 0; k < d.n; k++) {
			assert_string_equal(job[i].d.lines[k], d.lines[k]);
			assert_true(job[i].d.addrs[k] == d.addrs[k]);
			assert_true(job[i].d.counts[k] == d.counts[k]);
		}
		assert_true(job[i].d.samples == 3 + i);
		assert_true(d.samples == 3 + i);
		disasm_free(&d);
		disasm_free(&job[i].d);
	}
	size_t alone = runs();
	printf("%zu functions of %s: %zu objdump runs together, %zu alone\n", n, o.path,
	       together, alone);
	assert_int_equal(alone, n);
	assert_true(together < n);
	free(o.path);
}

static int cleanup(void **state)
{
	(void)state;
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/objdump", dir);
	unlink(path);
	snprintf(path, sizeof path, "%s/runs", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}

int main(void)
{
	if (wrap_objdump() != 0) {
		fprintf(stderr, "test_disasm: cannot put an objdump wrapper in PATH\n");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_as_alone),
	};
	return cmocka_run_group_tests(tests, NULL, cleanup);
}
