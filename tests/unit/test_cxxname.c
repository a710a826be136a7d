/*
 * Demangled names as report reads them (src/cli/cxxname.c): naming a
 * function to --annotate without its return type, parameters, clone
 * suffix or template arguments; operators and anonymous namespaces
 * kept whole; long names shortened for the text report.  The command's
 * file is compiled in: it needs nothing but libc.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "../../src/cli/cxxname.c"

static void span_is(const char *name, const char *want)
{
	size_t start, end = cxxname_span(name, &start);
	char got[512];
	snprintf(got, sizeof got, "%.*s", (int)(end - start), name + start);
	if (strcmp(got, want) != 0)
		fail_msg("%s: span '%s', not '%s'", name, got, want);
}

static void spans(void **state)
{
	(void)state;
	span_is("main", "main");
	span_is("geometry::scale(double, int)", "geometry::scale");
	span_is("int work<int>(int)", "work<int>");
	span_is("unsigned long sum<unsigned long>(unsigned long const*, int)",
		"sum<unsigned long>");
	span_is("compress(char const*, int) [clone .cold]", "compress");
	span_is("compress(int) [clone .isra.0] [clone .cold]", "compress");
	span_is("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper");
	span_is("std::vector<int, std::allocator<int> >::push_back(int const&)",
		"std::vector<int, std::allocator<int> >::push_back");
	span_is("bool operator< <int>(Box<int> const&, Box<int> const&)", "operator< <int>");
	span_is("Stream::operator<<(int)", "Stream::operator<<");
	span_is("Fn::operator()(int) const", "Fn::operator()");
	span_is("Grid<double>::operator double() const", "Grid<double>::operator double");
	span_is("operator new(unsigned long)", "operator new");
	span_is("void std::function<void (int)>::operator()(int) const",
		"std::function<void (int)>::operator()");
	span_is("<spin::work::Acc<u64>>::grind", "<spin::work::Acc<u64>>::grind");
	span_is("<spin::work::Acc<u64> as core::ops::Drop>::drop",
		"<spin::work::Acc<u64> as core::ops::Drop>::drop");
}

static void matches(void **state)
{
	(void)state;
	assert_true(cxxname_matches("int work<int>(int)", "work<int>"));
	assert_true(cxxname_matches("int work<int>(int)", "work"));
	assert_true(cxxname_matches("int work<int>(int)", "work<int>(int)"));
	assert_true(cxxname_matches("int work<int>(int)", "int work<int>(int)"));
	assert_false(cxxname_matches("int work<int>(int)", "wor"));
	assert_false(cxxname_matches("int work<int>(int)", "int"));
	assert_true(cxxname_matches("compress(int) [clone .cold]", "compress"));
	assert_true(cxxname_matches("geometry::Grid<double>::relax(int)", "geometry::Grid<double>::relax"));
	assert_false(cxxname_matches("geometry::Grid<double>::relax(int)", "relax"));
	assert_true(cxxname_matches("spin::work::hot_loop", "spin::work::hot_loop"));
	assert_true(cxxname_matches("Stream::operator<<(int)", "Stream::operator<<"));
	assert_false(cxxname_matches("A::operator>(int)", "A::operator"));
}

static void short_is(const char *name, size_t max, const char *want)
{
	char buf[512];
	const char *got = cxxname_short(name, max, buf, sizeof buf);
	if (strcmp(got, want) != 0)
		fail_msg("%s (max %zu): '%s', not '%s'", name, max, got, want);
}

static void shortened(void **state)
{
	(void)state;
	short_is("main", 10, "main");
	short_is("std::vector<int, std::allocator<int> >::push_back(int const&)", 100,
		 "std::vector<int, std::allocator<int> >::push_back(int const&)");
	short_is("std::vector<int, std::allocator<int> >::push_back(int const&)", 40,
		 "std::vector<...>::push_back(int const&)");
	short_is("void std::vector<std::pair<int, double>, std::allocator<std::pair<int, double> > >"
		 "::_M_realloc_insert<std::pair<int, double> >(__gnu_cxx::__normal_iterator<"
		 "std::pair<int, double>*, std::vector<std::pair<int, double>, std::allocator<"
		 "std::pair<int, double> > > >, std::pair<int, double>&&)", 60,
		 "void std::vector<...>::_M_realloc_insert<...>(...)");
	short_is("bool operator< <int>(Box<int> const&, Box<int> const&)", 20,
		 "bool operator< <...>(...)");
	short_is("(anonymous namespace)::Table<std::string, int>::find(std::string const&)", 60,
		 "(anonymous namespace)::Table<...>::find(std::string const&)");
	short_is("f()", 1, "f()");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spans),
		cmocka_unit_test(matches),
		cmocka_unit_test(shortened),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
