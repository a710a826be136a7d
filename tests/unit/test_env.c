/*
 * Parsing PROFIL_HZ, PROFIL_BACKEND and PROFIL_STACK_COPY, and the writability check that
 * makes profil() answer EFAULT.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../include/profil.h"
#include "../../src/runtime/core/env.h"
#include "../../src/runtime/core/memcheck.h"
#include "../../src/runtime/files/outname.h"

static void test_hz(void **state)
{
	(void)state;
	static const struct { const char *text; unsigned hz; } good[] = {
		{ "1", 1 }, { "250", 250 }, { "1000", 1000 }, { "100000", 100000 },
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		unsigned hz = 0;
		assert_true(env_parse_hz(good[i].text, &hz));
		assert_int_equal(hz, good[i].hz);
	}
	static const char *bad[] = { "0", "100001", "", "abc", "10x", "-5", " 5",
				     "+5", "1e3", "99999999999999999999", "4294967297" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		unsigned hz = 77;
		assert_false(env_parse_hz(bad[i], &hz));
		assert_int_equal(hz, 77);
	}
	assert_false(env_parse_hz(NULL, NULL));
}

static void test_backend(void **state)
{
	(void)state;
	int b = -1;
	assert_true(env_parse_backend("auto", &b));
	assert_int_equal(b, PROFIL_BACKEND_AUTO);
	assert_true(env_parse_backend("perf", &b));
	assert_int_equal(b, PROFIL_BACKEND_PERF);
	assert_true(env_parse_backend("timer", &b));
	assert_int_equal(b, PROFIL_BACKEND_TIMER);
	static const char *bad[] = { "", "Timer", "timer ", "perf_event", "itimer" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_false(env_parse_backend(bad[i], &b));
	assert_false(env_parse_backend(NULL, &b));
}

static const char read_only[64] = "in .rodata";

static void test_stack_copy(void **state)
{
	(void)state;
	static const struct { const char *text; unsigned bytes; } good[] = {
		{ "8", 8 }, { "4096", 4096 }, { "8192", 8192 }, { "65528", 65528 },
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		unsigned bytes = 0;
		assert_true(env_parse_stack_copy(good[i].text, &bytes));
		assert_int_equal(bytes, good[i].bytes);
	}
	static const char *const bad[] = {
		"", "0", "4", "12", "65536", "-8", " 8", "+8", "8k", "8.0", "99999999999999999999",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		unsigned bytes = 7;
		assert_false(env_parse_stack_copy(bad[i], &bytes));
		assert_int_equal(bytes, 7);
	}
}

static void test_writable(void **state)
{
	(void)state;
	long page = sysconf(_SC_PAGESIZE);
	char *heap = malloc(1000), stack[256];
	assert_true(memory_writable(heap, 1000));
	assert_true(memory_writable(stack, sizeof stack));
	assert_false(memory_writable(read_only, sizeof read_only));
	assert_false(memory_writable((void *)(uintptr_t)test_writable, 16));	/* text */

	char *p = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(memory_writable(p, 4 * page));
	mprotect(p + 3 * page, page, PROT_READ);
	assert_true(memory_writable(p, 3 * page));
	assert_false(memory_writable(p + 2 * page, 2 * page));
	assert_false(memory_writable(p + 3 * page, 1));
	mprotect(p + page, page, PROT_NONE);	/* a hole in the middle */
	assert_false(memory_writable(p, 3 * page));
	mprotect(p + page, page, PROT_READ | PROT_WRITE);
	/* Two mappings side by side (different protections made them two,
	   now the same again) still count as one range. */
	assert_true(memory_writable(p, 3 * page));
	munmap(p + 2 * page, page);
	assert_false(memory_writable(p, 3 * page));
	assert_false(memory_writable(p + 2 * page, 1));
	assert_true(memory_writable(p, 2 * page));
	assert_true(memory_writable(p, 0));		/* nothing to check */
	assert_false(memory_writable((void *)(UINTPTR_MAX - 8), 64));	/* wraps */
	munmap(p, 2 * page);
	munmap(p + 3 * page, page);
	free(heap);
}

/* PROFIL_OUT: %p, %n, %%, any other %c as c, a lone % at the end kept. */
static void test_outname(void **state)
{
	(void)state;
	static const struct { const char *pattern, *want; } cases[] = {
		{ "plain.prof", "plain.prof" },
		{ "%n.%p.prof", "prog.4242.prof" },
		{ "/d/%n-%n", "/d/prog-prog" },
		{ "100%%", "100%" },
		{ "%x%", "x%" },
		{ "%p", "4242" },
	};
	char out[64];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(outname_expand(cases[i].pattern, "prog", 4242, out, sizeof out), 0);
		assert_string_equal(out, cases[i].want);
	}
	/* Cut to the buffer, NUL-terminated, and said so. */
	assert_int_equal(outname_expand("%n.%p", "prog", 4242, out, 7), -1);
	assert_string_equal(out, "prog.4");
	assert_int_equal(outname_expand("ab", "prog", 1, out, 1), -1);
	assert_string_equal(out, "");
	assert_int_equal(outname_expand("abc", "prog", 1, out, 4), 0);
	assert_string_equal(out, "abc");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hz),
		cmocka_unit_test(test_backend),
		cmocka_unit_test(test_stack_copy),
		cmocka_unit_test(test_writable),
		cmocka_unit_test(test_outname),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
