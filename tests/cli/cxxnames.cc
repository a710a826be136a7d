// cxxnames.cc - C++ names report must handle (tests/integration/cli_names.sh):
// a function gcc splits into a hot part and a "[clone .cold]" part, a
// function template instantiated twice (its demangled names begin with
// their return types), and a member of a class template whose
// demangled name runs to hundreds of characters.  cxxnames UNITS
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

static volatile unsigned long sink;

// The error path throws: gcc -O2 moves it into
// checksum(...) [clone .cold], which never runs.
__attribute__((noinline)) long checksum(const unsigned char *p, long n, int rounds)
{
	long s = 0;
	for (int r = 0; r < rounds; r++)
		for (long i = 0; i < n; i++) {
			if (p[i] == 0xff) {
				std::string what = "checksum: " + std::to_string(s) + " in round " +
						   std::to_string(r);
				throw std::runtime_error(what);
			}
			s = s * 31 + p[i];
			sink = s;
		}
	return s;
}

template <typename T> __attribute__((noinline)) T accumulate_n(T x, long n)
{
	for (long i = 0; i < n; i++) {
		x = x + T(i % 7);
		sink = (unsigned long)x;
	}
	return x;
}

template <typename K, typename V> struct Table {
	std::map<K, std::vector<std::pair<V, std::string>>> rows;
	__attribute__((noinline)) unsigned long
	scan(const std::vector<std::pair<K, std::map<std::string, V>>> &keys, long n);
};

template <typename K, typename V>
unsigned long Table<K, V>::scan(const std::vector<std::pair<K, std::map<std::string, V>>> &keys,
				long n)
{
	unsigned long s = keys.size();
	for (long i = 0; i < n; i++) {
		s = s * 2654435761u + (unsigned long)i;
		sink = s;
	}
	return s;
}

int main(int argc, char **argv)
{
	int units = argc > 1 ? std::atoi(argv[1]) : 30;
	std::vector<unsigned char> bytes(100000, 7);
	Table<std::string, std::vector<double>> t;
	std::vector<std::pair<std::string, std::map<std::string, std::vector<double>>>> keys(3);
	long out = 0;
	for (int u = 0; u < units; u++) {
		out += checksum(bytes.data(), (long)bytes.size(), 30);
		out += accumulate_n<int>(u, 3000000);
		out += (long)accumulate_n<double>(u, 3000000);
		out += (long)t.scan(keys, 3000000);
	}
	return out == 42;
}
