// cxxwork.cc - C++ names for the demangler: a namespace, a class, a
// template and an overload, and a function inlined into a hot loop
// (report --inline, the HTML page's source view).  cxxwork UNITS
#include <cstdlib>
#include <vector>

namespace geometry {
template <typename T> inline __attribute__((always_inline)) T smooth(T a, T b, T c)
{
	return (a + b + c) / T(3) + T(1);
}

template <typename T> struct Grid {
	std::vector<T> cells;
	explicit Grid(std::size_t n) : cells(n) {}
	__attribute__((noinline)) T relax(int rounds);
};

template <typename T> T Grid<T>::relax(int rounds)
{
	for (int r = 0; r < rounds; r++)
		for (std::size_t i = 1; i + 1 < cells.size(); i++)
			cells[i] = smooth(cells[i - 1], cells[i], cells[i + 1]);
	return cells[cells.size() / 2];
}

__attribute__((noinline)) double scale(double x, int times)
{
	for (int i = 0; i < times * 4000000; i++)
		x = x * 1.0000001 + 1e-9;
	return x;
}
} // namespace geometry

int main(int argc, char **argv)
{
	int units = argc > 1 ? std::atoi(argv[1]) : 20;
	geometry::Grid<double> g(100000);
	volatile double out = 0;
	for (int u = 0; u < units; u++) {
		out = out + g.relax(30);
		out = out + geometry::scale(out, 2);
	}
	return out == 12345.0;
}
